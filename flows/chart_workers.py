"""Chart workers: processes that draw a report's charts beside the run's own process, on the cores it leaves idle.

Matplotlib draws one chart at a time, in Python, on one core: 0.15-0.35 s a chart on a 2-core machine, about 20
charts in a cold run on the embedded snapshot, while the machine's other core waits. The charts the cache lacks
(flows/chart_images.py) go to worker processes, up to CHARTS_PER_WORKER each (the one it draws and the next, waiting
in its pipe); whenever every worker has that many, the run's process draws the next chart itself. The workers start
when a run validates new rows (flows/land.py: it will draw charts again; in the `hweval` command's own process, once
GX's process is stopped after the run's Data Docs, flows/gx_process.py `_release`), or else at the first chart that
needs drawing, so a run that lands nothing new and whose charts are all cached starts none. They are spawned
(flows/worker_processes.py), import Matplotlib once, stay until the process exits, and exit themselves if that
process is killed. A worker draws with the same code and fonts as the run's process: a chart's PNG is the same bytes
wherever it was drawn (tests/test_charts.py).

HWEVAL_CHART_WORKERS sets how many (0 to MAX_WORKERS; default: the cores this process may use, less one, at most
DEFAULT_MAX_WORKERS; 0 draws every chart in the run's process). If the workers die (killed, out of memory), the
run's process draws the rest itself, with a warning in the log.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from flows import startup_gc
from flows.worker_processes import WorkerPool, answer_of, exit_with_parent, leave_ctrl_c_to_the_parent

log = logging.getLogger(__name__)

WORKERS_ENV = "HWEVAL_CHART_WORKERS"
MAX_WORKERS = 16
DEFAULT_MAX_WORKERS = 4  # each worker holds Matplotlib, polars and DuckDB: about 150 MiB
# charts handed to a worker at once: the one it draws and the next, so that it goes on to that one as soon as it is done
# rather than wait for the run's process, which is between its own queries and pages meanwhile. With one (a worker
# idle until the run's process came back to hand it another), a cold run on the snapshot drew its 19 charts in 2.2-2.4 s
# against 1.9-2.2 s, alternated, on 2 cores. Every chart handed out at once did worse (2.6-2.7 s, the run's process
# drawing at its pages those no worker had begun): it waited there for the ones a worker had begun.
CHARTS_PER_WORKER = 2


class ChartWorkersError(ValueError):
    """An HWEVAL_CHART_WORKERS that is no number of workers (exit 2, one line)."""


def configured_workers(environ: dict[str, str] | None = None) -> int:
    """How many chart workers this process may start (HWEVAL_CHART_WORKERS, or the default)."""
    env = os.environ if environ is None else environ
    text = env.get(WORKERS_ENV, "").strip()
    if not text:
        return min(DEFAULT_MAX_WORKERS, max(0, len(os.sched_getaffinity(0)) - 1))
    if not text.isdigit() or int(text) > MAX_WORKERS:
        raise ChartWorkersError(f"{WORKERS_ENV}={text!r}: expected a whole number of chart worker processes from 0 "
                                f"to {MAX_WORKERS} (0 draws every chart in the run's process)")
    return int(text)


class _Workers:
    """The process's chart workers: started on first use, at most `size` charts handed out at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: ProcessPoolExecutor | None = None
        self.size = 0
        self.in_flight = 0
        self.broken = False
        self.started: ProcessPoolExecutor | None = None  # the pool `start` spawned every worker of
        self.handed_by: weakref.WeakKeyDictionary[Future, ProcessPoolExecutor] = weakref.WeakKeyDictionary()

    def _pool_locked(self) -> ProcessPoolExecutor | None:
        """The pool, made on first use (holding the lock); None when no worker may start."""
        if self.broken:
            return None
        if self.pool is None:
            size = configured_workers()
            if size == 0:
                return None
            self.pool = WorkerPool(size, _warm_up)
            self.size = size
            atexit.register(self.shutdown)
        return self.pool

    def start(self) -> None:
        """Spawn every worker now, so that each has imported Matplotlib before the first chart comes; once a pool
        (each landed batch calls it)."""
        with self.lock:
            pool = self._pool_locked()
            if pool is None or self.started is pool or self.in_flight:
                return
            self.started = pool
            self.in_flight += self.size
        for _ in range(self.size):
            self._handed_out(pool, os.getpid)

    def submit(self, fn: Callable, *args) -> Future | None:
        """`fn(*args)` in a worker if one has room (CHARTS_PER_WORKER): its Future; None when the caller should run it
        itself (no workers configured, every worker full, or the workers died)."""
        with self.lock:
            pool = self._pool_locked()
            if pool is None or self.in_flight >= self.size * CHARTS_PER_WORKER:
                return None
            self.in_flight += 1
        return self._handed_out(pool, fn, *args)

    def _handed_out(self, pool: ProcessPoolExecutor, fn: Callable, *args) -> Future | None:
        try:
            future = pool.submit(fn, *args)
        except (BrokenProcessPool, RuntimeError) as exc:  # RuntimeError: shut down meanwhile (at exit)
            self._died(pool, exc)
            return None
        self.handed_by[future] = pool
        future.add_done_callback(lambda _future: self._one_done(pool))
        return future

    def _one_done(self, pool: ProcessPoolExecutor) -> None:
        with self.lock:
            if self.pool is pool:  # a pool shut down meanwhile counts no more
                self.in_flight -= 1

    def result(self, future: Future, here: Callable[[], bytes]) -> bytes:
        """The worker's result; if the workers died meanwhile, or were shut down before they got to it, `here()`
        (the same work, in this process). An error of the work itself is raised here, with the worker's traceback."""
        try:
            return answer_of(future)
        except BrokenProcessPool as exc:
            self._died(self.handed_by.get(future), exc)
            return here()
        except CancelledError:
            return here()

    def _died(self, pool: ProcessPoolExecutor | None, exc: BaseException) -> None:
        with self.lock:
            if pool is None or self.pool is not pool:  # an earlier pool's end: the current one is fine
                return
            first, self.broken = not self.broken, True
        if first:
            log.warning("the chart workers stopped (%s): this process draws the remaining charts itself", exc)

    def shutdown(self) -> None:
        with self.lock:
            pool, self.pool = self.pool, None
            self.in_flight, self.broken = 0, False
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _warm_up() -> None:
    """In a new worker: leave a Ctrl-C to the run, exit with the process that started it (killed, it cannot stop its
    workers), then import what drawing imports, once, before its first chart."""
    leave_ctrl_c_to_the_parent()
    threading.Thread(target=exit_with_parent, name="hweval-chart-worker-parent", daemon=True).start()
    collecting = startup_gc.importing()
    import matplotlib.figure  # noqa: F401
    from matplotlib.backends import backend_agg  # noqa: F401

    from flows import backtest_chart, charts  # noqa: F401

    # the worker's modules live as long as it does: frozen, its collections and its exit skip them
    startup_gc.imported(collecting)


_workers = _Workers()


def start() -> None:
    """Start the chart workers ahead of the charts (a run that lands new rows draws its charts again): each imports
    Matplotlib (about a second of CPU) while the run does other work. Nothing when none may start."""
    _workers.start()


def submit(fn: Callable, *args) -> Future | None:
    """`fn(*args)` (a module-level function, as the worker imports it) in a chart worker if one has room; None when
    the caller should run it itself."""
    return _workers.submit(fn, *args)


def result(future: Future, here: Callable[[], bytes]) -> bytes:
    return _workers.result(future, here)


def shutdown() -> None:
    """Stop the workers (they start again at the next chart to draw)."""
    _workers.shutdown()
