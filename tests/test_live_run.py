"""A whole `hweval run --live` without network: AWS through boto3 with Stubber on the real clients, Azure Retail
Prices and the GCP Billing Catalog from a real HTTP server on 127.0.0.1, answering in the APIs' real shapes (the
snapshot pages are such responses). On-demand, spot and reserved terms end up side by side in marts.offers and the
reports show the cheapest term per offer; a source that fails live is stale while the others land."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import duckdb
import pytest
import yaml
from botocore.stub import Stubber
from builders import close_loopback
from conftest import AS_OF
from test_source_aws_live import FAKE_KEY_ID, FAKE_SECRET, price_list_pages, spot_item
from test_source_http_live import FakeApi

from flows.sources import _aws

GCE = "6F81-5844-456A"
API_KEY = "AIzaSyTEST-live-run-key-000000000000"


@pytest.fixture
def api():
    server = FakeApi()
    yield server
    close_loopback(server.httpd)


def live_catalog(catalog_copy: Path, api: FakeApi) -> Path:
    """The embedded catalog with its live blocks pointed at the local server and narrowed to one region."""
    path = catalog_copy / "sources.yaml"
    sources = yaml.safe_load(path.read_text())
    live = {s: sources["sources"][s]["live"] for s in ("aws_pricing", "aws_spot", "azure_retail", "gcp_billing")}
    live["aws_pricing"].update(regions=["us-east-1"])
    live["aws_pricing"].pop("cpu_instance_types", None)  # the stubs answer the GPU and ML ASIC families only
    # the other live sources (instance types, hosted-model prices) read their snapshot files in this test
    for source_id, source in sources["sources"].items():
        if source_id not in live and source.get("files"):
            source.pop("live", None)
    live["aws_spot"].update(regions=["us-east-1"], instance_types=["p5.48xlarge"])
    live["azure_retail"].clear()
    live["azure_retail"].update(regions=["eastus"], endpoint=f"{api.base}/api/retail/prices")
    live["gcp_billing"].update(endpoint=api.base, services=[GCE])
    path.write_text(yaml.safe_dump(sources, sort_keys=False))
    # Azure: the two snapshot pages, the first linking to the second on this server
    pages = [json.loads((catalog_copy / f"snapshot/azure_retail/eastus.page-{n}.json").read_text()) for n in (1, 2)]
    pages[0]["NextPageLink"] = f"{api.base}/api/retail/prices?api-version=2023-01-01-preview&$skip=100"
    for page in pages:
        api.add("/api/retail/prices", page)
    api.add(f"/v1/services/{GCE}/skus",
            json.loads((catalog_copy / "snapshot/gcp_billing/compute-engine.skus.page-1.json").read_text()))
    return catalog_copy


@pytest.fixture
def aws_clients(monkeypatch):
    """Real boto3 clients with Stubbers, handed to the sources where they would build clients from the chain."""
    clients = {service: boto3.client(service, region_name="us-east-1", aws_access_key_id=FAKE_KEY_ID,
                                     aws_secret_access_key=FAKE_SECRET) for service in ("pricing", "ec2")}
    stubbers = {service: Stubber(client) for service, client in clients.items()}
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: clients[service])
    for stubber in stubbers.values():
        stubber.activate()
    yield stubbers
    for stubber in stubbers.values():
        stubber.deactivate()


def run_live(catalog_dir: Path, root: Path, monkeypatch):
    from flows.nightly import nightly

    monkeypatch.setenv("GOOGLE_API_KEY", API_KEY)
    return nightly(as_of=AS_OF, catalog_dir=str(catalog_dir), warehouse_file=str(root / "w" / "hweval.duckdb"),
                   reports_dir=str(root / "reports"), run_id="live-run", live=True)


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_live_run_puts_on_demand_spot_and_reserved_side_by_side(prefect_server, catalog_copy, api, aws_clients,
                                                                tmp_path, monkeypatch, caplog):
    catalog_dir = live_catalog(catalog_copy, api)
    price_list_pages(aws_clients["pricing"])
    aws_clients["ec2"].add_response("describe_spot_price_history", {"SpotPriceHistory": [
        spot_item("us-east-1a", "p5.48xlarge", "10.240000", 5), spot_item("us-east-1b", "p5.48xlarge", "21.150000", 4)]})
    result = run_live(catalog_dir, tmp_path, monkeypatch)

    loads = {load.source_id: load for load in result.loads}
    assert {s: (l.status, l.rows_in, l.rows_landed, l.rows_quarantined) for s, l in loads.items()
            if s in ("aws_pricing", "aws_spot", "azure_retail", "gcp_billing")} == {
        "aws_pricing": ("landed", 10, 9, 1),  # 10 price dimensions; the $0.00 Capacity Block is quarantined
        "aws_spot": ("landed", 2, 2, 0),
        "azure_retail": ("landed", 8, 8, 0),  # the snapshot's 4 + 4 items, fetched over HTTP
        "gcp_billing": ("landed", 14, 13, 1),  # the 700.0 placeholder is quarantined
    }
    con = duckdb.connect(str(result.warehouse), read_only=True)
    try:
        p5 = con.execute("select pricing_term, term_detail, round(usd_per_hour, 4), price_source_id from marts.offers "
                         "where offer_id like 'aws:us-east-1:p5.48xlarge:%' order by usd_per_hour").fetchall()
        data_as_of = con.execute("select distinct data_as_of from ops.source_loads where source_id = 'aws_pricing'"
                                 ).fetchall()
    finally:
        con.close()
    assert p5 == [
        ("spot", None, 10.24, "aws_spot"),  # min(10.24 in us-east-1a, 21.15 in us-east-1b)
        ("reserved", "3yr All Upfront standard", 22.8311, "aws_pricing"),  # 600,000 / 26,280 h
        ("reserved", "3yr Partial Upfront standard", 23.4155, "aws_pricing"),  # 12 + 300,000 / 26,280 h
        ("reserved", "1yr No Upfront standard", 35.0, "aws_pricing"),
        ("on_demand", None, 55.04, "aws_pricing"),
    ]
    assert data_as_of[0][0] >= AS_OF  # live data is as of the day it was fetched

    offers_page = (result.reports / "offers.md").read_text()
    # one instance type, one region: its cheapest term (spot) with that region's on-demand and cheapest reserved
    assert ("| aws p5.48xlarge | h100-sxm-80gb x 8 | 1 | us-east-1 | 55.04 | 10.24 | 22.83 (3yr All Upfront standard) "
            "| **spot** | 10.24 | 1.280 | 81% | — |") in offers_page  # 1 - 10.24 / 55.04 = 81%
    assert "| aws | us-east-1 | p7-x200.48xlarge | on_demand | 150.00 |" in offers_page  # unknown to the catalog
    assert "[offers.md](offers.md)" in (result.reports / "index.md").read_text()
    assert API_KEY not in caplog.text and FAKE_SECRET not in caplog.text
    gcp_query = [r.raw for r in api.requests if "/skus" in r.path]
    assert gcp_query and all("key=" in q for q in gcp_query)  # the key is sent, but never logged or reported
    for page in result.reports.rglob("*"):
        assert not page.is_file() or API_KEY.encode() not in page.read_bytes()


@pytest.mark.slow  # a whole run (or several): make test-slow and CI
def test_a_source_denied_live_is_stale_and_the_others_land(prefect_server, catalog_copy, api, aws_clients, tmp_path,
                                                           monkeypatch):
    catalog_dir = live_catalog(catalog_copy, api)
    aws_clients["pricing"].add_client_error("get_products", service_error_code="AccessDeniedException",
                                            service_message="not authorized to perform: pricing:GetProducts")
    aws_clients["ec2"].add_response("describe_spot_price_history", {"SpotPriceHistory": [
        spot_item("us-east-1a", "p5.48xlarge", "10.240000", 5)]})
    from flows.nightly import StalePastLimit

    # aws_pricing never landed: stale past any limit, so the run publishes, then fails
    with pytest.raises(StalePastLimit, match="aws_pricing has never landed") as failed:
        run_live(catalog_dir, tmp_path, monkeypatch)
    result = failed.value.result
    assert [line.split()[0] for line in result.stale_past_limit] == ["aws_pricing"]
    loads = {load.source_id: load for load in result.loads}
    assert loads["aws_pricing"].status == "stale"
    assert "access denied (AccessDeniedException)" in loads["aws_pricing"].error
    assert [loads[s].status for s in ("aws_spot", "azure_retail", "gcp_billing")] == ["landed"] * 3
    index = (result.reports / "index.md").read_text()
    assert "| aws_pricing | aws_pricing | stale, never landed |" in index
    assert "LiveSourceError: pricing.get_products us-east-1 'GPU instance': page 1: access denied" in index
