"""A run killed outright is found by the next run on its warehouse: marked Crashed in Prefect, and told of.

A run killed outright (SIGKILL, out of memory, the machine lost) runs no hook: its flow run stays Running in Prefect
and no channel hears of it. A deployment's run is marked Crashed by its worker (or, when the worker died with it, by
the zombie automation) and told of by `crash-notice`; a run of `hweval run` has neither. What every run leaves is its
run file (flows/run_files.py): one that ends removes it, one killed outright leaves it, unlocked, with its holder
written in (pid, host, start, run id, as-of date, warehouse, flow run id and attempt, and the step it was at). So the
next run on the warehouse, as it starts (`reckon`):
- logs that the holder was killed outright, and at which step (what it had not published is discarded by the
  recovery that follows when this run takes the lock);
- when the holder named its flow run, and the Prefect API this run talks to holds that flow run in a state that is
  not final (Running, Pending, Cancelling) in the attempt it wrote, marks it Crashed with a message saying so;
- when that flow run was no deployment's (nobody else tells of it), sends the channels a `run_failed` line dated and
  identified as the killed run's, as `crash-notice` would have.

A deployment's run it marks is told of by `crash-notice` (the Crashed state starts it), not here. A run file of
another machine's run is left (flows/run_files.py): its pid says nothing here.

A run that ended but whose end Prefect did not record (its API gone as the engine set the final state: `hweval run`
exits 5, flows/run_command.py) leaves a run file too, with what it ended on (`leave_unrecorded`): the next run marks
that flow run Failed with it, where Prefect still shows it unfinished, rather than leave it Running for ever. Its
channels are not told again: the run told them what it found as it ended.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
from pathlib import Path
from uuid import UUID

from flows import crash_notice, notify, outbox, run_files
from flows.cancellation import bounded_client
from flows.catalog_models import Catalog
from flows.pipeline import RUN_ID_PATTERN
from flows.redaction import redact_text

logger = logging.getLogger(__name__)

# the steps a run writes in its run file as it reaches them (flows/nightly.py), as a message names them
START, FETCH, LOCK_WAIT, LANDING, BUILD, PUBLISH, AFTER_PUBLISH, TELLING = STEPS = (
    "its start", "its fetch", "its wait for the run lock", "its landing", "its build and render", "its publish",
    "its steps after the publish", "its notifications")
ENDED = "its end, which Prefect did not record"  # the step of a run file `leave_unrecorded` leaves
MAX_ENDED_CHARS = 500  # of what an ended run says it ended on, as the next run puts it in its flow run's message


def holder_of(run_id: str, as_of: dt.date, warehouse_path: Path) -> dict[str, str | None]:
    """What a run writes in its run file beside its pid, host and start: its run id, as-of date and warehouse, and
    its flow run's id and attempt (the id of its Running state: `prefect flow-run retry` runs the same flow run again,
    in another attempt)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    running = context is not None and context.flow_run is not None
    return {"run_id": run_id, "as_of": as_of.isoformat(), "warehouse": str(warehouse_path),
            "flow_run_id": str(context.flow_run.id) if running else None,
            "attempt": crash_notice.current_attempt() if running else None}


def leave_unrecorded(holder: dict[str, str | None] | None, ended: str) -> Path | None:
    """A run that ended (`ended`: what it ended on, in a line) but whose end Prefect did not record leaves its run file
    (`holder`, as `holder_of` made it) for the next run on its warehouse, which marks its flow run Failed with that
    line (`reckon`). Nothing when the run had no flow run to mark. The line is cut to what the file holds
    (run_files.MAX_HOLDER_BYTES, the most a run reads back of one): a longer file would be taken for a cut-short one."""
    if not holder or not holder.get("flow_run_id") or not holder.get("warehouse"):
        return None
    ended = ended[:MAX_ENDED_CHARS]
    while ended and run_files.written_bytes({**holder, "ended": ended}, ENDED) > run_files.MAX_HOLDER_BYTES:
        ended = ended[:len(ended) * 3 // 4]  # JSON writes non-ASCII as \u escapes: up to 12 bytes a character
    ended = ended or "Prefect could not record the run's end"  # never empty: an empty one reads as a killed run's
    return run_files.leave(Path(str(holder["warehouse"])), {**holder, "ended": ended}, ENDED)


def describe(info: dict) -> str:
    """A killed holder as the log names it: "run 2026-12-05-1a2b3c4d (pid 1234, started 2026-12-05T06:10:00+00:00)"."""
    run = f"run {info['run_id']}" if _run_id(info) else "an hweval run"
    where = "" if info.get("host") == socket.gethostname() else f" on {info.get('host')}"
    return redact_text(f"{run} (pid {info['pid']}{where}, started {info['started_at']})")


def reckon(left: tuple[dict, ...], *, warehouse_path: Path, reports_root: Path, catalog: Catalog,
           found_by: str) -> list[str]:
    """For each holder `left` in a run file no run held (run_files.left_by_killed): log it, mark its flow run Crashed
    where Prefect holds the attempt it wrote unfinished, and tell the channels of a run no deployment's crash-notice
    tells of. A holder a run left as it ended (`leave_unrecorded`) is marked Failed with what it ended on, not told.
    Returns the flow runs marked, as `name: told|marked` lines (for the tests and the log). Prefect's API is asked
    until it fails to answer once."""
    done = []
    answered = True
    for info in left:
        who = describe(info)
        during = step_of(info)
        ended = info.get("ended")
        ended = str(ended)[:MAX_ENDED_CHARS] if ended else None
        found = f"found by run {found_by} at {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC"
        if ended:
            logger.warning("%s on %s ended, but Prefect did not record its end: %s", who, warehouse_path,
                           redact_text(ended))
        else:
            logger.warning("%s on %s was killed outright%s (it never finished)", who, warehouse_path,
                           f" during {during}" if during else "")
        flow_run_id, attempt = info.get("flow_run_id"), info.get("attempt")
        if not (flow_run_id and attempt and answered):
            continue
        if info.get("host") != socket.gethostname():
            logger.warning("%s ran on another machine: its flow run is not marked", who)
            continue
        if ended:
            state_name, message = "Failed", f"{ended}; {found}"
        else:
            state_name = "Crashed"
            message = f"killed outright{f' during {during}' if during else ''} on {warehouse_path}; {found}"
        try:
            run = _mark(str(flow_run_id), str(attempt), who, state_name, redact_text(message))
        except Exception as exc:  # noqa: BLE001 - the run goes on: what it could not mark stays as Prefect shows it
            logger.warning("%s: could not mark its flow run %s %s (%s)", who, flow_run_id, state_name,
                           redact_text(f"{type(exc).__name__}: {exc}"))
            answered = False  # each try costs up to ASK_TIMEOUT_S: not asked again
            continue
        if run is None:
            continue
        if ended or run.deployment_id is not None:  # it told as it ended; a Crashed state starts crash-notice
            done.append(f"{run.name}: marked")
            continue
        _tell(info, crash_notice.crash_line(run.name, run.state), catalog, reports_root, warehouse_path)
        done.append(f"{run.name}: told")
    return done


def _mark(flow_run_id: str, attempt: str, who: str, state_name: str, message: str):
    """The flow run, marked `state_name` (Crashed or Failed) with `message`, if Prefect's API holds it unfinished in
    `attempt`; else None (logged why). Raises what the API raised when it did not answer."""
    from prefect.exceptions import ObjectNotFound
    from prefect.states import Crashed, Failed

    try:
        run_uuid = UUID(flow_run_id)
    except ValueError:
        logger.warning("%s left no flow run id (%r): not marked", who, flow_run_id[:40])
        return None
    with bounded_client() as client:
        try:
            run = client.read_flow_run(run_uuid)
        except ObjectNotFound:  # another server's run (a lasting server's, read from a temporary one, or the reverse)
            logger.info("%s: its flow run %s is not on this Prefect server: not marked", who, flow_run_id)
            return None
        if run.state is None or run.state.is_final():
            logger.info("%s: its flow run %s is already %s", who, run.name,
                        run.state.name if run.state else "without a state")
            return None
        states = sorted(client.read_flow_run_states(run_uuid), key=lambda state: state.timestamp)
        now = crash_notice.attempt_of(states, run.state)
        if now != attempt:  # retried since (`prefect flow-run retry`): the attempt under way or queued is not the dead one
            logger.info("%s: its flow run %s was retried since (attempt %s, not %s): not marked", who, run.name,
                        now, attempt)
            return None
        # Crashed not forced: one its worker or the zombie automation set meanwhile is not doubled. Failed forced: a
        # flow with retries left (PREFECT_FLOWS_DEFAULT_RETRIES) would be moved to AwaitingRetry instead (Prefect's
        # rule for a failed run), a retry no `hweval run` would ever take; it was read unfinished, in its attempt
        state = {"Crashed": Crashed, "Failed": Failed}[state_name](message=message)
        result = client.set_flow_run_state(run_uuid, state, force=state_name == "Failed")
        if result.status.value != "ACCEPT":
            logger.info("%s: Prefect did not take its flow run %s to %s (%s)", who, run.name, state_name,
                        result.status.value)
            return None
        return client.read_flow_run(run_uuid)


def _tell(info: dict, line: str, catalog: Catalog, reports_root: Path, warehouse_path: Path) -> None:
    """The channels of this run's catalog get the killed run's `run_failed` line, dated and identified as that run's
    (its as-of date and run id as it wrote them; else today and `flow-run-<id>`); a channel that does not take it keeps
    it in the outbox, as any message."""
    as_of = _as_of(info) or dt.datetime.now(dt.UTC).date()
    run_id = _run_id(info) or f"flow-run-{info['flow_run_id']}"
    deliveries = notify.send(catalog.notifications, [notify.Event("run_failed", line)], as_of=as_of, run_id=run_id,
                             link=notify.report_link(catalog.notifications, reports_root, None),
                             box=outbox.folder(warehouse_path))
    notify.log_deliveries(logger, deliveries)


def step_of(info: dict) -> str | None:
    """The step a killed run wrote it was at ("its fetch"), when it is one of the steps a run writes (run_files.at);
    anything else in the file is not repeated in a message."""
    step = info.get("step")
    return step if step in STEPS else None


def _run_id(info: dict) -> str | None:
    given = info.get("run_id")
    return given if isinstance(given, str) and RUN_ID_PATTERN.fullmatch(given) else None


def _as_of(info: dict) -> dt.date | None:
    try:
        return dt.date.fromisoformat(info.get("as_of") or "")
    except (TypeError, ValueError):
        return None
