"""Hostile runs through `hweval run`: a broken offer file given with --source (the AWS prices it replaced must not
vanish), HTML and Markdown in workload and price-sheet text (escaped in every report), relative paths and a relative
HWEVAL_REPORTS_DIR (taken from the working directory), and as-of dates far in the future (refused) or the past (a
backfill, and said so). One whole run serves the first three."""

import contextlib
import datetime as dt
import io
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from conftest import AS_OF, CATALOGS, RUN_ID

from flows import pipeline, publish_journal, warehouse
from flows.cli import main
from flows.run_command import PREFECT_DEFAULTS

D1 = dt.date(2026, 12, 1)
HOSTILE = "<script>alert(1)</script> *bold* | pipe"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; \\*bold\\* \\| pipe"
PRICE_SHEET = """entries:
  - kind: quote
    cloud: aws
    region: us-east-1
    instance_type: p5.48xlarge
    pricing_term: private
    usd_per_hour: 30.00
    source: "<script>alert(2)</script> a *private* | quote"
  - kind: on_prem
    site: home-dc
    name: "<img src=x onerror=alert(3)>"
    accelerator: h100-sxm-80gb
    accelerator_count: 8
    capex_usd: 320000
    life_months: 48
    power_kw: 10.2
    usd_per_kwh: 0.11
    pue: 1.35
    opex_usd_per_month: 2000
    source: "<b>our</b> purchase order"
"""


def hweval(argv: list[str], cwd: Path, **env: str) -> SimpleNamespace:
    """`hweval ...` in this process, from `cwd`, with `env` set: its exit status, stdout and stderr."""
    from prefect.settings import PREFECT_API_URL

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        for key, value in {**PREFECT_DEFAULTS, "PREFECT_API_URL": PREFECT_API_URL.value() or ""}.items():
            mp.setenv(key, os.environ.get(key, value))  # restored afterwards: the command sets its defaults
        for key, value in env.items():
            mp.setenv(key, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    return SimpleNamespace(status=status, out=out.getvalue(), err=err.getvalue())


@pytest.fixture(scope="module")
def hostile_run(flow_run, tmp_path_factory):
    """The day after the golden run, from its folder with relative paths (the reports folder through a relative
    HWEVAL_REPORTS_DIR): an offer file that cannot be parsed replaces aws_pricing, a workload's title and
    description carry HTML and Markdown, and a price sheet given on the command line carries HTML."""
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(flow_run.warehouse.parent, root / "warehouse")
    shutil.copytree(flow_run.reports.parent, root / "reports")
    shutil.copytree(CATALOGS, root / "catalogs")
    workloads = root / "catalogs" / "workloads.yaml"
    text = workloads.read_text()
    for old, new in [("title: Llama-2-70B LoRA fine-tune (MLPerf llama2_70b_lora)", f"title: '{HOSTILE}'"),
                     ("Fine-tune Llama-2-70B with LoRA on GovReport to the MLPerf quality target; one completed run.",
                      HOSTILE)]:
        assert old in text
        text = text.replace(old, new)
    workloads.write_text(text)
    (root / "sheet.yaml").write_text(PRICE_SHEET)
    (root / "offer.csv").write_text('"FormatVersion","v1.0"\nthis is not an offer file\n')
    run = hweval(["run", "--as-of", D1.isoformat(), "--catalog", "catalogs", "--warehouse", "warehouse/hweval.duckdb",
                  "--source", "aws_offer_file=offer.csv", "--source", "price_sheet=sheet.yaml"],
                 cwd=root, HWEVAL_REPORTS_DIR="reports")
    run.root = root
    return run


def query(root: Path, sql: str, params: list | None = None) -> list[dict]:
    con = duckdb.connect(str(root / "warehouse" / "hweval.duckdb"), read_only=True)
    try:
        return warehouse.fetch_dicts(con, sql, params)
    finally:
        con.close()


@pytest.mark.slow  # the hostile day-two run: a whole run (make test-slow, CI)
def test_a_broken_offer_file_keeps_the_aws_on_demand_offers_of_the_last_good_run(hostile_run):
    assert "Traceback" not in hostile_run.err, hostile_run.err[-3000:]
    lines = {line.split(":")[0].strip(): line for line in hostile_run.out.splitlines() if line.startswith("  ")}
    assert lines["aws_offer_file"].startswith("  aws_offer_file: STALE (SourceFormatError: ")
    assert "offer.csv" in lines["aws_offer_file"] and lines["aws_offer_file"].endswith("; using no data from it")
    # the source the offer file replaced for this run stands in with its last good rows, and says so
    assert lines["aws_pricing"] == ("  aws_pricing: STALE (not read in this run: --source aws_offer_file replaced it "
                                    "and failed); using the rows of its last good run, the run of 2026-11-30")
    # and the run's own line says so (not a clean "N rows landed, M quarantined")
    assert "; 2 sources STALE (aws_offer_file, aws_pricing: see above)" in hostile_run.out
    offers = query(hostile_run.root, "select as_of, offer_id, usd_per_hour, price_as_of from marts.offers "
                                     "where cloud = 'aws' and pricing_term = 'on_demand' order by as_of, offer_id")
    before = [(o["offer_id"], o["usd_per_hour"], o["price_as_of"]) for o in offers if o["as_of"] == AS_OF]
    after = [(o["offer_id"], o["usd_per_hour"], o["price_as_of"]) for o in offers if o["as_of"] == D1]
    assert after == before and len(after) == 21  # 17 accelerated offers and the 4 CPU baselines
    # not a clean run: the offer file never landed (exit status 3), and both sources are named stale
    assert hostile_run.status == 3
    [run] = query(hostile_run.root, "select status, stale_sources from ops.runs where as_of = ?", [D1])
    assert run["status"] == "failed: sources stale past their limit: aws_offer_file"
    assert "aws_pricing (last loaded by the run of 2026-11-30): not read in this run: --source aws_offer_file replaced it" in (
        run["stale_sources"])
    index = (hostile_run.root / "reports" / D1.isoformat() / "index.md").read_text()
    assert "| aws_pricing | aws_pricing | stale, last loaded by the run of 2026-11-30 |" in index


@pytest.mark.slow  # the hostile day-two run: a whole run (make test-slow, CI)
def test_relative_paths_are_taken_from_the_working_directory(hostile_run):
    """--catalog, --warehouse and a relative HWEVAL_REPORTS_DIR: the run (its Data Docs included) uses them from
    where it was started, and says where things are as absolute paths."""
    root = hostile_run.root
    assert f"\nwarehouse: {root / 'warehouse' / 'hweval.duckdb'}\n" in hostile_run.out
    assert (f"\nreports:   {root / 'reports' / D1.isoformat()}/index.md (also {root / 'reports' / 'latest'}/)\n"
            in hostile_run.out)
    assert (root / "reports" / D1.isoformat() / "data-docs" / "index.html").is_file()
    assert (root / "reports" / "latest" / "data-docs" / "index.html").is_file()
    manifest = publish_journal.read_manifest(root / "reports")
    assert manifest["warehouse"] == str(root / "warehouse" / "hweval.duckdb")
    assert (manifest["latest_as_of"], manifest["as_of"]) == (D1.isoformat(), D1.isoformat())


@pytest.mark.slow  # the hostile day-two run: a whole run (make test-slow, CI)
def test_markup_in_catalogs_and_price_sheets_is_escaped_in_every_report(hostile_run):
    pages = {p: p.read_text() for p in (hostile_run.root / "reports").rglob("*.md")}
    assert len(pages) > 10
    assert [p for p, text in pages.items() if "<script" in text or "<img" in text or "<b>" in text] == []
    dated = hostile_run.root / "reports" / D1.isoformat()
    page = pages[dated / "llama2-70b-lora-finetune.md"]
    assert f"# llama2-70b-lora-finetune: {ESCAPED}\n" in page
    assert f"\n{ESCAPED}\n" in page  # the description
    # the on-prem system's name, in the ranking tables (a quote's `source` is not shown in the pages)
    assert "| on_prem &lt;img src=x onerror=alert(3)&gt; (home-dc) | owned |" in page


def test_an_as_of_later_than_tomorrow_is_refused_unless_allowed(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(pipeline.ALLOW_FUTURE_AS_OF_ENV)  # set for the suite, whose fixtures are dated ahead
    assert main(["run", "--as-of", "9999-12-31", "--warehouse", str(tmp_path / "w.duckdb"),
                 "--reports", str(tmp_path / "reports")]) == 2
    assert capsys.readouterr().err.startswith(
        "hweval: --as-of 9999-12-31 is later than tomorrow (")
    assert list(tmp_path.iterdir()) == []  # refused before anything started
    today = dt.date(2026, 11, 30)
    pipeline.check_as_of(dt.date(2026, 12, 1), today=today)  # tomorrow: a run ahead of a time zone is fine
    pipeline.check_as_of(dt.date(1, 1, 1), today=today)
    with pytest.raises(pipeline.AsOfError, match=r"^--as-of 2026-12-02 is later than tomorrow \(2026-12-01, UTC\): "
                                                 r"reports/latest would show that date until it comes.*"
                                                 r"Pass --allow-future-as-of \(a deployment's parameter "
                                                 r"allow_future_as_of: true; or set HWEVAL_ALLOW_FUTURE_AS_OF=1\)"):
        pipeline.check_as_of(dt.date(2026, 12, 2), today=today)
    pipeline.check_as_of(dt.date(9999, 12, 31), allow_future=True, today=today)
    monkeypatch.setenv(pipeline.ALLOW_FUTURE_AS_OF_ENV, "1")
    pipeline.check_as_of(dt.date(9999, 12, 31), today=today)


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12"])  # UTC+14 and UTC-12
def test_a_run_given_no_as_of_is_dated_by_the_utc_date_whatever_the_machines_time_zone(zone, monkeypatch):
    """A worker's local date dated the 02:30 UTC nightly the day before west of UTC. At any hour one of these two
    zones has another date than UTC's (+14 from 10:00 UTC on, -12 before 12:00), so a local date fails one case."""
    import time

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert pipeline.default_as_of() == dt.datetime.now(dt.UTC).date()
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_run_id_is_a_file_name_of_at_most_64_characters():
    for good in ("2026-11-30-1a2b3c4d", "backfill.2026-11-28", "x" * 64):
        assert pipeline.check_run_id(good) == good
    for bad in ("", "../x", "x/y", "-x", "x" * 65, "2026-11-30-nightly\n", "run id", "r\u00e9sum\u00e9"):
        with pytest.raises(pipeline.RunSettingError, match="expected 1 to 64 letters, digits"):
            pipeline.check_run_id(bad)


def test_a_run_id_names_one_dates_run(tmp_path):
    """A re-run of a date may take its run id again; a run of another date may not (ops.runs' key is the run id: it
    failed only as the run was recorded, after the fetch and the build)."""
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema ops; create table ops.runs (run_id varchar primary key, as_of date not null)")
    con.execute("insert into ops.runs values ('nightly-1', date '2026-11-30')")
    pipeline.check_run_id_unused(con, "nightly-1", dt.date(2026, 11, 30), path)  # the same date's re-run
    pipeline.check_run_id_unused(con, "nightly-2", dt.date(2026, 12, 1), path)  # a new id
    with pytest.raises(pipeline.RunSettingError, match=(
            r"^run_id 'nightly-1' is already the run as of 2026-11-30 in .*w\.duckdb; expected a run id no other "
            r"date's run has \(a re-run of 2026-11-30 may take it again\), or none")):
        pipeline.check_run_id_unused(con, "nightly-1", dt.date(2026, 12, 1), path)
    # before any work the file is read if it can be: not while a writer holds it, nor one that is no warehouse yet
    pipeline.check_run_id_unused_in(path, "nightly-1", dt.date(2026, 12, 1))  # held (here, by this connection)
    con.close()
    with pytest.raises(pipeline.RunSettingError, match="already the run as of 2026-11-30"):
        pipeline.check_run_id_unused_in(path, "nightly-1", dt.date(2026, 12, 1))
    (tmp_path / "text.duckdb").write_text("not a database")
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    for nothing_to_read in ("text.duckdb", "empty.duckdb", "none.duckdb"):
        pipeline.check_run_id_unused_in(tmp_path / nothing_to_read, "nightly-1", dt.date(2026, 12, 1))


def test_a_deployment_given_another_dates_run_id_is_refused_before_any_work(flow_run, tmp_path):
    """The session's run (as of AS_OF, run id RUN_ID), then a deployment run of the next day given the same run id:
    refused before the fetch, the warehouse and reports as they were."""
    from flows.nightly import nightly

    shutil.copytree(flow_run.warehouse.parent, tmp_path / "warehouse")
    shutil.copytree(flow_run.reports.parent, tmp_path / "reports")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    file = tmp_path / "warehouse" / flow_run.warehouse.name
    # named by the file: the check under the lock, on the copy the run builds in, would name "the warehouse this run
    # builds on", after the fetch
    with pytest.raises(pipeline.RunSettingError, match=rf"^run_id '{RUN_ID}' is already the run as of {AS_OF} in "
                                                        rf"{re.escape(str(file))}; expected"):
        nightly(as_of=AS_OF + dt.timedelta(days=1), run_id=RUN_ID, catalog_dir=str(CATALOGS), warehouse_file=str(file),
                reports_dir=str(tmp_path / "reports"))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(("parameters", "error"), [
    ({"run_id": "../../escape"}, r"^run_id '\.\./\.\./escape': expected 1 to 64 letters, digits"),
    pytest.param({"run_id": "2026-11-30-nightly\n"}, r"^run_id '2026-11-30-nightly\\n': expected 1 to 64",
                 marks=pytest.mark.slow),
    # the rest are whole flow calls on the Prefect test server's worker: make test-slow, so make test keeps its 3 min
    pytest.param({"run_id": "x" * 65}, r"^run_id 'x{65}': expected 1 to 64", marks=pytest.mark.slow),
    pytest.param({"wait_s": -1.0}, r"^wait_s=-1\.0: expected a number of seconds from 0 to 86400",
                 marks=pytest.mark.slow),
    pytest.param({"reports_dir": "FILE/reports"}, (r"^the reports folder .*FILE/reports cannot be created \(.*FILE is "
                                                   r"not a directory\); expected a directory, or a path where one can "
                                                   r"be created \(reports_dir\)$"), marks=pytest.mark.slow),
    pytest.param({"env": "HWEVAL_LOCK_WAIT_S", "value": "forever"}, r"^HWEVAL_LOCK_WAIT_S='forever': expected a number",
                 marks=pytest.mark.slow),
    # no warehouse_file parameter: the path came from the environment, and the message names it, not the parameter
    ({"env": "HWEVAL_WAREHOUSE", "value": "FILE/w.duckdb", "warehouse_file": None},
     r"^the warehouse's folder .*FILE is not a directory; .* be created \(HWEVAL_WAREHOUSE\)$"),
])
def test_a_deployments_parameters_are_refused_before_any_work(prefect_server, tmp_path, monkeypatch, parameters,
                                                             error):
    """`prefect deployment run --param ...` reaches the flow unchecked by `hweval run`'s options: the flow checks them
    first. Before, a `/` in run_id lost every Data Docs page and the run passed; a bad wait or reports folder failed
    after every source was fetched, and HWEVAL_LOCK_WAIT_S was ignored."""
    from flows.nightly import nightly

    (tmp_path / "FILE").write_text("a file, not a folder")
    parameters = dict(parameters)
    if "env" in parameters:
        monkeypatch.setenv(parameters.pop("env"), parameters.pop("value").replace("FILE", str(tmp_path / "FILE")))
    if "reports_dir" in parameters:
        parameters["reports_dir"] = str(tmp_path / parameters["reports_dir"])
    arguments = {"as_of": dt.date(2026, 11, 30), "catalog_dir": str(CATALOGS),
                 "warehouse_file": str(tmp_path / "w" / "w.duckdb"), "reports_dir": str(tmp_path / "reports")}
    with pytest.raises(ValueError, match=error):
        nightly(**(arguments | parameters))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]  # nothing made, nothing fetched


def test_the_flow_refuses_a_far_future_as_of_too(prefect_server, tmp_path, monkeypatch):
    """A deployment's as_of parameter is checked by the flow itself."""
    from flows.nightly import nightly

    monkeypatch.delenv(pipeline.ALLOW_FUTURE_AS_OF_ENV)
    with pytest.raises(pipeline.AsOfError, match="later than tomorrow"):
        nightly(as_of=dt.date(9999, 12, 31), catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w.duckdb"),
                reports_dir=str(tmp_path / "reports"))
    assert list(tmp_path.iterdir()) == []
