"""What hweval's worker processes share (the chart workers, flows/chart_workers.py; Great Expectations' process,
flows/gx_process.py): a pool that spawns them, each leaving a Ctrl-C to the run and ending with it, and the run's
wait for their answers."""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
from concurrent.futures import Future, ProcessPoolExecutor


class WorkerPool(ProcessPoolExecutor):
    """A pool of spawned workers (not forked: the run's process holds Prefect's threads), which it spawns as work is
    submitted, with SIGINT blocked (`spawning_without_ctrl_c`); its initializer calls `leave_ctrl_c_to_the_parent`
    and starts `exit_with_parent`."""

    def __init__(self, max_workers: int, initializer) -> None:
        super().__init__(max_workers=max_workers, mp_context=multiprocessing.get_context("spawn"),
                         initializer=initializer)

    def submit(self, fn, /, *args, **kwargs) -> Future:
        with spawning_without_ctrl_c():
            return super().submit(fn, *args, **kwargs)


def leave_ctrl_c_to_the_parent() -> None:
    """In a worker (a chart worker, the GX process): ignore SIGINT. A Ctrl-C at the terminal reaches the run's whole
    process group; each worker printed its own KeyboardInterrupt traceback beside the run's one line, and died
    under the run, which stops its workers itself as it ends (and they end with it: `exit_with_parent`). The worker
    was spawned with SIGINT blocked (`spawning_without_ctrl_c`): ignored now, it is let through again, and one that
    came meanwhile is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def spawning_without_ctrl_c():
    """A block in which a process pool may spawn its workers: SIGINT is blocked in this thread meanwhile, and a
    worker keeps that (a signal mask passes through fork and exec) until its initializer ignores SIGINT. Spawned
    otherwise, a Ctrl-C during a worker's own start (Python's imports, before the initializer) printed "Fatal Python
    error: init_import_site" for each. A Ctrl-C in the block reaches this thread as it ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


ANSWER_POLL_S = 0.1


def answer_of(future: Future):
    """`future.result()`, waited for ANSWER_POLL_S at a time: the system may hand a Ctrl-C to another of this
    process's threads, and then the main thread runs Python's handler (KeyboardInterrupt) only as its wait returns. A
    wait on a worker's answer is seconds long (the GX process imports GX first): the run went on waiting 2-2.6 s
    after a Ctrl-C, where it stopped in 0.3 s before its workers ignored it (and died of it)."""
    while not future.done():
        concurrent.futures.wait([future], timeout=ANSWER_POLL_S)
    return future.result()


def exit_with_parent() -> None:
    """Wait for the parent process to end, then end this worker (a chart worker, the GX process): its call queue's
    pipe stays open in the worker itself, so a worker whose parent was killed would otherwise wait for work forever."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)
