"""Sources, and the regions of a live source, are fetched side by side within each cloud's `fetch_concurrency`
(sources.yaml); results keep the declared order, and a source that fails is stale without holding the others.

A loopback server answers Azure Retail Prices requests after a delay and notes when each arrived and when it was
answered: concurrency is read from those times (requests in flight together), not from the wall clock of a loaded
machine."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from builders import QuietHandler, close_loopback, serve_loopback
from test_source_http_live import az_item, az_page

from flows.catalog import CatalogError, load_catalog
from flows.catalog_models import FetchConcurrency, SourcesFile
from flows.paths import PROJECT_ROOT
from flows.sources import azure_retail
from flows.sources._concurrency import CloudSlots, FetchSlots, in_order

DENIED = "denied-region"  # a region the server refuses (HTTP 403: not retried)


@dataclass(frozen=True)
class Request:
    region: str
    arrived_at: float  # time.monotonic() on the server
    answered_at: float  # taken before the answer is written: no later request of the same client can arrive earlier


class SlowPrices:
    """Azure Retail Prices on 127.0.0.1 answering each region's request after `delay_s[region]` (else `default_s`)
    with one item for that region."""

    def __init__(self, default_s: float, delay_s: dict[str, float] | None = None):
        self.default_s, self.delay_s = default_s, delay_s or {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        api = self

        class Handler(QuietHandler):
            def do_GET(self):
                arrived_at = time.monotonic()
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                region = re.search(r"armRegionName eq '([^']+)'", query["$filter"][0]).group(1)
                if region == DENIED:
                    status, body = 403, b'{"error": {"message": "denied"}}'
                else:
                    time.sleep(api.delay_s.get(region, api.default_s))
                    status, body = 200, azure_page(region)
                with api._lock:
                    api.requests.append(Request(region, arrived_at, time.monotonic()))
                self.send_body(body, status)

        self.httpd, base = serve_loopback(Handler)
        self.endpoint = f"{base}/api/retail/prices"

    def close(self) -> None:
        close_loopback(self.httpd)

    def answered(self) -> list[Request]:
        return sorted((r for r in self.requests if r.region != DENIED), key=lambda r: r.arrived_at)

    def most_in_flight(self) -> int:
        """The most answered requests the server held at one time."""
        answered = self.answered()
        return max(sum(1 for other in answered if other.arrived_at <= r.arrived_at < other.answered_at)
                   for r in answered)


def azure_page(region: str) -> bytes:
    return json.dumps(az_page([az_item("Standard_ND96isr_H100_v5", 98.32, product="Virtual Machines NDisrH100v5 "
                                       "Series", meter="ND96isrH100v5", region=region, location=region)],
                              None)).encode()


@pytest.fixture
def slow_prices():
    servers: list[SlowPrices] = []

    def start(default_s: float, delay_s: dict[str, float] | None = None) -> SlowPrices:
        servers.append(SlowPrices(default_s, delay_s))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


# ---------------------------------------------------------------- regions of one live source
@pytest.mark.slow  # waits on a slow server (~4 s): make test-slow
def test_regions_are_fetched_side_by_side_and_rows_come_in_region_order(slow_prices):
    regions = ["r1", "r2", "r3", "r4"]
    # the first region answers last; every request must arrive within 3 s of the first (1.5 s was thin for 4 threads
    # on a loaded 2-core machine)
    api = slow_prices(3.0, {"r1": 3.5})
    rows = azure_retail.fetch_live({"regions": regions, "endpoint": api.endpoint}, slots=CloudSlots("azure", 4))
    assert [row["arm_region_name"] for row in rows] == regions
    assert api.most_in_flight() == 4  # every request arrived before the first was answered


def test_a_limit_of_one_fetches_one_region_after_another(slow_prices):
    api = slow_prices(0.3)
    rows = azure_retail.fetch_live({"regions": ["r1", "r2", "r3"], "endpoint": api.endpoint},
                                   slots=CloudSlots("azure", 1))
    assert [row["arm_region_name"] for row in rows] == ["r1", "r2", "r3"]
    answered = api.answered()
    assert [r.region for r in answered] == ["r1", "r2", "r3"]
    assert all(later.arrived_at >= earlier.answered_at for earlier, later in itertools.pairwise(answered))


def test_a_limit_of_two_keeps_two_regions_in_flight(slow_prices):
    api = slow_prices(0.4)
    azure_retail.fetch_live({"regions": ["r1", "r2", "r3", "r4"], "endpoint": api.endpoint},
                            slots=CloudSlots("azure", 2))
    assert api.most_in_flight() == 2


def test_without_slots_regions_are_fetched_one_after_another_as_before(slow_prices):
    api = slow_prices(0.1)
    azure_retail.fetch_live({"regions": ["r1", "r2", "r3"], "endpoint": api.endpoint})
    assert api.most_in_flight() == 1


# ---------------------------------------------------------------- in_order and the slots, without a network
def test_results_come_in_item_order_whatever_finishes_first():
    last_done = threading.Event()

    def fetch_one(item: int) -> str:
        if item == 0:
            assert last_done.wait(5)  # the first item finishes only after the last one
        if item == 3:
            last_done.set()
        return f"rows of {item}"

    assert in_order(fetch_one, [0, 1, 2, 3], CloudSlots("aws", 4)) == ["rows of 0", "rows of 1", "rows of 2",
                                                                      "rows of 3"]


def test_the_first_failure_in_item_order_is_raised():
    def fetch_one(item: int) -> None:
        if item == 0:
            time.sleep(0.2)  # fails after item 1 has failed
        raise ValueError(f"region {item} failed")

    with pytest.raises(ValueError, match="region 0 failed"):
        in_order(fetch_one, [0, 1, 2], CloudSlots("aws", 3))


def test_sources_of_one_cloud_share_its_slots():
    slots = CloudSlots("azure", 2)
    lock, in_flight, most = threading.Lock(), [0], [0]

    def fetch_one(item: int) -> int:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return item

    sources = [threading.Thread(target=in_order, args=(fetch_one, list(range(4)), slots)) for _ in range(3)]
    for source in sources:
        source.start()
    for source in sources:
        source.join()
    assert most[0] == 2  # three sources of two regions' worth each, never more than azure's 2 at once


def test_a_cloud_without_a_limit_of_its_own_uses_the_default():
    slots = FetchSlots({"aws": 4, "azure": 2, "gcp": 2, "default": 3})
    assert (slots.of("azure").limit, slots.of(None).limit, slots.of("onprem").limit) == (2, 3, 3)
    assert repr(slots) == "fetches at once: aws 4, azure 2, gcp 2, default 3"


# ---------------------------------------------------------------- sources.yaml
def test_fetch_concurrency_defaults_when_sources_yaml_leaves_it_out(catalog_copy):
    path = catalog_copy / "sources.yaml"
    sources = yaml.safe_load(path.read_text())
    del sources["fetch_concurrency"]
    path.write_text(yaml.safe_dump(sources, sort_keys=False))
    assert load_catalog(catalog_copy).sources.fetch_concurrency.model_dump() == {"aws": 4, "azure": 2, "gcp": 2,
                                                                                 "default": 4}


def test_the_defaults_are_stated_where_the_setting_is_declared():
    stated = ", ".join(f"{cloud} {limit}" for cloud, limit in FetchConcurrency().model_dump().items())
    assert stated == "aws 4, azure 2, gcp 2, default 4"
    assert f"Defaults: {stated}" in " ".join((PROJECT_ROOT / "catalogs" / "sources.yaml").read_text().split())
    assert f"default {stated}" in SourcesFile.model_fields["fetch_concurrency"].description


@pytest.mark.parametrize(("setting", "message"), [
    ({"azure": 0}, r"sources.yaml: fetch_concurrency.azure: Input should be greater than or equal to 1"),
    ({"oracle": 2}, r"sources.yaml: fetch_concurrency.oracle: unknown key"),
])
def test_a_wrong_fetch_concurrency_names_the_file_and_key(catalog_copy, setting, message):
    path = catalog_copy / "sources.yaml"
    sources = yaml.safe_load(path.read_text())
    sources["fetch_concurrency"] = setting
    path.write_text(yaml.safe_dump(sources, sort_keys=False))
    with pytest.raises(CatalogError, match=message):
        load_catalog(catalog_copy)


# ---------------------------------------------------------------- sources, through the flow's task runner
def azure_sources_catalog(catalog_copy: Path, endpoint: str, regions: list[str], azure_limit: int):
    """A live catalog of one Azure source per region (azure_1 ... in sources.yaml order), `azure_limit` at once."""
    path = catalog_copy / "sources.yaml"
    sources = yaml.safe_load(path.read_text())
    sources["mode"] = "live"
    sources["fetch_concurrency"] = {"azure": azure_limit}
    sources["sources"] = {f"azure_{n}": {"kind": "azure_retail", "description": f"Azure prices in {region}",
                                         "live": {"regions": [region], "endpoint": endpoint}}
                          for n, region in enumerate(regions, start=1)}
    path.write_text(yaml.safe_dump(sources, sort_keys=False))
    return load_catalog(catalog_copy)


def fetch_phase(catalog) -> list:
    """nightly's fetch phase alone, in a flow of its own."""
    from prefect import flow

    from flows.fetching import fetch_all

    @flow(name="fetch-phase")
    def phase() -> list:
        return fetch_all(catalog, list(catalog.sources.sources))

    return phase()


@pytest.mark.slow  # waits on a slow server (~4 s): make test-slow
def test_sources_are_fetched_side_by_side_and_one_failing_holds_none(prefect_server, catalog_copy, slow_prices):
    delay_s = 3.0  # 1.5 s left Prefect's five task runs 1 s to start on a loaded 2-core machine (P5's bound below)
    api = slow_prices(delay_s, {"r1": delay_s + 0.5})  # the first source answers last
    catalog = azure_sources_catalog(catalog_copy, api.endpoint, ["r1", DENIED, "r3", "r4", "r5"], azure_limit=4)
    batches = fetch_phase(catalog)
    assert [b.source_id for b in batches] == ["azure_1", "azure_2", "azure_3", "azure_4", "azure_5"]
    assert [b.rows_in for b in batches] == [1, 0, 1, 1, 1]
    assert batches[1].error.startswith(f"LiveSourceError: azure retail prices {DENIED} page 1: access denied (HTTP 403)")
    assert [b.row_dicts()[0]["arm_region_name"] for b in batches if b.rows_in] == ["r1", "r3", "r4", "r5"]
    assert api.most_in_flight() == 4  # the four sources that answer were all in flight together
    answered = api.answered()
    slowest_s = delay_s + 0.5
    # P5: the phase takes at most 1.5 x the slowest source, as the server saw it (one after another: 12.5 s)
    assert max(r.answered_at for r in answered) - answered[0].arrived_at <= 1.5 * slowest_s


def test_a_cloud_limit_of_one_fetches_its_sources_one_after_another(prefect_server, catalog_copy, slow_prices):
    api = slow_prices(0.4)
    catalog = azure_sources_catalog(catalog_copy, api.endpoint, ["r1", "r2", "r3"], azure_limit=1)
    batches = fetch_phase(catalog)
    assert [b.rows_in for b in batches] == [1, 1, 1]
    answered = api.answered()
    assert len(answered) == 3
    assert all(later.arrived_at >= earlier.answered_at for earlier, later in itertools.pairwise(answered))
