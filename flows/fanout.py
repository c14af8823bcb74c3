"""Live fetches fanned out on a Dask cluster, within the clouds' rate limits held by the Prefect server.

The default runs every fetch in the flow's process: a thread per source, and each cloud's `fetch_concurrency` slots
(sources.yaml) held in that process (flows/sources/_concurrency.py). With `HWEVAL_TASK_RUNNER=dask` (or
`HWEVAL_DASK_ADDRESS`), the flow runs on prefect-dask's DaskTaskRunner, and a live source whose kind can be split
(`SPLIT_BY` in its module: its regions, or a Billing Catalog's services) becomes one task per region, so a wide
fetch spreads over the cluster's workers, on this machine (a local cluster, the default) or others (the scheduler's
address). The slots must then hold across processes and machines. The run takes its share of each cloud's Prefect
global concurrency limit `hweval-fetch-<cloud>` (set from `fetch_concurrency` as the run starts), which the Prefect
server counts for every run on every machine; within the run, that share is a Dask semaphore on the cluster's
scheduler (`run_slots`), which a fetch task holds around its calls (`dask_slot`), wherever it runs.
"""

from __future__ import annotations

import contextvars
import logging
import os
import queue
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from flows.catalog_models import Catalog
from flows.sources import SOURCE_KINDS
from flows.sources._common import MAX_LIVE_LIST_ITEMS

RUNNER_ENV = "HWEVAL_TASK_RUNNER"  # "threads" (default) or "dask"
ADDRESS_ENV = "HWEVAL_DASK_ADDRESS"  # a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (implies dask)
THREADS_ENV = "HWEVAL_DASK_THREADS"  # threads of the local cluster (default: TASKS_PER_SLOT x the sum of fetch_concurrency)
MAX_LOCAL_THREADS = 64
# Tasks of a cloud kept on the cluster for each of its run's slots: one fetching, one more ready (its Prefect task run
# begun) that takes the slot as the other lets it go. With one a slot, every call waited for the next task's Prefect
# start (~0.6 s a call of 1 s on this 2-core machine: goal F1); with two, that start overlaps the call before it
TASKS_PER_SLOT = 2
# fan-out tasks of one source (regions or services): the catalog's check refuses a longer list of a live block
MAX_PARTS = MAX_LIVE_LIST_ITEMS
LIMIT_PREFIX = "hweval-fetch-"
SLOT_WAIT_S = 3_600.0  # at most this long waiting for a cloud's slots (other runs hold them), then TimeoutError
LEASE_CHECK_S = 1.0  # how often a held share's thread looks up from its wait (a lost lease is raised into it then)

log = logging.getLogger(__name__)


class FanoutError(ValueError):
    """A fan-out setting that cannot work (exit 2, one line)."""


def runner_kind(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    kind = env.get(RUNNER_ENV, "").strip().lower() or ("dask" if env.get(ADDRESS_ENV, "").strip() else "threads")
    if kind not in ("threads", "dask"):
        raise FanoutError(f"{RUNNER_ENV}={env.get(RUNNER_ENV)!r}: expected threads (the default) or dask")
    address = env.get(ADDRESS_ENV, "").strip()
    if address and kind != "dask":
        raise FanoutError(f"{ADDRESS_ENV} is set but {RUNNER_ENV}={kind}: a Dask address needs the dask runner")
    if address and not re.fullmatch(r"(tcp|tls|ws|wss|inproc)://[\w.\-\[\]:]+(:\d+)?/?", address):
        raise FanoutError(f"{ADDRESS_ENV}={address!r}: expected a Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    return kind


def local_threads(fetch_concurrency: Mapping[str, int], environ: Mapping[str, str] | None = None) -> int:
    """Threads of the local cluster: enough for every cloud's tasks at once (TASKS_PER_SLOT for each of its slots),
    unless HWEVAL_DASK_THREADS says."""
    env = os.environ if environ is None else environ
    text = env.get(THREADS_ENV, "").strip()
    if not text:
        return min(MAX_LOCAL_THREADS, max(4, TASKS_PER_SLOT * sum(fetch_concurrency.values())))
    if not text.isdigit() or not 1 <= int(text) <= MAX_LOCAL_THREADS:
        raise FanoutError(f"{THREADS_ENV}={text!r}: expected a whole number from 1 to {MAX_LOCAL_THREADS}")
    return int(text)


def task_runner(fetch_concurrency: Mapping[str, int], environ: Mapping[str, str] | None = None):
    """The configured DaskTaskRunner: the scheduler at HWEVAL_DASK_ADDRESS, or a local cluster of one worker
    process with `local_threads` threads (the tasks wait on HTTP, not on the CPU). None for the default runner."""
    env = os.environ if environ is None else environ
    if runner_kind(env) != "dask":
        return None
    from flows.dask_runner import FetchDaskTaskRunner, unprofiled_local_cluster

    address = env.get(ADDRESS_ENV, "").strip()
    if address:
        return FetchDaskTaskRunner(address=address)
    return FetchDaskTaskRunner(cluster_class=unprofiled_local_cluster,
                               cluster_kwargs={"n_workers": 1, "processes": False, "dashboard_address": ":0",
                                               "threads_per_worker": local_threads(fetch_concurrency, env)})


def limit_name(cloud: str) -> str:
    return f"{LIMIT_PREFIX}{cloud}"


def cloud_of(catalog: Catalog, source_id: str) -> str:
    """The cloud whose slots a source's fetches hold (`default` for kinds that name none)."""
    return getattr(SOURCE_KINDS[catalog.sources.sources[source_id].kind], "CLOUD", None) or "default"


def ensure_limits(fetch_concurrency: Mapping[str, int]) -> dict[str, int]:
    """Create or update the Prefect global concurrency limit of each cloud to its `fetch_concurrency`."""
    from prefect.client.orchestration import get_client

    limits = {limit_name(cloud): int(limit) for cloud, limit in fetch_concurrency.items()}
    with get_client(sync_client=True) as client:
        for name, limit in limits.items():
            client.upsert_global_concurrency_limit_by_name(name, limit)
    return limits


def parts(catalog: Catalog, source_id: str) -> list[dict] | None:
    """The live options of each fan-out task of a source, in the order its rows come (one per region or service),
    or None when it is fetched whole (not live, a kind that cannot be split, or a single item)."""
    source = catalog.sources.sources[source_id]
    split_by = getattr(SOURCE_KINDS[source.kind], "SPLIT_BY", None)
    if split_by is None or not source.reads_live(catalog.sources.mode):
        return None
    items = dict(source.live).get(split_by)
    if not isinstance(items, list) or len(items) < 2:
        return None
    if len(items) > MAX_PARTS:
        raise FanoutError(f"sources.yaml: {source_id}: live.{split_by} lists {len(items)} items, more than the "
                          f"{MAX_PARTS} one source fans out to")
    return [dict(source.live) | {split_by: [item]} for item in items]



@contextmanager
def cloud_shares(slots: Mapping[str, int], events: queue.SimpleQueue) -> Iterator[Callable[[str], None]]:
    """Take `slots[cloud]` slots of each cloud's Prefect global concurrency limit, each cloud on a thread of its own,
    for the `with` block: the fan-out flow takes its clouds' shares once, and its tasks keep within them (`run_slots`).

    Each cloud's share is taken apart from the others': a cloud whose limit another run holds makes only that cloud's
    fetches wait, not the others'. As a share is taken, `("share", cloud, None)` goes on `events`; if it is not taken
    (within SLOT_WAIT_S, or the server refuses), `("share", cloud, error)`; if its lease is lost while it is held
    (Prefect could not renew it: other runs may take the slots), `("lost", cloud, error)`. The block gets `give_back(cloud)`, which
    lets that cloud's share go as soon as its fetches are done; every share still held is given back at the end.

    The server counts the slots of every run on every machine, so two runs never have more of a cloud's calls in
    flight together than its limit: a run whose share is taken waits (Prefect's `concurrency()`, which keeps the
    lease alive while it is held and lets it lapse if the process dies). Taking a slot per task instead cost ~1.8 s
    a task against Prefect's SQLite-backed server (90 fetch tasks of 0.4 s at 3 slots a cloud: 28-35 s, longer
    than one after another), measured on this project's machine.
    """
    from prefect.concurrency.sync import concurrency

    let_go = {cloud: threading.Event() for cloud in slots}
    taken: set[str] = set()

    def hold(cloud: str) -> None:
        try:
            with concurrency(limit_name(cloud), occupy=slots[cloud], strict=True, timeout_seconds=SLOT_WAIT_S):
                taken.add(cloud)
                events.put(("share", cloud, None))
                # waited for a second at a time: a lease Prefect could not renew is raised into this thread (strict),
                # which only happens while it runs Python, not while it blocks in one long wait
                while not let_go[cloud].wait(LEASE_CHECK_S):
                    pass
        except BaseException as exc:  # noqa: BLE001 (told to the flow: Prefect raises a lost lease as CancelledError)
            if cloud not in taken:
                events.put(("share", cloud, exc))
            elif not let_go[cloud].is_set():  # lost while its fetches run: they stop, its sources are stale
                events.put(("lost", cloud, exc))
            else:  # taken and used: giving it back failed, and its lease lapses on its own
                log.warning("giving back %s's share of %s failed: %s", cloud, limit_name(cloud), exc)

    threads = {cloud: threading.Thread(target=contextvars.copy_context().run, args=(hold, cloud), daemon=True,
                                       name=f"hweval-share-{cloud}") for cloud in sorted(slots)}
    for thread in threads.values():
        thread.start()
    try:
        yield lambda cloud: let_go[cloud].set()
    finally:
        for event in let_go.values():
            event.set()
        for cloud, thread in threads.items():  # a share still waited for is let go as soon as it comes (daemon)
            if cloud in taken:
                thread.join()


@contextmanager
def run_slots(slots: Mapping[str, int], run_id: str, client) -> Iterator[dict[str, DaskSlot]]:
    """The run's share of each cloud (`slots`) as a semaphore on the scheduler of the Dask `client` (the flow's task
    runner's), for the `with` block, then removed: every task of the run, on any worker, holds one of its cloud's
    around its calls (`dask_slot`), so the run keeps to its share while more of its tasks wait on the cluster, ready."""
    from distributed import Semaphore

    semaphores = {cloud: Semaphore(max_leases=n, name=f"{LIMIT_PREFIX}{cloud}-{run_id}",
                                   scheduler_rpc=client.scheduler, loop=client.loop)
                  for cloud, n in slots.items()}
    try:
        yield {cloud: DaskSlot(s.name, s.max_leases) for cloud, s in semaphores.items()}
    finally:
        for semaphore in semaphores.values():
            semaphore.close()


@dataclass(frozen=True)
class DaskSlot:
    """A run's semaphore for one cloud on the Dask scheduler (`run_slots`), by name: what a task needs to take one."""

    name: str
    leases: int


@contextmanager
def dask_slot(slot: DaskSlot) -> Iterator[None]:
    """Hold one lease of the run's semaphore `slot` (on the scheduler of the Dask worker running this task) for the
    `with` block."""
    from distributed import Semaphore

    with Semaphore(max_leases=slot.leases, name=slot.name):
        yield
