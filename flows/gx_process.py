"""Great Expectations in a process of its own: a run's batches are validated, its catalog's figures checked and its
Data Docs built in one worker process, spawned at the first validation, so that the run's process never imports GX.
GX and what it brings (SQLAlchemy, Altair) take ~150 MiB of a run's memory and its validations hold pandas frames
and results: in the run's process they made the larger part of a cold run's peak (588 MiB, against 372 MiB for a
re-run that validates nothing). A run that validates nothing (every source unchanged, the catalog check cached)
starts no such process.

The worker keeps each batch's GX result for the run's Data Docs (`Kept` stands for it in the run's process) until
they are built from it (flows/data_docs.py hands them over), at most MAX_KEPT. HWEVAL_GX_PROCESS=0 does all of it in
the run's process instead. If the worker dies (killed, out of memory), the call raises GxProcessError: the run fails,
no validation is skipped; the next call starts a new worker.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
import uuid
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flows import chart_workers
from flows.worker_processes import WorkerPool, answer_of

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path

    import pyarrow as pa

    from flows.data_docs import ValidatedBatch
    from flows.validate import ValidationOutcome

ENV = "HWEVAL_GX_PROCESS"
MAX_KEPT = 256  # validation results the worker keeps for Data Docs not built yet (a run keeps one a source)


class GxProcessError(RuntimeError):
    """The Great Expectations process died before it answered, or lost the results a Data Docs site needs."""


class GxProcessSettingError(ValueError):
    """An HWEVAL_GX_PROCESS that is neither 0 nor 1 (exit 2, one line)."""


@dataclass(frozen=True)
class Kept:
    """A validation result the GX process keeps for the run's Data Docs; the run's process holds this in its place."""

    handle: int
    worker: str  # the process that keeps it: another one (started after a crash) holds other results


_IN_WORKER = False  # set in the worker itself: there, GX runs in place

# Set by flows/cli.py's entry(): this process is the `hweval` command's own, one run and done. Once that run's Data Docs
# are built (`build_site_later`) nothing else of the run asks GX's process anything, so it is stopped then rather than
# at the command's end: its ~190-250 MiB are gone before the run's process grows in its build and rendering. A cold run
# on the embedded snapshot peaked at 771-796 MiB, all its processes summed, against 869-870 MiB before (2 runs each,
# alternated): the peak moved from the rendering (GX's process 186 MiB of it) to the landing. A process that runs
# more than one run (a test calling main(), a served deployment) keeps it for the next one.
RELEASE_AFTER_SITE = False


def releases_after_site() -> bool:
    """Whether this process stops its GX process once its run's Data Docs are built (RELEASE_AFTER_SITE, with GX in a
    process of its own): a landing then leaves the chart workers to start at that stop (`_release`)."""
    return RELEASE_AFTER_SITE and enabled()


def enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether GX runs in a process of its own (HWEVAL_GX_PROCESS: 1, the default, or 0); never inside it."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    if text not in ("", "0", "1"):
        raise GxProcessSettingError(f"{ENV}={text!r}: expected 1 (Great Expectations in a process of its own, the "
                                    "default) or 0 (in the run's process)")
    return not _IN_WORKER and text != "0"


_LOCK = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_shutdown_registered = False


def _executor() -> ProcessPoolExecutor:
    global _pool, _shutdown_registered
    with _LOCK:
        if _pool is None:
            _pool = WorkerPool(1, _start_worker)
            if not _shutdown_registered:
                atexit.register(shutdown)
                _shutdown_registered = True
        return _pool


def _died(exc: BrokenProcessPool) -> GxProcessError:
    return GxProcessError(f"Great Expectations' process died before it answered ({exc}); nothing was skipped: the run "
                          f"stops here. {ENV}=0 validates in the run's process")


class Pending:
    """An answer of the GX process asked for and not waited on yet (`result` waits for it)."""

    def __init__(self, pool: ProcessPoolExecutor | None, future: Any, value: Any = None,
                 error: BaseException | None = None) -> None:
        self.pool, self.future, self.value, self.error = pool, future, value, error
        self.taken = False

    def result(self) -> Any:
        """The answer, with what the process logged meanwhile logged here (in the run's log); its errors are raised
        here (the known ones with their own type: `_answer`). Once: the answer is not kept, and a second take is
        refused (RuntimeError), not answered with nothing."""
        if self.taken:
            raise RuntimeError("this answer of Great Expectations' process was taken already")
        self.taken = True
        if self.future is None:
            if self.error is not None:
                raise self.error
            return self.value
        future, self.future = self.future, None
        try:
            answer, records = answer_of(future)
        except BrokenProcessPool as exc:
            shutdown(self.pool)
            raise _died(exc) from None
        for record in records:
            logging.getLogger(record.name).handle(record)
        return answer


def _here(fn) -> Pending:
    """`fn()` in this process, now, as a Pending answer: its error (a batch's conversion to pandas included) is raised
    by `result()`, where the caller would have met it had the GX process been asked."""
    try:
        return Pending(None, None, fn())
    except Exception as exc:  # noqa: BLE001 - raised again, as it came, by result()
        return Pending(None, None, error=exc)


def _submit(fn, *args) -> Pending:
    """`fn(*args)` asked of the GX process (started if need be), not waited on."""
    pool = _executor()
    try:
        return Pending(pool, pool.submit(_answer, fn, *args))
    except BrokenProcessPool as exc:  # it died after its last answer: the next ask starts a new one
        shutdown(pool)
        raise _died(exc) from None


def _call(fn, *args):
    """`fn(*args)` in the GX process (started if need be), waited on: `Pending.result`."""
    return _submit(fn, *args).result()


def shutdown(pool: ProcessPoolExecutor | None = None, *, cancel_queued: bool = True) -> None:
    """Stop the GX process (the next call starts another); the results it kept are gone with it. With `pool`, only
    if that is still the current one (a call that saw it die leaves a newer one alone). Calls still queued are
    cancelled, unless `cancel_queued` is false: then they are answered first."""
    global _pool
    with _LOCK:
        if pool is not None and pool is not _pool:
            return
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=cancel_queued)


def stop_now() -> None:
    """Stop the GX process without waiting for what it is doing: at the end of the command that started it (`hweval`,
    flows/cli.py entry), when nothing will take its answers any more. Python's exit would otherwise wait for the
    process to finish its current call: a run refused in its first seconds (a typo in its flags, a catalog that does
    not load) waited ~2.5 s more for the catalog check begun meanwhile to finish importing GX. A process with a call
    under way is killed (it holds nothing to keep: the results it kept die with the run); an idle one, as at a run's
    end, is shut down in order (killing it too left one of the pool's semaphores for Python's exit to warn of)."""
    global _pool
    if _releasing is not None:  # a process stopping after its run's Data Docs: its shutdown, not the exit, ends it
        _releasing.join(timeout=10)
    with _LOCK:
        pool, _pool = _pool, None
    if pool is None:
        return
    workers = list((getattr(pool, "_processes", None) or {}).values())  # ProcessPoolExecutor's own, as of 3.11
    if getattr(pool, "_pending_work_items", None):  # a call under way: it is not waited for
        for worker in workers:
            worker.kill()
    # then the pool's own shutdown, at once with its workers gone: it closes its queues (without it, Python's exit
    # warned of a leaked semaphore after every run)
    pool.shutdown(wait=True, cancel_futures=True)


def validate_table(data: pa.Table, suite_json: dict, parameters: dict[str, Any] | None = None,
                   keep: bool = False) -> ValidationOutcome:
    """flows/validate.py's validate_frame of an Arrow batch (with its `row_no`), in the GX process; with `keep`, the
    outcome's result is a `Kept` for the Data Docs, else None (and its suite None)."""
    return validate_table_later(data, suite_json, parameters, keep).result()


def validate_table_later(data: pa.Table, suite_json: dict, parameters: dict[str, Any] | None = None,
                         keep: bool = False) -> Pending:
    """`validate_table`, asked of the GX process and not waited on (flows/land.py asks for every batch's before it
    lands the first). Without the process (HWEVAL_GX_PROCESS=0), validated here and now; its error, if any, is raised
    by `result()` all the same."""
    if not enabled():
        from flows.validate import validate_frame

        return _here(lambda: validate_frame(data.to_pandas(), suite_json, parameters, counts=keep))
    if data.num_rows == 0:  # as validate_frame answers an empty frame, without starting the process for it
        from flows.validate import ValidationOutcome

        return Pending(None, None, ValidationOutcome())
    return _submit(_validate_table_here, data, suite_json, parameters, keep)


def validate_rows(rows: list[dict], suite_json: dict, parameters: dict[str, Any] | None = None) -> ValidationOutcome:
    """flows/validate.py's validate_rows in the GX process (its result is not kept)."""
    return validate_rows_later(rows, suite_json, parameters).result()


def validate_rows_later(rows: list[dict], suite_json: dict, parameters: dict[str, Any] | None = None) -> Pending:
    """`validate_rows`, asked of the GX process and not waited on: the caller goes on (while that process starts, the
    first time: ~2 s of importing GX) and takes the outcome with `result()`. Without the process (HWEVAL_GX_PROCESS=0),
    or with no rows, validated here and now."""
    if not enabled():
        from flows.validate import validate_rows as here

        return _here(lambda: here(rows, suite_json, parameters, counts=False))
    if not rows:
        from flows.validate import ValidationOutcome

        return Pending(None, None, ValidationOutcome())
    return _submit(_validate_rows_here, rows, suite_json, parameters)


def build_site(batches: list[ValidatedBatch], site_dir: Path, run_id: str, run_time: dt.datetime | None = None) -> Path:
    """flows/data_docs.py's build_site, in the GX process, from the results it kept for these batches."""
    return build_site_later(batches, site_dir, run_id, run_time).result()


def build_site_later(batches: list[ValidatedBatch], site_dir: Path, run_id: str,
                     run_time: dt.datetime | None = None) -> Pending:
    """`build_site`, asked of the GX process and not waited on (its `result()`: the site's index.html). With
    RELEASE_AFTER_SITE, that process is stopped once the site is built (`_release`): `releases_after_site`, which
    flows/land.py asks too, decides both."""
    pending = _submit(_build_site_here, [(b.source_id, b.result) for b in batches], site_dir, run_id, run_time)
    if releases_after_site():
        pool = pending.pool
        pending.future.add_done_callback(lambda _built: _release(pool))
    return pending


_releasing: threading.Thread | None = None  # the last `_release`'s thread, which stop_now waits for


def _release(pool: ProcessPoolExecutor) -> None:
    """`shutdown(pool)` in a thread of its own (a future's done-callback runs in the pool's own thread, which the
    pool's shutdown joins), a call still queued answered first, not cancelled; the next call starts another process.
    Then the chart workers start, in its place: flows/land.py leaves them until now where this process releases
    (`releases_after_site`), so that GX's process and theirs are never alive at once. Started at the landing, they
    made the run's summed memory peak there with GX's: a cold run on the snapshot peaked at 706-722 MiB against
    769-817 MiB (`make bench`'s P1, 4 runs each, alternated; its time 9.1-10.9 s against 9.7-12.7 s)."""
    global _releasing

    def release() -> None:
        shutdown(pool, cancel_queued=False)
        chart_workers.start()

    _releasing = threading.Thread(target=release, name="hweval-gx-release", daemon=True)
    _releasing.start()


# In the worker.

_KEPT: OrderedDict[int, tuple[Any, Any]] = OrderedDict()  # handle -> (GX result, GX suite)
_HANDLES = itertools.count(1)
_WORKER = uuid.uuid4().hex  # this process's own: a Kept made by another one is not ours
# Errors that come back with their own type (land.py marks a source stale on the batch-data ones); any other error
# comes back as a RuntimeError naming its type: the pool rebuilds an error from its arguments, which some of GX's
# own cannot be rebuilt from, and the pool would then take the process for dead
_OWN_ERRORS = ("SuiteError", "BatchDataError", "GxProcessError", "ArrowInvalid", "ArrowTypeError")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args, record.exc_info = record.getMessage(), None, None  # as text: it crosses processes
        self.records.append(record)


def _answer(fn, *args) -> tuple[Any, list[logging.LogRecord]]:
    """In the worker: `fn(*args)` and the warnings logged meanwhile (hweval's and GX's), for the run's log."""
    records = _Records()
    records.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(records)
    try:
        return fn(*args), records.records
    except Exception as exc:
        if type(exc).__name__ in _OWN_ERRORS:
            raise
        raise RuntimeError(f"in Great Expectations' process: {type(exc).__name__}: {exc}") from None
    finally:
        root.removeHandler(records)
        _give_back_arrow_memory()


def _give_back_arrow_memory() -> None:
    """Arrow's allocator keeps what a call freed for the next one, and a batch's frame is mostly Arrow's (pandas' text
    columns are Arrow-backed since pandas 3): after a validation of `make bench`'s 51,034 offer-file rows the process
    held 111 MiB more than once it gave that back (365 -> 254 MiB), which it otherwise kept to the run's Data Docs.
    Well under a millisecond a call (0.02 ms with nothing to give back, 0.17 ms after 20 MiB freed, measured)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _start_worker() -> None:
    """In a new GX process: leave a Ctrl-C to the run, exit with the process that started it, then import GX before
    the first validation."""
    global _IN_WORKER
    _IN_WORKER = True
    from flows import startup_gc
    from flows.worker_processes import exit_with_parent, leave_ctrl_c_to_the_parent

    collecting = startup_gc.importing()  # GX's import (~1.2 s) with fewer garbage collections: ~0.15 s less

    leave_ctrl_c_to_the_parent()
    threading.Thread(target=exit_with_parent, name="hweval-gx-process-parent", daemon=True).start()
    # tqdm (GX's progress bars, which it makes though they are off) would take a lock shared between processes, a
    # semaphore the run's resource tracker counts: this process killed mid-call (`stop_now`, a Ctrl-C in the landing)
    # left it behind, and the run ended with a "leaked semaphore objects" warning. A lock of this process serves.
    import tqdm

    tqdm.tqdm.set_lock(threading.RLock())
    from flows import data_docs  # noqa: F401
    from flows.validate import import_gx

    import_gx()
    startup_gc.imported(collecting)

    # registered last, so run first at the worker's exit: it holds nothing to flush (its answers are sent, its kept
    # results die with it), and a spawned worker ends with a whole interpreter's teardown, which the run waited on
    # (0.3-0.5 s with GX loaded)
    atexit.register(os._exit, 0)


def _validate_table_here(data: pa.Table, suite_json: dict, parameters: dict[str, Any] | None,
                         keep: bool) -> ValidationOutcome:
    from flows.validate import validate_frame

    outcome = validate_frame(data.to_pandas(), suite_json, parameters, counts=keep)  # counts: for the Data Docs
    if keep and outcome.result is not None:
        handle = next(_HANDLES)
        _KEPT[handle] = (outcome.result, outcome.suite)
        while len(_KEPT) > MAX_KEPT:
            _KEPT.popitem(last=False)
        outcome.result = Kept(handle, _WORKER)
    else:
        outcome.result = None
    outcome.suite = None
    return outcome


def _validate_rows_here(rows: list[dict], suite_json: dict, parameters: dict[str, Any] | None) -> ValidationOutcome:
    from flows.validate import validate_rows

    outcome = validate_rows(rows, suite_json, parameters, counts=False)  # its result is dropped: no counts needed
    outcome.result = outcome.suite = None
    return outcome


def _build_site_here(entries: list[tuple[str, Kept]], site_dir: Path, run_id: str,
                     run_time: dt.datetime | None) -> Path:
    from flows.data_docs import ValidatedBatch, build_site

    lost = [source_id for source_id, kept in entries if kept.worker != _WORKER or kept.handle not in _KEPT]
    if lost:
        raise GxProcessError(f"the validation results of {', '.join(lost)} are gone from Great Expectations' process "
                             f"(their Data Docs were built already, the process was restarted since, or it kept more "
                             f"than {MAX_KEPT} since): their Data Docs cannot be built")
    return build_site([ValidatedBatch(source_id, *_KEPT.pop(kept.handle)) for source_id, kept in entries], site_dir,
                      run_id, run_time)
