"""The `hweval` command: run the pipeline, check the catalogs, list the sources, query the warehouse, put the
Prefect automations on a server.

Exit status of `hweval run`: RUN_EXIT_STATUSES below (the help prints it). A command whose stdout's reader closes it
early (`| head`) goes on without writing there and ends with its own status, or 141 (as a command SIGPIPE ended) where
that was 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import math
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flows import paths, query_command, run_startup, sources_command
from flows.std_streams import ReaderGone

if TYPE_CHECKING:
    from flows.lake import LakeConfig

EXIT_STALE_PAST_LIMIT = 3
EXIT_LOCK_TIMEOUT = 4
EXIT_FAILED_AFTER_PUBLISH = 5
EXIT_CANCELLED = 6  # cancelled from Prefect and stopped before its publish (flows/cancellation.py)
EXIT_READER_GONE = 128 + signal.SIGPIPE  # 141, as a shell reports `yes | head`'s yes: any command, its output unread

# `hweval run`'s exit statuses and what each means: `hweval --help` and `hweval run --help` print them (README's table
# says the same at more length)
RUN_EXIT_STATUSES = {
    0: "the run succeeded (sources stale within their limit included)",
    1: "an unexpected failure (a traceback; and, in one line, a DuckLake that cannot be reached or that other runs kept "
       "committing to)",
    2: "bad input (a catalog, a source file, a SQL model, an as-of date past tomorrow, an HWEVAL_REPORTS_S3 that is no "
       "S3 prefix, a DuckLake or task-runner setting that cannot work, a warehouse or reports path that cannot be one "
       "or cannot be written, a wait that is no number of seconds)",
    EXIT_STALE_PAST_LIMIT: "sources stale past their max_stale_days (the reports were published with a warning)",
    EXIT_LOCK_TIMEOUT: "another run held the warehouse or the reports past --wait",
    EXIT_FAILED_AFTER_PUBLISH: "published, but a step after the publish failed (the change events, the Prefect "
                               "artifacts, the upload of the reports to object storage) or a notification channel did "
                               "not take the run's message",
    EXIT_CANCELLED: "cancelled from Prefect (its UI, `prefect flow-run cancel`) and stopped before its publish: nothing "
                    "changed",
}


def run_exit_statuses() -> str:
    """RUN_EXIT_STATUSES as the help writes them, in one paragraph."""
    return "; ".join(f"{status} {meaning}" for status, meaning in sorted(RUN_EXIT_STATUSES.items()))

# Set by entry(): this process is the `hweval` command's own, and ends when the command does (not a test calling
# main() in its process), so what it has loaded can be frozen out of the garbage collector's reach (gc.freeze).
_OWN_PROCESS = False

# Quiet, useful Prefect logs unless the user configured their own.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "INFO",
    "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL": "INFO",
    # hweval uses no Prefect blocks: its temporary server need not import every installed collection (prefect-dask
    # brings Dask) to register theirs as it starts (0.5 s and 31 MiB of an empty flow, measured)
    "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
    "PREFECT_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false",
    # Prefect's 20 s is too short for a temporary server that creates its database on a slow or loaded machine (a
    # 2-core CI machine running two test workers took longer): the run waits this long before it gives up
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    # A temporary server runs no automations (their reactive triggers do not run in it) and shows no event feed, yet
    # by default it stores the run's events, trims old ones as it starts and evaluates proactive triggers every 5 s:
    # writes into the SQLite database that met the flow's own (creating its flow run, mostly) in 1 run of 10, which
    # SQLite refused ("database is locked"), the server answered 503 and Prefect's client retried 2 s later (2-6 s,
    # measured). Without them a re-run took 5.38 s against 5.71 s (medians of 12, alternated; the slowest 5.8 s
    # against 11.0 s). Flow runs, task runs, logs and artifacts are recorded as before
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
}


def _date(text: str) -> dt.date:
    try:
        return paths.iso_date(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (expected YYYY-MM-DD)") from None


def _whole_number_up_to(limit: int, least: int = 0, why: str = ""):
    """An argparse type: a whole number from `least` (0: DuckDB's table printer fails on a negative one) to `limit`;
    `why` follows the refusal."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if not least <= value <= limit:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from {least} to {limit}{why}")
        return value
    return parse


def _seconds_up_to(limit: float):
    """An argparse type: a number of seconds above 0 and at most `limit` (not nan, not inf)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= limit):
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds above 0 and at most {limit:g}")
        return value
    return parse


def summary_lines(result) -> list[str]:
    """What `hweval run` prints of a run it finished: a line per source, then the run's, which names the sources
    that are stale (each on its last good data, or none): a run with a stale source does not end looking clean."""
    lines = []
    for load in result.loads:
        if load.status == "stale":
            lines.append(f"  {load.source_id}: STALE ({load.error}); using "
                         + (f"the rows of its last good run, the run of {load.stale_since}" if load.stale_since
                            else "no data from it"))
        else:
            lines.append(f"  {load.source_id}: {load.rows_in} rows in, {load.rows_landed} landed, "
                         f"{load.rows_quarantined} quarantined"
                         + (f" (unchanged since run {load.reused_from}: reused, not validated again)"
                            if load.reused_from else ""))
    landed = sum(load.rows_landed for load in result.loads)
    quarantined = sum(load.rows_quarantined for load in result.loads)
    stale = [load.source_id for load in result.loads if load.status == "stale"]
    lines.append(f"run {result.run_id} as of {result.as_of}: {landed} rows landed, {quarantined} quarantined"
                 + (f"; {len(stale)} source{'s' if len(stale) > 1 else ''} STALE ({', '.join(stale)}: see above)"
                    if stale else ""))
    return lines


def cmd_run(args: argparse.Namespace) -> int:
    source_files: dict[str, list[str]] = {}
    for spec in args.source or []:
        source_id, sep, path = spec.partition("=")
        if not sep or not path:
            print(f"hweval: --source {spec!r}: expected SOURCE_ID=PATH[@YYYY-MM-DD]", file=sys.stderr)
            return 2
        source_files.setdefault(source_id, []).append(path)
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    # first: Prefect's server takes seconds to start (its imports), while this process imports the pipeline for the
    # checks below; a check that fails stops it before it is used
    server = run_startup.launch_temporary_server()
    if server is not None:
        # next, the catalog's load and its figures' check begun in Great Expectations' process, whose import of GX
        # (~2.5 s of CPU) is then the longest of the three: begun before this process's own imports, it overlaps them
        # and the server's. Begun after them, it was still importing 1 s after the server answered, on one core,
        # with the run waiting for it. A cold run on the snapshot, 8 of each alternated: median 10.97 s against
        # 11.13 s, a small gain beside the machine's noise (identical runs 10.4-11.2 s).
        # A setting refused below stops that process at once (flows/gx_process.py, stop_now).
        run_startup.warm_catalog_check(args.catalog)
    try:
        lake_config = check_run_settings(args)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    if server is not None:
        server = server.attach()
    from dataclasses import replace

    from flows import cancellation
    from flows import nightly as nightly_module
    from flows.nightly import FailedAfterPublish, StalePastLimit, nightly
    from flows.paths import absolute
    from flows.prefect_server import ServerStartError
    from flows.redaction import redact_text
    from flows.runlock import RunLockTimeout

    if server is not None:  # while the server starts (seconds): what the flow would otherwise do first
        run_startup.warm_flow_imports()
    try:
        check_run_inputs(args, source_files)  # on the catalog just loaded, while the server starts
        # the catalog's per-chip figures, checked in Great Expectations' process meanwhile: a catalog that fails is
        # refused here, in one line, as one that does not load is
        run_startup.finish_catalog_check(args.catalog)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    if server is not None:
        # said once the inputs passed: a refused one is told in its one line alone
        print("hweval: no PREFECT_API_URL set; a temporary local Prefect server starts for this run (it adds about "
              "5 s; more on the first run, which creates its database).", file=sys.stderr)
        try:
            server.wait_ready()
        except ServerStartError as exc:
            print(f"hweval: {exc}; the run did not start", file=sys.stderr)
            return 1

    wait_s = lock_wait_s(args)
    if _OWN_PROCESS:
        # the modules, catalog and suites loaded so far live as long as this process: frozen, each full collection
        # during the run walks only the run's own objects (a cold run made 8, ~1.9 s of its CPU, before)
        gc.freeze()
    from prefect.exceptions import CancelledRun

    status = 0
    # a run on a lasting Prefect server (PREFECT_API_URL) can be cancelled from its UI: the flow asks at each step.
    # A temporary server has no UI and ends with the run: nobody can cancel there, so nothing is asked
    watch, cancelled, error = cancellation.Watch(), None, None
    nightly_module.FINISHED = None  # set by this run's flow body as it ends (none of an earlier run's in this process)
    try:
        with (server.flows_settings() if server is not None else cancellation.watching(watch)):
            result = nightly(
                as_of=args.as_of,
                source_files=source_files or None,
                catalog_dir=str(absolute(args.catalog)) if args.catalog else None,
                warehouse_file=str(absolute(args.warehouse)) if args.warehouse else None,
                reports_dir=str(absolute(args.reports)) if args.reports else None,
                live=True if args.live else None,
                accept_changes=args.accept_changes or None,
                wait_s=wait_s,
                allow_future_as_of=args.allow_future_as_of,
            )
    except RunLockTimeout as exc:
        error = exc
        print(f"hweval: {exc}", file=sys.stderr)
        return EXIT_LOCK_TIMEOUT
    except CancelledRun as exc:  # the flow stopped at a step boundary, Cancelled (flows/cancellation.py)
        cancelled = exc
    except StalePastLimit as exc:
        result, status, error = exc.result, EXIT_STALE_PAST_LIMIT, exc
    except FailedAfterPublish as exc:
        result, status, error = exc.result, EXIT_FAILED_AFTER_PUBLISH, exc
    except Exception as exc:
        error = exc
        result = nightly_module.FINISHED
        if result is None:
            raise
        # the flow body ended, its publish done, and then Prefect's engine failed (its API gone as it set the final
        # state): the warehouse and reports are this run's, so it says so and exits 5 (3 where sources were stale)
        result = replace(result, failed_after_publish=(
            *result.failed_after_publish,
            redact_text(f"Prefect could not record the run's end ({type(exc).__name__}: {exc}); its flow run may "
                        "show Running")))
        status = EXIT_STALE_PAST_LIMIT if result.stale_past_limit else EXIT_FAILED_AFTER_PUBLISH
    except BaseException as exc:
        error = exc
        raise
    finally:  # a cancel the flow could not act on: the state the run reached, not Cancelling for ever
        settled = None if cancelled else cancellation.settle(watch, error)
    if cancelled is not None:
        print(f"hweval: the run was {cancelled} (exit status {EXIT_CANCELLED})", file=sys.stderr)
        return EXIT_CANCELLED
    if settled is not None:
        print(f"hweval: Prefect was asked to cancel the run after its publish had begun: it finished (marked "
              f"{settled.title()})", file=sys.stderr)
    for line in summary_lines(result):
        print(line)
    print(f"warehouse: {result.warehouse}" + (f" (a copy of the lake's newest snapshot: {lake_config.describe()})"
                                              if lake_config else ""))
    print(f"reports:   {result.reports}/index.md " + (f"(also {result.reports.parent / 'latest'}/)" if result.latest_updated
                                                      else "(a backfill: reports/latest keeps a newer date)"))
    for line in result.stale_past_limit:
        print(f"hweval: STALE PAST ITS LIMIT: {line}", file=sys.stderr)
    for line in result.failed_after_publish:
        print(f"hweval: AFTER THE PUBLISH: {line}", file=sys.stderr)
    if status == EXIT_STALE_PAST_LIMIT:
        print(f"hweval: the run is marked failed (exit status {status}): sources stale past their max_stale_days; "
              f"the reports were published with a warning", file=sys.stderr)
    elif status == EXIT_FAILED_AFTER_PUBLISH:
        print(f"hweval: the run is marked failed (exit status {status}): the warehouse and reports are this run's, "
              f"but a step after the publish failed (above)", file=sys.stderr)
    return status


def check_run_settings(args: argparse.Namespace) -> LakeConfig | None:
    """The run's settings that can be checked before it starts: its as-of date and HWEVAL_ALLOW_FUTURE_AS_OF, the
    warehouse and reports paths, --wait and HWEVAL_LOCK_WAIT_S, HWEVAL_REPORTS_S3, the DuckLake (its configuration is
    returned), the task runner, HWEVAL_CHART_WORKERS, HWEVAL_GX_PROCESS, HWEVAL_DUCKDB_MEMORY_LIMIT,
    HWEVAL_DUCKDB_THREADS and HWEVAL_NOTIFY_OUTBOX; each error is a bad input (exit 2)."""
    from flows import duckdb_settings, gx_process, outbox
    from flows.chart_workers import configured_workers
    from flows.fanout import local_threads, runner_kind
    from flows.lake import configured as configured_lake
    from flows.object_store import configured_target
    from flows.pipeline import check_as_of, check_run_paths, future_as_of_allowed

    future_as_of_allowed()  # an HWEVAL_ALLOW_FUTURE_AS_OF that is neither 0 nor 1, with or without --as-of
    if args.as_of:
        check_as_of(args.as_of, args.allow_future_as_of)
    check_run_paths(Path(args.warehouse or paths.warehouse_path()), Path(args.reports or paths.reports_dir()),
                    (paths.set_by(args.warehouse, "--warehouse", paths.WAREHOUSE_ENV),
                     paths.set_by(args.reports, "--reports", paths.REPORTS_DIR_ENV)))
    lock_wait_s(args)  # a --wait or HWEVAL_LOCK_WAIT_S that is no number of seconds (nan waited forever)
    configured_target()  # an HWEVAL_REPORTS_S3 that is no S3 prefix
    lake_config = configured_lake()  # a DuckLake setting that cannot work
    if runner_kind() == "dask":  # a task runner setting (HWEVAL_TASK_RUNNER, HWEVAL_DASK_ADDRESS, _THREADS)
        local_threads({})
    configured_workers()  # an HWEVAL_CHART_WORKERS that is no number of workers
    duckdb_settings.memory_limit()  # an HWEVAL_DUCKDB_MEMORY_LIMIT that is no size DuckDB can run in
    duckdb_settings.threads()  # an HWEVAL_DUCKDB_THREADS that is no number of threads
    gx_process.enabled()  # an HWEVAL_GX_PROCESS that is neither 0 nor 1
    outbox.folder(Path(args.warehouse or paths.warehouse_path()))  # an HWEVAL_NOTIFY_OUTBOX that is a file
    return lake_config


def check_run_inputs(args: argparse.Namespace, source_files: dict[str, list[str]]) -> None:
    """What the flow refuses first, refused before it starts, in one line (exit 2), with no flow run to fail and no
    notification of a typo: a catalog that does not load, a --source naming no declared source, no file or no date,
    an --accept-changes naming no source. The flow takes the catalog loaded here (flows/catalog.py), unless a file
    under its folder changed meanwhile, and reads the --source files again."""
    from flows import pipeline
    from flows.catalog import catalog_loaded_ahead
    from flows.paths import absolute

    catalog = catalog_loaded_ahead(absolute(args.catalog or paths.catalog_dir()))
    pipeline.check_files_dated(catalog, args.allow_future_as_of, source_files, True if args.live else None)
    pipeline.source_snapshot_files(catalog, source_files, args.as_of or pipeline.default_as_of())
    pipeline.check_accept_changes(catalog, args.accept_changes)


def lock_wait_s(args: argparse.Namespace) -> float:
    """How long the run waits for another holding its warehouse or reports: --wait, else HWEVAL_LOCK_WAIT_S."""
    from flows.runlock import configured_wait

    return configured_wait(args.wait, "--wait ")


def cmd_check(args: argparse.Namespace) -> int:
    from flows.catalog import load_catalog
    from flows.pipeline import ALLOW_FUTURE_AS_OF_ENV, check_files_dated

    catalog = load_catalog(args.catalog or paths.catalog_dir())
    check_files_dated(catalog, lift=f"set {ALLOW_FUTURE_AS_OF_ENV}=1 if that is what you want")
    read = check_source_files(catalog)
    print(f"{catalog.root}: {len(catalog.accelerators.accelerators)} accelerators, "
          f"{len(catalog.instances.instances)} instances, {len(catalog.models.models)} models, "
          f"{len(catalog.workloads.workloads)} workloads, {len(catalog.sources.sources)} sources: OK")
    print(f"source files: {sum(read.values())} files of {len(read)} enabled sources read as a run reads them: OK "
          f"(their size, nesting, format and fields; a run checks their rows' values, and quarantines a row that fails)")
    return 0


def check_source_files(catalog) -> dict[str, int]:
    """Read every file a run (in sources.yaml's mode) reads, with the run's own readers, so that `hweval check` refuses
    what `hweval run` would (a file too large or nested too deep, not its format, an unknown field): a CatalogError
    naming sources.yaml's entry for each file refused. Returns each source read from files -> its number of files."""
    from flows.catalog_models import CatalogError
    from flows.sources import read_declared_file, read_declared_table, reads_tables
    from flows.sources._common import SourceFormatError

    read, errors = {}, []
    for source_id, source in catalog.sources.sources.items():
        if not source.enabled or source.reads_live(catalog.sources.mode):
            continue
        read[source_id] = len(source.files)
        for index in range(len(source.files)):
            try:
                reader = read_declared_table if reads_tables(source.kind) else read_declared_file
                reader(catalog.root, source, source_id, index)
            except SourceFormatError as exc:
                errors.append(f"sources.yaml: sources.{source_id}.files[{index}]: {exc}")
    if errors:
        raise CatalogError("\n".join(errors))
    return read


def cmd_automations(args: argparse.Namespace) -> int:
    from flows import automations

    for applied in automations.apply(args.file or automations.AUTOMATIONS_FILE):
        print(f"{applied.done} {applied.name} ({applied.automation_id})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from flows.runlock import DEFAULT_WAIT_S, MAX_WAIT_S

    # (no docstring under python -OO: the help is then without it)
    description = (__doc__ or "").replace("RUN_EXIT_STATUSES below (the help prints it)", run_exit_statuses())
    parser = argparse.ArgumentParser(prog="hweval", description=description)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the nightly flow once: ingest, validate, build the warehouse, publish reports",
                         epilog=f"exit status: {run_exit_statuses()}")
    run.add_argument("--as-of", type=_date, default=None,
                     help="as-of date of the run (default: today, UTC); a date later than tomorrow (UTC) is refused")
    run.add_argument("--allow-future-as-of", action="store_true",
                     help="accept an --as-of later than tomorrow (UTC; also HWEVAL_ALLOW_FUTURE_AS_OF=1): "
                          "reports/latest then shows that date until it comes, and every run dated before it is a "
                          "backfill")
    run.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    run.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: warehouse/hweval.duckdb)")
    run.add_argument("--reports", type=Path, default=None, help="reports folder (default: reports/)")
    run.add_argument("--source", action="append", metavar="SOURCE_ID=PATH[@AS_OF]",
                     help="read this file instead of the source's declared files for this run; repeat to give a "
                          "source several files; @YYYY-MM-DD is the data's as-of date (default: the run's), e.g. "
                          "mlperf_inference_snapshot=../shared/samples/mlperf_inference_v4.1_summary_results.json"
                          "@2024-08-28")
    run.add_argument("--live", action="store_true",
                     help="fetch every source that has a `live:` block in sources.yaml from its API (AWS through "
                          "boto3's credential chain, Azure Retail Prices, GCP Billing Catalog with GOOGLE_API_KEY); "
                          "a source that cannot be fetched is stale and the run uses its last good data")
    run.add_argument("--accept-changes", action="append", metavar="SOURCE_ID",
                     help="land this source even if it has far fewer rows than its last good run or its prices "
                          "moved past max_price_change (a real change, reviewed); repeat for several sources")
    run.add_argument("--wait", default=None, metavar="SECONDS",
                     help=f"how long to wait when another run holds the warehouse or reports (default: "
                          f"HWEVAL_LOCK_WAIT_S or {DEFAULT_WAIT_S:g}; at most {MAX_WAIT_S:g}); past it the run exits "
                          "with status 4 and changes nothing")
    run.set_defaults(func=cmd_run)

    sources = sub.add_parser("sources", help="list the declared sources, what they read, and their last good fetch")
    sources.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    sources.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: warehouse/hweval.duckdb)")
    sources.add_argument("--live", action="store_true", help="show what a live run would fetch")
    sources.set_defaults(func=sources_command.cmd_sources)

    automations = sub.add_parser(
        "automations", help="create or update flows/automations.yaml's Prefect automations on the server "
                            "PREFECT_API_URL names, each found by its name (never a second copy)",
        epilog="exit status: 0 each created, updated or unchanged; 1 the server did not answer or refused a request "
               "(what was applied before it is said); 2 a file Prefect would not take, no PREFECT_API_URL, or the "
               "server already holding two automations of one name (nothing changed)")
    automations.add_argument("--file", type=Path, default=None,
                             help="the automations file (default: flows/automations.yaml)")
    automations.set_defaults(func=cmd_automations)

    check = sub.add_parser("check", help="validate the catalogs and their cross-references, and read the files of the "
                                         "enabled sources as a run reads them")
    check.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    check.set_defaults(func=cmd_check)

    query = sub.add_parser("query", help="run a SQL query against the warehouse, read-only",
                           epilog="the query reads the warehouse only: files outside it, ATTACH, COPY, INSTALL and "
                                  "settings are refused. A SQL error prints one line with its position and exits "
                                  "with status 2")
    query.add_argument("sql", help="the query, e.g. \"select * from marts.rankings limit 5\"")
    query.add_argument("--warehouse", type=Path, default=None,
                       help="DuckDB file (default: the DuckLake when HWEVAL_LAKE is set, else warehouse/hweval.duckdb)")
    query.add_argument("--run", default=None, metavar="RUN_ID",
                       help="read the DuckLake warehouse as this run committed it (time travel to its snapshot)")
    query.add_argument("--format", choices=["table", "csv", "json"], default="table",
                       help="table (default: aligned), CSV or JSON; in CSV and JSON a blob is written as hexadecimal "
                            "text, and in JSON a nan or infinite number as null (JSON has no such number)")
    bounds = query_command  # the query's bounds: QUERY_MAX_ROWS, QUERY_MAX_WIDTH, QUERY_TIMEOUT_S and their limits
    query.add_argument("--max-rows", type=_whole_number_up_to(bounds.QUERY_MAX_ROWS_LIMIT),
                       default=bounds.QUERY_MAX_ROWS, metavar="N",
                       help=f"rows to print, the first ones, in every format (default: {bounds.QUERY_MAX_ROWS}, at "
                            f"most {bounds.QUERY_MAX_ROWS_LIMIT}; 0 prints the columns only); each format says on "
                            "stderr when it cut them")
    query.add_argument("--max-width", type=_whole_number_up_to(
                           bounds.QUERY_MAX_WIDTH_LIMIT, bounds.QUERY_MIN_WIDTH,
                           f" (DuckDB's table is never narrower than {bounds.QUERY_MIN_WIDTH} characters)"),
                       default=bounds.QUERY_MAX_WIDTH, metavar="N",
                       help=f"characters per line of the table (default: {bounds.QUERY_MAX_WIDTH}, from "
                            f"{bounds.QUERY_MIN_WIDTH} to {bounds.QUERY_MAX_WIDTH_LIMIT})")
    query.add_argument("--max-cell-chars", type=_whole_number_up_to(bounds.QUERY_MAX_CELL_CHARS_LIMIT, 1),
                       default=bounds.QUERY_MAX_CELL_CHARS, metavar="N",
                       help=f"characters of one value in CSV or JSON (default: {bounds.QUERY_MAX_CELL_CHARS:,}, at "
                            f"most {bounds.QUERY_MAX_CELL_CHARS_LIMIT:,}); a longer one is refused with status 2, "
                            "naming its row and column")
    query.add_argument("--timeout", type=_seconds_up_to(bounds.QUERY_TIMEOUT_S_LIMIT),
                       default=bounds.QUERY_TIMEOUT_S, metavar="SECONDS",
                       help=f"stop the query after this long, with status 2 (default: {bounds.QUERY_TIMEOUT_S:g}, at "
                            f"most {bounds.QUERY_TIMEOUT_S_LIMIT:g})")
    query.set_defaults(func=query_command.cmd_query)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:
        status = _exit_status(exc)
        if status is None:  # unexpected: its traceback, exit status 1
            raise
        print(f"hweval: {exc}", file=sys.stderr)
        return status


def _exit_status(exc: Exception) -> int | None:
    """The exit status of an error main() reports in one line: 2 bad input; 1 a DuckLake down, or one that other runs
    kept committing to (nothing changed), a warehouse file another process is writing, or a Prefect server that did not
    take `hweval automations`' requests; None for any other error.
    The error classes are imported here, once an error came: their modules import DuckDB, pandas and pyarrow (1.3 s),
    and `hweval run` launches its temporary server before that (cmd_run), so that the server's start (its imports,
    seconds) begins at once."""
    from flows.automations import AutomationsError, AutomationsUnavailable
    from flows.catalog import CatalogError
    from flows.chart_workers import ChartWorkersError
    from flows.duckdb_settings import MemoryLimitError, ThreadsError
    from flows.fanout import FanoutError
    from flows.gx_process import GxProcessSettingError
    from flows.lake import LakeConflict, LakeError, LakeUnavailable
    from flows.object_store import ObjectStoreError
    from flows.outbox import OutboxSettingError
    from flows.pipeline import AsOfError, RunSettingError
    from flows.runlock import WaitSettingError
    from flows.sources._common import SourceFormatError
    from flows.transform import ModelError
    from flows.validate import SuiteError

    if isinstance(exc, (CatalogError, SourceFormatError, SuiteError, ModelError, AsOfError, ObjectStoreError, LakeError,
                        FanoutError, ChartWorkersError, GxProcessSettingError, MemoryLimitError, ThreadsError,
                        RunSettingError, WaitSettingError, OutboxSettingError, query_command.WarehouseFileError,
                        AutomationsError)):
        return 2
    if isinstance(exc, (LakeUnavailable, LakeConflict, query_command.WarehouseBusy, AutomationsUnavailable)):
        return 1
    return None


def entry() -> None:
    """The `hweval` command (pyproject's [project.scripts]): main() in a process of its own, which ends with it."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    # stdout or stderr closed before the command started (`>&-`): Python leaves it None, and writes go nowhere.
    # stderr too: `hweval run 2>&1 | head` closed both, and the run's next log line failed it (exit 1, nothing
    # published)
    sys.stdout = guarded = ReaderGone(sys.stdout if sys.stdout is not None else open(os.devnull, "w"))  # noqa: SIM115
    sys.stderr = guarded_err = ReaderGone(sys.stderr if sys.stderr is not None else open(os.devnull, "w"))  # noqa: SIM115
    try:
        code = main()
    finally:
        from flows import gx_process

        gx_process.stop_now()  # nothing takes its answers any more: the exit does not wait for its current call
    guarded.flush()  # a reader gone shows here at the latest, not in the interpreter's flush at exit (status 120)
    guarded_err.flush()
    if (guarded.gone or guarded_err.gone) and code == 0:
        code = EXIT_READER_GONE  # quietly, with the status of a writer SIGPIPE ended; a failure keeps its own
    # what is left is freed with the process: without this, the interpreter's last full collection walks every
    # object the run loaded (1-3 s after a run; atexit handlers and Prefect's log flush still run). An object in a
    # reference cycle is not finalized at exit then: close what must be closed (DuckDB connections) explicitly
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    entry()
