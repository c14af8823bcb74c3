"""A run killed outright leaves its run file with its holder written in (flows/run_files.py); the next run on its
warehouse finds it, marks its flow run Crashed where Prefect still shows it unfinished, and tells the channels of a run
no deployment's crash-notice tells of (flows/killed_runs.py)."""

from __future__ import annotations

import json
import os
import re
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

from flows import killed_runs, run_files
from flows.catalog import load_catalog
from flows.cli import main

AS_OF = "2026-12-03"
HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64]  # as run files name this machine
ROOT = Path(__file__).resolve().parents[1]


def held_then_killed(warehouse: Path, holder: dict, step: str) -> int:
    """A process that holds a run file as a run does, at `step`, killed outright (SIGKILL) while it holds it; its
    pid."""
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from flows import run_files
        with run_files.held(Path({str(warehouse)!r}), {holder!r}, "its start"):
            run_files.at({step!r})
            print("held", flush=True)
            time.sleep(120)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout.readline() == "held\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return process.pid


def test_a_run_killed_outright_is_found_once_with_its_step_and_a_run_that_ended_leaves_nothing(tmp_path):
    warehouse = tmp_path / "hweval.duckdb"
    holder = {"run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "flow_run_id": None}
    pid = held_then_killed(warehouse, holder, killed_runs.FETCH)
    [left] = run_files.folder(warehouse).iterdir()
    # this machine's name first, then the run id, the pid and a random part (the same run id and pid again: another
    # file)
    assert re.fullmatch(rf"{re.escape(HOST)}--2026-12-03-0a1b2c3d-{pid}-[0-9a-f]{{8}}\.run\.json", left.name)

    [found] = run_files.left_by_killed(warehouse)
    assert {k: found[k] for k in ("run_id", "as_of", "flow_run_id", "pid", "host", "step")} == {
        **holder, "pid": pid, "host": socket.gethostname(), "step": "its fetch"}
    assert run_files.left_by_killed(warehouse) == ()  # taken by the run that found it: found once
    assert not left.exists()

    # a run that ends (however: here it raises) removes its file, and the folder with it when it is the last
    with pytest.raises(KeyError), run_files.held(warehouse, {"run_id": "2026-12-04-99999999"}, "its start") as mine:
        assert json.loads(mine.read_text())["step"] == "its start"
        run_files.at(killed_runs.PUBLISH)
        assert json.loads(mine.read_text())["step"] == "its publish"
        raise KeyError("a failed step")
    assert sorted(tmp_path.iterdir()) == []
    assert run_files.left_by_killed(warehouse) == ()


def test_a_run_under_way_and_another_machines_run_are_not_found_and_a_cut_short_file_is_removed(tmp_path, caplog):
    """A file another process holds (a run under way) is left; so is another machine's (its pid says nothing here).
    A file without a whole holder (killed between making and writing it) is removed, with a warning; one killed
    between writing a shorter step and cutting the file still names its holder."""
    import fcntl
    import logging

    caplog.set_level(logging.WARNING, "flows.run_files")
    warehouse = tmp_path / "hweval.duckdb"
    runs = run_files.folder(warehouse)
    runs.mkdir()
    holder = {"pid": 4242, "host": socket.gethostname(), "started_at": "2026-12-03T02:30:00+00:00",
              "run_id": "2026-12-03-0a1b2c3d", "step": "its fetch"}
    (runs / f"{HOST}--under-way.run.json").write_text(json.dumps(holder))
    # another machine's: by its name (never opened), and by the host written in it
    (runs / "another-machine--elsewhere.run.json").write_text(json.dumps({**holder, "host": "another-machine"}))
    (runs / f"{HOST}--renamed.run.json").write_text(json.dumps({**holder, "host": "another-machine"}))
    (runs / f"{HOST}--cut-short.run.json").write_text('{"pid": 12')
    (runs / f"{HOST}--tail.run.json").write_text(json.dumps(holder) + 'landing"}')  # after "its wait for the run lock"
    (runs / f"{HOST}--not-a-run-file.json").write_text(json.dumps(holder))
    under_way = os.open(runs / f"{HOST}--under-way.run.json", os.O_RDWR)
    fcntl.flock(under_way, fcntl.LOCK_EX)
    try:
        assert run_files.left_by_killed(warehouse) == (holder,)  # the tail's
    finally:
        os.close(under_way)
    assert sorted(p.name for p in runs.iterdir()) == sorted([
        "another-machine--elsewhere.run.json", f"{HOST}--renamed.run.json", f"{HOST}--not-a-run-file.json",
        f"{HOST}--under-way.run.json"])
    assert f"run file {runs / f'{HOST}--cut-short.run.json'} holds no whole run description" in caplog.text


def test_a_run_file_is_named_only_once_whole_and_locked_and_one_killed_as_it_was_made_is_removed(tmp_path):
    """A run makes its file under a name no run looks for, locked and written, then renames it: a run that looks
    never finds a run's file empty (it removed such a file as cut short, and the run went on without one). A file a
    run was killed making is removed once a minute old and unlocked; a younger or locked one is a run making it."""
    import fcntl

    warehouse = tmp_path / "hweval.duckdb"
    runs = run_files.folder(warehouse)
    seen = []
    real_rename = os.rename

    def rename(source, target):  # the made file at the moment it gets its name
        fd = os.open(source, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append((Path(source).name.startswith(f".{HOST}--making-"), run_files.holder_in(fd)["run_id"]))
        finally:
            os.close(fd)
        real_rename(source, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_files.os, "rename", rename)
        with run_files.held(warehouse, {"run_id": "r1"}, "its start"):
            pass
    assert seen == [(True, "r1")]

    runs.mkdir()
    old, young, locked = (runs / f".{HOST}--making-{n}.tmp" for n in ("old", "young", "locked"))
    for path in (old, young, locked):
        path.write_text("")
    for path in (old, locked):
        os.utime(path, (1_000_000, 1_000_000))
    fd = os.open(locked, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert run_files.left_by_killed(warehouse) == ()
    finally:
        os.close(fd)
    assert sorted(p.name for p in runs.iterdir()) == sorted([young.name, locked.name])


def test_a_run_whose_file_cannot_be_made_goes_on_without_one_and_a_killed_runs_file_is_never_written_over(
        tmp_path, caplog):
    import logging

    caplog.set_level(logging.WARNING, "flows.run_files")
    warehouse = tmp_path / "hweval.duckdb"
    run_files.folder(warehouse).write_text("a file where the run files' folder goes")
    with run_files.held(warehouse, {"run_id": "r1"}, "its start") as path:
        assert path is None
        run_files.at(killed_runs.LANDING)  # nothing to write in
    assert (f"this run's run file could not be made in {run_files.folder(warehouse)} (File exists): if this run is "
            "killed outright, no run will find it") in caplog.text

    # a killed run's file, then a run with the same run id and pid (a container's runs often have the same pid)
    run_files.folder(warehouse).unlink()
    other = tmp_path / "other.duckdb"
    with run_files.held(other, {"run_id": "r1"}, "its start") as killed:
        # what a kill leaves: the file, unlocked (a copy of it, where it was)
        left, kept = killed.read_bytes(), killed.name
    run_files.folder(other).mkdir()
    (run_files.folder(other) / kept).write_bytes(left)
    with run_files.held(other, {"run_id": "r1"}, "its start") as again:  # the same run id, the same pid
        assert again.name != kept
        [found] = run_files.left_by_killed(other)
    assert (found["run_id"], found["pid"], found["step"]) == ("r1", os.getpid(), "its start")


def test_the_run_files_looked_at_are_bounded_oldest_first(tmp_path, monkeypatch, caplog):
    import logging

    caplog.set_level(logging.WARNING, "flows.run_files")
    monkeypatch.setattr(run_files, "MAX_LOOKED_AT", 2)
    warehouse = tmp_path / "hweval.duckdb"
    runs = run_files.folder(warehouse)
    runs.mkdir()
    for n, name in enumerate(["c", "a", "b"]):  # c oldest, then a, then b
        path = runs / f"{HOST}--{name}.run.json"
        path.write_text(json.dumps({"pid": n, "host": socket.gethostname(), "started_at": "2026-12-03T02:30:00"}))
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    for n in range(5):  # other machines' files, older: never looked at, never counted (they would hide this one's)
        path = runs / f"another-machine--{n}.run.json"
        path.write_text(json.dumps({"pid": 10 + n, "host": "another-machine", "started_at": "2026-12-03T02:30:00"}))
        os.utime(path, (1_000, 1_000))
    assert [found["pid"] for found in run_files.left_by_killed(warehouse)] == [0, 1]
    assert (f"3 run files of this machine's runs in {runs}: the oldest 2 looked at, the rest left for the next run"
            in caplog.text)
    assert [found["pid"] for found in run_files.left_by_killed(warehouse)] == [2]
    assert len(list(runs.iterdir())) == 5


def a_flow_run(*states, deployment: bool = False, retries: int | None = None):
    """A flow run on the session's Prefect test server taken through `states` (of a deployment when `deployment`; of
    a flow with `retries`); its id, and its attempt as a run writes it in its lock (the id of its last Running
    state)."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name("nightly-killed-test")
        if deployment:
            deployment_id = client.create_deployment(flow_id=flow_id, name="killed-test")
            run = client.create_flow_run_from_deployment(deployment_id)
        else:
            run = client.create_flow_run(flow=_named_flow(retries), name=f"killed-{os.urandom(3).hex()}")
        attempt = None
        for state in states:
            result = client.set_flow_run_state(run.id, state, force=True)
            if state.type.value == "RUNNING":
                attempt = str(result.state.id)
        return run.id, attempt


def _named_flow(retries: int | None = None):
    from prefect import flow

    @flow(name="nightly-killed-test", retries=retries)
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
            "flow_run_id": str(flow_run_id), "attempt": attempt, "step": "its publish"}


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
    # the step it wrote it was at; the warehouse whose run files it was found among
    assert state.message.startswith(f"killed outright during its publish on {tmp_path / 'hweval.duckdb'}; found by "
                                    "run 2026-12-04-11111111 at ")
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


def test_a_run_whose_end_prefect_did_not_record_leaves_its_file_and_the_next_run_marks_it_failed_untold(
        prefect_server, tmp_path, webhook, monkeypatch, caplog):
    """A run that ended but whose end Prefect did not record (its API gone as the engine set the final state:
    `hweval run` exits 5) leaves its run file with what it ended on; the next run marks its flow run Failed with that
    line, where it is still Running, and tells no channel (the run told them as it ended). Before, it stayed Running."""
    import logging

    from prefect.states import Running

    caplog.set_level(logging.INFO, "flows.killed_runs")
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    warehouse = tmp_path / "hweval.duckdb"
    ended = a_flow_run(Running())
    holder = {"run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "warehouse": str(warehouse),
              "flow_run_id": str(ended[0]), "attempt": ended[1], "started_at": "2026-12-03T02:30:00+00:00"}
    line = "published, but Prefect could not record the run's end (ConnectError: [Errno 111] Connection refused)"
    left = killed_runs.leave_unrecorded(holder, line)
    assert left.parent == run_files.folder(warehouse) and left.name.startswith(f"{HOST}--2026-12-03-0a1b2c3d-")
    # a run without a flow run (a flow called outside Prefect's engine) leaves nothing
    assert killed_runs.leave_unrecorded(holder | {"flow_run_id": None}, line) is None

    [info] = run_files.left_by_killed(warehouse)  # unlocked at once: found as a killed run's is, once
    assert run_files.left_by_killed(warehouse) == ()
    assert info["ended"] == line and info["step"] == killed_runs.ENDED and info["pid"] == os.getpid()
    assert info["started_at"] == "2026-12-03T02:30:00+00:00"  # the run's own start, not the file's

    name = state_of(ended)[0]
    assert killed_runs.reckon((info,), warehouse_path=warehouse, reports_root=tmp_path / "r",
                              catalog=load_catalog(CATALOGS), found_by="2026-12-04-11111111") == [f"{name}: marked"]
    state = state_of(ended)[1]
    assert state.type.value == "FAILED"
    assert state.message.startswith(f"{line}; found by run 2026-12-04-11111111 at ")
    assert webhook.requests == []
    assert f"run 2026-12-03-0a1b2c3d (pid {os.getpid()}, started 2026-12-03T02:30:00+00:00) on {warehouse} ended, " \
           f"but Prefect did not record its end: {line}" in caplog.text
    assert "killed outright" not in caplog.text
    # found again (a second file of the same run), the flow run is final now: left as it is
    killed_runs.leave_unrecorded(holder, line)
    assert killed_runs.reckon(run_files.left_by_killed(warehouse), warehouse_path=warehouse,
                              reports_root=tmp_path / "r", catalog=load_catalog(CATALOGS),
                              found_by="2026-12-05-22222222") == []
    assert f"its flow run {name} is already Failed" in caplog.text
    # a flow with retries left (PREFECT_FLOWS_DEFAULT_RETRIES): marked Failed all the same, not moved to AwaitingRetry
    # (Prefect's rule for a failed run), a retry no `hweval run` would take
    with_retries = a_flow_run(Running(), retries=1)
    killed_runs.leave_unrecorded(holder | {"flow_run_id": str(with_retries[0]), "attempt": with_retries[1]}, line)
    assert killed_runs.reckon(run_files.left_by_killed(warehouse), warehouse_path=warehouse,
                              reports_root=tmp_path / "r", catalog=load_catalog(CATALOGS),
                              found_by="2026-12-05-22222222") == [f"{state_of(with_retries)[0]}: marked"]
    assert (state_of(with_retries)[1].type.value, state_of(with_retries)[1].name) == ("FAILED", "Failed")


def test_what_a_run_leaves_as_it_ended_is_cut_to_what_the_next_run_reads_back(tmp_path, caplog):
    """A run file is read back to run_files.MAX_HOLDER_BYTES (4096): what a run ended on is cut to fit, whatever its
    characters (JSON writes an emoji as two \\uXXXX escapes, 12 bytes); a holder that cannot fit is not left (the next
    run would take it for one cut short as it was written, and say so)."""
    warehouse = tmp_path / "hweval.duckdb"
    holder = {"run_id": "2026-12-03-0a1b2c3d", "as_of": AS_OF, "warehouse": str(warehouse), "flow_run_id": "f",
              "attempt": "a"}
    line = "published, but " + "\N{GRINNING FACE}" * 600  # 500 characters kept: 15 + 485 x 12 bytes, over 4096
    left = killed_runs.leave_unrecorded(holder, line)
    assert left.stat().st_size <= run_files.MAX_HOLDER_BYTES
    [info] = run_files.left_by_killed(warehouse)
    assert line.startswith(info["ended"]) and len(info["ended"]) > 200
    assert killed_runs.leave_unrecorded(holder | {"as_of": "x" * 5000}, line) is None
    assert "its 5" in caplog.text and "bytes are more than a run reads back (4096)" in caplog.text
    assert run_files.left_by_killed(warehouse) == ()


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
def test_hweval_run_killed_as_it_waits_for_the_lock_is_marked_crashed_and_told_of_by_the_next_run(
        flow_run, prefect_server, tmp_path, webhook, monkeypatch):
    """The whole path: a real `hweval run` on the lasting server, killed outright (SIGKILL, its process group) while
    it waits for the run lock (held here): before it took the lock, so only its run file can tell of it. Then the
    next `hweval run` on the same warehouse, which finds it as it starts (before the lock it does not get), and one
    more that publishes."""
    import fcntl

    from prefect.settings import PREFECT_API_URL

    warehouse, reports = copy_of_day_one(flow_run, tmp_path)
    runs = run_files.folder(warehouse)
    lock = os.open(warehouse.with_name(".hweval.duckdb.lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # another run, as far as the killed one (and the next) can tell
    try:
        killed = subprocess.Popen(
            [str(Path(sys.executable).with_name("hweval")), "run", "--as-of", AS_OF, "--catalog", str(CATALOGS),
             "--warehouse", str(warehouse), "--reports", str(reports), "--wait", "300"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_API_URL": PREFECT_API_URL.value()})
        holder = None
        deadline = time.monotonic() + 180
        while killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            holder = run_file_holder(runs)
            if holder is not None and holder["step"] == killed_runs.LOCK_WAIT:
                break
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        assert holder is not None and holder["step"] == "its wait for the run lock", f"the run got no further: {holder}"
        # what the run wrote: its own pid, run id, date, warehouse, flow run and attempt (its Running state)
        name, state = state_of(holder["flow_run_id"])
        assert (holder["pid"], holder["as_of"], holder["warehouse"], state.type.value) == (
            killed.pid, AS_OF, str(warehouse), "RUNNING")
        assert holder["attempt"] == str(state.id)

        # the next run finds it as it starts: told even though it then gives up on the lock (still held: exit 4)
        monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
        assert main(["run", "--as-of", AS_OF, "--catalog", str(CATALOGS), "--warehouse", str(warehouse), "--reports",
                     str(reports), "--wait", "0"]) == 4
    finally:
        os.close(lock)

    name, state = state_of(holder["flow_run_id"])
    assert state.type.value == "CRASHED"
    assert state.message.startswith(f"killed outright during its wait for the run lock on {warehouse}; found by run ")
    told = [json.loads(r["body"]) for r in webhook.requests]
    assert {"title": f"hweval {AS_OF}: run failed",
            "first": f"flow run {name} crashed before it finished (Crashed: {state.message})",
            "last": f"Run: {holder['run_id']}"} in [
        {"title": t["title"], "first": t["message"].splitlines()[0], "last": t["message"].splitlines()[-1]}
        for t in told]
    # the lock released, a run goes on and publishes; the killed run's file was taken, found once
    assert main(["run", "--as-of", AS_OF, "--catalog", str(CATALOGS), "--warehouse", str(warehouse), "--reports",
                 str(reports), "--wait", "0"]) == 0
    assert (reports / AS_OF / "index.md").exists()
    assert sum(f"Run: {holder['run_id']}" in json.loads(r["body"])["message"] for r in webhook.requests) == 1
    # the run's own file removed with its folder, the lock file removed
    assert sorted(p.name for p in warehouse.parent.iterdir()) == ["hweval.duckdb"]


def run_file_holder(runs: Path) -> dict | None:
    """The holder in the one run file in `runs`, once there is one with a whole holder in it."""
    try:
        [path] = runs.iterdir()
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):  # no folder or file yet, or more than one, or not written yet
        return None
