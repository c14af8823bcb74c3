"""A run of `hweval run` cancelled from Prefect (its UI, `prefect flow-run cancel`) stops before its publish.

A deployment's run is stopped by its worker, which watches for the Cancelling state and ends the run's process. A run
started by `hweval run` has no worker: Prefect marked it Cancelling and nothing stopped it, so it published, told
its channels as if nothing had been asked, and stayed Cancelling (Prefect refuses a flow's own Completed or Failed
over a Cancelling state). So `hweval run` on a lasting server watches (`watching()`; its temporary server has no UI,
and nobody can cancel there), and the flow asks Prefect at each step boundary
(`check`): after the fetch, while it waits for another run's lock, after the landing, after the build. A run asked to
stop raises RunCancelled there, before anything is published: the warehouse and the reports stay as the last good run
left them, the channels are told (a `run_failed` line, as for any failure), the flow ends Cancelled (flows/nightly.py
returns that state, which Prefect takes over Cancelling) and `hweval run` exits with status 6. The step in progress
finishes first (a fetch is bounded by `max_fetch_s`).

Once the publish has begun, a cancel is too late: the run finishes as it would have, and `settle` gives the flow run
the state it reached (Completed, or Failed with its error), with a message saying the cancel came after the publish
began, rather than leave it Cancelling for ever; a cancelled run that failed before its publish (a lock waited for
past --wait, a step that broke) is settled Failed with its error too.

A deployment's runs are not watched here: their worker stops them (and `crash-notice` tells of it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from uuid import UUID

from flows.redaction import redact_text

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient

T = TypeVar("T")

LOCK_CHECK_INTERVAL_S = 2.0  # while a run waits for another's lock: how often it asks Prefect whether it was cancelled
# each question to Prefect's API: at most this long and never retried (Prefect's client retries 5 times with backoff
# by default: an API that took connections but never answered held a finished run for minutes)
ASK_TIMEOUT_S = 10.0
ERROR_CHARS = 500  # of the error a settled state's message quotes

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
    publishing: bool = False  # the last check, before the publish, was passed: a cancel from here on is too late


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


def note_flow_run() -> Watch | None:
    """Note the flow run's id in the watch, if `hweval run` watches (the flow's first step: a run that fails before
    its first check is still settled, not left Cancelling). Asks Prefect nothing."""
    watch = _watch
    if watch is None:
        return None
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None
    watch.flow_run_id = context.flow_run.id
    return watch


def check(before: str, last: bool = False) -> None:
    """Raise RunCancelled if Prefect was asked to cancel this flow run; `before` names the step it would start, and
    `last` says it is the publish (past it, a cancel is too late).

    Outside `watching()` (a deployment's run, a test calling the flow) it does nothing. A Prefect API that does not
    answer does not stop the run: it is logged, and the run goes on as if not cancelled, without asking again.
    """
    watch = note_flow_run()
    if watch is None:
        return
    watch.last_check = time.monotonic()
    state = _ask(watch, lambda client: client.read_flow_run(watch.flow_run_id).state)
    if state is not None and (state.is_cancelling() or state.is_cancelled()):
        why = f" ({state.message})" if state.message else ""
        raise RunCancelled(f"cancelled from Prefect{why} before {before}; nothing was published: the warehouse and the "
                           f"reports are as the last good run left them")
    watch.publishing = last


def check_now_and_then(before: str) -> None:
    """`check`, at most once every LOCK_CHECK_INTERVAL_S: for a loop that polls (the lock wait polls 5 times a
    second)."""
    watch = _watch
    if watch is not None and time.monotonic() - watch.last_check >= LOCK_CHECK_INTERVAL_S:
        check(before)


def _ask(watch: Watch, question: Callable[[SyncPrefectClient], T]) -> T | None:
    """`question` put to Prefect's API on a client of its own, bounded by ASK_TIMEOUT_S and not retried; None, logged
    once, when the API does not answer (and from then on, without asking)."""
    if watch.unanswered:
        return None
    try:
        with bounded_client() as client:
            return question(client)
    except Exception as exc:  # noqa: BLE001 - the run goes on: a cancel it cannot read is one it was not asked
        logger.warning("could not ask Prefect about run %s (%s); going on without asking again",
                       watch.flow_run_id, redact_text(f"{type(exc).__name__}: {exc}"))
        watch.unanswered = True
        return None


@contextmanager
def bounded_client() -> Iterator[SyncPrefectClient]:
    """A Prefect client of its own whose every call is bounded by ASK_TIMEOUT_S and not retried."""
    from prefect import get_client
    from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, temporary_settings

    with (temporary_settings(updates={PREFECT_CLIENT_MAX_RETRIES: 0}),
          get_client(httpx_settings={"timeout": ASK_TIMEOUT_S}, sync_client=True) as client):
        yield client


def settle(watch: Watch, error: BaseException | None) -> str | None:
    """After the flow: a flow run still Cancelling (Prefect refused the flow's own end state over it) gets the state
    the run reached, saying so: Completed, or Failed when `error` (what the flow raised) ended it, after its publish
    had begun or before it. Returns the state's type, or None when nothing was set (no flow run noted, or it is not
    Cancelling)."""
    if watch.flow_run_id is None:
        return None
    from prefect.states import Completed, Failed


    def settled(client: SyncPrefectClient) -> str | None:
        state = client.read_flow_run(watch.flow_run_id).state
        if state is None or not state.is_cancelling():
            return None
        what = "" if error is None else redact_text(f"{type(error).__name__}: {error}")[:ERROR_CHARS]
        if not watch.publishing:
            new = Failed(message=f"asked to cancel; the run failed before its publish ({what}): nothing was "
                                 f"published, the warehouse and the reports are as the last good run left them")
        elif error is not None:
            new = Failed(message=f"asked to cancel after its publish had begun: the run went on, and failed ({what})")
        else:
            new = Completed(message="asked to cancel after its publish had begun: the run finished, and its "
                                    "warehouse and reports are published")
        client.set_flow_run_state(watch.flow_run_id, new, force=True)
        return new.type.value

    return _ask(watch, settled)
