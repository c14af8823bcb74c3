"""`make bench`'s own bookkeeping (tests/bench_goals.py): what a process of a measured run's tree is put down as."""

from __future__ import annotations

import os
import subprocess
import sys

import bench_goals
from builders import gone


def test_a_process_that_is_ending_is_put_down_as_ended_and_a_live_one_by_its_program():
    sleeper = subprocess.Popen(["sleep", "30"])
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert bench_goals._role(sleeper.pid, os.getpid()) == ("sleep", True)
        assert bench_goals._role(os.getpid(), os.getpid()) == ("its own process", True)
        # exited, not reaped yet (a zombie): no command line left, as a process past its exit (reaped meanwhile by
        # another thread's wait, it is "ended" all the same)
        assert gone(ended.pid, within_s=30), "the child did not exit"
        # before: ("other", True), and a sampled peak listed GX's process, released at its Data Docs, as "other 186"
        assert bench_goals._role(ended.pid, os.getpid()) == ("ended", True)
    finally:
        sleeper.kill()
        sleeper.wait()
        ended.wait()
