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
import threading
import time
from contextlib import contextmanager
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


def test_a_killed_run_that_waited_for_the_second_lock_is_found_once(tmp_path):
    """A run that waited for the reports lock wrote its two files at two starts: one run, found once."""
    warehouse, reports = tmp_path / "hweval.duckdb", tmp_path / "reports"
    reports.mkdir()
    holder = {"pid": 4242, "host": socket.gethostname(), "run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF,
              "flow_run_id": None}
    (tmp_path / ".hweval.duckdb.lock").write_text(json.dumps({**holder, "started_at": "2026-12-03T02:30:00+00:00"}))
    (reports / runlock.REPORTS_LOCK_NAME).write_text(json.dumps({**holder, "started_at": "2026-12-03T02:30:05+00:00"}))
    with runlock.exclusive(warehouse, reports, 0, print) as left:
        assert [found["started_at"] for found in left] == ["2026-12-03T02:30:00+00:00"]


def test_a_run_that_does_not_get_the_second_lock_puts_back_the_killed_holder_it_found(tmp_path):
    """The warehouse's lock, left by a killed run, taken; the reports folder's held by another run past the wait: the
    killed holder is written back, for the run that gets both (not lost with this run's removed file)."""
    import fcntl

    warehouse, reports = tmp_path / "hweval.duckdb", tmp_path / "reports"
    reports.mkdir()
    killed = {"pid": 4242, "host": socket.gethostname(), "started_at": "2026-12-03T02:30:00+00:00",
              "run_id": "2026-12-03-0a1b2c3d", "flow_run_id": None}
    (tmp_path / ".hweval.duckdb.lock").write_text(json.dumps(killed))
    other = os.open(reports / runlock.REPORTS_LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        with pytest.raises(runlock.RunLockTimeout), runlock.exclusive(warehouse, reports, 0, print):
            pass
    finally:
        os.close(other)
    assert json.loads((tmp_path / ".hweval.duckdb.lock").read_text()) == killed
    (reports / runlock.REPORTS_LOCK_NAME).unlink()  # the other run, released
    with runlock.exclusive(warehouse, reports, 0, print) as left:
        assert left == (killed,)


def a_flow_run(*states, deployment: bool = False):
    """A flow run on the session's Prefect test server taken through `states` (of a deployment when `deployment`);
    its id, and its attempt as a run writes it in its lock (the id of its last Running state)."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name("nightly-killed-test")
        if deployment:
            deployment_id = client.create_deployment(flow_id=flow_id, name="killed-test")
            run = client.create_flow_run_from_deployment(deployment_id)
        else:
            run = client.create_flow_run(flow=_named_flow(), name=f"killed-{os.urandom(3).hex()}")
        attempt = None
        for state in states:
            result = client.set_flow_run_state(run.id, state, force=True)
            if state.type.value == "RUNNING":
                attempt = str(result.state.id)
        return run.id, attempt


def _named_flow():
    from prefect import flow

    @flow(name="nightly-killed-test")
    def nightly_killed_test() -> None:
        pass

    return nightly_killed_test


def state_of(flow_run):
    """The (name, state) of a flow run given by its id, or by a_flow_run's (id, attempt)."""
    from prefect import get_client

    flow_run_id = flow_run[0] if isinstance(flow_run, tuple) else flow_run

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run_id)
        return run.name, run.state


def left_by(flow_run, host: str | None = None) -> dict:
    flow_run_id, attempt = flow_run
    return {"pid": 4242, "host": host or socket.gethostname(), "started_at": "2026-12-03T02:30:00+00:00",
            "run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "warehouse": "/srv/hweval/warehouse/hweval.duckdb",
            "flow_run_id": str(flow_run_id), "attempt": attempt}


def reckoned(tmp_path, left) -> list[str]:
    return killed_runs.reckon(tuple(left), warehouse_path=tmp_path / "hweval.duckdb", reports_root=tmp_path / "r",
                              catalog=load_catalog(CATALOGS), found_by="2026-12-04-11111111")


def test_a_killed_runs_flow_run_left_running_is_marked_crashed_and_its_channels_told(
        prefect_server, tmp_path, webhook, monkeypatch):
    from prefect.states import Running

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    killed = a_flow_run(Running())

    assert reckoned(tmp_path, [left_by(killed)]) == [f"{state_of(killed)[0]}: told"]

    name, state = state_of(killed)
    assert state.type.value == "CRASHED"
    # the warehouse it held, as it wrote it (a run of another warehouse may share the reports folder)
    assert state.message.startswith("killed outright: it never released its lock on "
                                    "/srv/hweval/warehouse/hweval.duckdb; found by run 2026-12-04-11111111 at ")
    # told as crash-notice tells a crash: dated and identified as the killed run, not the run that found it
    [message] = webhook.requests
    body = json.loads(message["body"])
    assert body["title"] == f"hweval {AS_OF}: run failed"
    lines = body["message"].splitlines()
    assert lines[0] == f"flow run {name} crashed before it finished (Crashed: {state.message})"
    assert lines[-1] == "Run: 2026-12-03-0a1b2c3d"


def test_a_killed_deployment_run_is_marked_and_left_to_crash_notice_and_a_finished_one_is_left_alone(
        prefect_server, tmp_path, webhook, monkeypatch, caplog):
    import logging

    from prefect.states import Completed, Crashed, Running

    caplog.set_level(logging.INFO, "flows.killed_runs")

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    deployed = a_flow_run(Running(), deployment=True)
    finished = a_flow_run(Running(), Completed())
    already = a_flow_run(Running(), Crashed(message="by its worker"))

    assert reckoned(tmp_path, [left_by(deployed), left_by(finished), left_by(already)]) == [
        f"{state_of(deployed)[0]}: marked"]

    assert state_of(deployed)[1].type.value == "CRASHED"  # its Crashed state starts crash-notice, which tells
    assert state_of(finished)[1].type.value == "COMPLETED"
    assert state_of(already)[1].message == "by its worker"
    assert f"its flow run {state_of(finished)[0]} is already Completed" in caplog.text
    assert webhook.requests == []


def test_a_run_retried_since_or_on_another_machine_is_not_marked(prefect_server, tmp_path, webhook, monkeypatch):
    """`prefect flow-run retry` runs the same flow run again in another attempt (another Running state): one under
    way or queued is alive, whichever run takes the killed attempt's lock. Another machine's pid says nothing here."""
    from prefect.states import Crashed, Pending, Running, Scheduled

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    killed_then_retried = a_flow_run(Running())
    _, retry = a_flow_run_again(killed_then_retried[0], Crashed(message="by its worker"), Scheduled(), Pending(),
                                Running())
    queued = a_flow_run(Running())
    a_flow_run_again(queued[0], Crashed(message="by its worker"), Scheduled())
    elsewhere = a_flow_run(Running())

    assert reckoned(tmp_path, [left_by(killed_then_retried), left_by(queued),
                               left_by(elsewhere, host="another-machine")]) == []

    assert retry != killed_then_retried[1]
    assert [state_of(run[0])[1].type.value for run in (killed_then_retried, queued, elsewhere)] == [
        "RUNNING", "SCHEDULED", "RUNNING"]
    assert webhook.requests == []


def a_flow_run_again(flow_run_id, *states):
    """More states of an existing flow run (a retry's); its id and the last Running state's id."""
    from prefect import get_client

    attempt = None
    with get_client(sync_client=True) as client:
        for state in states:
            result = client.set_flow_run_state(flow_run_id, state, force=True)
            if state.type.value == "RUNNING":
                attempt = str(result.state.id)
    return flow_run_id, attempt


def test_a_flow_run_unknown_to_this_server_or_a_server_that_does_not_answer_is_logged_and_the_run_goes_on(
        prefect_server, tmp_path, caplog, monkeypatch):
    import logging
    import uuid

    caplog.set_level(logging.INFO, "flows.killed_runs")
    unknown = (uuid.uuid4(), str(uuid.uuid4()))
    assert reckoned(tmp_path, [left_by(unknown)]) == []
    assert f"its flow run {unknown[0]} is not on this Prefect server: not marked" in caplog.text

    from prefect.settings import PREFECT_API_URL, temporary_settings

    # an API that refuses every request (401, its URL quoted in the error); the URL's password is not logged
    with refusing_api() as port, temporary_settings(
            updates={PREFECT_API_URL: f"http://hweval:Sup3rSecretPw@127.0.0.1:{port}/api"}):
        other = (uuid.uuid4(), str(uuid.uuid4()))
        assert reckoned(tmp_path, [left_by(unknown), left_by(other)]) == []
    assert f"could not mark its flow run {unknown[0]} Crashed (PrefectHTTPStatusError: Client error '401" in caplog.text
    assert str(other[0]) not in caplog.text  # asked once: an API that did not answer is not asked again
    assert "Sup3rSecretPw" not in caplog.text


@contextmanager
def refusing_api():
    """An HTTP server on 127.0.0.1 that answers every request 401; its port."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow  # two whole runs (~40 s); the parts are tested above in seconds
def test_hweval_run_after_one_killed_outright_marks_it_crashed_tells_of_it_and_publishes(
        flow_run, prefect_server, tmp_path, webhook, monkeypatch):
    """The whole path: a real `hweval run` on the lasting server, killed outright (SIGKILL, its process group) once it
    holds the lock, then the next `hweval run` on the same warehouse."""
    from prefect.settings import PREFECT_API_URL

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    lock = warehouse.with_name(".hweval.duckdb.lock")
    killed = subprocess.Popen(
        [str(Path(sys.executable).with_name("hweval")), "run", "--as-of", AS_OF, "--catalog", str(CATALOGS),
         "--warehouse", str(warehouse), "--reports", str(reports)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_API_URL": PREFECT_API_URL.value()})
    holder = None
    deadline = time.monotonic() + 180
    while holder is None and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        holder = runlock_holder(lock)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    assert holder is not None, "the run ended or never took its lock"
    # what the run wrote: its own pid, run id, date, warehouse, flow run and attempt (its Running state)
    name, state = state_of(holder["flow_run_id"])
    assert (holder["pid"], holder["as_of"], holder["warehouse"], state.type.value) == (
        killed.pid, AS_OF, str(warehouse), "RUNNING")
    assert holder["attempt"] == str(state.id)

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    assert main(["run", "--as-of", AS_OF, "--catalog", str(CATALOGS), "--warehouse", str(warehouse), "--reports",
                 str(reports), "--wait", "0"]) == 0

    name, state = state_of(holder["flow_run_id"])
    assert state.type.value == "CRASHED"
    assert state.message.startswith(f"killed outright: it never released its lock on {warehouse}; found by run ")
    told = [json.loads(r["body"]) for r in webhook.requests]
    assert {"title": f"hweval {AS_OF}: run failed",
            "first": f"flow run {name} crashed before it finished (Crashed: {state.message})",
            "last": f"Run: {holder['run_id']}"} in [
        {"title": t["title"], "first": t["message"].splitlines()[0], "last": t["message"].splitlines()[-1]}
        for t in told]
    assert (reports / AS_OF / "index.md").exists()  # the run itself went on and published
    assert sorted(p.name for p in warehouse.parent.iterdir()) == ["hweval.duckdb"]  # its lock files removed


def runlock_holder(lock: Path) -> dict | None:
    try:
        return json.loads(lock.read_text())
    except (FileNotFoundError, ValueError):
        return None
