"""benchmark_runs: the user's own runs (vLLM JSON, generic CSV) -> raw rows -> measured candidates at the SLO point."""

import csv
import datetime as dt
import json

import pytest
import yaml
from builders import aws_page, aws_product, land

from flows import transform
from flows.catalog import load_catalog
from flows.land import SourceLoad, land_all, land_batch
from flows.source_batches import SourceBatch, fetch_source
from flows.sources import aws_pricing, benchmark_runs
from flows.sources._common import SourceFormatError

AS_OF = dt.date(2026, 11, 30)
RUN = "run-own"
SETUP = {"accelerator": "inferentia2", "chips": 1, "model": "llama-3.1-8b", "precision": "bf16"}


def vllm_result(concurrency, completed, num_prompts, output_throughput, p99_tpot, p99_ttft):
    """A vLLM `benchmark_serving --save-result` JSON in its real shape (abridged: no per-request lists)."""
    return {"date": "20261120-101500", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "num_prompts": num_prompts, "request_rate": "inf", "max_concurrency": concurrency, "duration": 120.0,
            "completed": completed, "total_input_tokens": completed * 1024, "total_output_tokens": completed * 256,
            "request_throughput": output_throughput / 256, "output_throughput": output_throughput,
            "total_token_throughput": output_throughput * 5, "mean_ttft_ms": p99_ttft / 2, "median_ttft_ms": p99_ttft / 2,
            "p99_ttft_ms": p99_ttft, "mean_tpot_ms": p99_tpot * 0.9, "median_tpot_ms": p99_tpot * 0.9,
            "p99_tpot_ms": p99_tpot, "mean_itl_ms": p99_tpot * 0.9, "median_itl_ms": p99_tpot * 0.9,
            "p99_itl_ms": p99_tpot}


def test_vllm_result_with_failed_requests(tmp_path):
    path = tmp_path / "c32.json"
    path.write_text(json.dumps(vllm_result(32, 950, 1000, 900.0, 80.0, 900.0)))
    [row] = benchmark_runs.read_file(path, "c32.json", metadata=SETUP | {"source": "our inf2 run"})
    # failed = num_prompts - completed = 1000 - 950 = 50; mean output = 950 x 256 / 950 = 256 tokens
    assert (row["completed"], row["failed"], row["output_tokens"], row["concurrency"]) == (950, 50, 256, 32)
    assert (row["accelerator"], row["chips"], row["model"], row["precision"]) == ("inferentia2", 1, "llama-3.1-8b", "bf16")
    assert (row["tpot_p99_ms"], row["ttft_p99_ms"], row["run_source"]) == (80.0, 900.0, "our inf2 run")


def test_vllm_result_without_its_setup_says_what_to_declare(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(vllm_result(8, 100, 100, 400.0, 40.0, 300.0)))
    with pytest.raises(SourceFormatError, match=r"^r.json: the vLLM result does not say its accelerator, chips, model, "
                                                r"precision; declare them under the file's `metadata` in sources.yaml"):
        benchmark_runs.read_file(path, "r.json")


def test_generic_csv_and_its_missing_columns(tmp_path):
    path = tmp_path / "runs.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(benchmark_runs.CSV_COLUMNS))
        writer.writeheader()
        writer.writerow({"accelerator": "tpu-v6e", "instance_type": "tpu-v6e-8", "chips": 8, "model": "llama-3.1-8b",
                         "precision": "bf16", "concurrency": 64, "input_tokens": 1024, "output_tokens": 256,
                         "request_throughput": 20.5, "output_tokens_per_s": 5248, "ttft_p50_ms": 120,
                         "ttft_p99_ms": 480, "tpot_p50_ms": 30, "tpot_p99_ms": 45, "completed": 2000, "failed": 4,
                         "power_w": "", "source": "JetStream on v6e-8", "date": "2026-11-01"})
    [row] = benchmark_runs.read_file(path, "runs.csv")
    assert (row["accelerator"], row["chips"], row["output_tokens_per_s"], row["failed"], row["power_w"]) == (
        "tpu-v6e", 8, 5248, 4, None)
    assert row["source_ref"] == "runs.csv: row 2"
    path.write_text("accelerator,chips\ntpu-v6e,8\n")
    with pytest.raises(SourceFormatError, match=r"^runs.csv: missing column\(s\) model, precision, concurrency"):
        benchmark_runs.read_file(path, "runs.csv")


@pytest.fixture
def curve_catalog(catalog_copy):
    """The shipped catalog plus a benchmark_runs source: one setup measured at three concurrency levels."""
    runs = catalog_copy / "snapshot" / "benchmark_runs"
    runs.mkdir(exist_ok=True)
    levels = {8: (1000, 1000, 400.0, 40.0, 300.0), 32: (950, 1000, 900.0, 80.0, 900.0),
              128: (1000, 1000, 1500.0, 160.0, 2500.0)}
    for concurrency, args in levels.items():
        (runs / f"inf2-c{concurrency}.json").write_text(json.dumps(vllm_result(concurrency, *args)))
    sources = yaml.safe_load((catalog_copy / "sources.yaml").read_text())
    sources["sources"]["own_runs"] = {"kind": "benchmark_runs", "description": "our vLLM runs on inf2.xlarge", "files": [
        {"path": f"snapshot/benchmark_runs/inf2-c{c}.json", "as_of": "2026-11-20", "source": "our vLLM run",
         "metadata": SETUP | {"source": "our vLLM run"}} for c in levels]}
    (catalog_copy / "sources.yaml").write_text(yaml.safe_dump(sources, sort_keys=False))
    return load_catalog(catalog_copy)


def test_the_slo_picks_the_fastest_level_that_meets_it_and_its_success_rate_prices_requests(
        curve_catalog, fresh_db):
    land(fresh_db, curve_catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("inf2.xlarge", "0.7582000000", sku="A000000000000001", gpu="0")))]), RUN, AS_OF)
    batch = fetch_source(curve_catalog, "own_runs")
    load = land_batch(fresh_db, batch, RUN, AS_OF, curve_catalog)
    assert (load.rows_in, load.rows_landed) == (3, 3)
    transform.build_models(fresh_db, RUN, AS_OF)
    cur = fresh_db.execute("select * from marts.inference_costs where workload_id = 'llama31-8b-chat-small' "
                           "and precision_class = 'bf16'")
    [row] = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
    # TPOT SLO 100 ms, TTFT 2,000 ms: concurrency 8 (40 ms, 400 tok/s) and 32 (80 ms, 900 tok/s) meet it, 128 (160 ms)
    # does not: the fastest that meets it is the middle one
    assert (row["basis"], row["replica_tokens_per_s"]) == ("measured", 900.0)
    assert "concurrency 32" in row["benchmark_label"]
    # its success rate 950 / 1000 = 0.95 replaces the workload's 0.99: 900 / 256 = 3.5156 requests/s an instance,
    # peak 2 x 3 = 6 -> 2 instances; 2 x 0.7582 x 730 = 1,106.97 USD a month;
    # 1,106.97 / (2 x 3600 x 730 x 0.95 = 4,993,200) x 1e6 = 221.70 USD per million successful requests
    assert (row["success_rate"], row["instances"]) == (0.95, 2)
    assert row["monthly_usd"] == pytest.approx(1106.972)
    assert row["outcome_value"] == pytest.approx(221.70, abs=0.01)


def test_an_own_run_of_an_unknown_accelerator_is_quarantined(curve_catalog, fresh_db):
    fetched = fetch_source(curve_catalog, "own_runs")
    rows = fetched.row_dicts()
    rows[0]["accelerator"] = "nvidia h100"
    batch = SourceBatch.of_rows(fetched.source_id, fetched.kind, fetched.table, fetched.files, fetched.data_as_of, rows)
    load = land_batch(fresh_db, batch, RUN, AS_OF, curve_catalog)
    assert (load.rows_landed, load.rows_quarantined) == (2, 1)
    assert fresh_db.execute("select expectation, unexpected_value from ops.quarantine").fetchall() == [
        ("accelerator_in_catalog", "nvidia h100")]


def test_a_vllm_run_is_dated_by_the_day_its_date_names_and_not_after_its_file(curve_catalog, fresh_db):
    runs = curve_catalog.root / "snapshot" / "benchmark_runs"
    ahead = vllm_result(32, 950, 1000, 900.0, 80.0, 900.0) | {"date": "20261121-073000"}
    late = vllm_result(128, 1000, 1000, 1500.0, 160.0, 2500.0) | {"date": "20261122-000500"}
    (runs / "inf2-c32.json").write_text(json.dumps(ahead))
    (runs / "inf2-c128.json").write_text(json.dumps(late))
    [load] = land_all(fresh_db, curve_catalog, [fetch_source(curve_catalog, "own_runs")], RUN, AS_OF)
    # the files are as of 2026-11-20 (UTC): vLLM's 20261120-101500 is that day and lands; 20261121-073000 is the
    # next day on the benchmark machine's clock (07:30 in Tokyo is 22:30 UTC on the 20th): it lands, a day after the
    # file at most; 20261122-000500 is two days after it
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 2, 1)
    assert fresh_db.execute("select source_ref, expectation, column_name, unexpected_value from ops.quarantine"
                            ).fetchall() == [(str(runs / "inf2-c128.json"), "run_date_not_after_as_of", "run_date",
                                              "2026-11-22 (check_latest_run_date: 2026-11-21)")]
    assert fresh_db.execute("select run_date from raw.benchmark_runs order by row_no").fetchall() == [
        ("2026-11-20",), ("2026-11-21",)]


def test_a_vllm_date_in_another_form_is_kept_as_written_for_the_suite(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(vllm_result(8, 100, 100, 400.0, 40.0, 300.0) | {"date": "2026-11-20 10:15:00"}))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP)
    assert row["run_date"] == "2026-11-20 10:15:00"  # run_date_a_date quarantines it, naming the text
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP | {"date": "2026-11-19"})
    assert row["run_date"] == "2026-11-19"  # metadata says what the file does not, or says it wrong


def test_vllm_default_shape_without_a_concurrency_limit(tmp_path):
    result = vllm_result(None, 100, 100, 400.0, 40.0, 300.0) | {"request_rate": "inf"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP)
    # no --max-concurrency and an unlimited request rate: neither is a number to label the point with
    assert (row["concurrency"], row["request_rate"]) == (None, None)


def test_infinite_or_missing_figures_are_quarantined_with_the_reason(fresh_db, catalog, tmp_path):
    path = tmp_path / "runs.csv"
    base = {"kind": "serving", "accelerator": "inferentia2", "chips": 1, "model": "llama-3.1-8b", "precision": "bf16",
            "concurrency": 8, "input_tokens": 1024, "output_tokens": 256, "request_throughput": 1.5,
            "output_tokens_per_s": 400, "ttft_p99_ms": 300, "tpot_p99_ms": 40, "completed": 100, "failed": 0,
            "source": "t", "date": "2026-11-01"}
    with path.open("w", newline="", encoding="utf-8-sig") as fh:  # a spreadsheet's byte-order mark
        writer = csv.DictWriter(fh, fieldnames=list(benchmark_runs.CSV_COLUMNS))
        writer.writeheader()
        writer.writerow(base)
        writer.writerow(base | {"output_tokens_per_s": "inf"})
        writer.writerow(base | {"tpot_p99_ms": ""})
    rows = benchmark_runs.read_file(path, "runs.csv")
    batch = SourceBatch.of_rows("own", "benchmark_runs", "benchmark_runs", ["runs.csv"], AS_OF,
                        [r | {"row_no": i, "source_id": "own", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    load = land_batch(fresh_db, batch, RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select source_ref, expectation from ops.quarantine order by row_no, expectation"
                            ).fetchall() == [
        ("runs.csv: row 3", "numbers_are_numbers"),  # "inf" is not a finite number ...
        ("runs.csv: row 3", "output_tokens_per_s_present"),  # ... so the figure is missing too
        ("runs.csv: row 4", "tpot_p99_ms_present"),  # a serving run's SLO cannot be checked without it
    ]


# ---------------------------------------------------------------- each kind requires its own columns
OFFLINE = {"kind": "offline", "accelerator": "inferentia2", "chips": 1, "model": "llama-3.1-8b", "precision": "bf16",
           "input_tokens": 2048, "output_tokens": 512, "output_tokens_per_s": 1200, "source": "our batch job",
           "date": "2026-11-01"}
SERVING = {"kind": "serving", "accelerator": "inferentia2", "chips": 1, "model": "llama-3.1-8b", "precision": "bf16",
           "concurrency": 8, "input_tokens": 1024, "output_tokens": 256, "request_throughput": 1.5,
           "output_tokens_per_s": 400, "ttft_p99_ms": 300, "tpot_p99_ms": 40, "completed": 100, "failed": 0,
           "source": "our vLLM run", "date": "2026-11-01"}


def write_runs(path, rows: list[dict], columns=benchmark_runs.CSV_COLUMNS):
    """A generic CSV of `rows` with the header `columns` (a row's values for other columns are left out)."""
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def land_runs(con, catalog, path, metadata=None) -> SourceLoad:
    rows = benchmark_runs.read_file(path, path.name, metadata=metadata)
    batch = SourceBatch.of_rows("own", "benchmark_runs", "benchmark_runs", [path.name], AS_OF,
                        [r | {"row_no": i, "source_id": "own", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    return land_batch(con, batch, RUN, AS_OF, catalog)


def quarantined(con) -> list[tuple]:
    return con.execute("select source_ref, expectation, column_name, unexpected_value from ops.quarantine "
                       "order by row_no, expectation").fetchall()


def test_an_offline_run_needs_no_latency_counts_or_concurrency_and_lands_them_null(fresh_db, catalog, tmp_path):
    # a file of offline rows: neither the latency nor the request-count columns are in its header
    columns = ["kind", "accelerator", "chips", "model", "precision", "input_tokens", "output_tokens",
               "output_tokens_per_s", "tokens_per_s_per_chip", "source", "date"]
    per_chip = OFFLINE | {"chips": 2, "output_tokens_per_s": "", "tokens_per_s_per_chip": 700, "source": "per chip"}
    path = write_runs(tmp_path / "batch.csv", [OFFLINE, per_chip], columns)
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (2, 0)
    assert fresh_db.execute(
        "select kind, concurrency, request_throughput, ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms, completed, "
        "failed from raw.benchmark_runs order by row_no").fetchall() == [("offline",) + (None,) * 8] * 2
    transform.build_models(fresh_db, RUN, AS_OF)
    # staging keeps the kind; a per-chip figure gives the run's throughput too (2 x 700 = 1,400 tokens/s)
    assert fresh_db.execute(
        "select kind, input_tokens, output_tokens, output_tokens_per_s, tokens_per_s_per_chip, success_rate, "
        "tpot_p99_ms from staging.stg_benchmark_runs__results order by row_no").fetchall() == [
        ("offline", 2048.0, 512.0, 1200.0, 1200.0, None, None), ("offline", 2048.0, 512.0, 1400.0, 700.0, None, None)]


def test_an_offline_row_giving_serving_columns_stays_offline(fresh_db, catalog, tmp_path):
    path = write_runs(tmp_path / "runs.csv", [OFFLINE | {"tpot_p99_ms": 30, "ttft_p99_ms": 200, "concurrency": 64}])
    assert (land_runs(fresh_db, catalog, path).rows_landed, quarantined(fresh_db)) == (1, [])
    assert fresh_db.execute("select kind, tpot_p99_ms from raw.benchmark_runs").fetchall() == [("offline", 30.0)]


@pytest.mark.parametrize(("change", "expectation", "column", "why"), [
    ({"input_tokens": ""}, "input_tokens_present", "input_tokens", "a serving or offline run gives its mean input"),
    ({"output_tokens": ""}, "output_tokens_present", "output_tokens", "a serving or offline run gives its mean output"),
    ({"output_tokens_per_s": ""}, "offline_throughput_present", "output_tokens_per_s",
     "output_tokens_per_s (all its chips) or tokens_per_s_per_chip"),
    ({"chips": ""}, "chips_present", "chips", "a serving or offline run says how many accelerators ran it"),
    ({"workload": "gpt3-175b-pretrain"}, "workload_on_training_rows_only", "workload", "(kind training)"),
    ({"date": ""}, "run_date_present", "run_date", "an own run (serving, offline, or a training run of a workload) "
                                                   "says the day it ran"),
])
def test_an_offline_row_without_its_own_columns_is_quarantined_with_the_reason(
        fresh_db, catalog, tmp_path, change, expectation, column, why):
    path = write_runs(tmp_path / "runs.csv", [OFFLINE, OFFLINE | change])
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert [q[:3] for q in quarantined(fresh_db) if q[1] == expectation] == [("runs.csv: row 3", expectation, column)]
    [(reason,)] = fresh_db.execute("select reason from ops.quarantine where expectation = ?", [expectation]).fetchall()
    assert why in reason


@pytest.mark.parametrize(("change", "expectation", "why"), [
    ({"tpot_p99_ms": ""}, "tpot_p99_ms_present", "a serving run needs its p99 TPOT to be checked against"),
    ({"ttft_p99_ms": ""}, "ttft_p99_ms_present", "a run without latency is kind offline"),
    ({"completed": ""}, "completed_present", "a serving run's completed requests must be a number"),
    ({"failed": ""}, "failed_present", "a serving run's failed requests must be a number"),
    ({"input_tokens": ""}, "input_tokens_present", "a measurement prices only a workload whose request shape is close"),
    ({"output_tokens": ""}, "output_tokens_present", "a measurement prices only a workload whose request shape is close"),
])
def test_a_serving_row_without_its_latency_counts_or_request_shape_is_quarantined_with_the_reason(
        fresh_db, catalog, tmp_path, change, expectation, why):
    path = write_runs(tmp_path / "runs.csv", [SERVING, SERVING | change])
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    [column] = change
    assert quarantined(fresh_db) == [("runs.csv: row 3", expectation, column, None)]
    [(reason,)] = fresh_db.execute("select reason from ops.quarantine").fetchall()
    assert why in reason


def test_an_unknown_kind_is_quarantined_naming_the_file_row_and_the_accepted_kinds(fresh_db, catalog, tmp_path):
    # in a file of training columns only: a row of an unknown kind does not fail the file's header
    columns = ["kind", "accelerator", "chips", "model", "precision", "mfu", "source", "date"]
    training = {"kind": "training", "accelerator": "tpu-v6e", "chips": 256, "model": "llama-3.1-8b",
                "precision": "bf16", "mfu": 0.45, "source": "MaxText", "date": "2026-11-01"}
    path = write_runs(tmp_path / "runs.csv", [training, training | {"kind": "Batch"}], columns)
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert quarantined(fresh_db) == [("runs.csv: row 3", "kind_known", "kind", "batch")]
    [(reason,)] = fresh_db.execute("select reason from ops.quarantine").fetchall()
    assert reason.startswith("kind must be one of serving (a load test: latency percentiles and request counts), "
                             "offline (a throughput-only run, e.g. a batch job) or training")
    suite = json.loads((catalog.root / "expectations" / "benchmark_runs.json").read_text())
    [kind_known] = [e for e in suite["expectations"] if e["meta"]["name"] == "kind_known"]
    assert kind_known["kwargs"]["value_set"] == list(benchmark_runs.KIND_CSV_COLUMNS)


def test_the_header_needs_the_columns_of_every_kind_in_the_file(tmp_path):
    columns = ["kind", "accelerator", "chips", "model", "precision", "output_tokens_per_s", "source", "date"]
    with pytest.raises(SourceFormatError, match=r"^runs.csv: missing column\(s\) input_tokens, output_tokens \(see "):
        benchmark_runs.read_file(write_runs(tmp_path / "runs.csv", [OFFLINE], columns), "runs.csv")
    # an empty kind is serving, which needs the request counts
    offline_columns = columns + ["input_tokens", "output_tokens"]
    path = write_runs(tmp_path / "mixed.csv", [OFFLINE, OFFLINE | {"kind": ""}], offline_columns)
    with pytest.raises(SourceFormatError, match=r"^mixed.csv: missing column\(s\) concurrency, request_throughput, "
                                                r"completed, failed \("):
        benchmark_runs.read_file(path, "mixed.csv")


def test_metadata_kind_is_the_kind_of_rows_that_leave_theirs_empty(tmp_path):
    columns = ["kind", "accelerator", "chips", "model", "precision", "input_tokens", "output_tokens",
               "output_tokens_per_s", "source", "date"]
    path = write_runs(tmp_path / "batch.csv", [OFFLINE | {"kind": ""}, OFFLINE | {"kind": "training"}], columns)
    rows = benchmark_runs.read_file(path, "batch.csv", metadata={"kind": "offline"})
    assert [r["kind"] for r in rows] == ["offline", "training"]


def test_a_vllm_result_is_a_serving_run_with_its_request_shape(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(vllm_result(8, 100, 100, 400.0, 40.0, 300.0)))
    with pytest.raises(SourceFormatError, match=r"^r.json: metadata kind 'offline': a vLLM benchmark_serving result "
                                                r"is a serving run"):
        benchmark_runs.read_file(path, "r.json", metadata=SETUP | {"kind": "offline"})
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP | {"input_tokens": 99})
    # the file's totals over completed requests win over metadata: 100 x 1,024 / 100, 100 x 256 / 100
    assert (row["kind"], row["input_tokens"], row["output_tokens"]) == ("serving", 1024, 256)


def test_a_vllm_result_without_token_totals_takes_its_per_request_lists_else_metadata(tmp_path):
    result = vllm_result(4, 3, 4, 400.0, 40.0, 300.0)
    del result["total_input_tokens"], result["total_output_tokens"]
    path = tmp_path / "r.json"
    # --save-detailed lists, one per request sent: the failed request (an error, 0 output tokens) does not count
    path.write_text(json.dumps(result | {"input_lens": [1000, 2000, 3000, 5000], "output_lens": [100, 200, 300, 0],
                                         "errors": ["", "", "", "timeout"]}))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP)
    assert (row["input_tokens"], row["output_tokens"]) == (2000, 200)  # (1,000 + 2,000 + 3,000) / 3; 600 / 3
    path.write_text(json.dumps(result))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP | {"input_tokens": 1024, "output_tokens": 256})
    assert (row["input_tokens"], row["output_tokens"]) == (1024, 256)
    # neither: the row lands without them, and the suite quarantines it (input_tokens_present)
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP)
    assert (row["input_tokens"], row["output_tokens"]) == (None, None)


def detailed_vllm_result(input_lens, output_lens, **changes):
    """A --save-detailed vLLM result of 4 requests sent, 3 completed, without token totals."""
    result = vllm_result(4, 3, 4, 400.0, 40.0, 300.0) | {"input_lens": input_lens, "output_lens": output_lens}
    del result["total_input_tokens"], result["total_output_tokens"]
    return result | changes


def read_vllm(tmp_path, result, metadata=SETUP) -> dict:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=metadata)
    return row


def test_a_vllm_token_total_that_is_not_a_number_is_named_and_never_replaced_by_metadata(tmp_path):
    good = vllm_result(8, 100, 100, 400.0, 40.0, 300.0)
    row = read_vllm(tmp_path, good | {"total_input_tokens": "1,024,000"}, SETUP | {"input_tokens": 2048})
    # the output total still gives its mean: 100 x 256 / 100 = 256
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, 256, "not a finite number: total_input_tokens '1,024,000'")
    # nor by the per-request list: the output mean has no total, so its list gives it: (100 + 200 + 300) / 3 = 200
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, 200, 300, 0],
                                                   total_input_tokens="6,000"))
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, 200, "not a finite number: total_input_tokens '6,000'")
    # a total the file gives cannot be worked out per request without `completed`: no metadata then either
    row = read_vllm(tmp_path, good | {"completed": "100 of 100"}, SETUP | {"input_tokens": 2048, "output_tokens": 64})
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, None, "not a finite number: completed '100 of 100'")


def test_a_per_request_length_that_is_not_a_number_is_named_and_never_left_out_of_a_mean(tmp_path):
    row = read_vllm(tmp_path, detailed_vllm_result([1000, "n/a", 1000, 3000], [100, 200, 300, 0]),
                    SETUP | {"input_tokens": 2048})
    # the request that sent 'n/a' completed, so no mean input without it; output (100 + 200 + 300) / 3 = 200
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, 200, "not a finite number: input_lens[1] 'n/a'")
    # the first 3 bad entries are quoted, the rest counted
    row = read_vllm(tmp_path, detailed_vllm_result([None, "n/a", "", "?", "x"], [0, 100, 100, 100, 100]))
    assert row["number_problem"] == ("not a finite number: input_lens[0] None, input_lens[1] 'n/a', "
                                     "input_lens[2] '', 2 more in input_lens")


def test_a_request_fails_by_its_error_or_0_output_tokens_and_an_unreadable_length_is_no_failure(tmp_path):
    # no errors list: 0 output tokens is vLLM's failed request; '128 tok' is an unreadable length, not a failure
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, "128 tok", 300, 0]))
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, None, "not a finite number: output_lens[1] '128 tok'")
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, 128, 300, 0]))
    # (1,000 + 2,000 + 3,000) / 3 = 2,000; (100 + 128 + 300) / 3 = 176
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (2000, 176, None)
    # with the errors list, it tells which requests failed: input (1,000 + 2,000 + 3,000) / 3 still
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, "128 tok", 300, 0],
                                                   errors=["", "", "", "timeout"]))
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        2000, None, "not a finite number: output_lens[1] '128 tok'")


def test_a_negative_length_or_a_per_request_list_that_is_no_list_is_named(tmp_path):
    row = read_vllm(tmp_path, detailed_vllm_result([1000, -1000, 3000, 5000], [100, 200, 300, 0],
                                                   num_prompts="4 prompts"))
    # (1,000 - 1,000 + 3,000) / 3 = 1,000 would pass for a prompt length: the row says why it is wrong
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        1000, 200, ("not a finite number: num_prompts '4 prompts'; a token count below 0: input_lens[1] -1000"))
    # which request failed cannot be told, and the list is no list: neither mean, nor metadata's output_tokens
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], "100, 200, 300, 0"),
                    SETUP | {"output_tokens": 256})
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, None, "not a list of token counts per request: output_lens '100, 200, 300, 0'")


def test_per_request_lists_of_different_lengths_are_named_and_give_no_mean(tmp_path):
    """One entry a request sent, in each of input_lens, output_lens and errors: a list one short cannot say which
    request its entries are (an errors list of 3 for 4 requests was passed over, and every request counted as
    completed)."""
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, 200, 300, 0],
                                                   errors=["", "", "timeout"]))
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, None, "per-request lists of different lengths (input_lens 4, output_lens 4, errors 3; one entry a "
                    "request sent)")
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000], [100, 200, 300, 0]))
    assert (row["input_tokens"], row["output_tokens"], row["number_problem"]) == (
        None, None, "per-request lists of different lengths (input_lens 3, output_lens 4; one entry a request sent)")
    # of one length, as vLLM writes them: the request with an error is left out, (1,000 + 2,000 + 5,000) / 3
    row = read_vllm(tmp_path, detailed_vllm_result([1000, 2000, 3000, 5000], [100, 200, 300, 0],
                                                   errors=["", "", "timeout", ""]))
    assert (row["input_tokens"], row["number_problem"]) == (pytest.approx(8000 / 3), None)


def test_vllm_token_figures_that_are_not_numbers_are_quarantined_with_the_reason(fresh_db, catalog, tmp_path):
    results = {"good.json": detailed_vllm_result([1000, 2000, 3000, 5000], [100, 200, 300, 0]),
               "total.json": vllm_result(8, 100, 100, 400.0, 40.0, 300.0) | {"total_output_tokens": "25.6k"},
               "lens.json": detailed_vllm_result([1000, "n/a", 3000, 5000], [100, "128 tok", 300, 0])}
    rows = []
    for name, result in results.items():
        (tmp_path / name).write_text(json.dumps(result))
        rows += benchmark_runs.read_file(tmp_path / name, name, metadata=SETUP | {"output_tokens": 256})
    batch = SourceBatch.of_rows("own", "benchmark_runs", "benchmark_runs", list(results), AS_OF,
                                [r | {"row_no": i, "source_id": "own", "data_as_of": AS_OF}
                                 for i, r in enumerate(rows)])
    load = land_batch(fresh_db, batch, RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert quarantined(fresh_db) == [
        ("total.json", "numbers_are_numbers", "number_problem", "not a finite number: total_output_tokens '25.6k'"),
        ("total.json", "output_tokens_present", "output_tokens", None),
        ("lens.json", "input_tokens_present", "input_tokens", None),
        ("lens.json", "numbers_are_numbers", "number_problem",
         "not a finite number: input_lens[1] 'n/a', output_lens[1] '128 tok'"),
        ("lens.json", "output_tokens_present", "output_tokens", None)]


# ---------------------------------------------------------------- figures that cannot be true
def test_text_in_a_number_column_is_quarantined_with_its_text_not_landed_as_null(fresh_db, catalog, tmp_path):
    path = write_runs(tmp_path / "runs.csv", [SERVING, SERVING | {"concurrency": "64 users", "ttft_p50_ms": "1,210.5",
                                                                  "power_w": "700 W"}])
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    # a NULL concurrency would have read as a run without a limit
    assert quarantined(fresh_db) == [(
        "runs.csv: row 3", "numbers_are_numbers", "number_problem",
        "not a finite number: concurrency '64 users', ttft_p50_ms '1,210.5', power_w '700 W'")]


IMPOSSIBLE = [  # (change to a good serving run, the expectation that quarantines it, its column, the value it names)
    ({"ttft_p50_ms": -180}, "ttft_p50_ms_positive", "ttft_p50_ms", "-180.0"),
    ({"ttft_p99_ms": -410}, "ttft_p99_ms_positive", "ttft_p99_ms", "-410.0"),
    ({"tpot_p50_ms": -12.5}, "tpot_p50_ms_positive", "tpot_p50_ms", "-12.5"),
    ({"tpot_p99_ms": 0}, "tpot_p99_ms_positive", "tpot_p99_ms", "0.0"),
    ({"concurrency": -64}, "concurrency_at_least_one", "concurrency", "-64.0"),
    ({"concurrency": 0}, "concurrency_at_least_one", "concurrency", "0.0"),
    ({"request_throughput": -14.2}, "request_throughput_positive", "request_throughput", "-14.2"),
    ({"power_w": -650}, "power_positive", "power_w", "-650.0"),
    ({"chips": 1.5}, "whole_chips", "chips_text", "1.5"),  # staging's cast would have labelled it "2 x ..."
    # past an integer's range: staging's cast failed every build, naming no file or row
    ({"chips": 3000000000}, "chips_bounded", "chips", "3000000000.0"),
    ({"concurrency": 3000000000}, "concurrency_bounded", "concurrency", "3000000000.0"),
    ({"concurrency": 1.5}, "concurrency_whole", "concurrency", "1.5"),
    ({"input_tokens": 20000000}, "input_tokens_bounded", "input_tokens", "20000000.0"),
    ({"output_tokens": 20000000}, "output_tokens_bounded", "output_tokens", "20000000.0"),
]


def test_an_impossible_figure_is_quarantined_with_the_reason(fresh_db, catalog, tmp_path):
    # one batch (one validation): a good run on the file's line 2, then one run with each impossible figure
    path = write_runs(tmp_path / "runs.csv", [SERVING | {"chips": "8.0", "power_w": 650},
                                              *(SERVING | change for change, *_ in IMPOSSIBLE)])
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, len(IMPOSSIBLE))
    assert quarantined(fresh_db) == [(f"runs.csv: row {line}", expectation, column, value)
                                     for line, (_, expectation, column, value) in enumerate(IMPOSSIBLE, start=3)]


def test_an_unknown_column_is_refused_naming_the_file_the_column_and_the_known_ones(tmp_path):
    columns = [c if c != "power_w" else "power_watts" for c in benchmark_runs.CSV_COLUMNS]
    path = write_runs(tmp_path / "runs.csv", [SERVING | {"power_watts": 650}], columns)
    with pytest.raises(SourceFormatError, match=r"^runs.csv: unknown column\(s\) 'power_watts' \(expected some of: "
                                                r"kind, accelerator, instance_type, chips, .* power_w, .* date, "
                                                r"request_rate\)$"):
        benchmark_runs.read_file(path, "runs.csv")


def test_a_nameless_empty_column_of_trailing_commas_is_no_unknown_column(tmp_path):
    path = write_runs(tmp_path / "runs.csv", [SERVING], [*benchmark_runs.CSV_COLUMNS, ""])
    [row] = benchmark_runs.read_file(path, "runs.csv")
    assert (row["concurrency"], row["number_problem"]) == (8, None)
    path.write_text(path.read_text().replace("2026-11-01,", "2026-11-01,forgotten"))
    with pytest.raises(SourceFormatError, match=r"^runs.csv: unknown column\(s\) '' \(expected some of: kind, "):
        benchmark_runs.read_file(path, "runs.csv")


def test_a_vllm_completed_that_is_not_a_number_is_quarantined_with_its_text_not_counted_as_0(
        fresh_db, catalog, tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(vllm_result(64, 998, 1000, 1060.1, 80.0, 600.0)))
    bad.write_text(json.dumps(vllm_result(64, 998, 1000, 1060.1, 80.0, 600.0) | {"completed": "998 of 1000"}))
    rows = [benchmark_runs.read_file(p, p.name, metadata=SETUP)[0] for p in (good, bad)]
    # the good run: 1000 - 998 = 2 failed, and vLLM's request_rate "inf" (no limit) is no problem
    assert [(r["completed"], r["failed"], r["number_problem"]) for r in rows] == [
        (998, 2, None), (None, None, "not a finite number: completed '998 of 1000'")]
    batch = SourceBatch.of_rows("own", "benchmark_runs", "benchmark_runs", ["good.json", "bad.json"], AS_OF,
                                [r | {"row_no": i, "source_id": "own", "data_as_of": AS_OF}
                                 for i, r in enumerate(rows)])
    load = land_batch(fresh_db, batch, RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    # nor can the mean tokens per completed request be worked out (the file has no per-request lists)
    assert quarantined(fresh_db) == [
        ("bad.json", "completed_present", "completed", None), ("bad.json", "failed_present", "failed", None),
        ("bad.json", "input_tokens_present", "input_tokens", None),
        ("bad.json", "numbers_are_numbers", "number_problem", "not a finite number: completed '998 of 1000'"),
        ("bad.json", "output_tokens_present", "output_tokens", None)]


def test_a_vllm_num_prompts_that_is_not_a_number_is_named_beside_the_missing_failed_count(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(vllm_result(64, 998, 1000, 1060.1, 80.0, 600.0) | {"num_prompts": "1000 prompts"}))
    [row] = benchmark_runs.read_file(path, "r.json", metadata=SETUP)
    assert (row["completed"], row["failed"], row["number_problem"]) == (
        998, None, "not a finite number: num_prompts '1000 prompts'")


def test_csv_rows_are_named_by_the_line_they_start_on(tmp_path):
    path = write_runs(tmp_path / "runs.csv", [SERVING, SERVING | {"source": "our\nvLLM run"}, SERVING])
    text = path.read_bytes()
    path.write_bytes(text.replace(b"2026-11-01\r\n", b"2026-11-01\r\n\r\n", 1))  # a blank line after the first run
    rows = benchmark_runs.read_file(path, "runs.csv")
    # header line 1, run line 2, blank line 3, a run whose quoted source spans lines 4-5, a run on line 6
    assert [r["source_ref"] for r in rows] == ["runs.csv: row 2", "runs.csv: row 4", "runs.csv: row 6"]


# ---------------------------------------------------------------- figures past their bounds, or at odds with each other
# a published training figure: 7,207 tokens/s per chip of Llama 3.1 8B on TPU v6e (918 TFLOP/s at bf16) implies
# MFU 6 x 8e9 x 7,207 / 9.18e14 = 0.3768 by 6 x N
PUBLISHED = {"kind": "training", "accelerator": "tpu-v6e", "chips": 256, "model": "llama-3.1-8b", "precision": "bf16",
             "tokens_per_s_per_chip": 7207, "mfu": 0.455, "source": "MaxText on TPU v6e x 256", "date": ""}
# an own run: 64 x H100 ran the GPT-3 workload (1.2e9 tokens) in 480 minutes, an MFU its time implies of
# 6 x 175e9 x 1.2e9 / (64 x 989.4e12 x 28,800 s) = 0.691 at the bf16 peak
OWN_TRAINING = {"kind": "training", "accelerator": "h100-sxm-80gb", "chips": 64, "model": "gpt-3-175b",
                "precision": "bf16", "workload": "gpt3-175b-pretrain", "time_to_train_minutes": 480,
                "source": "our Megatron run", "date": "2026-10-01"}
# an own run of a workload that names no tokens (an MLPerf task alone): its time implies no MFU, so only the time's
# own bounds apply to it
OWN_LORA = OWN_TRAINING | {"model": "llama-2-70b", "workload": "llama2-70b-lora-finetune", "chips": 8}


def land_checked(con, catalog, path) -> SourceLoad:
    """Land a CSV of runs as a run does (land_all, as the catalog's published_benchmarks source): with the multi-row
    checks' columns (flows/checks.py)."""
    rows = benchmark_runs.read_file(path, path.name)
    batch = SourceBatch.of_rows("published_benchmarks", "benchmark_runs", "benchmark_runs", [path.name], AS_OF,
                                [r | {"row_no": i, "source_id": "published_benchmarks", "data_as_of": AS_OF}
                                 for i, r in enumerate(rows)])
    [load] = land_all(con, catalog, [batch], RUN, AS_OF)
    return load


def test_a_figure_past_its_plausibility_bound_is_quarantined_and_the_build_goes_on(fresh_db, catalog, tmp_path):
    path = write_runs(tmp_path / "runs.csv", [
        PUBLISHED,  # line 2
        PUBLISHED | {"tokens_per_s_per_chip": 1e20},  # 3
        PUBLISHED | {"accelerator": "h100-sxm-80gb", "tokens_per_s_per_chip": "", "mfu": 1e-20},  # 4
        OWN_LORA | {"time_to_train_minutes": 1e300},  # 5
        OFFLINE | {"chips": 8, "output_tokens_per_s": 1e20},  # 6: 1e20 / 8 = 1.25e19 a chip
        OFFLINE | {"output_tokens_per_s": "", "tokens_per_s_per_chip": 1e-20},  # 7
        SERVING | {"output_tokens_per_s": 1e-20},  # 8: 1e-20 / 1 chip
        # 9-12: each figure at its bound lands: 8e7 / 8 = 10,000,000 tokens/s a chip, 0.001 tokens/s on 1 chip, MFU
        # 0.001, 10,000,000 minutes
        OFFLINE | {"chips": 8, "output_tokens_per_s": 8e7},
        SERVING | {"output_tokens_per_s": 0.001, "request_throughput": 0.001 / 256},
        PUBLISHED | {"accelerator": "h100-sxm-80gb", "tokens_per_s_per_chip": "", "mfu": 0.001},
        OWN_LORA | {"time_to_train_minutes": 1e7},
    ])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (5, 6)
    failures = quarantined(fresh_db)
    assert [f[:3] for f in failures] == [
        ("runs.csv: row 3", "implied_mfu_plausible", "check_implied_mfu"),
        ("runs.csv: row 3", "tokens_per_s_per_chip_plausible", "tokens_per_s_per_chip"),
        ("runs.csv: row 4", "mfu_plausible", "mfu"),
        ("runs.csv: row 5", "time_to_train_plausible", "time_to_train_minutes"),
        ("runs.csv: row 6", "output_tokens_per_s_plausible", "check_output_tokens_per_s_per_chip"),
        ("runs.csv: row 7", "tokens_per_s_per_chip_plausible", "tokens_per_s_per_chip"),
        ("runs.csv: row 8", "output_tokens_per_s_plausible", "check_output_tokens_per_s_per_chip")]
    # 6 x 8e9 x 1e20 / 9.18e14 = 5.229e15 times the chip's peak
    assert float(failures[0][3]) == pytest.approx(5.229e15, rel=1e-3)
    assert [f[3] for f in failures[1:]] == ["1e+20", "1e-20", "1e+300", "1.25e+19", "1e-20", "1e-20"]
    reasons = dict(fresh_db.execute("select expectation, reason from ops.quarantine").fetchall())
    assert reasons["tokens_per_s_per_chip_plausible"].startswith("a chip processes from 0.001 to 10,000,000 tokens/s")
    assert reasons["mfu_plausible"].startswith("a stated MFU is at least 0.001")
    assert reasons["time_to_train_plausible"].startswith("a completed training run takes at most 10,000,000 minutes")
    # before the bounds these rows landed and the build failed at an integer cast (int_training_backtest.sql's label
    # of 1e20 tokens/s; int_inference_costs_computed.sql's instances for 1e-20 tokens/s), naming neither the file nor
    # the row; now it builds on the rows that landed
    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("inf2.xlarge", "0.7582000000", sku="A000000000000001", gpu="0")))]), RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    assert fresh_db.execute("select source_ref, tokens_per_s_per_chip, mfu, time_to_train_minutes "
                            "from staging.stg_benchmark_runs__results order by row_no").fetchall() == [
        ("runs.csv: row 2", 7207.0, 0.455, None), ("runs.csv: row 9", 1e7, None, None),
        ("runs.csv: row 10", 0.001, None, None), ("runs.csv: row 11", None, 0.001, None),
        ("runs.csv: row 12", None, None, 1e7)]
    # the slowest run at its bound still prices: 0.001 tokens/s / 256 tokens = 3.90625e-6 requests/s an instance;
    # the chat workload's peak of 2 x 3 = 6 requests/s needs 6 / 3.90625e-6 = 1,536,000 instances
    assert fresh_db.execute("select basis, instances from marts.inference_costs "
                            "where workload_id = 'llama31-8b-chat-small' and basis = 'measured'").fetchall() == [
        ("measured", 1536000)]


def test_figures_landed_before_their_bounds_are_labelled_without_an_integer_cast(fresh_db, catalog, tmp_path):
    # rows a warehouse landed before the bounds existed (a stale source runs on them): a label's integer cast of
    # 1e20 tokens/s, or of the hours an MFU of 1e-20 takes, failed every build
    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000001")))]), RUN, AS_OF)
    h100 = {"accelerator": "h100-sxm-80gb", "chips": 8}
    path = write_runs(tmp_path / "runs.csv", [PUBLISHED | h100 | {"tokens_per_s_per_chip": 7207},
                                              PUBLISHED | h100 | {"model": "llama-3.1-70b", "tokens_per_s_per_chip": "",
                                                                  "mfu": 0.4}])
    assert land_runs(fresh_db, catalog, path).rows_landed == 2
    fresh_db.execute("update raw.benchmark_runs set tokens_per_s_per_chip = 1e20 where row_no = 0")
    fresh_db.execute("update raw.benchmark_runs set mfu = 1e-20 where row_no = 1")
    transform.build_models(fresh_db, RUN, AS_OF)
    [label] = fresh_db.execute("select benchmark_label from intermediate.int_training_backtest "
                               "where benchmark_ref = 'runs.csv: row 2'").fetchone()
    assert label.startswith("published 100,000,000,000,000,000,000 tokens/s per chip (MFU ")
    [label] = fresh_db.execute("select distinct benchmark_label from intermediate.int_training_estimates_computed "
                               "where workload_id = 'llama31-8b-pretrain-1t' and offer_id like 'aws:%'").fetchone()
    assert label.startswith("published 100,000,000,000,000,000,000 tokens/s per chip of this model on h100-sxm-80gb")
    # Llama 3.1 70B on 15e12 tokens at MFU 1e-20 on the workload's 4,096 H100s (989.4 TFLOP/s at bf16):
    # 6 x 7.06e10 x 1.5e13 / (4,096 x 9.894e14 x 1e-20) / 3,600 = 4.355e22 h, over the share of the time not lost to
    # communication (scaling): far past an integer's 9.2e18, and the reason writes them whole
    [(reason, hours, scaling)] = fresh_db.execute(
        "select exclusion_reason, run_hours, scaling from intermediate.int_training_estimates_computed "
        "where workload_id = 'llama31-70b-pretrain-15t' and offer_id like 'aws:%'").fetchall()
    assert hours * scaling == pytest.approx(4.355e22, rel=1e-3)
    assert reason == f"needs {hours:,.0f} h on 4,096 chips; the deadline is 2,160 h"


def test_a_serving_run_that_completed_nothing_or_offered_a_negative_rate_is_quarantined_with_the_reason(
        fresh_db, catalog, tmp_path):
    path = write_runs(tmp_path / "runs.csv", [SERVING,
                                              SERVING | {"completed": 0, "failed": 100},
                                              SERVING | {"request_rate": -5}], benchmark_runs.KNOWN_CSV_COLUMNS)
    load = land_runs(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    # completed 0 of 100: success rate 0 / 100 = 0, and a successful request would cost monthly USD / 0 = inf (ranked
    # and printed "| inf |"); -5 would be labelled "-5.0 requests/s offered"
    assert quarantined(fresh_db) == [("runs.csv: row 3", "completed_at_least_one", "completed", "0.0"),
                                     ("runs.csv: row 4", "request_rate_positive", "request_rate", "-5.0")]
    reasons = dict(fresh_db.execute("select expectation, reason from ops.quarantine").fetchall())
    assert reasons["completed_at_least_one"].startswith("a serving run completed at least one request: with completed "
                                                        "0 its success rate is 0 and its cost per successful request "
                                                        "infinite")
    assert reasons["request_rate_positive"].startswith("an offered request rate is more than 0 requests/s")


def test_a_run_whose_two_throughputs_disagree_is_quarantined_with_both_worked_out(fresh_db, catalog, tmp_path):
    eight = OFFLINE | {"chips": 8, "output_tokens_per_s": 8000}  # 8,000 / 8 = 1,000 tokens/s a chip
    path = write_runs(tmp_path / "runs.csv", [
        eight | {"tokens_per_s_per_chip": 1005},  # 1,005 x 8 = 8,040: 0.5% apart, within 1%: lands
        eight | {"tokens_per_s_per_chip": 100},  # 100 x 8 = 800: 0.1x
        eight | {"tokens_per_s_per_chip": 1011},  # 1,011 x 8 = 8,088: 88 apart, past 1% of 8,000 + 0.5 x 8 = 84
        SERVING | {"chips": 2, "output_tokens_per_s": 400, "tokens_per_s_per_chip": 400},  # 400 x 2 = 800: 2x
    ])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 3)
    assert quarantined(fresh_db) == [
        ("runs.csv: row 3", "throughputs_agree", "check_throughputs_disagree",
         "tokens_per_s_per_chip 100 x 8 chips = 800 tokens/s, 0.1x the output_tokens_per_s 8000: more than 1% (and "
         "0.5 tokens/s a chip) apart"),
        ("runs.csv: row 4", "throughputs_agree", "check_throughputs_disagree",
         "tokens_per_s_per_chip 1011 x 8 chips = 8088 tokens/s, 1.011x the output_tokens_per_s 8000: more than 1% (and "
         "0.5 tokens/s a chip) apart"),
        ("runs.csv: row 5", "throughputs_agree", "check_throughputs_disagree",
         "tokens_per_s_per_chip 400 x 2 chips = 800 tokens/s, 2x the output_tokens_per_s 400: more than 1% (and "
         "0.5 tokens/s a chip) apart")]
    transform.build_models(fresh_db, RUN, AS_OF)
    # the row that agrees keeps both figures as given
    assert fresh_db.execute("select source_ref, output_tokens_per_s, tokens_per_s_per_chip "
                            "from staging.stg_benchmark_runs__results").fetchall() == [
        ("runs.csv: row 2", 8000.0, 1005.0)]


def test_a_training_throughput_that_implies_an_mfu_past_1_is_quarantined_naming_it(fresh_db, catalog, tmp_path):
    path = write_runs(tmp_path / "runs.csv", [
        PUBLISHED,  # 6 x 8e9 x 7,207 / 9.18e14 = 0.377: lands
        PUBLISHED | {"tokens_per_s_per_chip": 1000000, "mfu": 0.4},  # 6 x 8e9 x 1e6 / 9.18e14 = 52.288
        # the same throughput given for all 256 chips: 2.56e8 / 256 = 1e6 a chip, 52.288 again
        PUBLISHED | {"tokens_per_s_per_chip": "", "output_tokens_per_s": 256000000},
        # fp16 on a chip that lists no fp16 peak runs at its bf16 one (918): 52.288 again
        PUBLISHED | {"precision": "fp16", "tokens_per_s_per_chip": 1000000},
        PUBLISHED | {"tokens_per_s_per_chip": 0.01},  # 6 x 8e9 x 0.01 / 9.18e14 = 5.229e-7, below 0.001
    ])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 4)
    failures = quarantined(fresh_db)
    assert [f[:3] for f in failures] == [(f"runs.csv: row {line}", "implied_mfu_plausible", "check_implied_mfu")
                                         for line in (3, 4, 5, 6)]
    assert [float(f[3]) for f in failures] == pytest.approx([52.288, 52.288, 52.288, 5.229e-7], rel=1e-4)
    [reason] = {r for (r,) in fresh_db.execute("select reason from ops.quarantine").fetchall()}
    assert reason.startswith("the MFU a training row's tokens/s per chip imply by 6 x N (6 x params x tokens/s per "
                             "chip over the catalog peak of its accelerator and precision, check_implied_mfu), which "
                             "the estimates use instead of its stated mfu, is a share of peak: above 1")


def test_an_own_run_whose_time_implies_an_mfu_past_1_is_quarantined_naming_it(fresh_db, catalog, tmp_path):
    """An own run's time prices its offer as measured: one that implies the chips did more FLOP/s than they have
    would rank it first on a typo. The GPT-3 workload is 6 x 175e9 x 1.2e9 = 1.26e21 FLOPs."""
    path = write_runs(tmp_path / "runs.csv", [
        OWN_TRAINING,  # 480 min on 64 x 989.4 TFLOP/s: 0.691, lands
        OWN_TRAINING | {"time_to_train_minutes": 95},  # 1.26e21 / (64 x 989.4e12 x 5,700 s) = 3.491
        # at fp8 the H100's 1,978.9 TFLOP/s peak: 1.26e21 / (64 x 1978.9e12 x 5,700 s) = 1.745, still past 1
        OWN_TRAINING | {"precision": "fp8", "time_to_train_minutes": 95},
        OWN_TRAINING | {"time_to_train_minutes": 1e6},  # 1.26e21 / (64 x 989.4e12 x 6e7 s) = 3.316e-4, below 0.001
        OWN_LORA | {"time_to_train_minutes": 1},  # the LoRA workload names no tokens: no implied MFU, lands
        # the catalog lists no fp4 peak for the H100: its highest, fp8's and int8's 1,978.9, bounds the run instead:
        # 1.26e21 / (64 x 1978.9e12 x 60 s) = 165.81
        OWN_TRAINING | {"precision": "fp4", "time_to_train_minutes": 1},
    ])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (2, 4)
    failures = quarantined(fresh_db)
    assert [f[:3] for f in failures] == [
        (f"runs.csv: row {line}", "time_implied_mfu_plausible", "check_time_implied_mfu") for line in (3, 4, 5, 7)]
    assert [float(f[3]) for f in failures] == pytest.approx([3.4909, 1.7454, 3.3164e-4, 165.81], rel=1e-4)
    [reason] = {r for (r,) in fresh_db.execute("select reason from ops.quarantine").fetchall()}
    assert reason.startswith("the MFU an own run's time implies (its workload's 6 x N x tokens over chips x the "
                             "catalog peak of its accelerator and precision, or the accelerator's highest listed peak "
                             "where none is listed for that precision, x time_to_train_minutes in seconds")
    assert fresh_db.execute("select source_ref, workload, time_to_train_minutes from raw.benchmark_runs "
                            "order by row_no").fetchall() == [
        ("runs.csv: row 2", "gpt3-175b-pretrain", 480.0), ("runs.csv: row 6", "llama2-70b-lora-finetune", 1.0)]


def test_a_per_chip_throughput_written_as_a_whole_number_agrees_within_its_rounding(fresh_db, catalog, tmp_path):
    """Below 50 tokens/s a chip, a per-chip figure rounded to a whole number is off by more than 1%: 600 tokens/s on
    16 chips is 37.5 a chip, written 38 (38 x 16 = 608, 1.3% apart). Half a token/s a chip is allowed besides 1%:
    |608 - 600| = 8 <= 1% x 600 + 0.5 x 16 = 6 + 8 = 14, lands; 39 x 16 = 624, 24 > 14, is quarantined."""
    sixteen = OFFLINE | {"chips": 16, "output_tokens_per_s": 600}
    path = write_runs(tmp_path / "runs.csv", [sixteen | {"tokens_per_s_per_chip": 38},
                                              sixteen | {"tokens_per_s_per_chip": 39}])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert quarantined(fresh_db) == [
        ("runs.csv: row 3", "throughputs_agree", "check_throughputs_disagree",
         "tokens_per_s_per_chip 39 x 16 chips = 624 tokens/s, 1.04x the output_tokens_per_s 600: more than 1% (and "
         "0.5 tokens/s a chip) apart")]


def test_a_mixture_of_experts_run_implies_its_mfu_by_its_active_parameters(fresh_db, catalog, tmp_path):
    """A token of Mixtral 8x7B costs 6 x its 12.9e9 active parameters, not its 46.7e9: 5,113 tokens/s a chip on an
    H100 (989.4 TFLOP/s at bf16) is 6 x 12.9e9 x 5,113 / 9.894e14 = 0.400, and lands (by all 46.7e9 it implied
    1.448 and was refused); 21,000 tokens/s a chip implies 6 x 12.9e9 x 21,000 / 9.894e14 = 1.643, and is not."""
    mixtral = PUBLISHED | {"accelerator": "h100-sxm-80gb", "chips": 64, "model": "mixtral-8x7b", "mfu": 0.4}
    path = write_runs(tmp_path / "runs.csv", [mixtral | {"tokens_per_s_per_chip": 5113},
                                              mixtral | {"tokens_per_s_per_chip": 21000}])
    load = land_checked(fresh_db, catalog, path)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    [failure] = quarantined(fresh_db)
    assert failure[:3] == ("runs.csv: row 3", "implied_mfu_plausible", "check_implied_mfu")
    assert float(failure[3]) == pytest.approx(1.643, rel=1e-3)
