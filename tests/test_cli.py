"""The `hweval` command: every subcommand works and is documented in the README."""

import contextlib
import datetime as dt
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from builders import gone, replace_once
from conftest import AS_OF, CATALOGS

from flows import cli, paths, pipeline
from flows.cli import build_parser, main
from flows.paths import PROJECT_ROOT
from flows.run_command import PREFECT_DEFAULTS


def test_every_subcommand_is_documented_in_the_readme():
    readme = (PROJECT_ROOT / "README.md").read_text()
    subcommands = build_parser()._subparsers._group_actions[0].choices
    undocumented = [name for name in subcommands if f"hweval {name}" not in readme]
    assert undocumented == []


def test_the_help_lists_every_exit_status_of_hweval_run_that_the_readme_does(capsys):
    """`hweval --help` and `hweval run --help` listed 0-5; README's table has 6 too (cancelled from Prefect). Both
    helps print RUN_EXIT_STATUSES, whose statuses are the table's."""
    from flows.run_command import EXIT_CANCELLED, RUN_EXIT_STATUSES

    readme = (PROJECT_ROOT / "README.md").read_text()
    table = readme.split("**Exit status of `hweval run`:**", 1)[1].split("\n\n", 2)[1]
    assert [int(line.split("|")[1]) for line in table.splitlines()[2:]] == sorted(RUN_EXIT_STATUSES) == [*range(7), 130]
    for argv in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
        for status, meaning in RUN_EXIT_STATUSES.items():
            assert f"{status} {meaning}" in shown, (argv, status)
        assert (f"; {EXIT_CANCELLED} cancelled from Prefect (its UI, `prefect flow-run cancel`) and stopped before its "
                "publish: nothing changed") in shown


def test_readme_quickstart_is_the_two_make_commands():
    readme = (PROJECT_ROOT / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quickstart.strip().splitlines()] == ["make run", "make test"]
    assert "make test" in (PROJECT_ROOT / ".ci" / "run").read_text()


def test_check_prints_what_it_loaded(capsys):
    assert main(["check", "--catalog", str(CATALOGS)]) == 0
    # in snapshot mode a run reads the files of every enabled source: 15 declared, price_sheet, aws_offer_file and the
    # two model-API sources without a snapshot disabled
    from flows.catalog import load_catalog

    enabled = {i: s for i, s in load_catalog(CATALOGS).sources.sources.items() if s.enabled}
    assert len(enabled) == 11
    assert re.fullmatch(r".*catalogs: \d+ accelerators, \d+ instances, \d+ models, \d+ workloads, 15 sources: OK\n"
                        rf"source files: {sum(len(s.files) for s in enabled.values())} files of 11 enabled sources "
                        r"read as a run reads them: OK \(their size, nesting, format and fields; a run checks their "
                        r"rows' values, and quarantines a row that fails\)\n", capsys.readouterr().out)


def enable_price_sheet(catalog_copy: Path, name: str, text: str | bytes) -> Path:
    """The copy's price_sheet source enabled and reading `name` (written with `text`)."""
    sheet = catalog_copy / name
    sheet.write_bytes(text if isinstance(text, bytes) else textwrap.dedent(text).encode())
    sources = catalog_copy / "sources.yaml"
    replace_once(sources, "kind: price_sheet\n    enabled: false", "kind: price_sheet\n    enabled: true")
    replace_once(sources, "- path: price_sheet.example.yaml", f"- path: {name}")
    return sheet


@pytest.mark.parametrize(("name", "text", "message"), [
    # `hweval run` refused each (the source stale, exit 3) where check said OK
    ("my.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30, source: q1}
          - {kind: quote, cloud: aws, region: us-west-2, instance_type: p5.48xlarge, usd_per_hr: 31, source: q2}
        """,
     ("entries[1]: unknown field(s) usd_per_hr (expected some of: kind, cloud, region, instance_type, pricing_term, "
      "applies_to, site, name, accelerator, source, note, usd_per_hour, upfront_usd, term_months, accelerator_count, "
      "percent_off, capex_usd, life_months, power_kw, usd_per_kwh, pue, opex_usd_per_month)")),
    # 100 levels is MAX_YAML_DEPTH; the entries list and its mapping are 2 of the 152
    ("my.yaml", "entries:\n  - " + "[" * 150 + "]" * 150 + "\n",
     "refused: nested deeper than 100 levels (MAX_YAML_DEPTH in flows/safe_yaml.py), at line 2"),
    # MAX_YAML_FILE_BYTES is 4 MiB = 4,194,304 bytes; this file has 8 + 4,194,296 + 1 (its newline) = 4,194,305
    ("my.yaml", b"entries:" + b" " * 4_194_296 + b"\n",
     ("refused before parsing: the file has 4,194,305 bytes, more than the 4,194,304 bytes (4 MiB) a YAML file may "
      "have (MAX_YAML_FILE_BYTES in flows/safe_yaml.py); a longer price sheet can be a CSV, read line by line")),
    ("my.csv", ("kind,cloud,region,instance_type,usd_per_hour,source\nquote,aws,us-east-1,p5.48xlarge,30,\"Q-1\n"
                "quote,aws,us-west-2,p5.48xlarge,31,Q-2\n"),
     ('line 2: a quoted field opens here and is never closed (the file ends inside it, on line 3); expected a closing '
      'quote (a quote inside the field is written "")')),
], ids=["unknown-field", "too-deep", "too-large", "unclosed-quote"])
def test_check_refuses_an_enabled_source_file_the_run_would_refuse(catalog_copy, capsys, name, text, message):
    sheet = enable_price_sheet(catalog_copy, name, text)
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr() == ("", f"hweval: sources.yaml: sources.price_sheet.files[0]: {sheet}: {message}\n")


def test_check_leaves_the_values_of_rows_to_the_runs_suites(catalog_copy, capsys):
    """A value the run quarantines (its row, not the file) passes check: a price of -5 is a row the price_sheet suite
    rejects (quote_price_positive), as a number written as text is (numbers_not_text)."""
    enable_price_sheet(catalog_copy, "my.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: -5, source: q1}
          - {kind: quote, cloud: aws, region: us-west-2, instance_type: p5.48xlarge, usd_per_hour: "31", source: q2}
        """)
    assert main(["check", "--catalog", str(catalog_copy)]) == 0
    assert "source files: 31 files of 12 enabled sources read as a run reads them: OK" in capsys.readouterr().out


def test_check_refuses_a_source_file_dated_later_than_tomorrow(catalog_copy, monkeypatch, capsys):
    monkeypatch.delenv("HWEVAL_ALLOW_FUTURE_AS_OF")  # the suite's own allows its fixtures' dates
    sources = catalog_copy / "sources.yaml"
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    replace_once(sources, "as_of: 2026-11-01", f"as_of: {tomorrow.isoformat()}")  # published_benchmarks' one file
    # tomorrow, as --as-of allows it: a file dated by a machine ahead of UTC
    assert main(["check", "--catalog", str(catalog_copy)]) == 0
    replace_once(sources, f"as_of: {tomorrow.isoformat()}", "as_of: 2099-01-01")
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr().err == (
        f"hweval: sources.yaml: sources.published_benchmarks.files[0].as_of: 2099-01-01 is later than tomorrow "
        f"({tomorrow.isoformat()}, UTC): data is dated by the day it was published or read (set "
        f"HWEVAL_ALLOW_FUTURE_AS_OF=1 if that is what you want)\n")  # check has no --allow-future-as-of
    monkeypatch.setenv("HWEVAL_ALLOW_FUTURE_AS_OF", "1")
    assert main(["check", "--catalog", str(catalog_copy)]) == 0


def test_only_the_files_a_run_reads_are_held_to_their_dates(catalog_copy, monkeypatch):
    """A file the run does not read stops nothing: a disabled source's, one --source gives files for or displaces
    (an offer file replaces the Price List: both price the same SKUs), one whose source reads its API (--live).
    --allow-future-as-of (the flow's allow_future_as_of) allows a later one, as HWEVAL_ALLOW_FUTURE_AS_OF=1 does."""
    from flows.catalog import load_catalog
    from flows.catalog_models import CatalogError

    monkeypatch.delenv("HWEVAL_ALLOW_FUTURE_AS_OF")
    today = dt.date(2026, 12, 4)
    sources = catalog_copy / "sources.yaml"
    replace_once(sources, "as_of: 2026-11-01", "as_of: 2099-01-01")  # published_benchmarks: files only, no live block
    catalog = load_catalog(catalog_copy)
    with pytest.raises(CatalogError, match=r"^sources.yaml: sources.published_benchmarks.files\[0\].as_of: 2099-01-01 "
                                           r"is later than tomorrow \(2026-12-05, UTC\).*\(pass --allow-future-as-of"):
        pipeline.check_files_dated(catalog, today=today)
    pipeline.check_files_dated(catalog, source_files={"published_benchmarks": ["mine.csv"]}, today=today)
    pipeline.check_files_dated(catalog, allow_future=True, today=today)
    disabled = catalog.model_copy(update={"sources": catalog.sources.model_copy(update={"sources": {
        **catalog.sources.sources,
        "published_benchmarks": catalog.sources.sources["published_benchmarks"].model_copy(update={"enabled": False})}})})
    pipeline.check_files_dated(disabled, today=today)
    # aws_pricing's first file (it has a live block): read in a snapshot run, not by --live, nor when an offer
    # file replaces it
    replace_once(sources, "as_of: 2099-01-01", "as_of: 2026-11-01")
    text = sources.read_text()
    first = text.index("as_of:", text.index("  aws_pricing:"))
    sources.write_text(text[:first] + "as_of: 2099-01-02" + text[first + len("as_of: 2026-09-10"):])
    catalog = load_catalog(catalog_copy)
    with pytest.raises(CatalogError, match=r"^sources.yaml: sources.aws_pricing.files\[0\].as_of: 2099-01-02 "):
        pipeline.check_files_dated(catalog, today=today)
    pipeline.check_files_dated(catalog, live=True, today=today)
    pipeline.check_files_dated(catalog, source_files={"aws_offer_file": ["offer.csv"]}, today=today)


def test_check_reports_a_broken_catalog_and_exits_2(catalog_copy, capsys):
    (catalog_copy / "workloads.yaml").write_text("workloads:\n  x-y:\n    kind: training\n    titel: oops\n")
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "hweval: workloads.yaml: workloads.x-y.title: missing required key",
        "workloads.yaml: workloads.x-y.description: missing required key",
        "workloads.yaml: workloads.x-y.model: missing required key",
        "workloads.yaml: workloads.x-y.titel: unknown key (not part of the workloads.yaml schema)",
    ]


def test_check_says_a_catalog_file_that_is_a_directory_is_one(catalog_copy, capsys):
    (catalog_copy / "workloads.yaml").unlink()
    (catalog_copy / "workloads.yaml").mkdir()  # said "file not found" before: it is there, as the wrong thing
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr().err == (f"hweval: workloads.yaml: {catalog_copy}/workloads.yaml is a directory; "
                                       "expected a YAML file\n")
    (catalog_copy / "workloads.yaml").rmdir()
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr().err == f"hweval: workloads.yaml: file not found at {catalog_copy}/workloads.yaml\n"


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_run_prints_where_the_warehouse_and_reports_are(prefect_server, tmp_path, capsys):
    """The installed console script, in its own process, against the test server."""
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value())
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("hweval")), "run", "--as-of", AS_OF.isoformat(),
         "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = re.sub(r"^run 2026-11-30-[0-9a-f]{8} ", "run 2026-11-30-<id> ", proc.stdout, flags=re.M)
    # the snapshot's rows; quarantined: the $0.00 Capacity Block row, GCP's 700.0 placeholder, an H100 PCIe result
    # and one with an empty accelerator (MLPerf Inference), two Gaudi 2 results the catalog lacks (MLPerf Training).
    # Landed 22 + 15 + 18 + 22 + 4 + 36 + 11 + 5 + 31 + 5 + 11 = 180; quarantined 1 + 0 + 1 + 0 + 0 + 2 + 2 + 0 = 6
    assert out == (
        "  aws_pricing: 23 rows in, 22 landed, 1 quarantined\n"
        "  azure_retail: 15 rows in, 15 landed, 0 quarantined\n"
        "  gcp_billing: 19 rows in, 18 landed, 1 quarantined\n"
        "  aws_spot: 22 rows in, 22 landed, 0 quarantined\n"
        "  bedrock_pricing: 4 rows in, 4 landed, 0 quarantined\n"
        "  mlperf_inference_snapshot: 40 rows in, 38 landed, 2 quarantined\n"
        "  mlperf_training_snapshot: 13 rows in, 11 landed, 2 quarantined\n"
        "  published_benchmarks: 5 rows in, 5 landed, 0 quarantined\n"
        "  aws_instance_types: 31 rows in, 31 landed, 0 quarantined\n"
        "  azure_skus: 5 rows in, 5 landed, 0 quarantined\n"
        "  gcp_machine_types: 11 rows in, 11 landed, 0 quarantined\n"
        "run 2026-11-30-<id> as of 2026-11-30: 182 rows landed, 6 quarantined\n"
        f"warehouse: {tmp_path / 'w.duckdb'}\n"
        f"reports:   {tmp_path / 'reports' / '2026-11-30'}/index.md (also {tmp_path / 'reports' / 'latest'}/)\n")
    assert main(["query", "select count(*) as n from marts.rankings", "--warehouse", str(tmp_path / "w.duckdb")]) == 0
    assert "│" in capsys.readouterr().out


def test_the_help_is_given_under_python_oo_without_docstrings():
    """`python -OO` (PYTHONOPTIMIZE=2) strips docstrings, which the help's description is made from: every hweval
    command broke on `None.replace`. The help is then without it."""
    proc = subprocess.run([sys.executable, "-OO", "-c", "import sys; sys.argv = ['hweval', '--help']\n"
                           "from flows.cli import entry\nentry()"], capture_output=True, text=True, cwd=PROJECT_ROOT,
                          timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("usage: hweval ")


def test_the_run_summary_names_the_stale_sources_in_its_last_line():
    """A run with stale sources (exit status 0 while within their max_stale_days) must not end on a line that reads
    as a clean run: the last line counts and names them. Rows: 3 + 0 + 0 landed, 1 + 4 + 0 quarantined."""
    from flows.land import SourceLoad
    from flows.nightly import RunResult
    from flows.run_command import summary_lines

    loads = [SourceLoad("aws_pricing", "aws_pricing", 4, 3, 1),
             SourceLoad("aws_spot", "aws_spot", 4, 0, 4, "stale", "prices moved 10x", dt.date(2026, 11, 29)),
             SourceLoad("price_sheet", "price_sheet", 0, 0, 0, "stale", "SourceFormatError: sheet.yaml", None)]
    result = RunResult("2026-11-30-0a1b2c3d", AS_OF, Path("w.duckdb"), Path("r/2026-11-30"), loads, True)
    assert summary_lines(result) == [
        "  aws_pricing: 4 rows in, 3 landed, 1 quarantined",
        "  aws_spot: STALE (prices moved 10x); using the rows of its last good run, the run of 2026-11-29",
        "  price_sheet: STALE (SourceFormatError: sheet.yaml); using no data from it",
        "run 2026-11-30-0a1b2c3d as of 2026-11-30: 3 rows landed, 5 quarantined; 2 sources STALE (aws_spot, "
        "price_sheet: see above)"]
    assert summary_lines(RunResult("r", AS_OF, Path("w"), Path("r"), loads[1:2], True))[-1] == (
        "run r as of 2026-11-30: 0 rows landed, 4 quarantined; 1 source STALE (aws_spot: see above)")
    assert summary_lines(RunResult("r", AS_OF, Path("w"), Path("r"), loads[:1], True))[-1] == (
        "run r as of 2026-11-30: 3 rows landed, 1 quarantined")


def test_sources_lists_each_source_with_what_it_reads_and_its_last_good_fetch(flow_run, capsys):
    assert main(["sources", "--warehouse", str(flow_run.warehouse)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mode: snapshot")
    lines = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "files (5)" in lines["aws_pricing"]
    assert "last good run 2026-11-30 (data as of 2026-09-10, 22 rows landed)" in lines["aws_pricing"]
    assert "disabled" in lines["price_sheet"] and "never landed" in lines["price_sheet"]
    assert main(["sources", "--live", "--warehouse", str(flow_run.warehouse)]) == 0
    live = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert "live: us-east-1, us-east-2, us-west-2, eu-north-1" in live["aws_pricing"]
    assert "files (3)" in live["mlperf_inference_snapshot"]  # no live API: it reads its files in either mode
    # each column starts at one place on every line, the longest kind (vertex_model_prices) included
    assert len({line.index(" files (") if " files (" in line else line.index(" disabled")
                for line in lines.values()}) == 1


def test_readme_report_excerpts_are_real_report_output():
    """The README quotes report lines; they must match the reviewed golden reports word for word."""
    readme = (PROJECT_ROOT / "README.md").read_text()
    golden = "\n".join(p.read_text() for p in (PROJECT_ROOT / "tests" / "golden").glob("*.md"))
    quotes, current = [], []
    for line in readme.splitlines() + [""]:
        if line.startswith("> "):
            current.append(line[2:])
        elif current:
            quotes.append(" ".join(current))
            current = []
    assert len(quotes) >= 2
    for quote in quotes:
        assert quote.lstrip("- ") in golden, quote
    table_rows = [line for line in readme.split("## What comes out", 1)[1].split("## How it works", 1)[0].splitlines()
                  if line.startswith("| ") and not line.startswith("| rank")]
    gpt3 = (PROJECT_ROOT / "tests" / "golden" / "gpt3-175b-pretrain.md").read_text()
    for row in table_rows:
        rank, offer, *_ , outcome, likely, energy, basis = [c.strip() for c in row.strip("|").split("|")]
        assert f"| {rank} | {offer} |" in gpt3 and f"| {outcome} | {likely} | {energy} | {basis} |" in gpt3, row


@pytest.mark.parametrize("latest_updated", [True, False])
def test_run_takes_relative_paths_from_the_working_directory_and_says_what_happened_to_latest(
        tmp_path, monkeypatch, capsys, latest_updated):
    """The flow gets absolute paths; the line about reports/latest says what the run did (the flow's result)."""
    import datetime as dt

    from flows import nightly, run_command, run_startup

    given = {}

    def flow(**kwargs):
        given.update(kwargs)
        return nightly.RunResult("r1", dt.date(2026, 11, 1), Path(kwargs["warehouse_file"]),
                                 Path(kwargs["reports_dir"]) / "2026-11-01", [], latest_updated)

    monkeypatch.setattr(nightly, "nightly", flow)
    monkeypatch.setattr(run_command, "check_run_inputs", lambda args, source_files: None)  # catalog `cat` is not there
    monkeypatch.setattr(run_startup, "finish_catalog_check", lambda catalog_dir: None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # not reached: the flow is replaced
    assert main(["run", "--as-of", "2026-11-01", "--catalog", "cat", "--warehouse", "w/h.duckdb",
                 "--reports", "../r"]) == 0
    assert (given["catalog_dir"], given["warehouse_file"], given["reports_dir"]) == (
        str(tmp_path / "cat"), str(tmp_path / "w" / "h.duckdb"), str(tmp_path.parent / "r"))
    assert given["allow_future_as_of"] is False
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == f"reports:   {tmp_path.parent / 'r' / '2026-11-01'}/index.md " + (
        f"(also {tmp_path.parent / 'r' / 'latest'}/)" if latest_updated
        else "(a backfill: reports/latest keeps a newer date)")


def test_run_without_a_prefect_server_starts_prefects_and_checks_the_catalog_meanwhile(monkeypatch, tmp_path, capsys):
    """No PREFECT_API_URL: a temporary Prefect server is started (a process), the catalog is checked while it starts,
    and the flow is called once it has started, not before."""
    import datetime as dt

    from flows import cancellation, nightly, run_command, run_startup

    calls = []

    class Started:
        def attach(self):
            calls.append("server attached")
            return self

        def wait_ready(self):
            calls.append("server joined")

        def flows_settings(self):
            return contextlib.nullcontext()

    def flow(**kwargs):
        # not watched for a cancel (flows/cancellation.py): a temporary server has no UI, and nobody can cancel there
        calls.append("flow" if cancellation._watch is None else "flow, watched")
        return nightly.RunResult("r1", dt.date(2026, 11, 1), Path(kwargs["warehouse_file"]),
                                 Path(kwargs["reports_dir"]) / "2026-11-01", [], True)

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(run_startup, "launch_temporary_server", lambda: calls.append("server launched") or Started())
    monkeypatch.setattr(run_command, "check_run_settings", lambda args: calls.append("settings checked"))
    monkeypatch.setattr(run_startup, "warm_catalog_check", lambda catalog_dir: calls.append(f"catalog {catalog_dir}"))
    monkeypatch.setattr(run_startup, "warm_flow_imports", lambda: calls.append("flow's imports"))
    monkeypatch.setattr(run_command, "check_run_inputs", lambda args, source_files: calls.append("inputs checked"))
    monkeypatch.setattr(run_startup, "finish_catalog_check",
                        lambda catalog_dir: calls.append(f"catalog {catalog_dir}'s figures checked"))
    monkeypatch.setattr(nightly, "nightly", flow)
    assert main(["run", "--as-of", "2026-11-01", "--catalog", "cat", "--warehouse", str(tmp_path / "w.duckdb"),
                 "--reports", str(tmp_path / "r")]) == 0
    # launched first, so that it starts while the settings are checked (their imports), the catalog and the flags too;
    # then the catalog's load, whose figures' check begins in GX's process: its import of GX, the longest start of the
    # three, overlaps this process's imports (the settings' and the flow's) as well as the server's; the check is
    # waited for with the run's inputs, once this process's own work is done
    assert calls == ["server launched", "catalog cat", "settings checked", "server attached", "flow's imports",
                     "inputs checked", "catalog cat's figures checked", "server joined", "flow"]
    assert capsys.readouterr().err == SERVER_LINE


SERVER_LINE = ("hweval: no PREFECT_API_URL set; a temporary local Prefect server starts for this run (it answers in "
               "about 2 s, while the run gets ready; more on the first run, which creates its database).\n")


def refused_run_setup(monkeypatch, server_answers: bool = True) -> list[str]:
    """`hweval run` in this process with a stand-in temporary server, no flow imports ahead, and a flow that must not
    start; returns the list of what was done to the server, in order."""
    from flows import nightly, run_startup
    from flows.prefect_server import ServerStartError

    calls: list[str] = []

    class Started:
        def attach(self):
            return self

        def wait_ready(self):
            calls.append("server waited for")
            if not server_answers:
                raise ServerStartError("it did not answer")

        def stop(self):
            calls.append("server stopped")

    def flow(**kwargs):
        raise AssertionError("the flow started")

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(run_startup, "launch_temporary_server", lambda: calls.append("server launched") or Started())
    monkeypatch.setattr(run_startup, "warm_flow_imports", lambda: None)
    monkeypatch.setattr(nightly, "nightly", flow)
    return calls


@pytest.mark.parametrize(("args", "error"), [
    (["--source", "nosuch=/x"], "--source nosuch=...: no source 'nosuch' in sources.yaml (expected one of {sources})"),
    (["--accept-changes", "aws_pricnig"],
     "--accept-changes aws_pricnig: no such source in sources.yaml (expected one of {sources})"),
])
def test_a_refused_input_is_one_line_without_the_temporary_servers(monkeypatch, tmp_path, capsys, catalog, args,
                                                                    error):
    """README: a typo in --source or --accept-changes is "refused in one line (exit 2) before the flow starts"; without
    PREFECT_API_URL the server's line came first. The server still launches first (it starts while the inputs are
    checked), and is stopped at the refusal."""
    from flows import run_startup

    calls = refused_run_setup(monkeypatch)
    monkeypatch.setattr(run_startup, "warm_catalog_check", lambda catalog_dir: None)
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb"), "--reports",
                 str(tmp_path / "r"), *args]) == 2
    sources = ", ".join(sorted(catalog.sources.sources))
    assert capsys.readouterr().err == f"hweval: {error.format(sources=sources)}\n"
    assert calls == ["server launched", "server stopped"]


@pytest.mark.parametrize("server_answers", [True, False])
def test_a_catalog_figure_that_fails_its_check_is_refused_in_one_line_before_the_server_is_waited_for(
        monkeypatch, tmp_path, capsys, catalog_copy, server_answers):
    """The figures' check begun while the server starts (in GX's process) is taken with the run's inputs: a figure that
    fails is refused in its one line (exit 2), the server stopped and never waited for, whether or not it would have
    answered (a review found it taken after the server's wait: the server's line came first, and a server that failed
    to start hid the catalog's error behind exit 1)."""
    path = catalog_copy / "accelerators.yaml"
    path.write_text(path.read_text().replace("memory_gb: {value: 103.08, source: aws-neuron-trainium2",
                                             "memory_gb: {value: 512, source: aws-neuron-trainium2"))
    calls = refused_run_setup(monkeypatch, server_answers)
    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    assert main(["run", "--as-of", "2026-11-30", "--catalog", str(catalog_copy), "--warehouse",
                 str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "r")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("hweval: accelerators.yaml: accelerators.trainium2.memory_gb: 512 fails "
                           "memory_per_chip_plausible")
    assert calls == ["server launched", "server stopped"]


def test_the_temporary_server_is_launched_without_event_storage_or_trigger_loops(monkeypatch, tmp_path):
    """`hweval run` sets PREFECT_DEFAULTS before it launches its temporary server, which inherits them: no event
    persister, no proactive triggers (their writes met the flow's in SQLite: 503, then a 2 s retry)."""
    from flows import run_startup

    keys = ("PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED", "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED")
    seen = {}

    class Launched(Exception):
        pass

    def launch():
        seen.update({key: os.environ.get(key) for key in keys})
        raise Launched

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    for key in keys:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(run_startup, "launch_temporary_server", launch)
    with pytest.raises(Launched):
        main(["run", "--as-of", "2026-11-01", "--warehouse", str(tmp_path / "w.duckdb"), "--reports",
              str(tmp_path / "r")])
    assert seen == dict.fromkeys(keys, "false")


@pytest.mark.parametrize("own_process", [True, False])
def test_the_hweval_command_freezes_what_it_loaded_before_the_flow_and_a_test_calling_main_does_not(
        monkeypatch, tmp_path, own_process):
    """In its own process (entry()), `hweval run` imports what it needs before the flow with fewer garbage collections,
    then sets Python's thresholds back and moves what it has loaded out of the collector's reach (gc.freeze:
    flows/startup_gc.py); main() called in another program's process (these tests) leaves that process's collector
    alone."""
    import datetime as dt
    import gc

    from flows import nightly, run_command, startup_gc

    calls = []

    def flow(**kwargs):
        calls.append("flow")
        return nightly.RunResult("r1", dt.date(2026, 11, 1), Path(kwargs["warehouse_file"]),
                                 Path(kwargs["reports_dir"]) / "2026-11-01", [], True)

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # not reached: the flow is replaced
    monkeypatch.setattr(run_command, "OWN_PROCESS", own_process)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("frozen"))
    monkeypatch.setattr(gc, "set_threshold", lambda *thresholds: calls.append(thresholds))
    monkeypatch.setattr(nightly, "nightly", flow)
    assert main(["run", "--as-of", "2026-11-01", "--warehouse", str(tmp_path / "w.duckdb"),
                 "--reports", str(tmp_path / "r")]) == 0
    assert calls == ([startup_gc.IMPORT_THRESHOLD, gc.get_threshold(), "frozen", "flow"] if own_process
                     else ["flow"])


def test_the_console_script_is_entry_which_skips_the_last_full_collection_at_exit(tmp_path):
    """pyproject's `hweval` is cli.entry: it exits with main()'s status, with the objects frozen (gc.freeze), so that
    the interpreter's last collection does not walk them (1-3 s after a run, measured); atexit handlers still run. Its
    one run stops GX's process once its Data Docs are built (gx_process.RELEASE_AFTER_SITE)."""
    import tomllib

    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["hweval"] == "flows.cli:entry"
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            "atexit.register(lambda: print('GX released after the Data Docs:',\n"
            "                              __import__('flows.gx_process').gx_process.RELEASE_AFTER_SITE))\n"
            "sys.argv = ['hweval', 'check', '--catalog', sys.argv[1]]\n"
            "from flows.cli import entry\n"
            "entry()\n")
    bad = tmp_path / "no-catalog"
    proc = subprocess.run([sys.executable, "-c", code, str(bad)], capture_output=True, text=True, cwd=PROJECT_ROOT,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr  # main()'s status for a bad catalog, through entry()
    assert "hweval:" in proc.stderr
    # atexit runs its handlers last registered first; GX's process goes once a run's Data Docs are built
    assert proc.stdout.splitlines() == ["GX released after the Data Docs: True", "frozen at exit: True"]


def test_the_command_stops_the_gx_process_at_its_end_without_waiting():
    """entry() stops Great Expectations' process as the command ends, mid-call: Python's exit waited for its call to
    end (a run refused in its first seconds waited ~2.5 s more for the catalog check begun meanwhile to import GX).
    main() stands in for such a run: it leaves the process a call of 60 s, and the command ends at once."""
    code = textwrap.dedent("""
        import time
        import flows.cli as cli
        from flows import gx_process

        def main():
            busy = gx_process._submit(time.sleep, 60)
            while not busy.future.running():  # handed to the process: its exit would wait for it
                time.sleep(0.05)
            print(*gx_process._pool._processes, flush=True)
            return 2

        cli.main = main
        cli.entry()
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=45,
                          check=False)
    assert proc.returncode == 2, proc.stderr
    assert gone(int(proc.stdout.split()[0]), within_s=10)
    assert "leaked semaphore" not in proc.stderr  # the pool's queues closed all the same


@pytest.mark.parametrize("args", [
    ["query", "describe t", "--warehouse", "{tmp}/w.duckdb"],  # a traceback, exit 1 (`... | head -5`)
    ["query", "select range from range(100000)", "--format", "csv", "--max-rows", "100000", "--warehouse",
     "{tmp}/w.duckdb"],
    # lines Python held in its buffer, written at exit: "Exception ignored ... BrokenPipeError" and exit 120
    ["sources", "--catalog", str(CATALOGS), "--warehouse", "{tmp}/none.duckdb"],
    ["check", "--catalog", str(CATALOGS)],
])
def test_a_command_whose_reader_closed_its_output_ends_quietly_with_status_141(tmp_path, args):
    """`hweval ... | head`: stdout's reader gone, the command stops with no traceback, as one SIGPIPE ended (141)."""
    import duckdb

    duckdb.connect(str(tmp_path / "w.duckdb")).execute("create table t (n integer)").close()
    code = "import sys\nsys.argv = ['hweval', *sys.argv[1:]]\nfrom flows.cli import entry\nentry()\n"
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}  # buffered, as usual
    reader, writer = os.pipe()
    os.close(reader)  # closed before the command writes: its first write finds no reader, as `| true` gives it
    try:
        proc = subprocess.run([sys.executable, "-c", code, *(arg.format(tmp=tmp_path) for arg in args)],
                              stdout=writer, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT, env=env,
                              timeout=120)
    finally:
        os.close(writer)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback():
    """Ctrl-C (a KeyboardInterrupt wherever the command was; main() stands in for it): one line, as `hweval query`'s
    own handling says it, and the process ends by SIGINT, as Python ends one (a shell says 130, and a script's loop
    stops there; `hweval query`, once its handler is set, exits 130 itself)."""
    ctrl_c = "raise KeyboardInterrupt"
    # a library's own error from it, a few causes down (pydantic, as it serializes Prefect's states, raises
    # PydanticSerializationError from the KeyboardInterrupt)
    caused = ("try:\n        raise KeyboardInterrupt\n    except KeyboardInterrupt as exc:\n"
              "        field = ValueError('a field')\n        field.__cause__ = exc\n"
              "        raise RuntimeError('serializing') from field")
    # a group of errors (an anyio task group's) of Ctrl-Cs alone, one of them in a group of its own and one behind an
    # error raised from it
    grouped = ("caused = RuntimeError('serializing')\n    caused.__cause__ = KeyboardInterrupt()\n"
               "    raise BaseExceptionGroup('tasks', [KeyboardInterrupt(), "
               "BaseExceptionGroup('inner', [KeyboardInterrupt()]), caused])")
    # a group raised from a Ctrl-C, of an error of its own (a task cancelled by it)
    group_caused = ("try:\n        raise KeyboardInterrupt\n    except KeyboardInterrupt as exc:\n"
                    "        raise ExceptionGroup('tasks', [RuntimeError('cancelled')]) from exc")
    # pydantic's JSON serializer (Prefect's states to JSON): its error keeps only the text of the KeyboardInterrupt
    in_json = ("from pydantic import BaseModel, field_serializer\n\n    class State(BaseModel):\n        x: int = 1\n\n"
               "        @field_serializer('x')\n        def interrupted(self, x):\n            raise KeyboardInterrupt\n\n"
               "    State().model_dump_json()")
    for body in (ctrl_c, caused, grouped, group_caused, in_json):
        code = f"import flows.cli as cli\n\ndef interrupted():\n    {body}\n\ncli.main = interrupted\ncli.entry()\n"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT,
                              timeout=120, check=False)
        assert (proc.returncode, proc.stderr) == (-signal.SIGINT, "hweval: interrupted (Ctrl-C)\n"), body
    # a command that said its own Ctrl-C and returned 130 (`hweval query`): nothing more said, and ended by SIGINT too
    code = "import sys\nimport flows.cli as cli\ncli.main = lambda: print('said', file=sys.stderr) or 130\ncli.entry()\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120,
                          check=False)
    assert (proc.returncode, proc.stderr) == (-signal.SIGINT, "said\n")
    # an exit with a status of its own is that exit, whatever it was raised from
    code = ("import flows.cli as cli\n\ndef exits():\n    try:\n        raise KeyboardInterrupt\n"
            "    except KeyboardInterrupt as exc:\n        raise SystemExit(3) from exc\n\ncli.main = exits\ncli.entry()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120,
                          check=False)
    assert (proc.returncode, proc.stderr) == (3, "")
    # an error with no Ctrl-C behind it is the failure it is: its traceback, status 1; so is one raised while a Ctrl-C
    # was handled (its context, not its cause: an undo that failed on a full disk)
    during = ("try:\n        raise KeyboardInterrupt\n    except KeyboardInterrupt:\n"
              "        raise OSError(28, 'No space left on device')")
    # a group that holds a Ctrl-C and an error of its own: the error is a failure, the group's traceback says it
    mixed = "raise BaseExceptionGroup('tasks', [KeyboardInterrupt(), ZeroDivisionError('division by zero')])"
    for body, said in (("1 / 0", "ZeroDivisionError: division by zero"),
                       (during, "OSError: [Errno 28] No space left on device"),
                       (mixed, "ZeroDivisionError: division by zero\n    +------------------------------------")):
        code = f"import flows.cli as cli\n\ndef failed():\n    {body}\n\ncli.main = failed\ncli.entry()\n"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT,
                              timeout=120, check=False)
        assert proc.returncode == 1 and proc.stderr.strip().endswith(said), body


def test_only_a_ctrl_c_inside_pydantics_json_serializer_is_taken_for_one():
    """pydantic's JSON serializer keeps only the text of an error raised inside it, with no cause: the text says a
    KeyboardInterrupt, or another error, which is a failure as any other."""
    from pydantic import BaseModel, field_serializer
    from pydantic_core import PydanticSerializationError

    def raised(error: BaseException) -> BaseException:
        class State(BaseModel):
            x: int = 1

            @field_serializer("x")
            def failing(self, x):
                raise error

        with pytest.raises(PydanticSerializationError) as caught:
            State().model_dump_json()
        return caught.value

    ctrl_c = raised(KeyboardInterrupt())
    assert str(ctrl_c) == ("Error serializing to JSON: PydanticSerializationError: Error calling function `failing`: "
                           "KeyboardInterrupt: ") and ctrl_c.__cause__ is None and ctrl_c.__context__ is None
    assert cli._is_ctrl_c(ctrl_c)
    assert not cli._is_ctrl_c(raised(ValueError("KeyboardInterrupt")))  # another error, whatever its message
    assert not cli._is_ctrl_c(raised(RuntimeError("cleanup failed: KeyboardInterrupt: ")))  # even one ending as it
    assert not cli._is_ctrl_c(PydanticSerializationError("unknown type: KeyboardInterrupt"))

    # nested as deep as the serializers were (a model's JSON made inside another's serializer): a Ctrl-C still
    class Inner(BaseModel):
        x: int = 1

        @field_serializer("x")
        def interrupted(self, x):
            raise KeyboardInterrupt

    class Outer(BaseModel):
        y: int = 1

        @field_serializer("y")
        def inner_json(self, y):
            return Inner().model_dump_json()

    with pytest.raises(PydanticSerializationError) as nested:
        Outer().model_dump_json()
    assert str(nested.value).count("Error serializing to JSON") == 2 and cli._is_ctrl_c(nested.value)


def test_a_failed_run_whose_reader_closed_its_output_keeps_its_status_and_says_why():
    """`hweval run ... | true` for a run that fails (3, sources stale past their limit): its stdout summary finds no
    reader, and the run goes on to print its failure on stderr and exit 3, not 141 (a closed pipe) or 0. main() stands
    in for the run: the summary's lines, then the failure line, then its status."""
    code = textwrap.dedent("""
        import sys
        import flows.cli as cli

        def run():
            for n in range(10_000):
                print(f"  source {n}: 1 rows in, 1 landed, 0 quarantined")
            print("hweval: STALE PAST ITS LIMIT: aws_spot", file=sys.stderr)
            return 3  # EXIT_STALE_PAST_LIMIT

        cli.main = run
        cli.entry()
    """)
    reader, writer = os.pipe()
    os.close(reader)
    try:
        proc = subprocess.run([sys.executable, "-c", code], stdout=writer, stderr=subprocess.PIPE, text=True,
                              cwd=PROJECT_ROOT, timeout=120)
    finally:
        os.close(writer)
    assert (proc.returncode, proc.stderr) == (3, "hweval: STALE PAST ITS LIMIT: aws_spot\n")
    # stdout closed before the command started (`>&-`: Python's sys.stdout is None): the same, not a traceback
    proc = subprocess.run(["sh", "-c", f'"{sys.executable}" -c "$0" >&-', code], stderr=subprocess.PIPE, text=True,
                          cwd=PROJECT_ROOT, timeout=120)
    assert (proc.returncode, proc.stderr) == (3, "hweval: STALE PAST ITS LIMIT: aws_spot\n")


# the exit status kept when stderr closed: one case in make test, the other (1.8 s, a process of its own) in make test-slow
@pytest.mark.parametrize(("status", "expected"), [(0, 141), pytest.param(3, 3, marks=pytest.mark.slow)])
def test_a_command_whose_log_reader_closed_stderr_goes_on_and_ends_with_its_status(tmp_path, status, expected):
    """`hweval run 2>&1 | head`: stdout and stderr on one pipe whose reader is gone. A log line then raised
    BrokenPipeError in the console of Prefect's log handler, and rich answers a broken pipe with SystemExit(1): the
    run failed (exit 1) and published nothing. Now the command goes on to its end (here: 10,000 lines logged through
    a rich console on stderr, as Prefect's handler prints them, then the work, a file written) and exits 141 if it
    succeeded, else with its own status."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from rich.console import Console
        import flows.cli as cli

        def run():
            console = Console(stderr=True)  # sys.stderr, as it is when the command's main() runs
            for n in range(10_000):
                console.print(f"line {{n}} of the run's log", soft_wrap=True)
                print(f"  source {{n}}: 1 rows in, 1 landed, 0 quarantined")
            Path({str(tmp_path / "published")!r}).write_text("published")
            return {status}

        cli.main = run
        cli.entry()
    """)
    reader, writer = os.pipe()
    os.close(reader)
    try:
        proc = subprocess.run([sys.executable, "-c", code], stdout=writer, stderr=writer, cwd=PROJECT_ROOT,
                              timeout=120)
    finally:
        os.close(writer)
    assert proc.returncode == expected
    assert (tmp_path / "published").read_text() == "published"  # the run went on to its end
    # both closed before the command started (`>&- 2>&-`): the same
    (tmp_path / "published").unlink()
    proc = subprocess.run(["sh", "-c", f'"{sys.executable}" -c "$0" >&- 2>&-', code], cwd=PROJECT_ROOT, timeout=120)
    assert proc.returncode == (0 if status == 0 else status)  # nothing was written to a reader that left
    assert (tmp_path / "published").read_text() == "published"


def test_the_temporary_server_is_launched_before_the_run_imports_its_libraries():
    """`hweval run` launches its server first: its start (its own imports, 8 s on a 2-core machine) is what a re-run
    waits on, and the pipeline's libraries took 1.3 s to import before it when main() imported its error classes
    up front. At the launch, none of them is imported yet."""
    code = textwrap.dedent("""
        import sys
        from flows import cli, prefect_server
        def launch():
            heavy = ("duckdb", "pandas", "pyarrow", "polars", "pydantic", "great_expectations", "prefect", "yaml")
            print(sorted(name for name in heavy if name in sys.modules))
            sys.exit(0)
        prefect_server.TemporaryServer.launch = staticmethod(launch)
        cli.main(["run", "--as-of", "2026-11-30"])
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_an_error_main_reports_in_one_line_has_its_exit_status_and_another_raises(monkeypatch, capsys):
    from flows import cli
    from flows.catalog import CatalogError
    from flows.lake import LakeUnavailable

    for exc, status in ((CatalogError("catalogs/x.yaml: broken"), 2), (LakeUnavailable("the lake is down"), 1)):
        monkeypatch.setattr(cli, "cmd_check", lambda args, exc=exc: (_ for _ in ()).throw(exc))
        assert cli.main(["check"]) == status
        assert capsys.readouterr().err == f"hweval: {exc}\n"
    monkeypatch.setattr(cli, "cmd_check", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # unexpected: its traceback
        cli.main(["check"])


def test_a_setting_that_fails_its_check_stops_the_server_launched_for_the_run(monkeypatch, capsys):
    from flows import cli, prefect_server

    launched = []

    def launch(self):
        self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        launched.append(self.process)

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(prefect_server.TemporaryServer, "_launch", launch)
    monkeypatch.setenv("HWEVAL_CHART_WORKERS", "all")
    assert cli.main(["run", "--as-of", "2026-11-30"]) == 2
    [process] = launched
    assert process.poll() is not None  # stopped, not left to start for nothing
    assert capsys.readouterr().err.startswith("hweval: HWEVAL_CHART_WORKERS='all': expected a whole number")


def test_an_hweval_gx_process_that_is_neither_0_nor_1_stops_the_run_before_it_starts(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no temporary server: the check comes first
    monkeypatch.setenv("HWEVAL_GX_PROCESS", "yes")
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert capsys.readouterr().err.startswith("hweval: HWEVAL_GX_PROCESS='yes': expected 1")
    assert not (tmp_path / "w.duckdb").exists()


def test_an_hweval_notify_outbox_that_is_a_file_stops_the_run_before_it_starts(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no temporary server: the check comes first
    (tmp_path / "outbox").write_text("not a folder")
    monkeypatch.setenv("HWEVAL_NOTIFY_OUTBOX", str(tmp_path / "outbox"))
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    assert capsys.readouterr().err == (f"hweval: HWEVAL_NOTIFY_OUTBOX={str(tmp_path / 'outbox')!r} is a file, not a "
                                       "folder\n")
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.slow  # a whole run: make test-slow and CI
def test_the_flow_takes_the_catalog_loaded_while_the_server_started(prefect_server, tmp_path, monkeypatch):
    from flows import nightly as nightly_module
    from flows.catalog import load_catalog_ahead

    root = paths.absolute(CATALOGS)
    load_catalog_ahead(root)

    def not_again(path, *args, **kwargs):
        raise AssertionError(f"the flow loaded {path} again")

    monkeypatch.setattr(nightly_module, "load_catalog", not_again)
    result = nightly_module.nightly(as_of=AS_OF, catalog_dir=str(root), warehouse_file=str(tmp_path / "w.duckdb"),
                                    reports_dir=str(tmp_path / "reports"))
    assert sum(load.rows_landed for load in result.loads) == 182  # the snapshot's rows, as every run lands them


@pytest.mark.slow  # Prefect's temporary server, started for the run: make test-slow and CI
def test_run_with_its_own_temporary_prefect_server(tmp_path):
    """`hweval run` as `make run` runs it: no PREFECT_API_URL, so a temporary server is started (a process) while the
    run checks its catalog; the run succeeds, and the check it did meanwhile is in the cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env |= PREFECT_DEFAULTS | {"PREFECT_HOME": str(tmp_path / "prefect-home"), "HWEVAL_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("hweval")), "run", "--as-of", AS_OF.isoformat(),
         "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no PREFECT_API_URL set; a temporary local Prefect server starts for this run" in proc.stderr
    assert "View at" not in proc.stderr and "Error logging to API" not in proc.stderr
    # GX's process, idle at the end, shut down in order: no "resource_tracker: ... leaked semaphore objects" at exit
    assert "leaked semaphore" not in proc.stderr, proc.stderr[-2000:]
    assert re.search(r"^run 2026-11-30-[0-9a-f]{8} as of 2026-11-30: 182 rows landed, 6 quarantined$", proc.stdout,
                     flags=re.MULTILINE)
    assert len(list((tmp_path / "cache" / "catalog-checks").glob("*.passed"))) == 1
    # its server recorded the flow run and its 15 task runs (11 fetches, land, build and render, publish, artifacts),
    # and wrote no events: no event feed, no trims or trigger evaluations to collide with the flow's writes
    with sqlite3.connect(tmp_path / "prefect-home" / "prefect.db") as db:
        assert db.execute("select count(*) from flow_run").fetchone() == (1,)
        assert db.execute("select count(*) from task_run").fetchone() == (15,)
        assert db.execute("select count(*) from events").fetchone() == (0,)


# ----------------------------------------------------------------- hweval run: settings refused before the run starts

@pytest.fixture
def flow_not_started(monkeypatch):
    """The flow replaced by one that fails the test if called; no temporary Prefect server (PREFECT_API_URL set)."""
    from flows import nightly

    def flow(**kwargs):
        raise AssertionError("the flow started")

    monkeypatch.setattr(nightly, "nightly", flow)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # not reached: the flow is replaced


@pytest.mark.parametrize(("layout", "args", "error"), [
    ({"reports": "file"}, ["--reports", "{tmp}/reports"],
     ("the reports folder {tmp}/reports is not a directory; expected a directory, or a path where one can be created "
      "(--reports)")),
    ({"reports": "file"}, ["--reports", "{tmp}/reports/2026"],
     ("the reports folder {tmp}/reports/2026 cannot be created ({tmp}/reports is not a directory); expected a "
      "directory, or a path where one can be created (--reports)")),
    ({"w.duckdb": "dir"}, ["--warehouse", "{tmp}/w.duckdb"],
     ("the warehouse {tmp}/w.duckdb is a directory; expected a DuckDB file, or a path where one can be created "
      "(--warehouse)")),
    ({"wh": "file"}, ["--warehouse", "{tmp}/wh/w.duckdb"],
     ("the warehouse's folder {tmp}/wh is not a directory; expected a directory, or a path where one can be created "
      "(--warehouse)")),
    # a file that is there but no DuckDB database (a typo'd path to a CSV): a traceback from inside the flow before,
    # exit 1, recorded as a failed run; "i am a file\n" has no DUCK at bytes 8-11
    ({"w.csv": "file"}, ["--warehouse", "{tmp}/w.csv"],
     ("the warehouse {tmp}/w.csv is a file but not a DuckDB database; expected a DuckDB file, or a path where one "
      "can be created (--warehouse)")),
    ({"empty.duckdb": "empty"}, ["--warehouse", "{tmp}/empty.duckdb"],
     ("the warehouse {tmp}/empty.duckdb is a file but not a DuckDB database; expected a DuckDB file, or a path where "
      "one can be created (--warehouse)")),
])
def test_run_refuses_a_warehouse_or_reports_path_it_cannot_use_before_it_starts(flow_not_started, tmp_path, capsys,
                                                                                layout, args, error):
    for name, kind in layout.items():
        (tmp_path / name).mkdir() if kind == "dir" else (tmp_path / name).write_text(
            "" if kind == "empty" else "i am a file\n")
    given = {"--warehouse": str(tmp_path / "ok" / "w.duckdb"), "--reports": str(tmp_path / "ok" / "reports")}
    given |= dict(zip(args[::2], [a.format(tmp=tmp_path) for a in args[1::2]], strict=True))
    assert main(["run", "--as-of", "2026-11-30", *[x for pair in given.items() for x in pair]]) == 2
    assert capsys.readouterr().err == f"hweval: {error.format(tmp=tmp_path)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(layout)  # nothing made


def test_a_path_error_names_what_set_the_path(flow_not_started, tmp_path, capsys, monkeypatch):
    """The option when given, else HWEVAL_WAREHOUSE / HWEVAL_REPORTS_DIR when set, else the default: it named the
    option even when the path came from the environment, which the user had not typed."""
    (tmp_path / "file").write_text("i am a file\n")
    monkeypatch.setenv("HWEVAL_WAREHOUSE", str(tmp_path / "file" / "w.duckdb"))
    assert main(["run", "--as-of", "2026-11-30", "--reports", str(tmp_path / "reports")]) == 2
    assert capsys.readouterr().err == (f"hweval: the warehouse's folder {tmp_path}/file is not a directory; expected a "
                                       "directory, or a path where one can be created (HWEVAL_WAREHOUSE)\n")
    monkeypatch.setenv("HWEVAL_WAREHOUSE", str(tmp_path / "w.duckdb"))
    monkeypatch.delenv("HWEVAL_REPORTS_DIR", raising=False)
    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path / "file")  # the default reports folder: under a file
    assert main(["run", "--as-of", "2026-11-30"]) == 2
    assert capsys.readouterr().err == (
        f"hweval: the reports folder {tmp_path}/file/reports cannot be created ({tmp_path}/file is not a directory); "
        "expected a directory, or a path where one can be created (the default; --reports or HWEVAL_REPORTS_DIR "
        "moves it)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing made


def test_run_refuses_a_reports_folder_it_cannot_create_or_write_before_it_starts(flow_not_started, tmp_path, capsys):
    # /proc takes no new directory, not even root's (chmod would not stop root); found after the fetch before
    reports = "/proc/hweval-test-reports"
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb"), "--reports", reports]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hweval: the reports folder {reports} cannot be created or written to (")
    assert err.endswith("); expected a directory this user can write (--reports)\n") and err.count("\n") == 1


@pytest.mark.parametrize(("wait", "env", "error"), [
    ("nan", None, "--wait 'nan': expected a number of seconds from 0 to 86400"),
    ("inf", None, "--wait 'inf': expected a number of seconds from 0 to 86400"),
    ("-1", None, "--wait '-1': expected a number of seconds from 0 to 86400"),
    ("86401", None, "--wait '86401': expected a number of seconds from 0 to 86400"),
    (None, "abc", "HWEVAL_LOCK_WAIT_S='abc': expected a number of seconds from 0 to 86400"),
    (None, "nan", "HWEVAL_LOCK_WAIT_S='nan': expected a number of seconds from 0 to 86400"),
])
def test_run_refuses_a_wait_that_is_no_number_of_seconds_before_it_starts(flow_not_started, tmp_path, monkeypatch,
                                                                         capsys, wait, env, error):
    if env is not None:
        monkeypatch.setenv("HWEVAL_LOCK_WAIT_S", env)
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb"), "--reports",
                 str(tmp_path / "r"), *(["--wait", wait] if wait is not None else [])]) == 2
    assert capsys.readouterr().err == f"hweval: {error}\n"
    assert list(tmp_path.iterdir()) == []


def test_the_run_lock_refuses_a_nan_wait_it_would_never_reach(tmp_path):
    from flows import runlock

    with (pytest.raises(runlock.WaitSettingError, match=r"^wait_s=nan: expected a number of seconds from 0 to 86400$"),
          runlock.exclusive(tmp_path / "w.duckdb", tmp_path / "r", float("nan"), print)):
        pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["false", "no", "off", "true", "2"])
def test_an_hweval_allow_future_as_of_that_is_neither_0_nor_1_is_refused(flow_not_started, tmp_path, monkeypatch,
                                                                        capsys, value):
    monkeypatch.setenv("HWEVAL_ALLOW_FUTURE_AS_OF", value)
    for as_of in (["--as-of", "9999-12-31"], []):  # with a date it would have allowed, and without one
        assert main(["run", *as_of, "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "r")]) == 2
        assert capsys.readouterr().err == (f"hweval: HWEVAL_ALLOW_FUTURE_AS_OF={value!r}: expected 1 (allow an as-of "
                                           "date later than tomorrow) or 0 (refuse it, the default)\n")
    assert list(tmp_path.iterdir()) == []


def test_hweval_allow_future_as_of_1_allows_a_future_as_of_and_0_refuses_it(monkeypatch, tmp_path, capsys):
    from flows import nightly, pipeline

    monkeypatch.setattr(nightly, "nightly", lambda **kwargs: nightly.RunResult(
        "r1", kwargs["as_of"], Path(kwargs["warehouse_file"]), Path(kwargs["reports_dir"]) / "9999-12-31", [], True))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # not reached: the flow is replaced
    run = ["run", "--as-of", "9999-12-31", "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "r")]
    monkeypatch.setenv("HWEVAL_ALLOW_FUTURE_AS_OF", "1")
    assert main(run) == 0
    monkeypatch.setenv("HWEVAL_ALLOW_FUTURE_AS_OF", "0")
    assert main(run) == 2
    assert "hweval: --as-of 9999-12-31 is later than tomorrow (" in capsys.readouterr().err
    assert pipeline.future_as_of_allowed({}) is False
    assert pipeline.future_as_of_allowed({"HWEVAL_ALLOW_FUTURE_AS_OF": " 1 "}) is True


@pytest.mark.parametrize("text", ["20261130", "2026-W48-1"])
def test_run_refuses_an_as_of_not_written_yyyy_mm_dd(flow_not_started, capsys, text):
    """Python 3.11's date.fromisoformat read 20261130 and 2026-W48-1 (both 2026-11-30) though the message says
    YYYY-MM-DD; argparse refuses it (exit 2) before anything starts."""
    with pytest.raises(SystemExit) as refused:
        main(["run", "--as-of", text])
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (f"hweval run: error: argument --as-of: {text!r} is not a date "
                                                        f"(expected YYYY-MM-DD)")


@pytest.mark.parametrize(("args", "error"), [
    (["--source", "aws_spot={tmp}/missing.json"],
     "--source aws_spot={tmp}/missing.json: no such file '{tmp}/missing.json'"),
    (["--source", "aws_spot={tmp}/spot.json@2026-13-01"],
     "--source aws_spot={tmp}/spot.json@2026-13-01: '2026-13-01' is not a date (YYYY-MM-DD)"),
    # Python 3.11's date.fromisoformat reads 20261120 and 2026-W47-5 (the week's Friday, 2026-11-20): the message
    # asks for YYYY-MM-DD, and nothing else is taken
    (["--source", "aws_spot={tmp}/spot.json@20261120"],
     "--source aws_spot={tmp}/spot.json@20261120: '20261120' is not a date (YYYY-MM-DD)"),
    (["--source", "aws_spot={tmp}/spot.json@2026-W47-5"],
     "--source aws_spot={tmp}/spot.json@2026-W47-5: '2026-W47-5' is not a date (YYYY-MM-DD)"),
    # an @ with no date after it read as the run's date (2026-11-30)
    (["--source", "aws_spot={tmp}/spot.json@"],
     "--source aws_spot={tmp}/spot.json@: no date after '@' (expected PATH@YYYY-MM-DD, or PATH alone for the run's "
     "date)"),
    # data a day newer than the run: a backfill of 2026-11-30 would read 2026-12-01's prices
    (["--source", "aws_spot={tmp}/spot.json@2026-12-01"],
     "--source aws_spot={tmp}/spot.json@2026-12-01: its data as of 2026-12-01 is later than the run's as-of date "
     "2026-11-30: a run reads no data from after its date (run --as-of 2026-12-01 or later to read it)"),
    (["--source", "aws_spto={tmp}/spot.json"], "--source aws_spto=...: no source 'aws_spto' in sources.yaml (expected "
                                               "one of {sources})"),
    (["--accept-changes", "aws_pricnig"], "--accept-changes aws_pricnig: no such source in sources.yaml (expected one "
                                          "of {sources})"),
])
def test_run_refuses_a_source_or_accept_changes_that_names_nothing_before_it_starts(flow_not_started, catalog, tmp_path,
                                                                                     capsys, args, error):
    # a typo in a flag: one line and exit 2 before the flow starts (it printed Prefect's traceback of the failed flow
    # run, and notified the team of a failed run)
    (tmp_path / "spot.json").write_text("{}")
    sources = ", ".join(sorted(catalog.sources.sources))
    assert main(["run", "--as-of", "2026-11-30", "--warehouse", str(tmp_path / "w.duckdb"), "--reports",
                 str(tmp_path / "r"), *[a.format(tmp=tmp_path) for a in args]]) == 2
    assert capsys.readouterr().err == f"hweval: {error.format(tmp=tmp_path, sources=sources)}\n"


def test_run_refuses_a_catalog_that_does_not_load_before_it_starts(flow_not_started, catalog_copy, tmp_path, capsys):
    (catalog_copy / "workloads.yaml").write_bytes(b"workloads:\n  caf\xe9: {}\n")  # Latin-1, not UTF-8
    assert main(["run", "--as-of", "2026-11-30", "--catalog", str(catalog_copy), "--warehouse",
                 str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "r")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("hweval: workloads.yaml: ") and "UTF-8" in line, line


def test_a_warehouse_hweval_wrote_is_taken_as_one(tmp_path):
    """The check reads DuckDB's own header: a database DuckDB made passes (the file run by run), whatever its size."""
    import duckdb

    duckdb.connect(str(tmp_path / "w.duckdb")).close()
    assert pipeline.is_duckdb_file(tmp_path / "w.duckdb")
    (tmp_path / "w.csv").write_bytes(b"\x00" * 8 + b"DUCX")
    assert not pipeline.is_duckdb_file(tmp_path / "w.csv")
