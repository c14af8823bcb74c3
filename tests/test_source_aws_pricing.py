"""aws_pricing: get_products pages -> raw rows; only plain Linux on-demand rows become offers."""

import datetime as dt
import json

import boto3
import pytest
from botocore.stub import Stubber
from builders import aws_page, aws_product, replace_once

from flows import transform
from flows.land import land_batch
from flows.source_batches import SourceBatch
from flows.sources import aws_pricing
from flows.sources._common import SourceFormatError

AS_OF = dt.date(2026, 11, 30)


def land_aws(con, catalog, rows):
    batch = SourceBatch.of_rows("aws_test", "aws_pricing", "aws_pricing", ["test"], AS_OF,
                        [r | {"row_no": i, "source_id": "aws_test", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    return land_batch(con, batch, "run-1", AS_OF, catalog)


def test_price_list_items_are_json_strings_parsed_into_one_row_per_dimension():
    page = aws_page(aws_product("p5.48xlarge", "55.0400000000",
                                reserved=[("1yr", "Partial Upfront", "3.1000000000", "27156")]))
    rows = aws_pricing.rows_from_pages([("page-1", page)])
    # one on-demand hourly + a reserved term with an hourly and an upfront-fee dimension = 3 rows
    assert [(r["term_type"], r["unit"], r["price_usd"]) for r in rows] == [
        ("OnDemand", "Hrs", 55.04),
        ("Reserved", "Hrs", 3.1),
        ("Reserved", "Quantity", 27156.0),
    ]
    assert rows[1]["lease_contract_length"] == "1yr" and rows[1]["purchase_option"] == "Partial Upfront"
    assert rows[0]["source_ref"] == "page-1: PriceList[0]"


def test_capacity_block_zero_and_windows_rows_never_become_linux_on_demand(fresh_db, catalog):
    page = aws_page(
        aws_product("p5.48xlarge", "55.0400000000", sku="LINUXSKU00000001"),
        aws_product("p5.48xlarge", "0.0000000000", market="CapacityBlock", sku="CAPBLOCK00000001"),
        aws_product("p5.48xlarge", "63.8720000000", os="Windows", sku="WINDOWSSKU000001"),
    )
    load = land_aws(fresh_db, catalog, aws_pricing.rows_from_pages([("p", page)]))
    # the $0.00 hourly on-demand row fails `price_usd > 0` and is quarantined, not dropped
    assert (load.rows_in, load.rows_landed, load.rows_quarantined) == (3, 2, 1)
    [(name, kind, column, value, reason, row_json)] = fresh_db.execute(
        "select expectation, expectation_type, column_name, unexpected_value, reason, row_json from ops.quarantine"
    ).fetchall()
    assert (name, kind, column, value) == (
        "on_demand_hourly_price_positive", "expect_column_values_to_be_between", "price_usd", "0.0")
    assert reason.startswith("an hourly on-demand price of $0.00 is a placeholder")
    assert json.loads(row_json)["market_option"] == "CapacityBlock"
    transform.build_models(fresh_db, "run-1", AS_OF)
    offers = fresh_db.execute(
        "select offer_id, usd_per_hour from intermediate.int_offers_priced where cloud = 'aws'").fetchall()
    # the Windows row (63.872) landed but is not a plain-Linux price: one offer at 55.04
    assert offers == [("aws:us-east-1:p5.48xlarge:on_demand", 55.04)]
    terms = fresh_db.execute(
        "select operating_system, pricing_term, is_plain_linux from staging.stg_aws_pricing__prices order by 1").fetchall()
    assert terms == [("Linux", "on_demand", True), ("Windows", "on_demand", False)]


def test_price_that_is_not_a_number_is_quarantined_with_its_text(fresh_db, catalog):
    # beside a good price: a batch with no row left would leave the source stale (tests/test_guards.py)
    rows = aws_pricing.rows_from_pages([("p", aws_page(aws_product("p5.48xlarge", "N/A"),
                                                       aws_product("p5en.48xlarge", "63.2960000000", sku="SKU2")))])
    assert rows[0]["price_usd"] is None and rows[0]["price_text"] == "N/A"
    load = land_aws(fresh_db, catalog, rows)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    assert fresh_db.execute("select expectation, reason from ops.quarantine").fetchall() == [
        ("price_usd_present", "pricePerUnit.USD must be a number")]


def test_a_price_in_another_currency_or_none_is_quarantined_and_the_rest_lands(fresh_db, catalog):
    """The China regions' Price List answers in CNY: the row keeps its currency and figure and goes to quarantine
    (currency_usd), as the offer file's does; an empty pricePerUnit is quarantined too. Neither fails the source:
    the p5 price beside them lands."""
    cny = json.loads(aws_product("p4d.24xlarge", "210.0000000000", sku="SKUCNY"))
    [dim] = cny["terms"]["OnDemand"]["SKUCNY.JRTCKXETXF"]["priceDimensions"].values()
    dim["pricePerUnit"] = {"CNY": "210.0000000000"}
    empty = json.loads(aws_product("p5en.48xlarge", "63.2960000000", sku="SKUEMPTY"))
    [dim] = empty["terms"]["OnDemand"]["SKUEMPTY.JRTCKXETXF"]["priceDimensions"].values()
    dim["pricePerUnit"] = {}
    rows = aws_pricing.rows_from_pages([("p", aws_page(aws_product("p5.48xlarge", "55.0400000000"),
                                                       json.dumps(cny), json.dumps(empty)))])
    assert [(r["currency"], r["price_text"], r["price_usd"]) for r in rows] == [
        ("USD", "55.0400000000", 55.04), ("CNY", "210.0000000000", 210.0), (None, None, None)]
    load = land_aws(fresh_db, catalog, rows)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select row_no, list(expectation order by expectation) from ops.quarantine "
                            "group by row_no order by row_no").fetchall() == [
        (1, ["currency_usd"]), (2, ["currency_present", "price_usd_present"])]


def test_item_that_is_not_json_names_the_page_and_item():
    with pytest.raises(SourceFormatError, match=r"^page-2: PriceList\[1\]: not valid JSON"):
        aws_pricing.rows_from_pages([("page-2", aws_page(aws_product("p5.48xlarge", "1.0"), '{"product": '))])


def test_page_without_price_list_names_the_missing_key():
    with pytest.raises(SourceFormatError, match=r"^page-1: missing key 'PriceList'"):
        aws_pricing.rows_from_pages([("page-1", {"FormatVersion": "aws_v1"})])


def test_api_pages_through_the_paginator_parse_like_snapshot_files():
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    stubber = Stubber(client)
    gpu_filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
                   {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "GPU instance"}]
    asic_filters = [gpu_filters[0], {"Type": "TERM_MATCH", "Field": "instanceFamily",
                                     "Value": "Machine Learning ASIC Instances"}]
    stubber.add_response("get_products", aws_page(aws_product("p5.48xlarge", "55.0400000000"), next_token="t1"),
                         {"ServiceCode": "AmazonEC2", "Filters": gpu_filters})
    stubber.add_response("get_products", aws_page(aws_product("p5en.48xlarge", "63.2960000000")),
                         {"ServiceCode": "AmazonEC2", "Filters": gpu_filters, "NextToken": "t1"})
    stubber.add_response("get_products", aws_page(aws_product("trn1.32xlarge", "21.5000000000", gpu="0")),
                         {"ServiceCode": "AmazonEC2", "Filters": asic_filters})
    with stubber:
        rows = aws_pricing.rows_from_pages(aws_pricing.pages_from_api(client, ["us-east-1"]))
    stubber.assert_no_pending_responses()
    assert [(r["instance_type"], r["price_usd"]) for r in rows] == [
        ("p5.48xlarge", 55.04), ("p5en.48xlarge", 63.296), ("trn1.32xlarge", 21.5)]
    assert rows[1]["source_ref"] == "pricing.get_products us-east-1 'GPU instance' page 2: PriceList[0]"


def test_a_priced_capacity_block_is_its_own_term_not_on_demand(fresh_db, catalog):
    page = aws_page(
        aws_product("p5.48xlarge", "55.0400000000", sku="LINUXSKU00000001"),
        aws_product("p5.48xlarge", "31.4640000000", market="CapacityBlock", sku="CAPBLOCK00000001"),
    )
    load = land_aws(fresh_db, catalog, aws_pricing.rows_from_pages([("p", page)]))
    assert (load.rows_landed, load.rows_quarantined) == (2, 0)
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert fresh_db.execute("select market_option, pricing_term from staging.stg_aws_pricing__prices "
                            "join raw.aws_pricing using (row_no) order by row_no").fetchall() == [
        ("OnDemand", "on_demand"), ("CapacityBlock", "capacity_block")]
    assert fresh_db.execute("select offer_id, usd_per_hour from intermediate.int_offers_priced").fetchall() == [
        ("aws:us-east-1:p5.48xlarge:on_demand", 55.04)]


@pytest.mark.parametrize(("options", "message"), [
    ({"regions": ["us-east-1"], "endpoint_region": "us-west-2"},
     "aws_pricing: live option endpoint_region 'us-west-2': the Price List API is served from us-east-1, "
     "eu-central-1, ap-south-1"),
    ({"regions": ["us-east-1"], "region": "us-east-1"},
     "aws_pricing: unknown live option(s) region (expected: cpu_instance_types, endpoint_region, instance_families, "
     "regions)"),
    ({"endpoint_region": "us-east-1"}, "aws_pricing: live option(s) regions missing"),
], ids=["endpoint-region", "unknown-option", "no-regions"])
def test_a_live_block_this_source_cannot_use_is_a_source_format_error(options, message):
    with pytest.raises(SourceFormatError) as refused:
        aws_pricing.check_live_options(options)
    assert type(refused.value) is SourceFormatError and str(refused.value) == message


def test_hweval_check_names_a_bad_live_option_in_one_line_and_exits_2(catalog_copy, capsys):
    from flows.cli import main

    replace_once(catalog_copy / "sources.yaml", "endpoint_region: us-east-1 ", "endpoint_region: us-west-2 ")
    assert main(["check", "--catalog", str(catalog_copy)]) == 2
    assert capsys.readouterr() == ("", "hweval: sources.yaml: sources.aws_pricing.live: aws_pricing: live option "
                                       "endpoint_region 'us-west-2': the Price List API is served from us-east-1, "
                                       "eu-central-1, ap-south-1\n")
