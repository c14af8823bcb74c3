"""The `nightly` Prefect flow: fetch (flows/fetching.py) -> (one writer at a time) land -> build -> render -> publish
-> after the publish: events, artifacts, upload (flows/after_publish.py) -> notify. Tasks sit at the I/O boundaries."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.states import Cancelled
from prefect.utilities.annotations import quote

from flows import (
    after_publish,
    analytics,
    cancellation,
    chart_workers,
    compaction,
    crash_notice,
    data_docs,
    duckdb_settings,
    killed_runs,
    lake,
    notify,
    object_store,
    outbox,
    paths,
    pipeline,
    publish_journal,
    publishing,
    run_files,
    runlock,
    source_batches,
    warehouse,
)
from flows import land as landing  # the module, beside the task named land
from flows.catalog import load_catalog, take_catalog_loaded_ahead
from flows.catalog_models import Catalog
from flows.crash_notice import raise_the_signal_behind
from flows.fetching import fetch_all
from flows.redaction import redact_text


@dataclass(frozen=True)
class RunResult:
    run_id: str
    as_of: dt.date
    warehouse: Path
    reports: Path
    loads: list[landing.SourceLoad]
    latest_updated: bool  # whether this run replaced reports/latest (a backfill does not)
    stale_past_limit: tuple[str, ...] = ()  # one line per source stale longer than its max_stale_days
    events: tuple[notify.Event, ...] = ()  # what the notification channels are told
    # steps after the publish that failed ("the upload to object storage: ..."): the run is published all the same
    failed_after_publish: tuple[str, ...] = ()


class StalePastLimit(RuntimeError):
    """Sources stale past their max_stale_days: the reports are published, but the run must not look fine."""

    def __init__(self, result: RunResult):
        super().__init__("sources stale past their limit (reports published with a warning): "
                         + "; ".join(result.stale_past_limit))
        self.result = result


class _StaleWithoutTraceback(logging.Filter):
    """Prefect logs the exception a flow ends on with its traceback. Sources stale past their limit fail the run on
    purpose, and the message says all there is: one line, as every other error a user can act on is."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], StalePastLimit):
            record.exc_info, record.exc_text = None, None
        return True


# the flow engine's "Encountered exception during execution" goes through the flow run logger, prefect.flow_runs
logging.getLogger("prefect.flow_runs").addFilter(_StaleWithoutTraceback())


class FailedAfterPublish(RuntimeError):
    """The warehouse and reports are this run's, but a step after the publish failed (the run's change events, its
    Prefect artifacts, the upload to object storage) or a notification channel did not take the run's message."""

    def __init__(self, result: RunResult):
        super().__init__("published, but " + "; ".join(result.failed_after_publish))
        self.result = result


def _run_name() -> str:
    """Flow run names carry the as-of date, e.g. hweval-2026-11-30 (a run given none: today's UTC date)."""
    as_of = flow_run.parameters.get("as_of") or pipeline.default_as_of()
    return f"hweval-{as_of}"


@task(cache_policy=NO_CACHE)
def land(building: Path, catalog: Catalog, batches: list[source_batches.SourceBatch], run_id: str,
         as_of: dt.date, docs_dir: Path, accept_changes: frozenset[str] = frozenset(),
         fallbacks: dict[str, list[str]] | None = None, reports_root: Path | None = None) -> list[landing.SourceLoad]:
    """Validate every batch and land it, or quarantine its failing rows, in the warehouse being built; begin the
    Great Expectations Data Docs of these validations in `docs_dir` (published with the reports; GX's process builds
    them while build_and_render builds the models, and build_and_render takes them: data_docs.finish_site). A run that
    reused a source (its input unchanged) keeps that source's page from the Data Docs published under `reports_root`
    by the run that validated it (data_docs.keep_reused_pages).

    `fallbacks`: the sources each file given on the command line replaces, whose last good rows stand in if it fails.
    """
    logger = get_run_logger()
    con = warehouse.connect(building)
    validated: list[data_docs.ValidatedBatch] = []
    try:
        pipeline.check_run_id_unused(con, run_id, as_of, "the warehouse this run builds on")
        loads = landing.land_all(con, catalog, batches, run_id, as_of, validated, accept_changes, fallbacks)
    except BaseException:
        con.close()
        raise
    warehouse.hand_on(building, con)  # to build_and_render, which checkpoints the landed rows with the built ones
    # the pages of the sources reused, not validated again, are kept from the Data Docs of the runs that validated
    # them (a same-date re-run replaces that date's reports, and them with it)
    reused = [(ld.source_id, ld.reused_from) for ld in loads if ld.reused_from]
    if validated or not reused:
        # built by GX's process while build_and_render builds the models; taken before the reports are rendered
        data_docs.begin_site(validated, docs_dir, run_id, then=None if not reused else lambda: (
            data_docs.write_reused_page(docs_dir, run_id, reused, reports_root or docs_dir.parent)))
    else:  # nothing was validated: every source that landed was reused (written meanwhile, taken as a site is)
        data_docs.begin_reused_index(docs_dir, run_id, reused, reports_root or docs_dir.parent)
    for load in loads:
        if load.status == "stale":
            logger.warning("%s is stale (%s): the run uses %s", load.source_id, load.error,
                           f"the rows of its last good run, the run of {load.stale_since}" if load.stale_since else "no data from it")
        elif load.reused_from:
            logger.info("%s: unchanged since run %s: reused its %d landed and %d quarantined rows (not validated "
                        "again)", load.source_id, load.reused_from, load.rows_landed, load.rows_quarantined)
        else:
            logger.info("%s: %d rows in, %d landed in raw.%s, %d quarantined",
                        load.source_id, load.rows_in, load.rows_landed, load.table, load.rows_quarantined)
    return loads


@task(cache_policy=NO_CACHE)
def build_and_render(building: Path, catalog: Catalog, loads: list[landing.SourceLoad], run_id: str,
                     as_of: dt.date, started_at: dt.datetime, staging_dir: Path) -> tuple[str, dt.date]:
    """Build staging -> intermediate -> marts, check the SQL invariants, record the run, render reports aside.

    Returns the newest run in the warehouse (run id, as-of): what reports/latest shows once it is published; this
    run unless it is a backfill.
    """
    logger = get_run_logger()
    con = warehouse.connect_handed_on(building)
    try:
        for model in pipeline.build(con, run_id, as_of, catalog):
            if model.layer == analytics.SCHEMA:
                logger.info("%s schema %s: its %d views%s", "kept" if model.reused else "made", model.layer,
                            model.rows, " (their statements and the marts' columns are unchanged)" if model.reused
                            else "")
                continue
            logger.info("%s %s.%s: %d rows%s", "reused" if model.reused else "defined" if model.view else "built",
                        model.layer, model.name, model.rows,
                        " (its inputs are unchanged)" if model.reused else " (a view)" if model.view else "")
        pipeline.record_run(con, run_id, as_of, started_at, catalog, loads)
        compacted, left = compaction.compact_closed_months(con, run_id, as_of)
        for done in compacted:
            logger.info("compacted marts.%s of %s: its %d rows rewritten in grain order", done.table,
                        done.month.strftime("%Y-%m"), done.rows)
        if left:
            logger.info("compaction: %d (mart, month) pairs left for the next runs (at most %d a run)", left,
                        compaction.MAX_COMPACTIONS_PER_RUN)
        publishing.render_reports_to(con, as_of, staging_dir)  # beside the land step's Data Docs, built meanwhile
        # one run per as-of date: a re-run replaces its date's run
        [(newest_run_id, newest_as_of)] = con.execute(
            "select run_id, as_of from ops.runs order by as_of desc limit 1").fetchall()
        con.execute("checkpoint")
    finally:
        con.close()
    return newest_run_id, newest_as_of


@task(cache_policy=NO_CACHE)
def pull_lake(config: lake.LakeConfig, building: Path) -> int:
    """The DuckLake's newest snapshot into the file this run builds in; returns the snapshot id."""
    snapshot = lake.pull(config, building)
    get_run_logger().info("pulled snapshot %d of the lake (%s)", snapshot, config.describe())
    return snapshot


@task(cache_policy=NO_CACHE)
def commit_to_lake(config: lake.LakeConfig, building: Path, base_snapshot: int, run_id: str, as_of: dt.date) -> int:
    """The built warehouse as the lake's next snapshot, in one transaction; LakeConflict if another run was first."""
    snapshot = lake.commit(config, building, base_snapshot, run_id, as_of)
    get_run_logger().info("committed snapshot %d to the lake (on top of %d)", snapshot, base_snapshot)
    return snapshot


@task(cache_policy=NO_CACHE)
def publish(building: Path, warehouse_file: Path, staging_dir: Path, reports_root: Path, as_of: dt.date,
            run_id: str, latest_run: tuple[str, dt.date]) -> tuple[Path, bool]:
    """Swap in the new warehouse, then the new reports, then reports/latest.json (the commit): renames only, after
    everything else succeeded. Returns the dated folder and whether reports/latest was replaced.

    If a step fails before the commit, the steps before it are undone, so the two always agree; once latest.json names
    the run, nothing is undone (the next run's recovery finishes the clean-up).
    """
    return publishing.publish_run(building, warehouse_file, staging_dir, reports_root, as_of, run_id, latest_run)


def _say(message: str) -> None:
    """Tell the person at the terminal and the Prefect log (a run waiting for another one)."""
    get_run_logger().warning("%s", message)
    print(f"hweval: {message}", file=sys.stderr)


@flow(name="nightly", flow_run_name=_run_name, log_prints=True, on_crashed=[crash_notice.tell_of_a_crash])
def nightly(
    as_of: dt.date | None = None,
    catalog_dir: str | None = None,
    warehouse_file: str | None = None,
    reports_dir: str | None = None,
    run_id: str | None = None,
    source_files: dict[str, list[str]] | None = None,
    live: bool | None = None,
    accept_changes: list[str] | None = None,
    wait_s: float | None = None,
    allow_future_as_of: bool = False,
) -> RunResult:
    """Evaluate every workload on every offer from the sources declared in catalogs/sources.yaml.

    `source_files` maps a source id to files (`PATH` or `PATH@YYYY-MM-DD`) that replace its declared files.
    `live` fetches every source that has a `live:` block from its API (default: sources.yaml's `mode`).
    `accept_changes` names sources whose table-level checks (row-count drop, price change) are skipped this run.
    `wait_s`: how long to wait for another run holding the warehouse or reports (default: HWEVAL_LOCK_WAIT_S, else
    1800 s). `run_id` (default: made from the date) is letters, digits, `.`, `_` and `-`, at most 64.
    `allow_future_as_of`: accept an as-of date later than tomorrow (UTC), as HWEVAL_ALLOW_FUTURE_AS_OF=1 does; it
    holds reports/latest until it comes.

    A source stale past its `max_stale_days` still publishes the reports (with a warning), then fails the run
    (StalePastLimit). So does a step after the publish that failed, or a message a notification channel did not take
    (FailedAfterPublish): the run's events are sent (or logged) first.
    """
    global HOLDER
    started_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    cancellation.note_flow_run()  # `hweval run` on a lasting server: a run that fails before its first check is settled
    as_of = as_of or pipeline.default_as_of()  # today, UTC
    # a deployment's parameters, checked before any work (as `hweval run` checks its options): a typo is refused
    # at once, not after every source was fetched, and tells no channel
    pipeline.check_as_of(as_of, allow_future_as_of)
    run_id_given = run_id is not None
    run_id = pipeline.check_run_id(run_id) if run_id_given else pipeline.new_run_id(as_of)
    # absolute from here on: the Data Docs builder, the lock messages and the recovery journal take them as given
    catalog_root = paths.absolute(catalog_dir or paths.catalog_dir())
    catalog = take_catalog_loaded_ahead(catalog_root) or load_catalog(catalog_root)
    pipeline.check_files_dated(catalog, allow_future_as_of, source_files, live)
    warehouse_path = paths.absolute(warehouse_file or paths.warehouse_path())
    reports_root = paths.absolute(reports_dir or paths.reports_dir())
    pipeline.check_run_paths(warehouse_path, reports_root,
                             (paths.set_by(warehouse_file, "warehouse_file", paths.WAREHOUSE_ENV),
                              paths.set_by(reports_dir, "reports_dir", paths.REPORTS_DIR_ENV)))
    if run_id_given:  # another date's run id is refused now, not as the run is recorded (land checks it again, under
        pipeline.check_run_id_unused_in(warehouse_path, run_id, as_of)  # the lock, on the copy the run builds in)
    wait_s = runlock.configured_wait(wait_s)  # the parameter, else HWEVAL_LOCK_WAIT_S, else the default
    box = outbox.folder(warehouse_path)  # messages a channel did not take; a bad HWEVAL_NOTIFY_OUTBOX stops the run now
    notice = crash_notice.CrashNotice(catalog, as_of, run_id, reports_root, box, crash_notice.current_attempt())
    # from here to its end the run holds its run file: killed outright, it leaves the file for the next run to find
    HOLDER = killed_runs.holder_of(run_id, as_of, warehouse_path) | {
        "started_at": started_at.replace(tzinfo=dt.UTC).isoformat(timespec="seconds")}
    with (run_files.held(warehouse_path, HOLDER, killed_runs.START),
          crash_notice.told_if_crashed(notice)):
        try:
            return _evaluate_and_tell(notice, started_at, warehouse_path, source_files, live, accept_changes, wait_s)
        except cancellation.RunCancelled as exc:  # told; the flow run ends Cancelled, which Prefect takes over the
            return Cancelled(message=str(exc))  # Cancelling state it asked for (a Failed one it refuses)


# what the last flow body in this process ended on, its publish done: its RunResult (whose stale_past_limit and
# failed_after_publish say what it raised). `hweval run` reads it when Prefect's engine raises after the body
# finished (its API gone as it set the final state): the run published all the same
FINISHED: RunResult | None = None
# what the last flow body in this process wrote in its run file (flows/killed_runs.py holder_of): `hweval run` leaves
# it for the next run when Prefect's engine raises after the body finished, so that its flow run is not left Running
HOLDER: dict[str, str | None] | None = None


def _finished(result: RunResult) -> RunResult:
    global FINISHED
    FINISHED = result
    return result


def _evaluate_and_tell(notice: crash_notice.CrashNotice, started_at: dt.datetime, warehouse_path: Path,
                       source_files: dict[str, list[str]] | None, live: bool | None, accept_changes: list[str] | None,
                       wait_s: float) -> RunResult:
    """The run, then what it found to the notification channels (a failure too); raises what the run must say.
    A crash before a channel took the run's own message is told by the hook; one after it, no more (one message a
    run)."""
    global FINISHED
    FINISHED = None
    logger = get_run_logger()
    catalog, as_of, run_id, reports_root = notice.catalog, notice.as_of, notice.run_id, notice.reports_root
    try:
        result = _evaluate(catalog, as_of, run_id, started_at, warehouse_path, reports_root, source_files, live,
                           accept_changes, wait_s)
    except Exception as exc:
        raise_the_signal_behind(exc)  # a run stopped by a signal (in a DuckDB query) is a crash: the hook tells
        run_files.at(killed_runs.TELLING)
        error = redact_text(f"{type(exc).__name__}: {exc}")
        logger.error("run %s as of %s failed: %s", run_id, as_of, error)
        # the link: the reports the last good run published, this one published none
        notice.tell([notify.Event("run_failed", error)], None)
        raise
    run_files.at(killed_runs.TELLING)
    events = list(result.events)
    if result.stale_past_limit:  # the run is marked failed for them: a channel that follows failures alone is told
        events.append(notify.Event("run_failed", stale_past_limit_failed_line(result.stale_past_limit)))
    if result.failed_after_publish:  # the run's own events, and what failed after its publish
        events.append(notify.Event("run_failed", "published, but " + "; ".join(result.failed_after_publish)))
    deliveries = notice.tell(events, as_of)
    notify.log_deliveries(logger, deliveries)
    failures = notify.failures(deliveries)
    if failures:  # the people who follow the run were not told all it found, or what earlier runs found
        result = replace(result, failed_after_publish=(*result.failed_after_publish, *failures))
    if any(d.status == "failed" and not d.kept for d in deliveries):
        for event in events:
            logger.warning("undelivered %s: %s", event.kind, event.text)
    if result.stale_past_limit:
        for line in result.stale_past_limit:
            logger.error("stale past its limit: %s", line)
        raise StalePastLimit(_finished(result))
    if result.failed_after_publish:
        raise FailedAfterPublish(_finished(result))
    return _finished(result)


def stale_past_limit_failed_line(stale_past_limit: tuple[str, ...]) -> str:
    """The `run_failed` line of a run marked failed for sources stale past their limit (exit status 3, its Prefect
    state Failed): a channel that lists `run_failed` and not `source_stale_past_limit` heard nothing of it."""
    ids = ", ".join(line.split(" ", 1)[0] for line in stale_past_limit)  # each line opens with its source's id
    many = len(stale_past_limit) > 1
    return (f"marked failed: {len(stale_past_limit)} source{'s' if many else ''} stale past {'their' if many else 'its'} "
            f"limit ({ids}); the reports are published, every page warning that they use the last good data of "
            f"{'those sources' if many else 'that source'}")


def _evaluate(catalog: Catalog, as_of: dt.date, run_id: str, started_at: dt.datetime, warehouse_path: Path,
              reports_root: Path, source_files: dict[str, list[str]] | None, live: bool | None,
              accept_changes: list[str] | None, wait_s: float) -> RunResult:
    """fetch -> (one writer at a time) land -> build and render -> publish."""
    logger = get_run_logger()
    # a run of this warehouse killed outright left its run file: marked Crashed in Prefect and told of, which it
    # could not do
    def reckon_killed_runs() -> None:
        killed_runs.reckon(run_files.left_by_killed(warehouse_path), warehouse_path=warehouse_path,
                           reports_root=reports_root, catalog=catalog, found_by=run_id)

    reckon_killed_runs()
    # a reports prefix on object storage (HWEVAL_REPORTS_S3) and a DuckLake (HWEVAL_LAKE), read now: a bad setting
    # stops the run before any work
    reports_target = object_store.configured_target()
    lake_config = lake.configured()
    chart_workers.configured_workers()  # HWEVAL_CHART_WORKERS, read when the charts are drawn
    duckdb_settings.memory_limit()  # HWEVAL_DUCKDB_MEMORY_LIMIT, read by each DuckDB connection
    duckdb_settings.threads()  # HWEVAL_DUCKDB_THREADS, likewise
    fallbacks = pipeline.replaced_sources(catalog, source_files)
    if source_files:
        catalog = pipeline.with_source_files(catalog, source_files, as_of)
    if live is not None:
        catalog = pipeline.with_mode(catalog, "live" if live else "snapshot")
    pipeline.check_accept_changes(catalog, accept_changes)
    enabled = pipeline.sources_to_run(catalog)
    logger.info("run %s as of %s (%s): sources %s", run_id, as_of, catalog.sources.mode, ", ".join(enabled))

    # a source that cannot be read does not stop the others: it is stale, and the run uses its last good data.
    # The catalog goes to each task quoted (by reference): Prefect walks every argument it is given, and walking the
    # Catalog's models costs ~40 ms a task, measured (13 fetch, land and build tasks: ~0.5 s of CPU a run)
    run_files.at(killed_runs.FETCH)
    batches = fetch_all(catalog, enabled)
    cancellation.check("the landing")  # `hweval run` only: a deployment's worker stops its cancelled runs itself
    staging_dir = reports_root / f".{as_of.isoformat()}.rendering-{os.getpid()}"
    run_files.at(killed_runs.LOCK_WAIT)
    with runlock.exclusive(warehouse_path, reports_root, wait_s, _say,
                           waiting=lambda: cancellation.check_now_and_then("the landing")):
        run_files.at(killed_runs.LANDING)
        # and a run killed since this one started: the one it waited for, killed holding the lock
        reckon_killed_runs()
        for action in publish_journal.recover_killed_publish(warehouse_path, reports_root):
            logger.warning("%s", action)
        # what a killed run rendered but never published
        publishing.remove_leftovers_of_killed_runs(
            reports_root, r"\.\d{4}-\d\d-\d\d\.rendering-(?P<pid>\d+)(-latest|-docs)?")
        attempts = lake_config.commit_attempts if lake_config else 1
        for attempt in range(1, attempts + 1):
            try:
                with publishing.building_copy(warehouse_path, copy=lake_config is None) as building:
                    base = pull_lake(lake_config, building) if lake_config else None
                    loads = land(building, quote(catalog), batches, run_id, as_of, publishing.docs_dir_for(staging_dir),
                                 frozenset(accept_changes or ()), fallbacks,
                                 reports_root)
                    cancellation.check("the build")
                    run_files.at(killed_runs.BUILD)
                    latest_run = build_and_render(building, quote(catalog), loads, run_id, as_of, started_at,
                                                  staging_dir)
                    cancellation.check("the publish", last=True)  # a publish begun is finished
                    run_files.at(killed_runs.PUBLISH)
                    if lake_config:  # the lake is the warehouse of record: it commits before anything is published
                        commit_to_lake(lake_config, building, base, run_id, as_of)
                    dated, latest_updated = publish(building, warehouse_path, staging_dir, reports_root, as_of,
                                                    run_id, latest_run)
                break
            except lake.LakeConflict as exc:
                if attempt == attempts:
                    raise lake.LakeConflict(f"{exc}; gave up after {attempts} builds ({lake.ATTEMPTS_ENV})") from None
                logger.warning("%s: building again on the lake's newest snapshot (attempt %d of %d)", exc,
                               attempt + 1, attempts)
            finally:
                data_docs.abandon_site()  # a site still being built for a build that failed: nothing writes into it
                publishing.discard_rendering(staging_dir)
        # read back while no other run can replace what this one published. The publish is done: a step that fails
        # from here is recorded, and the run still tells its events (exit status 5, not "nothing changed")
        run_files.at(killed_runs.AFTER_PUBLISH)
        stale_past_limit = tuple(landing.stale_past_limit(catalog, loads, as_of))
        events, failed = after_publish.run_steps(warehouse_path, dated, as_of, run_id, stale_past_limit, reports_target,
                                                 latest_updated)
    logger.info("warehouse: %s; reports: %s%s", warehouse_path, dated,
                f" and {reports_root / 'latest'}" if latest_updated
                else f" (a backfill: reports/latest keeps {latest_run[1]})")
    return RunResult(run_id, as_of, warehouse_path, dated, loads, latest_updated, stale_past_limit, tuple(events),
                     tuple(failed))
