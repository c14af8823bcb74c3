"""Cost against interactivity (marts.serving_load_points and its chart) and the back-test chart of the estimates."""

from __future__ import annotations

import csv
import datetime as dt
import io

import duckdb
import polars as pl
import pytest
import yaml
from builders import aws_page, aws_product, land, mlperf_inference_result

from flows import backtest_chart, chart_images, chart_kit, charts, frontier_chart, reports, transform, warehouse
from flows.catalog import load_catalog
from flows.land import land_batch
from flows.source_batches import fetch_source
from flows.sources import aws_pricing, benchmark_runs, mlperf_inference
from flows.warehouse import fetch_dicts

# eleven model builds and charts (~20 s in all): make test-slow, so that make test stays within 3 minutes
pytestmark = pytest.mark.slow

AS_OF = dt.date(2026, 11, 30)
RUN = "run-frontier"
CHAT = "llama2-70b-chat"  # SLO: p99 TTFT 2,000 ms, p99 TPOT 200 ms
AZURE_H100 = "azure:eastus:Standard_ND96isr_H100_v5:on_demand"  # 8 x H100 at 98.32 USD/h (the snapshot)
FRONTIER_PNG = f"charts/{CHAT}-cost-vs-interactivity.png"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# one setup, 8 x H100 serving llama-2-70b in bf16, at three concurrency levels:
# concurrency -> (output tokens/s, median TPOT, p99 TPOT, p99 TTFT)
LEVELS = {8: (400.0, 20.0, 30.0, 500.0), 32: (1200.0, 40.0, 60.0, 900.0), 128: (2000.0, 90.0, 250.0, 1500.0)}


def own_runs_catalog(catalog_dir, slo_tpot_ms: float | None = None):
    """The shipped catalog plus an own_runs source holding LEVELS as a generic CSV; optionally a tighter TPOT SLO."""
    runs = catalog_dir / "snapshot" / "benchmark_runs"
    runs.mkdir(exist_ok=True)
    with (runs / "h100-curve.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[c for c in benchmark_runs.CSV_COLUMNS if c not in ("workload",
                                                                                                  "time_to_train_minutes")])
        writer.writeheader()
        for concurrency, (tokens_per_s, tpot_p50, tpot_p99, ttft_p99) in LEVELS.items():
            writer.writerow({"kind": "serving", "accelerator": "h100-sxm-80gb", "instance_type": "", "chips": 8,
                             "model": "llama-2-70b", "precision": "bf16", "concurrency": concurrency,
                             "input_tokens": 1024, "output_tokens": 300, "request_throughput": tokens_per_s / 300,
                             "output_tokens_per_s": tokens_per_s, "ttft_p50_ms": ttft_p99 / 2, "ttft_p99_ms": ttft_p99,
                             "tpot_p50_ms": tpot_p50, "tpot_p99_ms": tpot_p99, "completed": 1000, "failed": 0,
                             "power_w": "", "tokens_per_s_per_chip": "", "mfu": "", "sequence_length": "",
                             "source": "our vLLM sweep", "date": "2026-11-20"})
    sources = yaml.safe_load((catalog_dir / "sources.yaml").read_text())
    sources["sources"]["own_runs"] = {"kind": "benchmark_runs", "description": "our vLLM sweep on ND H100 v5",
                                      "files": [{"path": "snapshot/benchmark_runs/h100-curve.csv",
                                                 "as_of": "2026-11-20", "source": "our vLLM sweep"}]}
    (catalog_dir / "sources.yaml").write_text(yaml.safe_dump(sources, sort_keys=False))
    if slo_tpot_ms is not None:
        workloads = yaml.safe_load((catalog_dir / "workloads.yaml").read_text())
        workloads["workloads"][CHAT]["slo"]["tpot_ms"] = slo_tpot_ms
        (catalog_dir / "workloads.yaml").write_text(yaml.safe_dump(workloads, sort_keys=False))
    return load_catalog(catalog_dir)


def build_own_runs(con, catalog):
    """The snapshot's Azure prices and the own runs landed, every model built."""
    warehouse.load_catalog_tables(con, catalog)
    for source_id in ("azure_retail", "own_runs"):
        load = land_batch(con, fetch_source(catalog, source_id), RUN, AS_OF, catalog)
        assert load.rows_quarantined == 0, source_id
    transform.build_models(con, RUN, AS_OF)
    transform.run_sql_tests(con)
    return con


@pytest.fixture
def own_runs(catalog_copy, fresh_db):
    return build_own_runs(fresh_db, own_runs_catalog(catalog_copy))


def load_points(con, workload_id=CHAT, offer_id=AZURE_H100):
    return fetch_dicts(con, "select * from marts.serving_load_points where as_of = ? and workload_id = ? "
                            "and offer_id = ? order by tokens_per_s_per_user nulls first, load_point",
                       [AS_OF, workload_id, offer_id])


def test_each_concurrency_level_is_a_load_point_priced_on_the_offer(own_runs):
    rows = load_points(own_runs)
    assert [r["load_point"] for r in rows] == ["concurrency 128", "concurrency 32", "concurrency 8"]
    # per-user speed = 1000 / median TPOT: 1000 / 90 = 11.11, 1000 / 40 = 25, 1000 / 20 = 50 tokens/s
    assert [r["tokens_per_s_per_user"] for r in rows] == pytest.approx([11.111, 25.0, 50.0], abs=0.001)
    assert {r["tokens_per_s_per_user_basis"] for r in rows} == {"median TPOT"}
    # one 8-chip replica fills one 8-GPU instance at 98.32 USD/h: USD per million output tokens = 98.32 / (tokens/s x 3600)
    # x 1e6: 98.32 / (2000 x 3600) x 1e6 = 13.66; 98.32 / (1200 x 3600) x 1e6 = 22.76; 98.32 / (400 x 3600) x 1e6 = 68.28
    assert [r["usd_per_million_tokens"] for r in rows] == pytest.approx([13.656, 22.759, 68.278], abs=0.001)
    assert [(r["replica_chips"], r["replica_tokens_per_s"]) for r in rows] == [(8, 2000.0), (8, 1200.0), (8, 400.0)]
    assert {(r["candidate_id"], r["precision"], r["accelerator_id"], r["cloud"], r["instance_type"]) for r in rows} == {
        (f"{CHAT}|{AZURE_H100}|bf16", "bf16", "h100-sxm-80gb", "azure", "Standard_ND96isr_H100_v5")}
    assert [r["benchmark_ref"].rsplit("/", 1)[-1] for r in rows] == [f"h100-curve.csv: row {i}" for i in (4, 3, 2)]


def test_the_slo_selects_the_fastest_level_that_meets_it(own_runs):
    rows = load_points(own_runs)
    # p99 TPOT 250 ms at concurrency 128 misses the 200 ms SLO; 60 ms at 32 and 30 ms at 8 meet it (TTFT all under
    # 2,000 ms): the fastest that meets it, concurrency 32 (1,200 tokens/s), is selected
    assert [(r["load_point"], r["meets_slo"], r["is_selected"]) for r in rows] == [
        ("concurrency 128", False, False), ("concurrency 32", True, True),
        ("concurrency 8", True, False)]
    [priced] = fetch_dicts(own_runs, "select * from marts.inference_costs where as_of = ? and candidate_id = ?",
                           [AS_OF, f"{CHAT}|{AZURE_H100}|bf16"])
    assert priced["usd_per_million_tokens"] == pytest.approx(22.759, abs=0.001)
    assert "concurrency 32" in priced["benchmark_label"]


def test_a_tighter_slo_selects_a_slower_level(catalog_copy, fresh_db):
    con = build_own_runs(fresh_db, own_runs_catalog(catalog_copy, slo_tpot_ms=50))
    # p99 TPOT 50 ms: only concurrency 8 (30 ms) meets it, at 68.28 USD per million output tokens and 50 tokens/s per user
    assert [(r["load_point"], r["meets_slo"], r["is_selected"]) for r in load_points(con)] == [
        ("concurrency 128", False, False), ("concurrency 32", False, False), ("concurrency 8", True, True)]


def test_the_frontier_chart_draws_the_points_and_marks_the_selected_one(own_runs):
    found = charts.workload_charts(own_runs, AS_OF, CHAT)
    assert [c.file_name for c in found] == [f"charts/{CHAT}-outcome-vs-chip-hour.png",
                                            f"charts/{CHAT}-top-candidates.png", FRONTIER_PNG]
    frontier = found[2]
    assert frontier.image.startswith(PNG_SIGNATURE)
    assert frontier.data["load_point"].to_list() == ["concurrency 128", "concurrency 32", "concurrency 8"]
    assert frontier.title == f"{CHAT}: USD per million output tokens against output tokens/s per user, 1 offer"
    assert frontier.caption == (
        "Each line is one offer at the load points measured; further right is faster for each user, lower is cheaper "
        "per token; the cheapest of the points the latency objective selects is azure Standard_ND96isr_H100_v5 "
        "(on_demand) at concurrency 32: "
        "22.76 USD per million output tokens at 25.0 tokens/s per user; hollow points miss the objective.")
    figure = frontier_chart.frontier_figure(frontier.data, frontier.title)
    ax = figure.axes[0]
    line = next(line for line in ax.lines if line.get_label() == "azure Standard_ND96isr_H100_v5 (on_demand)")
    assert list(line.get_xdata()) == pytest.approx([11.111, 25.0, 50.0], abs=0.001)
    assert list(line.get_ydata()) == pytest.approx([13.656, 22.759, 68.278], abs=0.001)
    ring = next(line for line in ax.lines if line.get_markeredgecolor() == chart_kit.MARK_COLOUR)
    assert (list(ring.get_xdata()), list(ring.get_ydata())) == ([25.0], pytest.approx([22.759], abs=0.001))
    assert [(t.get_text(), t.xy) for t in ax.texts] == [("selected: concurrency 32", (25.0, ring.get_ydata()[0]))]
    assert ax.get_xlabel() == "output tokens/s per user" and ax.get_ylabel() == "USD per million output tokens"
    # the same data gives the same bytes
    assert chart_images.png_bytes(frontier_chart.frontier_figure(frontier.data, frontier.title)) == frontier.image


def test_the_caption_and_the_label_name_the_cheapest_selected_point_not_the_first_line(tmp_path):
    """Lines come offers with the most points first: an MI300X with two points before an H100 with one. Each offer's
    selected point is ringed; the caption and the label name the cheapest of them, 0.505 < 0.536 USD, the one the
    workload's pick is priced at (before, the first line's: the MI300X, which the decision line does not pick)."""
    def point(candidate, cloud, instance_type, rank, load_point, usd_, speed, selected):
        return {"line_rank": rank, "candidate_id": candidate, "offer_id": candidate, "cloud": cloud,
                "instance_type": instance_type, "pricing_term": "on_demand", "precision": "fp8", "precision_class": "fp8",
                "region": "r", "offer_regions": 1, "load_point": load_point,
                "usd_per_million_tokens": usd_, "tokens_per_s_per_user": speed, "is_selected": selected,
                "tokens_per_s_per_user_basis": frontier_chart.FLOOR_BASIS, "meets_slo": True}

    frontier = pl.DataFrame([
        point("mi300x", "azure", "Standard_ND96isr_MI300X_v5", 1, "MLPerf v5.1 Interactive", 0.9, 5.5, False),
        point("mi300x", "azure", "Standard_ND96isr_MI300X_v5", 1, "MLPerf v5.1 Server", 0.536, 5.0, True),
        point("h100", "gcp", "a3-highgpu-8g", 2, "MLPerf v5.1 Server", 0.505, 5.0, True),
    ])
    assert frontier_chart.frontier_caption(frontier) == (
        "Each line is one offer at the load points measured; further right is faster for each user, lower is cheaper "
        "per token; the cheapest of the points the latency objective selects is gcp a3-highgpu-8g (on_demand) at "
        "MLPerf v5.1 Server: 0.505 USD per million output tokens at 5.0 tokens/s per user; an MLPerf scenario's speed "
        "(triangle) is a floor, from its p99 TPOT bound.")
    ax = frontier_chart.frontier_figure(frontier, "t").axes[0]
    assert [(t.get_text(), t.xy) for t in ax.texts] == [("selected: MLPerf v5.1 Server", (5.0, 0.505))]


def test_the_workload_page_links_the_frontier_chart(own_runs):
    pages = reports.render(own_runs, AS_OF)
    assert f"]({FRONTIER_PNG})" in pages[f"{CHAT}.md"]
    assert pages[FRONTIER_PNG].startswith(PNG_SIGNATURE)
    # an offline workload's page has no such chart, nor does a service with one point per offer
    assert not any(name.endswith("-cost-vs-interactivity.png") and name != FRONTIER_PNG for name in pages)


H200 = "NVIDIA H200-SXM-141GB"
P5EN = "aws:us-east-1:p5en.48xlarge:on_demand"


def test_mlperf_scenarios_are_load_points_with_the_bound_as_a_floor(fresh_db, catalog):
    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000001")))]), RUN, AS_OF)
    land(fresh_db, catalog, "mlperf_inference", mlperf_inference.result_rows([
        mlperf_inference_result(rid, H200, model, scenario, tokens, precision="fp8") | {"version": "v5.1"}
        for rid, model, scenario, tokens in [("o", "llama2-70b-99", "Offline", 36000.0),
                                             ("s", "llama2-70b-99", "Server", 34000.0),
                                             ("i", "llama2-70b-interactive-99", "Server", 20000.0)]], "s.json"),
         RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    rows = load_points(fresh_db, CHAT, P5EN)
    # per-user speed: 1000 / the scenario's p99 TPOT bound (Server 200 ms -> 5, Interactive 40 ms -> 25 tokens/s);
    # Offline has no bound. USD per million output tokens = 63.296 / (tokens/s x 3600) x 1e6: 36,000 -> 0.4884,
    # 34,000 -> 0.5171, 20,000 -> 0.8791. The chat workload is priced at its Server result; Interactive's bounds
    # (450 / 40 ms) are within its SLO too, Offline shows none
    assert [(r["load_point"], r["tokens_per_s_per_user"], r["tokens_per_s_per_user_basis"], r["meets_slo"],
             r["is_selected"]) for r in rows] == [
        ("MLPerf v5.1 Offline", None, None, False, False),
        ("MLPerf v5.1 Server", 5.0, "scenario p99 TPOT bound (a floor)", True, True),
        ("MLPerf v5.1 Interactive", 25.0, "scenario p99 TPOT bound (a floor)", True, False)]
    assert [r["usd_per_million_tokens"] for r in rows] == pytest.approx([0.4884, 0.5171, 0.8791], abs=0.0001)
    assert [(r["tpot_p99_ms"], r["ttft_p99_ms"]) for r in rows] == [(None, None), (200.0, 2000.0), (40.0, 450.0)]
    [chart] = [c for c in charts.workload_charts(fresh_db, AS_OF, CHAT) if c.file_name == FRONTIER_PNG]
    assert chart.data["load_point"].to_list() == ["MLPerf v5.1 Server", "MLPerf v5.1 Interactive"]  # no Offline
    assert chart.caption.endswith("; an MLPerf scenario's speed (triangle) is a floor, from its p99 TPOT bound.")
    # the offline workload keeps the rows (priced at Offline) but draws no frontier
    assert [(r["load_point"], r["is_selected"]) for r in load_points(fresh_db, "llama2-70b-batch", P5EN)] == [
        ("MLPerf v5.1 Offline", True), ("MLPerf v5.1 Server", False), ("MLPerf v5.1 Interactive", False)]
    assert not any(c.file_name.endswith("-cost-vs-interactivity.png")
                   for c in charts.workload_charts(fresh_db, AS_OF, "llama2-70b-batch"))


def test_one_point_per_offer_draws_no_frontier(fresh_db, catalog):
    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000001")))]), RUN, AS_OF)
    land(fresh_db, catalog, "mlperf_inference", mlperf_inference.result_rows([
        mlperf_inference_result("s", H200, "llama2-70b-99", "Server", 34000.0, precision="fp8")], "s.json"), RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    assert len(load_points(fresh_db, CHAT, P5EN)) == 1
    assert [c.file_name for c in charts.workload_charts(fresh_db, AS_OF, CHAT)] == [
        f"charts/{CHAT}-outcome-vs-chip-hour.png", f"charts/{CHAT}-top-candidates.png"]


def test_two_rounds_server_results_at_one_speed_draw_no_frontier(fresh_db, catalog):
    """A review's finding: the snapshot's MI300X offer has a v4.1 and a v5.1 Server result, both at the scenario's
    floor (1000 / 200 ms = 5 tokens/s per user): the chart drew a line straight up through them, as if it were a
    trade-off between speed and cost. A frontier needs two different per-user speeds on one offer."""
    land(fresh_db, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5en.48xlarge", "63.2960000000", sku="A000000000000001")))]), RUN, AS_OF)
    land(fresh_db, catalog, "mlperf_inference", mlperf_inference.result_rows([
        mlperf_inference_result(rid, H200, "llama2-70b-99", "Server", tokens, precision="fp8") | {"version": version}
        for rid, version, tokens in [("s4", "v4.1", 30000.0), ("s5", "v5.1", 34000.0)]], "s.json"), RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    # two load points, one speed: 63.296 / (30,000 x 3600) x 1e6 = 0.5861 and / 34,000 = 0.5171 USD per million
    rows = load_points(fresh_db, CHAT, P5EN)
    assert [(r["load_point"], r["tokens_per_s_per_user"]) for r in rows] == [
        ("MLPerf v4.1 Server", 5.0), ("MLPerf v5.1 Server", 5.0)]
    assert [r["usd_per_million_tokens"] for r in rows] == pytest.approx([0.5861, 0.5171], abs=0.0001)
    assert [c.file_name for c in charts.workload_charts(fresh_db, AS_OF, CHAT)] == [
        f"charts/{CHAT}-outcome-vs-chip-hour.png", f"charts/{CHAT}-top-candidates.png"]


# The back-test chart, on a hand-made marts.estimate_backtest.

BACKTEST_COLUMNS = {
    "run_id": "varchar", "as_of": "date", "comparison_id": "varchar", "phase": "varchar", "family": "varchar",
    "accelerator_id": "varchar", "precision": "varchar", "model_id": "varchar", "chips": "integer",
    "measurement_basis": "varchar", "unit": "varchar", "measured": "double", "estimated": "double",
    "loo_estimated": "double", "loo_measurements": "integer", "loo_ratio": "double", "precision_doubtful": "boolean",
    "benchmark_ref": "varchar", "benchmark_label": "varchar",
}
SERVING_UNIT, TRAINING_UNIT = "output tokens/s per chip", "minutes to train"


def comparison(comparison_id, phase, family, measured, loo_ratio, loo_measurements=2):
    unit = SERVING_UNIT if phase == "serving" else TRAINING_UNIT
    return {"run_id": RUN, "as_of": AS_OF, "comparison_id": comparison_id, "phase": phase, "family": family,
            "accelerator_id": f"{family}-chip", "precision": "bf16", "model_id": "llama-2-70b", "chips": 8,
            "measurement_basis": "MLPerf Inference" if phase == "serving" else "MLPerf Training", "unit": unit,
            "measured": measured, "estimated": measured * 1.3, "loo_estimated": measured * loo_ratio,
            "loo_measurements": loo_measurements, "loo_ratio": loo_ratio, "precision_doubtful": False,
            "benchmark_ref": f"{comparison_id}.json",
            "benchmark_label": comparison_id}


@pytest.fixture
def backtest_db(tmp_path):
    """A warehouse holding only marts.estimate_backtest: three serving and two training comparisons on AS_OF."""
    con = duckdb.connect(str(tmp_path / "backtest.duckdb"))
    con.execute("create schema marts")
    con.execute(f"create table marts.estimate_backtest ({', '.join(f'{c} {t}' for c, t in BACKTEST_COLUMNS.items())})")
    rows = [comparison("s-h100", "serving", "gpu", 3000.0, 1.10), comparison("s-v6e", "serving", "tpu", 800.0, 0.80),
            comparison("s-inf2", "serving", "inferentia", 150.0, 1.05, loo_measurements=0),
            comparison("t-h100", "training", "gpu", 50.0, 0.90), comparison("t-trn1", "training", "trainium", 400.0, 1.30)]
    con.register("_rows", pl.DataFrame(rows, schema_overrides={"as_of": pl.Date}).to_arrow())
    con.execute("insert into marts.estimate_backtest by name select * from _rows")
    yield con
    con.close()


def test_the_backtest_chart_gives_the_leave_one_out_error_per_panel(backtest_db):
    chart = backtest_chart.backtest_chart(backtest_db, AS_OF)
    assert chart.file_name == "charts/estimate-backtest.png" and chart.image.startswith(PNG_SIGNATURE)
    assert chart.title.startswith("Estimated against measured")
    # serving, the two calibrated |1.10 - 1|, |0.80 - 1| = 0.10, 0.20: median 15%; the uncalibrated |1.05 - 1| = 5.0%;
    # training 0.10, 0.30: median 20%
    assert chart.caption == (
        "5 comparisons, on the line where the estimate is right; leave-one-out median absolute error: serving 15% "
        "over the 2 calibrated (goal ±15%), 5.0% over the 1 with no other measurement to calibrate it; training 20% "
        "over the 2 calibrated (goal ±20%); hollow points had no other measurement to calibrate them.")
    figure = backtest_chart.backtest_figure(chart.data, chart.title)
    serving, training = figure.axes
    assert serving.get_title(loc="left") == f"serving: {SERVING_UNIT}"
    assert training.get_title(loc="left") == f"training: {TRAINING_UNIT}"
    # serving spans 120 to 3,300 tokens/s (27x): log; training 45 to 520 minutes (11.6x): linear
    assert (serving.get_xscale(), serving.get_yscale(), training.get_xscale()) == ("log", "log", "linear")
    plotted = sorted(tuple(round(v, 6) for v in p) for c in serving.collections for p in c.get_offsets().tolist())
    assert plotted == sorted([(3000.0, 3300.0), (800.0, 640.0), (150.0, 157.5)])
    hollow = [c for c in serving.collections if len(c.get_facecolors()) == 0]  # facecolors "none"
    assert [c.get_offsets().tolist() for c in hollow] == [[[150.0, 157.5]]]
    # y = x and the goal lines: serving at 0.85x and 1.15x, training at 0.8x and 1.2x
    slopes = [round(line.get_ydata()[1] / line.get_xdata()[1], 2) for line in serving.lines]
    assert slopes == [1.0, 0.85, 1.15]
    assert [round(line.get_ydata()[1] / line.get_xdata()[1], 2) for line in training.lines] == [1.0, 0.8, 1.2]
    assert chart_images.png_bytes(backtest_chart.backtest_figure(chart.data, chart.title)) == chart.image


def test_no_backtest_rows_no_chart(backtest_db, tmp_path):
    assert backtest_chart.backtest_chart(backtest_db, AS_OF + dt.timedelta(days=1)) is None
    empty = duckdb.connect(str(tmp_path / "empty.duckdb"))
    assert backtest_chart.backtest_chart(empty, AS_OF) is None  # a warehouse built before the mart existed
    empty.close()


def test_one_phase_one_panel(backtest_db):
    backtest_db.execute("delete from marts.estimate_backtest where phase = 'training'")
    chart = backtest_chart.backtest_chart(backtest_db, AS_OF)
    assert len(backtest_chart.backtest_figure(chart.data, chart.title).axes) == 1
    assert "training" not in chart.caption and "serving 15% over the 2 calibrated" in chart.caption


def test_the_calibrated_basis_has_its_own_bar_style_between_scaled_and_estimated():
    assert list(charts.BASIS_STYLES) == ["measured", "scaled", "calibrated", "estimated"]
    assert len({style for style in charts.BASIS_STYLES.values()}) == 4
    top = pl.DataFrame({
        "candidate_id": ["a", "b", "c"], "cloud": ["aws", "gcp", "aws"], "region": ["us-east-1"] * 3,
        "instance_type": ["p5.48xlarge", "tpu-v6e-8", "inf2.xlarge"], "pricing_term": ["spot"] * 3,
        "precision": ["bf16"] * 3, "chips": [8, 8, 1], "basis": ["estimated", "calibrated", "measured"],
        "outcome_metric": ["usd_per_million_tokens"] * 3, "outcome_value": [1.0, 2.0, 3.0], "outcome_rank": [1, 2, 3],
        "offer_regions": [1, 1, 1],  # each instance type ranked in one region (charts.TOP_CANDIDATES_SQL counts them)
    })
    figure = charts.top_candidates_figure(top, "t")
    assert [bar.get_hatch() or "" for bar in figure.axes[0].patches] == ["..", "\\\\", ""]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["measured", "calibrated", "estimated"]
    assert "calibrated on measurements of the chip" in charts.top_candidates_caption(top, 3)
    assert png_ok(chart_images.png_bytes(figure))


def png_ok(image: bytes) -> bool:
    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        opened.load()
        return (opened.format, opened.size) == ("PNG", (700, 400))


def test_the_selected_load_point_costs_what_the_candidate_costs_offline_on_spot_too(snapshot_warehouse, tmp_path):
    """The embedded snapshot's batch workload (offline) on AWS spot: inference_costs divides the cost per token by
    1 - the hours lost restarting after reclaims, and the load point it selected says the same figure. One
    p5.48xlarge spot instance holds the 8-chip replica: the loss is 1 instance x 0.2 reclaims a month / 730 h x 0.25 h
    a restart = 6.849e-5 of every hour (catalogs/instances.yaml)."""
    from conftest import open_copy

    con = open_copy(snapshot_warehouse, tmp_path / "hweval.duckdb")
    try:
        rows = fetch_dicts(con, """
            select points.candidate_id, points.usd_per_million_tokens as point, costs.usd_per_million_tokens as cost,
                costs.reclaim_loss, costs.deployment_usd_per_hour, costs.deployment_tokens_per_s
            from marts.serving_load_points as points
            inner join marts.inference_costs as costs using (as_of, candidate_id)
            where points.is_selected and costs.basis = 'measured'""")
        assert rows and all(r["point"] == pytest.approx(r["cost"], rel=1e-12) for r in rows), [
            r for r in rows if r["point"] != pytest.approx(r["cost"], rel=1e-12)]
        [spot] = [r for r in rows if r["candidate_id"] == "llama2-70b-batch|aws:us-east-1:p5.48xlarge:spot|bf16"]
        loss = 1 * 0.2 / 730 * 0.25
        assert spot["reclaim_loss"] == pytest.approx(loss, rel=1e-12) == pytest.approx(6.849e-5, abs=1e-8)
        at_full_load = spot["deployment_usd_per_hour"] / (spot["deployment_tokens_per_s"] * 3600) * 1e6
        assert spot["point"] == pytest.approx(at_full_load / (1 - loss), rel=1e-12)
        assert spot["point"] != pytest.approx(at_full_load, rel=1e-6)  # the loss is in it
    finally:
        con.close()
