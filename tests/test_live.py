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
