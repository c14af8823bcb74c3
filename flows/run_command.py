"""`hweval run`: the nightly flow run once from the command line, and what it checks before the flow.

Before the flow, `cmd_run` launches Prefect's temporary server (when no PREFECT_API_URL is set) and begins the catalog's
check in Great Expectations' process, so that both start (their imports: seconds) while this process checks the run's
settings and inputs (`check_run_settings`, `check_run_inputs`): a bad one is refused in one line (exit 2), with no flow
run to fail and no notification of a typo. Then the flow, and its summary. Exit statuses: RUN_EXIT_STATUSES.
flows/cli.py parses the command line and calls `cmd_run`; flows/run_startup.py is the work done ahead of the flow.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flows import paths, read_ahead, run_startup, startup_gc

if TYPE_CHECKING:
    from flows.lake import LakeConfig

EXIT_STALE_PAST_LIMIT = 3
EXIT_LOCK_TIMEOUT = 4
EXIT_FAILED_AFTER_PUBLISH = 5
EXIT_CANCELLED = 6  # cancelled from Prefect and stopped before its publish (flows/cancellation.py)
EXIT_INTERRUPTED = 130  # Ctrl-C: every command ends by SIGINT (flows/cli.py, entry), which a shell reports as 130

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
    EXIT_INTERRUPTED: "interrupted (Ctrl-C; the process ends by SIGINT): a flow run that had begun is marked Crashed "
                      "and its channels told; a publish under way is undone unless reports/latest.json already names "
                      "the run",
}


def run_exit_statuses() -> str:
    """RUN_EXIT_STATUSES as the help writes them, in one paragraph."""
    return "; ".join(f"{status} {meaning}" for status, meaning in sorted(RUN_EXIT_STATUSES.items()))


# Set by flows/cli.py's entry(): this process is the `hweval` command's own, and ends when the command does (not a
# test calling main() in its process), so what it has loaded can be frozen out of the garbage collector's reach
# (gc.freeze).
OWN_PROCESS = False

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
    # what this process imports before its flow (Prefect, the pipeline, the catalog) with fewer garbage collections
    # (flows/startup_gc.py), until they are frozen below
    collecting = startup_gc.importing() if OWN_PROCESS else None
    # first: Prefect's server takes seconds to start (its imports), while this process imports the pipeline for the
    # checks below; a check that fails stops it before it is used
    server = run_startup.launch_temporary_server()
    if server is not None:
        # next, the catalog's load and its figures' check begun in Great Expectations' process, whose import of GX
        # (~2.5 s of CPU; ~1.8 s since scipy.stats is deferred, validate.DEFERRED_IMPORTS) is then the longest of the
        # three: begun before this process's own imports, it overlaps them and the server's. Begun after them, it was
        # still importing 1 s after the server answered, on one core, with the run waiting for it. A cold run on the
        # snapshot, 8 of each alternated: median 10.97 s against 11.13 s, a small gain beside the machine's noise
        # (identical runs 10.4-11.2 s).
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

    from flows import cancellation, killed_runs
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
        # the files given with --source that read into Arrow (an offer file), read while the server starts: the
        # flow's fetch takes them unless they changed (flows/read_ahead.py)
        run_startup.read_given_files_ahead(args.catalog, source_files, args.as_of)
        # the catalog's per-chip figures, checked in Great Expectations' process meanwhile: a catalog that fails is
        # refused here, in one line, as one that does not load is
        run_startup.finish_catalog_check(args.catalog)
    except BaseException:
        read_ahead.abandon()
        if server is not None:
            server.stop()
        raise
    if server is not None:
        # said once the inputs passed: a refused one is told in its one line alone
        print("hweval: no PREFECT_API_URL set; a temporary local Prefect server starts for this run (it answers in "
              "about 2 s, while the run gets ready; more on the first run, which creates its database).",
              file=sys.stderr)
        try:
            server.wait_ready()
        except ServerStartError as exc:
            read_ahead.abandon()
            print(f"hweval: {exc}; the run did not start", file=sys.stderr)
            return 1
        except BaseException:  # a Ctrl-C while the server starts: the reads queued are not run before the exit
            read_ahead.abandon()
            raise

    wait_s = lock_wait_s(args)
    if OWN_PROCESS:
        # the modules, catalog and suites loaded so far live as long as this process: frozen, each full collection
        # during the run walks only the run's own objects (a cold run made 8, ~1.9 s of its CPU, before); and
        # Python's thresholds again from here
        startup_gc.imported(collecting)
    from prefect.exceptions import CancelledRun

    status = 0
    # a run on a lasting Prefect server (PREFECT_API_URL) can be cancelled from its UI: the flow asks at each step.
    # A temporary server has no UI and ends with the run: nobody can cancel there, so nothing is asked
    watch, cancelled, error = cancellation.Watch(), None, None
    nightly_module.FINISHED = None  # set by this run's flow body as it ends (none of an earlier run's in this process)
    nightly_module.HOLDER = None  # set by this run's flow body as it starts, likewise
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
        unrecorded = redact_text(f"Prefect could not record the run's end ({type(exc).__name__}: {exc})")
        # its run file, left for the next run on the warehouse: that run marks the flow run Failed with this line
        left = killed_runs.leave_unrecorded(nightly_module.HOLDER, f"published, but {unrecorded}")
        result = replace(result, failed_after_publish=(
            *result.failed_after_publish,
            f"{unrecorded}; its flow run may show Running"
            + (" until the next run on this warehouse marks it Failed" if left else "")))
        status = EXIT_STALE_PAST_LIMIT if result.stale_past_limit else EXIT_FAILED_AFTER_PUBLISH
    except BaseException as exc:
        error = exc
        raise
    finally:  # a cancel the flow could not act on: the state the run reached, not Cancelling for ever
        read_ahead.abandon()  # a file the flow did not fetch (it failed first): its table is not kept
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
