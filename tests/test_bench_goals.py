"""`make bench`'s own bookkeeping (tests/bench_goals.py): what a process of a measured run's tree is put down as."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import bench_goals


def _state(pid: int) -> str:
    """The process's state letter (Z: a zombie), or "gone" once it was reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def test_a_process_that_is_ending_is_put_down_as_ended_and_a_live_one_by_its_program():
    sleeper = subprocess.Popen(["sleep", "30"])
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert bench_goals._role(sleeper.pid, os.getpid()) == ("sleep", True)
        assert bench_goals._role(os.getpid(), os.getpid()) == ("its own process", True)
        deadline = time.monotonic() + 30
        # exited, not reaped yet: no command line left, as a process past its exit (reaped meanwhile by another
        # thread's wait, it is "ended" all the same)
        while _state(ended.pid) not in ("Z", "gone"):
            assert time.monotonic() < deadline, "the child did not exit"
            time.sleep(0.02)
        # before: ("other", True), and a sampled peak listed GX's process, released at its Data Docs, as "other 186"
        assert bench_goals._role(ended.pid, os.getpid()) == ("ended", True)
    finally:
        sleeper.kill()
        sleeper.wait()
        ended.wait()
