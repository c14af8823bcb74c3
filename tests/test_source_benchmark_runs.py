"""benchmark_runs: the user's own runs (vLLM JSON, generic CSV) -> raw rows -> measured candidates at the SLO point."""

import csv
import datetime as dt
import json

import pytest
import yaml
from builders import aws_page, aws_product, land

from flows import pipeline, transform
from flows.catalog import load_catalog
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
    batch = pipeline.fetch_source(curve_catalog, "own_runs")
    load = pipeline.land_batch(fresh_db, batch, RUN, AS_OF, curve_catalog)
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
    batch = pipeline.fetch_source(curve_catalog, "own_runs")
    batch.rows[0]["accelerator"] = "nvidia h100"
    load = pipeline.land_batch(fresh_db, batch, RUN, AS_OF, curve_catalog)
    assert (load.rows_landed, load.rows_quarantined) == (2, 1)
    assert fresh_db.execute("select expectation, unexpected_value from ops.quarantine").fetchall() == [
        ("accelerator_in_catalog", "nvidia h100")]


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
    batch = pipeline.SourceBatch("own", "benchmark_runs", "benchmark_runs", ["runs.csv"], AS_OF,
                                 [r | {"row_no": i, "source_id": "own", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    load = pipeline.land_batch(fresh_db, batch, RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select source_ref, expectation from ops.quarantine order by row_no").fetchall() == [
        ("runs.csv: row 3", "output_tokens_per_s_present"),  # "inf" is not a finite number
        ("runs.csv: row 4", "tpot_p99_ms_present"),  # a serving run's SLO cannot be checked without it
    ]
