"""Telling of a crashed nightly run: the flow's `on_crashed` hook, and the `crash_notice` flow for a run that crashed
before its flow could tell anyone.

A nightly run tells its channels when it fails, and its `on_crashed` hook (`tell_of_a_crash`, with `told_if_crashed`
and `CrashNotice.tell`, which flows/nightly.py calls) tells them when it is stopped while its flow runs (SIGTERM,
Ctrl-C). A run that crashed before its flow started (a pull step that failed, a flow file that
did not import, a process killed outright) can tell no one: Prefect marks it Crashed, and that is all. Nor can a run
cancelled from Prefect (its worker stops it; it ends Cancelled, and no on_crashed hook runs), even one cancelled after
it published. prefect.yaml's `crash-notice` deployment is triggered by either state (a Prefect automation on the
`prefect.flow-run.Crashed` and `prefect.flow-run.Cancelled` events of a `nightly` flow run) and runs this flow on a
worker, which sends the channels of the run's catalog a `run_failed` line, through the run's outbox
(flows/outbox.py) as the run itself would have.

Two tags say what the crashed run told in the attempt that crashed (a retry is the same flow run again: its marks
name their attempt, the id of the attempt's Running state). `hweval-told:<attempt>`: its channels got its message
(its own events or failure, or its hook's word of the crash): the notice says nothing again.
`hweval-telling:<attempt>` alone: its hook began telling and was stopped (a second Ctrl-C, SIGKILL at the end of a
grace period): the notice waits up to TELLING_WAIT_S for the hook to end, then tells. Only runs of the flow `nightly`
tagged `hweval` (its deployments' tag) are told of.

`raise_the_signal_behind` makes a run stopped by a signal a crash wherever the signal surfaced as another error (a
SIGTERM or Ctrl-C in a DuckDB query comes back as "Query interrupted"): flows/nightly.py and flows/after_publish.py
call it before they record a failure.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from prefect import flow, get_run_logger
from prefect.exceptions import TerminationSignal
from prefect.logging.loggers import flow_run_logger
from prefect.runtime import flow_run

from flows import notify, outbox, paths
from flows.pipeline import RUN_ID_PATTERN

if TYPE_CHECKING:
    from flows.catalog_models import Catalog

TOLD_TAG = "hweval-told"  # :<attempt>: the run's channels got its message: its events, its failure or its crash
TELLING_TAG = "hweval-telling"  # :<attempt>: the run's crash hook began telling its channels
# how long a notice waits for a hook that began telling. The hook's send first sends again what a channel did not
# take before (at most outbox.MAX_KEPT = 20 messages a channel, each at most ~8 s: 3 s to connect, 5 s to answer)
TELLING_WAIT_S = 600.0
WAIT_POLL_S = 1.0
NIGHTLY_FLOW = "nightly"
HWEVAL_TAG = "hweval"  # prefect.yaml's nightly deployments tag their runs so; another project's `nightly` is not
MAX_PARAMETER_CHARS = 4096  # a path parameter of the crashed run (a path that long is no path this worker has)
# the trigger passes the event's resource id, prefect.flow-run.<UUID>; a bare UUID is taken too (a run by hand)
FLOW_RUN_ID = re.compile(r"(?:prefect\.flow-run\.)?([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})")


class CrashNoticeError(ValueError):
    """The notice's flow_run_id names no nightly flow run this Prefect server knows."""


class CrashNoticeUndelivered(RuntimeError):
    """A channel did not take the notice (it is kept in the outbox for the next run): the notice run fails."""


def raise_the_signal_behind(exc: Exception) -> None:
    """Raise again the SIGTERM (Prefect's TerminationSignal) or Ctrl-C (KeyboardInterrupt) that `exc` was raised in
    place of, if any: the run was stopped, and ends Crashed, told by the on_crashed hook, as a run stopped anywhere
    else does, not Failed with an error that names no signal. DuckDB does so: the signal's exception, raised in the
    main thread while a query runs there, interrupts the query, and DuckDB raises RuntimeError("Query interrupted")
    from it. A query interrupted otherwise (duckdb.InterruptException, of `con.interrupt()`) has none behind it."""
    seen: set[int] = set()
    behind: BaseException | None = exc
    while behind is not None and id(behind) not in seen:
        seen.add(id(behind))
        # a new exception, raised from `exc`: the one behind it is already in its chain (no cycle)
        if isinstance(behind, TerminationSignal):
            raise TerminationSignal(signal=behind.signal) from exc
        if isinstance(behind, KeyboardInterrupt):
            raise KeyboardInterrupt from exc
        behind = behind.__cause__ or behind.__context__


def mark(kind: str, attempt: str) -> str:
    """The tag `kind` (TOLD_TAG, TELLING_TAG) of one attempt of a run."""
    return f"{kind}:{attempt}"


def current_attempt() -> str:
    """The attempt of the flow run this code runs in: its Running state's id (a retry has another)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    return str(context.flow_run.state_id) if context and context.flow_run else "none"


def tag_run(flow_run_id: UUID | str, tags: Iterable[str], kind: str, attempt: str) -> list[str]:
    """`tags` with the mark `kind` of `attempt` in place of any earlier attempt's, set on the flow run; returns them.
    Never raises: a tag that could not be set costs at most a second message (the notice's) or a wait."""
    from prefect.client.orchestration import get_client

    tags = [*(t for t in tags if not t.startswith(f"{kind}:")), mark(kind, attempt)]
    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run(UUID(str(flow_run_id)), tags=tags)
    except Exception as exc:  # noqa: BLE001 (the message matters more than the mark)
        logging.getLogger(__name__).warning("could not tag flow run %s %s: %s", flow_run_id, kind, exc)
    return tags


def attempt_of(states: list, crashed: Any) -> str:
    """The attempt a crash ended, from the run's states in time order: the Running state after the last Scheduled or
    Pending one (a retry starts again from one of those), else the crash's own state (its flow never ran)."""
    starts = [i for i, state in enumerate(states) if state.type.value in ("SCHEDULED", "PENDING")]
    running = [s for s in states[starts[-1] + 1 if starts else 0:] if s.type.value == "RUNNING"]
    return str(running[-1].id if running else crashed.id)


def crash_line(run_name: str, state: Any) -> str:
    """The run_failed line of a crashed (or cancelled) run: its name and its state's message."""
    how = "was cancelled" if state.is_cancelled() else "crashed"
    return f"flow run {run_name} {how} before it finished ({state.name}: {state.message or 'no message'})"


# ---------------------------------------------------------------- the nightly run's own hook

@dataclass(frozen=True)
class CrashNotice:
    """What telling a channel of a crashed run needs, settled as the run starts (its id, its date, its folders)."""
    catalog: Catalog
    as_of: dt.date
    run_id: str
    reports_root: Path
    box: Path
    attempt: str  # current_attempt(): the marks the run sets name it
    # the channels that took the run's own message (`took`): a crash as it tells the others is told to those only
    told_channels: set[str] = field(default_factory=set)

    def took(self, delivery: notify.Delivery) -> None:
        """notify.send's `delivered`: a channel that took the run's own message (not an earlier run's, sent again)."""
        if delivery.status == "sent" and not delivery.kept:
            self.told_channels.add(delivery.channel)

    def tell(self, events: list[notify.Event], published: dt.date | None) -> list[notify.Delivery]:
        """The run's own message to its channels (notify.send; the link to the reports of `published`, else the
        latest), each channel that takes it recorded as it does. Once one has, a crash from here on (the run stopped
        as it ends) is not told again: the hook's notice is dropped, and the run is tagged told for the crash-notice
        deployment."""
        notifications = self.catalog.notifications
        deliveries = notify.send(notifications, events, as_of=self.as_of, run_id=self.run_id,
                                 link=notify.report_link(notifications, self.reports_root, published), box=self.box,
                                 delivered=self.took)
        if self.told_channels:
            NOTICES.pop(str(flow_run.id), None)
            tag_run(flow_run.id, flow_run.tags, TOLD_TAG, self.attempt)
        return deliveries


# flow run id -> its notice, while the run is under way in this process: the on_crashed hook has only the flow run
NOTICES: dict[str, CrashNotice] = {}


@contextmanager
def told_if_crashed(notice: CrashNotice):
    """Keep `notice` for `tell_of_a_crash` while the body runs, until a channel took the run's own message
    (`CrashNotice.tell`); an exception (the flow's own failure: it tells the channels itself) or a return discards it.
    A crash leaves it to the hook: TerminationSignal (SIGTERM from the worker or the infrastructure), KeyboardInterrupt,
    SystemExit, none of them an Exception."""
    key = str(flow_run.id)
    NOTICES[key] = notice
    try:
        yield
    except Exception:
        NOTICES.pop(key, None)
        raise
    NOTICES.pop(key, None)


def tell_of_a_crash(_flow, run, state) -> None:
    """on_crashed: a run stopped before it could finish or fail on its own (killed with SIGTERM by its worker or
    infrastructure, interrupted) is a run_failed message, as a failed run is: its state alone told no one. A run
    that crashed before its settings were checked, or whose process was killed outright (SIGKILL, out of memory),
    cannot: prefect.yaml's crash-notice deployment tells for it (`crash_notice`, below)."""
    notice = NOTICES.pop(str(run.id), None)
    if notice is None:
        return
    # tagged as it begins, then as it is done: the crash-notice deployment, triggered by the same state, says nothing
    # again, or waits for a hook that began, and tells if this one was stopped before it was done
    tags = tag_run(run.id, run.tags, TELLING_TAG, notice.attempt)
    error = crash_line(run.name, state)
    notifications = notice.catalog.notifications
    untold = notifications.model_copy(update={"channels": {
        c_id: c for c_id, c in notifications.channels.items() if c_id not in notice.told_channels}})
    deliveries = notify.send(untold, [notify.Event("run_failed", error)], as_of=notice.as_of, run_id=notice.run_id,
                             link=notify.report_link(notifications, notice.reports_root, None), box=notice.box)
    tag_run(run.id, tags, TOLD_TAG, notice.attempt)
    # the hook runs after the run's context closed: get_run_logger() finds none
    notify.log_deliveries(flow_run_logger(run), deliveries, " of the crash")


# ------------------------------------------ the crash-notice deployment's flow

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
        if flow_name != NIGHTLY_FLOW or HWEVAL_TAG not in run.tags:
            raise CrashNoticeError(f"flow run {run.name} ({run_uuid}) is no hweval nightly run (flow {flow_name!r}, "
                                   f"tags {sorted(run.tags)!r}; expected flow {NIGHTLY_FLOW!r} tagged {HWEVAL_TAG!r})")
        # Cancelled too: a cancel that lands after the publish stopped the run before it told its channels (of
        # sources stale past their limit, say), and Prefect runs no on_crashed hook for it
        if run.state is None or not (run.state.is_crashed() or run.state.is_cancelled()):
            logger.info("flow run %s is %s, not Crashed or Cancelled: nothing to tell", run.name,
                        run.state.name if run.state else "new")
            return "not crashed"
        states = client.read_flow_run_states(run_uuid)
        attempt = attempt_of(states, run.state)
        if run.state.is_cancelled() and attempt == str(run.state.id):  # no Running state in this attempt
            logger.info("flow run %s was cancelled before it started: nothing was done, nothing to tell", run.name)
            return "cancelled before it ran"
        told, telling = mark(TOLD_TAG, attempt), mark(TELLING_TAG, attempt)
        deadline = time.monotonic() + TELLING_WAIT_S
        while telling in run.tags and told not in run.tags and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_S)  # its hook began telling: it ends within seconds (minutes at worst), or was stopped
            try:
                run = client.read_flow_run(run_uuid)
            except Exception as exc:  # noqa: BLE001 (the API did not answer: tell rather than lose the crash)
                logger.warning("could not read flow run %s again (%s): telling its channels now", run.name, exc)
                break
    if told in run.tags:
        logger.info("flow run %s told its channels itself", run.name)
        return "told by the run"
    if telling in run.tags:
        logger.warning("flow run %s began telling its channels of its crash and did not finish: telling them now",
                       run.name)

    parameters = run.parameters or {}
    catalog = load_catalog(paths.absolute(_path_parameter(parameters, "catalog_dir") or paths.catalog_dir()))
    warehouse_path = paths.absolute(_path_parameter(parameters, "warehouse_file") or paths.warehouse_path())
    reports_root = paths.absolute(_path_parameter(parameters, "reports_dir") or paths.reports_dir())
    due = run.expected_start_time or run.created or dt.datetime.now(dt.UTC)
    as_of = _date(parameters.get("as_of")) or due.astimezone(dt.UTC).date()
    # the crashed run never checked its run_id (its flow did not start): one that is no run id is not used
    given = parameters.get("run_id")
    run_id = given if isinstance(given, str) and RUN_ID_PATTERN.fullmatch(given) else f"flow-run-{run_uuid}"
    tags = tag_run(run_uuid, run.tags, TELLING_TAG, attempt)
    deliveries = notify.send(catalog.notifications, [notify.Event("run_failed", crash_line(run.name, run.state))],
                             as_of=as_of, run_id=run_id, link=notify.report_link(catalog.notifications, reports_root,
                                                                                 None),
                             box=outbox.folder(warehouse_path))
    tag_run(run_uuid, tags, TOLD_TAG, attempt)
    notify.log_deliveries(logger, deliveries)
    failures = notify.failures(deliveries)
    if failures:
        raise CrashNoticeUndelivered("; ".join(failures))
    return "told: " + ", ".join(f"{d.channel} {d.status}" for d in deliveries)


def _path_parameter(parameters: dict, name: str) -> str | None:
    """The crashed run's path parameter `name`, or None when it gave none; a CrashNoticeError naming it when it is no
    path (not text, or past MAX_PARAMETER_CHARS)."""
    value = parameters.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_PARAMETER_CHARS or "\0" in value:
        raise CrashNoticeError(f"the crashed run's parameter {name} {str(value)[:100]!r}: expected a path (text of at "
                               f"most {MAX_PARAMETER_CHARS} characters), or none")
    return value


def _date(value: object) -> dt.date | None:
    """A run's as_of parameter as stored (an ISO date), or None when it has none or none that reads as a date."""
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
