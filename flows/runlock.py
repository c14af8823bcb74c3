"""One writer at a time: a run holds an exclusive lock on its warehouse and on its reports folder.

The locks are `fcntl.flock` locks, which the kernel releases when the holder dies, even by SIGKILL. They coordinate
runs on one machine; `flock` on a network file system (NFS) is not reliable, so runs on several machines sharing a
network folder are not coordinated.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

DEFAULT_WAIT_S = 1800.0  # how long a second run waits for the first; `hweval run --wait` or HWEVAL_LOCK_WAIT_S
WAIT_ENV = "HWEVAL_LOCK_WAIT_S"  # the wait of a run given none (`hweval run` without --wait, a deployment's run)
MAX_WAIT_S = 86400.0  # a day: a longer wait is a run queued behind one that hangs, better refused than kept waiting
POLL_INTERVAL_S = 0.2
REPORTS_LOCK_NAME = ".hweval-reports.lock"
MAX_HOLDER_BYTES = 4096  # of a lock file's holder description read back (a run writes about 90 bytes)


class RunLockTimeout(RuntimeError):
    """Another run held the lock past the wait."""


class WaitSettingError(ValueError):
    """A wait (--wait, HWEVAL_LOCK_WAIT_S) that is no number of seconds from 0 to MAX_WAIT_S (exit 2, one line)."""


def wait_seconds(value: str | float, setting: str) -> float:
    """`value` as seconds to wait: a finite number from 0 to MAX_WAIT_S (a nan deadline was never reached: the run
    waited forever). `setting` names it in the error: "--wait ", "HWEVAL_LOCK_WAIT_S="."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and 0.0 <= seconds <= MAX_WAIT_S):
        raise WaitSettingError(f"{setting}{value!r}: expected a number of seconds from 0 to {MAX_WAIT_S:g}")
    return seconds


def configured_wait(wait_s: str | float | None, setting: str = "wait_s=") -> float:
    """How long a run waits for another: `wait_s` when given (a flag or the flow's parameter, named by `setting`),
    else HWEVAL_LOCK_WAIT_S, else DEFAULT_WAIT_S; checked by wait_seconds (a WaitSettingError names the setting)."""
    if wait_s is not None:
        return wait_seconds(wait_s, setting)
    return wait_seconds(os.environ.get(WAIT_ENV, DEFAULT_WAIT_S), f"{WAIT_ENV}=")


def lock_files(warehouse_path: Path, reports_root: Path) -> tuple[Path, Path]:
    """The warehouse's lock file and the reports folder's, in the order a run takes them."""
    return warehouse_path.with_name(f".{warehouse_path.name}.lock"), reports_root / REPORTS_LOCK_NAME


@contextmanager
def exclusive(warehouse_path: Path, reports_root: Path, wait_s: float, say: Callable[[str], None],
              waiting: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Hold the warehouse's lock, then the reports folder's, for the block; wait up to `wait_s` seconds for them.

    If another run holds one, `say` is told who and for how long this run waits; past the wait RunLockTimeout is
    raised and nothing was changed. Always warehouse first, so two runs never hold one each and wait for the other.
    `waiting` is called at each poll of the wait (POLL_INTERVAL_S); what it raises ends the wait (a cancelled run).
    A run killed outright is found by its run file, not here (flows/run_files.py).
    """
    wait_s = wait_seconds(wait_s, "wait_s=")  # the flow's parameter, which no command line checked
    deadline = time.monotonic() + wait_s
    warehouse_lock, reports_lock = lock_files(warehouse_path, reports_root)
    with ExitStack() as held:
        for lock_file, guarded in ((warehouse_lock, warehouse_path), (reports_lock, reports_root)):
            held.enter_context(_held(lock_file, guarded, wait_s, deadline, say, waiting))
        yield


@contextmanager
def _held(lock_file: Path, guarded: Path, wait_s: float, deadline: float, say: Callable[[str], None],
          waiting: Callable[[], None]) -> Iterator[None]:
    """Hold `lock_file` (guarding `guarded`) with this run's pid, host and start written in it (for the message of a
    run that waits); remove it on release."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    told = False
    while True:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = _holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise RunLockTimeout(
                    f"{other} holds {_shown(guarded)}"
                    + (f" after {wait_s:g} s of waiting" if wait_s > 0 else " and this run was told not to wait")
                    + "; nothing was changed. Try again when it has finished, or wait longer with --wait SECONDS "
                      "(a deployment's parameter wait_s, or HWEVAL_LOCK_WAIT_S)") from None
            if not told:
                say(f"{other} holds {_shown(guarded)}; waiting up to {wait_s:g} s")
                told = True
            waiting()
            time.sleep(POLL_INTERVAL_S)
            continue
        if _same_file(fd, lock_file):
            break
        os.close(fd)  # locked a file its holder removed on release: lock the one now at that path
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                  "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}).encode(), 0)
        yield
    finally:
        lock_file.unlink(missing_ok=True)  # while still locked: a waiter that then gets this file sees it is gone
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _holder(fd: int) -> str:
    """Who holds the lock, from what the holder wrote in the file: "another hweval run (pid 1234, started ...)"."""
    try:
        info = json.loads(os.pread(fd, MAX_HOLDER_BYTES, 0))
        started = dt.datetime.fromisoformat(info["started_at"]).astimezone(dt.UTC)
        pid, host = int(info["pid"]), str(info["host"])
    except (ValueError, KeyError, TypeError):  # the holder has not written it yet
        return "another hweval run"
    when = started.strftime("%H:%M:%S UTC" if started.date() == dt.datetime.now(dt.UTC).date() else
                            "%Y-%m-%d %H:%M:%S UTC")
    where = "" if host == socket.gethostname() else f" on {host}"
    return f"another hweval run (pid {pid}{where}, started {when})"


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
