"""Great Expectations in a process of its own (flows/gx_process.py): the same verdicts as in the run's process, the
Data Docs built from the results it kept, a worker that dies fails the call, and the run's process never imports GX."""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest
from builders import gone, proc_file, worker_outlives_its_killed_run

from flows import chart_workers, data_docs, gx_process, validate

PROJECT_ROOT = Path(__file__).resolve().parent.parent

SUITE = {"name": "prices", "expectations": [
    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price_usd"}, "meta": {"name": "priced"}},
    {"type": "expect_column_values_to_be_between", "kwargs": {"column": "price_usd", "min_value": 0},
     "meta": {"name": "not negative", "why": "a price is never negative"}},
    {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "kind", "value_set": {"$PARAMETER": "kinds"}},
     "meta": {"name": "known kind"}}]}
# rows 11 (negative) and 12 (no price) and 13 (fpga: no known kind) fail; row 10 passes
ROWS = pa.table({"row_no": [10, 11, 12, 13], "price_usd": [1.0, -2.0, None, 3.0],
                 "kind": ["gpu", "gpu", "tpu", "fpga"]})
PARAMETERS = {"kinds": ["gpu", "tpu"]}


@pytest.fixture(scope="module")
def own_gx_process():
    """GX in a process of its own (the default), one for the module's tests (a test may stop it: the next call starts
    another). It is left running for the worker's next tests, which would otherwise start another (GX's import, 2-5 s);
    the process stops it when it exits."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(gx_process.ENV, "1")
        yield


def verdicts(outcome) -> list[tuple]:
    return sorted((f.row_no, f.expectation, f.column, f.value, f.reason) for f in outcome.failures)


def test_a_batch_validated_in_the_gx_process_is_judged_as_in_the_runs_process(own_gx_process):
    there = gx_process.validate_table(ROWS, SUITE, PARAMETERS, keep=True)
    here = validate.validate_frame(ROWS.to_pandas(), SUITE, PARAMETERS)
    assert there.failed_row_nos == here.failed_row_nos == {11, 12, 13}
    assert verdicts(there) == verdicts(here) == [
        (11, "not negative", "price_usd", -2.0, "a price is never negative"),
        (12, "priced", "price_usd", None, None),
        (13, "known kind", "kind", "fpga", None),
    ]
    assert isinstance(there.result, gx_process.Kept) and there.suite is None  # the result stays in that process
    assert gx_process.validate_table(ROWS, SUITE, PARAMETERS).result is None  # not kept when not asked for


# one expectation of each type the project's suites declare (the test below checks the list is whole), on EVERY_ROWS:
# row 2 fails each of them
EVERY_TYPE = {"name": "every type", "expectations": [
    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "g"}, "meta": {"name": "g given"}},
    {"type": "expect_column_values_to_be_null", "kwargs": {"column": "n"}, "meta": {"name": "n empty"}},
    {"type": "expect_column_values_to_be_between", "kwargs": {"column": "a", "min_value": 0}, "meta": {"name": "a >= 0"}},
    {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "k", "value_set": ["gpu"]},
     "meta": {"name": "k known"}},
    {"type": "expect_column_values_to_not_be_in_set", "kwargs": {"column": "k", "value_set": ["cpus"]},
     "meta": {"name": "k not cpus"}},
    {"type": "expect_column_values_to_match_regex", "kwargs": {"column": "k", "regex": "^g"}, "meta": {"name": "k g"}},
    {"type": "expect_column_value_lengths_to_be_between", "kwargs": {"column": "k", "max_value": 3},
     "meta": {"name": "k short"}},
    {"type": "expect_column_pair_values_a_to_be_greater_than_b", "kwargs": {"column_A": "a", "column_B": "b"},
     "meta": {"name": "a > b"}},
    {"type": "expect_column_pair_values_to_be_equal", "kwargs": {"column_A": "b", "column_B": "c"},
     "meta": {"name": "b = c"}}]}
EVERY_ROWS = pa.table({"row_no": [1, 2], "g": [1.0, None], "a": [2.0, -1.0], "b": [1.0, 0.0], "c": [1.0, 5.0],
                       "n": [None, "x"], "k": ["gpu", "cpus"]})
LOADED = "'scipy.stats._stats_py' in __import__('sys').modules"  # asked of the GX process: was scipy.stats run?


def test_the_gx_process_validates_every_expectation_type_of_the_suites_without_loading_scipy_stats(own_gx_process,
                                                                                                   tmp_path):
    """scipy.stats (~1 s of GX's import) is made lazy before GX is imported (validate.DEFERRED_IMPORTS): no suite here
    uses it, so it never loads; one that does loads it at its first use, and gets scipy's answer."""
    declared = {exp["type"] for path in (PROJECT_ROOT / "catalogs" / "expectations").glob("*.json")
                for exp in validate.load_suite_json(path)["expectations"]}
    assert declared == {exp["type"] for exp in EVERY_TYPE["expectations"]}  # a new type: add it above
    outcome = gx_process.validate_table(EVERY_ROWS, EVERY_TYPE, keep=True)
    # row 2 fails all 9: g is null, n holds "x", a = -1 < 0, k = "cpus" (not in {gpu}, in {cpus}, not ^g, 4 > 3
    # characters), a = -1 is not > b = 0, b = 0 != c = 5; row 1 passes all 9
    assert outcome.failed_row_nos == {2}
    assert sorted(f.expectation for f in outcome.failures) == sorted(
        ["g given", "n empty", "a >= 0", "k known", "k not cpus", "k g", "k short", "a > b", "b = c"])
    assert data_docs.build_site([data_docs.ValidatedBatch("every", outcome.result)], tmp_path / "docs", "r").is_file()
    assert gx_process._call(eval, LOADED) is False
    # a suite that does use it (GX's own `from scipy import stats`, bound to the lazy module) gets the whole module at
    # its first use: 3 of 4 values in the bin [0, 1) against weights 0.5 / 0.5 are a KL divergence of
    # 0.75 ln(0.75 / 0.5) + 0.25 ln(0.25 / 0.5) = 0.3041 - 0.1733 = 0.1308: under 0.2, over 0.1 (this table-level
    # expectation failing names no rows, which validate refuses as a batch it could not evaluate: it shows where the
    # divergence fell)
    def kl(threshold: float) -> dict:
        return {"name": "kl", "expectations": [{"type": "expect_column_kl_divergence_to_be_less_than", "kwargs": {
            "column": "x", "partition_object": {"bins": [0, 1, 2], "weights": [0.5, 0.5]}, "threshold": threshold},
            "meta": {"name": "x as expected"}}]}
    values = pa.table({"row_no": [1, 2, 3, 4], "x": [0.5, 0.7, 0.2, 1.5]})
    assert gx_process.validate_table(values, kl(0.2)).failures == []
    assert gx_process._call(eval, LOADED) is True
    with pytest.raises(validate.BatchDataError, match=r"x as expected \(expect_column_kl_divergence_to_be_less_than\)"):
        gx_process.validate_table(values, kl(0.1))


def test_the_gx_process_imports_gx_collecting_less_then_sets_pythons_thresholds_back_and_freezes_it(own_gx_process):
    """GX's import in its process (~1.2 s) is made with fewer garbage collections (flows/startup_gc.py); after it, the
    process collects at Python's thresholds again (this process's), and GX's modules are frozen: gc.get_objects() lists
    the generations the collector walks, not the frozen one."""
    assert gx_process._call(eval, "__import__('flows.startup_gc').startup_gc.imported_with") == (10_000, 10, 10)
    assert gx_process._call(gc.get_threshold) == gc.get_threshold()
    assert gx_process._call(eval, "not any(o is __import__('sys').modules['great_expectations'] "
                                  "for o in __import__('gc').get_objects())") is True


def test_an_error_in_the_gx_process_is_raised_here_with_its_own_type(own_gx_process):
    suite = {"name": "typo", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "price"}, "meta": {"name": "priced"}}]}
    with pytest.raises(validate.SuiteError, match=r"column\(s\) price are not in the rows"):
        gx_process.validate_table(ROWS, suite, PARAMETERS)


def test_the_data_docs_are_built_from_the_results_the_gx_process_kept_once(own_gx_process, tmp_path):
    kept = [data_docs.ValidatedBatch(source_id, gx_process.validate_table(ROWS, SUITE, PARAMETERS, keep=True).result)
            for source_id in ("aws_pricing", "gcp_billing")]
    index = data_docs.build_site(kept, tmp_path / "docs", "run-1")
    assert index == tmp_path / "docs" / "index.html" and index.is_file()
    for source_id in ("aws_pricing", "gcp_billing"):  # a page for each batch: 3 of its 3 expectations failed
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", data_docs.page_of(tmp_path / "docs", source_id).read_text()))
        assert "Status: Failed" in text and "Unsuccessful Expectations 3 " in text
        assert "/run-1/" in data_docs.page_of(tmp_path / "docs", source_id).as_posix()
    with pytest.raises(gx_process.GxProcessError, match="aws_pricing, gcp_billing are gone"):
        data_docs.build_site(kept, tmp_path / "again", "run-1")  # handed over: the process keeps them no longer


def test_data_docs_begun_in_the_gx_process_are_built_while_the_run_goes_on_and_taken_before_the_reports(
        own_gx_process, tmp_path):
    """nightly.land begins the site (data_docs.begin_site) and build_and_render takes it (finish_site) after building
    the models: the run does not wait for it in between, and what goes beside it is written once it is built."""
    kept = [data_docs.ValidatedBatch("aws_pricing", gx_process.validate_table(ROWS, SUITE, PARAMETERS,
                                                                             keep=True).result)]
    busy = gx_process._submit(time.sleep, 1.0)  # the process busy for a second: begin_site must not wait for it
    seen = []
    data_docs.begin_site(kept, tmp_path / "docs", "run-1",
                         then=lambda: seen.append((tmp_path / "docs" / "index.html").is_file()))
    assert not (tmp_path / "docs").exists() and seen == []  # returned while GX's process was still busy: not waited
    busy.result()
    assert data_docs.finish_site() == tmp_path / "docs" / "index.html" and seen == [True]
    assert data_docs.finish_site() is None  # taken once

    # its error comes where it is taken: the results were handed over to the site above
    data_docs.begin_site(kept, tmp_path / "again", "run-1")
    with pytest.raises(gx_process.GxProcessError, match="aws_pricing are gone"):
        data_docs.finish_site()
    # a run that failed before it took its site waits for it, so that nothing writes into the folder it then removes
    again = [data_docs.ValidatedBatch("aws_pricing", gx_process.validate_table(ROWS, SUITE, PARAMETERS,
                                                                              keep=True).result)]
    gx_process._submit(time.sleep, 1.0)  # busy: the build comes after a second
    data_docs.begin_site(again, tmp_path / "abandoned", "run-1", then=lambda: seen.append("never"))
    data_docs.abandon_site()
    assert (tmp_path / "abandoned" / "index.html").is_file()  # built before it returned
    shutil.rmtree(tmp_path / "abandoned")  # as discard_rendering then does: for good
    assert data_docs.finish_site() is None and seen == [True] and not (tmp_path / "abandoned").exists()
    # and its error is dropped (the run fails for its own reason): these results were handed over above
    data_docs.begin_site(again, tmp_path / "failed", "run-1")
    data_docs.abandon_site()
    assert data_docs.finish_site() is None


@pytest.mark.parametrize("release", [True, False])
def test_a_run_in_its_own_process_stops_the_gx_process_once_its_data_docs_are_built_and_another_keeps_it(
        own_gx_process, tmp_path, monkeypatch, release):
    """`hweval`'s own process (cli.entry sets RELEASE_AFTER_SITE) has no use for GX's process after its run's Data
    Docs: it is stopped as soon as they are built, before the reports render, and a call asked after the site is still
    answered, by that process, not cancelled; then the chart workers start, which its landing left until then. A
    process that runs more than one run keeps it, and starts no chart workers there."""
    monkeypatch.setattr(gx_process, "RELEASE_AFTER_SITE", release)
    started = []  # at each start of the chart workers: GX's pool then (None: stopped)
    monkeypatch.setattr(chart_workers, "start", lambda: started.append(gx_process._pool))
    kept = [data_docs.ValidatedBatch("aws_pricing", gx_process.validate_table(ROWS, SUITE, PARAMETERS,
                                                                             keep=True).result)]
    worker = gx_process._call(os.getpid)
    data_docs.begin_site(kept, tmp_path / "docs", "run-1")
    # queued behind the site: more than the pool hands its process ahead (one call a worker, plus one), so that some
    # are still the pool's own as the site is done, and a release that cancelled them would fail them
    asked_after = [gx_process._submit(os.getpid) for _ in range(4)]
    assert data_docs.finish_site() == tmp_path / "docs" / "index.html"
    assert [answer.result() for answer in asked_after] == [worker] * 4
    if release:
        assert gone(worker, within_s=15)
        assert gx_process._pool is None
        gx_process._releasing.join(timeout=10)
        assert started == [None]  # once, after GX's process was stopped
        assert gx_process.validate_table(ROWS, SUITE, PARAMETERS).failed_row_nos == {11, 12, 13}  # a new process
        assert gx_process._call(os.getpid) != worker
    else:
        time.sleep(0.5)  # what a release would have had to stop it
        assert gx_process._call(os.getpid) == worker
        assert started == []


def test_the_gx_process_gives_back_the_arrow_memory_of_a_batch_it_validated(own_gx_process):
    """The batch a validation turned into a pandas frame (its text columns Arrow-backed) is freed after the call, and
    Arrow's allocator gives that memory back rather than keep it for the process's next call: the worker's resident
    memory grows by a few MiB, not by about the batch's size twice over (49 MiB for this 20 MiB batch, kept)."""
    suite = {"name": "texts", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "text"}, "meta": {"name": "texted"}}]}
    rows = 400_000
    batch = pa.table({"row_no": pa.array(range(rows)),
                      "text": pa.array([f"an offer-file field of some length {i}" for i in range(rows)])})
    gx_process.validate_table(batch.slice(0, 2), suite)  # GX imported and warm: what the big batch adds is measured
    worker = gx_process._call(os.getpid)

    def resident_mib() -> float:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", proc_file(worker, "status"), re.M).group(1)) / 1024

    before = resident_mib()
    assert gx_process.validate_table(batch, suite).failed_row_nos == set()
    assert resident_mib() - before < 25, f"GX's process kept {resident_mib() - before:.0f} MiB after the call"


@pytest.mark.parametrize("release", [True, False])
def test_a_landing_starts_the_chart_workers_beside_gx_only_where_gx_s_process_is_kept(own_gx_process, catalog,
                                                                                       monkeypatch, release):
    """A batch asked of GX (land.ask_validation) means charts to draw again: the chart workers start then, to import
    Matplotlib while GX validates, unless GX's process stops at the run's Data Docs (the `hweval` command's own):
    there they start at that stop (above), and the run's processes never hold both."""
    from flows import land, source_batches

    monkeypatch.setattr(gx_process, "RELEASE_AFTER_SITE", release)
    started = []
    monkeypatch.setattr(chart_workers, "start", lambda: started.append(True))
    batch = source_batches.fetch_source(catalog, "aws_spot")
    outcome = land.ask_validation(batch, catalog, keep=False).result()
    assert outcome.failed_row_nos == set()  # the snapshot's 22 spot prices pass
    assert started == ([] if release else [True])
    monkeypatch.setenv(gx_process.ENV, "0")  # GX in the run's process: no process of its own to stop, nor to wait for
    land.ask_validation(batch, catalog, keep=False).result()
    assert started == ([True] if release else [True, True])


def test_the_reports_are_rendered_beside_the_data_docs_the_gx_process_is_still_building(own_gx_process, tmp_path,
                                                                                          monkeypatch):
    """build_and_render's render_reports_to waits for the site the land step began, then moves it into the rendering:
    the Data Docs are published with the reports even when GX's process is still busy as the rendering starts."""
    import datetime as dt

    from flows import publishing, reports

    monkeypatch.setattr(reports, "render", lambda con, as_of: {"index.md": "# reports\n"})
    kept = [data_docs.ValidatedBatch("aws_pricing", gx_process.validate_table(ROWS, SUITE, PARAMETERS,
                                                                             keep=True).result)]
    staging = tmp_path / ".2026-11-30.rendering-1"
    gx_process._submit(time.sleep, 1.0)  # still busy as the rendering starts
    data_docs.begin_site(kept, publishing.docs_dir_for(staging), "run-1")
    assert publishing.render_reports_to(None, dt.date(2026, 11, 30), staging) == [staging / "index.md"]
    assert (staging / "data-docs" / "index.html").is_file()
    assert data_docs.page_of(staging / "data-docs", "aws_pricing").is_file()
    assert not publishing.docs_dir_for(staging).exists()


def test_an_answer_of_the_gx_process_is_taken_once(own_gx_process, monkeypatch):
    """A second take of an answer is refused, not answered with nothing (in GX's process or in the run's), and with
    GX in the run's process a batch that cannot even become a pandas frame raises where its answer is taken."""
    asked = gx_process.validate_table_later(ROWS, SUITE, PARAMETERS)
    assert asked.result().failed_row_nos == {11, 12, 13}
    with pytest.raises(RuntimeError, match="taken already"):
        asked.result()
    monkeypatch.setenv(gx_process.ENV, "0")
    here = gx_process.validate_table_later(ROWS, SUITE, PARAMETERS)
    assert here.result().failed_row_nos == {11, 12, 13}
    with pytest.raises(RuntimeError, match="taken already"):
        here.result()
    unconvertible = pa.table({"row_no": [1], "u": pa.UnionArray.from_sparse(
        pa.array([0], pa.int8()), [pa.array([1]), pa.array(["a"])])})
    asked = gx_process.validate_table_later(unconvertible, SUITE, PARAMETERS)  # asked: nothing raised yet
    with pytest.raises(pa.ArrowException):
        asked.result()


def test_every_batch_is_asked_of_the_gx_process_before_the_first_lands_and_lands_as_before(own_gx_process, fresh_db,
                                                                                             catalog, monkeypatch):
    """land_all asks for each batch's validation before it lands the first (the process validates the next batches
    while the run lands one), then lands them in their order, each with its own answer: 23 rows of aws_pricing, 22 of
    them landed and 1 quarantined, as the embedded snapshot's run says."""
    import datetime as dt

    from flows.land import land_all
    from flows.source_batches import fetch_source

    events = []
    real = gx_process.validate_table_later

    def later(data, suite_json, parameters=None, keep=False):
        events.append(f"asked {data.num_rows}")
        pending = real(data, suite_json, parameters, keep)
        taken = pending.result
        pending.result = lambda: events.append(f"answered {data.num_rows}") or taken()
        return pending

    monkeypatch.setattr(gx_process, "validate_table_later", later)
    batches = [fetch_source(catalog, source_id) for source_id in ("aws_pricing", "azure_retail", "gcp_billing")]
    loads = land_all(fresh_db, catalog, batches, "run-1", dt.date(2026, 11, 30))
    assert events == ["asked 23", "asked 15", "asked 19", "answered 23", "answered 15", "answered 19"]
    assert [(ld.source_id, ld.rows_in, ld.rows_landed, ld.rows_quarantined) for ld in loads] == [
        ("aws_pricing", 23, 22, 1), ("azure_retail", 15, 15, 0), ("gcp_billing", 19, 18, 1)]


def test_with_gx_in_the_runs_process_a_batch_gx_cannot_evaluate_is_stale_and_its_neighbours_land(fresh_db, catalog,
                                                                                                   monkeypatch):
    """HWEVAL_GX_PROCESS=0: the validations asked ahead are done at once, and an error of one (GX could not evaluate
    an expectation on the batch) comes where that batch lands, as it did: that source is stale, the others land."""
    import datetime as dt

    from flows.land import land_all
    from flows.source_batches import fetch_source

    monkeypatch.setenv(gx_process.ENV, "0")
    real = validate.validate_frame

    def frame(data, suite_json, parameters=None, *, counts=True):
        if suite_json["name"] == "azure_retail":
            raise validate.BatchDataError("suite 'azure_retail': not negative could not be evaluated on this batch")
        return real(data, suite_json, parameters, counts=counts)

    monkeypatch.setattr(validate, "validate_frame", frame)
    batches = [fetch_source(catalog, source_id) for source_id in ("aws_pricing", "azure_retail", "gcp_billing")]
    loads = land_all(fresh_db, catalog, batches, "run-1", dt.date(2026, 11, 30))
    assert [(ld.source_id, ld.status, ld.rows_landed) for ld in loads] == [
        ("aws_pricing", "landed", 22), ("azure_retail", "stale", 0), ("gcp_billing", "landed", 18)]
    assert "could not be evaluated on this batch" in loads[1].error


@pytest.mark.slow  # a GX process started again, or a run in a process of its own: 5-9 s (make test-slow, CI)
def test_at_the_commands_end_the_gx_process_is_stopped_without_waiting_for_its_call(own_gx_process):
    """`hweval`'s end (cli.entry) stops the GX process mid-call: Python's exit would wait for the call to end (a run
    refused in its first seconds waited ~2.5 s more for the catalog check begun meanwhile). The next ask starts
    another."""
    gx_process.validate_table(ROWS, SUITE, PARAMETERS)  # the process runs
    busy = gx_process._submit(time.sleep, 60)
    [worker] = list(gx_process._pool._processes)
    deadline = time.monotonic() + 30
    while not busy.future.running() and time.monotonic() < deadline:  # handed to the process: no longer cancellable
        time.sleep(0.05)
    assert busy.future.running()
    started = time.monotonic()
    gx_process.stop_now()
    assert gone(worker, within_s=10) and time.monotonic() - started < 30  # not the 60 s its call would have taken
    assert gx_process._pool is None
    assert gx_process.validate_table(ROWS, SUITE, PARAMETERS).failed_row_nos == {11, 12, 13}  # a new process


def test_the_gx_process_leaves_a_ctrl_c_to_the_run(own_gx_process):
    """A Ctrl-C at the terminal reaches the run's whole process group: the GX process ignores it (it printed its own
    traceback, and died under the run) and answers on; the run stops it as it ends."""
    import signal

    worker = gx_process._call(os.getpid)
    os.kill(worker, signal.SIGINT)
    time.sleep(0.2)  # a process that took it would be gone by now (a KeyboardInterrupt as it waits for work)
    assert gx_process._call(os.getpid) == worker
    # spawned with SIGINT blocked, it let it through once it ignored it
    assert signal.SIGINT not in gx_process._call(signal.pthread_sigmask, signal.SIG_BLOCK, [])


def test_the_gx_process_shares_no_lock_that_its_kill_would_leave_behind(own_gx_process):
    """tqdm's default lock (GX makes progress bars, though they are off) is a semaphore shared between processes,
    which the run's resource tracker counts: the GX process killed mid-call (`stop_now`, a Ctrl-C as batches are
    validated) left it, and the run ended with a "leaked semaphore objects" warning. Its lock is its own."""
    gx_process.validate_table(ROWS, SUITE, PARAMETERS)  # GX has made its progress bars
    assert gx_process._call(eval, "type(__import__('tqdm').tqdm.get_lock()).__name__") == "RLock"


def test_a_ctrl_c_reaches_the_run_as_it_waits_for_the_gx_process(own_gx_process):
    """The system may hand a Ctrl-C to another thread of the run: its main thread, waiting for an answer of the GX
    process, ran Python's handler only as the wait ended (2-2.6 s in a landing, the GX import). It waits a little at
    a time. Python's handler is called here as a signal another thread took calls it (interrupt_main)."""
    import _thread
    import signal
    import threading

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a worker may have SIGINT ignored
    try:
        started = time.monotonic()
        busy = gx_process._submit(time.sleep, 3.0)
        threading.Timer(0.2, _thread.interrupt_main).start()
        with pytest.raises(KeyboardInterrupt):
            busy.result()
        # about 0.3 s; the answer itself comes at 3 s (the bound was 1.5 s against a 2 s answer: thin on a loaded
        # machine)
        assert time.monotonic() - started < 2.5
    finally:
        signal.signal(signal.SIGINT, previous)
    time.sleep(max(0.0, started + 3.2 - time.monotonic()))  # the process's sleep ends: the next call is not queued


@pytest.mark.slow  # a GX process started again, or a run in a process of its own: 5-9 s (make test-slow, CI)
def test_a_gx_process_that_dies_fails_the_call_and_the_next_call_starts_another(own_gx_process):
    gx_process.validate_table(ROWS, SUITE, PARAMETERS)
    with pytest.raises(gx_process.GxProcessError, match="died before it answered"):
        gx_process._call(os._exit, 1)  # the worker process ends without answering (killed, out of memory)
    assert gx_process.validate_table(ROWS, SUITE, PARAMETERS).failed_row_nos == {11, 12, 13}


@pytest.mark.parametrize("value, runs_apart", [("", True), ("1", True), (" 1 ", True), ("0", False)])
def test_hweval_gx_process_says_where_gx_runs(value, runs_apart):
    assert gx_process.enabled({gx_process.ENV: value}) is runs_apart


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_an_hweval_gx_process_that_is_neither_0_nor_1_is_refused_naming_it(value):
    with pytest.raises(gx_process.GxProcessSettingError, match=f"HWEVAL_GX_PROCESS='{value}': expected 1"):
        gx_process.enabled({gx_process.ENV: value})


def test_with_hweval_gx_process_0_gx_runs_in_this_process(monkeypatch):
    monkeypatch.setenv(gx_process.ENV, "0")
    outcome = gx_process.validate_table(ROWS, SUITE, PARAMETERS, keep=True)
    assert outcome.failed_row_nos == {11, 12, 13} and not isinstance(outcome.result, gx_process.Kept)
    assert outcome.result is not None and outcome.suite is not None  # GX's own objects, for the Data Docs here


def test_a_batch_kept_for_the_data_docs_is_validated_with_counts_and_one_not_kept_or_a_catalog_check_without(
        monkeypatch):
    """GX's process (here called in this one) counts each expectation's rows only for a result it keeps for the Data
    Docs (BASIC first); a batch it does not keep, and rows of the catalog's check, get BOOLEAN_ONLY first. Either
    way the failing expectations are validated again COMPLETE, and the outcome is the same."""
    from test_guards import counting_passes

    formats = counting_passes(monkeypatch)
    outcomes = {}
    for keep in (True, False):
        outcomes[keep] = gx_process._validate_table_here(ROWS, SUITE, PARAMETERS, keep)
        assert formats == [("BASIC" if keep else "BOOLEAN_ONLY", 3), ("COMPLETE", 3)], keep
        formats.clear()
    assert outcomes[True].failed_row_nos == outcomes[False].failed_row_nos == {11, 12, 13}
    assert isinstance(outcomes[True].result, gx_process.Kept) and outcomes[False].result is None
    checked = gx_process._validate_rows_here(ROWS.to_pylist(), SUITE, PARAMETERS)
    assert formats == [("BOOLEAN_ONLY", 3), ("COMPLETE", 3)] and checked.failed_row_nos == {11, 12, 13}
    formats.clear()
    monkeypatch.setenv(gx_process.ENV, "0")  # the same without the process
    for keep in (True, False):
        gx_process.validate_table_later(ROWS, SUITE, PARAMETERS, keep=keep).result()
        assert formats[0] == ("BASIC" if keep else "BOOLEAN_ONLY", 3), keep
        formats.clear()
    gx_process.validate_rows(ROWS.to_pylist(), SUITE, PARAMETERS)
    assert formats[0] == ("BOOLEAN_ONLY", 3)


@pytest.mark.slow  # a GX process started again, or a run in a process of its own: 5-9 s (make test-slow, CI)
def test_the_runs_process_validates_and_builds_its_data_docs_without_importing_gx(tmp_path):
    """What a run does with GX (validate a batch, check rows, build the Data Docs) leaves GX out of its process."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        import pyarrow as pa
        from flows import data_docs, gx_process
        rows = pa.table({{"row_no": [1, 2], "price_usd": [1.0, -1.0]}})
        suite = {{"name": "s", "expectations": [{{"type": "expect_column_values_to_be_between",
                  "kwargs": {{"column": "price_usd", "min_value": 0}}, "meta": {{"name": "not negative"}}}}]}}
        kept = gx_process.validate_table(rows, suite, keep=True)
        checked = gx_process.validate_rows([{{"row_no": 1, "price_usd": -3.0}}], suite)
        index = data_docs.build_site([data_docs.ValidatedBatch("src", kept.result)], Path({str(tmp_path)!r}), "r")
        print(sorted(kept.failed_row_nos), sorted(checked.failed_row_nos), index.is_file(),
              "great_expectations" in sys.modules)
    """)
    env = {k: v for k, v in os.environ.items() if k != gx_process.ENV}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[2]", "[1]", "True", "False"]


@pytest.mark.slow  # a GX process started again, or a run in a process of its own: 5-9 s (make test-slow, CI)
def test_the_gx_process_exits_when_the_run_that_started_it_is_killed():
    program = ("import os, time\n"
               "from flows import gx_process\n"
               "print(gx_process._call(os.getpid), flush=True)\n"
               "time.sleep(120)\n")
    assert not worker_outlives_its_killed_run(program, {k: v for k, v in os.environ.items() if k != gx_process.ENV})


class OddError(Exception):
    """An error that cannot be rebuilt from its arguments alone, as some of GX's own (the pool rebuilds errors so)."""

    def __init__(self, message: str, failed: dict) -> None:
        super().__init__(message)
        self.failed = failed


def raise_odd() -> None:
    raise OddError("metric could not be resolved", {"metric": object()})


def warn_in_the_gx_process(text: str) -> int:
    import logging

    logging.getLogger("flows.validate").warning("%s", text)
    return os.getpid()


def test_an_error_that_cannot_cross_the_processes_comes_back_named_not_as_a_dead_process(own_gx_process):
    with pytest.raises(RuntimeError, match="in Great Expectations' process: OddError: metric could not be resolved"):
        gx_process._call(raise_odd)
    assert gx_process.validate_table(ROWS, SUITE, PARAMETERS).failed_row_nos == {11, 12, 13}  # the same process


def test_what_the_gx_process_logs_is_logged_in_the_runs_process(own_gx_process, caplog):
    worker = gx_process._call(warn_in_the_gx_process, "the second pass did not match the first")
    assert worker != os.getpid()
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("flows.validate", "WARNING", "the second pass did not match the first")]


@pytest.mark.slow  # a GX process started again, or a run in a process of its own: 5-9 s (make test-slow, CI)
def test_a_result_kept_by_a_gx_process_that_was_stopped_is_refused_not_taken_for_another(own_gx_process, tmp_path):
    gx_process.shutdown()  # whatever this worker validated before: a new process, whose first kept result is number 1
    old = gx_process.validate_table(ROWS, SUITE, PARAMETERS, keep=True).result
    gx_process.shutdown()
    new = gx_process.validate_table(ROWS, SUITE, PARAMETERS, keep=True).result
    assert new.handle == old.handle == 1 and new.worker != old.worker  # the new process numbers its results from 1 too
    with pytest.raises(gx_process.GxProcessError, match="aws_pricing are gone"):
        data_docs.build_site([data_docs.ValidatedBatch("aws_pricing", old)], tmp_path / "docs", "run-1")


def test_an_empty_batch_starts_no_gx_process(own_gx_process, monkeypatch):
    def started():
        raise AssertionError("an empty batch asked for the GX process")

    monkeypatch.setattr(gx_process, "_executor", started)  # what _call reaches first, starting the process if need be
    empty = ROWS.slice(0, 0)
    assert gx_process.validate_table(empty, SUITE, PARAMETERS).failed_row_nos == set()
    assert gx_process.validate_rows([], SUITE).failures == []
    with pytest.raises(AssertionError, match="asked for the GX process"):
        gx_process.validate_table(ROWS, SUITE, PARAMETERS)  # a batch with rows does ask for it
