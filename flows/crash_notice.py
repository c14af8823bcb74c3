"""The `crash_notice` Prefect flow: the notification a nightly run that crashed before its flow could send one.

A nightly run tells its channels when it fails, and its `on_crashed` hook tells them when it is stopped while its
flow runs (SIGTERM, Ctrl-C). A run that crashed before its flow started (a pull step that failed, a flow file that
did not import, a process killed outright) can tell no one: Prefect marks it Crashed, and that is all. prefect.yaml's
`crash-notice` deployment is triggered by that state (a Prefect automation on the `prefect.flow-run.Crashed` event of
a `nightly` flow run) and runs this flow on a worker, which sends the channels of the crashed run's catalog a
`run_failed` line, through the crashed run's outbox (flows/outbox.py) as the run itself would have.

A run whose hook told its channels carries the tag CRASH_TOLD_TAG: the notice says nothing again.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from typing import Any
from uuid import UUID

from prefect import flow, get_run_logger

from flows import notify, outbox, paths

CRASH_TOLD_TAG = "hweval-crash-told"  # on a crashed nightly run whose channels were told (by its hook or a notice)
NIGHTLY_FLOW = "nightly"
# the trigger passes the event's resource id, prefect.flow-run.<UUID>; a bare UUID is taken too (a run by hand)
FLOW_RUN_ID = re.compile(r"(?:prefect\.flow-run\.)?([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})")


class CrashNoticeError(ValueError):
    """The notice's flow_run_id names no nightly flow run this Prefect server knows."""


class CrashNoticeUndelivered(RuntimeError):
    """A channel did not take the notice (it is kept in the outbox for the next run): the notice run fails."""


def mark_told(flow_run_id: UUID, tags: list[str]) -> None:
    """Tag the crashed run CRASH_TOLD_TAG (before its channels are told: a notice that starts meanwhile stays quiet).
    Never raises: a tag that could not be set costs at most a second message."""
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run(flow_run_id, tags=[*tags, CRASH_TOLD_TAG])
    except Exception as exc:  # noqa: BLE001 (the message matters more than the mark)
        logging.getLogger(__name__).warning("could not tag flow run %s %s: %s", flow_run_id, CRASH_TOLD_TAG, exc)


def crash_line(run_name: str, state: Any) -> str:
    """The run_failed line of a crashed run: its name and its state's message."""
    return f"flow run {run_name} crashed before it finished ({state.name}: {state.message or 'no message'})"


@flow(name="crash_notice", log_prints=True)
def crash_notice(flow_run_id: str) -> str:
    """Tell the channels of the crashed nightly run `flow_run_id` (its UUID, or the event's `prefect.flow-run.<UUID>`)
    that it crashed, unless it told them itself; returns what was done. Read from the crashed run's parameters, else
    this worker's settings: its catalog (the channels), its warehouse (the outbox beside it), its reports folder (the
    link: the latest published reports), its as-of date (else the day it was due, UTC) and run id."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    from flows.catalog import load_catalog

    logger = get_run_logger()
    match = FLOW_RUN_ID.fullmatch(flow_run_id) if isinstance(flow_run_id, str) else None
    if match is None:
        raise CrashNoticeError(f"flow_run_id {str(flow_run_id)[:100]!r}: expected a flow run's UUID, or the event "
                               "resource prefect.flow-run.<UUID>")
    run_uuid = UUID(match[1])
    with get_client(sync_client=True) as client:
        try:
            run = client.read_flow_run(run_uuid)
        except ObjectNotFound:
            raise CrashNoticeError(f"flow_run_id {flow_run_id!r}: no such flow run on this Prefect server") from None
        flow_name = client.read_flow(run.flow_id).name
    if flow_name != NIGHTLY_FLOW:
        raise CrashNoticeError(f"flow run {run.name} ({run_uuid}) is a run of flow {flow_name!r}, not {NIGHTLY_FLOW!r}")
    if run.state is None or not run.state.is_crashed():
        logger.info("flow run %s is %s, not Crashed: nothing to tell", run.name, run.state.name if run.state else "new")
        return "not crashed"
    if CRASH_TOLD_TAG in run.tags:
        logger.info("flow run %s told its channels of its crash itself", run.name)
        return "told by the run"

    parameters = run.parameters or {}
    catalog = load_catalog(paths.absolute(parameters.get("catalog_dir") or paths.catalog_dir()))
    warehouse_path = paths.absolute(parameters.get("warehouse_file") or paths.warehouse_path())
    reports_root = paths.absolute(parameters.get("reports_dir") or paths.reports_dir())
    due = run.expected_start_time or run.created or dt.datetime.now(dt.UTC)
    as_of = _date(parameters.get("as_of")) or due.astimezone(dt.UTC).date()
    run_id = parameters.get("run_id") if isinstance(parameters.get("run_id"), str) else None
    mark_told(run_uuid, list(run.tags))
    deliveries = notify.send(catalog.notifications, [notify.Event("run_failed", crash_line(run.name, run.state))],
                             as_of=as_of, run_id=run_id or f"flow-run-{run_uuid}",
                             link=notify.report_link(catalog.notifications, reports_root, None),
                             box=outbox.folder(warehouse_path))
    for delivery in deliveries:
        logger.log(logging.WARNING if delivery.status == "failed" else logging.INFO, "notification %s: %s (%s)",
                   delivery.channel, delivery.status, delivery.detail)
    failures = notify.failures(deliveries)
    if failures:
        raise CrashNoticeUndelivered("; ".join(failures))
    return "told: " + ", ".join(f"{d.channel} {d.status}" for d in deliveries)


def _date(value: object) -> dt.date | None:
    """A run's as_of parameter as stored (an ISO date), or None when it has none or none that reads as a date."""
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
