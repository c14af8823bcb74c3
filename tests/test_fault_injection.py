"""Fault injection: a source raising mid-fetch, a source returning garbage or far fewer rows, a crash in the model
build (a run killed between landing and publishing), disk full while writing reports, a failure moving them into
place or writing reports/latest.json, a kill before each file operation of the publish, a duplicate re-run, an
analyst connection held open. After each, the warehouse and reports/latest equal the
last good state (compared by digest, not assumed) or, where the run goes on, every row is accounted for:
rows in = landed + quarantined, and a stale source runs on its last good rows."""

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path

import duckdb
import pytest
from conftest import AS_OF, CATALOGS, RUN_ID
from test_flow import query

from flows import publish_journal, publishing, warehouse

# whole runs in their own processes, killed or overlapping: `make test-slow` and CI run them (see README)
pytestmark = pytest.mark.slow


def assert_rows_accounted(result) -> None:
    """Per source of the run: rows in = landed + quarantined, and raw holds exactly the landed rows (under the run
    that landed them: this one, or the one whose rows an unchanged batch reuses)."""
    loads = query(result, "select source_id, landed_table, rows_in, rows_landed, rows_quarantined, status, "
                          "used_run_id, reused_from from ops.source_loads where run_id = ?", [result.run_id])
    assert loads
    for load in loads:
        assert load["rows_in"] == load["rows_landed"] + load["rows_quarantined"], load
        landed_by = load["used_run_id"] if load["status"] == "landed" else result.run_id
        assert (landed_by != result.run_id) == bool(load["reused_from"]), load  # reused: another run landed them
        landed = query(result, f"select count(*) as n from {load['landed_table']} where run_id = ? and source_id = ?",
                       [landed_by, load["source_id"]])
        assert landed == [{"n": load["rows_landed"]}], load
        quarantined = query(result, "select count(distinct row_no) as n from ops.quarantine where run_id = ? "
                                    "and source_id = ?", [result.run_id, load["source_id"]])
        assert quarantined == [{"n": load["rows_quarantined"]}], load


def digest_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def last_good(flow_run, tmp_path):
    """A copy of a good run's warehouse and reports for a failing run to be pointed at."""
    state = tmp_path / "state"
    shutil.copytree(flow_run.warehouse.parent, state / "warehouse")
    shutil.copytree(flow_run.reports.parent, state / "reports")
    return state


def run_against(last_good, catalog_dir, as_of=dt.date(2026, 12, 1), run_id="second-run", **kwargs):
    from flows.nightly import nightly

    return nightly(as_of=as_of, catalog_dir=str(catalog_dir),
                   warehouse_file=str(last_good / "warehouse" / "hweval.duckdb"),
                   reports_dir=str(last_good / "reports"), run_id=run_id, **kwargs)


def published(root: Path) -> dict[str, str]:
    """The published state: the warehouse file and every report folder, without a run's private leftovers."""
    return {name: digest for name, digest in digest_tree(root).items()
            if not any(part.startswith(".") for part in Path(name).parts)}


def first_training_row_with(monkeypatch, **values) -> None:
    """The MLPerf training source's first row, as read, with `values` written over it (a type the row cannot hold)."""
    from flows.sources import mlperf_training

    real_read_file = mlperf_training.read_file

    def changed(path, *args, **kwargs):
        rows = real_read_file(path, *args, **kwargs)
        return [row | values if i == 0 else row for i, row in enumerate(rows)]

    monkeypatch.setattr(mlperf_training, "read_file", changed)


def killed_run(last_good, patch: str) -> int:
    """Run the nightly flow in a separate process, against `last_good`, with `patch` (Python, run first) killing it
    with SIGKILL somewhere; return its pid once it has died of the kill."""
    from prefect.settings import PREFECT_API_URL

    script = f"""import os, signal, datetime as dt
{patch}
from flows.nightly import nightly
nightly(as_of=dt.date(2026, 12, 1), catalog_dir={str(CATALOGS)!r},
        warehouse_file={str(last_good / "warehouse" / "hweval.duckdb")!r},
        reports_dir={str(last_good / "reports")!r}, run_id="killed")
"""
    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value())
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == -9, stderr[-2000:]  # killed, not a clean failure
    return proc.pid


def test_a_source_returning_garbage_is_stale_and_the_run_goes_on_with_its_last_good_data(last_good, catalog_copy):
    (catalog_copy / "snapshot/azure_retail/eastus.page-2.json").write_text('{"Items": [{"armSkuName": ')
    result = run_against(last_good, catalog_copy)
    [azure] = [load for load in result.loads if load.source_id == "azure_retail"]
    # the last good Azure data is the golden run's (as of 2026-11-30); the other sources landed as usual
    assert (azure.status, azure.stale_since) == ("stale", AS_OF)
    assert azure.error.startswith("SourceFormatError: ") and "eastus.page-2.json: not valid JSON at line 1" in azure.error
    assert {load.source_id for load in result.loads if load.status == "landed"} == {
        "aws_pricing", "aws_spot", "gcp_billing", "mlperf_inference_snapshot", "mlperf_training_snapshot",
        "published_benchmarks", "aws_instance_types", "azure_skus", "gcp_machine_types", "bedrock_pricing"}
    offers = query(result, "select as_of, offer_id, usd_per_hour, price_as_of from marts.offers "
                           "where cloud = 'azure' order by as_of, offer_id")
    before = [(o["offer_id"], o["usd_per_hour"], o["price_as_of"]) for o in offers if o["as_of"] == AS_OF]
    after = [(o["offer_id"], o["usd_per_hour"], o["price_as_of"]) for o in offers if o["as_of"] == dt.date(2026, 12, 1)]
    # Linux on-demand and spot of the two H100 sizes and the two CPU sizes, on-demand of GB200 v6, H200 v5, MI300X v5
    assert after == before and len(after) == 11
    [run] = query(result, "select status, stale_sources from ops.runs where run_id = 'second-run'")
    assert run["status"] == "succeeded with stale sources: azure_retail"
    assert run["stale_sources"].startswith("azure_retail (last loaded by the run of 2026-11-30): SourceFormatError: ")
    index = (result.reports / "index.md").read_text()
    assert "| azure_retail | azure_retail | stale, last loaded by the run of 2026-11-30 |" in index
    assert_rows_accounted(result)


def test_a_source_that_never_landed_is_stale_without_data(prefect_server, tmp_path, catalog_copy):
    from flows.nightly import StalePastLimit, nightly

    (catalog_copy / "snapshot/gcp_billing/compute-engine.skus.page-1.json").write_bytes(b"\xff not json")
    with pytest.raises(StalePastLimit) as failed:  # never landed: past any limit, reports published all the same
        nightly(as_of=AS_OF, catalog_dir=str(catalog_copy), warehouse_file=str(tmp_path / "w.duckdb"),
                reports_dir=str(tmp_path / "reports"), run_id="first")
    result = failed.value.result
    assert [line.split(" (limit")[0] for line in result.stale_past_limit] == ["gcp_billing has never landed"]
    [gcp] = [load for load in result.loads if load.source_id == "gcp_billing"]
    assert (gcp.status, gcp.stale_since) == ("stale", None)
    assert query(result, "select count(*) as n from marts.offers where cloud = 'gcp'") == [{"n": 0}]
    assert "| gcp_billing | gcp_billing | stale, never landed |" in (result.reports / "index.md").read_text()


def test_crash_in_the_model_build_leaves_the_last_good_state(last_good, monkeypatch):
    before = digest_tree(last_good)
    from flows import transform

    def crash(con, *args, **kwargs):
        con.execute("create or replace table staging.half_built as select 1 as x")
        raise RuntimeError("injected crash during the model build")

    monkeypatch.setattr(transform, "build_models", crash)
    with pytest.raises(RuntimeError, match="injected crash"):
        run_against(last_good, CATALOGS)
    assert digest_tree(last_good) == before


def test_a_crash_in_the_build_waits_for_the_data_docs_being_built_before_removing_what_it_rendered(
        last_good, catalog_copy, monkeypatch):
    """The site the land step began (data_docs.begin_site: GX's process, still busy) is waited for before the failed
    run's rendering is removed (abandon_site, then discard_rendering): removed first, it would be written afterwards,
    beside the reports, with nothing left to remove it."""
    import time

    from flows import data_docs, gx_process, transform

    changed = catalog_copy / "snapshot/azure_skus/eastus.json"
    changed.write_text(changed.read_text() + "\n")  # the same rows in another file: validated again, a site begun
    real_begin_site = data_docs.begin_site
    begun: list[Path] = []

    def begin_site_while_busy(batches, site_dir, *args, **kwargs):
        gx_process._submit(time.sleep, 1.0)  # GX's process busy for a second: the site is built after the crash
        begun.append(site_dir)
        return real_begin_site(batches, site_dir, *args, **kwargs)

    def crash(con, *args, **kwargs):
        raise RuntimeError("injected crash during the model build")

    monkeypatch.setattr(data_docs, "begin_site", begin_site_while_busy)
    monkeypatch.setattr(transform, "build_models", crash)
    before = digest_tree(last_good)
    with pytest.raises(RuntimeError, match="injected crash"):
        run_against(last_good, catalog_copy)
    gx_process._submit(int, 0).result()  # GX's process idle again: whatever it was asked is done
    assert len(begun) == 1 and begun[0].is_relative_to(last_good / "reports") and not begun[0].exists()
    assert digest_tree(last_good) == before


def test_disk_full_while_writing_reports_leaves_the_last_good_state(last_good, monkeypatch):
    before = digest_tree(last_good)
    real_write_text = Path.write_text
    written = []

    def full_after_one_page(self, *args, **kwargs):
        if ".rendering" in str(self):
            written.append(self)
            if len(written) == 2:  # the first page is already in the rendering folder
                raise OSError(28, "No space left on device")
        return real_write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_after_one_page)
    with pytest.raises(OSError, match="No space left on device"):
        run_against(last_good, CATALOGS)
    assert len(written) == 2
    assert digest_tree(last_good) == before


def test_an_open_analyst_connection_neither_blocks_the_run_nor_sees_it_half_built(last_good):
    warehouse_file = last_good / "warehouse" / "hweval.duckdb"
    analyst = duckdb.connect(str(warehouse_file), read_only=True)
    try:
        before = analyst.execute("select count(*) from ops.runs").fetchall()
        result = run_against(last_good, CATALOGS)
        # the analyst's handle still reads the state it opened, whole
        assert analyst.execute("select count(*) from ops.runs").fetchall() == before
    finally:
        analyst.close()
    assert result.warehouse == warehouse_file
    fresh = duckdb.connect(str(warehouse_file), read_only=True)
    try:
        runs = fresh.execute("select run_id from ops.runs order by as_of").fetchall()
    finally:
        fresh.close()
    assert runs == [("2026-11-30-golden",), ("second-run",)]


def test_failure_moving_reports_into_place_puts_the_previous_warehouse_back(last_good, monkeypatch):
    before = digest_tree(last_good)

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publishing, "publish_reports", fail)
    with pytest.raises(OSError, match="No space left on device"):
        run_against(last_good, CATALOGS)
    assert digest_tree(last_good) == before


def test_a_backfill_publishes_its_date_but_leaves_latest_on_the_newest(last_good):
    """A backfill as far back as year 1, through `hweval run`: its date is published, reports/latest and what
    reports/latest.json names as latest stay on the newest run, and the command says so."""
    from test_hostile_runs import hweval

    latest_before = digest_tree(last_good / "reports" / "latest")
    manifest_before = publish_journal.read_manifest(last_good / "reports")
    run = hweval(["run", "--as-of", "0001-01-01", "--catalog", str(CATALOGS),
                  "--warehouse", str(last_good / "warehouse" / "hweval.duckdb"),
                  "--reports", str(last_good / "reports")], cwd=last_good)
    assert run.status == 0, run.err[-3000:]
    assert (last_good / "reports" / "0001-01-01" / "index.md").read_text().startswith(
        "# hweval report, as of 0001-01-01")
    assert digest_tree(last_good / "reports" / "latest") == latest_before
    assert run.out.endswith(f"reports:   {last_good / 'reports' / '0001-01-01'}/index.md "
                            "(a backfill: reports/latest keeps a newer date)\n")
    manifest = publish_journal.read_manifest(last_good / "reports")
    assert (manifest["as_of"], manifest["latest_as_of"], manifest["latest_run_id"]) == (
        "0001-01-01", manifest_before["latest_as_of"], manifest_before["latest_run_id"])


def test_re_running_the_same_date_with_a_broken_source_keeps_its_earlier_rows(last_good, catalog_copy):
    (catalog_copy / "snapshot/azure_retail/eastus.page-1.json").write_text("[]")
    result = run_against(last_good, catalog_copy, as_of=AS_OF, run_id="rerun")
    [azure] = [load for load in result.loads if load.source_id == "azure_retail"]
    assert (azure.status, azure.stale_since) == ("stale", AS_OF)
    # the golden run's Azure rows of the same as-of date were kept, and the re-run reads them
    assert query(result, "select distinct run_id from raw.azure_retail") == [{"run_id": RUN_ID}]
    assert query(result, "select count(*) as n from marts.offers where cloud = 'azure'") == [{"n": 11}]
    assert query(result, "select count(distinct run_id) as n from raw.aws_pricing") == [{"n": 1}]


def test_a_source_with_far_fewer_rows_than_last_time_is_stale(last_good, catalog_copy):
    # keep 1 of the AWS pages' 23 rows: 22 of 23 gone is more than the 50% drop sources.yaml allows
    page = catalog_copy / "snapshot/aws_pricing/us-east-1.page-1.json"
    data = json.loads(page.read_text())
    data["PriceList"] = data["PriceList"][:1]
    page.write_text(json.dumps(data))
    for other in ("us-east-1.page-2.json", "eu-north-1.page-1.json", "us-west-2.page-1.json", "us-east-1.cpu.page-1.json"):
        (catalog_copy / "snapshot/aws_pricing" / other).write_text(json.dumps({"FormatVersion": "aws_v1",
                                                                                "PriceList": []}))
    result = run_against(last_good, catalog_copy)
    [aws] = [load for load in result.loads if load.source_id == "aws_pricing"]
    assert (aws.status, aws.stale_since) == ("stale", AS_OF)
    assert_rows_accounted(result)
    assert aws.error == ("1 rows, 96% fewer than the last good run's 23 (more than the 50% drop sources.yaml "
                         "allows; if the change is real, `hweval run --accept-changes aws_pricing` lands it)")
    # the one row read is kept in quarantine with the check that rejected the batch
    assert query(result, "select expectation, expectation_type from ops.quarantine where run_id = 'second-run' "
                         "and source_id = 'aws_pricing'") == [{"expectation": "row_count_drop",
                                                               "expectation_type": "table_level"}]
    # the run still prices AWS offers, from the last good rows
    assert query(result, "select count(*) as n from marts.offers where cloud = 'aws' and as_of = ?",
                 [dt.date(2026, 12, 1)]) == [{"n": 36}]  # 21 on-demand (17 + 4 CPU) from the last good rows + 15 spot


def test_a_source_raising_mid_fetch_is_retried_and_lands_once(last_good, monkeypatch):
    """A connection reset while reading the second spot file: the fetch task is retried and lands every row once."""
    from flows.sources import aws_spot

    real_read_file, calls = aws_spot.read_file, []

    def reset_once(path, *args, **kwargs):
        calls.append(path.name)
        if path.name == "us-east-2.json" and calls.count("us-east-2.json") == 1:
            raise ConnectionResetError(104, "Connection reset by peer")
        return real_read_file(path, *args, **kwargs)

    monkeypatch.setattr(aws_spot, "read_file", reset_once)
    result = run_against(last_good, CATALOGS)
    assert calls == ["us-east-1.json", "us-east-2.json", "us-east-1.json", "us-east-2.json", "eu-north-1.json"]
    [spot] = [load for load in result.loads if load.source_id == "aws_spot"]
    assert (spot.status, spot.rows_in, spot.rows_landed) == ("landed", 22, 22)  # not 22 + the 19 of the first try
    assert_rows_accounted(result)


def test_a_source_failing_mid_fetch_writes_none_of_its_rows_and_is_stale(last_good, monkeypatch):
    from flows.sources import aws_spot
    from flows.sources._common import LiveSourceError

    real_read_file = aws_spot.read_file

    def fail_on_second_file(path, *args, **kwargs):
        if path.name == "us-east-2.json":
            raise LiveSourceError("ec2.describe_spot_price_history us-east-2: access denied (UnauthorizedOperation)")
        return real_read_file(path, *args, **kwargs)

    monkeypatch.setattr(aws_spot, "read_file", fail_on_second_file)
    result = run_against(last_good, CATALOGS)
    [spot] = [load for load in result.loads if load.source_id == "aws_spot"]
    assert (spot.status, spot.stale_since) == ("stale", AS_OF)
    assert "access denied (UnauthorizedOperation)" in spot.error
    # none of the first file's rows were written by the failed fetch; the run reads the golden run's 22 rows
    assert query(result, "select count(*) as n from raw.aws_spot where run_id = 'second-run'") == [{"n": 0}]
    assert query(result, "select count(*) as n from marts.offers where pricing_term = 'spot' and cloud = 'aws' "
                         "and as_of = ?", [dt.date(2026, 12, 1)]) == [{"n": 15}]
    assert_rows_accounted(result)


def test_a_duplicate_re_run_replaces_the_date_and_leaves_the_same_state(last_good):
    """Re-running the same as-of date on the same inputs: the date's rows are replaced, never duplicated, and the
    warehouse and reports equal what the first run left (only the run id differs)."""

    def state():
        con = duckdb.connect(str(last_good / "warehouse" / "hweval.duckdb"), read_only=True)
        try:
            raw = con.execute("select source_id, count(*) from raw.aws_pricing group by all union all "
                              "select source_id, count(*) from raw.mlperf_inference group by all order by 1").fetchall()
            offers = con.execute("select * exclude (run_id) from marts.offers order by offer_id").fetchall()
            rankings = con.execute("select * exclude (run_id) from marts.rankings order by candidate_id").fetchall()
            runs = con.execute("select count(*) from ops.runs").fetchall()
        finally:
            con.close()
        return raw, offers, rankings, runs

    before = state()
    pages_before = digest_tree(last_good / "reports" / "latest")
    index_before = (last_good / "reports" / "latest" / "index.md").read_text()
    text_before = {p.name: p.read_text() for p in (last_good / "reports" / "latest").iterdir()
                   if p.suffix in (".csv", ".md") and p.name != "index.md"}
    result = run_against(last_good, CATALOGS, as_of=AS_OF, run_id="rerun")
    assert state() == before
    assert_rows_accounted(result)
    pages_after = digest_tree(last_good / "reports" / "latest")
    # the index names the run; the Data Docs pages sit under the run's id and validation time
    pages_before = {name: d for name, d in pages_before.items() if not name.startswith("data-docs/")}
    pages_after = {name: d for name, d in pages_after.items() if not name.startswith("data-docs/")}
    assert pages_after.keys() == pages_before.keys()
    # every page names the run (each is also published on its own), and the rankings as CSV carry its id: nothing
    # else differs
    changed = {name for name in pages_before if pages_before[name] != pages_after[name]}
    assert changed == {name for name in pages_before if name.endswith((".md", ".csv"))}
    pages = {p.name: p.read_text() for p in (last_good / "reports" / "latest").glob("*.md") if p.name != "index.md"}
    assert pages and all(f"_Run `rerun`, as of {AS_OF}._" in text for text in pages.values())
    for name in changed - {"index.md"}:
        assert (last_good / "reports" / "latest" / name).read_text() == text_before[name].replace(RUN_ID, "rerun")
    index_after = (last_good / "reports" / "latest" / "index.md").read_text()
    expected = index_before.replace(RUN_ID, "rerun")
    # an unchanged re-run validates nothing: its Data Docs line names the sources it reused and the run that
    # validated them (the same date's Data Docs are kept)
    docs_line = next(line for line in expected.splitlines() if line.startswith("The Great Expectations Data Docs"))
    reused_line = next(line for line in index_after.splitlines() if line.startswith("The Great Expectations Data Docs"))
    assert f"aws_pricing (run {RUN_ID})" in reused_line and "Not validated again" in reused_line
    assert index_after == expected.replace(docs_line, reused_line)
    # the reused sources' validation pages, kept from the replaced Data Docs of the run that validated them
    docs = last_good / "reports" / "latest" / "data-docs"
    listed = (docs / "reused.html").read_text()
    links = re.findall(r'href="([^"]+)"', listed)
    assert "no longer published" not in listed and len(links) == reused_line.count("(run ")
    assert all((docs / link).is_file() and f"/{RUN_ID}/" in link for link in links), links


def test_a_run_killed_between_landing_and_publishing_leaves_the_last_good_state(last_good, prefect_server):
    """A real SIGKILL in a separate process, in the middle of the model build: nothing published changes, and the
    next run clears what the killed one left behind."""
    before = published(last_good)
    pid = killed_run(last_good, """
from flows import transform

def killed(con, *args, **kwargs):
    con.execute("create or replace table staging.half_built as select 1 as x")
    os.kill(os.getpid(), signal.SIGKILL)

transform.build_models = killed
""")
    leftovers = [p.name for p in (last_good / "warehouse").iterdir()  # its lock is the kernel's to release
                 if p.name.startswith(".") and not p.name.endswith(".lock") and not p.name.endswith(".runs")]
    assert leftovers and all(f"-{pid}" in name for name in leftovers)  # the killed run's private copy
    # and its run file, for the next run to find (flows/run_files.py)
    assert [f"-{pid}-" in p.name for p in (last_good / "warehouse" / ".hweval.duckdb.runs").iterdir()] == [True]
    assert published(last_good) == before
    run_against(last_good, CATALOGS)
    assert [p.name for p in (last_good / "warehouse").iterdir() if p.name.startswith(".")] == []
    assert [p.name for p in (last_good / "reports").iterdir() if p.name.startswith(".")] == []


def test_disk_full_while_landing_fails_the_run_and_leaves_the_last_good_state(last_good, monkeypatch):

    before = digest_tree(last_good)
    real_insert, real_insert_arrow = warehouse.insert_rows, warehouse.insert_arrow

    def full_on_quarantine(con, table, rows):
        if table == "ops.quarantine" and rows:
            raise OSError(28, "No space left on device")
        return real_insert(con, table, rows)

    def full_on_quarantine_arrow(con, table, data, constants=None):  # the quarantined rows an unchanged batch reuses
        if table == "ops.quarantine" and data.num_rows:
            raise OSError(28, "No space left on device")
        return real_insert_arrow(con, table, data, constants)

    monkeypatch.setattr(warehouse, "insert_rows", full_on_quarantine)
    monkeypatch.setattr(warehouse, "insert_arrow", full_on_quarantine_arrow)
    with pytest.raises(OSError, match="No space left on device"):  # not a data problem: the run fails, whole
        run_against(last_good, CATALOGS)
    assert digest_tree(last_good) == before


def test_failure_swapping_in_latest_puts_the_dated_reports_and_the_warehouse_back(last_good, monkeypatch):

    before = digest_tree(last_good)
    real_swap_in = publishing._swap_in

    def fail_on_latest(new, target):
        if target.name == "latest":
            raise OSError(28, "No space left on device")
        return real_swap_in(new, target)

    monkeypatch.setattr(publishing, "_swap_in", fail_on_latest)
    with pytest.raises(OSError, match="No space left on device"):
        run_against(last_good, CATALOGS)
    assert digest_tree(last_good) == before  # reports/2026-12-01 was swapped in, then taken out again


def test_a_batch_the_database_rejects_makes_its_source_stale_and_the_others_land(last_good, monkeypatch):
    """A value that cannot take its column's type (here a date that is not one) fails that source, not the run."""
    first_training_row_with(monkeypatch, global_batch_size="a lot")  # typed before the suite reads it: the database
    result = run_against(last_good, CATALOGS)
    [training] = [load for load in result.loads if load.source_id == "mlperf_training_snapshot"]
    assert training.status == "stale" and "while landing" in training.error
    assert query(result, "select count(*) as n from raw.mlperf_training where run_id = 'second-run'") == [{"n": 0}]
    assert {load.status for load in result.loads if load.source_id != "mlperf_training_snapshot"} == {"landed"}
    assert_rows_accounted(result)


def test_a_same_date_batch_the_database_refuses_while_landing_keeps_that_dates_good_rows(last_good, monkeypatch):
    """The batch is typed, so only the database refuses it, inside the landing's transaction, after this date's earlier
    rows of the source were deleted: the delete is undone with the insert, the source is stale with the database's
    reason, the other sources land. (The golden run's 11 training rows, landed as RUN_ID on the same date, stay.)"""
    real_insert_arrow = warehouse.insert_arrow

    def refused(con, table, data, constants=None):
        if table == "raw.mlperf_training":
            real_insert_arrow(con, table, data, constants)  # in, then refused: the rollback has rows to undo
            raise duckdb.ConstraintException("Constraint Error: a row the database refuses")
        return real_insert_arrow(con, table, data, constants)

    monkeypatch.setattr(warehouse, "insert_arrow", refused)
    first_training_row_with(monkeypatch, framework="maxtext, rebuilt")  # changed: not the unchanged batch, reused
    result = run_against(last_good, CATALOGS, as_of=AS_OF, run_id="rerun")
    [training] = [load for load in result.loads if load.source_id == "mlperf_training_snapshot"]
    assert training.status == "stale" and training.stale_since == AS_OF
    assert training.error.startswith("ConstraintException while landing: Constraint Error: a row the database")
    assert query(result, "select run_id, count(*) as n from raw.mlperf_training group by run_id") == [
        {"run_id": RUN_ID, "n": 11}]
    assert {load.status for load in result.loads if load.source_id != "mlperf_training_snapshot"} == {"landed"}
    assert_rows_accounted(result)


def test_text_where_an_expectation_compares_numbers_makes_its_source_stale(last_good, monkeypatch):
    """Text where an expectation compares numbers: the batch is typed as its raw table before Great Expectations
    sees it, so the column is named, the source is stale, the suite is not blamed and the run goes on."""
    first_training_row_with(monkeypatch, time_to_train_minutes="twelve")
    result = run_against(last_good, CATALOGS)
    [training] = [load for load in result.loads if load.source_id == "mlperf_training_snapshot"]
    assert training.status == "stale" and "while landing" in training.error
    assert "raw.mlperf_training.time_to_train_minutes: a value is not a DOUBLE" in training.error
    assert_rows_accounted(result)


@pytest.mark.parametrize("kill_at", ["dated", "latest"])
def test_a_run_killed_in_the_middle_of_publishing_is_undone_by_the_next_run(last_good, prefect_server, kill_at):
    """SIGKILL while the report folders are renamed in (after the new warehouse is in place): the published state
    is briefly half new, and the next run's recovery puts the old warehouse and the old reports back before it
    builds, so the two always agree."""

    before = published(last_good)
    pid = killed_run(last_good, f"""
from flows import publishing

real_swap_in = publishing._swap_in

def killed(new, target):
    if target.name == {"2026-12-01" if kill_at == "dated" else "latest"!r}:
        old = target.with_name("." + target.name + ".old-" + str(os.getpid()))
        if target.exists():
            os.replace(target, old)  # half way through the swap: the target is missing
        os.kill(os.getpid(), signal.SIGKILL)
    return real_swap_in(new, target)

publishing._swap_in = killed
""")
    assert published(last_good) != before  # the new warehouse is in, the reports half moved
    actions = publish_journal.recover_killed_publish(last_good / "warehouse" / "hweval.duckdb", last_good / "reports")
    assert actions[0] == f"restored the warehouse a killed run (pid {pid}) was replacing"
    assert published(last_good) == before
    hidden = [p.name for p in (last_good / "reports").iterdir() if p.name.startswith(".") and not p.name.endswith(".lock")]
    assert all(".rendering-" in name for name in hidden)  # only what it rendered and never published ...
    run_against(last_good, CATALOGS)  # ... which the next run removes; that run publishes normally
    assert [p.name for p in (last_good / "reports").iterdir() if p.name.startswith(".")] == []
    assert (last_good / "reports" / "2026-12-01" / "index.md").exists()


def test_a_same_date_re_run_whose_batch_is_rejected_keeps_that_dates_good_rows(last_good, monkeypatch):
    """The earlier run of the same date is the last good one: its rows stay (the delete and the failed insert are
    rolled back together), the re-run reads them, and the rows it read are quarantined with the reason."""
    first_training_row_with(monkeypatch, global_batch_size="a lot")
    result = run_against(last_good, CATALOGS, as_of=AS_OF, run_id="rerun")
    [training] = [load for load in result.loads if load.source_id == "mlperf_training_snapshot"]
    assert (training.status, training.stale_since, training.rows_in, training.rows_quarantined) == (
        "stale", AS_OF, 13, 13)
    assert query(result, "select distinct run_id from raw.mlperf_training") == [{"run_id": RUN_ID}]
    assert query(result, "select count(*) as n from raw.mlperf_training") == [{"n": 11}]  # the golden run's rows
    assert query(result, "select distinct expectation from ops.quarantine where run_id = 'rerun' "
                         "and source_id = 'mlperf_training_snapshot'") == [{"expectation": "landing_rejected"}]
    assert_rows_accounted(result)
    # the measured training costs still come from those rows
    assert query(result, "select count(*) > 0 as ok from marts.training_costs where as_of = ? and basis = 'measured'",
                 [AS_OF]) == [{"ok": True}]


# Kills at every step of the publish. The publish (publishing.publish_run) runs in a forked child that SIGKILLs itself
# just before its k-th file operation, for every k; it publishes a prepared new warehouse and rendered folder (the
# golden run's, renamed `killed`), so each kill costs a fork, not a whole run.

FILE_OPERATIONS = [(os, "replace", 2), (os, "link", 2), (os, "unlink", 1), (shutil, "rmtree", 1),
                   (shutil, "copytree", 2), (Path, "write_text", 1), (Path, "unlink", 1)]  # (module, name, paths)
D1 = dt.date(2026, 12, 1)
NEW_RUN = "insert into ops.runs (run_id, as_of, started_at, status) values ('killed', ?, now(), 'succeeded')"
KILL_SCENARIOS = {  # the killed run's as-of date and how its warehouse differs from the golden run's in ops.runs
    "next day": (D1, NEW_RUN),
    "same-date re-run": (AS_OF, "update ops.runs set run_id = 'killed' where as_of = ?"),
    "backfill": (dt.date(2026, 11, 1), NEW_RUN),
    "first run": (AS_OF, "update ops.runs set run_id = 'killed' where as_of = ?"),
}


def run_of(folder: Path) -> str | None:
    """The run a published report folder names (None: no folder there)."""
    index = folder / "index.md"
    return re.search(r"^Run `([^`]+)`", index.read_text(), re.MULTILINE).group(1) if index.exists() else None


def warehouse_runs(warehouse_file: Path) -> dict[dt.date, str]:
    if not warehouse_file.exists():
        return {}
    con = duckdb.connect(str(warehouse_file), read_only=True)
    try:
        return dict(con.execute("select as_of, run_id from ops.runs").fetchall())
    finally:
        con.close()


def direct_view(root: Path) -> tuple[str | None, str | None]:
    """What a reader of the two names sees: the warehouse's newest run and the run reports/latest/ holds."""
    runs = warehouse_runs(root / "warehouse" / "hweval.duckdb")
    return (runs[max(runs)] if runs else None), run_of(root / "reports" / "latest")


def manifest_view(root: Path) -> tuple[str | None, str | None, str | None]:
    """What a reader who follows reports/latest.json sees: the run it names as latest, the run of the dated folder
    of that date, and the warehouse's run of that date."""
    manifest = publish_journal.read_manifest(root / "reports")
    if not manifest:
        return None, None, None
    as_of = dt.date.fromisoformat(manifest["latest_as_of"])
    return (manifest["latest_run_id"], run_of(root / "reports" / as_of.isoformat()),
            warehouse_runs(root / "warehouse" / "hweval.duckdb").get(as_of))


def publish_inputs(template: Path, inputs: Path, scenario: str) -> Path:
    """A finished new warehouse and a rendered folder, as a run has them just before it publishes: the golden run's,
    renamed `killed` and dated as `scenario` says."""
    as_of, change = KILL_SCENARIOS[scenario]
    inputs.mkdir()
    shutil.copy(template / "warehouse" / "hweval.duckdb", inputs / "building.duckdb")
    con = duckdb.connect(str(inputs / "building.duckdb"))
    try:
        con.execute(change, [as_of])
    finally:
        con.close()
    shutil.copytree(template / "reports" / AS_OF.isoformat(), inputs / "rendering")
    index = inputs / "rendering" / "index.md"
    index.write_text(index.read_text().replace(RUN_ID, "killed"))
    return inputs


def prepare_publish(template: Path, inputs: Path, root: Path, scenario: str) -> tuple:
    """`root` holding the last good state (none for a first run) with `inputs` beside it; returns
    publishing.publish_run's arguments. A publish only renames, links and unlinks: hard links stand in for copies."""
    as_of = KILL_SCENARIOS[scenario][0]
    if scenario == "first run":
        (root / "warehouse").mkdir(parents=True)
        (root / "reports").mkdir()
    else:
        shutil.copytree(template, root, copy_function=os.link)
    building = root / "warehouse" / ".hweval.duckdb.building-1"
    os.link(inputs / "building.duckdb", building)
    rendering = root / "reports" / f".{as_of}.rendering-1"
    shutil.copytree(inputs / "rendering", rendering, copy_function=os.link)
    runs = warehouse_runs(building)
    return (building, root / "warehouse" / "hweval.duckdb", rendering, root / "reports", as_of, "killed",
            (runs[max(runs)], max(runs)))


def published_state(root: Path) -> dict[str, str]:
    """`published`, with reports/latest.json read for the run it names (it also holds a time and a publish id)."""
    state = published(root)
    if state.pop("reports/latest.json", None):
        state["reports/latest.json"] = publish_journal.read_manifest(root / "reports")["run_id"]
    return state


def publish_killed_before(operation_no: int | None, args: tuple, log: Path, interrupt_after: bool = False) -> bool:
    """Run publishing.publish_run(*args) in a forked child that SIGKILLs itself just before its file operation number
    `operation_no` (a rename, link, unlink, removal, copy or write; None: never). Each operation it starts is logged in
    `log`. Returns whether the child was killed (False: it finished with fewer operations).

    `interrupt_after`: instead of the kill, a KeyboardInterrupt (a Ctrl-C, or a SIGTERM Prefect turns into an
    exception) as that operation returns, which the publish's own handlers see; the child then exits 1 and this
    returns True."""

    child = os.fork()
    if child == 0:  # the child never returns into pytest
        try:
            started, depth = [], [0]

            def counted(name, real, paths):
                def operation(*args, **kwargs):
                    if depth[0]:  # inside a counted operation (rmtree's unlinks): part of it
                        return real(*args, **kwargs)
                    if len(started) == operation_no and not interrupt_after:
                        os.kill(os.getpid(), signal.SIGKILL)
                    started.append(name)
                    with open(log, "a") as out:
                        out.write(f"{name} {' -> '.join(Path(a).name for a in args[:paths])}\n")
                    depth[0] += 1
                    try:
                        result = real(*args, **kwargs)
                    finally:
                        depth[0] -= 1
                    if interrupt_after and len(started) == operation_no + 1:  # once: the handlers' own steps go on
                        raise KeyboardInterrupt
                    return result
                return operation

            for owner, name, paths in FILE_OPERATIONS:
                setattr(owner, name, counted(name, getattr(owner, name), paths))
            publishing.publish_run(*args)
            os._exit(0)
        except KeyboardInterrupt:
            os._exit(3 if interrupt_after else 1)
        except BaseException:  # noqa: BLE001  (anything but the kill: the child fails, saying why)
            traceback.print_exc()
            os._exit(1)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    if interrupt_after and os.WEXITSTATUS(status) == 3:
        return True
    assert os.WEXITSTATUS(status) == 0, log.read_text()
    return False


def complete_publish(last_good: Path, inputs: Path, root: Path, scenario: str, log: Path) -> tuple[dict, list, dict]:
    """The publish without a kill into `root`: the published state before it, its file operations in order (logged
    in `log`), and the state after it."""
    args = prepare_publish(last_good, inputs, root, scenario)
    before = published_state(root)
    assert not publish_killed_before(None, args, log)
    return before, log.read_text().splitlines(), published_state(root)


def private_names(root: Path) -> list[str]:
    """The hidden names a publish or a run left in root/reports and root/warehouse."""
    return [p.name for p in [*(root / "reports").iterdir(), *(root / "warehouse").iterdir()] if p.name.startswith(".")]


# what a killed run rendered or built and never published, which the next run removes before it builds
KILLED_RUNS_OWN = r"\.\d{4}-\d\d-\d\d\.rendering-1(-latest)?|\.hweval\.duckdb\.building-1"


@pytest.mark.parametrize("scenario", list(KILL_SCENARIOS))
def test_a_kill_at_any_step_of_the_publish_never_pairs_a_new_warehouse_with_old_reports(last_good, tmp_path,
                                                                                        scenario):
    """For a kill before each file operation of the publish: a reader of reports/latest.json sees the warehouse and
    the reports of one run; a reader of the two names sees them disagree only between the rename of the warehouse
    and the rename of reports/latest (the window README states); and the next run's recovery leaves the last
    committed publish whole, the old one before reports/latest.json names the new run, the new one after."""
    inputs = publish_inputs(last_good, tmp_path / "inputs", scenario)
    # the publish without a kill: its operations, in order, and what it leaves
    complete = tmp_path / "complete"
    before, operations, after = complete_publish(last_good, inputs, complete, scenario, tmp_path / "complete.log")
    assert after["reports/latest.json"] == "killed"
    assert run_of(complete / "reports" / "latest") == (RUN_ID if scenario == "backfill" else "killed")
    warehouse_renamed = operations.index("replace .hweval.duckdb.building-1 -> hweval.duckdb")
    latest_renamed = next((i for i, op in enumerate(operations) if op.endswith("-latest -> latest")), None)
    assert (latest_renamed is None) == (scenario == "backfill")
    committed_at = next(i for i, op in enumerate(operations) if op.endswith(" -> latest.json"))
    assert warehouse_renamed < committed_at < len(operations) - 1  # then the clean-up
    assert latest_renamed is None or warehouse_renamed < latest_renamed < committed_at

    for k in range(len(operations)):
        root = tmp_path / f"kill-{k}"
        args = prepare_publish(last_good, inputs, root, scenario)
        assert publish_killed_before(k, args, tmp_path / f"kill-{k}.log"), operations[k]
        where = f"killed before {operations[k]!r} ({scenario})"
        # a reader of the two names: they disagree exactly between the two renames
        in_window = latest_renamed is not None and warehouse_renamed < k <= latest_renamed
        warehouse_run, latest_run = direct_view(root)
        assert (warehouse_run != latest_run) == in_window, where
        # a reader of reports/latest.json: the run it names, in the dated folder and in the warehouse
        named, folder_run, warehouse_date_run = manifest_view(root)
        if scenario == "same-date re-run" and warehouse_renamed < k <= committed_at:
            # the date's run is replaced in the new warehouse: the reader sees it is not the one named
            assert (named, warehouse_date_run) == (RUN_ID, "killed"), where
        elif named is not None:
            assert named == folder_run == warehouse_date_run, where
        # the next run's recovery: the publish is committed once reports/latest.json names it
        actions = publish_journal.recover_killed_publish(root / "warehouse" / "hweval.duckdb", root / "reports")
        assert published_state(root) == (after if k > committed_at else before), (where, actions)
        assert publish_journal.recover_killed_publish(root / "warehouse" / "hweval.duckdb", root / "reports") == []
        hidden = private_names(root)
        assert all(re.fullmatch(KILLED_RUNS_OWN, name) for name in hidden), (where, hidden)
        shutil.rmtree(root)


@pytest.mark.parametrize("scenario", ["next day", "first run"])
def test_an_interrupt_after_any_step_of_the_publish_undoes_it_only_before_the_commit(last_good, tmp_path, scenario):
    """A Ctrl-C (or a SIGTERM, which Prefect raises as an exception) as each file operation of the publish returns:
    the publish's own handlers run. Before reports/latest.json is renamed in they put the last committed publish back;
    from that rename on they undo nothing, so latest.json never names a run the warehouse and the dated folder do not
    hold (an interrupt just after the rename undid the warehouse and the reports and left latest.json naming the new
    run). The next run's recovery then leaves that state as it is, with no private file left over."""
    inputs = publish_inputs(last_good, tmp_path / "inputs", scenario)
    before, operations, after = complete_publish(last_good, inputs, tmp_path / "complete", scenario,
                                                 tmp_path / "complete.log")
    committed_at = next(i for i, op in enumerate(operations) if op.endswith(" -> latest.json"))
    for k in range(len(operations)):
        root = tmp_path / f"interrupted-{k}"
        args = prepare_publish(last_good, inputs, root, scenario)
        assert publish_killed_before(k, args, tmp_path / f"interrupted-{k}.log", interrupt_after=True), operations[k]
        where = f"interrupted after {operations[k]!r} ({scenario})"
        expected = after if k >= committed_at else before
        assert published_state(root) == expected, where  # as the run left it, before any recovery
        named, folder_run, warehouse_date_run = manifest_view(root)
        assert named is None or named == folder_run == warehouse_date_run, where
        publish_journal.recover_killed_publish(root / "warehouse" / "hweval.duckdb", root / "reports")
        assert published_state(root) == expected, where
        assert publish_journal.recover_killed_publish(root / "warehouse" / "hweval.duckdb", root / "reports") == []
        hidden = private_names(root)
        assert all(re.fullmatch(KILLED_RUNS_OWN, name) for name in hidden), (where, hidden)
        shutil.rmtree(root)


def test_a_publish_killed_after_its_commit_is_finished_by_a_run_with_another_reports_folder(last_good, tmp_path):
    """One warehouse, two reports folders (a run for each). A publish to reports folder A killed after its commit
    leaves the previous warehouse beside the new one: a run on the warehouse with reports folder B has no journal of
    it in B, and restored that previous warehouse, losing the run A's latest.json names. The note beside the
    warehouse names A, whose latest.json says the publish was committed: the new warehouse stays."""
    args = prepare_publish(last_good, publish_inputs(last_good, tmp_path / "inputs", "next day"), tmp_path / "root",
                           "next day")
    log = tmp_path / "publish.log"
    assert not publish_killed_before(None, args, log)  # to count the operations
    operations = log.read_text().splitlines()
    committed_at = next(i for i, op in enumerate(operations) if op.endswith(" -> latest.json"))
    shutil.rmtree(tmp_path / "root")
    root = tmp_path / "root"
    args = prepare_publish(last_good, publish_inputs(last_good, tmp_path / "inputs-2", "next day"), root, "next day")
    assert publish_killed_before(committed_at + 1, args, tmp_path / "killed.log")  # the commit done, nothing removed
    warehouse_file, other_reports = root / "warehouse" / "hweval.duckdb", tmp_path / "other-reports"
    assert warehouse_runs(warehouse_file)[D1] == "killed"
    [pid] = [m.group(1) for p in (root / "reports").iterdir() if (m := re.fullmatch(r"\.publish-(\d+)\.json", p.name))]
    actions = publish_journal.recover_killed_publish(warehouse_file, other_reports)
    assert actions == [f"finished the publish of run killed, committed before it was killed (pid {pid})"]
    assert warehouse_runs(warehouse_file)[D1] == "killed"  # not rolled back
    assert [p.name for p in (root / "warehouse").iterdir() if ".previous-" in p.name or ".publish-" in p.name] == []
    # the reports half is folder A's, left to its run, which finishes it: the old reports/latest it moved aside goes
    assert sorted(p.name for p in (root / "reports").iterdir() if p.name.endswith(f"-{pid}")) == [f".latest.old-{pid}"]
    assert publish_journal.recover_killed_publish(warehouse_file, root / "reports") == [
        f"finished the publish of run killed, committed before it was killed (pid {pid})",
        f"removed .latest.old-{pid}, left by a publish that finished"]
    assert [p.name for p in (root / "reports").iterdir() if ".old-" in p.name or ".publish-" in p.name] == []
    named, folder_run, warehouse_date_run = manifest_view(root)
    assert named == folder_run == warehouse_date_run == "killed"


def test_a_failure_writing_the_manifest_puts_the_warehouse_and_reports_back(last_good, tmp_path, monkeypatch):
    """Disk full when reports/latest.json is written (the commit): the warehouse, the dated folder and reports/latest
    are put back, and nothing of the publish is left."""

    root = tmp_path / "publishing"
    args = prepare_publish(last_good, publish_inputs(last_good, tmp_path / "inputs", "next day"), root, "next day")
    before = published(root)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish_journal, "write_manifest", full)
    with pytest.raises(OSError, match="No space left on device"):
        publishing.publish_run(*args)
    assert published(root) == before
    assert [p.name for p in [*(root / "reports").iterdir(), *(root / "warehouse").iterdir()]
            if p.name.startswith(".")] == []


# Runs sharing a warehouse or a reports folder, a pid used again, folders moved: found by a review of the journal's
# copy beside the warehouse (stop 49); each scenario below lost a committed publish, or kept an uncommitted one.

def operation_numbers(args: tuple, log: Path) -> tuple[int, int]:
    """The file operations of a publish without a kill: the number of the warehouse's rename and of the commit's."""
    assert not publish_killed_before(None, args, log)
    operations = log.read_text().splitlines()
    return (operations.index("replace .hweval.duckdb.building-1 -> hweval.duckdb"),
            next(i for i, op in enumerate(operations) if op.endswith(" -> latest.json")))


def probed_next_day_publish(last_good: Path, tmp_path: Path) -> tuple[Path, tuple[int, int]]:
    """The next day's publish inputs, and the numbers of its warehouse rename and its commit (operation_numbers) from
    a probe publish of them in tmp_path/probe."""
    inputs = publish_inputs(last_good, tmp_path / "inputs", "next day")
    return inputs, operation_numbers(prepare_publish(last_good, inputs, tmp_path / "probe", "next day"),
                                     tmp_path / "probe.log")


def pids_in(folder: Path, pattern: str) -> list[str]:
    return [m.group(1) for p in folder.iterdir() if (m := re.fullmatch(pattern, p.name))]


def test_a_committed_warehouse_stays_after_another_warehouse_published_to_its_reports_folder(last_good, tmp_path):
    """A publishes to (W1, R) and is killed after its commit. C, on (W2, R), finishes R's half and publishes: R's
    latest.json names C now. A run on W1 then found A named nowhere and rolled W1 back past a committed publish.
    latest.json remembers the recent publishes (`recent_publish_ids`): W1 keeps A's run."""
    inputs, (_, committed_at) = probed_next_day_publish(last_good, tmp_path)
    root = tmp_path / "root"
    assert publish_killed_before(committed_at + 1, prepare_publish(last_good, inputs, root, "next day"),
                                 tmp_path / "killed.log")
    w1, reports = root / "warehouse" / "hweval.duckdb", root / "reports"
    w2 = tmp_path / "w2" / "hweval.duckdb"
    w2.parent.mkdir()
    shutil.copy(last_good / "warehouse" / "hweval.duckdb", w2)
    publish_journal.recover_killed_publish(w2, reports)
    building = w2.with_name(".hweval.duckdb.building-1")
    shutil.copy(w2, building)
    rendering = reports / f".{AS_OF}.rendering-9"
    shutil.copytree(last_good / "reports" / AS_OF.isoformat(), rendering)
    publishing.publish_run(building, w2, rendering, reports, AS_OF, "run-C", (RUN_ID, AS_OF))
    assert publish_journal.read_manifest(reports)["run_id"] == "run-C"
    [pid] = pids_in(w1.parent, r"\.hweval\.duckdb\.publish-(\d+)\.json")
    assert publish_journal.recover_killed_publish(w1, reports) == [
        f"finished the publish of run killed, committed before it was killed (pid {pid})"]
    assert warehouse_runs(w1)[D1] == "killed"
    assert [p.name for p in w1.parent.iterdir() if ".previous-" in p.name or ".publish-" in p.name] == []


def test_a_pid_used_again_pairs_no_journal_with_another_publishs_warehouse(last_good, tmp_path):
    """A (W, reports RA) is killed after its warehouse rename, uncommitted. B (W, RB) puts W back, publishes and
    commits, and is killed before its clean-up, with A's pid (a pid used again: simulated by renaming B's files). A run
    on (W, RA) paired A's journal with B's previous warehouse and note by the pid, found A uncommitted, and restored
    the warehouse B had replaced: B's committed run was lost. The journal and the note are paired by publish id."""
    inputs, (warehouse_renamed, _) = probed_next_day_publish(last_good, tmp_path)
    root = tmp_path / "root"
    assert publish_killed_before(warehouse_renamed + 1, prepare_publish(last_good, inputs, root, "next day"),
                                 tmp_path / "a.log")
    w, ra, rb = root / "warehouse" / "hweval.duckdb", root / "reports", tmp_path / "rb"
    [pid_a] = pids_in(ra, r"\.publish-(\d+)\.json")
    publish_journal.recover_killed_publish(w, rb)
    assert D1 not in warehouse_runs(w)
    rb.mkdir(exist_ok=True)
    building = w.with_name(".hweval.duckdb.building-1")
    os.link(inputs / "building.duckdb", building)
    rendering = rb / f".{D1}.rendering-1"
    shutil.copytree(inputs / "rendering", rendering)
    runs = warehouse_runs(building)
    b_args = (building, w, rendering, rb, D1, "killed", (runs[max(runs)], max(runs)))
    # B's commit comes at the same operation as A's would: it has no dated folder or latest to move aside first
    probe = tmp_path / "b-probe"
    shutil.copytree(last_good / "warehouse", probe / "warehouse", copy_function=os.link)
    (probe / "rb").mkdir()
    os.link(inputs / "building.duckdb", probe / "warehouse" / ".hweval.duckdb.building-1")
    shutil.copytree(inputs / "rendering", probe / "rb" / f".{D1}.rendering-1")
    _, b_committed_at = operation_numbers(
        (probe / "warehouse" / ".hweval.duckdb.building-1", probe / "warehouse" / "hweval.duckdb",
         probe / "rb" / f".{D1}.rendering-1", probe / "rb", D1, "killed", b_args[6]), tmp_path / "b-probe.log")
    assert publish_killed_before(b_committed_at + 1, b_args, tmp_path / "b.log")
    [pid_b] = pids_in(rb, r"\.publish-(\d+)\.json")
    assert publish_journal.read_manifest(rb)["run_id"] == "killed" and warehouse_runs(w)[D1] == "killed"
    for folder in (w.parent, rb):  # B had A's pid
        for p in list(folder.iterdir()):
            if re.search(rf"-{pid_b}(\.json)?$", p.name):
                p.rename(p.with_name(p.name.replace(f"-{pid_b}", f"-{pid_a}")))
    publish_journal.recover_killed_publish(w, ra)
    assert warehouse_runs(w)[D1] == "killed"  # B's, committed in RB
    assert publish_journal.recover_killed_publish(w, rb) == [
        f"finished the publish of run killed, committed before it was killed (pid {pid_a})"]
    assert warehouse_runs(w)[D1] == "killed"


def test_folders_reached_by_another_path_are_recovered_by_where_the_journal_lies(last_good, tmp_path):
    """A (W, R) is killed before its commit, with its dated folder and reports/latest renamed in; the next run reaches
    the same folders by another path (moved; a bind mount is the same). Recovery went by the paths written in the
    journal, handled neither half, then removed the journal and the old reports/latest as leftovers of a publish that
    finished: the uncommitted run stayed published. Each half is now the journal's where it lies."""
    inputs, (_, committed_at) = probed_next_day_publish(last_good, tmp_path)
    root = tmp_path / "root"
    args = prepare_publish(last_good, inputs, root, "next day")
    before = published_state(root)
    assert publish_killed_before(committed_at - 1, args, tmp_path / "killed.log")  # before latest.json is written
    moved = tmp_path / "moved"
    root.rename(moved)
    publish_journal.recover_killed_publish(moved / "warehouse" / "hweval.duckdb", moved / "reports")
    assert published_state(moved) == before
    assert [n for n in private_names(moved) if ".rendering-" not in n and ".building-" not in n] == []


@pytest.mark.parametrize("scenario", ["first run", "next day"])
@pytest.mark.parametrize("where", ["after the warehouse's rename", "at the commit", "after the commit"])
def test_a_run_with_another_reports_folder_then_one_with_its_own_leave_the_last_committed_publish(
        last_good, tmp_path, scenario, where):
    """A publish to (W, R) killed at `where`; then a run on W with another reports folder recovers W's half, then a run
    on (W, R) recovers R's: the state is the old publish before the commit and the new one from it, with nothing of
    the publish left over."""
    inputs = publish_inputs(last_good, tmp_path / "inputs", scenario)
    probe = tmp_path / "probe"
    warehouse_renamed, committed_at = operation_numbers(prepare_publish(last_good, inputs, probe, scenario),
                                                        tmp_path / "probe.log")
    after = published_state(probe)
    k = {"after the warehouse's rename": warehouse_renamed + 1, "at the commit": committed_at,
         "after the commit": committed_at + 1}[where]
    root = tmp_path / "root"
    args = prepare_publish(last_good, inputs, root, scenario)
    before = published_state(root)
    assert publish_killed_before(k, args, tmp_path / "killed.log")
    w = root / "warehouse" / "hweval.duckdb"
    publish_journal.recover_killed_publish(w, tmp_path / "other-reports")
    publish_journal.recover_killed_publish(w, root / "reports")
    assert published_state(root) == (after if k > committed_at else before)
    assert [n for n in private_names(root) if ".rendering-" not in n and ".building-" not in n] == []
