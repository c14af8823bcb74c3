"""prefect-dask's DaskTaskRunner, with each submitted task named by a fresh id instead of a hash of its arguments.

prefect-dask submits a task to Dask as a "pure" call without a key, so Dask names it by tokenizing every argument:
the task, its parameters and the serialized Prefect context (every setting of the run, a few hundred values). The
task run id among them is new for every submission, so the hash never names two submissions alike; computing it held
the flow's thread for 38% of a wide fetch's time (90 fetch tasks answered at once, sampled with py-spy --gil).
`pure=False` has Dask name the task `<function>-<uuid4>`, the same uniqueness without the hash.

Imported only when the Dask runner is chosen (flows/fanout.py), so a default run never imports Dask.
"""

from __future__ import annotations

from prefect_dask import DaskTaskRunner
from prefect_dask.task_runners import PrefectDaskFuture


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
