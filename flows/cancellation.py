"""A run of `hweval run` cancelled from Prefect (its UI, `prefect flow-run cancel`) stops before its publish.

A deployment's run is stopped by its worker, which watches for the Cancelling state and ends the run's process. A run
started by `hweval run` has no worker: Prefect marked it Cancelling and nothing stopped it, so it published, told
its channels as if nothing had been asked, and stayed Cancelling (Prefect refuses a flow's own Completed or Failed
over a Cancelling state). So `hweval run` watches (`watching()`), and the flow asks Prefect at each step boundary
(`check`): after the fetch, while it waits for another run's lock, after the landing, after the build. A run asked to
stop raises RunCancelled there, before anything is published: the warehouse and the reports stay as the last good run
left them, the channels are told (a `run_failed` line, as for any failure), the flow ends Cancelled (flows/nightly.py
returns that state, which Prefect takes over Cancelling) and `hweval run` exits with status 6. The step in progress
finishes first (a fetch is bounded by `max_fetch_s`).

Once the publish has begun, a cancel is too late: the run finishes as it would have, and `settle` gives the flow run
the state it reached (Completed, or Failed), with a message saying the cancel came after the publish began, rather
than leave it Cancelling for ever.

A deployment's runs are not watched here: their worker stops them (and `crash-notice` tells of it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

LOCK_CHECK_INTERVAL_S = 2.0  # while a run waits for another's lock: how often it asks Prefect whether it was cancelled

logger = logging.getLogger(__name__)


class RunCancelled(RuntimeError):
    """The run was cancelled from Prefect and stopped before its publish; nothing was changed."""


@dataclass
class Watch:
    """What `hweval run` learns of its flow run as the flow checks: its id, when it last asked, and whether Prefect's
    API left a question unanswered."""

    flow_run_id: UUID | None = None
    last_check: float = float("-inf")
    unanswered: bool = False  # Prefect's API did not answer a check: the run no longer asks (each try costs seconds)


_watch: Watch | None = None


@contextmanager
def watching(watch: Watch) -> Iterator[Watch]:
    """For the block, the flow's `check`s ask Prefect whether the run was cancelled and note its id in `watch`
    (`hweval run` only)."""
    global _watch
    _watch = watch
    try:
        yield watch
    finally:
        _watch = None


def check(before: str) -> None:
    """Raise RunCancelled if Prefect was asked to cancel this flow run; `before` names the step it would start.

    Outside `watching()` (a deployment's run, a test calling the flow) it does nothing. A Prefect API that does not
    answer does not stop the run: it is logged, and the run goes on as if not cancelled, without asking again.
    """
    watch = _watch
    if watch is None:
        return
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    watch.flow_run_id = context.flow_run.id
    watch.last_check = time.monotonic()
    state = _read_state(watch)
    if state is not None and (state.is_cancelling() or state.is_cancelled()):
        why = f" ({state.message})" if state.message else ""
        raise RunCancelled(f"cancelled from Prefect{why} before {before}; nothing was published: the warehouse and the "
                           f"reports are as the last good run left them")


def check_now_and_then(before: str) -> None:
    """`check`, at most once every LOCK_CHECK_INTERVAL_S: for a loop that polls (the lock wait polls 5 times a
    second)."""
    watch = _watch
    if watch is not None and time.monotonic() - watch.last_check >= LOCK_CHECK_INTERVAL_S:
        check(before)


def _read_state(watch: Watch):
    from prefect import get_client

    if watch.unanswered:
        return None
    try:
        with get_client(sync_client=True) as client:
            return client.read_flow_run(watch.flow_run_id).state
    except Exception as exc:  # noqa: BLE001 - the run goes on: a cancel it cannot read is one it was not asked
        logger.warning("could not ask Prefect whether run %s was cancelled (%s: %s); going on without asking again",
                       watch.flow_run_id, type(exc).__name__, exc)
        watch.unanswered = True
        return None


def settle(watch: Watch, failed: bool) -> str | None:
    """After the flow: a flow run still Cancelling (Prefect was asked to cancel it after its publish had begun, and
    refused the flow's own end state) gets the state the run reached, Failed (`failed`) or Completed, saying so.
    Returns the state's type, or None when nothing was set (the flow ran no check, or its run is not Cancelling)."""
    if watch.flow_run_id is None or watch.unanswered:
        return None
    from prefect import get_client
    from prefect.states import Completed, Failed

    try:
        with get_client(sync_client=True) as client:
            state = client.read_flow_run(watch.flow_run_id).state
            if state is None or not state.is_cancelling():
                return None
            if failed:
                new = Failed(message="asked to cancel after its publish had begun: the run went on, and failed (its "
                                     "log and exit status say where)")
            else:
                new = Completed(message="asked to cancel after its publish had begun: the run finished, and its "
                                        "warehouse and reports are published")
            client.set_flow_run_state(watch.flow_run_id, new, force=True)
    except Exception as exc:  # noqa: BLE001 - the run is over; its exit status says what it did
        logger.warning("could not set the state of flow run %s (%s: %s)", watch.flow_run_id, type(exc).__name__, exc)
        return None
    return new.type.value
