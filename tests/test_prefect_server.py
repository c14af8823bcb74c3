"""flows/prefect_server.py: the temporary Prefect server `hweval run` launches when it has none to talk to (one start
at a time on a PREFECT_HOME, a failed or slow start, a taken port, the warm-up of its first requests). The whole
run with a real one is in tests/test_cli.py (marked slow)."""

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest


class FakeApi(ThreadingHTTPServer):
    """A Prefect API stand-in on 127.0.0.1: /api/health answers 503 `unready` times, then 200; `failing` paths
    answer 500, any other path 200 with `{}`. Every request is recorded: (method, path, JSON body or None, status)."""

    def __init__(self, unready: int = 0, failing: tuple[str, ...] = ()):
        self.unready, self.failing, self.requests = unready, failing, []
        super().__init__(("127.0.0.1", 0), FakeApiHandler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server_address[1]


class FakeApiHandler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        api: FakeApi = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        if self.path == "/api/health":
            status = 503 if sum(1 for r in api.requests if r[1] == "/api/health") < api.unready else 200
        else:
            status = 500 if self.path in api.failing else 200
        api.requests.append((self.command, self.path, body, status))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


def sleeping_process() -> subprocess.Popen:
    """A process that stands for the server's while the fake API answers for it."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_the_server_is_sent_the_flows_first_requests_once_it_answers_its_health_check(monkeypatch, tmp_path):
    """launch() starts the warm-up: it polls /health (503, 503, then 200) and only then asks what the flow's start
    asks first, reads only: the API version, then one flow run (a filter with limit 1)."""
    from flows import prefect_server

    api = FakeApi(unready=2)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)

    def launch(self):
        self.port, self.process = api.port, sleeping_process()

    monkeypatch.setattr(prefect_server.TemporaryServer, "_launch", launch)
    server = prefect_server.TemporaryServer.launch()
    try:
        assert server.warmed.wait(timeout=30), server.warm_up_error
    finally:
        server.stop()
        api.shutdown()
    polls = [r for r in api.requests if r[1] == "/api/health"]
    assert [status for *_, status in polls] == [503, 503, 200]
    first_answer = api.requests.index(polls[-1])
    assert api.requests[:first_answer] == polls[:-1]  # nothing else before the server answered
    assert api.requests[first_answer + 1:] == [("GET", "/api/admin/version", None, 200),
                                               ("POST", "/api/flow_runs/filter", {"limit": 1}, 200)]
    assert server.warm_up_error is None


def test_a_failed_warm_up_request_is_kept_and_stops_the_warm_up(monkeypatch):
    from flows.prefect_server import TemporaryServer

    api = FakeApi(failing=("/api/admin/version",))
    server = TemporaryServer()
    server.port, server.process = api.port, sleeping_process()
    try:
        server._warm_up()  # returns; raises nothing
    finally:
        server.stop()
        api.shutdown()
    assert not server.warmed.is_set()
    assert server.warm_up_error.startswith("GET /admin/version: HTTP Error 500")
    assert [r[1] for r in api.requests] == ["/api/health", "/api/admin/version"]  # the filter was not sent


def test_the_warm_up_gives_up_on_a_server_that_exited_or_was_stopped():
    from flows.prefect_server import TemporaryServer

    server = TemporaryServer()
    server.port, server.process = 9, subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(1)"])  # 9: no one
    server.process.wait()
    warm_up = threading.Thread(target=server._warm_up)
    warm_up.start()
    warm_up.join(timeout=10)
    assert not warm_up.is_alive() and not server.warmed.is_set() and server.warm_up_error is None
    server.process = None  # stopped
    server._warm_up()
    assert not server.warmed.is_set()


def test_the_warm_up_waits_out_a_taken_port_and_warms_the_server_launched_again():
    """A launch whose port was taken exits with PORT_IN_USE; the port is someone else's (here a server that answers):
    the warm-up sends it nothing, and warms the server `wait_ready` launches on another port."""
    import time

    from flows.prefect_server import PORT_IN_USE, TemporaryServer

    theirs, ours = FakeApi(), FakeApi()
    server = TemporaryServer()
    server.port, server.process = theirs.port, subprocess.Popen([sys.executable, "-c", f"raise SystemExit({PORT_IN_USE})"])
    server.process.wait()
    warm_up = threading.Thread(target=server._warm_up)
    warm_up.start()
    try:
        time.sleep(1.0)
        assert theirs.requests == [] and not server.warmed.is_set()
        server.port, server.process = ours.port, sleeping_process()  # as wait_ready launches it again
        assert server.warmed.wait(timeout=30), server.warm_up_error
    finally:
        server.stop()
        warm_up.join(timeout=10)
        theirs.shutdown()
        ours.shutdown()
    assert theirs.requests == []
    assert [r[1] for r in ours.requests][-2:] == ["/api/admin/version", "/api/flow_runs/filter"]


class NoHttp:
    """Something on a port of 127.0.0.1 that does not speak HTTP: http.client raises BadStatusLine, no OSError."""

    def __enter__(self):
        import socketserver

        class Garbage(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.sendall(b"not http\r\n\r\n")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Garbage)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self.server.server_address[1]

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.slow  # 1.5 s of a process polled (its wait_ready twin stays): make test-slow and CI
def test_the_warm_up_takes_an_answer_that_is_no_http_for_no_answer():
    """A listener that is no HTTP server is polled on until the server's process ends: nothing escapes the thread."""
    from flows.prefect_server import TemporaryServer

    with NoHttp() as port:
        server = TemporaryServer()
        server.port = port
        server.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
        server._warm_up()  # returns once the process has ended, raising nothing
    assert server.process.poll() == 0 and not server.warmed.is_set() and server.warm_up_error is None


def test_waiting_for_a_server_takes_an_answer_that_is_no_http_for_no_answer():
    """`wait_ready` polls the same health check (`_answers_health`): a listener that is no HTTP server is no answer,
    and the process's exit is the error it raises (before the shared check, BadStatusLine escaped it)."""
    import prefect.settings  # noqa: F401 - imported ahead, so that wait_ready polls before the process ends

    from flows.prefect_server import ServerStartError, TemporaryServer

    with NoHttp() as port:
        server = TemporaryServer()
        server.port = port
        server.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
        with pytest.raises(ServerStartError, match="exited with status 0 before it answered"):
            server.wait_ready(timeout_s=30)


def test_the_real_api_answers_the_warm_up_requests(prefect_server):
    """The requests are ones Prefect's API accepts as sent (the test session's server): a 422 would leave the
    warm-up useless without a sound."""
    from prefect.settings import PREFECT_API_URL

    from flows.prefect_server import TemporaryServer

    url = urlsplit(PREFECT_API_URL.value())
    assert (url.hostname, url.path.rstrip("/")) == ("127.0.0.1", "/api")
    server = TemporaryServer()
    server.port, server.process = url.port, sleeping_process()
    try:
        server._warm_up()
    finally:
        server.stop()
    assert server.warm_up_error is None and server.warmed.is_set()


def fake_server(monkeypatch, *programs: str):
    """A TemporaryServer whose launches run these Python programs in turn instead of the server (no Prefect setting
    is changed: the test's own server stays the one the session talks to)."""
    from flows import prefect_server

    server = prefect_server.TemporaryServer()
    launched = []

    def launch():
        server.port = 9  # nothing answers there
        server._start([sys.executable, "-c", programs[len(launched)]])  # its output copied as the server's is
        launched.append(server.process)

    monkeypatch.setattr(server, "_launch", launch)
    launch()
    return server, launched


@pytest.mark.slow  # two processes racing for the lock (2.1 s): make test-slow and CI
def test_one_temporary_server_starts_at_a_time_on_one_prefect_home(monkeypatch, tmp_path):
    """Two servers migrating one new database at once fail ("duplicate column name"): a launch holds PREFECT_HOME's
    start lock until its server answers (or is stopped), and another run's launch waits for it."""
    from flows import prefect_server

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    lock = str(tmp_path / prefect_server.START_LOCK)
    # another run's server is starting: it holds the lock until its stdin is closed (a fixed 2 s let a loaded
    # machine's first wait below begin after the holder had let go)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()", lock],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    server = prefect_server.TemporaryServer()
    server._hold_start_lock(wait_s=0.3)
    assert server.start_lock is None  # not within 0.3 s: it goes on without the lock
    threading.Timer(0.5, holder.stdin.close).start()  # the other server answers, half a second into the next wait
    server._hold_start_lock(wait_s=60)
    assert server.start_lock is not None and holder.wait(timeout=5) == 0  # it waited for the other's end
    server._release_start_lock()
    take = "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'a'), fcntl.LOCK_EX | fcntl.LOCK_NB)"
    assert subprocess.run([sys.executable, "-c", take, lock]).returncode == 0  # released

    monkeypatch.setattr(prefect_server.TemporaryServer, "_launch", lambda self: None)
    launched = prefect_server.TemporaryServer.launch()  # holds it from its launch ...
    assert launched.start_lock is not None
    assert subprocess.run([sys.executable, "-c", take, lock], stderr=subprocess.DEVNULL).returncode != 0
    launched.stop()  # ... until it answers or is stopped
    assert launched.start_lock is None and subprocess.run([sys.executable, "-c", take, lock]).returncode == 0


def test_a_temporary_server_that_exits_before_it_answers_fails_the_start_with_its_status(monkeypatch):
    from flows.prefect_server import ServerStartError

    server, _ = fake_server(monkeypatch, "import sys; sys.exit(1)")
    with pytest.raises(ServerStartError, match=r"exited with status 1 before it answered"):
        server.wait_ready(timeout_s=30)


def test_a_server_that_exits_before_it_answers_has_its_error_written_before_the_message_pointing_at_it(
        monkeypatch, capfd):
    """The message says "its error is above": the server's last output is copied before it is raised, though the
    copying thread writes it a second after the exit was seen."""
    import prefect.settings  # noqa: F401 - imported by wait_ready: a second the first time, not within the test

    from flows import prefect_server
    from flows.prefect_server import ServerStartError

    class SlowWrites:  # the os module, its writes a second late
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            time.sleep(1)
            return os.write(fd, data)

    monkeypatch.setattr(prefect_server, "os", SlowWrites())
    server, _ = fake_server(monkeypatch, "import sys\n"
                                         "print('ERROR: [Errno 98] address already in use', file=sys.stderr)\n"
                                         "sys.exit(1)")
    with pytest.raises(ServerStartError, match=r"exited with status 1 before it answered; its error is above"):
        server.wait_ready(timeout_s=30)
    assert capfd.readouterr().err == "ERROR: [Errno 98] address already in use\n"


def test_what_a_server_writes_as_it_is_stopped_is_dropped_and_what_it_wrote_before_is_shown(monkeypatch, capfd):
    """A server stopped while its services hold events logs each lost flush with a traceback (~150 lines after an
    `hweval run` that gave up on the run lock, below its one line): from the stop on, its output is read and dropped.
    """
    program = ("import signal, sys, time\n"
               "def stopped(*_):\n"
               "    for i in range(200): print(f'Error flushing 1 events {i}', file=sys.stderr, flush=True)\n"
               "    sys.exit(0)\n"
               "signal.signal(signal.SIGTERM, stopped)\n"
               "print('serving', file=sys.stderr, flush=True)\n"
               "time.sleep(60)\n")
    server, [process] = fake_server(monkeypatch, program)
    err, deadline = "", time.monotonic() + 30
    while "serving" not in err and time.monotonic() < deadline:
        time.sleep(0.02)
        err += capfd.readouterr().err
    assert err == "serving\n"  # copied while it runs
    server.stop()
    assert process.returncode == 0  # it wrote its 200 lines and exited at the SIGTERM
    server.output.join(timeout=10)
    assert capfd.readouterr().err == "" and server.dropped_lines == 200


def test_a_temporary_server_that_does_not_answer_in_time_is_stopped(monkeypatch):
    from flows.prefect_server import ServerStartError

    server, [process] = fake_server(monkeypatch, "import time; time.sleep(60)")
    with pytest.raises(ServerStartError, match=r"did not answer http://127.0.0.1:9/api/health within 0.5 s "
                                               r"\(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS\); it was stopped"):
        server.wait_ready(timeout_s=0.5)
    assert process.poll() is not None and server.process is None  # terminated, not left behind
    server.stop()  # again: nothing to do


def test_a_temporary_server_whose_port_was_taken_starts_again_on_another(monkeypatch):
    from flows.prefect_server import PORT_IN_USE, ServerStartError

    server, launched = fake_server(monkeypatch, f"import sys; sys.exit({PORT_IN_USE})", "import sys; sys.exit(1)")
    with pytest.raises(ServerStartError, match="exited with status 1"):  # the second launch's own failure
        server.wait_ready(timeout_s=30)
    assert len(launched) == 2


def test_make_test_keeps_the_tests_that_need_the_prefect_server_on_one_worker(request, prefect_server):
    """`make test` (`--dist loadgroup`) sends every test that needs Prefect's test server to one worker
    (tests/conftest.py), which starts it and runs the whole flow once. pytest-xdist marks such a test's node id with
    its group: under pytest 9.2 that mark is lost (pytest-dev/pytest-xdist#1386) and each worker would start its own
    server and run the flow, ~50 s more."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs under make test's --dist loadgroup")
    assert request.node.nodeid.endswith("@prefect"), request.node.nodeid


def test_a_server_that_ignores_the_stop_at_exit_is_killed_after_the_wait_and_one_that_stops_is_not(monkeypatch, capfd):
    """At the run's exit the server is asked to stop and not waited for (`stop_at_exit`): one that ignores SIGTERM is
    killed STOP_WAIT_S later by the watchdog left behind, which outlives the run (here the wait is 0.5 s); one that
    ends on the SIGTERM ends by it, and the watchdog ends with it."""
    from flows import prefect_server

    monkeypatch.setattr(prefect_server, "STOP_WAIT_S", 0.5)
    for program, ended_by in ((IGNORES_SIGTERM, -9), (SERVING, -15)):
        server, [process] = fake_server(monkeypatch, program)
        try:
            wait_serving(capfd)
            started = time.monotonic()
            server.stop_at_exit()
            assert server.process is None  # asked, not waited for
            process.wait(timeout=10)
            assert process.returncode == ended_by
            if ended_by == -9:
                assert time.monotonic() - started >= 0.5  # given its wait first
        finally:
            process.kill()  # (a failure's: not left running for its 60 s)


def test_a_watchdog_that_cannot_start_leaves_the_server_asked_to_stop(monkeypatch, capfd, caplog):
    """No process to spare for the watchdog at exit: that is logged, and the server is still sent its SIGTERM."""
    from flows import prefect_server

    real_popen = subprocess.Popen

    def popen(args, **kwargs):
        if prefect_server.KILL_IF_STILL_RUNNING in args:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_popen(args, **kwargs)

    server, [process] = fake_server(monkeypatch, SERVING)
    try:
        wait_serving(capfd)
        monkeypatch.setattr(prefect_server.subprocess, "Popen", popen)
        server.stop_at_exit()
        process.wait(timeout=10)
        assert process.returncode == -15
        assert "the temporary server's watchdog did not start ([Errno 11] Resource temporarily unavailable)" in (
            caplog.text)
    finally:
        process.kill()


IGNORES_SIGTERM = ("import signal, sys, time\n"
                   "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                   "print('serving', file=sys.stderr, flush=True)\n"
                   "time.sleep(60)\n")
SERVING = "import sys, time; print('serving', file=sys.stderr, flush=True); time.sleep(60)"


def wait_serving(capfd) -> None:
    """Until the fake server has written 'serving' (its SIGTERM handler in place, where it sets one)."""
    seen, deadline = "", time.monotonic() + 30
    while "serving" not in seen and time.monotonic() < deadline:
        time.sleep(0.02)
        seen += "".join(capfd.readouterr())


def test_the_tests_keep_prefects_database_and_results_in_a_home_of_their_process_not_the_users():
    """conftest gives each test process a PREFECT_HOME of its own, under the temporary folder: Prefect took it (it reads
    its settings once, at its import, so the home must be set before any import of Prefect), with the database and the
    persisted results (a failed flow's exception) under it, and it is not the user's ~/.prefect."""
    import tempfile
    from pathlib import Path

    from prefect.settings import Settings, get_current_settings

    home = Path(os.environ["PREFECT_HOME"])
    settings = get_current_settings()
    assert settings.home == home
    assert settings.results.local_storage_path == home / "storage"
    # the database of a server started from this environment (`hweval run`'s): the test server (`prefect_server`),
    # while it runs, swaps the one of this process's settings for a database of its own
    assert Settings().server.database.connection_url.get_secret_value() == f"sqlite+aiosqlite:///{home / 'prefect.db'}"
    assert home.parent == Path(tempfile.gettempdir()) and home.name.startswith("hweval-test-prefect-home-")
    assert home != Path("~/.prefect").expanduser()
