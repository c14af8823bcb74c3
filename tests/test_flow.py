"""One run of the whole nightly flow on the embedded snapshot: its figures and its reports (failures: test_fault_injection.py)."""

import datetime as dt
import filecmp
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import AS_OF, CATALOGS, FLOW_RUN_CONNECTIONS

from flows.warehouse import fetch_dicts

GOLDEN = Path(__file__).parent / "golden"


def query(result, sql, params=None):
    con = duckdb.connect(str(result.warehouse), read_only=True)
    try:
        return fetch_dicts(con, sql, params)
    finally:
        con.close()


def ranking_row(result, workload, offer_id, **where):
    rows = [r for r in query(result, "select * from marts.rankings where workload_id = ? and offer_id = ?",
                             [workload, offer_id]) if all(r[k] == v for k, v in where.items())]
    assert len(rows) == 1, rows
    return rows[0]


def test_llama2_lora_on_8_h200_p5en_costs_26_05(flow_run):
    row = ranking_row(flow_run, "llama2-70b-lora-finetune", "aws:us-east-1:p5en.48xlarge:on_demand")
    # FACTS worked check: 24.69 min / 60 x 63.296 = 26.05 USD
    assert round(row["time_to_train_minutes"], 2) == 24.69
    assert round(row["outcome_value"], 2) == 26.05
    page = (flow_run.reports / "llama2-70b-lora-finetune.md").read_text()
    assert "| aws p5en.48xlarge | h200-sxm-141gb x 8 | aws / us-east-1 | on_demand | 7.912 |" in page
    # energy: 24.69 / 60 h x 8 chips x 0.700 kW x PUE 1.2 = 2.77 kWh
    assert "| 8 (1 instance) | 24.69 min | 26.05 | — | 2.77 | measured |" in page  # measured: no likely range


def test_gpt3_on_512_tpu_v5p_and_512_h100(flow_run):
    tpu = ranking_row(flow_run, "gpt3-175b-pretrain", "gcp:us-central1:tpu-v5p-8:on_demand", chips=512)
    # 114.79 / 60 x 512 chips x 4.20 = 4,114 USD (128 tpu-v5p-8 slices of 4 chips)
    assert tpu["instances"] == 128 and round(tpu["outcome_value"]) == 4114
    h100 = ranking_row(flow_run, "gpt3-175b-pretrain", "aws:us-east-1:p5.48xlarge:on_demand", chips=512)
    # 50.73 / 60 x 64 x 55.04 = 2,978 USD; cheaper per run although dearer per chip-hour (6.88 vs 4.20)
    assert h100["instances"] == 64 and round(h100["outcome_value"]) == 2978
    assert h100["outcome_rank"] < tpu["outcome_rank"] and h100["chip_hour_rank"] > tpu["chip_hour_rank"]
    assert h100["is_reversal"]
    page = (flow_run.reports / "gpt3-175b-pretrain.md").read_text()
    # no range (measured); no TPU v5p TDP published: the energy cell says so
    assert "| 512 (128 instances) | 114.79 min | 4,114.21 | — | no published power | measured |" in page
    # energy: 50.73 / 60 h x 512 chips x 0.700 kW x PUE 1.2 = 363.6 kWh
    assert "| 512 (64 instances) | 50.73 min | 2,978.21 | — | 364 | measured |" in page


def test_llama2_batch_on_p5_costs_0_62_per_million_tokens(flow_run):
    row = ranking_row(flow_run, "llama2-70b-batch", "aws:us-east-1:p5.48xlarge:on_demand", precision="fp16")
    assert row["basis"] == "measured"
    # 55.04 / (24,528 x 3600) x 1e6 = 0.623 USD
    assert round(row["outcome_value"], 3) == 0.623
    # no likely range (measured); per million input + output tokens: 0.623 x 300 / (1,024 + 300) = 0.141; no power
    # measured for this H100 system: 8 x 700 W x 0.7 load / 24,528 tokens/s = 0.159817 J a token, / 3.6 x PUE 1.2
    # = 0.05327 kWh per million tokens (three figures, 0.0533); 24,528 / 3,920 W = 6.26 tokens/s a watt
    assert "| fp16 | 3,066 | 0.623 | — | 0.141 | 0.0533 | 6.26 | TDP x load factor | measured |" in (
        flow_run.reports / "llama2-70b-batch.md").read_text()


def test_rows_in_equal_landed_plus_quarantined(flow_run):
    [run] = query(flow_run, "select * from ops.runs")
    loads = query(flow_run, "select * from ops.source_loads")
    quarantined_rows = query(flow_run, "select count(distinct (source_id, row_no)) as n from ops.quarantine")[0]["n"]
    assert run["status"] == "succeeded"
    assert run["rows_in"] == run["rows_landed"] + run["rows_quarantined"]
    assert run["rows_in"] == sum(r["rows_in"] for r in loads)
    assert run["rows_quarantined"] == quarantined_rows
    from flows.warehouse import RAW_TABLES

    landed = sum(query(flow_run, f"select count(*) as n from raw.{t}")[0]["n"] for t in RAW_TABLES)
    assert landed == run["rows_landed"]


def test_the_build_takes_the_connection_the_landing_left_open(flow_run):
    """One read-write connection to the run's building copy: the land task hands it to build_and_render, which
    checkpoints once for both (closing it after the landing checkpointed the landed rows, then the build's own
    connection read the file back: 0.065 s of every run, measured)."""
    building = [path for path in FLOW_RUN_CONNECTIONS if ".building-" in path.name]
    assert len(building) == 1, FLOW_RUN_CONNECTIONS


def test_snapshot_traps_are_quarantined_with_their_expectation(flow_run):
    reasons = {(r["source_id"], r["expectation"], r["unexpected_value"]) for r in query(
        flow_run, "select source_id, expectation, unexpected_value from ops.quarantine")}
    assert reasons == {
        ("aws_pricing", "on_demand_hourly_price_positive", "0.0"),  # the $0.00 Capacity Block row
        ("gcp_billing", "price_not_placeholder", "700.0"),  # "not offered"
        ("mlperf_inference_snapshot", "accelerator_has_alias", "nvidia h100-pcie-80gb"),  # a different part
        ("mlperf_inference_snapshot", "accelerator_has_alias", ""),  # an empty Accelerator ...
        ("mlperf_inference_snapshot", "accelerators_per_node_present", None),  # ... with an empty a#
        ("mlperf_training_snapshot", "accelerator_has_alias", "intel(r) gaudi(r) 2 ai accelerator"),  # not in catalog
    }


def test_reports_are_published_dated_and_latest(flow_run):
    dated = flow_run.reports
    assert dated.name == AS_OF.isoformat()
    latest = dated.parent / "latest"
    names = sorted(p.name for p in dated.iterdir())
    workloads = ["gpt3-175b-pretrain", "llama2-70b-batch", "llama2-70b-chat", "llama2-70b-lora-finetune",
                 "llama31-405b-chat", "llama31-70b-pretrain-15t", "llama31-8b-chat-large", "llama31-8b-chat-small",
                 "llama31-8b-pretrain-1t"]
    # a page and its full ranking as CSV per workload, the charts folder, the Data Docs, the index, the offers (a
    # page, and every offer as CSV) and the back-test of the estimates
    assert names == sorted(["charts", "data-docs", "estimates.md", "index.md", "offers.md", "offers.csv"]
                           + [f"{w}.md" for w in workloads]
                           + [f"{w}.csv" for w in workloads])
    assert not filecmp.dircmp(dated, latest).diff_files and sorted(p.name for p in latest.iterdir()) == names
    assert [p.name for p in dated.parent.iterdir() if p.name.startswith(".")] == []


def test_data_docs_are_built_from_the_runs_validations_and_linked(flow_run):
    """GX builds its Data Docs site from this run's validations: an index linking one page per source that landed,
    each under its suite and run, published with the reports and linked from index.md."""
    from flows import data_docs

    docs = flow_run.reports / "data-docs"
    landed = sorted(load.source_id for load in flow_run.loads if load.status == "landed")
    index = (docs / "index.html").read_text()
    for source_id in landed:
        page = data_docs.page_of(docs, source_id)
        assert f"/{flow_run.run_id}/" in page.as_posix()  # the run's own results, nothing older
        assert page.relative_to(docs).as_posix() in index
    # aws_pricing quarantined its $0.00 Capacity Block row: its page shows the failed expectation and the row
    import re

    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", data_docs.page_of(docs, "aws_pricing").read_text()))
    assert "Status: Failed" in text and "Unsuccessful Expectations 1 " in text
    assert ('If term_type=="OnDemand" and unit=="Hrs" , then values must be greater than 0.0 . '
            "1 unexpected values found.") in text
    # each page links its suite's page, which the site builds too
    assert (docs / "expectations" / "aws_pricing.html").exists()
    assert sorted(p.name for p in docs.glob("validations/*/*/*/*.html")) == sorted(f"{s}.html" for s in landed)
    assert "[data-docs/index.html](data-docs/index.html)" in (flow_run.reports / "index.md").read_text()
    dated_and_latest = filecmp.dircmp(docs, flow_run.reports.parent / "latest" / "data-docs")
    assert dated_and_latest.left_only == dated_and_latest.right_only == dated_and_latest.diff_files == []
    assert sum(f.stat().st_size for f in docs.rglob("*") if f.is_file()) < 2_000_000  # GX's unused static pruned


def test_every_link_of_the_data_docs_resolves_in_its_own_folder_and_in_the_site_of_a_run_that_reuses_it(
        flow_run, tmp_path):
    """A published data-docs folder is whole, opened from disk: each relative href and src of its pages is a file in
    it. GX's validation pages pointed their favicon one folder too shallow (validations/static/...), and the pages a
    run keeps of the sources it reused linked their suite's page (expectations/<suite>.html), which only the site of
    the run that validated them had. Here the session's run (2026-11-30, published dated and latest), then the sites
    of two runs of 2026-12-01 on those reports: one that reused every source, one that validated all but
    aws_pricing (the 11-30 site less aws_pricing's pages stands for GX's site of what it validated). Whole runs:
    test_every_link_of_the_data_docs_resolves_after_a_whole_run_that_reuses_every_validation."""
    from builders import favicon_links, site_links

    from flows import data_docs

    reports, cold = flow_run.reports.parent, flow_run.reports / "data-docs"
    reused = [(load.source_id, flow_run.run_id) for load in flow_run.loads if load.status == "landed"]
    all_reused = tmp_path / "all-reused" / "data-docs"
    data_docs.write_reused_index(all_reused, "run-2", reused, reports)
    some_reused = tmp_path / "some-reused" / "data-docs"
    shutil.copytree(cold, some_reused)
    shutil.rmtree(some_reused / "validations" / "aws_pricing")
    (some_reused / "expectations" / "aws_pricing.html").unlink()
    data_docs.write_reused_page(some_reused, "run-3", [("aws_pricing", flow_run.run_id)], reports)
    for site in (cold, reports / "latest" / "data-docs", all_reused, some_reused):
        links, unresolved = site_links(site)
        assert unresolved == [] and links > 2 * len(reused), site
        # the favicon GX publishes in each site, pointed at from where the pages are, not left out
        assert favicon_links(site) == {"../../../../static/images/favicon.ico"}, site

    def files(site):
        return {path.relative_to(site).as_posix() for path in site.rglob("*") if path.is_file()}

    # the reusing run's site: the validating run's pages, the suites' pages and the favicon, its own index and list
    assert files(all_reused) == files(cold) | {data_docs.REUSED_PAGE}
    assert files(some_reused) == files(cold) | {data_docs.REUSED_PAGE}


@pytest.mark.slow  # a second whole run (make test-slow, CI)
def test_every_link_of_the_data_docs_resolves_after_a_whole_run_that_reuses_every_validation(flow_run, tmp_path):
    """The session's run (2026-11-30), then a run of 2026-12-01 on the same inputs into the same reports folder: it
    validates nothing and keeps the 11-30 pages; each published data-docs folder (both dates and latest) is whole."""
    from builders import favicon_links, site_links

    from flows.nightly import nightly

    reports = tmp_path / "reports"
    shutil.copytree(flow_run.reports.parent, reports)
    (tmp_path / "warehouse").mkdir()
    shutil.copy2(flow_run.warehouse, tmp_path / "warehouse" / "hweval.duckdb")
    second = nightly(as_of=AS_OF + dt.timedelta(days=1), catalog_dir=str(CATALOGS), run_id="second-run",
                     warehouse_file=str(tmp_path / "warehouse" / "hweval.duckdb"), reports_dir=str(reports))
    assert {load.reused_from for load in second.loads if load.status == "landed"} == {flow_run.run_id}
    for folder in (AS_OF.isoformat(), second.reports.name, "latest"):
        links, unresolved = site_links(reports / folder / "data-docs")
        assert unresolved == [] and links > 0, folder
        assert favicon_links(reports / folder / "data-docs") == {"../../../../static/images/favicon.ico"}, folder
    assert (reports / "latest" / "data-docs" / "reused.html").is_file()


@pytest.mark.parametrize("page", ["index.md", "llama2-70b-lora-finetune.md", "gpt3-175b-pretrain.md",
                                  "llama2-70b-batch.md", "llama2-70b-chat.md", "llama31-8b-pretrain-1t.md",
                                  "llama31-70b-pretrain-15t.md", "llama31-8b-chat-small.md",
                                  "llama31-8b-chat-large.md", "llama31-405b-chat.md", "offers.md", "estimates.md"])
def test_golden_report(flow_run, page):
    """A change in report output shows as a reviewable diff; regenerate with UPDATE_GOLDEN=1."""
    produced = (flow_run.reports / page).read_text()
    golden = GOLDEN / page
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(produced)
    assert produced == golden.read_text()


def test_the_readme_chart_is_the_runs_chart(flow_run):
    """README "What comes out" shows a chart of the embedded snapshot; regenerate with UPDATE_GOLDEN=1."""
    name = "charts/gpt3-175b-pretrain-outcome-vs-chip-hour.png"
    assert f"](tests/golden/{name})" in (GOLDEN.parent.parent / "README.md").read_text()
    produced = (flow_run.reports / name).read_bytes()
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(produced)
    # the charts are drawn without a version or a date in the file: the same data gives the same bytes
    assert produced == golden.read_bytes()
    assert f"![gpt3-175b-pretrain: USD per completed run against USD per chip-hour, 52 candidates]({name})" in (
        flow_run.reports / "gpt3-175b-pretrain.md").read_text()


def test_warehouse_file_is_readable_by_duckdb_1x(flow_run):
    """Storage version 64 in the file header is what DuckDB 0.10 and every 1.x release read."""
    import struct

    header = flow_run.warehouse.read_bytes()[:20]
    assert header[8:12] == b"DUCK"
    assert struct.unpack("<Q", header[12:20]) == (64,)


def test_small_chat_ranks_a_one_chip_instance_above_8_chip_instances_by_utilization(flow_run):
    rows = query(flow_run, "select * from marts.rankings where workload_id = 'llama31-8b-chat-small' "
                           "order by outcome_rank")
    best_one_chip = min(r["outcome_rank"] for r in rows if r["accelerator_count"] == 1)
    best_eight_chip = min(r["outcome_rank"] for r in rows if r["accelerator_count"] == 8)
    assert best_one_chip == 1 and best_eight_chip > best_one_chip
    page = (flow_run.reports / "llama31-8b-chat-small.md").read_text()
    assert "run below 25% utilization: for this traffic their instances are mostly idle." in page
    # the one-chip offer against the best 8-GPU instance, explained by utilization
    one_chip = next(r for r in rows if r["accelerator_count"] == 1)
    eight_gpu = next(r for r in rows if r["accelerator_count"] == 8 and r["family"] == "gpu")
    assert eight_gpu["utilization"] < one_chip["utilization"]
    assert f"The best one-chip offer, **{one_chip['cloud']} {one_chip['instance_type']}**" in page


def test_405b_report_lists_the_offers_that_cannot_hold_the_model(flow_run):
    page = (flow_run.reports / "llama31-405b-chat.md").read_text()
    excluded = page.split("## Excluded", 1)[1]
    assert ("| 811 GB of bf16 weights + KV cache need 12 chips of 80 GB (90% usable); p5.48xlarge has 8 | "
            "aws p5.48xlarge eu-north-1 on_demand (bf16), aws p5.48xlarge us-east-1 on_demand (bf16) |") in excluded
    # a latency-bound service does not buy spot: those offers are listed with that reason, not ranked
    assert ("| the workload does not buy spot capacity (pricing_terms in workloads.yaml: on_demand, capacity_block, "
            "private, owned, reserved) | ") in excluded
    ranked = page.split("## Full ranking", 1)[1].split("## Excluded", 1)[0]
    assert "| aws p5.48xlarge | h100-sxm-80gb x 8 | aws / us-east-1 | on_demand | 6.880 |" in ranked  # fp8 fits


def test_every_family_appears_where_it_can_run_the_workload(flow_run):
    families = {(r["workload_id"], r["family"], r["basis"]) for r in query(
        flow_run, "select distinct workload_id, family, basis from marts.rankings")}
    for workload in ("llama31-8b-chat-small", "llama31-8b-chat-large", "llama2-70b-batch", "llama2-70b-chat"):
        assert {f for w, f, _ in families if w == workload} == {"gpu", "tpu", "trainium", "inferentia", "cpu"}
    # Inferentia does not train; every other family appears in the training ranking that estimates the rest
    assert {f for w, f, _ in families if w == "gpt3-175b-pretrain"} == {"gpu", "tpu", "trainium", "cpu"}
    # with a 720 h deadline, Trainium1 (783 h on 256 chips) is excluded, with the reason; Trainium2 (trn2.48xlarge,
    # priced by its spot price only) finishes in 223 h and is ranked
    assert {f for w, f, _ in families if w == "llama31-8b-pretrain-1t"} == {"gpu", "tpu", "trainium"}
    assert {r["accelerator_id"] for r in query(
        flow_run, "select accelerator_id from marts.rankings where workload_id = 'llama31-8b-pretrain-1t' "
                  "and family = 'trainium'")} == {"trainium2"}
    reasons = {r["exclusion_reason"] for r in query(
        flow_run, "select exclusion_reason from marts.excluded_candidates where workload_id = 'llama31-8b-pretrain-1t' "
                  "and accelerator_id = 'trainium1' and instance_type = 'trn1.32xlarge'")}
    assert reasons == {"needs 783 h on 256 chips; the deadline is 720 h"}
    # no TPU, Trainium or Inferentia LLM result in MLPerf: their inference figures are estimates, and say so
    assert {b for w, f, b in families if f in ("tpu", "trainium", "inferentia") and w == "llama2-70b-batch"} == {
        "estimated"}
    assert "No benchmark of this task exists for trainium: its figures are estimates." in (
        flow_run.reports / "llama2-70b-batch.md").read_text()


def test_no_offer_is_silently_missing_from_a_workload(flow_run):
    """Every offer x precision a workload could use is either ranked or excluded with a reason."""
    missing = query(flow_run, """
        with offers as (select offer_id, accelerator_id from marts.offers where as_of = ?),
        expected as (
            select w.workload_id, o.offer_id from catalog.workloads as w cross join offers as o
        ),
        seen as (
            select workload_id, offer_id from marts.rankings where as_of = ?
            union select workload_id, offer_id from marts.excluded_candidates where as_of = ?
        )
        select * from expected except select * from seen
    """, [AS_OF, AS_OF, AS_OF])
    assert missing == []


def test_every_estimate_meets_its_tpot_slo_with_prefill_counted(flow_run):
    late = query(flow_run, """
        select e.workload_id, e.offer_id, e.precision, e.tpot_ms, w.slo_tpot_ms
        from intermediate.int_inference_estimates_computed as e
        inner join catalog.workloads as w using (workload_id)
        where e.exclusion_reason is null and w.slo_tpot_ms is not null and e.tpot_ms > w.slo_tpot_ms
    """)
    assert late == []


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_run_can_read_another_file_for_a_source(prefect_server, tmp_path):
    """`hweval run --source ID=PATH`: e.g. a whole MLPerf round instead of the snapshot's rows."""
    import json as json_module

    from builders import mlperf_inference_result

    from flows.nightly import nightly

    round_file = tmp_path / "summary_results.json"
    round_file.write_text(json_module.dumps([
        mlperf_inference_result("r1", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 25000.0),
        mlperf_inference_result("r2", "Unknown Accelerator 9000", "llama2-70b-99", "Offline", 1.0),
    ]))
    result = nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w.duckdb"),
                     reports_dir=str(tmp_path / "reports"), run_id="override",
                     source_files={"mlperf_inference_snapshot": [f"{round_file}@2024-08-28"]})
    [load] = [load for load in result.loads if load.source_id == "mlperf_inference_snapshot"]
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (2, 1, 1)
    row = ranking_row(result, "llama2-70b-batch", "aws:us-east-1:p5.48xlarge:on_demand", precision="fp16")
    # the report now uses the given file: 55.04 / (25,000 x 3600) x 1e6 = 0.6116 USD per million output tokens
    assert round(row["outcome_value"], 4) == 0.6116
    assert row["benchmark_as_of"] == dt.date(2024, 8, 28)


def test_every_ranked_row_but_a_spec_estimate_names_its_benchmark_date(flow_run):
    """A calibrated row carries the newest as-of date of the measurements its factor was fitted from, as a measured
    or scaled row carries its result's; only an estimate from specs alone (declared defaults) has none."""
    undated = query(flow_run, "select basis, count(*) as n from marts.rankings "
                              "where benchmark_as_of is null group by basis")
    assert [r["basis"] for r in undated] == ["estimated"], undated
    # h100-sxm-80gb's training factor is fitted from 2 results: MLPerf Training v4.0 (summary as of 2024-06-12) and
    # published_training.csv row 6 (as of 2026-11-01): its calibrated rows name the newer, max(2024-06-12,
    # 2026-11-01) = 2026-11-01, and say it is the newest
    [fit] = query(flow_run, "select measurement_refs from marts.estimate_calibration "
                            "where phase = 'training' and accelerator_id = 'h100-sxm-80gb'")
    assert "mlperf_training" in fit["measurement_refs"] and "published_training.csv" in fit["measurement_refs"]
    rows = query(flow_run, "select distinct benchmark_as_of, benchmark_label like '%h100-sxm-80gb as of 2026-11-01 "
                           "(newest)%' as says from marts.rankings where basis = 'calibrated' and workload_kind = "
                           "'training' and accelerator_id = 'h100-sxm-80gb'")
    assert rows == [{"benchmark_as_of": dt.date(2026, 11, 1), "says": True}]


def test_an_unknown_source_id_on_the_command_line(capsys):
    from flows.cli import main

    assert main(["run", "--source", "nonsense"]) == 2
    assert "expected SOURCE_ID=PATH" in capsys.readouterr().err
    from flows.catalog import CatalogError, load_catalog
    from flows.pipeline import with_source_files

    with pytest.raises(CatalogError, match=r"no source 'mlperf_nope' in sources.yaml"):
        with_source_files(load_catalog(CATALOGS), {"mlperf_nope": [__file__]}, AS_OF)
    with pytest.raises(CatalogError, match=r"'28-08-2024' is not a date"):
        with_source_files(load_catalog(CATALOGS), {"mlperf_inference_snapshot": [f"{__file__}@28-08-2024"]}, AS_OF)


def test_chat_uses_server_results_and_batch_offline_and_each_names_round_and_system(flow_run):
    chat = query(flow_run, "select benchmark_label from marts.rankings where workload_id = 'llama2-70b-chat' "
                           "and basis = 'measured'")
    batch = query(flow_run, "select benchmark_label from marts.rankings where workload_id = 'llama2-70b-batch' "
                            "and basis = 'measured'")
    assert chat and all(" Server: " in r["benchmark_label"] for r in chat)
    assert batch and all(" Offline: " in r["benchmark_label"] for r in batch)
    page = (flow_run.reports / "llama2-70b-chat.md").read_text()
    assert "MLPerf Inference v4.1 llama2-70b-99 Server: Supermicro" in page
    assert "derived from MLPerf, not an official MLPerf result" in page
