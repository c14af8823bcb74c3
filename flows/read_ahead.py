"""The large files a run is given, read while its Prefect server starts.

`hweval run` waits 2-4 s for the temporary Prefect server it launches (flows/run_startup.py), and its flow begins
with the fetch phase, where a file given with `--source` whose kind reads into Arrow (the offer file: a whole region's
is hundreds of MB, ~1.5-2.5 s to scan on two cores) was the longest fetch by far. `begin` starts reading those files
before the flow, one after another in a thread of this process; the fetch task then takes the table read
(flows/source_batches.py, `fetch_source`) instead of reading the file again, when it is the same read:

- the same source, file entry (path, as-of date, region, metadata), kind and limits;
- the file unchanged since the read began: the same size, modification time, inode and device.

Otherwise the task reads the file as it would have, and the log says why. A read ahead that failed raises its error in
the fetch task, where the task's own read would have raised it (a transient one is retried there, and the retry reads
the file again). Each read is taken once; `abandon` drops those not taken (a run that failed before its fetch phase).

Only the files a run is given on the command line are read ahead: the catalog's declared files are small, and a live
fetch asks its API from the flow. The reads keep to the limits of their source (sources.yaml), one file at a time;
files read ahead are not counted against a cloud's `fetch_concurrency` (no API is asked), and a file waits for the
one before it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from flows.catalog_models import Catalog, SnapshotFile
    from flows.sources._common import SourceLimits

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Read:
    kind: str
    root: Path
    file: SnapshotFile
    limits: SourceLimits
    signature: tuple[int, int, int, int] | None  # the file's (size, mtime_ns, inode, device) as the read began
    began: float  # time.monotonic()
    future: Future


_lock = threading.Lock()
_reads: dict[tuple[str, int], _Read] = {}  # (source id, file index) -> its read
_executor: ThreadPoolExecutor | None = None


def signature(path: Path) -> tuple[int, int, int, int] | None:
    """What says a file is the one read: its size, modification time (ns), inode and device; None if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev


def begin(catalog: Catalog, given: dict[str, list[SnapshotFile]]) -> list[tuple[str, int]]:
    """Start reading the files `given` for each source (pipeline.source_snapshot_files: what `--source` names) whose
    kind reads into Arrow; the (source id, file index) of each read begun. Reads still held from an earlier call are
    dropped first."""
    from flows.pipeline import reading_given_files
    from flows.sources import limits_for, read_declared_table, reads_tables

    global _executor
    abandon()
    begun = []
    with _lock:
        for source_id, files in given.items():
            declared = catalog.sources.sources[source_id]
            if not reads_tables(declared.kind):
                continue
            source = reading_given_files(declared, files)  # as the flow reads it (pipeline.with_source_files)
            for index, file in enumerate(files):
                if _executor is None:
                    _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hweval-read-ahead")
                # the file's signature taken before its read is queued: a file replaced once the read has opened it
                # must not pass for the one read
                before = signature(catalog.root / file.path)
                future = _executor.submit(read_declared_table, catalog.root, source, source_id, index)
                _reads[(source_id, index)] = _Read(source.kind, catalog.root, file, limits_for(source, source_id),
                                                   before, time.monotonic(), future)
                begun.append((source_id, index))
    return begun


def take(root: Path, source: Any, source_id: str, index: int) -> pa.Table | None:
    """The table read ahead of file `index` of `source` (a catalog_models.Source, as the flow reads it), once; None
    when it was not read ahead, or not the same read (the caller reads it itself). A read ahead that failed raises
    its error here. Waits for a read still going."""
    with _lock:
        read = _reads.pop((source_id, index), None)
    if read is None:
        return None
    from flows.sources import limits_for

    file = source.files[index]
    if (read.kind, read.root, read.file, read.limits) != (source.kind, root, file, limits_for(source, source_id)):
        read.future.cancel()
        _run_log().info("%s: %s was read ahead with another declaration; reading it again", source_id, file.path)
        return None
    if not _unchanged(read, source_id):  # changed already: not waited for
        read.future.cancel()
        return None
    waited = time.monotonic()
    error: BaseException | None = None
    try:
        table = read.future.result()
    except Exception as exc:  # noqa: BLE001 - raised below, unless the file changed while it was read
        error, table = exc, None
    if not _unchanged(read, source_id):
        return None
    if error is not None:
        raise error
    _run_log().info("%s: %s read ahead while the run started (begun %.1f s before this fetch, waited %.1f s for it)",
                    source_id, file.path, waited - read.began, time.monotonic() - waited)
    return table


def _unchanged(read: _Read, source_id: str) -> bool:
    """Whether the file read is still as it was when its read began; logs that it is read again when not."""
    if read.signature is not None and signature(read.root / read.file.path) == read.signature:
        return True
    _run_log().info("%s: %s changed since it was read ahead; reading it again", source_id, read.file.path)
    return False


def _run_log() -> logging.Logger | logging.LoggerAdapter:
    """The logger of the Prefect task run taking a read (the fetch task: its log is the run's, on the server), else
    this module's (a fetch outside a flow)."""
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        return get_run_logger()
    except MissingContextError:
        return log


def pending() -> list[tuple[str, int]]:
    """The reads begun and not taken yet."""
    with _lock:
        return sorted(_reads)


def abandon() -> None:
    """Drop the reads not taken (a read not begun yet is cancelled; one going ends on its own, its table dropped)."""
    with _lock:
        reads = list(_reads.values())
        _reads.clear()
    for read in reads:
        read.future.cancel()
