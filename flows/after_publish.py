"""What a run does once its publish is done (flows/nightly.py calls `run_steps` inside the run's lock): the events
its channels are told, its Prefect artifacts, and the upload to object storage.

The publish stands whatever happens here. A step that fails is recorded (the run's `failed_after_publish`: exit
status 5, a `run_failed` line beside its events) and the next step still runs, so the run's events still go out. A
signal that stopped a step (a SIGTERM or Ctrl-C raised in a DuckDB query comes back as another error) stops the run:
it is a crash, told by the flow's on_crashed hook (flows/crash_notice.py).
"""

from __future__ import annotations

import contextvars
import datetime as dt
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from prefect import get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from flows import notify, object_store, reports, warehouse
from flows.crash_notice import raise_the_signal_behind
from flows.redaction import redact_text

ARTIFACT_TOP_ROWS = 10  # rows of each ranking in its table artifact
ARTIFACT_CALLS_AT_ONCE = 4  # artifacts made at once (19 a run, each a round trip to the Prefect API)

T = TypeVar("T")


def run_steps(warehouse_file: Path, dated: Path, as_of: dt.date, run_id: str, stale_past_limit: tuple[str, ...],
              reports_target: object_store.Target | None, latest_updated: bool) -> tuple[list[notify.Event], list[str]]:
    """The steps after the publish, in order; returns the run's events and what failed ("<step> failed: <error>").
    Called inside the run's lock: what it reads back is what this run published, and this machine's uploads take
    turns (other machines' runs are kept from moving the bucket's latest.json back by its conditional write,
    flows/object_store.py)."""
    failed: list[str] = []
    # the sources stale past their limit are known without the warehouse: told even when the changes cannot be read
    events = [notify.Event("source_stale_past_limit", line) for line in stale_past_limit]
    events += step("reading the run's changes", lambda: change_events(warehouse_file, as_of), failed) or []
    step("making the Prefect artifacts", lambda: publish_artifacts(warehouse_file, dated, as_of), failed)
    if reports_target is not None:
        step("the upload to object storage", lambda: publish_to_object_store(
            dated, reports_target, run_id, as_of, latest_updated), failed)
    return events, failed


def step(name: str, call: Callable[[], T], failed: list[str]) -> T | None:
    """One step after the publish, its value; a failure is recorded in `failed` (and the log) instead of raised (None):
    the run is published, and its events must still go out. A signal that stopped it stops the run (a crash)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 (whatever failed, the publish stands: the run says so and goes on)
        raise_the_signal_behind(exc)
        failed.append(f"{name} failed: {redact_text(f'{type(exc).__name__}: {exc}')}")
        get_run_logger().error("after the publish, %s", failed[-1])
        return None


@task(cache_policy=NO_CACHE)
def publish_artifacts(warehouse_file: Path, dated: Path, as_of: dt.date) -> list[str]:
    """Markdown artifacts of the index and each workload page (stable keys, so Prefect versions them) and a table
    artifact of each ranking's top rows; returns the keys.

    Each artifact is a round trip to the Prefect API and none waits on another: they are made ARTIFACT_CALLS_AT_ONCE
    at a time, each thread in a copy of this task's context (Prefect ties an artifact to the task run it finds there).
    """
    calls = [("hweval-index", create_markdown_artifact,
              {"markdown": (dated / "index.md").read_text(encoding="utf-8"),
               "description": f"hweval report index, as of {as_of}"})]
    con = warehouse.connect_read_only(warehouse_file)
    try:
        workloads = [r[0] for r in con.execute("select workload_id from catalog.workloads order by 1").fetchall()]
        for workload_id in workloads:
            key = artifact_key(workload_id)
            top = warehouse.fetch_dicts(con, """
                select outcome_rank as rank, cloud, region, instance_type, pricing_term, precision, accelerator_id,
                       accelerator_count, outcome_metric, round(outcome_value, 4) as outcome_value,
                       chip_hour_rank, round(usd_per_chip_hour, 4) as usd_per_chip_hour, basis
                from marts.rankings where as_of = ? and workload_id = ?
                order by outcome_rank, usd_per_chip_hour, candidate_id limit ?""",
                [as_of, workload_id, ARTIFACT_TOP_ROWS])
            calls += [
                (key, create_markdown_artifact,
                 {"markdown": (dated / f"{workload_id}.md").read_text(encoding="utf-8"),
                  "description": f"{workload_id}: ranked offers, as of {as_of}"}),
                (f"{key}-top", create_table_artifact,
                 {"table": top, "description": f"{workload_id}: top {ARTIFACT_TOP_ROWS} by outcome cost, as of {as_of}"}),
            ]
    finally:
        con.close()
    with ThreadPoolExecutor(max_workers=ARTIFACT_CALLS_AT_ONCE, thread_name_prefix="hweval-artifact") as pool:
        made = [pool.submit(contextvars.copy_context().run, create, key=key, **arguments)
                for key, create, arguments in calls]
        for future in made:
            future.result()  # the first that failed fails the task, as one after another did
    return [key for key, _, _ in calls]


@task(cache_policy=NO_CACHE)
def publish_to_object_store(dated: Path, target: object_store.Target, run_id: str, as_of: dt.date,
                            update_latest: bool) -> str:
    """The dated report folder to the S3 prefix, its manifest last (flows/object_store.py); a link artifact to it.

    Runs after the publish on disk: if it fails, the run fails after its publish (FailedAfterPublish: exit status 5,
    a run_failed line beside the run's events) while the bucket's manifest still names the previous run, and the
    next run publishes again."""
    manifest = object_store.publish(dated, target, run_id=run_id, as_of=as_of, update_latest=update_latest)
    url = f"s3://{target.bucket}/{manifest['index']}"
    create_link_artifact(key="hweval-reports-s3", link=url,
                         description=f"hweval reports as of {as_of} on object storage "
                                     f"({len(manifest['objects'])} objects; manifest {target.url(object_store.LATEST)})")
    get_run_logger().info("reports on object storage: %s (%d objects)%s", url, len(manifest["objects"]),
                          f"; {target.url(object_store.LATEST)} names this run" if update_latest
                          else f"; a backfill: {target.url(object_store.LATEST)} keeps the newer run")
    return url


def artifact_key(workload_id: str) -> str:
    """A Prefect artifact key (lowercase letters, digits, dashes) for a workload's page."""
    return "hweval-" + re.sub(r"[^a-z0-9-]+", "-", workload_id.lower()).strip("-")


def change_events(warehouse_file: Path, as_of: dt.date) -> list[notify.Event]:
    """The run's changes its followers are told of, read back from the warehouse: the best offers that changed."""
    con = warehouse.connect_read_only(warehouse_file)
    try:
        changed = warehouse.fetch_dicts(con, "select * from marts.changes where as_of = ? and change_kind = "
                                        "'best_offer_changed' order by workload_id", [as_of])
    finally:
        con.close()
    return [notify.Event("best_offer_changed", reports.best_offer_sentence(c)) for c in changed]
