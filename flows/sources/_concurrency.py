"""How much a run fetches at once: each cloud has a number of slots (sources.yaml `fetch_concurrency`), shared by all
its sources; a region (or service) of a live source holds one while it is fetched, a source read from files holds one
while it reads. Results always come back in the declared order, so a run's output does not depend on who was first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CLOUD = "default"  # the slots of sources whose kind names no cloud (benchmark results, price sheets)


class CloudSlots:
    """At most `limit` fetches of one cloud at a time, however many of its sources run at once."""

    def __init__(self, cloud: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"{cloud}: a fetch concurrency of {limit}; at least 1 is needed")
        self.cloud, self.limit = cloud, limit
        self._semaphore = threading.BoundedSemaphore(limit)

    def __repr__(self) -> str:  # how a task argument reads in the Prefect UI
        return f"{self.cloud}: {self.limit} at a time"

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """One of the cloud's slots, waited for if all are taken, for the time of the `with` block."""
        with self._semaphore:
            yield


class FetchSlots:
    """The slots of every cloud for one run's fetches (`limits`: cloud -> fetches at once, with a `default`)."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        if DEFAULT_CLOUD not in limits:
            raise ValueError(f"fetch concurrency: no {DEFAULT_CLOUD!r} limit in {dict(limits)!r}")
        self._clouds = {cloud: CloudSlots(cloud, limit) for cloud, limit in limits.items()}

    def __repr__(self) -> str:
        return "fetches at once: " + ", ".join(f"{c} {s.limit}" for c, s in self._clouds.items())

    def of(self, cloud: str | None) -> CloudSlots:
        """The slots of `cloud`; a cloud without a limit of its own shares the default's."""
        return self._clouds.get(cloud or DEFAULT_CLOUD) or self._clouds[DEFAULT_CLOUD]


@contextlib.contextmanager
def held(slots: CloudSlots | None) -> Iterator[None]:
    """One slot of `slots` for the time of the `with` block; nothing to wait for without slots."""
    if slots is None:
        yield
        return
    with slots.held():
        yield


def in_order(fetch_one: Callable[[T], R], items: Sequence[T], slots: CloudSlots | None = None) -> list[R]:
    """`[fetch_one(item) for item in items]`, up to `slots.limit` items at a time, each holding one of the cloud's
    slots; the results are in the order of `items`. Without slots: one item after another, as a plain loop.

    The first failure in the order of `items` is raised, once the items already started have finished; items not
    started by then are not fetched.
    """
    if slots is None:
        return [fetch_one(item) for item in items]

    def one(item: T) -> R:
        with slots.held():
            return fetch_one(item)

    if len(items) <= 1 or slots.limit == 1:
        return [one(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(slots.limit, len(items)),
                            thread_name_prefix=f"fetch-{slots.cloud}") as pool:
        futures = [pool.submit(one, item) for item in items]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
