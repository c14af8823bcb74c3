"""A run killed outright leaves its lock files with its holder written in (flows/runlock.py); the next run that takes
the lock finds it, marks its flow run Crashed where Prefect still shows it unfinished, and tells the channels of a run
no deployment's crash-notice tells of (flows/killed_runs.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import CATALOGS
from test_changes import copy_of_day_one

from flows import killed_runs, runlock
from flows.catalog import load_catalog
from flows.cli import main

AS_OF = "2026-12-03"
ROOT = Path(__file__).resolve().parents[1]


def hold_then_killed(warehouse: Path, reports: Path, holder: dict) -> int:
    """A process that takes the run lock as a run does, killed outright (SIGKILL) while it holds it; its pid."""
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from flows import runlock
        with runlock.exclusive(Path({str(warehouse)!r}), Path({str(reports)!r}), 0, print, holder={holder!r}):
            print("held", flush=True)
            time.sleep(120)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout.readline() == "held\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return process.pid


def test_a_holder_killed_outright_is_found_by_the_next_run_and_a_released_lock_leaves_nothing(tmp_path):
    warehouse, reports = tmp_path / "hweval.duckdb", tmp_path / "reports"
    holder = {"run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "flow_run_id": None}
    pid = hold_then_killed(warehouse, reports, holder)
    # both lock files are left, with the same holder: found once
    assert sorted(p.name for p in tmp_path.glob(".*.lock")) == [".hweval.duckdb.lock"]
    assert (reports / runlock.REPORTS_LOCK_NAME).exists()

    with runlock.exclusive(warehouse, reports, 0, print, holder={"run_id": "2026-12-03-99999999"}) as left:
        [found] = left
        assert {k: found[k] for k in ("run_id", "as_of", "flow_run_id", "pid", "host")} == {
            **holder, "pid": pid, "host": socket.gethostname()}
        # this run's own holder is written over it
        assert json.loads((tmp_path / ".hweval.duckdb.lock").read_text())["run_id"] == "2026-12-03-99999999"
    # released: the files are removed, and the next run finds nothing
    assert not (tmp_path / ".hweval.duckdb.lock").exists()
    with runlock.exclusive(warehouse, reports, 0, print) as left:
        assert left == ()


@pytest.mark.parametrize("text", ["", "{\"pid\": 12", "[1, 2]", "{\"pid\": 1, \"host\": \"h\"}"])
def test_a_lock_file_without_a_whole_holder_in_it_names_no_killed_run(tmp_path, text):
    """A holder cut short as it wrote (killed between its truncate and its write), or no holder at all: nothing."""
    warehouse, reports = tmp_path / "hweval.duckdb", tmp_path / "reports"
    (tmp_path / ".hweval.duckdb.lock").write_text(text)
    with runlock.exclusive(warehouse, reports, 0, print) as left:
        assert left == ()


def a_flow_run(state, deployment: bool = False):
    """A flow run on the session's Prefect test server in `state` (of a deployment when `deployment`); its id."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name("nightly-killed-test")
        if deployment:
            deployment_id = client.create_deployment(flow_id=flow_id, name="killed-test")
            run = client.create_flow_run_from_deployment(deployment_id)
        else:
            run = client.create_flow_run(flow=_named_flow(), name=f"killed-{os.urandom(3).hex()}")
        client.set_flow_run_state(run.id, state, force=True)
        return run.id


def _named_flow():
    from prefect import flow

    @flow(name="nightly-killed-test")
    def nightly_killed_test() -> None:
        pass

    return nightly_killed_test


def state_of(flow_run_id):
    from prefect import get_client

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run_id)
        return run.name, run.state


def left_by(flow_run_id, host: str | None = None) -> dict:
    return {"pid": 4242, "host": host or socket.gethostname(), "started_at": "2026-12-03T02:30:00+00:00",
            "run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "flow_run_id": str(flow_run_id)}


def reckoned(tmp_path, left, current=None) -> list[str]:
    return killed_runs.reckon(tuple(left), warehouse_path=tmp_path / "hweval.duckdb", reports_root=tmp_path / "r",
                              catalog=load_catalog(CATALOGS), found_by="2026-12-04-11111111",
                              current_flow_run_id=current)


def test_a_killed_runs_flow_run_left_running_is_marked_crashed_and_its_channels_told(
        prefect_server, tmp_path, webhook, monkeypatch):
    from prefect.states import Running

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    killed = a_flow_run(Running())

    assert reckoned(tmp_path, [left_by(killed)]) == [f"{state_of(killed)[0]}: told"]

    name, state = state_of(killed)
    assert state.type.value == "CRASHED"
    assert state.message.startswith(f"killed outright: it never released its lock on {tmp_path / 'hweval.duckdb'}; "
                                    f"found by run 2026-12-04-11111111 at ")
    # told as crash-notice tells a crash: dated and identified as the killed run, not the run that found it
    [message] = webhook.requests
    body = json.loads(message["body"])
    assert body["title"] == f"hweval {AS_OF}: run failed"
    lines = body["message"].splitlines()
    assert lines[0] == f"flow run {name} crashed before it finished (Crashed: {state.message})"
    assert lines[-1] == "Run: 2026-12-03-0a1b2c3d"


def test_a_killed_deployment_run_is_marked_and_left_to_crash_notice_and_a_finished_one_is_left_alone(
        prefect_server, tmp_path, webhook, monkeypatch):
    from prefect.states import Completed, Crashed, Running

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    deployed = a_flow_run(Running(), deployment=True)
    finished = a_flow_run(Completed())
    already = a_flow_run(Crashed(message="by its worker"))

    assert reckoned(tmp_path, [left_by(deployed), left_by(finished), left_by(already)]) == [
        f"{state_of(deployed)[0]}: marked"]

    assert state_of(deployed)[1].type.value == "CRASHED"  # its Crashed state starts crash-notice, which tells
    assert state_of(finished)[1].type.value == "COMPLETED"
    assert state_of(already)[1].message == "by its worker"
    assert webhook.requests == []


def test_a_holder_on_another_machine_or_this_very_flow_run_is_not_marked(prefect_server, tmp_path, webhook,
                                                                         monkeypatch):
    """Another machine's pid says nothing here; a flow run retried (`prefect flow-run retry`) after its process was
    killed runs again under the same id, and finds its own holder: it is alive, not crashed."""
    from prefect.states import Running

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    elsewhere, retried = a_flow_run(Running()), a_flow_run(Running())

    assert reckoned(tmp_path, [left_by(elsewhere, host="another-machine"), left_by(retried)],
                    current=str(retried)) == []

    assert state_of(elsewhere)[1].type.value == state_of(retried)[1].type.value == "RUNNING"
    assert webhook.requests == []


def test_a_flow_run_unknown_to_this_server_or_a_server_that_does_not_answer_is_logged_and_the_run_goes_on(
        prefect_server, tmp_path, caplog, monkeypatch):
    import logging
    import uuid

    caplog.set_level(logging.INFO, "flows.killed_runs")
    unknown = uuid.uuid4()
    assert reckoned(tmp_path, [left_by(unknown)]) == []
    assert f"its flow run {unknown} is not on this Prefect server: not marked" in caplog.text

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # nothing listens on the discard port
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert reckoned(tmp_path, [left_by(unknown)]) == []
    assert f"could not mark its flow run {unknown} Crashed" in caplog.text


@pytest.mark.slow  # a whole run (~15 s); the parts are tested above in seconds
def test_hweval_run_after_one_killed_outright_marks_it_crashed_tells_of_it_and_publishes(
        flow_run, prefect_server, tmp_path, webhook, monkeypatch, capsys):
    """The whole path: a run of `hweval run` killed while it held the lock (its flow run left Running on the lasting
    server), then the next `hweval run` on the same warehouse."""
    from prefect.states import Running

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    killed = a_flow_run(Running())
    hold_then_killed(warehouse, reports, {"run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF,
                                          "flow_run_id": str(killed)})

    assert main(["run", "--as-of", AS_OF, "--catalog", str(CATALOGS), "--warehouse", str(warehouse), "--reports",
                 str(reports), "--wait", "0"]) == 0

    name, state = state_of(killed)
    assert state.type.value == "CRASHED"
    assert state.message.startswith(f"killed outright: it never released its lock on {warehouse}; found by run ")
    told = [json.loads(r["body"])["message"].splitlines()[0] for r in webhook.requests]
    assert f"flow run {name} crashed before it finished (Crashed: {state.message})" in told
    assert (reports / AS_OF / "index.md").exists()  # the run itself went on and published
    assert sorted(p.name for p in warehouse.parent.iterdir()) == ["hweval.duckdb"]  # its lock files removed
