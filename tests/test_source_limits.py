"""Declared limits and hostile inputs (issue 12): every source is bounded in pages, bytes and lines; past a bound, and
for every malformed number or nesting, it fails with a SourceFormatError naming the file (and line), the limit, its
value and how to raise it, and is never retried; numbers too large for a float quarantine their row only."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import boto3
import offer_file_builder as ofb
import pytest
from botocore.stub import Stubber
from builders import (
    QuietHandler,
    aws_page,
    aws_product,
    azure_item,
    azure_page,
    close_loopback,
    gcp_sku,
    land,
    mlperf_inference_result,
    raw_server,
    replace_once,
    serve_loopback,
)
from conftest import AS_OF
from pydantic import ValidationError

from flows import fetching
from flows.catalog_models import Source
from flows.sources import (
    SOURCE_KINDS,
    _aws,
    _download,
    _http,
    aws_offer_file,
    aws_pricing,
    aws_spot,
    azure_retail,
    benchmark_runs,
    gcp_billing,
    limits_for,
)
from flows.sources._common import (
    GIB,
    KIB,
    MAX_FETCH_S,
    MAX_FILE_BYTES,
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    MAX_NUMBER_DIGITS,
    MAX_PAGES,
    SourceFormatError,
    SourceLimitError,
    SourceLimits,
    load_csv,
    load_csv_numbered,
    parse_json,
    to_float,
)

# the kinds whose read_file and fetch_live take `limits` (price_sheet and mlperf_training read through the same
# helpers, with the default limits)
LIMITED_KINDS = ("aws_pricing", "aws_spot", "aws_offer_file", "azure_retail", "gcp_billing", "mlperf_inference",
                 "benchmark_runs")
JSON_KINDS = ("aws_pricing", "aws_spot", "azure_retail", "gcp_billing", "mlperf_inference", "benchmark_runs")
DEEP = "[" * 100_000 + "]" * 100_000  # JSON nested 100,000 levels
HINT = "if that is right, raise it with `{name}: N` under sources.{source_id} in catalogs/sources.yaml"


def hint(name: str, source_id: str = "s") -> str:
    return HINT.format(name=name, source_id=source_id)


class Failed:
    """A Prefect state whose result raises `exc`, for fetching._transient (the fetch task's retry condition)."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def result(self):
        raise self.exc


def never_retried(exc: BaseException) -> bool:
    return isinstance(exc, SourceFormatError) and fetching._transient(None, None, Failed(exc)) is False


# ---------------------------------------------------------------- declared, documented, reaching the readers
def test_each_limit_is_a_source_setting_whose_description_states_the_default():
    fields = Source.model_fields
    for name, default in (("max_pages", MAX_PAGES), ("max_file_bytes", MAX_FILE_BYTES),
                          ("max_line_bytes", MAX_LINE_BYTES), ("max_fetch_s", int(MAX_FETCH_S))):
        assert fields[name].default is None  # None: the kind's default below
        assert f"default: {default:,}" in fields[name].description, name
    offer_file_bytes = aws_offer_file.DEFAULT_LIMITS.max_file_bytes
    assert f"{offer_file_bytes:,} (8 GiB) for aws_offer_file" in fields["max_file_bytes"].description
    header = (Path(__file__).parents[1] / "catalogs" / "sources.yaml").read_text().split("\nmode:")[0]
    for name, default in (("max_pages", f"default {MAX_PAGES:,}"), ("max_file_bytes", f"default {MAX_FILE_BYTES:,}"),
                          ("max_line_bytes", f"default {MAX_LINE_BYTES:,}"), ("max_fetch_s", "default 3,600")):
        assert f"`{name}`" in header and default in header, name  # sources.yaml says it where the sources are


def test_sources_yaml_values_override_the_kind_defaults():
    assert limits_for(Source(kind="azure_retail", description="d"), "az") == SourceLimits(source_id="az")
    declared = Source(kind="aws_offer_file", description="d", max_line_bytes=4096, max_pages=7)
    assert limits_for(declared, "offers") == SourceLimits(max_pages=7, max_file_bytes=8 * GIB, max_line_bytes=4096,
                                                          source_id="offers")
    with pytest.raises(ValidationError, match="max_pages"):
        Source(kind="azure_retail", description="d", max_pages=0)


def test_the_offer_file_default_holds_a_whole_region_file():
    """A region's index.csv runs to hundreds of MB (663 MB seen; us-east-1 several GB); DuckDB scans it from disk."""
    assert aws_offer_file.DEFAULT_LIMITS.max_file_bytes >= 4 * GIB > 663 * 10**6 > MAX_FILE_BYTES


@pytest.mark.parametrize("kind", LIMITED_KINDS)
def test_every_reader_and_live_fetch_takes_the_limits(kind):
    module = SOURCE_KINDS[kind]
    assert "limits" in inspect.signature(module.read_file).parameters
    if hasattr(module, "fetch_live"):
        assert "limits" in inspect.signature(module.fetch_live).parameters


FILE_OF_KIND = {"aws_pricing": "p.json", "aws_spot": "s.json", "aws_offer_file": "index.csv", "azure_retail": "a.json",
                "gcp_billing": "g.json", "mlperf_inference": "m.json", "benchmark_runs": "r.csv"}


@pytest.mark.parametrize("kind", LIMITED_KINDS)
def test_a_file_over_max_file_bytes_is_refused_unread(tmp_path, kind):
    path = tmp_path / FILE_OF_KIND[kind]
    path.write_bytes(b" " * 2048)
    limits = SourceLimits(max_file_bytes=KIB, source_id="s")
    with pytest.raises(SourceLimitError, match=rf"^f: the file \(2,048 bytes\) is larger than max_file_bytes allows "
                                               rf"\(1,024 bytes = 1 KiB\); {hint('max_file_bytes')}$") as err:
        SOURCE_KINDS[kind].read_file(path, "f", limits=limits)
    assert never_retried(err.value)


# ---------------------------------------------------------------- live paging
FAKE_KEY_ID, FAKE_SECRET = "AKIAFAKEFAKEFAKE0001", "fake/secret/never+logged"
GPU = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
       {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "GPU instance"}]


def stubbed(service: str, monkeypatch) -> Stubber:
    client = boto3.client(service, region_name="us-east-1", aws_access_key_id=FAKE_KEY_ID,
                          aws_secret_access_key=FAKE_SECRET)
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: client)
    return Stubber(client)


def price_list_page(token: str | None, previous: str | None, stubber: Stubber) -> None:
    params = {"ServiceCode": "AmazonEC2", "Filters": GPU} | ({"NextToken": previous} if previous else {})
    stubber.add_response("get_products", aws_page(aws_product("p5.48xlarge", "55.04"), next_token=token), params)


def test_aws_next_tokens_that_cycle_stop_at_the_first_repeat(monkeypatch):
    stubber = stubbed("pricing", monkeypatch)
    for previous, token in ((None, "A"), ("A", "B"), ("B", "A")):  # A, B, A, B ... for ever
        price_list_page(token, previous, stubber)
    with stubber, pytest.raises(SourceFormatError, match=r"^pricing.get_products us-east-1 'GPU instance': page 3's "
                                                         r"NextToken repeats page 1's") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]})
    stubber.assert_no_pending_responses()
    assert never_retried(err.value)


def test_aws_next_tokens_new_on_every_page_stop_at_max_pages(monkeypatch):
    stubber = stubbed("pricing", monkeypatch)
    for n in range(3):
        price_list_page(f"token-{n + 1}", f"token-{n}" if n else None, stubber)
    limits = SourceLimits(max_pages=3, source_id="aws_pricing")
    with stubber, pytest.raises(SourceLimitError, match=rf"^pricing.get_products us-east-1 'GPU instance': the "
                                                        rf"listing has more pages than max_pages allows \(3 pages\); "
                                                        rf"{hint('max_pages', 'aws_pricing')}$") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, limits=limits)
    stubber.assert_no_pending_responses()  # page 4 was never asked for
    assert never_retried(err.value)


def test_aws_spot_history_stops_at_max_pages_and_a_listing_of_exactly_max_pages_is_read(monkeypatch):
    stubber = stubbed("ec2", monkeypatch)
    item = {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
            "SpotPrice": "10.24", "Timestamp": "2026-11-20T06:00:00Z"}
    for tokens in (("t1", None), ("t1", "t2")):
        for token in tokens:
            stubber.add_response("describe_spot_price_history",
                                 {"SpotPriceHistory": [item]} | ({"NextToken": token} if token else {}))
    limits = SourceLimits(max_pages=2, source_id="aws_spot")
    with stubber:
        rows = aws_spot.fetch_live({"regions": ["us-east-1"]}, limits=limits)
        assert len(rows) == 2
        with pytest.raises(SourceLimitError, match=r"^ec2.describe_spot_price_history us-east-1: the listing has more "
                                                   r"pages than max_pages allows \(2 pages\)"):
            aws_spot.fetch_live({"regions": ["us-east-1"]}, limits=limits)
    stubber.assert_no_pending_responses()


class EndlessApi:
    """127.0.0.1 server that pages for ever: every Azure page links to a new next page, every Billing Catalog page
    carries a new nextPageToken. `/big` answers `size` bytes, with or without Content-Length."""

    def __init__(self):
        self.requests: list[str] = []
        api = self

        class Handler(QuietHandler):
            def do_GET(self):
                api.requests.append(self.path)
                n = len(api.requests)
                if self.path.startswith("/deep"):
                    body, length = DEEP.encode(), True
                elif self.path.startswith("/big"):
                    body, length = b'{"Items": [], "pad": "' + b" " * 3000 + b'"}', "length" in self.path
                elif self.path.startswith("/v1/services/"):
                    body, length = json.dumps({"skus": [], "nextPageToken": f"token-{n}"}).encode(), True
                else:
                    body = json.dumps({"Items": [], "NextPageLink": f"{api.base}/api/retail/prices?$skip={n}00",
                                       "Count": 0}).encode()
                    length = True
                self.send_body(body, length=length)

        self.httpd, self.base = serve_loopback(Handler)


@pytest.fixture
def endless():
    api = EndlessApi()
    yield api
    close_loopback(api.httpd)


def test_azure_next_page_links_new_every_time_stop_at_max_pages(endless):
    limits = SourceLimits(max_pages=5, source_id="azure_retail")
    with pytest.raises(SourceLimitError, match=rf"^azure retail prices eastus: the listing has more pages than "
                                               rf"max_pages allows \(5 pages\); {hint('max_pages', 'azure_retail')}$"):
        azure_retail.fetch_live({"regions": ["eastus"], "endpoint": endless.base + "/api/retail/prices"},
                                limits=limits, sleep=lambda s: None)
    assert len(endless.requests) == 5


def test_gcp_page_tokens_new_every_time_stop_at_max_pages(endless):
    limits = SourceLimits(max_pages=4, source_id="gcp_billing")
    with pytest.raises(SourceLimitError, match=r"^gcp billing services/6F81-5844-456A/skus: the listing has more "
                                               r"pages than max_pages allows \(4 pages\)") as err:
        gcp_billing.fetch_live({"services": ["6F81-5844-456A"], "endpoint": endless.base}, limits=limits,
                               environ={"GOOGLE_API_KEY": "AIzaSyTEST-key"}, sleep=lambda s: None)
    assert len(endless.requests) == 4
    assert "AIzaSyTEST-key" not in str(err.value)


# ---------------------------------------------------------------- max_fetch_s: a live fetch's time, retries included
def test_a_listing_that_never_ends_in_time_stops_at_max_fetch_s_long_before_max_pages(endless):
    limits = SourceLimits(max_fetch_s=0.5, source_id="azure_retail").started()
    with pytest.raises(SourceLimitError, match=rf"^azure retail prices eastus page \d+: the fetch is taking longer "
                                               rf"than max_fetch_s allows \(0.5 s\); "
                                               rf"{hint('max_fetch_s', 'azure_retail')}( \(last: network error: "
                                               rf"TimeoutError: the source's max_fetch_s ran out while the response "
                                               rf"arrived\))?$") as err:
        azure_retail.fetch_live({"regions": ["eastus"], "endpoint": endless.base + "/api/retail/prices"},
                                limits=limits, sleep=lambda s: None)
    assert 1 < len(endless.requests) < MAX_PAGES  # pages answered at once: stopped by the time, not the page count
    assert never_retried(err.value)


def test_a_fetch_past_its_deadline_sends_no_request(endless, tmp_path):
    past = SourceLimits(max_fetch_s=1.0, source_id="aws_offer_file").started()
    past = SourceLimits(**{**past.__dict__, "deadline": past.deadline - 2.0})  # started 2 s ago: 1 s over
    with pytest.raises(SourceLimitError, match=r"^t: the fetch is taking longer than max_fetch_s allows \(1 s\)"):
        _http.get_json(endless.base + "/v1/services/x/skus", what="t", limits=past, sleep=lambda s: None)
    with pytest.raises(SourceLimitError, match=r"/index.csv: the fetch is taking longer than max_fetch_s allows"):
        _download.download(endless.base + "/index.csv", tmp_path / "index.csv", limits=past,
                           sleep=lambda s: None)
    assert endless.requests == []


def test_a_throttled_aws_listing_does_not_wait_for_a_retry_past_max_fetch_s(monkeypatch):
    """The Price List throttles every try. Backoffs 1, 2 and 4 s each end within the 5 s the fetch may take (waited
    here without time passing); the fourth, 8 s, would end past it: refused before waiting, naming max_fetch_s."""
    stubber = stubbed("pricing", monkeypatch)
    for _ in range(4):
        stubber.add_client_error("get_products", service_error_code="ThrottlingException", service_message="Rate exceeded",
                                 http_status_code=400)
    waited: list[float] = []
    limits = SourceLimits(max_fetch_s=5.0, source_id="aws_pricing").started()
    with stubber, pytest.raises(SourceLimitError, match=r"^pricing.get_products us-east-1 'GPU instance': a retry "
                                                        r"8 s from now would take longer than max_fetch_s allows "
                                                        r"\(5 s\); .* \(last: ThrottlingException: Rate "
                                                        r"exceeded\)$") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, limits=limits, sleep=waited.append)
    assert waited == [1.0, 2.0, 4.0]
    stubber.assert_no_pending_responses()
    assert never_retried(err.value)


def test_an_aws_page_that_trickles_in_is_given_up_at_max_fetch_s(monkeypatch):
    """botocore bounds each read of a response (read_timeout, 60 s), not the whole: a Price List page whose body comes a
    byte every 0.05 s (80 bytes: 4 s) held the fetch past its max_fetch_s (0.5 s here) for as long as it came. The
    page is given up at the deadline, through boto3's real HTTP path (a loopback endpoint)."""
    from botocore.config import Config

    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: 80\r\n\r\n"
                      + b" " * 80, trickle_s=0.05)
    client = boto3.client("pricing", region_name="us-east-1", endpoint_url=base, aws_access_key_id=FAKE_KEY_ID,
                          aws_secret_access_key=FAKE_SECRET, config=Config(retries={"total_max_attempts": 1}))
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: client)
    limits = SourceLimits(max_fetch_s=0.5, source_id="aws_pricing").started()
    started = time.monotonic()
    with pytest.raises(SourceLimitError, match=r"^pricing.get_products us-east-1 'GPU instance': page 1: the page is "
                                               r"taking longer to arrive than max_fetch_s allows \(0.5 s\); "
                                               rf"{hint('max_fetch_s', 'aws_pricing')}$") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, limits=limits, sleep=lambda s: None)
    assert time.monotonic() - started < 2
    assert never_retried(err.value)


def test_an_aws_page_given_up_on_is_not_parsed_and_the_next_listing_of_its_client_is(monkeypatch):
    """The page given up at max_fetch_s (0.3 s) is read on in its thread (200 bytes a byte every 0.01 s: 2 s): once
    whole, it is not parsed for nobody (botocore's after-call never comes), and as that thread ends it takes its
    listing's size check off the client, so that a later listing on it (its next page: 42 bytes) is parsed."""
    import threading

    from botocore.config import Config

    page = b'{"FormatVersion":"aws_v1","PriceList":[]}'
    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: 200\r\n\r\n"
                      + b" " * 200,
                      b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: %d\r\n\r\n"
                      % len(page) + page, trickle_s=0.01)
    client = boto3.client("pricing", region_name="us-east-1", endpoint_url=base, aws_access_key_id=FAKE_KEY_ID,
                          aws_secret_access_key=FAKE_SECRET, config=Config(retries={"total_max_attempts": 1}))
    parsed: list[str] = []
    client.meta.events.register("after-call.pricing.GetProducts", lambda **kwargs: parsed.append("parsed"))
    before = set(threading.enumerate())  # another test's page thread may still be reading
    with pytest.raises(SourceLimitError, match=r"^t: page 1: the page is taking longer to arrive than max_fetch_s"):
        list(_aws.pages(client, "get_products", "t", limits=SourceLimits(max_fetch_s=0.3).started(),
                        ServiceCode="AmazonEC2"))
    [reading] = [t for t in set(threading.enumerate()) - before if t.name == "hweval-aws-page"]
    reading.join(timeout=20)  # the page given up on, read on to its end (2 s)
    assert not reading.is_alive()
    assert parsed == []
    [later] = _aws.pages(client, "get_products", "t", limits=SourceLimits(max_fetch_s=20).started(),
                         ServiceCode="AmazonEC2")
    assert (later["FormatVersion"], later["PriceList"], parsed) == ("aws_v1", [], ["parsed"])


def test_max_fetch_s_declared_in_sources_yaml_bounds_a_live_source_from_the_start_of_its_fetch(catalog, endless):
    """The run's fetch of a live source (flows/source_batches.py fetch_source) starts its clock: a declared 0.3 s
    stops the endless listing; without `started()` no deadline would apply and max_pages would stop it instead."""
    from flows.source_batches import fetch_source

    sources = dict(catalog.sources.sources)
    sources["azure_retail"] = sources["azure_retail"].model_copy(update={
        "max_fetch_s": 0.3, "live": {"regions": ["eastus"], "endpoint": endless.base + "/api/retail/prices"}})
    live = catalog.model_copy(update={"sources": catalog.sources.model_copy(update={"sources": sources,
                                                                                    "mode": "live"})})
    with pytest.raises(SourceLimitError, match=r"the fetch is taking longer than max_fetch_s allows \(0.3 s\); "
                                               r"if that is right, raise it with `max_fetch_s: N` under "
                                               r"sources.azure_retail"):
        fetch_source(live, "azure_retail")
    assert 1 < len(endless.requests) < MAX_PAGES


def test_a_fanned_out_part_starts_its_own_clock(endless):
    """flows/source_batches.py fetch_live_part (a region on a Dask worker, its limits made before the fan-out): its
    max_fetch_s counts from the part's own start; the endless listing stops at 1 s, not at max_pages. (1 s, not less:
    on a loaded machine (CI beside other work) a 0.3 s budget was spent on the first page.)"""
    from flows.source_batches import LivePart, fetch_live_part

    part = LivePart("azure_retail", "azure_retail", "azure_retail",
                    {"regions": ["eastus"], "endpoint": endless.base + "/api/retail/prices"},
                    SourceLimits(max_fetch_s=1.0, source_id="azure_retail"))
    with pytest.raises(SourceLimitError, match=r"the fetch is taking longer than max_fetch_s allows \(1 s\)"):
        fetch_live_part(part)
    assert 1 < len(endless.requests) < MAX_PAGES


@pytest.mark.parametrize("path", ["/big?length", "/big"])
def test_a_response_over_max_file_bytes_is_refused_once_not_retried(endless, path):
    limits = SourceLimits(max_file_bytes=KIB, source_id="azure_retail")
    with pytest.raises(SourceLimitError, match=r"^t: response from http://127.0.0.1:\d+/big.*: the body.* is larger "
                                               r"than max_file_bytes allows \(1,024 bytes = 1 KiB\)"):
        _http.get_json(endless.base + path, what="t", limits=limits, sleep=lambda s: None)
    assert len(endless.requests) == 1


# ---------------------------------------------------------------- numbers
@pytest.mark.parametrize("value", [10**400, -(10**400), "9" * 400, "1e400", float("inf"), float("nan"), "NaN",
                                   {"USD": 1}, [1], None, True, "x" * 10_000, "1_000", "55_04.0",
                                   "１０００", "١٢٣"])
def test_to_float_never_raises_and_refuses_what_is_not_a_finite_number(value):
    assert to_float(value) is None


def test_to_float_reads_numbers_and_numeric_text():
    assert (to_float(55), to_float(55.04), to_float(" 55.04 "), to_float("1e3")) == (55.0, 55.04, 55.04, 1000.0)


HUGE = "__HUGE__"
SPOT_ITEM = {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
             "SpotPrice": "10.24", "Timestamp": "2026-11-20T06:00:00Z"}


def _aws_item(price: str) -> str:
    item = json.loads(aws_product("p5.48xlarge", "55.04"))
    for term in item["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            dim["pricePerUnit"]["USD"] = price
    return json.dumps(item)


def _vllm(**changes) -> dict:
    return {"completed": 100, "num_prompts": 100, "request_throughput": 5.0, "output_throughput": 1000.0,
            "total_input_tokens": 100_000, "total_output_tokens": 20_000, "max_concurrency": 8,
            "median_ttft_ms": 50.0, "p99_ttft_ms": 90.0, "median_tpot_ms": 10.0, "p99_tpot_ms": 20.0,
            "accelerator": "h100-sxm-80gb", "chips": 1, "model": "llama-3.1-8b", "precision": "bf16",
            "date": "2026-11-01"} | changes


# kind -> (a document with one good row and one whose number is HUGE, indented, the column it lands in)
HUGE_NUMBER = {
    "aws_pricing": (lambda: aws_page(aws_product("p4d.24xlarge", "21.957642", sku="SKU2"), _aws_item(HUGE)),
                    "price_usd"),
    "azure_retail": (lambda: azure_page(
        azure_item("Standard_ND96isr_H100_v5", 98.32, product="Virtual Machines NDsr H100 v5 Series",
                   meter="ND96isrH100v5"),
        azure_item("Standard_NC40ads_H100_v5", HUGE, product="Virtual Machines NCadsH100v5 Series",
                   meter="NC40adsH100v5")), "retail_price"),
    "gcp_billing": (lambda: {"skus": [gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU"),
                                      gcp_sku("TPU v6e chip running in Iowa", HUGE, 0, group="TPU")]}, "price_usd"),
    "aws_spot": (lambda: {"SpotPriceHistory": [SPOT_ITEM, SPOT_ITEM | {"AvailabilityZone": "us-east-1b",
                                                                       "SpotPrice": HUGE}]}, "price_usd"),
    "mlperf_inference": (lambda: [mlperf_inference_result("a", "NVIDIA L40S", "llama2-70b-99", "Offline", 3717.74),
                                  mlperf_inference_result("b", "NVIDIA L40S", "llama2-70b-99", "Server", HUGE)],
                         "performance_result"),
    "benchmark_runs": (lambda: _vllm(request_throughput=HUGE), "request_throughput"),
}


def with_number(kind: str, digits: int) -> str:
    """The kind's document, indented, with HUGE written as a JSON number of `digits` nines (inside the PriceList
    item's own JSON string for aws_pricing, as the API sends it)."""
    doc, _ = HUGE_NUMBER[kind]
    text = json.dumps(doc(), indent=1)
    return text.replace(f'"{HUGE}"', "9" * digits).replace(f'\\"{HUGE}\\"', "9" * digits)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_400_digit_number_quarantines_its_row_not_the_source(tmp_path, fresh_db, catalog, kind):
    path = tmp_path / "f.json"
    path.write_text(with_number(kind, 400))
    rows = SOURCE_KINDS[kind].read_file(path, "f.json")
    column = HUGE_NUMBER[kind][1]
    assert rows[-1][column] is None
    if kind == "benchmark_runs":
        return  # one run per vLLM file: its quarantine is the same expectation as for any missing throughput
    load = land(fresh_db, catalog, kind, rows, "run-1", AS_OF)
    assert (load.status, load.rows_landed, load.rows_quarantined) == ("landed", len(rows) - 1, 1)
    assert fresh_db.execute("select row_no, column_name from ops.quarantine").fetchall() == [(len(rows) - 1, column)]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_a_5000_digit_number_is_a_format_error_naming_the_file_and_line(tmp_path, kind):
    text = with_number(kind, 5000)
    path = tmp_path / "f.json"
    path.write_text(text)
    line = text[:text.index("9" * 5000)].count("\n") + 1
    where = r"f: PriceList\[1\]: line 1" if kind == "aws_pricing" else f"f: line {line}"
    with pytest.raises(SourceFormatError, match=rf"^{where} column \d+: a number 5,000 characters long \(more than the "
                                                rf"{MAX_NUMBER_DIGITS:,} a number may have\): '9999") as err:
        SOURCE_KINDS[kind].read_file(path, "f")
    assert len(str(err.value)) < 500 and never_retried(err.value)


def test_an_mlperf_throughput_of_1e30_is_quarantined_as_implausible(fresh_db, catalog, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps([mlperf_inference_result("a", "NVIDIA L40S", "llama2-70b-99", "Offline", 3717.74),
                                mlperf_inference_result("b", "NVIDIA L40S", "llama2-70b-99", "Server", 1e30)]))
    rows = SOURCE_KINDS["mlperf_inference"].read_file(path, "m.json")
    land(fresh_db, catalog, "mlperf_inference", rows, "run-1", AS_OF)
    assert fresh_db.execute("select row_no, expectation, unexpected_value from ops.quarantine").fetchall() == [
        (1, "result_plausible", "1e+30")]
    assert fresh_db.execute("select result_id from raw.mlperf_inference").fetchall() == [("a",)]


# ---------------------------------------------------------------- format errors name the file and line
@pytest.mark.parametrize("kind", JSON_KINDS)
def test_json_nested_100000_levels_is_a_format_error_naming_the_file_and_line(tmp_path, kind):
    path = tmp_path / "f.json"
    path.write_text('{"x":\n' + DEEP + "}")  # level 1 on line 1: line 2 passes level 500 at its 500th "["
    with pytest.raises(SourceFormatError, match=rf"^f: line 2 column {MAX_JSON_DEPTH}: nested more than "
                                                rf"{MAX_JSON_DEPTH} levels deep$") as err:
        SOURCE_KINDS[kind].read_file(path, "f")
    assert never_retried(err.value)


def test_a_deep_price_list_item_and_a_deep_live_page_name_where_they_came_from(tmp_path, endless):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"PriceList": [aws_product("p5.48xlarge", "55.04"), DEEP]}))
    with pytest.raises(SourceFormatError, match=r"^f: PriceList\[1\]: line 1 column 501: nested more than 500"):
        aws_pricing.read_file(path, "f")
    with pytest.raises(SourceFormatError, match=r"^t: response from http://127.0.0.1:\d+/deep: line 1 column 501: "
                                                r"nested more than 500 levels deep$") as err:
        _http.get_json(endless.base + "/deep", what="t", sleep=lambda s: None)
    assert len(endless.requests) == 1 and never_retried(err.value)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_json_nested_600_levels_is_refused_though_python_would_parse_it(tmp_path, kind):
    # Python's parser reaches its recursion limit near 1,000 levels; the documented bound is MAX_JSON_DEPTH
    path = tmp_path / "f.json"
    path.write_text('{"x":\n' + "[" * 600 + "]" * 600 + "}")  # level 1 on line 1: level 501 is line 2's 500th "["
    with pytest.raises(SourceFormatError, match=r"^f: line 2 column 500: nested more than 500 levels deep$"):
        SOURCE_KINDS[kind].read_file(path, "f")


def test_json_nested_500_levels_is_read_and_501_refused():
    nested = parse_json("[" * 500 + "]" * 500, "f")
    depth = 0
    while nested is not None:
        nested, depth = (nested[0] if nested else None), depth + 1
    assert depth == 500
    with pytest.raises(SourceFormatError, match=r"^f: line 1 column 501: nested more than 500 levels deep$"):
        parse_json("[" * 501 + "]" * 501, "f")


def test_brackets_inside_json_strings_do_not_count_toward_the_depth():
    # an escaped quote (\") and an escaped backslash before a closing quote (\\") must not end or open a string
    doc = {"backslash": "\\", "open": "[" * 600, "quote": '"' + "{" * 600}
    assert parse_json(json.dumps(doc), "f") == doc


def test_a_key_given_twice_in_one_json_object_is_a_format_error_naming_both_places():
    with pytest.raises(SourceFormatError, match=r"^f: line 2 column 16: key 'c' appears twice in one object \(first "
                                                r"at line 2 column 8\); expected each key once$") as err:
        parse_json('{"a": 1,\n "b": {"c": 2, "c": 3}}', "f")
    assert never_retried(err.value)
    # "\u0061" is the key "a" again, as json.loads reads it
    with pytest.raises(SourceFormatError, match=r"^f: line 1 column 10: key 'a' appears twice in one object \(first "
                                                r"at line 1 column 2\)"):
        parse_json('{"a": 1, "\\u0061": 2}', "f")
    # the same key in two objects, or in an object and the one inside it, is no repeat
    assert parse_json('[{"a": 1}, {"a": {"a": 2}}]', "f") == [{"a": 1}, {"a": {"a": 2}}]


def test_memory_exhausted_while_parsing_is_a_format_error(monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(json, "loads", no_memory)
    with pytest.raises(SourceFormatError, match=r"^f: too large to parse in memory \(2 characters\); lower "
                                                r"max_file_bytes"):
        parse_json("[]", "f")


CSV_HEADER = "kind,accelerator,chips,model,precision,concurrency,input_tokens,output_tokens,request_throughput," \
             "output_tokens_per_s,completed,failed,source,date\n"


def csv_row(source: str) -> str:
    return f"serving,h100-sxm-80gb,1,llama-3.1-8b,bf16,8,1000,200,5,1000,100,0,{source},2026-11-01\n"


def test_a_csv_field_over_the_csv_modules_own_limit_is_read_when_max_line_bytes_allows_it(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(CSV_HEADER + csv_row("s" * 200_000))  # the csv module refuses fields over 131,072 characters
    [row] = benchmark_runs.read_file(path, "f")
    assert len(row["run_source"]) == 200_000


def test_a_csv_line_over_max_line_bytes_is_a_format_error_naming_file_and_line(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(CSV_HEADER + csv_row("ok") + csv_row("s" * 70_000))
    limits = SourceLimits(max_line_bytes=64 * KIB, source_id="s")
    with pytest.raises(SourceLimitError, match=rf"^f: line 3 is longer than max_line_bytes allows \(65,536 bytes = "
                                               rf"64 KiB\); {hint('max_line_bytes')}$") as err:
        benchmark_runs.read_file(path, "f", limits=limits)
    assert never_retried(err.value)


def test_a_quoted_field_spanning_lines_is_bounded_as_one_record(tmp_path):
    path = tmp_path / "r.csv"
    field = '"' + "\n".join(["s" * 30_000] * 3) + '"'
    path.write_text(CSV_HEADER + csv_row("ok") + csv_row(field))
    with pytest.raises(SourceLimitError, match=r"^f: lines 3-5 \(one CSV record: a quoted field spans them\) are "
                                               r"longer than max_line_bytes allows \(65,536 bytes = 64 KiB\)"):
        benchmark_runs.read_file(path, "f", limits=SourceLimits(max_line_bytes=64 * KIB))
    [_, row] = benchmark_runs.read_file(path, "f")  # within the default 1 MiB
    assert row["run_source"].count("\n") == 2


def test_a_file_without_a_newline_says_its_line_is_too_long_not_that_it_is_empty(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"x" * (5 * 1024 * 1024))
    with pytest.raises(SourceLimitError, match=r"^f: line 1 is longer than max_line_bytes allows \(1,048,576 bytes = "
                                               r"1 MiB\); if that is right, raise it with `max_line_bytes: N` under "
                                               r"the source's entry in catalogs/sources.yaml$"):
        benchmark_runs.read_file(path, "f")


def test_a_csv_line_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(CSV_HEADER.encode() + b"serving,\xff\n")
    with pytest.raises(SourceFormatError, match=rf"^f: not UTF-8 text \(byte {len(CSV_HEADER) + 8}: invalid start "
                                                r"byte\) on line 2$"):
        benchmark_runs.read_file(path, "f")


def test_a_csv_header_naming_a_column_twice_is_a_format_error_naming_the_column(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("# exported 2026-11-30\nkind,usd_per_hour,source,usd_per_hour\nquote,19.92,x,1.992\n")
    with pytest.raises(SourceFormatError, match=r"^f: line 2 \(header\): column 'usd_per_hour' appears twice "
                                                r"\(columns 2 and 4\); expected each column once$"):
        load_csv(path, "f", skip_lines=1)


def test_unnamed_csv_columns_may_repeat(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("kind,cloud,,\nquote,aws,,\n")  # a spreadsheet's trailing commas: no reader asks for them
    assert load_csv(path, "f") == [{"kind": "quote", "cloud": "aws", "": ""}]
    # a value under one of them is kept, not overwritten by the empty cell further right: a reader sees it and says
    # it does not know the column (an own benchmark run's "700 W" was dropped without a word)
    path.write_text("kind,cloud,,\nquote,aws,700 W,\n")
    assert load_csv(path, "f") == [{"kind": "quote", "cloud": "aws", "": "700 W"}]


def test_load_csv_numbered_gives_the_line_each_record_starts_on(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('kind,note\nquote,"two\nlines"\n\nquote,one line\n')  # record 1: lines 2-3; line 4 blank
    assert load_csv_numbered(path, "f") == [(2, {"kind": "quote", "note": "two\nlines"}),
                                            (5, {"kind": "quote", "note": "one line"})]


PRICE_SHEET_CSV_HEADER = "kind,cloud,region,instance_type,usd_per_hour,source,note\n"


def price_sheet_row(region: str, note: str = "") -> str:
    return f"quote,aws,{region},p5.48xlarge,31.00,Q-2,{note}\n"


# a quote opened on line 3 (the second entry) and never closed: a non-strict reader read lines 3-7 as one entry whose
# note held the four entries after it (the file has the header's field count for it, so no other check saw it)
UNCLOSED_CASES = [
    ("benchmark_runs", "r.csv", CSV_HEADER + csv_row("ok") + csv_row('"call Bob') + csv_row("a") * 4),
    ("price_sheet", "p.csv", PRICE_SHEET_CSV_HEADER + price_sheet_row("us-east-1") + price_sheet_row(
        "us-west-2", '"call Bob') + "".join(price_sheet_row(r) for r in ("eu-north-1", "us-east-2", "ap-south-1",
                                                                         "eu-west-1"))),
]


@pytest.mark.parametrize(("kind", "name", "text"), UNCLOSED_CASES, ids=[c[0] for c in UNCLOSED_CASES])
def test_a_csv_quote_never_closed_is_refused_naming_the_line_it_opened(tmp_path, kind, name, text):
    path = tmp_path / name
    path.write_text(text)  # 1 header + 2 entries + 4 more: 7 lines, the last the file's end
    with pytest.raises(SourceFormatError, match=r'^f: line 3: a quoted field opens here and is never closed \(the '
                                                r'file ends inside it, on line 7\); expected a closing quote \(a quote '
                                                r'inside the field is written ""\)$'):
        SOURCE_KINDS[kind].read_file(path, "f")


@pytest.mark.parametrize(("kind", "name", "text"), UNCLOSED_CASES, ids=[c[0] for c in UNCLOSED_CASES])
def test_a_csv_quote_closed_mid_field_is_refused_naming_the_line_it_opened(tmp_path, kind, name, text):
    path = tmp_path / name
    # opened on line 3, closed on line 4 with text after it: a non-strict reader read `call` + newline + `Bob x`
    path.write_text(text.replace('"call Bob', '"call\nBob" x', 1))
    with pytest.raises(SourceFormatError, match=r"^f: line 3: a quoted field opens here and is closed mid-field "
                                                r"\(text follows its closing quote on line 4\); expected a comma or "
                                                r"the line's end after the closing quote"):
        SOURCE_KINDS[kind].read_file(path, "f")


def test_a_csv_quote_opened_on_a_later_line_of_a_record_is_the_line_named(tmp_path):
    path = tmp_path / "r.csv"
    # the record starts on line 2; its first field's quotes close on line 3, where the second field's opens; a ""
    # inside a field is a quote of its text, neither opening nor closing one
    path.write_text('kind,note\n"quote ""a""\nb","c\nd\n')
    with pytest.raises(SourceFormatError, match=r"^f: line 3: a quoted field opens here and is never closed \(the "
                                                r"file ends inside it, on line 4\)"):
        load_csv_numbered(path, "f")


def test_a_csv_quoted_field_that_spans_lines_and_closes_is_read(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(PRICE_SHEET_CSV_HEADER + price_sheet_row("us-east-1", '"call Bob\n(or ""Al"")"')
                    + price_sheet_row("us-west-2"))
    first, second = SOURCE_KINDS["price_sheet"].read_file(path, "f")
    assert (first["note"], first["source_ref"]) == ('call Bob\n(or "Al")', "f: line 2")
    assert (second["region"], second["source_ref"]) == ("us-west-2", "f: line 4")


def _offer_file(tmp_path: Path, **changes) -> Path:
    products = [p for p in ofb.accelerated_products() if p["attrs"]["Instance Type"] == "g6.2xlarge"][:3]
    path = tmp_path / "index.csv"
    ofb.write_offer_file(path, products)
    text = path.read_text()
    for old, new in changes.items():
        text = text.replace(old, new, 1)
    path.write_text(text)
    return path


def test_an_offer_file_line_over_max_line_bytes_names_the_line(tmp_path):
    rows = len(aws_offer_file.read_file(_offer_file(tmp_path), "f"))
    path = _offer_file(tmp_path, **{'"GPU instance"': '"GPU instance' + "x" * 70_000 + '"'})
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if "x" * 70_000 in text)
    limits = SourceLimits(max_line_bytes=64 * KIB, source_id="s")
    with pytest.raises(SourceLimitError, match=rf"^f: line {line} is longer than max_line_bytes allows \(65,536 bytes "
                                               rf"= 64 KiB\); {hint('max_line_bytes')}$"):
        aws_offer_file.read_file(path, "f", limits=limits)
    assert len(aws_offer_file.read_file(path, "f")) == rows - 1  # the default 1 MiB reads it (and skips that row)


def test_an_offer_file_preamble_line_over_max_line_bytes_is_refused(tmp_path):
    path = _offer_file(tmp_path, **{"This pricing list": "x" * 70_000})
    with pytest.raises(SourceLimitError, match=r"^f: line 2 is longer than max_line_bytes allows"):
        aws_offer_file.read_file(path, "f", limits=SourceLimits(max_line_bytes=64 * KIB))


# ---------------------------------------------------------------- memory
def test_a_long_line_is_refused_after_reading_no_more_than_the_limit(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(CSV_HEADER.encode() + b"x" * (5 * 1024 * 1024) + b"\n")
    tracemalloc.start()
    try:
        with pytest.raises(SourceLimitError, match="line 2 is longer"):
            benchmark_runs.read_file(path, "f", limits=SourceLimits(max_line_bytes=64 * KIB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 512 * KIB, f"{peak:,} bytes"


MEASURE = """
import resource, sys
from pathlib import Path
from flows.sources import benchmark_runs
from flows.sources._common import SourceLimitError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    benchmark_runs.read_file(Path(sys.argv[1]), "big.csv")
except SourceLimitError as exc:
    print(str(exc).split(";")[0])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def test_a_200_mb_line_costs_no_more_than_its_limit_in_memory(tmp_path):
    """Peak RSS of a fresh process reading a benchmark CSV whose second line is 200 MB (a sparse file: no disk)."""
    path = tmp_path / "big.csv"
    with path.open("wb") as f:
        f.write(CSV_HEADER.encode())
        f.truncate(len(CSV_HEADER) + 200 * 1024 * 1024)
    out = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[1], timeout=60).stdout.splitlines()
    assert out[0] == "big.csv: line 2 is longer than max_line_bytes allows (1,048,576 bytes = 1 MiB)"
    assert int(out[1]) < 4 * MAX_LINE_BYTES, f"peak RSS grew by {int(out[1]):,} bytes"


def test_a_limit_declared_in_sources_yaml_reaches_the_reader(catalog, tmp_path):
    """max_line_bytes set under a source in sources.yaml bounds that source's reader in a run."""
    from flows import pipeline
    from flows.source_batches import fetch_source

    path = tmp_path / "runs.csv"
    path.write_text("kind,accelerator\n" + "training," + "x" * 5000 + "\n")
    with_file = pipeline.with_source_files(catalog, {"published_benchmarks": [str(path)]}, AS_OF)
    sources = dict(with_file.sources.sources)
    sources["published_benchmarks"] = sources["published_benchmarks"].model_copy(update={"max_line_bytes": 1024})
    limited = with_file.model_copy(update={"sources": with_file.sources.model_copy(update={"sources": sources})})
    with pytest.raises(SourceFormatError, match=r"runs\.csv: line 2 is longer than max_line_bytes allows "
                                                r"\(1,024 bytes.*max_line_bytes: N` under sources\.published_benchmarks"):
        fetch_source(limited, "published_benchmarks")
    with pytest.raises(SourceFormatError, match="missing column"):  # the default (1 MiB) reads the line
        fetch_source(with_file, "published_benchmarks")


# ---------------------------------------------------------------- waits declared as live options
SPOT_BOUND = "expected a number above 0 and at most 2,160 (MAX_LOOKBACK_HOURS: the 90 days of spot prices EC2 keeps)"
TIMEOUT_BOUND = "expected a number above 0 and at most 3,600 (MAX_TIMEOUT_S: seconds one read of a download may wait)"


@pytest.mark.parametrize(("value", "shown"), [
    ("six", "'six'"), ("1e12", "'1e12'"), (1e12, "1000000000000.0"), (-6, "-6"), (0, "0"), (True, "True"),
    (float("nan"), "nan"), (float("inf"), "inf"), (2161, "2161"), (None, "None")])
def test_a_spot_lookback_that_is_not_a_number_of_hours_within_90_days_is_refused(value, shown):
    with pytest.raises(SourceFormatError) as refused:
        aws_spot.check_live_options({"regions": ["us-east-1"], "lookback_hours": value})
    assert str(refused.value) == f"aws_spot: live option lookback_hours: {SPOT_BOUND}, got {shown}"


@pytest.mark.parametrize(("value", "shown"), [("sixty", "'sixty'"), (0, "0"), (-1.5, "-1.5"), (3600.5, "3600.5")])
def test_an_offer_file_timeout_that_is_not_a_number_of_seconds_within_an_hour_is_refused(value, shown):
    with pytest.raises(SourceFormatError) as refused:
        aws_offer_file.check_live_options({"regions": ["us-east-1"], "timeout_s": value})
    assert str(refused.value) == (f"aws_offer_file: live option timeout_s: {TIMEOUT_BOUND}, "
                                  f"got {shown}")


def test_waits_within_their_bounds_pass_the_check():
    for hours in (0.5, 6, 2160):
        aws_spot.check_live_options({"regions": ["us-east-1"], "lookback_hours": hours})
    for seconds in (0.5, 60, 3600):
        aws_offer_file.check_live_options({"regions": ["us-east-1"], "timeout_s": seconds})
    aws_spot.check_live_options({"regions": ["us-east-1"]})  # the defaults: 6 hours, 60 seconds
    aws_offer_file.check_live_options({"regions": ["us-east-1"]})


def test_hweval_check_names_sources_yaml_the_source_and_the_wait(catalog_copy, capsys):
    from flows.cli import main

    replace_once(catalog_copy / "sources.yaml", "lookback_hours: 6\n", "lookback_hours: six\n")
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    expected = f"hweval: sources.yaml: sources.aws_spot.live: aws_spot: live option lookback_hours: {SPOT_BOUND}, got 'six'\n"
    assert capsys.readouterr() == ("", expected)


def test_only_network_style_failures_are_retried():
    """A file system or connection error may pass on a retry; a parser bug or bad data gives the same answer again."""
    import urllib.error

    for exc in (ConnectionResetError("reset"), TimeoutError("slow"), urllib.error.URLError("down"), OSError("nfs")):
        assert fetching._transient(None, None, Failed(exc)) is True, exc
    for exc in (TypeError("bug"), KeyError("x"), OverflowError("big"), ValueError("bad"), SourceFormatError("f")):
        assert fetching._transient(None, None, Failed(exc)) is False, exc


# every live kind's options that are lists of names: regions or services (a listing each), or filters sent to the API
LIVE_LIST_OPTIONS = {
    "aws_pricing": ({"regions": ["us-east-1"]}, ("regions", "instance_families", "cpu_instance_types")),
    "aws_spot": ({"regions": ["us-east-1"]}, ("regions", "instance_types", "product_descriptions")),
    "aws_instance_types": ({"regions": ["us-east-1"]}, ("regions", "instance_types")),
    "aws_offer_file": ({"regions": ["us-east-1"]}, ("regions",)),
    "bedrock_pricing": ({"regions": ["us-east-1"]}, ("regions", "models")),
    "azure_retail": ({"regions": ["eastus"]}, ("regions", "arm_sku_names")),
    "azure_model_prices": ({"regions": ["eastus"]}, ("regions", "meter_name_contains")),
    "azure_skus": ({"regions": ["eastus"]}, ("regions",)),
    "gcp_billing": ({}, ("services", "description_contains", "regions")),
    "vertex_model_prices": ({}, ("services", "description_contains", "regions")),
    "gcp_machine_types": ({}, ("regions", "machine_type_prefixes")),
}


def test_every_live_kind_names_its_list_options():
    from flows.sources import LIVE_KINDS

    assert set(LIVE_LIST_OPTIONS) == LIVE_KINDS


@pytest.mark.parametrize(("kind", "key"), [(kind, key) for kind, (_, keys) in LIVE_LIST_OPTIONS.items() for key in keys])
def test_a_live_list_option_is_a_list_of_at_most_500_names(kind, key):
    """A review's finding: the AWS sources took `regions: "us-east-1"` and read it a character at a time (aws_pricing
    made 18 Price List calls for the regions 'u', 's', '-', ... and landed no row; aws_spot sent InstanceTypes 'p',
    '5', '.', ...), and no kind bounded its lists: 501 regions failed the whole fan-out on Dask. Each is refused
    naming the source and the option, by the check `hweval check` runs."""
    from flows.sources._common import MAX_LIVE_LIST_ITEMS

    base, _ = LIVE_LIST_OPTIONS[kind]
    check = SOURCE_KINDS[kind].check_live_options
    check(base | {key: [f"name-{n}" for n in range(MAX_LIVE_LIST_ITEMS)]})  # 500: taken
    for value in ("us-east-1", [None, 5], [""], {"a": 1}):
        with pytest.raises(SourceFormatError, match=rf"^{kind}[ a-z]* options: '{key}': expected a (non-empty )?list "
                                                    rf"of names, got "):
            check(base | {key: value})
    with pytest.raises(SourceFormatError, match=rf"'{key}': 501 items, more than the 500 a live option's list may "
                                                rf"hold \(MAX_LIVE_LIST_ITEMS\)"):
        check(base | {key: [f"name-{n}" for n in range(MAX_LIVE_LIST_ITEMS + 1)]})


def test_an_aws_live_fetch_given_a_plain_string_makes_no_call():
    """aws_pricing's fetch checks its options before its first call: the Price List client, stubbed with nothing
    queued, is never asked (it would raise StubResponseError)."""
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    pricing = session.client("pricing", region_name="us-east-1")
    with Stubber(pricing):
        session.client = lambda *args, **kwargs: pricing
        with pytest.raises(SourceFormatError, match=r"aws_pricing live options: 'regions': expected a non-empty list "
                                                    r"of names, got 'us-east-1'"):
            aws_pricing.fetch_live({"regions": "us-east-1"}, session=session)
