"""Live AWS sources through their real boto3 call path, with botocore's Stubber answering in the APIs' real shapes
(PriceList items as JSON strings; SpotPriceHistory with datetimes): paging, reserved terms, the trap rows, an
instance type the catalog does not know, a throttled page retried, access denied and missing credentials."""

from __future__ import annotations

import datetime as dt
import json

import boto3
import pytest
from botocore.stub import Stubber
from builders import QuietHandler, aws_page, aws_product, close_loopback, land, serve_loopback
from conftest import AS_OF

from flows import transform
from flows.sources import _aws, aws_pricing, aws_spot
from flows.sources._common import LiveSourceError

FAKE_KEY_ID, FAKE_SECRET = "AKIAFAKEFAKEFAKE0001", "fake/secret/never+logged"
GPU = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
       {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "GPU instance"}]
ASIC = [GPU[0], {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "Machine Learning ASIC Instances"}]


class Sleeps(list):
    def __call__(self, seconds):
        self.append(seconds)


def stubbed(service: str, region: str = "us-east-1"):
    client = boto3.client(service, region_name=region, aws_access_key_id=FAKE_KEY_ID,
                          aws_secret_access_key=FAKE_SECRET)
    return client, Stubber(client)


@pytest.fixture
def pricing(monkeypatch):
    """A real pricing client with a Stubber; fetch_live gets it where it would build one from the standard chain."""
    client, stubber = stubbed("pricing")
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: client)
    with stubber:
        yield stubber
    stubber.assert_no_pending_responses()


def price_list_pages(stubber: Stubber, *, throttle_page_2: bool = False) -> None:
    """Two GPU pages and one ML ASIC page for us-east-1, in the order the fetch asks for them."""
    p5 = aws_product("p5.48xlarge", "55.0400000000", sku="P5LINUXSKU000001", reserved=[
        ("1yr", "No Upfront", "35.0000000000", None),
        ("3yr", "All Upfront", "0.0000000000", "600000"),
        ("3yr", "Partial Upfront", "12.0000000000", "300000"),
    ])
    capacity_block = aws_product("p5.48xlarge", "0.0000000000", market="CapacityBlock", sku="P5CAPBLOCKSKU001")
    windows = aws_product("p5.48xlarge", "63.8720000000", os="Windows", sku="P5WINDOWSSKU0001")
    unknown = aws_product("p7-x200.48xlarge", "150.0000000000", sku="P7UNKNOWNSKU0001")
    stubber.add_response("get_products", aws_page(p5, capacity_block, next_token="page-2"),
                         {"ServiceCode": "AmazonEC2", "Filters": GPU})
    if throttle_page_2:
        stubber.add_client_error("get_products", service_error_code="ThrottlingException",
                                 service_message="Rate exceeded", http_status_code=400,
                                 expected_params={"ServiceCode": "AmazonEC2", "Filters": GPU, "NextToken": "page-2"})
    stubber.add_response("get_products", aws_page(windows, unknown),
                         {"ServiceCode": "AmazonEC2", "Filters": GPU, "NextToken": "page-2"})
    stubber.add_response("get_products", aws_page(aws_product("trn1.32xlarge", "21.5000000000", gpu="16")),
                         {"ServiceCode": "AmazonEC2", "Filters": ASIC})


def test_price_list_fetch_pages_every_term_and_retries_a_throttled_page(pricing, caplog):
    price_list_pages(pricing, throttle_page_2=True)
    sleeps = Sleeps()
    rows = aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=sleeps)
    assert sleeps == [1.0]  # one throttled page, retried after the first backoff step, from page 2 (not page 1)
    by_term = {(r["instance_type"], r["term_type"], r["market_option"], r["operating_system"], r["unit"],
                r["lease_contract_length"], r["purchase_option"]): r["price_usd"] for r in rows}
    assert by_term == {
        ("p5.48xlarge", "OnDemand", "OnDemand", "Linux", "Hrs", None, None): 55.04,
        ("p5.48xlarge", "Reserved", "OnDemand", "Linux", "Hrs", "1yr", "No Upfront"): 35.0,
        ("p5.48xlarge", "Reserved", "OnDemand", "Linux", "Hrs", "3yr", "All Upfront"): 0.0,
        ("p5.48xlarge", "Reserved", "OnDemand", "Linux", "Quantity", "3yr", "All Upfront"): 600000.0,
        ("p5.48xlarge", "Reserved", "OnDemand", "Linux", "Hrs", "3yr", "Partial Upfront"): 12.0,
        ("p5.48xlarge", "Reserved", "OnDemand", "Linux", "Quantity", "3yr", "Partial Upfront"): 300000.0,
        ("p5.48xlarge", "OnDemand", "CapacityBlock", "Linux", "Hrs", None, None): 0.0,
        ("p5.48xlarge", "OnDemand", "OnDemand", "Windows", "Hrs", None, None): 63.872,
        ("p7-x200.48xlarge", "OnDemand", "OnDemand", "Linux", "Hrs", None, None): 150.0,
        ("trn1.32xlarge", "OnDemand", "OnDemand", "Linux", "Hrs", None, None): 21.5,
    }
    assert rows[-1]["source_ref"] == ("pricing.get_products us-east-1 'Machine Learning ASIC Instances' page 1: "
                                      "PriceList[0]")
    assert "throttled (ThrottlingException); retrying page 2" in caplog.text
    assert FAKE_KEY_ID not in caplog.text and FAKE_SECRET not in caplog.text


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_reserved_terms_are_amortised_and_trap_rows_never_pose_as_linux_on_demand(pricing, fresh_db, catalog):
    price_list_pages(pricing)
    rows = aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=Sleeps())
    load = land(fresh_db, catalog, "aws_pricing", rows, "run-1", AS_OF)
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (10, 9, 1)  # the $0.00 Capacity Block
    transform.build_models(fresh_db, "run-1", AS_OF)
    offers = dict(fresh_db.execute(
        "select offer_id, round(usd_per_hour, 4) from intermediate.int_offers_priced order by offer_id").fetchall())
    assert offers == {
        "aws:us-east-1:p5.48xlarge:on_demand": 55.04,  # the Linux row; the Windows row (63.872) is not an offer
        "aws:us-east-1:p5.48xlarge:reserved:1yr-no-upfront-standard": 35.0,  # 35.00 + 0 / 8,760 h
        "aws:us-east-1:p5.48xlarge:reserved:3yr-all-upfront-standard": 22.8311,  # 0 + 600,000 / 26,280 h = 22.8311
        "aws:us-east-1:p5.48xlarge:reserved:3yr-partial-upfront-standard": 23.4155,  # 12 + 300,000 / 26,280 = 23.4155
        "aws:us-east-1:trn1.32xlarge:on_demand": 21.5,
    }
    assert fresh_db.execute(
        "select upfront_usd, recurring_usd_per_hour, term_months from intermediate.int_offers_priced "
        "where offer_id like '%3yr-partial%'").fetchall() == [(300000.0, 12.0, 36)]
    assert fresh_db.execute("select instance_type, usd_per_hour, accelerators_listed from "
                            "intermediate.int_offers_unknown").fetchall() == [
        ("p7-x200.48xlarge", 150.0, "gpu attribute: 8")]  # landed and listed, so the catalog can be extended


def test_access_denied_fails_the_source_at_once_with_the_reason(pricing):
    pricing.add_client_error("get_products", service_error_code="AccessDeniedException",
                             service_message="User: arn:aws:iam::123456789012:user/ci is not authorized to perform: "
                                             "pricing:GetProducts", http_status_code=400)
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"pricing.get_products us-east-1 'GPU instance': page 1: access denied "
                                              r"\(AccessDeniedException\): User: .* pricing:GetProducts") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=sleeps)
    assert sleeps == []  # not retried
    assert FAKE_KEY_ID not in str(err.value) and FAKE_SECRET not in str(err.value)


def test_a_signature_error_quoting_the_canonical_request_carries_no_credential(pricing):
    """AWS's SignatureDoesNotMatch quotes the canonical request it computed, headers and all: a session token
    (x-amz-security-token) and the Authorization header's credential scope and signature never reach the source's
    error, which is what ops.source_loads.error and the reports show."""
    token = "IQoJb3JpZ2luX2VjEFAKESESSIONTOKEN//////wEaCXVzLWVhc3QtMSJH"
    canonical = ("The request signature we calculated does not match the signature you provided. Check your AWS "
                 "Secret Access Key and signing method.\n\nThe Canonical String for this request should have been\n"
                 "'POST\n/\n\ncontent-type:application/x-amz-json-1.1\nhost:api.pricing.us-east-1.amazonaws.com\n"
                 f"x-amz-security-token:{token}\nauthorization:AWS4-HMAC-SHA256 Credential={FAKE_KEY_ID}/20261130/"
                 "us-east-1/pricing/aws4_request, SignedHeaders=host, Signature=5d672d79c15b13162d9279b0855cfba6'")
    pricing.add_client_error("get_products", service_error_code="SignatureDoesNotMatch", service_message=canonical,
                             http_status_code=403)
    with pytest.raises(LiveSourceError, match=r"access denied \(SignatureDoesNotMatch\)") as err:
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=Sleeps())
    message = str(err.value)
    assert "x-amz-security-token:***" in message and "authorization:***" in message  # what was there stays readable
    for secret in (token, FAKE_KEY_ID, "5d672d79c15b13162d9279b0855cfba6"):
        assert secret not in message


def test_throttled_past_every_retry_fails_the_source(pricing):
    for _ in range(5):
        pricing.add_client_error("get_products", service_error_code="ThrottlingException", http_status_code=400)
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"still throttled \(ThrottlingException\) after 5 attempts"):
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=sleeps)
    assert sleeps == [1.0, 2.0, 4.0, 8.0]  # exponential backoff between the 5 attempts


def test_a_page_the_service_failed_to_serve_is_retried_from_its_token_whatever_the_token_looks_like(pricing):
    # the service's NextToken happens to read as botocore's own token format (base64 of a JSON object: {"v": "2",
    # "c": "abc", "i": 7}); resumed after a failure, it must go back as NextToken, not be split into parameters
    token = "eyJ2IjogIjIiLCAiYyI6ICJhYmMiLCAiaSI6IDd9"
    first = {"ServiceCode": "AmazonEC2", "Filters": GPU}
    pricing.add_response("get_products", aws_page(aws_product("p5.48xlarge", "55.0400000000"), next_token=token),
                         first)
    # HTTP 500 and 503: the service failed to serve the page, worth the retries throttling gets
    pricing.add_client_error("get_products", service_error_code="InternalError", http_status_code=500,
                             expected_params=first | {"NextToken": token})
    pricing.add_client_error("get_products", service_error_code="ServiceUnavailable", http_status_code=503,
                             expected_params=first | {"NextToken": token})
    pricing.add_response("get_products", aws_page(aws_product("p5en.48xlarge", "63.2960000000", sku="P5EN0001")),
                         first | {"NextToken": token})
    pricing.add_response("get_products", aws_page(), {"ServiceCode": "AmazonEC2", "Filters": ASIC})
    sleeps = Sleeps()
    rows = aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=sleeps)
    assert sorted(r["instance_type"] for r in rows) == ["p5.48xlarge", "p5en.48xlarge"]
    assert sleeps == [1.0, 2.0]


def test_a_service_still_failing_after_every_retry_fails_the_source(pricing):
    for _ in range(5):
        pricing.add_client_error("get_products", service_error_code="InternalFailure", service_message="oops",
                                 http_status_code=500)
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"still failing \(InternalFailure: oops\) after 5 attempts"):
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=sleeps)
    assert sleeps == [1.0, 2.0, 4.0, 8.0]


def test_no_credentials_in_the_standard_chain_fails_cleanly(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance role lookup: nothing leaves the machine
    with pytest.raises(LiveSourceError, match="no AWS credentials in boto3's standard chain"):
        aws_pricing.fetch_live({"regions": ["us-east-1"]})


def test_live_options_are_checked():
    with pytest.raises(Exception, match=r"aws_pricing: unknown live option\(s\) region "):
        aws_pricing.fetch_live({"region": "us-east-1"})
    with pytest.raises(Exception, match="the Price List API is served from us-east-1, eu-central-1, ap-south-1"):
        aws_pricing.fetch_live({"regions": ["us-east-1"], "endpoint_region": "us-west-2"})


def spot_item(zone: str, instance_type: str, price: str, hour: int) -> dict:
    return {"AvailabilityZone": zone, "InstanceType": instance_type, "ProductDescription": "Linux/UNIX",
            "SpotPrice": price, "Timestamp": dt.datetime(2026, 11, 30, hour, tzinfo=dt.UTC)}


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_spot_history_pages_per_region_keep_timestamps_and_retry_throttling(monkeypatch, fresh_db, catalog):
    client, stubber = stubbed("ec2")
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: client)
    now = dt.datetime(2026, 11, 30, 6, tzinfo=dt.UTC)
    params = {"StartTime": now - dt.timedelta(hours=6), "EndTime": now, "ProductDescriptions": ["Linux/UNIX"],
              "InstanceTypes": ["p5.48xlarge"]}
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": [
        spot_item("us-east-1a", "p5.48xlarge", "10.240000", 5),
        spot_item("us-east-1a", "p5.48xlarge", "9.000000", 2),  # older and lower: not the zone's price any more
    ], "NextToken": "n2"}, params)
    stubber.add_client_error("describe_spot_price_history", service_error_code="RequestLimitExceeded",
                             http_status_code=503, expected_params=params | {"NextToken": "n2"})
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": [
        spot_item("us-east-1b", "p5.48xlarge", "21.150000", 4)], "NextToken": ""}, params | {"NextToken": "n2"})
    sleeps = Sleeps()
    with stubber:
        rows = aws_spot.fetch_live({"regions": ["us-east-1"], "instance_types": ["p5.48xlarge"]}, now=now,
                                   sleep=sleeps)
    assert sleeps == [1.0]
    assert [(r["region"], r["availability_zone"], r["price_usd"], r["price_timestamp"]) for r in rows] == [
        ("us-east-1", "us-east-1a", 10.24, "2026-11-30T05:00:00Z"),
        ("us-east-1", "us-east-1a", 9.0, "2026-11-30T02:00:00Z"),
        ("us-east-1", "us-east-1b", 21.15, "2026-11-30T04:00:00Z"),
    ]
    assert land(fresh_db, catalog, "aws_spot", rows, "run-1", AS_OF).rows_landed == 3
    transform.build_models(fresh_db, "run-1", AS_OF)
    # the offer takes the lowest of each zone's latest price: min(10.24 (1a at 05:00, not 9.00 at 02:00), 21.15) = 10.24
    assert fresh_db.execute("select offer_id, usd_per_hour, price_note from intermediate.int_offers_priced").fetchall() == [
        ("aws:us-east-1:p5.48xlarge:spot", 10.24,
         "lowest latest price of 2 zone(s): us-east-1a at 2026-11-30T05:00:00Z (highest 21.15)")]


def test_zone_names_give_their_region():
    assert [aws_spot.region_of_zone(z) for z in ("us-east-1a", "eu-north-1c", "us-east-1-bos-1a", "us-gov-west-1a",
                                                 "", None)] == [
        "us-east-1", "eu-north-1", "us-east-1", "us-gov-west-1", None, None]


def test_a_spot_price_point_without_its_zone_or_time_is_quarantined_and_the_rest_lands(fresh_db, catalog):
    """The suite checks availability_zone_present and price_timestamp_present: such a point lands in quarantine with
    its reason, and the region's other prices land (before, the whole source failed on the first missing key). The
    fetch passes the region it asked for, so a point without its zone keeps its region."""
    whole = spot_item("us-east-1a", "p5.48xlarge", "10.240000", 5)
    no_zone = {k: v for k, v in spot_item("us-east-1b", "p5.48xlarge", "9.500000", 5).items()
               if k != "AvailabilityZone"}
    no_time = {k: v for k, v in spot_item("us-east-1c", "p5.48xlarge", "8.750000", 5).items() if k != "Timestamp"}
    rows = aws_spot.rows_from_pages([("p", {"SpotPriceHistory": [whole, no_zone, no_time]}, "us-east-1")])
    assert [(r["region"], r["availability_zone"], r["price_timestamp"]) for r in rows] == [
        ("us-east-1", "us-east-1a", "2026-11-30T05:00:00Z"), ("us-east-1", None, "2026-11-30T05:00:00Z"),
        ("us-east-1", "us-east-1c", None)]
    load = land(fresh_db, catalog, "aws_spot", rows, "run-1", AS_OF)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select row_no, list(expectation order by expectation) from ops.quarantine "
                            "group by row_no order by row_no").fetchall() == [
        (1, ["availability_zone_present"]), (2, ["price_timestamp_present"])]


def test_a_page_still_failing_after_every_retry_is_named(pricing):
    """The warnings named the page a retry was for, the error that ends the listing did not: page 1 came, page 2 was
    throttled five times."""
    pricing.add_response("get_products", aws_page(aws_product("p5.48xlarge", "55.0400000000"), next_token="page-2"),
                         {"ServiceCode": "AmazonEC2", "Filters": GPU})
    for _ in range(5):
        pricing.add_client_error("get_products", service_error_code="ThrottlingException", http_status_code=400,
                                 expected_params={"ServiceCode": "AmazonEC2", "Filters": GPU, "NextToken": "page-2"})
    with pytest.raises(LiveSourceError, match=r"^pricing.get_products us-east-1 'GPU instance': page 2: still "
                                              r"throttled \(ThrottlingException\) after 5 attempts$"):
        aws_pricing.fetch_live({"regions": ["us-east-1"]}, sleep=Sleeps())


@pytest.fixture
def aws_endpoint(monkeypatch):
    """A loopback endpoint that the real client of `_aws.client` sends its requests to (AWS_ENDPOINT_URL: the Stubber
    answers before botocore reads a body, and these tests are about the body): each POST gets the next of `bodies`,
    HTTP 200, as the JSON 1.1 protocol of the Price List API answers."""
    bodies: list[bytes] = []

    class Handler(QuietHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_body(bodies.pop(0), content_type="application/x-amz-json-1.1")

    server, url = serve_loopback(Handler)
    for name, value in {"AWS_ENDPOINT_URL": url,
                        "AWS_ACCESS_KEY_ID": FAKE_KEY_ID, "AWS_SECRET_ACCESS_KEY": FAKE_SECRET,
                        "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    yield bodies
    close_loopback(server)


def test_a_page_past_max_file_bytes_is_refused_before_it_is_parsed_and_the_next_listing_has_its_own_bound(
        aws_endpoint):
    """A review's finding: the boto3 sources bounded pages, not their size (a 5 MB page passed a 1 MiB limit). A
    PriceList item of 1,100,000 characters makes a page past 1 MiB (1,048,576 bytes); a small page passes, and a
    later listing on the same client is bounded by its own limits, not the first's."""
    from flows.sources._common import SourceLimitError, SourceLimits

    item = json.dumps({"product": {"sku": "S1", "attributes": {"pad": "x" * 1_100_000}}, "terms": {}})
    aws_endpoint += [json.dumps({"FormatVersion": "aws_v1", "PriceList": [item]}).encode(),
                     json.dumps({"FormatVersion": "aws_v1", "PriceList": ["{}"]}).encode(),
                     json.dumps({"FormatVersion": "aws_v1", "PriceList": [item]}).encode()]
    client = _aws.client("pricing", "us-east-1")
    with pytest.raises(SourceLimitError, match=r"^w: page 1: the response \(1,100,\d{3} bytes\) is larger than "
                                               r"max_file_bytes allows \(1,048,576 bytes = 1 MiB\)"):
        list(_aws.pages(client, "get_products", "w", limits=SourceLimits(max_file_bytes=1 << 20),
                        ServiceCode="AmazonEC2"))
    assert [page["PriceList"] for page in _aws.pages(
        client, "get_products", "w", limits=SourceLimits(max_file_bytes=1 << 20), ServiceCode="AmazonEC2")] == [["{}"]]
    [page] = _aws.pages(client, "get_products", "w", limits=SourceLimits(max_file_bytes=2 << 20),
                        ServiceCode="AmazonEC2")
    assert len(page["PriceList"][0]) > 1_100_000


def test_a_page_nested_past_pythons_recursion_limit_is_a_format_error_naming_it(aws_endpoint):
    """A review's finding: botocore parses a page with json.loads, which has no depth bound: RecursionError escaped,
    naming neither the listing nor the page."""
    from flows.sources._common import SourceFormatError

    aws_endpoint.append(b'{"PriceList": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with pytest.raises(SourceFormatError, match=r"^w: page 1: the response nests deeper than Python reads"):
        list(_aws.pages(_aws.client("pricing", "us-east-1"), "get_products", "w", ServiceCode="AmazonEC2"))
