"""The temporary Prefect server of a run that has none to talk to (no PREFECT_API_URL), started by hweval.

It is the server Prefect itself would start: the same command (uvicorn serving `prefect.server.api.server:create_app`,
that module imported first with fewer garbage collections: SERVER_MAIN), the UI off, Prefect's settings from the
environment and profile, the same database under PREFECT_HOME, one process for the run, stopped when the run's process
exits. Prefect's own start (`SubprocessASGIServer`, when a client finds no API URL) imports the whole server package
(FastAPI, SQLAlchemy, the server's models) into the run's process only to launch that process: 1.7 s of CPU and 85 MiB
of memory, measured here. hweval launches it without that import, before it imports Prefect at all, then points
PREFECT_API_URL at it before Prefect makes its first client, so the flow, its tasks and their log and event workers all
talk to it. PREFECT_UI_URL is set empty: the server serves no UI, so the run prints no link to one. As soon as it
answers, a thread sends it the flow's first read requests (WARM_UP), so that the work a new server does at its first
requests is done while the run's process is still busy.
"""

from __future__ import annotations

import atexit
import fcntl
import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

from flows import startup_gc

# The server's process: `python -m uvicorn` with Prefect's own arguments, after it imported Prefect's server package
# (~2 s, all of a re-run's wait for the server) collecting less often, then froze what the import made
# (flows/startup_gc.py). Launched alone, 4 of each alternated: it answered in 1.99 s against 2.42 s (medians).
SERVER_APP = "prefect.server.api.server"
SERVER_MAIN = startup_gc.preloading(SERVER_APP, "uvicorn")
# Prefect's temporary server's environment (prefect/server/api/server.py, SubprocessASGIServer._run_uvicorn_command)
SERVER_ENV = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
PORT_IN_USE = 3  # uvicorn's exit status when its port was taken between choosing it and binding it
MAX_PORT_ATTEMPTS = 5
STOP_WAIT_S = 5.0
# Servers started at once on one PREFECT_HOME would migrate its database at once: on a new one, the second fails
# ("duplicate column name", seen when two runs started together on a fresh machine). One starts at a time: each holds
# this lock from its launch until it answers; a run waits at most START_LOCK_WAIT_S for another's, then goes on.
START_LOCK = ".hweval-server-start.lock"
START_LOCK_WAIT_S = 120.0
# The server's own process, on Linux, first asks the kernel for SIGTERM when the run's process ends, however it ends
# (PR_SET_PDEATHSIG = 1, kept across exec), exits if that process is already gone, then becomes uvicorn (argv: the
# run's pid, then the uvicorn command). No preexec_fn: Python code between fork and exec is unsafe beside threads.
STOPPED_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n")
# The server is asked to stop at the run's exit and not waited for (`stop_at_exit`). Should it not end within
# STOP_WAIT_S (a shutdown step of Prefect's lifespan that hangs: uvicorn's own graceful-shutdown timeout bounds its
# connections, not that), this watchdog kills it: a small process of its own (no site packages, ~10 ms to start) that
# outlives the run's. It is handed a pidfd of the server, a handle on that process rather than its number (which the
# system may give to another process once the server has ended), waits on it, and sends SIGKILL if it is still there.
KILL_IF_STILL_RUNNING = (
    "import select, signal, sys\n"
    "fd, wait_s = int(sys.argv[1]), float(sys.argv[2])\n"
    "if not select.select([fd], [], [], wait_s)[0]:\n"
    "    signal.pidfd_send_signal(fd, signal.SIGKILL)\n")
# What the flow's start first asks of a new server, asked as soon as it answers its health check: reads only, they
# change nothing. A new server does work of its own at the first requests that reach it: FastAPI builds its routers'
# routes and SQLAlchemy compiles its first flow-run query (~1 s of the server's CPU here). In a cold run the run's
# process is still busy then (importing Great Expectations, checking the catalog) while the server has nothing to
# do, so that work leaves the run's path; where the run already waits on the server, the flow would ask the same.
WARM_UP = (("GET", "/admin/version", None), ("POST", "/flow_runs/filter", {"limit": 1}))
WARM_UP_GIVE_UP_S = 600.0  # a server that has not answered by then is past any startup timeout
# How often the run and its warm-up thread ask whether the server answers yet: each ask before it listens is a refused
# connection (microseconds); at 0.1 s the run noticed the server 0.05 s late on average, on every run's path
HEALTH_POLL_S = 0.02

log = logging.getLogger(__name__)


class ServerStartError(RuntimeError):
    """The temporary server exited, or did not answer its health check in time."""


def _direct() -> urllib.request.OpenerDirector:
    """An opener for the server's API on 127.0.0.1: never through a proxy."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _answers_health(direct: urllib.request.OpenerDirector, api_url: str) -> bool:
    """Whether the server at `api_url` answers its health check with 200. Any error is "not yet": a refused
    connection, a timeout, or a listener that is no HTTP server (http.client's BadStatusLine is no OSError)."""
    try:
        with direct.open(f"{api_url}/health", timeout=1) as response:
            return response.status == 200
    except Exception:  # noqa: BLE001 - not answering yet, whatever the error
        return False


def needed() -> bool:
    """Whether this run needs a server of its own: no API URL (environment or profile), temporary servers allowed."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    return not PREFECT_API_URL.value() and bool(PREFECT_SERVER_EPHEMERAL_ENABLED.value())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TemporaryServer:
    """One server process; `start` launches it and points Prefect at it, `wait_ready` before the flow, `stop` at
    exit (registered with atexit as it starts, so that it runs after Prefect's log and event workers have sent what
    they hold: atexit runs the last registered first)."""

    def __init__(self) -> None:
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.env: dict[str, str] = {}
        self.start_lock = None  # the open lock file while this server starts
        self.warmed = threading.Event()  # set once the WARM_UP requests were answered
        self.warm_up_error: str | None = None  # why they were not, if one failed
        self.output: threading.Thread | None = None  # copies the process's output to this one's stderr (_forward)
        self.stopping = False  # set by `stop`: what the process writes from then on is dropped
        self.dropped_lines = 0

    def _hold_start_lock(self, wait_s: float = START_LOCK_WAIT_S) -> None:
        """Take PREFECT_HOME's start lock (waiting while another run's server starts); go on without it after wait_s."""
        home = Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()
        home.mkdir(parents=True, exist_ok=True)
        handle = open(home / START_LOCK, "a")  # noqa: SIM115 - held until the server answers
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.start_lock = handle
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.close()
                    return
                time.sleep(0.1)

    def _release_start_lock(self) -> None:
        handle, self.start_lock = self.start_lock, None
        if handle is not None:
            handle.close()  # closing the file releases its lock

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _launch(self) -> None:
        """The server's process, on a free port; Prefect itself is not imported here (find_spec only finds it)."""
        site = Path(importlib.util.find_spec("prefect").submodule_search_locations[0]).parent
        self.port = _free_port()
        # PR_SET_PDEATHSIG fires when the launching *thread* ends: only the main thread (as `hweval run` launches)
        own_session = sys.platform == "linux" and threading.current_thread() is threading.main_thread()
        # -P: the working folder is not put first on sys.path (a prefect.py there would be imported as Prefect: uvicorn
        # puts --app-dir first only after the code has imported the server's module)
        uvicorn = [sys.executable, "-P", "-c", SERVER_MAIN, "--app-dir", str(site), "--factory",
                   f"{SERVER_APP}:create_app", "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "error",
                   "--lifespan", "on"]
        command = ([sys.executable, "-S", "-E", "-c", STOPPED_WITH_PARENT, str(os.getpid()), *uvicorn] if own_session
                   else uvicorn)  # -S -E: the wrapper needs no site packages (~15 ms less), uvicorn gets them
        self._start(command, start_new_session=own_session)

    def _start(self, command: list[str], start_new_session: bool = False) -> None:
        """Start `command` as this server's process, its output copied by `_forward`."""
        self.process = subprocess.Popen(command, env=self.env or None, start_new_session=start_new_session,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = threading.Thread(target=self._forward, args=(self.process.stdout,), name="hweval-server-output",
                                       daemon=True)
        self.output.start()

    def _forward(self, pipe: IO[bytes]) -> None:
        """Copy the server's output, line by line, to this process's stderr (file descriptor 2, where the server's
        own would write) until `stop`; then read on to its end and drop it. A server stopped while its services
        still hold events logs each lost flush with its traceback (~150 lines after an `hweval run` that gave up on
        the run lock, below its one line): they say nothing about the run, and Prefect's own temporary server ends
        the same way. A stderr nobody reads any more (a closed pipe) is drained the same, the server never blocked."""
        with pipe:
            for line in iter(pipe.readline, b""):
                if self.stopping:
                    self.dropped_lines += 1
                    continue
                try:
                    while line:
                        line = line[os.write(2, line):]
                except OSError:
                    self.stopping = True  # nowhere to write: drain
                    self.dropped_lines += 1

    def _output_written(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Wait for the output of a process that has exited to be copied (its error, before the message that points
        at it)."""
        if self.output is not None:
            self.output.join(timeout_s)

    # Its own session (Linux): a Ctrl-C at the terminal, sent to the run's whole process group, stopped the server
    # with the run, and the run could then record neither its Crashed state nor tell anyone (its on_crashed hook runs
    # on that state). Out of the group, the server is stopped by the run as it exits (atexit), or, when the run dies
    # without exiting (SIGKILL, a closed terminal's SIGHUP), by the kernel: _stopped_with.

    @classmethod
    def start(cls) -> TemporaryServer | None:
        """`launch`, then `attach`: the server process, and this process's Prefect pointed at it; None when this run
        has a server to talk to. It takes seconds to answer (`wait_ready`)."""
        server = cls.launch()
        return server.attach() if server is not None else None

    @classmethod
    def launch(cls) -> TemporaryServer | None:
        """Launch the server process unless PREFECT_API_URL is in the environment (None then), without importing
        Prefect here, so that the server starts (its imports: seconds) while this process imports what it needs;
        `attach` before the flow, or `stop`. Its process reads the same environment and Prefect profile as this one.
        """
        if os.environ.get("PREFECT_API_URL"):
            return None
        server = cls()
        server.env = {**os.environ, **SERVER_ENV}
        server._hold_start_lock()
        server._launch()
        threading.Thread(target=server._warm_up, name="hweval-server-warm-up", daemon=True).start()
        atexit.register(server.stop_at_exit)  # before Prefect's workers register theirs: stopped after they flush
        return server

    def attach(self) -> TemporaryServer | None:
        """Point this process's Prefect at the server (Prefect is imported here: 0.7 s); if the Prefect profile names
        a server after all, or turns temporary servers off, stop it and return None."""
        if not needed():
            self.stop()
            return None
        self._point_prefect_here()
        return self

    def _point_prefect_here(self) -> None:
        from prefect.context import refresh_global_settings_context

        os.environ["PREFECT_API_URL"] = self.api_url
        os.environ["PREFECT_UI_URL"] = ""
        refresh_global_settings_context()  # the settings Prefect's clients read, made before the variables were set

    def flows_settings(self) -> AbstractContextManager:
        """The settings of the flows run against this server: no flow run heartbeats. They let a lasting server
        notice a run that crashed; this one ends with the run, and a flow's end waits for its heartbeat thread to
        wake (it sleeps a second at a time: 0.5-1 s a flow, measured)."""
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})

    def wait_ready(self, timeout_s: float | None = None) -> None:
        """Return once the server answers its health check; raise ServerStartError if it exits or does not answer
        within `timeout_s` (default PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)."""
        from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

        timeout_s = PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value() if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout_s
        attempts = 1
        direct = _direct()
        while time.monotonic() < deadline:
            status = self.process.poll()
            if status == PORT_IN_USE and attempts < MAX_PORT_ATTEMPTS:  # taken meanwhile: another port
                attempts += 1
                self._launch()
                self._point_prefect_here()
                continue
            if status is not None:
                self._release_start_lock()
                self._output_written()
                raise ServerStartError(f"Prefect's temporary server (port {self.port}) exited with status {status} "
                                       "before it answered; its error is above")
            if _answers_health(direct, self.api_url):
                self._release_start_lock()  # its database is migrated: the next run's may start
                return
            time.sleep(HEALTH_POLL_S)
        self.stop()
        raise ServerStartError(f"Prefect's temporary server (port {self.port}) did not answer {self.api_url}/health "
                               f"within {timeout_s:g} s (PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS); it was "
                               "stopped")

    def _warm_up(self) -> None:
        """Once the server answers its health check, send it the WARM_UP requests (a thread of its own, started at
        the launch; no Prefect import). It waits out a launch whose port was taken (`wait_ready` launches it again
        on another: that port may be another server's), gives up quietly when the server stopped or exited
        (`wait_ready` says why), and stops at a request that fails (`warm_up_error`): the flow then makes them
        itself, nothing is lost."""
        direct = _direct()
        deadline = time.monotonic() + WARM_UP_GIVE_UP_S
        while True:
            process = self.process
            status = process.poll() if process is not None else None
            if process is None or time.monotonic() >= deadline or status not in (None, PORT_IN_USE):
                return
            if status is None:
                api_url = self.api_url
                if _answers_health(direct, api_url) and self.process is process:  # (not another launch's port)
                    break
            time.sleep(HEALTH_POLL_S)
        for method, path, body in WARM_UP:
            request = urllib.request.Request(
                f"{api_url}{path}", method=method, headers={"Content-Type": "application/json"},
                data=None if body is None else json.dumps(body).encode())
            try:
                with direct.open(request, timeout=30) as response:
                    response.read()
            except Exception as exc:  # noqa: BLE001 - an HTTP error status, a dropped connection: stop here
                self.warm_up_error = f"{method} {path}: {exc}"
                log.debug("temporary server warm-up stopped: %s", self.warm_up_error)
                return
        self.warmed.set()

    def stop(self, wait: bool = True) -> None:
        """Stop the process (terminate, then, with `wait`, kill after STOP_WAIT_S); safe to call again."""
        self._release_start_lock()
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        self.stopping = True  # what it writes as it stops: services that lose their flushes (_forward)
        if not wait:
            _kill_if_still_running(process, STOP_WAIT_S)
            process.terminate()
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop_at_exit(self) -> None:
        """`stop` as this process exits (atexit): the server is asked to stop (SIGTERM, which uvicorn answers with a
        graceful shutdown) and not waited for. That shutdown (0.2-0.3 s, measured) was on every run's time before
        the prompt came back; what the run sent is in its database by then (Prefect's log and event workers flush
        before this runs, and each write was answered). A server that has not ended STOP_WAIT_S later is killed, as
        `stop` kills it, by a watchdog process that outlives this one (KILL_IF_STILL_RUNNING)."""
        self.stop(wait=False)


# The watchdogs started (one a run, at its exit), held so that Python does not warn of a child process still running
# as their Popen objects are collected
_WATCHDOGS: list[subprocess.Popen] = []


def _kill_if_still_running(process: subprocess.Popen, wait_s: float) -> None:
    """Start KILL_IF_STILL_RUNNING's watchdog on `process` (before it is asked to stop, while it is sure to be this
    process's unreaped child: its pidfd is its own). Linux only (pidfd_open), where the server's launch is too. A
    watchdog that cannot start (no process to spare) is logged, and the server is asked to stop all the same."""
    if not hasattr(os, "pidfd_open"):
        return
    try:
        fd = os.pidfd_open(process.pid)
    except OSError:  # reaped already: nothing to watch
        return
    try:
        _WATCHDOGS.append(subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", KILL_IF_STILL_RUNNING, str(fd), str(wait_s)], pass_fds=(fd,),
            start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    except OSError as exc:
        log.warning("the temporary server's watchdog did not start (%s): a server that ignores its stop is left "
                    "running", exc)
    finally:
        os.close(fd)
