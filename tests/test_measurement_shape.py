"""A measurement prices only the workload it measured (issue 18): the request shape within a tolerance, the replica
rules of the estimate, and the cost per million output and per million total tokens, worked by hand."""

import datetime as dt

import pytest
from builders import aws_page, aws_product, land

from flows import transform
from flows.land import land_all
from flows.sources import aws_pricing
from flows.warehouse import fetch_dicts

# seven builds of the models (~12 s in all): make test-slow, so that make test stays within 3 minutes
pytestmark = pytest.mark.slow

AS_OF = dt.date(2026, 11, 30)
RUN = "run-shape"
P5_1 = "aws:us-east-1:p5.4xlarge:on_demand"
P5_8 = "aws:us-east-1:p5.48xlarge:on_demand"
# an own serving run of Llama-3.1-8B on H100, latency well inside every chat SLO of the catalog (TPOT 100 ms, TTFT 2 s)
RUN_ROW = {"kind": "serving", "accelerator": "h100-sxm-80gb", "model": "llama-3.1-8b", "precision": "fp8",
           "concurrency": 16, "ttft_p50_ms": 300, "ttft_p99_ms": 900, "tpot_p50_ms": 30, "tpot_p99_ms": 50,
           "completed": 1000, "failed": 0, "request_throughput": 5.0, "source": "our sweep", "date": "2026-11-20"}


def land_runs_then_prices(con, catalog, tmp_path, rows, *products):
    from test_own_runs import runs_batch

    # land_all starts the run's loads afresh: the runs first, then the prices
    [load] = land_all(con, catalog, [runs_batch(tmp_path, *rows)], RUN, AS_OF)
    assert (load.status, load.rows_quarantined) == ("landed", 0), load.error
    land(con, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(*products))]), RUN, AS_OF)


def costs(con, workload_id, offer_id):
    return fetch_dicts(con, "select * from marts.inference_costs where workload_id = ? and offer_id = ? "
                            "and precision = 'fp8'", [workload_id, offer_id])


def test_a_run_prices_the_workload_of_its_shape_and_not_another(fresh_db, catalog, tmp_path):
    land_runs_then_prices(fresh_db, catalog, tmp_path, [RUN_ROW | {
        "chips": 1, "input_tokens": 8192, "output_tokens": 1024, "output_tokens_per_s": 2000.0}],
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"))
    # llama31-8b-chat-small becomes an 8,192 + 1,024 token service (after landing, which reloads the catalog);
    # llama31-8b-chat-large stays 1,024 + 256
    fresh_db.execute("update catalog.workloads set input_tokens = 8192, output_tokens = 1024 "
                     "where workload_id = 'llama31-8b-chat-small'")
    transform.build_models(fresh_db, RUN, AS_OF)
    [long] = costs(fresh_db, "llama31-8b-chat-small", P5_1)
    # 8,192 + 1,024 against 8,192 + 1,024: a gap of 0, measured. 6.88 USD/h / (2,000 tokens/s x 3,600) x 1e6
    # = 0.955556 USD per million output tokens; over input + output: 0.955556 x 1,024 / 9,216 = 0.106173
    assert long["basis"] == "measured"
    assert long["usd_per_million_tokens"] == pytest.approx(0.955556, abs=1e-6)
    assert long["usd_per_million_total_tokens"] == pytest.approx(0.106173, abs=1e-6)
    [short] = costs(fresh_db, "llama31-8b-chat-large", P5_1)
    # 8,192 / 1,024 - 1 = 7.0 and 1,024 / 256 - 1 = 3.0, beyond 25%: not used as a measurement; the estimate
    # stands (calibrated by the run's efficiency, which carries across shapes) and says why
    assert short["basis"] == "calibrated"
    assert short["benchmark_label"].endswith(
        "; not measured: own run: our sweep, 1 x h100-sxm-80gb, 8,192 + 1,024 tokens, concurrency 16, run on 2026-11-20: "
        "outside 25% of this workload's 1,024 + 256 tokens")
    # its total-token figure: x 256 / 1,280 = 0.2 of the output figure
    assert short["usd_per_million_total_tokens"] == pytest.approx(short["usd_per_million_tokens"] * 0.2, rel=1e-9)


def test_the_closest_shape_wins_and_the_row_names_it(fresh_db, catalog, tmp_path):
    # two runs within 25% of 1,024 + 256: 1,100 + 256 (gap 7.4%) at 1,500 tokens/s, 1,200 + 300 (gap 17.2%) at 1,900
    land_runs_then_prices(fresh_db, catalog, tmp_path, [
        RUN_ROW | {"chips": 1, "input_tokens": 1100, "output_tokens": 256, "output_tokens_per_s": 1500.0,
                   "source": "near"},
        RUN_ROW | {"chips": 1, "input_tokens": 1200, "output_tokens": 300, "output_tokens_per_s": 1900.0,
                   "source": "far"}],
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"))
    transform.build_models(fresh_db, RUN, AS_OF)
    [row] = costs(fresh_db, "llama31-8b-chat-large", P5_1)
    # the faster run is further from the workload's shape: the nearer one prices it, 6.88 / (1,500 x 3,600) x 1e6
    assert row["basis"] == "measured"
    assert row["benchmark_label"] == "own run: near, 1 x h100-sxm-80gb, 1,100 + 256 tokens, concurrency 16, run on 2026-11-20"
    assert row["usd_per_million_tokens"] == pytest.approx(1.274074, abs=1e-6)


def test_an_8_chip_run_is_priced_on_an_8_chip_instance_only(fresh_db, catalog, tmp_path):
    land_runs_then_prices(fresh_db, catalog, tmp_path, [RUN_ROW | {
        "chips": 8, "input_tokens": 1024, "output_tokens": 256, "output_tokens_per_s": 8000.0}],
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"),
        aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000002"))
    transform.build_models(fresh_db, RUN, AS_OF)
    # one 8-GPU instance holds the replica: 55.04 / (8,000 x 3,600) x 1e6 = 1.911111 USD per million output tokens
    [eight] = costs(fresh_db, "llama31-8b-chat-large", P5_8)
    assert (eight["basis"], eight["instances_per_replica"]) == ("measured", 1)
    assert eight["usd_per_million_tokens"] == pytest.approx(1.911111, abs=1e-6)
    # on one-GPU instances the replica would span 8 of them; the workload allows 1 instance per replica
    [one] = costs(fresh_db, "llama31-8b-chat-large", P5_1)
    assert one["basis"] == "calibrated"
    assert one["benchmark_label"].endswith(
        "; not measured: own run: our sweep, 8 x h100-sxm-80gb, 1,024 + 256 tokens, concurrency 16, run on 2026-11-20: a "
        "replica of 8 chips spans 8 instances of p5.4xlarge; the workload allows 1")


def test_an_offline_run_without_latency_prices_offline_work_only(fresh_db, catalog, tmp_path):
    # a throughput-only batch job: no latency, no request counts, no concurrency; nothing typed in their place
    offline = {"kind": "offline", "accelerator": "h100-sxm-80gb", "chips": 8, "model": "llama-2-70b",
               "precision": "fp8", "input_tokens": 1024, "output_tokens": 300, "output_tokens_per_s": 20000.0,
               "source": "our batch job", "date": "2026-11-21"}
    land_runs_then_prices(fresh_db, catalog, tmp_path, [offline],
                          aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000002"))
    transform.build_models(fresh_db, RUN, AS_OF)
    [staged] = fetch_dicts(fresh_db, "select kind, tpot_p99_ms, ttft_p99_ms, completed, failed, concurrency "
                                     "from staging.stg_benchmark_runs__results")
    assert staged == {"kind": "offline", "tpot_p99_ms": None, "ttft_p99_ms": None, "completed": None, "failed": None,
                      "concurrency": None}
    # the offline workload (llama2-70b-batch, 1,024 + 300 tokens): 55.04 / (20,000 x 3,600) x 1e6 = 0.764444 USD per
    # million output tokens; x 300 / 1,324 = 0.173212 per million total tokens
    [batch] = costs(fresh_db, "llama2-70b-batch", P5_8)
    assert batch["basis"] == "measured" and batch["benchmark_label"].startswith("own run: our batch job, 8 x ")
    assert batch["usd_per_million_tokens"] == pytest.approx(0.764444, abs=1e-6)
    assert batch["usd_per_million_total_tokens"] == pytest.approx(0.173212, abs=1e-6)
    # the chat service has a latency objective: a run without latency figures is no measurement of it
    assert [r["basis"] for r in costs(fresh_db, "llama2-70b-chat", P5_8)] == ["calibrated"]


def test_one_setups_levels_of_slightly_different_shapes_still_pick_the_fastest(fresh_db, catalog, tmp_path):
    # a sweep: vLLM's measured mean lengths move a little from level to level (256 then 255 output tokens); both
    # are within 5% of the workload's 1,024 + 256, so the fastest level that meets the SLO wins
    land_runs_then_prices(fresh_db, catalog, tmp_path, [
        RUN_ROW | {"chips": 1, "concurrency": 8, "input_tokens": 1024, "output_tokens": 256,
                   "output_tokens_per_s": 1000.0},
        RUN_ROW | {"chips": 1, "concurrency": 32, "input_tokens": 1024, "output_tokens": 255,
                   "output_tokens_per_s": 3000.0}],
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"))
    transform.build_models(fresh_db, RUN, AS_OF)
    [row] = costs(fresh_db, "llama31-8b-chat-large", P5_1)
    # 6.88 / (3,000 x 3,600) x 1e6 = 0.637037 USD per million output tokens
    assert "concurrency 32" in row["benchmark_label"]
    assert row["usd_per_million_tokens"] == pytest.approx(0.637037, abs=1e-6)


def test_an_offline_run_with_latency_figures_still_prices_no_service(fresh_db, catalog, tmp_path):
    # latency typed on an offline row is another kind's column: ignored, never read as a measurement of latency
    offline = {"kind": "offline", "accelerator": "h100-sxm-80gb", "chips": 1, "model": "llama-3.1-8b",
               "precision": "fp8", "input_tokens": 1024, "output_tokens": 256, "output_tokens_per_s": 3000.0,
               "ttft_p99_ms": 100, "tpot_p99_ms": 10, "concurrency": 64, "source": "our batch job",
               "date": "2026-11-21"}
    land_runs_then_prices(fresh_db, catalog, tmp_path, [offline],
                          aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"))
    transform.build_models(fresh_db, RUN, AS_OF)
    [staged] = fetch_dicts(fresh_db, "select tpot_p99_ms, ttft_p99_ms, concurrency "
                                     "from staging.stg_benchmark_runs__results")
    assert staged == {"tpot_p99_ms": None, "ttft_p99_ms": None, "concurrency": None}
    [chat] = costs(fresh_db, "llama31-8b-chat-large", P5_1)
    assert chat["basis"] != "measured"
    assert chat["benchmark_label"].endswith(
        "; not measured: own run: our batch job, 1 x h100-sxm-80gb, 1,024 + 256 tokens, run on 2026-11-21 is a "
        "throughput-only (offline) run: it shows no latency for this workload's objective")
    assert fetch_dicts(fresh_db, "select * from marts.serving_load_points where workload_id = 'llama31-8b-chat-large'"
                       ) == []


def test_a_multi_node_mlperf_system_serves_from_one_node_replicas(fresh_db, catalog):
    from builders import mlperf_inference_result

    from flows.sources import mlperf_inference

    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1"),
        aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000002")))]), RUN, AS_OF)
    # 2 nodes of 8 H100 at 48,000 tokens/s: a replica is one node, 48,000 x 8 / 16 = 24,000 tokens/s
    land(fresh_db, catalog, "mlperf_inference", mlperf_inference.result_rows([mlperf_inference_result(
        "two-nodes", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 48000.0, nodes=2)], "s.json"), RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    [eight] = fetch_dicts(fresh_db, "select * from marts.inference_costs where workload_id = 'llama2-70b-batch' "
                                    "and offer_id = ? and precision = 'fp16'", [P5_8])
    # 55.04 / (24,000 x 3,600) x 1e6 = 0.637037 USD per million output tokens, on one p5.48xlarge a replica
    assert (eight["basis"], eight["replica_chips"], eight["instances_per_replica"]) == ("measured", 8, 1)
    assert eight["usd_per_million_tokens"] == pytest.approx(0.637037, abs=1e-6)
    # on one-GPU instances a node spans 8 of them, past the workload's 1; the model does not fit one GPU either, so
    # the excluded estimate says why neither prices it
    [one] = fetch_dicts(fresh_db, "select exclusion_reason from marts.excluded_candidates "
                                  "where workload_id = 'llama2-70b-batch' and offer_id = ? and precision = 'bf16'",
                        [P5_1])
    assert one["exclusion_reason"].endswith(
        "; not measured: MLPerf Inference v4.1 llama2-70b-99 Offline: Test Test system (8x NVIDIA H100-SXM-80GB): a "
        "replica of 8 chips spans 8 instances of p5.4xlarge; the workload allows 1")
