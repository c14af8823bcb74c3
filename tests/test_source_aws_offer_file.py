"""aws_offer_file: the public EC2 bulk offer file -> the same raw.aws_pricing rows as the Price List API gives."""

from __future__ import annotations

import logging
import os
import re
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

import offer_file_builder as ofb
import pandas
import pytest
from builders import QuietHandler, close_loopback, serve_loopback
from tls_server import UntrustedServer

from flows.sources import _download, aws_offer_file, aws_pricing
from flows.sources._common import LiveSourceError, SourceFormatError

OFFER_PATH = "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv"


@pytest.fixture(scope="module")
def big_offer(tmp_path_factory):
    """(products, path, data lines) of a >= 200,000-line offer file, generated once for the module."""
    items = ofb.products(min_rows=200_000)
    path = tmp_path_factory.mktemp("offer") / "index.csv"
    return items, path, ofb.write_offer_file(path, items)


@pytest.fixture(scope="module")
def small_offer(tmp_path_factory):
    """(products, path) of a small offer file: every accelerated product and a few hundred other lines."""
    items = ofb.products(min_rows=3_000, other=60)
    path = tmp_path_factory.mktemp("small") / "index.csv"
    ofb.write_offer_file(path, items)
    return items, path


def without_ref(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "source_ref"}


@pytest.mark.slow  # a 200,000-line file generated (~6 s) and read whole, twice (make test-slow, CI)
def test_200k_line_offer_file_gives_the_same_prices_as_the_api_pages(big_offer):
    items, path, written = big_offer
    assert written >= 200_000
    with path.open(encoding="utf-8") as f:
        assert sum(1 for _ in f) == written + 6  # 5 metadata lines and the header

    rows = aws_offer_file.read_file(path, "us-east-1/index.csv")
    api_rows = aws_pricing.rows_from_pages(ofb.api_pages(items))

    accelerated = [p for p in items if ofb.is_accelerated(p)]
    # nothing silently dropped: one row per accelerated price dimension, and none of the ~197k others
    assert len(rows) == ofb.row_count(accelerated) == len(api_rows)
    assert {r["sku"] for r in rows} == {p["sku"] for p in accelerated}
    assert {(r["instance_family"]) for r in rows} == set(ofb.ACCELERATED_FAMILIES)

    compared = ("price_usd", "unit", "term_type", "operating_system", "pre_installed_sw", "tenancy", "market_option",
                "lease_contract_length", "purchase_option", "offering_class")
    by_key = {(r["sku"], r["offer_term_code"], r["rate_code"]): r for r in rows}
    api_by_key = {(r["sku"], r["offer_term_code"], r["rate_code"]): r for r in api_rows}
    assert len(by_key) == len(rows) and by_key.keys() == api_by_key.keys()
    assert {k: tuple(r[c] for c in compared) for k, r in by_key.items()} == {
        k: tuple(r[c] for c in compared) for k, r in api_by_key.items()}
    # and every other key too (only source_ref differs: a file line vs a PriceList index), in the same order
    assert list(rows[0]) == list(api_rows[0])
    assert {k: without_ref(r) for k, r in by_key.items()} == {k: without_ref(r) for k, r in api_by_key.items()}

    # the cases that matter are really in there
    kinds = {(r["term_type"], r["unit"], r["purchase_option"], r["offering_class"]) for r in rows}
    assert ("Reserved", "Quantity", "Partial Upfront", "standard") in kinds
    assert ("Reserved", "Quantity", "All Upfront", "convertible") in kinds
    assert ("Reserved", "Quantity", "No Upfront", "standard") not in kinds
    assert {r["price_usd"] for r in rows if r["purchase_option"] == "All Upfront" and r["unit"] == "Hrs"} == {0.0}
    [block] = [r for r in rows if r["market_option"] == "CapacityBlock" and r["instance_type"] == "p5.48xlarge"]
    assert (block["price_text"], block["price_usd"], block["term_type"]) == ("0.0000000000", 0.0, "OnDemand")
    assert {"Shared", "Dedicated"} <= {r["tenancy"] for r in rows}
    assert {"Linux", "Windows"} <= {r["operating_system"] for r in rows}
    assert {"p5.48xlarge", "p4d.24xlarge", "g6.2xlarge", "trn1.32xlarge", "inf2.xlarge"} <= {
        r["instance_type"] for r in rows}


def test_na_is_a_value_not_a_missing_one(small_offer):
    items, path = small_offer
    rows = aws_offer_file.read_file(path, "index.csv")
    expected_na = sum(len(t["dims"]) for p in items if ofb.is_accelerated(p) and p["attrs"]["Pre Installed S/W"] == "NA"
                      for t in p["terms"])
    assert expected_na > 0
    assert sum(r["pre_installed_sw"] == "NA" for r in rows) == expected_na
    assert {r["pre_installed_sw"] for r in rows} == {"NA", "SQL Web", "SQL Std"}
    # only empty fields are None: an on-demand term has no lease, an Inferentia instance no GPU count
    on_demand = next(r for r in rows if r["term_type"] == "OnDemand" and r["instance_type"] == "inf2.xlarge")
    assert (on_demand["lease_contract_length"], on_demand["gpu"], on_demand["vcpu"]) == (None, None, "4")
    # why it matters: pandas' defaults read the same "NA" as missing, and a filter on it finds nothing
    assert pandas.read_csv(path, skiprows=5, usecols=["Pre Installed S/W"])["Pre Installed S/W"].isna().any()


@pytest.mark.slow  # a 200,000-line file generated (~6 s) and read whole, twice (make test-slow, CI)
def test_source_ref_names_the_line_of_the_row(big_offer):
    _, path, _ = big_offer
    label = "us-east-1/index.csv"
    rows = aws_offer_file.read_file(path, label)
    wanted = {}
    for row in rows:
        prefix, line_no = row["source_ref"].rsplit(": line ", 1)
        assert prefix == label
        wanted[int(line_no)] = row["rate_code"]
    assert len(wanted) == len(rows)
    with path.open(encoding="utf-8") as f:
        found = {n: line for n, line in enumerate(f, start=1) if n in wanted}
    assert found.keys() == wanted.keys()
    assert all(f'"{rate_code}"' in found[n] for n, rate_code in wanted.items())


def test_region_keeps_only_that_regions_rows(small_offer, caplog):
    _, path = small_offer
    assert {r["region_code"] for r in aws_offer_file.read_file(path, "index.csv", "us-east-1")} == {"us-east-1"}
    with caplog.at_level(logging.WARNING, logger=aws_offer_file.__name__):
        assert aws_offer_file.read_file(path, "index.csv", "eu-west-1") == []
    assert "no accelerated Compute Instance rows for region eu-west-1" in caplog.text


def _few_products():
    return [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "g6.2xlarge"][:3]


def _replace_line(path, line_no, edit):
    lines = path.read_bytes().split(b"\n")
    lines[line_no - 1] = edit(lines[line_no - 1])
    path.write_bytes(b"\n".join(lines))


def _missing_metadata_line(path):
    ofb.write_offer_file(path, _few_products(), metadata_lines=4)


def _not_an_offer_file(path):
    path.write_text('"SKU","RateCode","PricePerUnit"\n"A","A.B.C","1.0"\n', encoding="utf-8")


def _missing_column(path):
    ofb.write_offer_file(path, _few_products(), columns=[c for c in ofb.COLUMNS if c != "PricePerUnit"])


def _empty(path):
    path.write_bytes(b"")


def _only_metadata(path):
    ofb.write_offer_file(path, [])
    path.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:5]) + "\n", encoding="utf-8")


def _latin1_row(path):
    ofb.write_offer_file(path, _few_products())
    _replace_line(path, 9, lambda line: line.replace(b"No License required", "No Licence réquired".encode("latin-1")))


def _latin1_metadata(path):
    ofb.write_offer_file(path, _few_products())
    _replace_line(path, 2, lambda line: line.replace(b"informational", "informatif é".encode("latin-1")))


def _ragged_row(path):
    ofb.write_offer_file(path, _few_products())
    _replace_line(path, 10, lambda line: line.rsplit(b",", 1)[0])


def _duplicate_column(path):
    ofb.write_offer_file(path, _few_products(), columns=[*ofb.COLUMNS, "SKU"])


def _many_duplicate_columns(path):
    """12 columns twice (one a 100-character name): the message names the first 10 and counts the rest."""
    extra = [f"extra{n:02d}" for n in range(11)] + ["x" * 100]
    ofb.write_offer_file(path, _few_products(), columns=[*ofb.COLUMNS, *extra, *extra])


MALFORMED = {  # how the file is broken -> what the error must say after the file's name
    _missing_metadata_line: 'line 5: expected 5 metadata lines ("key","value") before the header, got 40 fields',
    _not_an_offer_file: 'not an AWS offer file: line 1 must be "FormatVersion","v1.0"',
    _missing_column: "line 6 (header): missing required column(s) 'PricePerUnit'",
    _duplicate_column: "line 6 (header): duplicate column(s) SKU",
    _many_duplicate_columns: ("line 6 (header): duplicate column(s) extra00, extra01, extra02, extra03, extra04, "
                              "extra05, extra06, extra07, extra08, extra09 and 2 more"),
    _empty: "empty file, expected an AWS offer file",
    _only_metadata: "ends after 5 lines, expected 5 metadata lines and a header line",
    _latin1_row: "line 9: not UTF-8 text",
    _latin1_metadata: "line 2: not UTF-8 text",
    _ragged_row: "line 10: 39 fields, expected 40 (the header's)",
}


@pytest.mark.parametrize(("write", "problem"), [pytest.param(w, p, id=w.__name__.strip("_"))
                                                for w, p in MALFORMED.items()])
def test_malformed_offer_files_name_the_file_and_the_problem(tmp_path, write, problem):
    path = tmp_path / "index.csv"
    write(path)
    with pytest.raises(SourceFormatError, match=re.escape(f"offers/us-east-1/index.csv: {problem}")):
        aws_offer_file.read_file(path, "offers/us-east-1/index.csv")


class OfferServer:
    """What the fake pricing endpoint answers: queued error statuses first, then the file; requests are logged."""

    def __init__(self, body: bytes):
        self.body = body
        self.errors: list[int] = []
        self.retry_after: str | None = None  # sent with each queued error when set
        self.short = 0  # how many answers, after the errors, end halfway through the body they announce
        self.requests: list[str] = []
        self.endpoint = ""
        # the ETag and Last-Modified sent with the file; a request whose If-None-Match is that ETag is answered 304
        self.validators: dict[str, str] = {}
        self.asked_with: list[dict[str, str]] = []  # each request's If-None-Match and If-Modified-Since, as sent
        self.not_modified_always = False  # answer 304 whatever the request asks (a misbehaving server)


@pytest.fixture
def offer_server(small_offer):
    """A real HTTP server on 127.0.0.1 (port 0) serving the small offer file at the us-east-1 path."""
    state = OfferServer(small_offer[1].read_bytes())

    class Handler(QuietHandler):
        def do_GET(self):
            state.requests.append(self.path)
            asked = {name: self.headers[name] for name in ("If-None-Match", "If-Modified-Since") if name in self.headers}
            state.asked_with.append(asked)
            if self.path != OFFER_PATH:
                self.send_error(404)
            elif state.not_modified_always or (
                    "ETag" in state.validators and asked.get("If-None-Match") == state.validators["ETag"]):
                self.send_response(304)
                self.end_headers()
            elif state.errors:
                self.send_response(state.errors.pop(0))
                if state.retry_after is not None:
                    self.send_header("Retry-After", state.retry_after)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                short, state.short = state.short > 0, max(0, state.short - 1)
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(state.body)))
                for name, value in state.validators.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(state.body[:len(state.body) // 2] if short else state.body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a download it cannot write)
                    pass
                self.close_connection = True

    server, state.endpoint = serve_loopback(Handler)
    yield state
    close_loopback(server)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The temporary download goes here, so a test can see it was deleted."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_fetch_live_streams_the_file_and_reads_it(offer_server, small_offer, private_tmp):
    sleeps = []
    rows = aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint},
                                     sleep=sleeps.append)
    url = offer_server.endpoint + OFFER_PATH
    assert [without_ref(r) for r in rows] == [without_ref(r) for r in aws_offer_file.read_file(small_offer[1], "x")]
    assert all(r["source_ref"].startswith(f"{url}: line ") for r in rows)
    assert offer_server.requests == [OFFER_PATH] and sleeps == []
    assert list(private_tmp.iterdir()) == []  # the temporary file is gone


def test_a_live_offer_file_is_fetched_into_arrow_whole_or_as_a_fan_out_part(offer_server, private_tmp, catalog,
                                                                              monkeypatch):
    """fetch_source in live mode and a fan-out part (fetch_live_part) read the downloaded offer file into Arrow
    (fetch_live_table), not a dict a row: the batch of_rows makes of fetch_live's dicts, the same table and digest."""
    import datetime as dt

    from flows import pipeline
    from flows.source_batches import SourceBatch, fetch_live_part, fetch_source, live_parts

    options = {"regions": ["us-east-1"], "endpoint": offer_server.endpoint}
    rows = aws_offer_file.fetch_live(options)
    today = dt.datetime.now(dt.UTC).date()
    expected = SourceBatch.of_rows("aws_offer_file", "aws_offer_file", "aws_pricing", ["live aws_offer_file API"],
                                   today, [row | {"data_as_of": today, "row_no": n, "source_id": "aws_offer_file"}
                                           for n, row in enumerate(rows)])

    def no_dicts(*args, **kwargs):
        raise AssertionError("a run fetched the offer file into a dict a row")

    monkeypatch.setattr(aws_offer_file, "fetch_live", no_dicts)
    sources = dict(catalog.sources.sources)
    sources["aws_offer_file"] = sources["aws_offer_file"].model_copy(update={"live": options, "enabled": True})
    live = pipeline.with_mode(catalog.model_copy(update={"sources": catalog.sources.model_copy(
        update={"sources": sources})}), "live")
    [part] = live_parts(live, "aws_offer_file", [options])
    for batch in (fetch_source(live, "aws_offer_file"), fetch_live_part(part)):
        assert batch.rows_in == len(rows) > 0 and batch.data_as_of == today
        assert batch.data.equals(expected.data) and batch.data_digest == expected.data_digest


@pytest.fixture
def download_cache(tmp_path, monkeypatch):
    """This test's own cache folder (flows/cache.py), empty at its start."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HWEVAL_CACHE", str(folder))
    return folder


OFFER_VALIDATORS = {"ETag": '"5d41402abc4b2a76b9719d911017c592"', "Last-Modified": "Mon, 30 Nov 2026 08:00:00 GMT"}


def test_an_offer_file_unchanged_on_the_server_is_not_downloaded_again(offer_server, private_tmp, download_cache,
                                                                       caplog):
    """Issue 15 item 3's "the API's own validators": the first fetch keeps the rows it read with the ETag and
    Last-Modified the server sent; the next asks with them (If-None-Match, If-Modified-Since), and on the server's
    304 reads the kept rows: an equal Arrow table with the same IPC digest (flows/reuse.py arrow_digest), with
    nothing downloaded or scanned."""
    from flows.reuse import arrow_digest

    caplog.set_level(logging.INFO, logger="flows.sources.aws_offer_file")
    caplog.set_level(logging.INFO, logger="flows.sources._download")
    offer_server.validators = dict(OFFER_VALIDATORS)
    options = {"regions": ["us-east-1"], "endpoint": offer_server.endpoint}
    first = aws_offer_file.fetch_live_table(options)
    second = aws_offer_file.fetch_live_table(options)
    assert offer_server.asked_with == [{}, {"If-None-Match": OFFER_VALIDATORS["ETag"],
                                            "If-Modified-Since": OFFER_VALIDATORS["Last-Modified"]}]
    assert first.num_rows > 0 and second.equals(first) and second.schema.metadata is None
    assert arrow_digest(second) == arrow_digest(first)
    assert caplog.text.count(": downloaded ") == 1 and caplog.text.count("accelerated-instance price rows (published") == 1
    assert (f"{offer_server.endpoint}{OFFER_PATH}: unchanged on the server since it was last downloaded: its "
            f"{first.num_rows} kept rows are read from the download cache") in caplog.text
    assert list(private_tmp.iterdir()) == []  # the temporary file, empty, is gone too
    assert [p.suffix for p in (download_cache / "downloads").iterdir()] == [".arrow"]  # named by a digest: no URL
    # rows kept under other limits are not read under these: another key, an unconditional GET
    aws_offer_file.fetch_live_table(options, limits=aws_offer_file.DEFAULT_LIMITS.__class__(
        max_file_bytes=aws_offer_file.DEFAULT_LIMITS.max_file_bytes, max_line_bytes=1 << 16))
    assert offer_server.asked_with[2] == {}


def test_a_live_batch_read_from_the_download_cache_has_the_digest_that_reuses_its_load(offer_server, private_tmp,
                                                                                      download_cache, catalog):
    """What decides reuse is the batch's digest (flows/reuse.py): a run's live batch made of the kept rows (the
    server's 304) has the digest of the batch the download gave, the digest a same-date re-run's landing compares
    with its source's last load."""
    from flows import pipeline
    from flows.source_batches import fetch_source

    offer_server.validators = dict(OFFER_VALIDATORS)
    options = {"regions": ["us-east-1"], "endpoint": offer_server.endpoint}
    sources = dict(catalog.sources.sources)
    sources["aws_offer_file"] = sources["aws_offer_file"].model_copy(update={"live": options, "enabled": True})
    live = pipeline.with_mode(catalog.model_copy(update={"sources": catalog.sources.model_copy(
        update={"sources": sources})}), "live")
    downloaded, kept = fetch_source(live, "aws_offer_file"), fetch_source(live, "aws_offer_file")
    assert offer_server.asked_with[1] == {"If-None-Match": OFFER_VALIDATORS["ETag"],
                                          "If-Modified-Since": OFFER_VALIDATORS["Last-Modified"]}
    assert kept.rows_in == downloaded.rows_in > 0 and kept.data_digest == downloaded.data_digest


def test_an_offer_file_changed_on_the_server_is_downloaded_and_read_again(offer_server, small_offer, private_tmp,
                                                                          download_cache):
    """A new file has a new ETag: the server answers the old one's If-None-Match with the file (200), whose rows
    (here its Publication Date, which every row carries) replace the kept ones; the fetch after asks with the new."""
    offer_server.validators = dict(OFFER_VALIDATORS)
    options = {"regions": ["us-east-1"], "endpoint": offer_server.endpoint}
    first = aws_offer_file.fetch_live_table(options)
    assert set(first.column("publication_date").to_pylist()) == {ofb.PUBLICATION_DATE}
    offer_server.body = offer_server.body.replace(f'"{ofb.PUBLICATION_DATE}"'.encode(), b'"2026-12-04T00:00:00Z"', 1)
    offer_server.validators = {"ETag": '"v2"'}
    second = aws_offer_file.fetch_live_table(options)
    third = aws_offer_file.fetch_live_table(options)
    assert offer_server.asked_with == [{}, {"If-None-Match": OFFER_VALIDATORS["ETag"],
                                            "If-Modified-Since": OFFER_VALIDATORS["Last-Modified"]},
                                       {"If-None-Match": '"v2"'}]
    assert set(second.column("publication_date").to_pylist()) == {"2026-12-04T00:00:00Z"}
    assert second.num_rows == first.num_rows and third.equals(second)


def test_a_download_cache_it_cannot_use_costs_a_download_and_a_304_never_asked_for_is_an_error(
        offer_server, private_tmp, download_cache, monkeypatch, caplog):
    """A kept entry that is not exactly what was kept is no condition: the file is downloaded again, whole, and kept
    anew. Cut short (a full disk), or with a price changed under the digest kept with the rows (a flipped byte that
    still reads: zstd has no checksum). A server's ETag longer than MAX_VALIDATOR_CHARS, or not ASCII, is not kept
    (it would be sent back). With the cache off (HWEVAL_CACHE empty) no GET is conditional, so a 304 is the server's
    mistake, said as such."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offer_server.validators = dict(OFFER_VALIDATORS)
    options = {"regions": ["us-east-1"], "endpoint": offer_server.endpoint}
    conditional = {"If-None-Match": OFFER_VALIDATORS["ETag"], "If-Modified-Since": OFFER_VALIDATORS["Last-Modified"]}
    first = aws_offer_file.fetch_live_table(options)
    [entry] = (download_cache / "downloads").iterdir()
    whole = entry.read_bytes()
    entry.write_bytes(whole[:100])
    assert aws_offer_file.fetch_live_table(options).equals(first)
    assert offer_server.asked_with[1] == {} and "unusable" in caplog.text
    assert aws_offer_file.fetch_live_table(options).equals(first)  # the entry written again: used
    assert offer_server.asked_with[2] == conditional

    kept = pa.ipc.open_file(pa.BufferReader(whole)).read_all()
    price = kept.schema.get_field_index("price_usd")
    doubled = kept.set_column(price, "price_usd", pc.multiply(kept.column(price), 2.0))  # its metadata kept as was
    with pa.OSFile(str(entry), "wb") as sink, pa.ipc.new_file(sink, doubled.schema) as writer:
        writer.write_table(doubled)
    assert aws_offer_file.fetch_live_table(options).equals(first)
    assert offer_server.asked_with[3] == {} and "their digest differs" in caplog.text

    for etag in ('"' + "x" * _download.MAX_VALIDATOR_CHARS + '"', '"caf\u00e9"'):
        entry.unlink(missing_ok=True)
        offer_server.validators = {"ETag": etag}
        aws_offer_file.fetch_live_table(options)
        aws_offer_file.fetch_live_table(options)
        assert offer_server.asked_with[-2:] == [{}, {}] and list((download_cache / "downloads").iterdir()) == []

    monkeypatch.setenv("HWEVAL_CACHE", "")
    offer_server.not_modified_always = True
    with pytest.raises(LiveSourceError, match=re.escape(
            f"{offer_server.endpoint}{OFFER_PATH}: HTTP 304 Not Modified, to a request that named no earlier download")):
        aws_offer_file.fetch_live_table(options, sleep=lambda s: pytest.fail("nothing to retry"))
    assert offer_server.asked_with[-1] == {}


def test_the_download_key_names_the_url_region_limits_and_the_code_that_read_the_rows(tmp_path, monkeypatch):
    """Rows kept for one endpoint, region or limits, or read by other code (flows/redaction.py's included: every
    row's source_ref is the URL as it redacts it), are another key's, never used for these."""
    limits = aws_offer_file.DEFAULT_LIMITS
    url = aws_offer_file.offer_file_url("us-east-1")
    keys = {aws_offer_file._download_key(url, "us-east-1", limits),
            aws_offer_file._download_key(aws_offer_file.offer_file_url("us-east-1", "https://mirror.example"),
                                         "us-east-1", limits),
            aws_offer_file._download_key(url, "us-west-2", limits),
            aws_offer_file._download_key(url, "us-east-1", replace(limits, max_file_bytes=1 << 30)),
            aws_offer_file._download_key(url, "us-east-1", replace(limits, max_line_bytes=1 << 16))}
    assert len(keys) == 5
    module = Path(aws_offer_file.__file__)
    copy = tmp_path / "flows" / "sources"
    copy.mkdir(parents=True)
    for source in (module, module.with_name("_aws.py"), module.with_name("_common.py"),
                   module.parent.parent / "redaction.py"):
        (copy.parent if source.name == "redaction.py" else copy).joinpath(source.name).write_bytes(source.read_bytes())
    monkeypatch.setattr(aws_offer_file, "__file__", str(copy / module.name))
    aws_offer_file._reading_code.cache_clear()
    try:
        read_by = {aws_offer_file._reading_code()}
        for edited in (copy / "_common.py", copy.parent / "redaction.py"):
            edited.write_text(edited.read_text() + "\n# edited\n")
            aws_offer_file._reading_code.cache_clear()
            read_by.add(aws_offer_file._reading_code())
    finally:
        aws_offer_file._reading_code.cache_clear()
    assert len(read_by) == 3


def test_a_download_cache_it_cannot_look_into_or_half_written_entries_cost_nothing_more(download_cache, monkeypatch):
    """A cache folder another user keeps to themselves (is_file raises EACCES) is no entry; a half-written entry that
    a killed process left an hour ago is removed by the next write, one being written now is not."""
    import pyarrow as pa

    from flows import cache

    table = pa.table({"sku": ["A"]})
    cache.keep_download("key", {"ETag": '"1"'}, table)
    folder = download_cache / "downloads"
    old, young = folder / ".old.arrow.1.2.tmp", folder / ".young.arrow.3.4.tmp"
    old.touch()
    young.touch()
    os.utime(old, (1_000_000, 1_000_000))
    cache.keep_download("other key", {"ETag": '"2"'}, table)
    assert not old.exists() and young.exists()

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_file", denied)
    assert cache.kept_download("key") is None
    assert cache.catalog_check_passed("any digest") is False


def test_the_download_cache_keeps_the_downloads_used_last(download_cache, monkeypatch):
    """downloads/ is bounded (DOWNLOADS_KEPT files): writing one more removes the least recently used (here, the
    one written first)."""
    import pyarrow as pa

    from flows import cache

    monkeypatch.setattr(cache, "DOWNLOADS_KEPT", 2)
    table = pa.table({"sku": ["A", "B"]})
    for n in range(3):
        cache.keep_download(f"key {n}", {"ETag": f'"{n}"'}, table)
        os.utime(cache._download_path(f"key {n}"), (1_000_000 + n, 1_000_000 + n))  # written in this order
    assert len(list((download_cache / "downloads").iterdir())) == 2
    assert cache.kept_download("key 0") is None
    assert cache.kept_download("key 2") == ({"ETag": '"2"'}, table)


def test_fetch_live_retries_503_with_backoff(offer_server, private_tmp):
    offer_server.errors = [503, 503]
    sleeps = []
    rows = aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint},
                                     sleep=sleeps.append)
    assert rows and sleeps == [1.0, 2.0] and len(offer_server.requests) == 3
    assert list(private_tmp.iterdir()) == []


def test_fetch_live_gives_up_after_three_retries(offer_server, private_tmp):
    offer_server.errors = [429, 503, 500, 502]
    sleeps = []
    with pytest.raises(LiveSourceError, match=re.escape(f"{offer_server.endpoint}{OFFER_PATH}: HTTP 502")):
        aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint}, sleep=sleeps.append)
    assert sleeps == [1.0, 2.0, 4.0] and len(offer_server.requests) == 4
    assert list(private_tmp.iterdir()) == []


def test_fetch_live_404_names_the_url_and_status(offer_server, private_tmp):
    sleeps = []
    url = f"{offer_server.endpoint}/offers/v1.0/aws/AmazonEC2/current/xx-nowhere-1/index.csv"
    with pytest.raises(LiveSourceError, match=re.escape(f"{url}: HTTP 404")):
        aws_offer_file.fetch_live({"regions": ["xx-nowhere-1"], "endpoint": offer_server.endpoint},
                                  sleep=sleeps.append)
    assert sleeps == []  # a 404 is not retried
    assert list(private_tmp.iterdir()) == []


def test_a_download_cut_short_of_its_length_is_retried_as_a_network_error_is(offer_server, private_tmp, caplog):
    offer_server.short = 1
    sleeps = []
    rows = aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint},
                                     sleep=sleeps.append)
    assert rows and sleeps == [1.0] and len(offer_server.requests) == 2
    half, whole = len(offer_server.body) // 2, len(offer_server.body)
    assert f"download truncated: {half:,} of {whole:,} bytes, retrying in 1 s (1/3)" in caplog.text
    assert list(private_tmp.iterdir()) == []


def test_a_download_cut_short_every_time_gives_up_saying_so(offer_server, private_tmp):
    offer_server.short = 4
    sleeps = []
    with pytest.raises(LiveSourceError, match=r"download truncated: [\d,]+ of [\d,]+ bytes after 4 tries"):
        aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint}, sleep=sleeps.append)
    assert sleeps == [1.0, 2.0, 4.0] and len(offer_server.requests) == 4


def test_retry_after_is_waited_for_and_a_status_no_retry_mends_is_not_retried(offer_server, private_tmp):
    offer_server.errors, offer_server.retry_after = [503], "7"
    sleeps = []
    assert aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint},
                                     sleep=sleeps.append)
    assert sleeps == [7.0]  # the server's 7 s, not the 1 s backoff
    offer_server.errors, offer_server.retry_after, sleeps = [501], None, []
    with pytest.raises(LiveSourceError, match=r"index.csv: HTTP 501 Not Implemented$"):
        aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": offer_server.endpoint}, sleep=sleeps.append)
    assert sleeps == []  # 501: the server does not do this, and will not on a retry


def test_a_download_that_cannot_be_written_fails_at_once_naming_the_temporary_folder(offer_server):
    """A full TMPDIR (here /dev/full, which refuses every write) is met again by every retry, each downloading
    several GB for us-east-1: one try, and the message says where the file goes."""
    sleeps = []
    with pytest.raises(LiveSourceError, match=r"cannot write the download to /dev/full \(No space left on device\); "
                                              r"it goes to the temporary folder \(TMPDIR\)"):
        _download.download(offer_server.endpoint + OFFER_PATH, Path("/dev/full"), sleep=sleeps.append)
    assert sleeps == [] and len(offer_server.requests) == 1


def test_a_certificate_that_does_not_verify_is_not_retried(tmp_path):
    server = UntrustedServer(tmp_path)
    try:
        sleeps = []
        with pytest.raises(LiveSourceError, match=r"index.csv: the server's certificate does not verify "
                                                  r"\(self.signed certificate\)"):
            _download.download(server.base + OFFER_PATH, tmp_path / "f.csv", sleep=sleeps.append)
        assert sleeps == [] and server.connections == 1
    finally:
        server.close()


def test_fetch_live_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens there
    sleeps = []
    with pytest.raises(LiveSourceError, match=re.escape(f"http://127.0.0.1:{port}{OFFER_PATH}: cannot be reached")
                       + r" \(.*\) after 4 tries"):
        aws_offer_file.fetch_live({"regions": ["us-east-1"], "endpoint": f"http://127.0.0.1:{port}"},
                                  sleep=sleeps.append)
    assert sleeps == [1.0, 2.0, 4.0]  # a network error is retried like a 5xx


@pytest.mark.parametrize(("options", "problem"), [
    ({"regions": ["us-east-1"], "regoin": "x"}, "unknown key(s) 'regoin'; allowed: endpoint, regions, timeout_s"),
    ({"regions": "us-east-1"}, "'regions': expected a non-empty list of names, got 'us-east-1' (region codes, e.g. "
                               "us-east-1)"),
    ({}, "'regions': expected a non-empty list of names, got None (region codes, e.g. us-east-1)"),
], ids=["unknown-key", "regions-not-a-list", "no-regions"])
def test_fetch_live_rejects_bad_options(options, problem):
    with pytest.raises(SourceFormatError, match=re.escape(problem)):
        aws_offer_file.fetch_live(options, sleep=lambda s: pytest.fail("nothing to retry"))


@pytest.mark.live
def test_live_offer_file_of_a_small_region():
    """Downloads one real offer file from the public endpoint (no credentials) and reads it.

    us-east-1's file is ~4 GB, so this uses a small region: ap-south-2 (Hyderabad) by default, or the one in
    HWEVAL_OFFER_REGION. Skipped when the endpoint cannot be reached. Run with `pytest -m live -k offer_file`.
    """
    region = os.environ.get("HWEVAL_OFFER_REGION", "ap-south-2")
    try:
        rows = aws_offer_file.fetch_live({"regions": [region], "timeout_s": 120})
    except LiveSourceError as exc:
        if "cannot be reached" in str(exc):
            pytest.skip(f"no network: {exc}")
        raise
    assert rows, f"{region}'s offer file has no accelerated Compute Instance rows"
    assert {r["region_code"] for r in rows} == {region}
    # again: read from the download cache if the server answers the validators it sent with a 304, else downloaded
    assert aws_offer_file.fetch_live({"regions": [region], "timeout_s": 120}) == rows
    assert {r["term_type"] for r in rows} <= {"OnDemand", "Reserved"}
    assert any(r["term_type"] == "OnDemand" and r["operating_system"] == "Linux" and r["price_usd"] for r in rows)


def test_an_offer_file_given_to_a_run_prices_on_demand_and_reserved_offers(tmp_path, fresh_db, catalog):
    """`hweval run --source aws_offer_file=index.csv`: the file lands in raw.aws_pricing like the API's pages, its
    reserved terms are amortised into offers and its instance types the catalog lacks are listed as unknown."""
    import datetime as dt

    from conftest import AS_OF

    from flows import pipeline, transform
    from flows.land import land_all
    from flows.source_batches import fetch_source

    path = tmp_path / "index.csv"
    ofb.write_offer_file(path, ofb.accelerated_products())
    run_catalog = pipeline.with_source_files(catalog, {"aws_offer_file": [f"{path}@2026-09-10"]}, AS_OF)
    assert "aws_offer_file" in pipeline.sources_to_run(run_catalog)  # disabled in sources.yaml, enabled by --source
    batch = fetch_source(run_catalog, "aws_offer_file")
    assert batch.table == "aws_pricing" and batch.data_as_of == dt.date(2026, 9, 10)
    [load] = land_all(fresh_db, run_catalog, [batch], "run-1", AS_OF)
    assert load.rows_in == load.rows_landed + load.rows_quarantined
    transform.build_models(fresh_db, "run-1", AS_OF)
    p5 = dict(fresh_db.execute(
        "select coalesce(term_detail, pricing_term), round(usd_per_hour, 4) from intermediate.int_offers_priced "
        "where instance_type = 'p5.48xlarge'").fetchall())
    assert p5["on_demand"] == 55.04
    assert len(p5) == 1 + 12  # on-demand and the 12 reserved variants (1yr/3yr x 3 payment options x 2 classes)
    reserved = {detail: (hourly, upfront) for detail, hourly, upfront in fresh_db.execute(
        "select term_detail, recurring_usd_per_hour, upfront_usd from intermediate.int_offers_priced "
        "where instance_type = 'p5.48xlarge' and pricing_term = 'reserved'").fetchall()}
    # offer_file_builder prices a 3yr standard term at 42% of on-demand: 55.04 x 0.42 = 23.1168 USD/h, half of it
    # hourly (11.5584 USD/h) and half as a fee: round(11.5584 x 26,280 h) = round(303,754.752) = 303,755 USD;
    # amortised: 11.5584 + 303,755 / 26,280 = 11.5584 + 11.5584 = 23.1168 USD/h
    assert reserved["3yr Partial Upfront standard"] == (pytest.approx(11.5584), 303_755.0)
    assert p5["3yr Partial Upfront standard"] == pytest.approx(23.1168)
    # 1yr All Upfront standard: no hourly part, a fee of round(55.04 x 0.62 x 0.98 x 8,760 h) = round(292,954.58)
    # = 292,955 USD; 292,955 / 8,760 = 33.4424 USD/h
    assert reserved["1yr All Upfront standard"] == (0.0, 292_955.0)
    assert p5["1yr All Upfront standard"] == pytest.approx(33.4424)
    # 1yr No Upfront standard: 55.04 x 0.62 x 1.05 = 35.831 USD/h, no fee
    assert reserved["1yr No Upfront standard"] == (pytest.approx(35.83104), 0.0)
    assert p5["1yr No Upfront standard"] == pytest.approx(35.831)
    unknown = {r[0] for r in fresh_db.execute("select instance_type from intermediate.int_offers_unknown").fetchall()}
    assert unknown == {"g5.xlarge"}  # in the file, not in catalogs/instances.yaml


def test_a_price_in_another_currency_is_quarantined_not_read_as_usd(tmp_path, fresh_db, catalog):
    """The offer files of AWS's China regions are priced in CNY: such a line keeps its figure and currency and is
    quarantined (currency_usd), never landed as a USD price."""
    from conftest import AS_OF

    from flows import pipeline, transform
    from flows.land import land_all
    from flows.source_batches import fetch_source

    path = tmp_path / "index.csv"
    p5 = [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "p5.48xlarge"]
    ofb.write_offer_file(path, p5)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    on_demand = next(n for n, line in enumerate(lines) if '"OnDemand"' in line)
    assert lines[on_demand].count('"USD"') == 1
    lines[on_demand] = lines[on_demand].replace('"USD"', '"CNY"')
    path.write_text("".join(lines), encoding="utf-8")
    run_catalog = pipeline.with_source_files(catalog, {"aws_offer_file": [f"{path}@2026-09-10"]}, AS_OF)
    batch = fetch_source(run_catalog, "aws_offer_file")
    [load] = land_all(fresh_db, run_catalog, [batch], "run-1", AS_OF)
    # the CNY line, and the builder's own zero-priced on-demand line (on_demand_hourly_price_positive)
    assert load.rows_quarantined == 2 and load.rows_landed == load.rows_in - 2
    [(value, ref)] = fresh_db.execute(
        "select unexpected_value, source_ref from ops.quarantine where expectation = 'currency_usd'").fetchall()
    assert (value, ref) == ("CNY", f"{path}: line {on_demand + 1}")
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert fresh_db.execute("select count(*) from intermediate.int_offers_priced where instance_type = 'p5.48xlarge' "
                            "and pricing_term = 'on_demand'").fetchone() == (0,)


def p5_offer_file(path: Path, prices: list[str]) -> Path:
    """An offer file of p5.48xlarge's lines, the first len(`prices`) data lines' PricePerUnit replaced by `prices`, and
    the first line's Tenancy emptied."""
    import csv
    import io

    p5 = [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "p5.48xlarge"]
    ofb.write_offer_file(path, p5)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = next(csv.reader([lines[5]]))
    for n, price in enumerate(prices, start=6):
        [fields] = list(csv.reader([lines[n]]))
        fields[header.index("PricePerUnit")] = price
        if n == 6:
            fields[header.index("Tenancy")] = ""
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(fields)
        lines[n] = out.getvalue()
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_run_reads_offer_files_into_arrow_and_types_them_as_the_rows_dicts_would_be(tmp_path, catalog,
                                                                                       monkeypatch):
    """fetch_source reads an offer file's rows into one Arrow table (read_table, SourceBatch.of_table), not a dict a
    row: its batch equals, column for column, type for type and by digest (the incremental re-run's key), the batch
    SourceBatch.of_rows makes of read_file's dicts; two files' rows are numbered on across them, an empty field is
    None, and the prices are read as to_float reads them."""
    import datetime as dt

    from conftest import AS_OF

    from flows import pipeline
    from flows.source_batches import SourceBatch, fetch_source
    from flows.sources import display_path

    paths = [p5_offer_file(tmp_path / "a" / "index.csv", [" 2.5 ", "1_000", "inf"]),
             p5_offer_file(tmp_path / "b" / "index.csv", ["", "\uff11\uff10", "1e999", "0.0000000000"])]
    run_catalog = pipeline.with_source_files(catalog, {"aws_offer_file": [f"{p}@2026-09-10" for p in paths]}, AS_OF)
    rows = [row | {"data_as_of": dt.date(2026, 9, 10)}
            for path in paths for row in aws_offer_file.read_file(path, display_path(path))]

    def no_dicts(*args, **kwargs):
        raise AssertionError("a run read the offer file into a dict a row")

    monkeypatch.setattr(aws_offer_file, "read_file", no_dicts)
    batch = fetch_source(run_catalog, "aws_offer_file")
    expected = SourceBatch.of_rows("aws_offer_file", "aws_offer_file", "aws_pricing", batch.files, batch.data_as_of,
                                   [row | {"row_no": n, "source_id": "aws_offer_file"} for n, row in enumerate(rows)])
    assert batch.rejected_by is None and batch.data.schema == expected.data.schema
    assert batch.data.equals(expected.data) and batch.data_digest == expected.data_digest
    got = batch.data.to_pylist()
    per_file = len(got) // 2  # the two files hold the same p5 lines
    assert [r["row_no"] for r in got] == list(range(2 * per_file))
    assert [r["source_ref"] for r in (got[0], got[per_file])] == [f"{paths[0]}: line 7", f"{paths[1]}: line 7"]
    assert (got[0]["tenancy"], got[1]["tenancy"]) == (None, "Shared")
    # to_float: " 2.5 " is 2.5 (spaces stripped); 1_000, inf, a full-width 10 and 1e999 (past a float) are no
    # number; an empty price is None as text and as a number; "0.0000000000" is 0.0
    read = [(r["price_text"], r["price_usd"]) for r in got[:3] + got[per_file:per_file + 4]]
    assert read == [(" 2.5 ", 2.5), ("1_000", None), ("inf", None), (None, None), ("\uff11\uff10", None),
                    ("1e999", None), ("0.0000000000", 0.0)]


def test_an_arrow_batch_a_column_cannot_take_is_rejected_whole_as_a_batch_of_dicts_is(tmp_path):
    """SourceBatch.of_table rejects a batch whose values do not take their columns' types as of_rows does: every row
    kept as JSON for ops.quarantine, the column named. Text where a number belongs is refused even where Arrow's own
    cast would read it ("55.04"), as of_rows refuses it."""
    import datetime as dt

    import pyarrow as pa

    from flows.source_batches import SourceBatch

    path = p5_offer_file(tmp_path / "index.csv", [])
    table = aws_offer_file.read_table(path, "index.csv")
    table = table.append_column("row_no", pa.array(range(table.num_rows), pa.int32()))
    for text in ("55.04 USD", "55.04"):  # text where a number belongs
        bad = table.set_column(table.schema.get_field_index("price_usd"), "price_usd",
                               pa.array([text] * table.num_rows))
        as_table = SourceBatch.of_table("s", "aws_offer_file", "aws_pricing", ["index.csv"], dt.date(2026, 9, 10), bad)
        as_rows = SourceBatch.of_rows("s", "aws_offer_file", "aws_pricing", ["index.csv"], dt.date(2026, 9, 10),
                                      bad.to_pylist())
        assert as_table.rejected_by == as_rows.rejected_by == "landing_rejected"
        assert as_table.error.startswith("ArrowInvalid while landing: raw.aws_pricing.price_usd: a value is not a "
                                         "DOUBLE")
        assert as_table.data.equals(as_rows.data) and as_table.rows_in == table.num_rows
    # a type the declared one takes is cast: int64 row numbers become raw.aws_pricing's INTEGER (int32)
    wide = table.set_column(table.schema.get_field_index("row_no"), "row_no", pa.array(range(table.num_rows)))
    typed = SourceBatch.of_table("s", "aws_offer_file", "aws_pricing", ["index.csv"], dt.date(2026, 9, 10), wide)
    assert typed.rejected_by is None and typed.data.schema.field("row_no").type == pa.int32()


def test_a_bare_carriage_return_in_the_preamble_is_a_format_error_naming_the_file(tmp_path):
    # found by tests/test_fuzz_sources.py: csv raised its own error, not one naming the file
    path = tmp_path / "index.csv"
    path.write_bytes(b"\r\xc2\x80")
    with pytest.raises(SourceFormatError, match=r"^index\.csv: line 1: not a CSV line"):
        aws_offer_file.read_file(path, "index.csv")
