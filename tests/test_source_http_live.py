"""Live fetching for azure_retail and gcp_billing against a scripted local HTTP server (no network).

Responses are written here in the APIs' real shapes: Azure Retail Prices pages (BillingCurrency ...
NextPageLink, Count) and Cloud Billing Catalog `services/{id}/skus` pages (skus, nextPageToken).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict, deque
from dataclasses import dataclass
from io import BytesIO

import pytest
from builders import QuietHandler, close_loopback, raw_server, serve_loopback
from tls_server import UntrustedServer

from flows.redaction import redact_text, redact_url
from flows.sources import _download, _http, azure_retail, gcp_billing
from flows.sources._common import LiveSourceError, SourceFormatError, SourceLimitError, SourceLimits

API_KEY = "AIzaSyTEST-not-a-real-key_0123456789"
ENV = {"GOOGLE_API_KEY": API_KEY}
GCE = "6F81-5844-456A"
TPU = "E000-3F24-B8AA"


# ---------------------------------------------------------------- a scripted HTTP server
@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    raw: str  # path + query as sent
    headers: dict[str, str]


class FakeApi:
    """ThreadingHTTPServer on 127.0.0.1:<free port>; each path answers from its own queue, in order."""

    def __init__(self):
        self.queues: dict[str, deque] = defaultdict(deque)
        self.requests: list[Seen] = []
        api = self

        class Handler(QuietHandler):
            def do_GET(self):
                split = urllib.parse.urlsplit(self.path)
                api.requests.append(Seen(split.path, urllib.parse.parse_qs(split.query, keep_blank_values=True),
                                         self.path, dict(self.headers)))
                if api.queues[split.path]:
                    status, headers, body, delay, reason = api.queues[split.path].popleft()
                else:
                    status, headers, body, delay, reason = 404, {}, b'{"error": {"message": "nothing scripted"}}', 0.0, None
                time.sleep(delay)
                try:
                    self.send_body(body, status, None, headers=headers, reason=reason)  # Content-Type: in headers
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self.httpd, self.base = serve_loopback(Handler)

    def add(self, path: str, body, *, status: int = 200, headers: dict | None = None, delay: float = 0.0,
            reason: str | None = None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
            headers = {"Content-Type": "application/json; charset=utf-8"} | (headers or {})
        if isinstance(body, str):
            body = body.encode()
        self.queues[path].append((status, headers or {}, body, delay, reason))

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


@pytest.fixture
def api():
    server = FakeApi()
    yield server
    close_loopback(server.httpd)


class Sleeps(list):
    """A recording stand-in for time.sleep."""

    def __call__(self, seconds):
        self.append(seconds)


# ---------------------------------------------------------------- payloads in the real shapes
def az_item(sku: str, price: float, *, product: str, meter: str, region: str, location: str,
            price_type: str = "Consumption", term: str | None = None) -> dict:
    """`meter` as Azure writes meterName ("ND96isrH100v5 Spot"); skuName is spelled with spaces."""
    sku_name = meter.replace("H100v5", " H100 v5")
    item = {
        "currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
        "armRegionName": region, "location": location, "effectiveStartDate": "2025-03-01T00:00:00Z",
        "meterId": f"00000000-0000-4000-8000-{len(meter) * 1000 + len(product):012d}",
        "meterName": meter, "productId": "DZH318ZTEST1", "skuId": "DZH318ZTEST1/0001",
        "availabilityId": None, "productName": product, "skuName": sku_name,
        "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8", "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour", "type": price_type, "isPrimaryMeterRegion": True, "armSkuName": sku,
    }
    if term:
        item["reservationTerm"] = term
    if price_type == "Consumption" and "Spot" not in meter and "Windows" not in product:
        item["savingsPlan"] = [{"unitPrice": round(price * 0.65, 4), "retailPrice": round(price * 0.65, 4),
                                "term": "1 Year"}]
    return item


def az_page(items: list[dict], next_link: str | None) -> dict:
    return {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
            "Items": items, "NextPageLink": next_link, "Count": len(items)}


def g_sku(sku_id: str, description: str, units: str, nanos: int, *, regions: tuple[str, ...],
          group: str = "GPU", usage: str = "OnDemand", service: str = GCE) -> dict:
    return {
        "name": f"services/{service}/skus/{sku_id}", "skuId": sku_id, "description": description,
        "category": {"serviceDisplayName": "Compute Engine" if service == GCE else "Cloud TPU",
                     "resourceFamily": "Compute", "resourceGroup": group, "usageType": usage},
        "serviceRegions": list(regions),
        "pricingInfo": [{
            "effectiveTime": "2026-10-01T00:00:00Z",
            "pricingExpression": {
                "usageUnit": "h", "displayQuantity": 1,
                "tieredRates": [{"startUsageAmount": 0,
                                 "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos}}],
                "usageUnitDescription": "hour", "baseUnit": "s", "baseUnitConversionFactor": 3600,
                "baseUnitDescription": "second"},
            "currencyConversionRate": 1, "summary": ""}],
        "serviceProviderName": "Google",
        "geoTaxonomy": {"type": "REGIONAL" if len(regions) == 1 else "MULTI_REGIONAL", "regions": list(regions)},
    }


def g_page(skus: list[dict], next_token: str = "") -> dict:
    return {"skus": skus, "nextPageToken": next_token}


AZ_PATH = "/api/retail/prices"
ND = "Standard_ND96isr_H100_v5"
NC = "Standard_NC40ads_H100_v5"


def az_filter(region: str) -> str:
    return (f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}'"
            f" and (armSkuName eq '{ND}' or armSkuName eq '{NC}')")


def az_next_link(base: str, region: str) -> str:
    """Page 2's link as Azure writes it: absolute, the whole query again, plus $skip."""
    query = urllib.parse.quote(az_filter(region), safe="")
    return f"{base}{AZ_PATH}?api-version=2023-01-01-preview&currencyCode=%27USD%27&$filter={query}&$skip=100"


# ---------------------------------------------------------------- redact
def test_a_certificate_that_does_not_verify_fails_at_once_not_after_five_tries(tmp_path):
    server = UntrustedServer(tmp_path)
    try:
        sleeps = Sleeps()
        with pytest.raises(LiveSourceError, match=r"^t: the certificate of https://127.0.0.1:\d+/x does not verify "
                                                  r"\(self.signed certificate\)$"):
            _http.get_json(server.base + "/x", what="t", sleep=sleeps)
        assert sleeps == [] and server.connections == 1
    finally:
        server.close()


def test_redact_hides_secret_query_values_in_any_case_and_keeps_the_rest():
    # one rule with redact_text (a name holding key, token, sig, credential, secret or password, or `code`): an API
    # gateway's subscription-key and a pre-signed URL's X-Amz-* are hidden too
    url = ("https://user:hunter2@example.com/v1/skus?key=AIza123&pageSize=5000&Access_Token=ya29.x&SIG=abc%2Fdef"
           "&$filter=armRegionName%20eq%20%27eastus%27&code=42&keys=k2&signature=s&token=t&api_key=k"
           "&subscription-key=S1&X-Amz-Credential=AKIA%2F1&X-Amz-Security-Token=T&X-Amz-Signature=beef"
           "&client_secret=C&currencyCode=USD&region=eastus")
    assert redact_url(url) == (
        "https://user:***@example.com/v1/skus?key=***&pageSize=5000&Access_Token=***&SIG=***"
        "&$filter=armRegionName%20eq%20%27eastus%27&code=***&keys=***&signature=***&token=***&api_key=***"
        "&subscription-key=***&X-Amz-Credential=***&X-Amz-Security-Token=***&X-Amz-Signature=***"
        "&client_secret=***&currencyCode=USD&region=eastus")
    assert redact_url(url) == redact_text(redact_url(url))
    assert redact_url("https://prices.azure.com/api/retail/prices") == "https://prices.azure.com/api/retail/prices"


# ---------------------------------------------------------------- azure_retail
def test_azure_two_regions_two_pages_each_follow_next_page_link(api):
    east, west = ("eastus", "US East"), ("westus3", "US West 3")
    for (region, location) in (east, west):
        api.add(AZ_PATH, az_page([
            az_item(ND, 98.32, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isrH100v5",
                    region=region, location=location),
            az_item(ND, 102.736, product="Virtual Machines NDsr H100 v5 Series Windows", meter="ND96isrH100v5",
                    region=region, location=location),
        ], az_next_link(api.base, region)))
        api.add(AZ_PATH, az_page([
            az_item(ND, 18.169536, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isrH100v5 Spot",
                    region=region, location=location),
            az_item(NC, 34920.0, product="Virtual Machines NCadsH100v5 Series", meter="NC40adsH100v5",
                    region=region, location=location, price_type="Reservation", term="1 Year"),
        ], None))
    sleeps = Sleeps()
    options = {"regions": ["eastus", "westus3"], "arm_sku_names": [ND, NC], "endpoint": api.base + AZ_PATH}

    rows = azure_retail.fetch_live(options, sleep=sleeps)

    assert api.paths() == [AZ_PATH] * 4 and sleeps == []
    for n, region in enumerate(["eastus", "eastus", "westus3", "westus3"]):
        query = api.requests[n].query
        assert query["$filter"] == [az_filter(region)], f"request {n}"
        assert query["api-version"] == ["2023-01-01-preview"] and query["currencyCode"] == ["'USD'"]
        assert query.get("$skip") == (["100"] if n % 2 else None)  # page 2 is the NextPageLink, as given
        # each meter once, from the region it is billed in (the API lists it again for others otherwise)
        assert query.get("meterRegion") == (None if n % 2 else ["'primary'"])
    assert len(rows) == 8
    by_ref = {r["source_ref"]: r for r in rows}
    spot = by_ref["azure retail prices westus3 page 2: Items[0]"]
    assert (spot["arm_region_name"], spot["meter_name"], spot["sku_name"], spot["retail_price"]) == (
        "westus3", "ND96isrH100v5 Spot", "ND96isr H100 v5 Spot", 18.169536)
    windows = by_ref["azure retail prices eastus page 1: Items[1]"]
    assert (windows["product_name"], windows["retail_price"], windows["unit_price"]) == (
        "Virtual Machines NDsr H100 v5 Series Windows", 102.736, 102.736)
    reserved = by_ref["azure retail prices eastus page 2: Items[1]"]
    # a Reservation row's price is the whole 1-year term, landed as given: 34,920 / 8,760 h = 3.986 per hour
    assert (reserved["price_type"], reserved["reservation_term"], reserved["retail_price"]) == (
        "Reservation", "1 Year", 34920.0)


def test_azure_pages_name_region_and_page(api):
    api.add(AZ_PATH, az_page([], api.base + AZ_PATH + "?$skip=100"))
    api.add(AZ_PATH, az_page([], None))
    wheres = [w for w, _ in azure_retail.pages_from_api({"regions": ["eastus"], "endpoint": api.base + AZ_PATH})]
    assert wheres == ["azure retail prices eastus page 1", "azure retail prices eastus page 2"]
    assert api.requests[0].query["$filter"] == ["serviceName eq 'Virtual Machines' and armRegionName eq 'eastus'"]
    assert api.requests[1].raw == AZ_PATH + "?$skip=100"  # the link is followed exactly, nothing added


def test_azure_a_next_page_link_back_to_an_earlier_page_stops_the_listing_at_once(api):
    """A NextPageLink that leads back to a page already fetched would loop until max_pages: the listing stops there,
    on the first page as on a later one (the first page's URL is the one requested: endpoint, then its query)."""
    first = (f"{api.base}{AZ_PATH}?api-version=2023-01-01-preview&currencyCode=%27USD%27&meterRegion=%27primary%27"
             f"&$filter={urllib.parse.quote(az_filter('eastus'), safe='')}")
    second = az_next_link(api.base, "eastus")
    # the first page again, as a link may write it: the parameters in another order, `$` and the quotes
    # percent-encoded, `+` for a space, and an OData $skip of 0
    written_otherwise = (f"{api.base}{AZ_PATH}?%24filter={urllib.parse.quote_plus(az_filter('eastus'))}"
                         f"&meterRegion='primary'&%24skip=0&currencyCode=%27USD%27&api-version=2023-01-01-preview")
    options = {"regions": ["eastus"], "arm_sku_names": [ND, NC], "endpoint": api.base + AZ_PATH}
    for back_to, page in ((first, 1), (second, 2), (written_otherwise, 1)):
        api.requests.clear()
        api.add(AZ_PATH, az_page([], second))
        api.add(AZ_PATH, az_page([], back_to))
        with pytest.raises(SourceFormatError, match=r"^azure retail prices eastus page 2\.NextPageLink: leads back to "
                                                    r"an earlier page \(.*\); stopping instead of looping$"):
            azure_retail.fetch_live(options, sleep=Sleeps())
        assert api.requests[0].raw == first.removeprefix(api.base), page  # the URL the link named, as requested
        assert len(api.requests) == 2, page  # neither page asked for again


def test_a_page_key_reads_a_url_as_the_page_it_names_not_as_it_is_written():
    """`_http.page_key`: the same page however a link writes it; another page (another $skip, path or host) differs."""
    page_1 = "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=a%20eq%20'b'"
    assert len({_http.page_key(url) for url in (
        page_1,
        "HTTPS://Prices.Azure.com/api/retail/prices?%24filter=a+eq+%27b%27&api-version=2023-01-01-preview",
        "https://prices.azure.com/api/retail/prices?$skip=0&$filter=a%20eq%20'b'&api-version=2023-01-01-preview",
        "https://prices.azure.com/api/retail/%70rices?api-version=2023-01-01-preview&$filter=a%20eq%20%27b%27",
        # as Azure writes its links: the https port spelled out; an OData option in another case; $skip=00
        "https://prices.azure.com:443/api/retail/prices?$Filter=a%20eq%20'b'&api-version=2023-01-01-preview&$skip=00",
    )}) == 1
    assert len({_http.page_key(url) for url in (
        page_1,
        page_1 + "&$skip=100",  # the next page
        page_1.replace("/prices?", "/other?"),
        page_1.replace("prices.azure.com", "example.com"),
        page_1.replace("eq%20'b'", "eq%20'c'"),
        page_1 + "&x=",  # a parameter more, even blank
        page_1.replace("prices.azure.com", "prices.azure.com:8443"),  # another port
        page_1.replace("api-version", "API-version"),  # a parameter of the API's own is named as written
    )}) == 8
    assert _http.page_key("https://h:port/x") == ("https", ("h:port", None), "/x", ())  # no port: the text
    # a $skip that is a digit to str.isdigit but no number to int(): another page, not an error
    assert _http.page_key("https://a/x?$skip=%C2%B2") == ("https", ("a", 443), "/x", (("$skip", "\u00b2"),))


def test_azure_unknown_or_missing_options_are_format_errors():
    with pytest.raises(SourceFormatError, match=r"unknown key 'region' \(allowed: regions, arm_sku_names, "
                                                r"endpoint, api_version\)"):
        azure_retail.fetch_live({"region": ["eastus"]})
    with pytest.raises(SourceFormatError, match=r"'regions': expected a non-empty list"):
        azure_retail.fetch_live({"regions": []})


# ---------------------------------------------------------------- gcp_billing
def gce_path(service: str = GCE) -> str:
    return f"/v1/services/{service}/skus"


def test_gcp_pages_follow_next_page_token_and_the_key_stays_secret(api, caplog):
    caplog.set_level(logging.INFO)
    api.add(gce_path(), g_page([
        g_sku("A1B2-0000-0001", "Nvidia H100 80GB GPU running in Iowa", "4", 200761250, regions=("us-central1",)),
        g_sku("A1B2-0000-0002", "A3 Instance Core running in Iowa", "0", 29300000, regions=("us-central1",),
              group="CPU"),
    ], next_token="CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"))
    api.add(gce_path(), g_page([
        g_sku("A1B2-0000-0003", "Nvidia H100 80GB GPU running in Americas", "9", 796550569,
              regions=("us-east4", "us-east5")),
    ]))
    rows = gcp_billing.fetch_live({"services": [GCE], "endpoint": api.base}, environ=ENV)

    first, second = api.requests
    assert first.query == {"pageSize": ["5000"], "currencyCode": ["USD"], "key": [API_KEY]}
    assert second.query == first.query | {"pageToken": ["CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"]}
    # 4 + 200,761,250 / 1e9 = 4.20076125; 0 + 29,300,000 / 1e9 = 0.0293; 9.796550569 once per region
    assert [(r["sku_id"], r["region"], r["price_usd"]) for r in rows] == [
        ("A1B2-0000-0001", "us-central1", 4.20076125),
        ("A1B2-0000-0002", "us-central1", 0.0293),
        ("A1B2-0000-0003", "us-east4", 9.796550569),
        ("A1B2-0000-0003", "us-east5", 9.796550569),
    ]
    assert rows[2]["source_ref"] == f"gcp billing services/{GCE}/skus page 2: skus[0]"
    assert all(API_KEY not in r["source_ref"] for r in rows)
    messages = [rec.getMessage() for rec in caplog.records]
    assert sum("GET " in m for m in messages) == 2 and any("key=***" in m for m in messages)
    assert all(API_KEY not in m for m in messages)
    assert "gcp billing: kept 3 of 3 SKUs read" in caplog.text


def test_gcp_default_services_are_compute_engine_and_cloud_tpu(api):
    api.add(gce_path(GCE), g_page([g_sku("A1B2-0000-0004", "TPU v5p chip running in Iowa", "4", 200000000,
                                         regions=("us-central1",), group="TPU")]))
    api.add(gce_path(TPU), g_page([g_sku("A1B2-0000-0005", "Tpu-v4 Pod running in Central US", "3", 220000000,
                                         regions=("us-central2",), group="TPU", service=TPU)]))
    rows = gcp_billing.fetch_live({"endpoint": api.base}, environ=ENV)
    assert api.paths() == [gce_path(GCE), gce_path(TPU)]
    assert [(r["description"], r["price_usd"]) for r in rows] == [
        ("TPU v5p chip running in Iowa", 4.2), ("Tpu-v4 Pod running in Central US", 3.22)]


def test_gcp_filters_keep_declared_skus_and_regions_and_say_how_many(api, caplog):
    caplog.set_level(logging.INFO, logger="flows.sources.gcp_billing")
    api.add(gce_path(), g_page([
        g_sku("A1B2-0000-0011", "Nvidia H100 80GB GPU running in Iowa", "4", 200761250, regions=("us-central1",)),
        g_sku("A1B2-0000-0012", "A3 Instance Core running in Iowa", "0", 29300000, regions=("us-central1",),
              group="CPU"),
        g_sku("A1B2-0000-0013", "Nvidia H100 80GB GPU running in Americas", "9", 796550569,
              regions=("us-east4", "us-east5", "us-west1")),
        g_sku("A1B2-0000-0014", "TPU v5p chip running in Netherlands", "700", 0, regions=("europe-west4",),
              group="TPU"),
    ], next_token="page-2"))
    api.add(gce_path(), g_page([
        g_sku("A1B2-0000-0015", "TPU v5e chip running in Iowa", "1", 200000000, regions=("us-central1",),
              group="TPU"),
        g_sku("A1B2-0000-0016", "TPU v5p chip running in Iowa", "4", 200000000, regions=("us-central1",),
              group="TPU"),
    ]))
    options = {"services": [GCE], "endpoint": api.base, "description_contains": ["h100", "TPU V5P"],
               "regions": ["us-central1", "us-east5"]}
    rows = gcp_billing.fetch_live(options, environ=ENV)
    # kept: H100 Iowa, H100 Americas (us-east5 only), v5p Iowa; dropped: A3 core and v5e (description),
    # v5p Netherlands (region)
    assert [(r["sku_id"], r["region"], r["source_ref"].rsplit(" ", 1)[-1]) for r in rows] == [
        ("A1B2-0000-0011", "us-central1", "skus[0]"),
        ("A1B2-0000-0013", "us-east5", "skus[2]"),
        ("A1B2-0000-0016", "us-central1", "skus[1]"),
    ]
    assert "gcp billing: kept 3 of 6 SKUs read" in caplog.text


def test_gcp_missing_api_key_and_unknown_options(api):
    with pytest.raises(LiveSourceError, match=r"^gcp billing: no API key: set GOOGLE_API_KEY \(a Google Cloud API "
                                              r"key with the Cloud Billing API enabled\)$"):
        gcp_billing.fetch_live({"endpoint": api.base}, environ={})
    with pytest.raises(LiveSourceError, match=r"set HWEVAL_GCP_KEY"):
        gcp_billing.fetch_live({"endpoint": api.base, "api_key_env": "HWEVAL_GCP_KEY"}, environ=ENV)
    with pytest.raises(SourceFormatError, match=r"unknown key 'service' \(allowed: services, api_key_env, "
                                                r"endpoint, description_contains, regions\)"):
        gcp_billing.fetch_live({"service": [GCE]}, environ=ENV)
    assert api.requests == []


def test_gcp_access_denied_is_not_retried_and_hides_the_key(api, caplog):
    caplog.set_level(logging.INFO)
    api.add(gce_path(), {"error": {
        "code": 403, "status": "PERMISSION_DENIED",
        "message": f"Cloud Billing API has not been used in project 123456 before or it is disabled (key {API_KEY})."}},
        status=403)
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError) as err:
        gcp_billing.fetch_live({"services": [GCE], "endpoint": api.base}, environ=ENV, sleep=sleeps)
    text = str(err.value)
    assert text.startswith(f"gcp billing services/{GCE}/skus page 1: access denied (HTTP 403) from ")
    assert "key=***" in text and "Cloud Billing API has not been used in project 123456" in text
    assert API_KEY not in text and API_KEY not in caplog.text
    assert len(api.requests) == 1 and sleeps == []


# ---------------------------------------------------------------- get_json: retries and bad bodies
def test_429_with_retry_after_is_retried_after_that_many_seconds(api, caplog):
    api.add("/x", {"error": {"message": "Too many requests"}}, status=429, headers={"Retry-After": "2"})
    api.add("/x", {"ok": True})
    sleeps = Sleeps()
    with caplog.at_level(logging.WARNING, logger="flows.sources._http"):
        assert _http.get_json(api.base + "/x", params={"key": "s3cret"}, what="t", sleep=sleeps) == {"ok": True}
    assert sleeps == [2.0] and len(api.requests) == 2
    assert "t: HTTP 429: Too many requests from" in caplog.text and "retry 1 of 5 in 2.0s" in caplog.text
    assert "s3cret" not in caplog.text


def test_503_past_the_retry_budget_names_the_attempts(api):
    for _ in range(3):
        api.add("/x", "Service Unavailable", status=503)
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"^t: gave up after 3 attempts to GET http://127\.0\.0\.1:\d+/x\?"
                                              r"key=\*\*\*; last: HTTP 503: Service Unavailable$"):
        _http.get_json(api.base + "/x", params={"key": "s3cret"}, what="t", retries=2, backoff_s=0.5, sleep=sleeps)
    assert sleeps == [0.5, 1.0] and len(api.requests) == 3


def test_network_errors_and_timeouts_are_retried(api):
    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/x"
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"gave up after 2 attempts .*; last: network error: "):
        _http.get_json(closed, what="t", retries=1, sleep=sleeps)
    assert sleeps == [1.0]
    api.add("/slow", {"late": True}, delay=1.0)
    api.add("/slow", {"ok": True})
    assert _http.get_json(api.base + "/slow", what="t", timeout_s=0.2, sleep=sleeps) == {"ok": True}
    assert sleeps == [1.0, 1.0]


def test_other_4xx_fails_at_once_with_the_server_message(api):
    api.add("/x", {"Error": {"Code": "BadRequest", "Message": "Invalid OData filter"}}, status=400)
    with pytest.raises(LiveSourceError, match=r"^t: HTTP 400 Bad Request from .*: Invalid OData filter$"):
        _http.get_json(api.base + "/x", what="t", sleep=Sleeps())
    assert len(api.requests) == 1


def test_a_servers_reason_phrase_and_error_body_are_cut_and_their_control_characters_seen(api):
    """A review's finding: the reason phrase went into the error whole and as it came (60,000 characters into every
    page's banner; an escape sequence that cleared the terminal the run's log was read in). Now one line of at most
    REASON_CHARS (100) characters, and the body's excerpt, with each control character written as {U+...}."""
    api.add("/x", "denied\x1b[31m here", status=400, reason="Bad\x1b[2J\rX" + "A" * 60_000)
    with pytest.raises(LiveSourceError) as raised:
        _http.get_json(api.base + "/x", what="t", sleep=Sleeps())
    message = str(raised.value)
    # on one line (the carriage return is white space: a space), "Bad{U+001B}[2J X" is 16 characters, then 84 of the
    # A's: 100; and the length it had once on one line and seen, 9 + 60,000 + 7 (ESC's 1 character written as 8)
    assert message.startswith("t: HTTP 400 Bad{U+001B}[2J X" + "A" * 84 + "... (60,016 characters) from ")
    assert message.endswith(": denied{U+001B}[31m here") and "\x1b" not in message and "\r" not in message
    assert len(message) < 300


def test_a_reason_phrase_that_echoes_the_requests_key_has_it_masked(api):
    """A review's finding: the body's excerpt was scrubbed of the request's secrets, the reason phrase was not (a GCP
    key travels in `key=`, and an error may quote it back)."""
    api.add(gce_path(), "bad", status=400, reason=f"API key {API_KEY} not valid")
    with pytest.raises(LiveSourceError) as raised:
        gcp_billing.fetch_live({"services": [GCE], "endpoint": api.base}, environ=ENV, sleep=Sleeps())
    message = str(raised.value)
    assert message.startswith(f"gcp billing services/{GCE}/skus page 1: HTTP 400 API key *** not valid from ")
    assert API_KEY not in message


def test_an_error_body_that_trickles_in_is_read_no_longer_than_a_body_may_take(monkeypatch):
    """A review's finding: an error's body was read whole, however slowly it came (a byte within each read's timeout:
    a run held for hours). Read as a body is, it stops at MAX_RESPONSE_S (0.3 s here) with what came by then: of 300
    bytes, a byte every 0.05 s (15 s), about 7."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                      + b"x" * 300, trickle_s=0.05)
    with pytest.raises(LiveSourceError, match=r"^t: HTTP 400 Bad Request from http://127\.0\.0\.1:\d+/x: x+$"
                       ) as raised:
        _http.get_json(base + "/x", what="t", retries=0, timeout_s=5, sleep=Sleeps())
    assert 1 <= str(raised.value).count("x") - 1 < 100  # one x is the path's


def test_a_next_page_link_that_is_no_url_fails_at_once_not_after_retries(api):
    """A review's finding: http.client refuses a URL with a space (InvalidURL, an HTTPException) before anything is
    sent, and get_json took that for a network error: five retries, 31 s of waits, then "network error"."""
    region = "eastus"
    api.add("/api/retail/prices", az_page([], f"{api.base}/api/retail/prices?$skip=100 &x=1"))
    sleeps = Sleeps()
    with pytest.raises(LiveSourceError, match=r"^azure retail prices eastus page 2: not a URL that can be fetched: "
                                              r"http://127\.0\.0\.1:\d+/api/retail/prices\?\$skip=100 &x=1 \(URL "
                                              r"can't contain control characters"):
        azure_retail.fetch_live({"regions": [region], "endpoint": f"{api.base}/api/retail/prices"}, sleep=sleeps)
    assert sleeps == [] and len(api.requests) == 1


def test_a_sources_error_is_kept_at_most_max_error_chars_with_its_secrets_masked_and_control_characters_seen():
    """Whoever wrote it, a batch's error (ops.source_loads.error, the pages' banner, the command line) is bounded
    once, as the batch is made: 2,000 characters and how long it was."""
    from flows.redaction import MAX_ERROR_CHARS
    from flows.source_batches import SourceBatch

    error = "LiveSourceError: Authorization: Bearer abc.def-123456\x07 " + "B" * 10_000
    batch = SourceBatch("s", "azure_retail", "azure_retail", [], None, error=error)
    assert MAX_ERROR_CHARS == 2_000
    # the header's value masked to the line's end (redact_text), so the bell and the B's are gone with it
    assert batch.error == "LiveSourceError: Authorization: ***"
    long = SourceBatch("s", "azure_retail", "azure_retail", [], None, error="x\x1b" + "B" * 10_000)
    # "x{U+001B}" (9 characters) and 1,991 B's: 2,000, then the length after the escape, 10,009
    assert long.error == "x{U+001B}" + "B" * 1_991 + "... (10,009 characters)"


def test_a_page_that_is_not_json_is_a_format_error_naming_the_redacted_url(api):
    api.add(f"/v1/services/{GCE}/skus", "<html><body>Sign in</body></html>", headers={"Content-Type": "text/html"})
    with pytest.raises(SourceFormatError, match=rf"^gcp billing services/{GCE}/skus page 1: response from "
                                                rf"http://127\.0\.0\.1:\d+/v1/services/{GCE}/skus\?pageSize=5000&"
                                                r"currencyCode=USD&key=\*\*\* is not JSON") as err:
        gcp_billing.fetch_live({"services": [GCE], "endpoint": api.base}, environ=ENV)
    assert API_KEY not in str(err.value)


# ---------------------------------------------------------------- where a request goes, and how long it may take
def test_only_http_urls_are_fetched_and_a_next_page_link_elsewhere_is_not_followed(api, tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("[default]\naws_secret_access_key = fakeSECRET\n")
    with pytest.raises(LiveSourceError, match=r"^t: not a URL that can be fetched: file://.*credentials \(expected "
                                              r"http:// or https://\)$"):
        _http.get_json(secret.as_uri(), what="t", sleep=Sleeps())
    # a Retail Prices page whose NextPageLink names a local file, or another host: the listing stops there, and the
    # file is never read (it used to be, and its first 300 characters went into the source's error)
    port = api.base.rsplit(":", 1)[1]
    for link in (secret.as_uri(), f"http://localhost:{port}{AZ_PATH}?$skip=100"):
        api.add(AZ_PATH, az_page([], link))
        pages = azure_retail.pages_from_api({"regions": ["eastus"], "endpoint": api.base + AZ_PATH})
        with pytest.raises(SourceFormatError, match=r"^azure retail prices eastus page 1\.NextPageLink: the next "
                                                    r"page's link points elsewhere than the listing's endpoint") as err:
            list(pages)
        assert "fakeSECRET" not in str(err.value)
    assert api.paths() == [AZ_PATH, AZ_PATH]  # page 1 twice, nothing followed


def test_credentials_go_to_the_url_asked_for_never_on_to_a_redirect(api):
    port = api.base.rsplit(":", 1)[1]
    api.add("/start", "", status=302, headers={"Location": f"http://localhost:{port}/landing"})  # another host
    api.add("/landing", {"ok": True})
    got = _http.get_json(api.base + "/start", headers={"Authorization": "Bearer ya29.SECRET"}, what="t",
                         sleep=Sleeps())
    assert got == {"ok": True} and api.paths() == ["/start", "/landing"]
    assert api.requests[0].headers["Authorization"] == "Bearer ya29.SECRET"
    assert "Authorization" not in api.requests[1].headers
    # a redirect on the same scheme, host and port keeps them (the API moved a path, not the token's audience)
    api.add("/moved", "", status=301, headers={"Location": "/here"})
    api.add("/here", {"ok": 2})
    assert _http.get_json(api.base + "/moved", headers={"Authorization": "Bearer ya29.SECRET"}, what="t",
                          sleep=Sleeps()) == {"ok": 2}
    assert api.requests[-1].path == "/here" and api.requests[-1].headers["Authorization"] == "Bearer ya29.SECRET"
    # and a redirect from https down to http is refused
    request = urllib.request.Request("https://management.azure.com/skus")
    with pytest.raises(urllib.error.HTTPError, match="redirect from https to http://evil.example/skus refused"):
        _http._NoDowngrade().redirect_request(request, BytesIO(), 302, "Found", {}, "http://evil.example/skus")


def test_a_chunked_body_is_bounded_whatever_its_content_length_says():
    # Content-Length 2, but chunked: http.client reads the chunks (RFC 9112 6.3), 3 x 512 KiB past the 1 MiB limit
    chunk = b"0" * (512 * 1024)
    body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"
    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                      b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body)
    with pytest.raises(SourceLimitError, match=r"^t: response from http://127\.0\.0\.1:\d+/x: the body is larger than "
                                               r"max_file_bytes allows \(1,048,576 bytes = 1 MiB\)"):
        _http.get_json(base + "/x", what="t", sleep=Sleeps(), limits=SourceLimits(max_file_bytes=1 << 20))


def given_up_at_its_deadline(url: str, seconds: str = "0.3", within_s: float = 2) -> None:
    """get_json of `url` (one attempt) gives up with the TimeoutError of a response past MAX_RESPONSE_S (`seconds`, as
    the caller set it), within `within_s`: not when the server would have finished."""
    started = time.monotonic()
    with pytest.raises(LiveSourceError, match=r"^t: gave up after 1 attempts .*; last: network error: TimeoutError: "
                                              rf"the response took more than {re.escape(seconds)} s \(MAX_RESPONSE_S\) "
                                              r"to arrive$"):
        _http.get_json(url, what="t", retries=0, timeout_s=5, sleep=Sleeps())
    assert time.monotonic() - started < within_s


def test_a_response_that_trickles_in_is_given_up_at_its_deadline(monkeypatch):
    # a byte every 0.05 s: each read is quick (timeout_s never fires), but the whole response may take only
    # MAX_RESPONSE_S (600 s; 0.3 s here); its 200-byte body would take 10 s
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                      + b" " * 200, trickle_s=0.05)
    given_up_at_its_deadline(base + "/x", within_s=5)


# its last header a byte at a time: cut there, the response is one http.client would read as whole, its headers
# ended (by the close) and its body read to the close
HEADERS_A_BYTE_AT_A_TIME = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nX-Padding: "
                            + b"a" * 200 + b"\r\n\r\n{}")
PADDING = b"X-Padding: "


def test_a_header_that_trickles_in_is_cut_at_the_responses_deadline(monkeypatch):
    """A header a byte every 0.05 s: each read is quick (timeout_s never fires) and http.client reads headers for as
    long as they come (this 200-byte one would take 10 s). The connection is shut at MAX_RESPONSE_S (0.3 s here), and
    that is the error, not a response whose headers ended early."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(HEADERS_A_BYTE_AT_A_TIME, trickle_s=0.05, trickle_from=PADDING)
    given_up_at_its_deadline(base + "/x", within_s=3)


def test_a_connection_made_once_its_deadline_has_passed_is_shut_at_once(monkeypatch):
    """The deadline can pass before the connection exists (a source's max_fetch_s a moment from its end): the socket
    is shut as it is made, not left unwatched. MAX_RESPONSE_S 0 here: past as the request starts."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.0)
    base = raw_server(HEADERS_A_BYTE_AT_A_TIME, trickle_s=0.05, trickle_from=PADDING)
    given_up_at_its_deadline(base + "/x", seconds="0")


def test_a_body_that_stops_coming_is_cut_at_the_responses_deadline(monkeypatch):
    """A body's first byte, then nothing for 3 s: each read waits up to timeout_s (5 s), and a check between reads
    comes only after one. The connection is shut at MAX_RESPONSE_S (0.3 s here) instead."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
                      trickle_s=3.0)
    given_up_at_its_deadline(base + "/x", within_s=2)


def test_a_tls_handshake_that_trickles_in_is_cut_at_the_responses_deadline(monkeypatch):
    """A server that answers a TLS ClientHello with a record header, then a byte every 0.05 s: the handshake reads each
    within timeout_s, for as long as they come (3 s here). Its TLS socket is shut at MAX_RESPONSE_S (0.3 s)."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        with listener, listener.accept()[0] as conn:
            conn.recv(4096)  # the ClientHello
            try:
                conn.sendall(b"\x16\x03\x03\x40\x00")  # a handshake record of 16 KiB, to come
                for _ in range(60):
                    conn.sendall(b"\x02")
                    time.sleep(0.05)
            except OSError:  # the client gave up
                pass

    threading.Thread(target=answer, daemon=True).start()
    given_up_at_its_deadline(f"https://127.0.0.1:{listener.getsockname()[1]}/x", within_s=2)


def test_an_error_body_that_stops_coming_is_cut_at_the_responses_deadline_and_its_status_said(monkeypatch):
    """An error's status at once, its body's first byte, then nothing for 3 s: read after the request's cut ended, the
    next read waited up to timeout_s (5 s; the server's next byte came at 3 s). Read inside the cut, the connection is
    shut at MAX_RESPONSE_S (0.3 s here), and the error is the server's answer with what came of its body, not a
    timeout."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nxyz",
                      trickle_s=3.0)
    started = time.monotonic()
    with pytest.raises(LiveSourceError, match=r"^t: HTTP 400 Bad Request from http://127\.0\.0\.1:\d+/e: x$"
                       ) as raised:
        _http.get_json(base + "/e", what="t", retries=0, timeout_s=5, sleep=Sleeps())
    assert time.monotonic() - started < 2
    # the error, kept behind the message (its context), holds no open response
    assert isinstance(raised.value.__context__, urllib.error.HTTPError) and raised.value.__context__.fp.closed


@pytest.mark.parametrize("answered", ["before the deadline", "after it", "never"])
def test_a_cut_raises_an_error_answered_in_time_as_it_is_and_turns_any_other_into_a_timeout_closed(answered):
    """Inside a cut, an HTTP error whose answer came before the deadline is that error (its response the caller's to
    read and close). One said to have come once the cut had fired (its headers may be cut short: http.client reads a
    shut connection as headers that ended), or never, is a TimeoutError, its response closed, not left to the garbage
    collector."""
    body = BytesIO(b"error page")
    error = urllib.error.HTTPError("http://h/x", 503, "Unavailable", {}, body)
    in_time = answered == "before the deadline"
    with pytest.raises(urllib.error.HTTPError if in_time else TimeoutError) as raised, \
            _http._cut_at(time.monotonic() + 0.2, "the deadline passed") as cut:
        if in_time:
            cut.answer_came()
        while not cut.fired:  # its timer, due in 0.2 s
            time.sleep(0.01)
        if answered == "after it":
            cut.answer_came()
        raise error
    assert raised.value is error if in_time else str(raised.value) == "the deadline passed"
    assert body.closed is not in_time


def test_an_error_status_whose_headers_trickle_in_is_cut_as_a_timeout_not_taken_for_the_error(monkeypatch):
    """A 503's status line at once, then its headers a byte every 0.05 s: cut at MAX_RESPONSE_S (0.3 s), http.client
    reads the shut connection as headers that ended and raises the HTTP error. Its headers cut short (a Retry-After
    lost), it is a timeout, as a 200 cut there is, not the server's answer."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 0.3)
    base = raw_server(HEADERS_A_BYTE_AT_A_TIME.replace(b"200 OK", b"503 Service Unavailable"), trickle_s=0.05,
                      trickle_from=PADDING)
    given_up_at_its_deadline(base + "/x", within_s=3)


def test_a_cut_whose_timer_fires_as_its_request_ends_shuts_nothing():
    """A timer past cancel()'s reach when the request ended (a thread switch at the deadline) must not shut the sockets
    after it: open_url has handed its response to the caller, who is reading it."""
    ours, server = socket.socketpair()
    with ours, server:
        with _http._cut_at(time.monotonic() + 60, "late") as cut:
            cut.watch(ours)
        cut.fire()  # as that timer would, now
        server.sendall(b"x")
        assert ours.recv(1) == b"x" and not cut.fired


def test_a_cut_whose_timer_cannot_start_leaves_no_cut_behind(monkeypatch):
    """No thread to spare: the error is raised, and the thread's later requests are not watched by a dead cut."""
    def no_thread(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Timer, "start", no_thread)
    with pytest.raises(RuntimeError, match="can't start new thread"), _http._cut_at(time.monotonic() + 60, "why"):
        pass
    assert getattr(_http._cutting, "cut", None) is None


def test_a_response_within_its_deadline_is_not_cut_after_it(monkeypatch):
    """The cut is for the request under way only: a response read whole in time is the response, and its timer does
    not outlive the request (a later request in the thread is not cut by it)."""
    monkeypatch.setattr(_http, "MAX_RESPONSE_S", 5.0)
    short = HEADERS_A_BYTE_AT_A_TIME.replace(b"a" * 200, b"a")  # 18 bytes a byte at a time: 0.1 s
    base = raw_server(short, short, trickle_s=0.005, trickle_from=PADDING)
    assert _http.get_json(base + "/x", what="t", retries=0, timeout_s=5, sleep=Sleeps()) == {}
    assert _http.get_json(base + "/x", what="t", retries=0, timeout_s=5, sleep=Sleeps()) == {}
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    for timer in timers:  # cancelled: each ends at once, not at its deadline 5 s on
        timer.join(timeout=1)
    assert not [t for t in timers if t.is_alive()]


@pytest.mark.parametrize("part", ["body", "header"])
@pytest.mark.parametrize("reader", ["get_json", "download"])
def test_a_response_that_trickles_in_is_cut_at_the_sources_max_fetch_s(reader, part, tmp_path):
    # a byte every 0.05 s of a 200-byte body or header (10 s), each read quick; the fetch may take 0.5 s in all. Before
    # the offer file's download read what had come (read1), it waited for whole 1 MiB chunks and ran on past the bound;
    # before stop 64, a header had only its reads' timeout
    body = b" " * 200
    base = raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n"
                      b"Connection: close\r\n\r\n" + body, trickle_s=0.05) if part == "body" else raw_server(
        HEADERS_A_BYTE_AT_A_TIME, trickle_s=0.05, trickle_from=PADDING)
    limits = SourceLimits(max_fetch_s=0.5, source_id="s").started()
    started = time.monotonic()
    # cut at the deadline itself: the fetch is past it, or its retry would be (the download says which)
    with pytest.raises(SourceLimitError, match=r"longer than max_fetch_s allows \(0\.5 s\)"):
        if reader == "get_json":
            _http.get_json(base + "/x", what="t", retries=0, timeout_s=5, sleep=Sleeps(), limits=limits)
        else:
            _download.download(base + "/index.csv", tmp_path / "index.csv", timeout_s=5, sleep=Sleeps(),
                               limits=limits)
    assert time.monotonic() - started < 3


def test_a_body_cut_short_of_its_content_length_is_retried():
    # the connection closes after 12 of 40 bytes: a network error to retry, not a page that is "not JSON"
    whole = b'{"Items": [], "NextPageLink": null, "n": 1}'
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
    base = raw_server(head % len(whole) + whole[:12], head % len(whole) + whole)
    sleeps = Sleeps()
    assert _http.get_json(base + "/x", what="t", sleep=sleeps) == {"Items": [], "NextPageLink": None, "n": 1}
    assert sleeps == [1.0]


def test_the_offer_files_download_fetches_http_urls_only(tmp_path):
    local = tmp_path / "index.csv"
    local.write_text("not fetched\n")
    with pytest.raises(LiveSourceError, match=r"^not a URL that can be fetched: file://.*index\.csv \(expected "
                                              r"http:// or https://\)$"):
        _download.download(local.as_uri(), tmp_path / "copy.csv", sleep=Sleeps())
    assert not (tmp_path / "copy.csv").exists()
