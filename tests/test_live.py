"""Live checks against the real APIs: off by default, run with `pytest -m live` and credentials from the standard chains."""

import boto3
import pytest

from flows.sources import aws_pricing

pytestmark = pytest.mark.live


def test_aws_price_list_pages_parse_into_linux_on_demand_rows():
    session = boto3.Session()
    if session.get_credentials() is None:
        pytest.skip("no AWS credentials in the standard chain")
    client = session.client("pricing", region_name="us-east-1")
    pages = aws_pricing.pages_from_api(client, ["us-east-1"])
    rows = aws_pricing.rows_from_pages(page for _, page in zip(range(2), pages))
    assert rows, "the Price List API returned no accelerated-instance products"
    assert {r["term_type"] for r in rows} <= {"OnDemand", "Reserved"}
    assert any(r["operating_system"] == "Linux" and r["price_usd"] for r in rows)


def test_azure_retail_prices_for_one_vm_size_in_eastus():
    """The public Retail Prices API (no credentials): Standard_NC40ads_H100_v5 in eastus, every page."""
    import time

    from flows.sources import azure_retail
    from flows.sources._common import LiveSourceError

    sku = "Standard_NC40ads_H100_v5"
    try:
        rows = azure_retail.fetch_live({"regions": ["eastus"], "arm_sku_names": [sku]},
                                       sleep=lambda s: time.sleep(min(s, 2.0)))
    except LiveSourceError as exc:
        if "network error" in str(exc):
            pytest.skip(f"no network: {exc}")
        raise
    assert rows, "the Retail Prices API returned no rows for Standard_NC40ads_H100_v5 in eastus"
    assert {(r["arm_sku_name"], r["arm_region_name"]) for r in rows} == {(sku, "eastus")}
    assert all(r["source_ref"].startswith("azure retail prices eastus page ") for r in rows)
    linux = [r for r in rows if r["price_type"] == "Consumption" and not r["product_name"].endswith("Windows")
             and "Spot" not in r["meter_name"] and "Low Priority" not in r["meter_name"]]
    assert linux and all(r["retail_price"] and r["retail_price"] > 0 for r in linux)


def test_gcp_billing_catalog_h100_skus_in_us_central1():
    """The Cloud Billing Catalog API with an API key from GOOGLE_API_KEY; skipped without one."""
    import os

    from flows.sources import gcp_billing

    key = os.environ.get("GOOGLE_API_KEY")
    if not key:
        pytest.skip("GOOGLE_API_KEY is not set (a Google Cloud API key with the Cloud Billing API enabled)")
    rows = gcp_billing.fetch_live({"services": [gcp_billing.COMPUTE_ENGINE], "description_contains": ["H100"],
                                   "regions": ["us-central1"]})
    assert rows, "no H100 SKU in us-central1 in the Compute Engine catalog"
    assert all("h100" in r["description"].lower() and r["region"] == "us-central1" for r in rows)
    assert any(r["price_usd"] > 0 and r["currency_code"] == "USD" for r in rows)
    assert all(key not in r["source_ref"] for r in rows)


def test_ec2_spot_price_history_gives_latest_prices_per_zone():
    """boto3 ec2.describe_spot_price_history in us-east-1 for p5.48xlarge over the last 6 hours."""
    session = boto3.Session()
    if session.get_credentials() is None:
        pytest.skip("no AWS credentials in the standard chain")
    from flows.sources import aws_spot

    rows = aws_spot.fetch_live({"regions": ["us-east-1"], "instance_types": ["p5.48xlarge"]}, session=session)
    assert rows, "no spot price in the last 6 hours"
    assert all(r["region"] == "us-east-1" and r["price_usd"] and r["price_timestamp"] for r in rows)


def test_price_list_fetch_live_rows():
    session = boto3.Session()
    if session.get_credentials() is None:
        pytest.skip("no AWS credentials in the standard chain")
    rows = aws_pricing.fetch_live({"regions": ["us-east-1"], "instance_families": ["Machine Learning ASIC Instances"]},
                                  session=session)
    assert any(r["instance_type"] == "trn1.32xlarge" and r["term_type"] == "OnDemand" for r in rows)
