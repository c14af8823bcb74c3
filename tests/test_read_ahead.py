"""flows/read_ahead.py: the files given with --source that read into Arrow (an offer file), read while `hweval run`'s
Prefect server starts, and taken by the flow's fetch once, when it is the same read of the same, unchanged file."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from pathlib import Path

import offer_file_builder as ofb
import pytest
from conftest import AS_OF

from flows import pipeline, read_ahead
from flows.cli import main
from flows.source_batches import fetch_source
from flows.sources import aws_offer_file
from flows.sources._common import SourceFormatError


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """Each read of an offer file (aws_offer_file.read_table, ahead or in the fetch), by path; the reads ahead left
    over are dropped at the end."""
    calls: list[Path] = []
    real = aws_offer_file.read_table

    def counted(path, *args, **kwargs):
        calls.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(aws_offer_file, "read_table", counted)
    yield calls
    read_ahead.abandon()


@pytest.fixture
def offer_file(tmp_path) -> Path:
    path = tmp_path / "index.csv"
    ofb.write_offer_file(path, ofb.accelerated_products())
    return path


def begin(catalog, given: dict[str, list[str]]) -> list[tuple[str, int]]:
    """As `hweval run` begins the reads, once its inputs passed (run_startup.read_given_files_ahead)."""
    return read_ahead.begin(catalog, pipeline.source_snapshot_files(catalog, given, AS_OF))


def test_the_fetch_takes_the_file_read_ahead_once_and_gets_what_its_own_read_gets(catalog, offer_file, reads, caplog):
    given = {"aws_offer_file": [f"{offer_file}@2026-09-10"]}
    assert begin(catalog, given) == [("aws_offer_file", 0)]
    run_catalog = pipeline.with_source_files(catalog, given, AS_OF)
    with caplog.at_level(logging.INFO, logger="flows.read_ahead"):
        batch = fetch_source(run_catalog, "aws_offer_file")
    assert reads == [offer_file]  # read once, ahead: the fetch took that table
    assert read_ahead.pending() == []
    assert f"aws_offer_file: {offer_file} read ahead while the run started" in caplog.text
    own = fetch_source(run_catalog, "aws_offer_file")  # taken once: this fetch reads the file itself
    assert reads == [offer_file, offer_file]
    assert batch.data.num_rows > 0 and batch.data.equals(own.data)
    assert (batch.data_as_of, batch.files, batch.data_digest) == (dt.date(2026, 9, 10), own.files, own.data_digest)


def test_only_the_files_of_a_kind_that_reads_into_arrow_are_read_ahead(catalog, offer_file, reads):
    spot = catalog.sources.sources["aws_spot"]
    spot_file = str(catalog.root / spot.files[0].path)  # a file given for a source read a dict a row
    assert begin(catalog, {"aws_spot": [spot_file], "aws_offer_file": [str(offer_file), str(offer_file)]}) == [
        ("aws_offer_file", 0), ("aws_offer_file", 1)]


def test_a_file_changed_after_its_read_began_is_read_again(catalog, offer_file, reads, caplog):
    given = {"aws_offer_file": [f"{offer_file}@2026-09-10"]}
    begin(catalog, given)
    # the file rewritten with one instance type's offers: another size (whether or not the read ahead had begun)
    ofb.write_offer_file(offer_file, [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"]
                                      == "p5.48xlarge"])
    run_catalog = pipeline.with_source_files(catalog, given, AS_OF)
    with caplog.at_level(logging.INFO, logger="flows.read_ahead"):
        batch = fetch_source(run_catalog, "aws_offer_file")
    assert reads[-1] == offer_file and len(reads) in (1, 2)  # the fetch's own read (the one ahead: cancelled, or
    # done and dropped)
    assert caplog.text.count(f"aws_offer_file: {offer_file} changed since it was read ahead; reading it again") == 1
    assert set(batch.data.column("instance_type").to_pylist()) == {"p5.48xlarge"}  # the file as it is now


def test_a_read_ahead_that_failed_raises_its_error_in_the_fetch_and_a_retry_reads_again(catalog, tmp_path, reads):
    broken = tmp_path / "offer.csv"
    broken.write_text('"FormatVersion","v1.0"\nthis is not an offer file\n')
    given = {"aws_offer_file": [str(broken)]}
    begin(catalog, given)
    run_catalog = pipeline.with_source_files(catalog, given, AS_OF)
    with pytest.raises(SourceFormatError) as ahead:
        fetch_source(run_catalog, "aws_offer_file")
    assert reads == [broken]  # the error is the read ahead's, raised in the fetch
    with pytest.raises(SourceFormatError) as own:  # the fetch task's retry: nothing read ahead left, read here
        fetch_source(run_catalog, "aws_offer_file")
    assert reads == [broken, broken]
    assert str(ahead.value) == str(own.value) and "offer.csv" in str(own.value)


def test_a_file_read_ahead_with_another_declaration_is_read_again(catalog, offer_file, reads, caplog):
    begin(catalog, {"aws_offer_file": [f"{offer_file}@2026-09-10"]})
    run_catalog = pipeline.with_source_files(catalog, {"aws_offer_file": [f"{offer_file}@2026-09-11"]}, AS_OF)
    with caplog.at_level(logging.INFO, logger="flows.read_ahead"):
        batch = fetch_source(run_catalog, "aws_offer_file")
    assert reads[-1] == offer_file and len(reads) in (1, 2)  # the fetch's own read (the one ahead: cancelled, or
    # done and dropped)
    assert "read ahead with another declaration; reading it again" in caplog.text
    # each row dated as the run declares the file, not as it was read ahead
    assert set(batch.data.column("data_as_of").to_pylist()) == {dt.date(2026, 9, 11)} == {batch.data_as_of}


def test_a_file_read_ahead_under_other_limits_is_read_again_under_the_runs(catalog, offer_file, reads, caplog):
    """sources.yaml's limits changed between the read ahead and the flow (the catalog reloaded): the fetch reads under
    the run's own, here one too small for the file's lines, so its read fails where the one ahead passed."""
    from flows.sources._common import SourceLimitError

    given = {"aws_offer_file": [str(offer_file)]}
    begin(catalog, given)
    run_catalog = pipeline.with_source_files(catalog, given, AS_OF)
    sources = dict(run_catalog.sources.sources)
    sources["aws_offer_file"] = sources["aws_offer_file"].model_copy(update={"max_line_bytes": 64})
    run_catalog = run_catalog.model_copy(update={"sources": run_catalog.sources.model_copy(
        update={"sources": sources})})
    with caplog.at_level(logging.INFO, logger="flows.read_ahead"), pytest.raises(SourceLimitError):
        fetch_source(run_catalog, "aws_offer_file")
    assert "read ahead with another declaration; reading it again" in caplog.text


def test_a_file_changed_while_it_was_read_ahead_is_read_again(catalog, offer_file, monkeypatch, caplog):
    """The file rewritten while the fetch waits for its read ahead (unchanged when the fetch came for it): the table
    read is not taken, as the signature is checked again once the read is done."""
    real = aws_offer_file.read_table
    fetch_waiting = threading.Event()
    calls = []

    def gated(path, *args, **kwargs):
        calls.append(threading.current_thread().name)
        table = real(path, *args, **kwargs)
        if len(calls) == 1:  # the read ahead: it has read the file; the file changes before the read ends
            assert fetch_waiting.wait(30)
            ofb.write_offer_file(offer_file, [p for p in ofb.accelerated_products()
                                              if p["attrs"]["Instance Type"] == "p5.48xlarge"])
        return table

    monkeypatch.setattr(aws_offer_file, "read_table", gated)
    given = {"aws_offer_file": [str(offer_file)]}
    begin(catalog, given)
    # set once the fetch below has found the file unchanged and waits for the read (it comes for it at once)
    timer = threading.Timer(0.5, fetch_waiting.set)
    timer.start()
    try:
        with caplog.at_level(logging.INFO, logger="flows.read_ahead"):
            batch = fetch_source(pipeline.with_source_files(catalog, given, AS_OF), "aws_offer_file")
    finally:
        fetch_waiting.set()
        timer.cancel()
    assert len(calls) == 2 and calls[0].startswith("hweval-read-ahead")  # ahead, then the fetch's own
    assert f"{offer_file} changed since it was read ahead; reading it again" in caplog.text
    assert set(batch.data.column("instance_type").to_pylist()) == {"p5.48xlarge"}


def test_reads_abandoned_are_not_taken(catalog, offer_file, reads):
    given = {"aws_offer_file": [str(offer_file)]}
    begin(catalog, given)
    read_ahead.abandon()
    assert read_ahead.pending() == []
    fetch_source(pipeline.with_source_files(catalog, given, AS_OF), "aws_offer_file")
    assert reads[-1] == offer_file and len(reads) in (1, 2)  # the read ahead may have begun before it was dropped


@pytest.mark.parametrize("end", ["fetched", "not fetched", "refused", "no server", "ctrl-c"])
def test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_it(
        monkeypatch, tmp_path, capsys, catalog, offer_file, reads, end):
    """`hweval run --source aws_offer_file=FILE`: the file is read before the flow starts and the flow's fetch takes
    that read; a read not taken is dropped when the command ends: the flow failed before its fetch, the run was
    refused before it started (the catalog's figures failed their check, taken after the read began), or its
    temporary Prefect server did not answer."""
    from test_cli import refused_run_setup

    from flows import nightly, run_startup
    from flows.catalog_models import CatalogError

    taken = []

    def flow(**kwargs):
        assert end != "refused"
        assert read_ahead.pending() == [("aws_offer_file", 0)]  # begun before the flow
        if end == "fetched":
            run_catalog = pipeline.with_source_files(catalog, kwargs["source_files"], AS_OF)
            taken.append(fetch_source(run_catalog, "aws_offer_file"))
        return nightly.RunResult("r1", AS_OF, Path(kwargs["warehouse_file"]), Path(kwargs["reports_dir"]) / "x", [],
                                 True)

    def catalog_checked(catalog_dir):
        assert read_ahead.pending() == [("aws_offer_file", 0)]  # begun once the inputs passed, before this check
        if end == "refused":
            raise CatalogError("accelerators.yaml: a figure fails its check")

    if end in ("no server", "ctrl-c"):
        calls = refused_run_setup(monkeypatch, server_answers=False)  # a stand-in server that does not answer
    if end == "ctrl-c":  # pressed while the run waits for its server
        class Interrupted:
            def attach(self):
                return self

            def wait_ready(self):
                assert read_ahead.pending() == [("aws_offer_file", 0)]
                raise KeyboardInterrupt

            def stop(self):
                pass

        monkeypatch.setattr(run_startup, "launch_temporary_server", Interrupted)
    else:
        monkeypatch.setattr(nightly, "nightly", flow)
        monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # not reached: the flow is replaced
    # the catalog's figures are checked in GX's process as the run starts: stood in for here
    monkeypatch.setattr(run_startup, "warm_catalog_check", lambda catalog_dir: None)
    monkeypatch.setattr(run_startup, "finish_catalog_check", catalog_checked)
    argv = ["run", "--as-of", AS_OF.isoformat(), "--warehouse", str(tmp_path / "w.duckdb"), "--reports",
            str(tmp_path / "r"), "--source", f"aws_offer_file={offer_file}@2026-09-10"]
    if end == "ctrl-c":
        with pytest.raises(KeyboardInterrupt):
            main(argv)
    else:
        assert main(argv) == {"refused": 2, "no server": 1}.get(end, 0)
    assert read_ahead.pending() == []
    if end == "fetched":
        assert reads == [offer_file]  # once: ahead, and taken by the flow's fetch
        assert taken[0].data.num_rows > 0
    else:  # dropped as the command ended: cancelled if its read had not begun yet
        assert reads in ([], [offer_file])
    if end == "refused":
        assert capsys.readouterr().err == "hweval: accelerators.yaml: a figure fails its check\n"
    if end == "no server":
        assert calls == ["server launched", "server waited for"]
