"""prefect-dask's DaskTaskRunner, with each submitted task named by a fresh id instead of a hash of its arguments, and
the local cluster it starts with its worker's profiler off (`unprofiled_local_cluster`).

prefect-dask submits a task to Dask as a "pure" call without a key, so Dask names it by tokenizing every argument:
the task, its parameters and the serialized Prefect context (every setting of the run, a few hundred values). The
task run id among them is new for every submission, so the hash never names two submissions alike; computing it held
the flow's thread for 38% of a wide fetch's time (90 fetch tasks answered at once, sampled with py-spy --gil).
`pure=False` has Dask name the task `<function>-<uuid4>`, the same uniqueness without the hash.

Imported only when the Dask runner is chosen (flows/fanout.py), so a default run never imports Dask.
"""

from __future__ import annotations

import dask
import distributed
from prefect_dask import DaskTaskRunner
from prefect_dask.task_runners import PrefectDaskFuture


def unprofiled_local_cluster(**cluster_kwargs) -> distributed.LocalCluster:
    """distributed.LocalCluster with its workers' profiler off. A local cluster's worker runs in the run's own process
    (processes=False), and its profiler calls sys._current_frames() every 10 ms. On CPython 3.11 that call holds the
    interpreter's thread-list lock while it makes frame objects; a garbage collection there that runs a weakref
    callback gives up the GIL still holding that lock, and a thread ending at that moment (one of the fetch tasks')
    holds the GIL waiting for it: the process hangs, where no timeout can fire. A wide fan-out test hung that way
    (both stacks seen in gdb, 2026-12-07). distributed already leaves its event loop's own profiler off on Python 3.11
    (distributed/core.py), not its workers'. The profile only feeds the Dask dashboard's profile page."""
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return distributed.LocalCluster(**cluster_kwargs)


class FetchDaskTaskRunner(DaskTaskRunner):
    """DaskTaskRunner whose submissions Dask names by a uuid (pure=False), not by hashing their arguments."""

    def submit(self, task, parameters, wait_for=None, dependencies=None):
        if not self._started:
            raise RuntimeError("The task runner must be started before submitting work.")
        future = self.client.submit(
            task,
            parameters=self._optimize_futures(parameters),
            wait_for=self._optimize_futures(wait_for) if wait_for else None,
            dependencies=dependencies,
            return_type="state",
            pure=False,
        )
        return PrefectDaskFuture(wrapped_future=future, task_run_id=future.task_run_id)
