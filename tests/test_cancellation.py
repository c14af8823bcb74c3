"""`hweval run` cancelled from Prefect (flows/cancellation.py): it stops at the next step boundary before its publish,
leaves the warehouse and the reports as the last good run left them, tells its channels, is marked Cancelled and exits
with status 6; a cancel after the publish began lets it finish, and its flow run is not left Cancelling."""

from __future__ import annotations

import json
import logging
import time
import uuid
from pathlib import Path

import pytest
from conftest import CATALOGS
from test_changes import copy_of_day_one

from flows import after_publish, cancellation, nightly, runlock
from flows.cli import main
from flows.run_command import EXIT_CANCELLED

AS_OF = "2026-12-03"


def cancel_this_run(said: list) -> None:
    """What Prefect's UI or `prefect flow-run cancel` does: the flow run to Cancelling (from inside the flow, so that
    the test knows its id)."""
    from prefect import get_client
    from prefect.context import FlowRunContext
    from prefect.states import Cancelling

    flow_run_id = FlowRunContext.get().flow_run.id
    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run_id, Cancelling(message="by a test"))
    said.append(flow_run_id)


def cancelled_after(monkeypatch, step: str, said: list) -> None:
    """Cancel the run once `step` (a name in flows.nightly: fetch_all, land, build_and_render, publish) returned."""
    original = getattr(nightly, step)

    def then_cancelled(*args, **kwargs):
        result = original(*args, **kwargs)
        cancel_this_run(said)
        return result

    monkeypatch.setattr(nightly, step, then_cancelled)


def state_of(flow_run_id):
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id).state


def run_args(warehouse: Path, reports: Path) -> list[str]:
    return ["run", "--as-of", AS_OF, "--catalog", str(CATALOGS), "--warehouse", str(warehouse), "--reports",
            str(reports), "--wait", "60"]


@pytest.mark.parametrize(("step", "before"), [
    ("build_and_render", "the publish"),  # the most work done: built and rendered, not published
    pytest.param("fetch_all", "the landing", marks=pytest.mark.slow),
    pytest.param("land", "the build", marks=pytest.mark.slow),
])
def test_hweval_run_cancelled_from_prefect_stops_before_its_publish_changes_nothing_and_is_marked_cancelled(
        flow_run, prefect_server, tmp_path, webhook, monkeypatch, capsys, step, before):
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    warehouse_before, latest_before = warehouse.read_bytes(), (reports / "latest" / "index.md").read_bytes()
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    said: list = []
    cancelled_after(monkeypatch, step, said)

    assert main(run_args(warehouse, reports)) == EXIT_CANCELLED == 6
    reason = (f"cancelled from Prefect (by a test) before {before}; nothing was published: the warehouse and the "
              f"reports are as the last good run left them")
    assert capsys.readouterr().err.splitlines()[-1] == f"hweval: the run was {reason} (exit status 6)"
    # nothing changed: the warehouse, reports/latest, no dated folder, nothing left rendering beside them
    assert warehouse.read_bytes() == warehouse_before
    assert (reports / "latest" / "index.md").read_bytes() == latest_before
    assert not (reports / AS_OF).exists()
    assert sorted(p.name for p in reports.iterdir() if p.name.startswith(".") and "rendering" in p.name) == []
    assert sorted(p.name for p in warehouse.parent.iterdir()) == ["hweval.duckdb"]  # no building copy, no lock file
    # the channel is told, as of any failure
    [message] = webhook.requests
    body = json.loads(message["body"])
    assert body["title"] == f"hweval {AS_OF}: run failed"
    assert body["message"].splitlines()[0] == f"RunCancelled: {reason}"
    # Prefect shows it Cancelled, not Cancelling for ever
    [flow_run_id] = said
    state = state_of(flow_run_id)
    assert (state.type.value, state.message) == ("CANCELLED", reason)


@pytest.mark.slow  # a whole flow call (~3 s): make test stays under 3 minutes; CI runs it
def test_a_cancel_after_the_publish_began_lets_the_run_finish_and_marks_it_completed_not_cancelling(
        flow_run, prefect_server, tmp_path, monkeypatch, capsys):
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    said: list = []
    cancelled_after(monkeypatch, "publish", said)

    assert main(run_args(warehouse, reports)) == 0
    err = capsys.readouterr().err
    assert ("hweval: Prefect was asked to cancel the run after its publish had begun: it finished (marked Completed)"
            in err.splitlines())
    assert (reports / AS_OF / "index.md").exists()  # published
    [flow_run_id] = said
    state = state_of(flow_run_id)
    assert (state.type.value, state.message) == (
        "COMPLETED", ("asked to cancel after its publish had begun: the run finished, and its warehouse and reports "
                      "are published"))


@pytest.mark.slow  # a whole run waiting on another's lock (2.7 s): make test-slow and CI
def test_a_run_cancelled_while_it_waits_for_another_runs_lock_stops_waiting(
        flow_run, prefect_server, tmp_path, monkeypatch, capsys):
    """The run waits up to 60 s for the lock another run holds; cancelled as it starts waiting, it stops within about
    LOCK_CHECK_INTERVAL_S (2 s) of the last check, not at the end of the wait."""
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    said: list = []
    say = nightly._say

    def told_to_wait_then_cancelled(message: str) -> None:
        say(message)
        cancel_this_run(said)

    monkeypatch.setattr(nightly, "_say", told_to_wait_then_cancelled)
    with runlock.exclusive(warehouse, reports, 0, print):  # the other run
        start = time.monotonic()
        assert main(run_args(warehouse, reports)) == EXIT_CANCELLED
        waited = time.monotonic() - start
    assert waited < 30, waited  # not the 60 s wait
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        "hweval: the run was cancelled from Prefect (by a test) before the landing; nothing was published")
    assert state_of(said[0]).type.value == "CANCELLED"


def test_only_a_watched_flow_run_stops_when_cancelled(prefect_server):
    """`hweval run` watches (on a lasting server); a deployment's run or the flow called from Python is not watched:
    its worker stops it, and `check` lets it go on."""
    from prefect import flow

    @flow
    def cancelled_then_checked() -> str:
        cancel_this_run([])
        cancellation.check("the next step")
        return "went on"

    assert cancelled_then_checked() == "went on"
    with cancellation.watching(cancellation.Watch()), pytest.raises(cancellation.RunCancelled, match=(
            r"^cancelled from Prefect \(by a test\) before the next step; nothing was published")):
        cancelled_then_checked()


@pytest.mark.slow  # a whole flow call (~3 s): make test stays under 3 minutes; CI runs it
def test_a_cancel_after_the_publish_then_a_failure_after_it_is_marked_failed_saying_so(
        flow_run, prefect_server, tmp_path, monkeypatch, capsys):
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    said: list = []
    cancelled_after(monkeypatch, "publish", said)

    def no_artifacts(*args, **kwargs):
        raise RuntimeError("no artifacts today")

    monkeypatch.setattr(after_publish, "publish_artifacts", no_artifacts)
    assert main(run_args(warehouse, reports)) == 5  # published, then a step failed: EXIT_FAILED_AFTER_PUBLISH
    assert "it finished (marked Failed)" in capsys.readouterr().err
    state = state_of(said[0])
    assert state.type.value == "FAILED"
    assert state.message.startswith("asked to cancel after its publish had begun: the run went on, and failed "
                                    "(FailedAfterPublish: ")


def test_a_cancelled_run_that_fails_before_its_publish_is_marked_failed_with_the_error_not_left_cancelling(
        flow_run, prefect_server, tmp_path, monkeypatch):
    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    warehouse_before = warehouse.read_bytes()
    said: list = []

    def cancelled_then_broken(*args, **kwargs):  # the build fails once the run was asked to cancel
        cancel_this_run(said)
        raise RuntimeError("the build broke")

    monkeypatch.setattr(nightly, "build_and_render", cancelled_then_broken)
    with pytest.raises(RuntimeError, match="the build broke"):
        main(run_args(warehouse, reports))
    state = state_of(said[0])
    assert (state.type.value, state.message) == (
        "FAILED", ("asked to cancel; the run failed before its publish (RuntimeError: the build broke): nothing was "
                   "published, the warehouse and the reports are as the last good run left them"))
    assert warehouse.read_bytes() == warehouse_before


@pytest.mark.slow  # a Prefect API that does not answer (1.6 s): make test-slow and CI
def test_a_prefect_api_that_does_not_answer_the_question_lets_the_run_go_on_said_once(caplog):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    watch = cancellation.Watch(flow_run_id=uuid.uuid4())
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}), \
            caplog.at_level(logging.WARNING, logger="flows.cancellation"):
        start = time.monotonic()
        assert cancellation._ask(watch, lambda client: client.read_flow_run(watch.flow_run_id)) is None
        assert cancellation.settle(watch, None) is None
        assert time.monotonic() - start < 5  # not retried: Prefect's client would back off 5 times
    [record] = caplog.records  # asked once: each try at an API that does not answer costs seconds
    assert record.getMessage().startswith(f"could not ask Prefect about run {watch.flow_run_id} (")
    assert record.getMessage().endswith("); going on without asking again")
    assert watch.unanswered


def test_settle_leaves_alone_a_run_whose_flow_never_began():
    """No flow run was noted (the flow never began: Prefect refused its parameters): nothing asked or set."""
    assert cancellation.settle(cancellation.Watch(), RuntimeError("bad parameter")) is None



def test_an_api_that_refuses_the_question_is_logged_without_the_password_in_its_url(prefect_server, caplog):
    """Prefect's client quotes the request's URL in an HTTP error: PREFECT_API_URL's password is masked in the log."""
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from test_killed_runs import refusing_api

    watch = cancellation.Watch(flow_run_id=uuid.uuid4())
    with refusing_api() as port, temporary_settings(
            updates={PREFECT_API_URL: f"http://hweval:Sup3rSecretPw@127.0.0.1:{port}/api"}):
        assert cancellation._ask(watch, lambda client: client.read_flow_run(watch.flow_run_id)) is None
    assert "PrefectHTTPStatusError: Client error '401 Unauthorized'" in caplog.text
    assert "Sup3rSecretPw" not in caplog.text
