"""The fetch phase of the nightly flow: every source read side by side into a batch, a source that cannot be read
stale (a batch without rows that says why) instead of stopping the others.

By default the fetches run on the flow's own task runner, each cloud within its `fetch_concurrency` slots in this
process; with the Dask task runner (flows/fanout.py), live sources fan out a task per region or service in the
subflow `nightly-fetch-fanout`, within each cloud's Prefect global concurrency limit.
"""

from __future__ import annotations

import queue

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import get_run_context
from prefect.futures import wait
from prefect.utilities.annotations import quote

from flows import fanout, source_batches
from flows.catalog_models import Catalog, CatalogError
from flows.redaction import redact_text
from flows.sources._common import LiveSourceError, SourceFormatError
from flows.sources._concurrency import FetchSlots


def _transient(task, task_run, state) -> bool:
    """Retry network-style failures; a file in the wrong format fails the same way every time."""
    try:
        state.result()
    except (SourceFormatError, CatalogError, LiveSourceError):  # a live source already retried what can be retried
        return False
    except (OSError, TimeoutError):  # a file system or a connection that may answer next time (URLError is an OSError)
        return True
    except Exception:  # anything else is a bug or bad data: reading it again gives the same answer
        return False
    return False


@task(retries=2, retry_delay_seconds=5, retry_condition_fn=_transient, cache_policy=NO_CACHE)
def fetch(catalog: Catalog, source_id: str, slots: FetchSlots | None = None) -> source_batches.SourceBatch:
    """Read one declared source into rows for its landed table, within its cloud's share of `slots`."""
    return source_batches.fetch_source(catalog, source_id, slots)


@task(retries=2, retry_delay_seconds=5, retry_condition_fn=_transient, cache_policy=NO_CACHE,
      task_run_name="fetch-{part.source_id}")
def fetch_part(part: source_batches.LivePart, slot: fanout.DaskSlot) -> source_batches.SourceBatch:
    """One region (or service) of a live source, fanned out (flows/fanout.py), holding one of its cloud's `slot`s."""
    with fanout.dask_slot(slot):
        return source_batches.fetch_live_part(part)


@flow(name="nightly-fetch-fanout", log_prints=True)
def fetch_fanned_out(catalog: Catalog, source_ids: list[str]) -> list[source_batches.SourceBatch]:
    """The live sources' fetches on the Dask task runner: a task per region (or service) of each source that can be
    split; batches in the order given.

    The run holds each cloud's share of its Prefect global concurrency limit (`hweval-fetch-<cloud>`, counted by the
    server for every run on every machine), each cloud's taken on its own and given back when that cloud's parts are
    done (`fanout.cloud_shares`), and its tasks take that share's slots on the Dask scheduler around their calls
    (`fanout.run_slots`): at most the share fetch at once, with as many more begun and ready to take a slot as one is
    let go (fanout.TASKS_PER_SLOT), a new task submitted as one finishes. A cloud whose share is not taken (within
    fanout.SLOT_WAIT_S: other runs hold it) has its live sources stale for the run, with that reason; the other
    clouds' are fetched all the same.
    """
    logger = get_run_logger()
    concurrency = catalog.sources.fetch_concurrency.model_dump()
    limits = fanout.ensure_limits(concurrency)
    queues: dict[str, queue.SimpleQueue] = {}
    parts_of: dict[str, list[source_batches.LivePart]] = {}
    for source_id in source_ids:
        options = fanout.parts(catalog, source_id) or [dict(catalog.sources.sources[source_id].live)]
        parts_of[source_id] = source_batches.live_parts(catalog, source_id, options)
        cloud = fanout.cloud_of(catalog, source_id)
        for index, part in enumerate(parts_of[source_id]):
            queues.setdefault(cloud, queue.SimpleQueue()).put((source_id, index, part))
    slots = {cloud: min(concurrency.get(cloud, concurrency["default"]), q.qsize()) for cloud, q in queues.items()}
    logger.info("fanning out %d fetch tasks of %d live sources, %s at a time (limits: %s)",
                sum(len(p) for p in parts_of.values()), len(source_ids),
                ", ".join(f"{cloud} {n}" for cloud, n in slots.items()),
                ", ".join(f"{name} {limit}" for name, limit in limits.items()))
    futures: dict[tuple[str, int], object] = {}
    events: queue.SimpleQueue = queue.SimpleQueue()  # ("share", cloud, error or None) and ("done", cloud, future)
    busy = dict.fromkeys(slots, 0)  # each cloud's tasks on the cluster

    def submit_next(cloud: str) -> None:
        if cloud not in refused and not queues[cloud].empty():
            source_id, index, part = queues[cloud].get()
            futures[(source_id, index)] = future = fetch_part.submit(part, dask_slots[cloud])
            busy[cloud] += 1
            future.add_done_callback(lambda done, cloud=cloud: events.put(("done", cloud, done)))

    # each cloud's share of its global limit, taken on its own (a cloud another run holds makes only its own fetches
    # wait) and given back when its parts are done; the same shares as the run's semaphores on the Dask scheduler,
    # which the parts take around their calls. Submitted from this thread only (the task runner's client lives here):
    # TASKS_PER_SLOT tasks a slot on the cluster, the next part of a cloud as one of its tasks finishes
    context = get_run_context()
    refused: dict[str, tuple[str, BaseException]] = {}  # cloud -> (what happened to its share, the error)
    with (fanout.run_slots(slots, str(context.flow_run.id), context.task_runner.client) as dask_slots,
          fanout.cloud_shares(slots, events) as give_back):
        waiting = set(slots)  # clouds whose share is not taken yet
        while waiting or any(busy.values()):
            kind, cloud, what = events.get()
            if kind == "share":
                waiting.discard(cloud)
            if kind == "lost" or (kind == "share" and what is not None):
                # not taken, or its lease lapsed while its parts ran: no more of them start, and its sources are
                # stale this run; the other clouds fetch on
                refused[cloud] = ("not taken" if kind == "share" else "lost while its fetches ran", what)
                logger.error("%s's share of %s was %s: %s: %s; its live sources are stale this run", cloud,
                             fanout.limit_name(cloud), refused[cloud][0], type(what).__name__, redact_text(str(what)))
                continue
            if kind == "share":
                for _ in range(slots[cloud] * fanout.TASKS_PER_SLOT):
                    submit_next(cloud)
            else:
                busy[cloud] -= 1
                submit_next(cloud)
            if cloud not in refused and not busy[cloud] and queues[cloud].empty():
                give_back(cloud)  # its parts are done: other runs may have its slots now
    batches = []
    for source_id, parts in parts_of.items():
        cloud = fanout.cloud_of(catalog, source_id)
        if cloud in refused:
            happened, error = refused[cloud]
            batches.append(source_batches.failed_batch(catalog, source_id, RuntimeError(
                f"{cloud}'s share of the global concurrency limit {fanout.limit_name(cloud)} was {happened}: "
                f"{type(error).__name__}: {error}")))
            continue
        done = [futures[(source_id, index)] for index in range(len(parts))]
        for future in done:  # each final state as Dask returned it (0.45 s for 90 when read back from the Prefect API)
            future.wait()
        # failed, or crashed or cancelled (a Dask worker lost): that source is stale, the others land
        failed = next((future for future in done if not future.state.is_completed()), None)
        if failed is not None:
            error = failed.state.result(raise_on_failure=False)
            batches.append(source_batches.failed_batch(catalog, source_id, error if isinstance(error, BaseException)
                                                       else RuntimeError(f"a fetch task ended {failed.state.name}")))
        else:
            batches.append(source_batches.SourceBatch.combined([future.result() for future in done]))
    return batches


def fetch_all(catalog: Catalog, source_ids: list[str]) -> list[source_batches.SourceBatch]:
    """Fetch the sources side by side through the task runner, each cloud within its `fetch_concurrency`; the
    batches come back in the order of `source_ids`, however the fetches finish.

    With HWEVAL_TASK_RUNNER=dask (flows/fanout.py), the live sources are fetched by the subflow
    `nightly-fetch-fanout` on a Dask cluster, the others (files of this checkout) here.

    A source that cannot be read does not stop the others: its batch has no rows and says why (it is stale). A
    fan-out that fails as a whole (its Dask cluster gone, the Prefect server's API failing) leaves every live source
    stale with that reason, and the file sources are read all the same.
    """
    if fanout.runner_kind() == "dask":
        mode = catalog.sources.mode
        live = [s for s in source_ids if catalog.sources.sources[s].reads_live(mode)]
        if live:
            runner = fanout.task_runner(catalog.sources.fetch_concurrency.model_dump())
            try:
                fanned = fetch_fanned_out.with_options(task_runner=runner)(catalog, live)
            except Exception as exc:  # noqa: BLE001 (the fan-out itself: its cluster, the clouds' limits at the server)
                # every live source is stale for the run, with the reason; the file sources are still read
                error = RuntimeError(redact_text(f"the live fetches' fan-out on Dask failed: {type(exc).__name__}: "
                                                 f"{exc}"))
                get_run_logger().error("%s; %d live sources stale this run", error, len(live))
                fanned = [source_batches.failed_batch(catalog, source_id, error) for source_id in live]
            fetched = dict(zip(live, fanned, strict=True))
            local = [s for s in source_ids if s not in fetched]
            fetched |= dict(zip(local, _fetch_here(catalog, local), strict=True))
            return [fetched[s] for s in source_ids]
    return _fetch_here(catalog, source_ids)


def _fetch_here(catalog: Catalog, source_ids: list[str]) -> list[source_batches.SourceBatch]:
    """The sources fetched on the flow's own task runner, within the process's `fetch_concurrency` slots."""
    slots = FetchSlots(catalog.sources.fetch_concurrency.model_dump())
    futures = [fetch.submit(quote(catalog), source_id, slots) for source_id in source_ids]
    wait(futures)
    batches = []
    for source_id, future in zip(source_ids, futures, strict=True):
        state = future.state
        if state.is_failed():
            batches.append(source_batches.failed_batch(catalog, source_id, state.result(raise_on_failure=False)))
        else:
            batches.append(future.result())
    return batches
