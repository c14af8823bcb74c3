"""mlperf_inference and mlperf_training: result files -> raw rows; unknown accelerator strings are quarantined."""

import csv
import datetime as dt
import json
from pathlib import Path

import pytest
from builders import TRAINING_HEADER, mlperf_inference_result, training_csv_row

from flows.land import land_batch
from flows.source_batches import SourceBatch
from flows.sources import mlperf_inference, mlperf_training
from flows.sources._common import SourceFormatError

AS_OF = dt.date(2026, 11, 30)


def batch_of(kind, rows):
    return SourceBatch.of_rows(kind, kind, kind, ["t"], AS_OF,
                       [r | {"row_no": i, "source_id": kind, "data_as_of": AS_OF} for i, r in enumerate(rows)])


def test_inference_rows_keep_the_raw_accelerator_string_and_per_node_count(tmp_path):
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps([mlperf_inference_result("v4.1-0031", "NVIDIA H100-SXM-80GB", "llama2-70b-99",
                                                        "Offline", 24528.3, per_node=8.0, nodes=1)]))
    [row] = mlperf_inference.read_file(path, "s.json")
    assert (row["accelerator"], row["accelerator_key"], row["accelerators_per_node"], row["nodes"]) == (
        "NVIDIA H100-SXM-80GB", "nvidia h100-sxm-80gb", 8.0, 1.0)
    assert row["source_ref"] == "s.json: [0] (v4.1-0031, llama2-70b-99, Offline)"


def test_unknown_accelerator_string_is_quarantined_not_guessed(fresh_db, catalog):
    rows = mlperf_inference.result_rows([
        mlperf_inference_result("a", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3),
        mlperf_inference_result("b", "NVIDIA H100-PCIe-80GB", "llama2-70b-99", "Offline", 9281.5),
        mlperf_inference_result("c", "", "gptj-99", "Offline", 100.0),
    ], "s.json")
    load = land_batch(fresh_db, batch_of("mlperf_inference", rows), "run-1", AS_OF, catalog)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 1, 2)
    quarantined = fresh_db.execute(
        "select expectation, column_name, unexpected_value, source_ref from ops.quarantine order by row_no").fetchall()
    assert quarantined == [
        ("accelerator_has_alias", "accelerator_key", "nvidia h100-pcie-80gb", "s.json: [1] (b, llama2-70b-99, Offline)"),
        ("accelerator_has_alias", "accelerator_key", "", "s.json: [2] (c, gptj-99, Offline)"),
    ]
    assert fresh_db.execute("select count(*) from ops.runs").fetchall() == [(0,)]
    assert fresh_db.execute("select result_id from raw.mlperf_inference").fetchall() == [("a",)]


def test_inference_result_missing_a_required_key():
    result = mlperf_inference_result("x", "NVIDIA L40S", "llama2-70b-99", "Server", 3218.55)
    del result["a#"]
    with pytest.raises(SourceFormatError, match=r"^s.json: \[0\]: missing key 'a#'"):
        mlperf_inference.result_rows([result], "s.json")


def test_inference_file_that_is_not_a_list(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"ID": "x"}')
    with pytest.raises(SourceFormatError, match=r"expected a JSON list of result objects, got dict"):
        mlperf_inference.read_file(path, "s.json")


def test_truncated_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('[\n {"ID": "x",\n')
    with pytest.raises(SourceFormatError, match=r"^s.json: not valid JSON at line 3 column 1"):
        mlperf_inference.read_file(path, "s.json")


def write_training_csv(path, rows):
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TRAINING_HEADER)
        writer.writeheader()
        writer.writerows(rows)


def land_training_csv(tmp_path, con, catalog, rows):
    """`rows` written as a detailed CSV (d.csv), read by the source and landed as a run does (validated)."""
    path = tmp_path / "detailed.csv"
    write_training_csv(path, rows)
    return land_batch(con, batch_of("mlperf_training", mlperf_training.read_file(path, "d.csv")), "run-1", AS_OF,
                      catalog)


def test_training_detailed_csv_lands_one_row_per_system_and_benchmark(tmp_path):
    path = tmp_path / "detailed.csv"
    write_training_csv(path, [
        training_csv_row("tpu-v5p-1024", "TPU-v5p", 512, 128, gpt3="114.79388333333333"),
        training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.1627830667789"),
    ])
    rows = mlperf_training.read_file(path, "d.csv")
    assert [(r["system"], r["benchmark"], r["accelerators_count"], r["time_to_train_minutes"]) for r in rows] == [
        ("tpu-v5p-1024", "gpt3", 512.0, 114.79388333333333),
        ("Eos", "llama2_70b_lora", 8.0, 28.1627830667789),
    ]
    assert rows[1]["source_ref"] == "d.csv: row 3 (Eos, llama2_70b_lora)"


def test_training_unknown_accelerator_and_bad_minutes_are_quarantined(tmp_path, fresh_db, catalog):
    load = land_training_csv(tmp_path, fresh_db, catalog, [
        training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16"),
        training_csv_row("HLS-Gaudi2-PT", "Intel(R) Gaudi(R) 2 AI Accelerator", 8, 1, lora="78.1"),
        training_csv_row("Bad", "NVIDIA H100-SXM5-80GB", 8, 1, lora="about an hour"),
    ])
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 1, 2)
    reasons = fresh_db.execute("select source_ref, expectation, column_name from ops.quarantine order by row_no").fetchall()
    assert reasons == [
        ("d.csv: row 3 (HLS-Gaudi2-PT, llama2_70b_lora)", "accelerator_has_alias", "accelerator_key"),
        ("d.csv: row 4 (Bad, llama2_70b_lora)", "time_to_train_minutes_present", "time_to_train_minutes"),
    ]


def test_a_time_to_train_past_its_bound_is_quarantined_not_failing_the_build(tmp_path, fresh_db, catalog):
    load = land_training_csv(tmp_path, fresh_db, catalog, [
        training_csv_row("Eos_n64", "NVIDIA H100-SXM5-80GB", 512, 64, gpt3="50.72796666666667"),
        training_csv_row("Eos_n64b", "NVIDIA H100-SXM5-80GB", 512, 64, gpt3="1e300"),
        # 10,000,000 minutes (19 years) is the bound itself: it lands
        training_csv_row("Slow", "NVIDIA H100-SXM5-80GB", 8, 1, lora="10000000"),
    ])
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 2, 1)
    # before the bound, 1e300 minutes landed and every build failed at an integer cast in
    # int_training_estimates_computed.sql, naming no file or row
    assert fresh_db.execute("select source_ref, expectation, column_name, unexpected_value, reason "
                            "from ops.quarantine").fetchall() == [
        ("d.csv: row 3 (Eos_n64b, gpt3)", "time_to_train_plausible", "time_to_train_minutes", "1e+300",
         "a completed training run takes at most 10,000,000 minutes (19 years): a pretraining run of three months is "
         "129,600 minutes and the snapshot's longest MLPerf Training result 115 (GPT-3 on 512 H100), so a longer one "
         "is a unit or digit error (e.g. 1e300), not a run")]


def test_training_csv_with_a_ragged_line(tmp_path):
    path = tmp_path / "detailed.csv"
    path.write_text(",".join(TRAINING_HEADER) + "\n" + ",".join(["x"] * (len(TRAINING_HEADER) + 2)) + "\n")
    with pytest.raises(SourceFormatError, match=rf"line 2: {len(TRAINING_HEADER) + 2} fields, expected "
                                                rf"{len(TRAINING_HEADER)}"):
        mlperf_training.read_file(path, "d.csv")


def test_training_csv_that_is_not_utf8(tmp_path):
    path = tmp_path / "detailed.csv"
    path.write_bytes(b"division,system\n\xff\xfeclosed,x\n")
    with pytest.raises(SourceFormatError, match=r"not UTF-8 text \(byte 16"):
        mlperf_training.read_file(path, "d.csv")


def test_training_summary_json_uses_benchmark_keys_and_skips_nulls(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps([{
        "division": "closed", "availability": "Available cloud", "submitter": "Google", "system": "tpu-trillium-256",
        "number_of_nodes": "64", "accelerator_model_name": "TPU-trillium", "accelerators_count": 256,
        "framework": "MaxDiffusion", "notes": "", "private_id": "", "bert": None, "stable_diffusion": 4.44359693,
        "details_url": "u", "code_url": "c"}]))
    rows = mlperf_training.read_file(path, "s.json")
    assert [(r["benchmark"], r["time_to_train_minutes"], r["accelerators_count"]) for r in rows] == [
        ("stable_diffusion", 4.44359693, 256.0)]


def test_a_result_with_no_node_count_is_quarantined_not_lost_later(fresh_db, catalog):
    result = mlperf_inference_result("n", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3)
    result["Nodes"] = None
    # beside a whole result: a batch with no row left would leave the source stale (tests/test_guards.py)
    whole = mlperf_inference_result("w", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 21000.0)
    load = land_batch(fresh_db, batch_of("mlperf_inference", mlperf_inference.result_rows([result, whole], "s.json")),
                      "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert fresh_db.execute("select expectation, unexpected_value from ops.quarantine").fetchall() == [
        ("nodes_present", None)]


def test_a_training_row_with_no_node_count_is_quarantined(tmp_path, fresh_db, catalog):
    path = tmp_path / "detailed.csv"
    # beside a whole row: a batch with no row left would leave the source stale (tests/test_guards.py)
    write_training_csv(path, [training_csv_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, lora="24.69"),
                              training_csv_row("H100", "NVIDIA H100-SXM5-80GB", 8, 1, lora="27.93")])
    rows = mlperf_training.read_file(path, "d.csv")
    rows[0]["number_of_nodes"] = None
    load = land_batch(fresh_db, batch_of("mlperf_training", rows), "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert fresh_db.execute("select expectation from ops.quarantine").fetchall() == [("number_of_nodes_present",)]


SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
V41 = SAMPLES / "mlperf_inference_v4.1_summary_results.json"


@pytest.mark.skipif(not V41.is_file(), reason="../shared/samples is not beside this checkout")
def test_every_accelerator_string_of_the_whole_v41_round_is_mapped_or_quarantined(fresh_db, catalog):
    rows = mlperf_inference.read_file(V41, "v4.1")
    load = land_batch(fresh_db, batch_of("mlperf_inference", rows), "run-1", AS_OF, catalog)
    assert load.rows_in == len(json.loads(V41.read_text())) == load.rows_landed + load.rows_quarantined
    aliases = catalog.alias_map()
    landed = {r[0] for r in fresh_db.execute("select distinct accelerator_key from raw.mlperf_inference").fetchall()}
    quarantined = {r[0] for r in fresh_db.execute(
        "select distinct unexpected_value from ops.quarantine where expectation = 'accelerator_has_alias'").fetchall()}
    assert landed <= set(aliases) and not (quarantined & set(aliases))
    # a PCIe part is not the SXM part: never guessed onto it; the empty string is quarantined too
    assert {"nvidia h100-pcie-80gb", ""} <= quarantined
    assert aliases["nvidia h100-nvl-94gb"] == "h100-nvl-94gb" and "nvidia h100-pcie-80gb" not in aliases


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_awkward_rows_of_a_round(fresh_db, catalog):
    """Float and int a#, several nodes, an empty Accelerator, and -99 / -99.9 twins of one result."""
    results = [
        mlperf_inference_result("t1", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3, per_node=8.0),
        mlperf_inference_result("t1", "NVIDIA H100-SXM-80GB", "llama2-70b-99.9", "Offline", 24424.7, per_node=8.0),
        mlperf_inference_result("t2", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 48000.0, per_node=8,
                                nodes=2),
        mlperf_inference_result("t3", "", "llama2-70b-99", "Offline", 1.0),
    ]
    load = land_batch(fresh_db, batch_of("mlperf_inference", mlperf_inference.result_rows(results, "s.json")),
                      "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (3, 1)
    from flows import transform

    transform.build_models(fresh_db, "run-1", AS_OF)
    staged = fresh_db.execute("select result_id, accuracy_target_pct, accelerators_total from "
                              "staging.stg_mlperf_inference__results order by row_no").fetchall()
    # a# 8.0 x 1 node = 8; a# 8 (an int) x 2 nodes = 16; the twins land as two results at two accuracy targets
    assert staged == [("t1", 99.0, 8.0), ("t1", 99.9, 8.0), ("t2", 99.0, 16.0)]


def test_training_detailed_output_written_as_json(tmp_path):
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps([training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")]))
    [row] = mlperf_training.read_file(path, "d.json")
    assert (row["benchmark"], row["time_to_train_minutes"], row["accelerators_count"]) == ("llama2_70b_lora", 28.16, 8.0)


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_interactive_results_of_later_rounds_and_custom_parts(fresh_db, catalog):
    from flows import transform

    results = [
        mlperf_inference_result("i1", "NVIDIA H200-SXM-141GB", "llama2-70b-interactive-99", "Server", 20000.0),
        # the CTS part runs at 1000 W: not the cloud H200, so never mapped onto it
        mlperf_inference_result("c1", "NVIDIA H200-SXM-141GB-CTS", "llama2-70b-99", "Offline", 34864.2),
    ]
    load = land_batch(fresh_db, batch_of("mlperf_inference", mlperf_inference.result_rows(results, "s.json")),
                      "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert fresh_db.execute("select task, scenario, scenario_normalised from staging.stg_mlperf_inference__results"
                            ).fetchall() == [("llama2-70b", "Server", "Interactive")]


def test_power_is_kept_where_the_result_has_it():
    result = mlperf_inference_result("p1", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 20000.0)
    result |= {"has_power": True, "Power_Result": 5210.4, "Power_Units": "Watts"}
    [row] = mlperf_inference.result_rows([result], "s.json")
    assert (row["has_power"], row["power_result"], row["power_units"]) == (True, 5210.4, "Watts")


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_two_submissions_of_one_system_name_with_different_description_files_both_land(tmp_path, fresh_db, catalog):
    from flows import checks

    path = tmp_path / "detailed.csv"
    older = training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")
    newer = training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="25.02")
    copy = dict(newer)
    older["details_url"] = "https://github.com/mlcommons/training_results_v4.0/blob/main/T/systems/eos_ngc23.04_pytorch.json"
    newer["details_url"] = copy["details_url"] = older["details_url"].replace("23.04", "24.04")
    write_training_csv(path, [older, newer, copy])
    batch = batch_of("mlperf_training", mlperf_training.read_file(path, "d.csv"))
    [batch] = checks.add_check_columns([batch], catalog, fresh_db)
    load = land_batch(fresh_db, batch, "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (2, 1)
    assert fresh_db.execute("select time_to_train_minutes from raw.mlperf_training order by row_no").fetchall() == [
        (28.16,), (25.02,)]
    assert fresh_db.execute("select source_ref, unexpected_value from ops.quarantine").fetchall() == [
        ("d.csv: row 4 (Eos, llama2_70b_lora)", "same values as d.csv: row 3 (Eos, llama2_70b_lora)")]
    # both are results of their own in the warehouse: their description files tell their keys apart
    from flows import transform

    transform.build_models(fresh_db, "run-1", AS_OF)
    keys = [k for (k,) in fresh_db.execute("select result_key from marts.benchmark_results "
                                            "where result_key like '%|Eos|%' order by 1").fetchall()]
    assert len(keys) == 2 and keys[0].endswith("eos_ngc23.04_pytorch.json") and keys[1].endswith(
        "eos_ngc24.04_pytorch.json")


def test_the_detailed_output_written_as_json_names_rows_by_their_index(tmp_path):
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps([training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16"),
                                training_csv_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, lora="24.69")]))
    rows = mlperf_training.read_file(path, "d.json")
    assert [r["source_ref"] for r in rows] == ["d.json: [0] (Eos, llama2_70b_lora)", "d.json: [1] (H200, llama2_70b_lora)"]


def detailed_record(system: str, **benchmarks: float) -> dict:
    """A record of the detailed output written as JSON, with only the benchmarks the system submitted."""
    return {"division": "closed", "availability": "Available cloud", "submitter": "NVIDIA", "system": system,
            "number_of_nodes": "1", "accelerator_model_name": "NVIDIA H100-SXM5-80GB", "accelerators_count": 8,
            "framework": "NeMo", **{f"{bench}:time_to_train": minutes for bench, minutes in benchmarks.items()}}


def test_a_detailed_json_lands_the_benchmarks_of_every_system_not_only_the_first(tmp_path):
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps([detailed_record("dgxh100_a", bert=5.8),
                                detailed_record("dgxh100_b", llama2_70b_lora=28.2)]))
    rows = mlperf_training.read_file(path, "d.json")
    assert [(r["system"], r["benchmark"], r["time_to_train_minutes"], r["source_ref"]) for r in rows] == [
        ("dgxh100_a", "bert", 5.8, "d.json: [0] (dgxh100_a, bert)"),
        ("dgxh100_b", "llama2_70b_lora", 28.2, "d.json: [1] (dgxh100_b, llama2_70b_lora)")]


def test_a_detailed_json_whose_first_system_submitted_nothing_is_still_read_as_detailed(tmp_path):
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps([detailed_record("dgxh100_a"), detailed_record("dgxh100_b", bert=5.8)]))
    rows = mlperf_training.read_file(path, "d.json")
    assert [(r["system"], r["benchmark"], r["time_to_train_minutes"]) for r in rows] == [("dgxh100_b", "bert", 5.8)]


def test_a_performance_result_that_is_not_a_number_is_quarantined_with_its_text(fresh_db, catalog):
    good = mlperf_inference_result("a", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3)
    separated = mlperf_inference_result("b", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 0.0)
    separated["Performance_Result"] = "12,345.6"  # a thousands separator: not a number to float()
    rows = mlperf_inference.result_rows([good, separated], "s.json")
    assert [(r["performance_result"], r["performance_result_text"]) for r in rows] == [
        (24528.3, "24528.3"), (None, "12,345.6")]
    load = land_batch(fresh_db, batch_of("mlperf_inference", rows), "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    [(expectation, row_json)] = fresh_db.execute("select expectation, row_json from ops.quarantine").fetchall()
    assert expectation == "performance_result_present"
    assert json.loads(row_json)["performance_result_text"] == "12,345.6"


def test_training_csv_rows_are_named_by_the_line_they_start_on(tmp_path):
    path = tmp_path / "detailed.csv"
    first = training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")
    noted = training_csv_row("H200", "NVIDIA H200-SXM5-141GB", 8, 1, lora="24.69") | {"notes": "two\nlines"}
    last = training_csv_row("Eos-2", "NVIDIA H100-SXM5-80GB", 16, 2, lora="15.2")
    write_training_csv(path, [first, noted, last])
    lines = path.read_bytes().split(b"\r\n")
    path.write_bytes(b"\r\n".join([*lines[:2], b"", *lines[2:]]))  # a blank line after the first system
    # header line 1, Eos line 2, blank line 3, H200 lines 4-5 (its notes span them), Eos-2 line 6
    assert [r["source_ref"] for r in mlperf_training.read_file(path, "d.csv")] == [
        "d.csv: row 2 (Eos, llama2_70b_lora)", "d.csv: row 4 (H200, llama2_70b_lora)",
        "d.csv: row 6 (Eos-2, llama2_70b_lora)"]


def test_a_precision_spelled_float8_is_fp8_and_one_unknown_is_quarantined(fresh_db, catalog):
    """MLPerf Inference v4.1 writes `float8` (21 results) and `INT8` beside `fp8` and `int8`: they are fp8 and int8,
    weight_data_types kept as written. Before, `float8` landed unchecked and matched no workload's fp8, so those
    measured results became estimates without a word."""
    rows = mlperf_inference.result_rows([
        mlperf_inference_result("a", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3, precision="float8"),
        mlperf_inference_result("b", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 21000.0, precision="INT8"),
        mlperf_inference_result("c", "NVIDIA H100-SXM-80GB", "gptj-99", "Offline", 100.0, precision="fp6"),
    ], "s.json")
    assert [(r["weight_data_types"], r["precision"]) for r in rows] == [
        ("float8", "fp8"), ("INT8", "int8"), ("fp6", "fp6")]
    load = land_batch(fresh_db, batch_of("mlperf_inference", rows), "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (2, 1)
    assert fresh_db.execute("select expectation, unexpected_value, source_ref from ops.quarantine").fetchall() == [
        ("precision_known", "fp6", "s.json: [2] (c, gptj-99, Offline)")]
    assert fresh_db.execute("select result_id, weight_data_types, precision from raw.mlperf_inference "
                            "order by result_id").fetchall() == [("a", "float8", "fp8"), ("b", "INT8", "int8")]


def test_counts_that_are_not_whole_or_past_their_bound_are_quarantined(tmp_path, fresh_db, catalog):
    """8.5 accelerators, 1.5 nodes, a# 0.5 or 3,000,000,000 chips: quarantined with the reason. Before, 8.5 chips
    landed and staging cast them to 8; 0.5 a node doubled the per-chip throughput; 3e9 overflowed staging's
    integer cast and failed every build with an error naming no file or row."""
    inference = mlperf_inference.result_rows([
        mlperf_inference_result("whole", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3),
        mlperf_inference_result("half", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 20000.0, per_node=0.5),
        mlperf_inference_result("nodes", "NVIDIA H100-SXM-80GB", "gptj-99", "Offline", 100.0, nodes=1.5),
        mlperf_inference_result("huge", "NVIDIA H100-SXM-80GB", "gptj-99", "Server", 100.0, per_node=3e9),
        # each within its bound, their product (1e10 accelerators) past an integer's range
        mlperf_inference_result("wide", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 100.0, per_node=1e5,
                                nodes=100000),
    ], "s.json")
    load = land_batch(fresh_db, batch_of("mlperf_inference", inference), "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 4)
    assert fresh_db.execute("select row_no, expectation, unexpected_value from ops.quarantine "
                            "order by row_no, expectation").fetchall() == [
        (1, "accelerators_per_node_whole", "0.5"),
        (2, "nodes_whole", "1.5"),
        (3, "accelerators_per_node_bounded", "3000000000.0"),
        (3, "accelerators_total_bounded", "3000000000.0"),
        (4, "accelerators_total_bounded", "10000000000.0")]
    path = tmp_path / "detailed.csv"
    write_training_csv(path, [training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16"),
                              training_csv_row("A", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16"),
                              training_csv_row("B", "NVIDIA H100-SXM5-80GB", 16, 1, lora="20.0")])
    rows = mlperf_training.read_file(path, "d.csv")
    rows[1]["accelerators_count"] = 8.5
    rows[2]["number_of_nodes"] = 1.5
    load = land_batch(fresh_db, batch_of("mlperf_training", rows), "run-1", AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select source_ref, expectation from ops.quarantine where source_id = 'mlperf_training' "
                            "order by row_no").fetchall() == [
        ("d.csv: row 3 (A, llama2_70b_lora)", "accelerators_count_whole"),
        ("d.csv: row 4 (B, llama2_70b_lora)", "nodes_whole")]


def test_a_summary_key_whose_value_is_text_is_refused_not_landed_as_a_benchmark(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps([{
        "division": "closed", "availability": "Available cloud", "submitter": "Google", "system": "tpu-trillium-256",
        "number_of_nodes": "64", "accelerator_model_name": "TPU-trillium", "accelerators_count": 256,
        "framework": "MaxDiffusion", "notes": "", "private_id": "", "stable_diffusion": 4.44359693,
        "host_interconnect": "ICI", "details_url": "u", "code_url": "c"}]))
    with pytest.raises(SourceFormatError, match=r"^s.json: \[0\]: key 'host_interconnect' is str 'ICI': expected a "
                                                r"benchmark's minutes to train \(a number or null\)"):
        mlperf_training.read_file(path, "s.json")


def write_training_csv_headed(path, header, rows):
    """`rows` (dicts by TRAINING_HEADER's names) written under `header`, a TRAINING_HEADER with columns renamed."""
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows([row[name] for name in TRAINING_HEADER] for row in rows)


SUMMARIZER_COLUMNS = (
    "expected the result summarizer's `<benchmark>:<figure>` (a benchmark in lower case, no spaces; the figure one of "
    "time_to_train, Energy, GBS, samples_to_converge, RCP, rcp_scaling_factor, spelt so) or one of its system "
    "columns (division, availability, submitter, system, number_of_nodes, host_processor_model_name, "
    "host_processors_count, accelerator_model_name, accelerators_count, framework, notes, private_id, details_url, "
    "code_url)")


@pytest.mark.parametrize(("column", "shown"), [
    ("gpt3:time_to_train ", "'gpt3:time_to_train ' (the summarizer's 'gpt3:time_to_train'?)"),
    ("GPT3:Time_To_Train", "'GPT3:Time_To_Train' (the summarizer's 'gpt3:time_to_train'?)"),
    (" gpt3:time_to_train", "' gpt3:time_to_train' (the summarizer's 'gpt3:time_to_train'?)"),
    ("gpt3:Power", "'gpt3:Power'"),
])
def test_a_misspelt_figure_column_fails_the_file_naming_it(tmp_path, column, shown):
    """Before, only columns ending exactly in `:time_to_train` were read and the rest ignored: a trailing space or
    another case in `gpt3:time_to_train` dropped every gpt3 result without a word (12 rows of the snapshot's v4.0
    file read as 6)."""
    path = tmp_path / "detailed.csv"
    header = [column if name == "gpt3:time_to_train" else name for name in TRAINING_HEADER]
    write_training_csv_headed(path, header, [
        training_csv_row("tpu-v5p-1024", "TPU-v5p", 512, 128, gpt3="114.79388333333333"),
        training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.1627830667789")])
    with pytest.raises(SourceFormatError) as raised:
        mlperf_training.read_file(path, "v4.0.csv")
    assert str(raised.value) == f"v4.0.csv: unknown column(s) {shown}: {SUMMARIZER_COLUMNS}"


def test_a_misspelt_system_column_fails_the_file_and_a_trailing_comma_does_not(tmp_path):
    path = tmp_path / "detailed.csv"
    rows = [training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")]
    write_training_csv_headed(path, [("Details_URL" if n == "details_url" else n) for n in TRAINING_HEADER], rows)
    with pytest.raises(SourceFormatError) as raised:
        mlperf_training.read_file(path, "d.csv")
    assert str(raised.value) == (f"d.csv: unknown column(s) 'Details_URL' (the summarizer's 'details_url'?): "
                                 f"{SUMMARIZER_COLUMNS}")
    path.write_text("\n".join(line + "," for line in path.read_text().splitlines()).replace("Details_URL", "details_url"))
    [row] = mlperf_training.read_file(path, "d.csv")  # a nameless, empty last column: a spreadsheet's trailing comma
    assert (row["system"], row["benchmark"], row["time_to_train_minutes"]) == ("Eos", "llama2_70b_lora", 28.16)


def test_a_detailed_json_with_only_misspelt_figure_keys_is_refused_not_read_as_a_summary(tmp_path):
    """Before, no key ending in `:time_to_train` made the file a summary, whose keys are benchmarks: the misspelt
    key landed as a benchmark named `gpt3:Time_To_Train`, which no task is."""
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps([detailed_record("dgxh100_a") | {"gpt3:Time_To_Train": 50.7}]))
    with pytest.raises(SourceFormatError) as raised:
        mlperf_training.read_file(path, "d.json")
    assert str(raised.value) == ("d.json: unknown key(s) 'gpt3:Time_To_Train' (the summarizer's 'gpt3:time_to_train'?): "
                                 + SUMMARIZER_COLUMNS.replace("system columns", "system keys"))


TRAINING_SAMPLES = {"mlperf_training_v4.0_summary_detailed_google_intel_nvidia.csv": 50,
                    "mlperf_training_v5.0_summary_detailed.csv": 201}


@pytest.mark.parametrize(("name", "results"), TRAINING_SAMPLES.items())
def test_the_real_detailed_csvs_columns_are_all_known(tmp_path, name, results):
    """Every column of a real summarizer output is one the source knows (RCP and rcp_scaling_factor included), and
    every figure given in it is a number: no row of a real file is refused or quarantined for its figures."""
    if not (SAMPLES / name).is_file():
        pytest.skip("../shared/samples is not beside this checkout")
    path = tmp_path / name
    path.write_bytes((SAMPLES / name).read_bytes())
    rows = mlperf_training.read_file(path, name)
    # `results`: the cells of the sample's :time_to_train columns that are not empty (counted apart with csv)
    assert len(rows) == results
    assert [r["source_ref"] for r in rows if any(
        r[column] is None and r[f"{column}_text"] is not None for column in mlperf_training.NUMBER_FIGURES.values())
        or r["time_to_train_minutes"] is None] == []


def test_an_extra_training_figure_that_is_not_a_number_is_quarantined_with_its_text(tmp_path, fresh_db, catalog):
    """Before, `1,207,959,552` samples to converge landed NULL, 0 rows quarantined, and the result silently left the
    training back-test (int_training_backtest needs samples_to_converge > 0)."""
    separated = training_csv_row("Eos_n64", "NVIDIA H100-SXM5-80GB", 512, 64, gpt3="50.72796666666667") | {
        "gpt3:samples_to_converge": "1,207,959,552", "gpt3:GBS": "2048"}
    endless = training_csv_row("Eos_n64b", "NVIDIA H100-SXM5-80GB", 512, 64, gpt3="49.0") | {"gpt3:Energy": "Infinity"}
    # Energy not reported (an empty cell) and a whitespace-only GBS: not given, NULL, not an error
    plain = training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16") | {
        "llama2_70b_lora:Energy": "", "llama2_70b_lora:GBS": " ", "llama2_70b_lora:samples_to_converge": "270336"}
    path = tmp_path / "detailed.csv"
    write_training_csv(path, [separated, endless, plain])
    rows = mlperf_training.read_file(path, "d.csv")
    assert [(r["energy"], r["energy_text"], r["global_batch_size"], r["global_batch_size_text"],
             r["samples_to_converge"], r["samples_to_converge_text"]) for r in rows] == [
        (None, None, 2048.0, "2048", None, "1,207,959,552"),
        (None, "Infinity", None, None, None, None),
        (None, None, None, None, 270336.0, "270336")]
    load = land_batch(fresh_db, batch_of("mlperf_training", rows), "run-1", AS_OF, catalog)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 1, 2)
    assert fresh_db.execute("select source_ref, expectation, column_name, unexpected_value from ops.quarantine "
                            "order by row_no").fetchall() == [
        ("d.csv: row 2 (Eos_n64, gpt3)", "samples_to_converge_a_number", "samples_to_converge_text", "1,207,959,552"),
        ("d.csv: row 3 (Eos_n64b, gpt3)", "energy_a_number", "energy_text", "Infinity")]
    assert fresh_db.execute("select system, energy, energy_text, global_batch_size, samples_to_converge "
                            "from raw.mlperf_training").fetchall() == [("Eos", None, None, None, 270336.0)]


def test_a_power_result_that_is_not_a_number_is_quarantined_with_its_text(tmp_path, fresh_db, catalog):
    """Before, `"6,152.98"` or a bare `Infinity` landed power_result NULL beside has_power true, 0 rows quarantined."""
    def measured(result_id, scenario, power):
        result = mlperf_inference_result(result_id, "NVIDIA H100-SXM-80GB", "llama2-70b-99", scenario, 20000.0)
        return result | {"has_power": True, "Power_Result": power, "Power_Units": "Watts"}

    results = [measured("a", "Offline", 6152.98), measured("b", "Server", "6,152.98"),
               measured("c", "Offline", "INFINITY_HERE"), measured("d", "Server", ""),
               mlperf_inference_result("e", "NVIDIA H100-SXM-80GB", "gptj-99", "Offline", 100.0)]
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps(results).replace('"INFINITY_HERE"', "Infinity"))  # bare: Python's json reads inf
    rows = mlperf_inference.read_file(path, "s.json")
    assert [(r["result_id"], r["power_result"], r["power_result_text"]) for r in rows] == [
        ("a", 6152.98, "6152.98"), ("b", None, "6,152.98"), ("c", None, "inf"), ("d", None, None), ("e", None, None)]
    load = land_batch(fresh_db, batch_of("mlperf_inference", rows), "run-1", AS_OF, catalog)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (5, 3, 2)
    assert fresh_db.execute("select source_ref, expectation, column_name, unexpected_value, reason from ops.quarantine "
                            "order by row_no").fetchall() == [
        ("s.json: [1] (b, llama2-70b-99, Server)", "power_result_a_number", "power_result_text", "6,152.98", POWER_WHY),
        ("s.json: [2] (c, llama2-70b-99, Offline)", "power_result_a_number", "power_result_text", "inf", POWER_WHY)]
    assert fresh_db.execute("select result_id, has_power, power_result from raw.mlperf_inference order by result_id"
                            ).fetchall() == [("a", True, 6152.98), ("d", True, None), ("e", False, None)]


POWER_WHY = ("Power_Result, where given, must be a plain number (no thousands separator, unit or Infinity): one that is "
             "not would land as a result measured for power with no power figure; the quarantined row's "
             "power_result_text keeps it as published (e.g. \"6,152.98\"). An empty one is a result not measured for "
             "power")


def test_an_mlperf_system_name_or_submitter_past_its_bound_is_quarantined_not_printed(tmp_path, fresh_db, catalog):
    """A review's finding: a 200,000-character system name reached the pages whole through the SQL that builds labels
    from it (the Excluded table's reasons, a close call's unranked measurement, marts.changes' new results: one index
    of 820 KB). The suites bound MLPerf's text at the door: a system name at most 300 characters (the longest in the
    v4.1 and v5.0 results has 70), a submitter, division, availability, suite, model, scenario or benchmark at most
    100; the row past it is quarantined with the bound's name, not landed."""
    long_system = "S" * 200_000
    results = [mlperf_inference_result("a", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 20000.0),
               mlperf_inference_result("b", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 19000.0)
               | {"System": long_system},
               mlperf_inference_result("c", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 18000.0)
               | {"Submitter": "N" * 101, "System": "x" * 300}]
    path = tmp_path / "summary_results.json"
    path.write_text(json.dumps(results))
    load = land_batch(fresh_db, batch_of("mlperf_inference", mlperf_inference.read_file(path, "s.json")), "run-1",
                      AS_OF, catalog)
    # a: landed; b: its system past 300; c: a 300-character system is within the bound, its 101-character submitter not
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 1, 2)
    assert fresh_db.execute("select row_no, expectation, column_name, length(unexpected_value) from ops.quarantine "
                            "order by row_no").fetchall() == [(1, "system_short", "system", 200_000),
                                                              (2, "submitter_short", "submitter", 101)]
    rows = [training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16"),
            training_csv_row(long_system, "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")]
    load = land_training_csv(tmp_path, fresh_db, catalog, rows)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (2, 1, 1)
    assert fresh_db.execute("select expectation from ops.quarantine where source_id = 'mlperf_training'").fetchall() == [
        ("system_short",)]


def test_unknown_columns_are_named_ten_at_most_and_the_rest_counted(tmp_path):
    """A header of 50 columns the summarizer does not write names the first ten and counts the other 40: the message
    stays a line, however wide the file."""
    path = tmp_path / "detailed.csv"
    write_training_csv(path, [training_csv_row("Eos", "NVIDIA H100-SXM5-80GB", 8, 1, lora="28.16")])
    header, row = path.read_text().splitlines()
    path.write_text(header + "".join(f",x{i}" for i in range(50)) + "\n" + row + ",1" * 50 + "\n")
    with pytest.raises(SourceFormatError, match=r"^d\.csv: unknown column\(s\) 'x0', 'x1', 'x2', 'x3', 'x4', 'x5', "
                                                r"'x6', 'x7', 'x8', 'x9' and 40 more: expected the result summarizer's"):
        mlperf_training.read_file(path, "d.csv")
