"""Hosted model API token prices (issue 14, item 4): the three formats, units guarded, and the API beside self-hosting."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import shutil

import boto3
import pytest
from botocore.stub import Stubber
from builders import aws_page, aws_product

from flows import transform, warehouse
from flows.catalog import CatalogError, load_catalog
from flows.land import land_all, land_batch
from flows.paths import PROJECT_ROOT
from flows.source_batches import SourceBatch, fetch_source
from flows.sources import aws_pricing, azure_model_prices, bedrock_pricing, gcp_billing, vertex_model_prices
from flows.sources._common import SourceFormatError
from flows.warehouse import fetch_dicts

AS_OF = dt.date(2026, 11, 30)
CATALOGS = PROJECT_ROOT / "catalogs"
RUN = "run-api"


# ---------------------------------------------------------------- hand-written fixtures in the APIs' shapes
def bedrock_item(model: str, inference_type: str, usd: str, *, unit: str = "1K tokens", region: str = "us-east-1",
                 sku: str = "TESTSKU000000001", per_unit: dict | None = None) -> str:
    """One AmazonBedrock PriceList item, as get_products returns it: a JSON string (`per_unit` replaces its
    pricePerUnit {"USD": usd})."""
    rate = f"{sku}.JRTCKXETXF.6YS6EN2CT7"
    per_unit = {"USD": usd} if per_unit is None else per_unit
    return json.dumps({
        "product": {"productFamily": "Amazon Bedrock", "sku": sku, "attributes": {
            "regionCode": region, "inferenceType": inference_type, "servicecode": "AmazonBedrock",
            "feature": "On-demand Inference", "provider": "Meta", "usagetype": f"TEST-{model}-{inference_type}",
            "model": model, "servicename": "Amazon Bedrock"}},
        "serviceCode": "AmazonBedrock",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {
            "priceDimensions": {rate: {"unit": unit, "rateCode": rate, "pricePerUnit": per_unit,
                                       "description": "test"}},
            "sku": sku, "offerTermCode": "JRTCKXETXF", "effectiveDate": "2026-11-01T00:00:00Z",
            "termAttributes": {}}}},
        "version": "test", "publicationDate": "2026-11-01T00:00:00Z"})


def azure_meter(meter: str, price: float, unit: str, *, meter_id: str = "m-1") -> dict:
    return {"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
            "armRegionName": "eastus", "location": "US East", "effectiveStartDate": "2026-11-01T00:00:00Z",
            "meterId": meter_id, "meterName": meter, "productId": "p-1", "skuId": "s-1",
            "productName": "Test Models", "skuName": meter, "serviceName": "Foundry Models", "serviceId": "x",
            "serviceFamily": "AI + Machine Learning", "unitOfMeasure": unit, "type": "Consumption",
            "isPrimaryMeterRegion": True, "armSkuName": ""}


def vertex_sku(description: str, units: str, nanos: int, unit: str, *, sku_id: str = "TEST-0000-0001") -> dict:
    return {"name": f"services/C7E2-9256-1C43/skus/{sku_id}", "skuId": sku_id, "description": description,
            "category": {"serviceDisplayName": "Vertex AI", "resourceFamily": "ApplicationServices",
                         "resourceGroup": "Test", "usageType": "OnDemand"},
            "serviceRegions": ["us-central1"],
            "pricingInfo": [{"summary": "", "pricingExpression": {
                "usageUnit": unit, "usageUnitDescription": "test", "displayQuantity": 1,
                "tieredRates": [{"startUsageAmount": 0,
                                 "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos}}]},
                "currencyConversionRate": 1, "effectiveTime": "2026-11-01T00:00:00Z"}]}


def batch(rows: list[dict], source_id: str = "bedrock_pricing", kind: str = "bedrock_pricing",
          table: str = "model_api_prices"):
    return SourceBatch.of_rows(source_id, kind, table, ["test"], AS_OF,
                       [r | {"row_no": i, "source_id": source_id, "data_as_of": AS_OF}
                        for i, r in enumerate(rows)])


# ---------------------------------------------------------------- parsing
def test_bedrock_items_give_input_and_output_apart_per_million_tokens():
    page = aws_page(bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0003000000"),
                    bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.6000000000", unit="1M tokens",
                                 sku="TESTSKU000000002"))
    rows = bedrock_pricing.rows_from_pages([("page-1", page)])
    # 0.0003 USD per 1K tokens x 1,000 = 0.30 USD per million; 0.60 per 1M tokens stays 0.60
    assert [(r["api_model"], r["direction"], r["unit"], r["tokens_per_unit"], r["usd_per_million_tokens"])
            for r in rows] == [("Llama 3.1 8B Instruct", "input", "1K tokens", 1000.0, pytest.approx(0.30)),
                               ("Llama 3.1 8B Instruct", "output", "1M tokens", 1e6, pytest.approx(0.60))]
    assert rows[0]["source_ref"] == "page-1: PriceList[0]" and rows[0]["unit_problem"] is None
    assert (rows[0]["cloud"], rows[0]["region"], rows[0]["feature"]) == ("aws", "us-east-1", "On-demand Inference")


def test_azure_foundry_meters_split_model_and_direction_and_skip_cached_tokens():
    page = {"Items": [
        azure_meter("Llama 3.1 8B Instruct Inp Glbl Tokens", 0.00025, "1K", meter_id="m-in"),
        azure_meter("Llama 3.1 8B Instruct Outp Glbl Tokens", 0.45, "1M", meter_id="m-out"),
        azure_meter("gpt-4o Cd Inp Glbl Tokens", 1.25, "1M", meter_id="m-cached"),  # cached input: out of scope
        azure_meter("Some Model Hosting Unit", 7.0, "1 Hour", meter_id="m-hour"),  # not a token meter
    ], "NextPageLink": None}
    rows = azure_model_prices.rows_from_pages([("azure p1", page)])
    # 0.00025 USD per 1K x 1,000 = 0.25 USD per million; 0.45 per 1M stays 0.45
    assert [(r["api_model"], r["direction"], r["unit"], r["usd_per_million_tokens"], r["source_ref"])
            for r in rows] == [("Llama 3.1 8B Instruct", "input", "1K", pytest.approx(0.25), "azure p1: Items[0]"),
                               ("Llama 3.1 8B Instruct", "output", "1M", pytest.approx(0.45), "azure p1: Items[1]")]
    assert rows[0]["rate_code"] == "m-in|Consumption|0.0"


def test_azure_prices_the_on_demand_tier_only_and_logs_the_meters_read_kept_and_skipped(caplog):
    """A volume tier (tierMinimumUnits above 0) is not the on-demand price: were it landed, staging's cheapest meter
    per model and direction would report its 0.10 as the on-demand 0.71. It is not a row, and like the meters out of
    scope or not asked for it is counted in the log."""
    caplog.set_level(logging.INFO, logger="flows.sources.azure_model_prices")
    page = {"Items": [
        azure_meter("Llama 3.1 8B Instruct Inp Glbl Tokens", 0.71, "1M", meter_id="m-in"),
        azure_meter("Llama 3.1 8B Instruct Inp Glbl Tokens", 0.10, "1M", meter_id="m-in") | {"tierMinimumUnits": 1e9},
        azure_meter("Llama 3.1 8B Instruct Outp Glbl Tokens", 0.00095, "1K", meter_id="m-out"),
        azure_meter("gpt-4o Inp Glbl Tokens", 2.5, "1M", meter_id="m-gpt"),  # not asked for
        azure_meter("Llama 3.1 8B Instruct Cd Inp Glbl Tokens", 0.35, "1M", meter_id="m-cached"),  # out of scope
        azure_meter("Llama Hosting Unit", 7.0, "1 Hour", meter_id="m-hour"),  # out of scope
    ], "NextPageLink": None}
    rows = azure_model_prices.rows_from_pages([("azure p1", page)], meter_name_contains=["llama 3.1"],
                                              region="eastus")
    # 0.71 per 1M stays 0.71; 0.00095 per 1K x 1,000 = 0.95 per million
    assert [(r["direction"], r["usd_per_million_tokens"], r["rate_code"]) for r in rows] == [
        ("input", pytest.approx(0.71), "m-in|Consumption|0.0"),
        ("output", pytest.approx(0.95), "m-out|Consumption|0.0")]
    # 6 meters read = 2 kept + 2 out of scope (cached, per hour) + 1 not asked for (gpt-4o) + 1 volume tier
    assert caplog.messages == [
        "azure model prices eastus: kept 2 of 6 meters read, 2 rows; skipped: 2 not on-demand input or output token "
        "meters, 1 not matching meter_name_contains, 1 volume tiers (tierMinimumUnits above 0; only tier 0, the "
        "on-demand price, is priced)"]


@pytest.mark.parametrize(("tier", "is_tier_0"), [(None, True), ("absent", True), (0, True), ("0", False),
                                                 (True, False), (-1.0, False)])
def test_an_azure_tier_that_is_no_number_is_refused_naming_the_item(tier, is_tier_0):
    # absent or null (the public fixtures write none) is tier 0; a string, a bool or a negative figure is no tier
    meter = azure_meter("Llama 3.1 8B Instruct Inp Glbl Tokens", 0.71, "1M")
    meter = {k: v for k, v in meter.items() if k != "tierMinimumUnits"} if tier == "absent" else meter | {
        "tierMinimumUnits": tier}
    page = {"Items": [azure_meter("Llama 3.1 8B Instruct Outp Glbl Tokens", 0.95, "1M", meter_id="m-out"), meter]}
    if is_tier_0:  # both meters are rows
        assert [r["direction"] for r in azure_model_prices.rows_from_pages([("azure p1", page)])] == [
            "output", "input"]
        return
    with pytest.raises(SourceFormatError, match=r"^azure p1: Items\[1\]\.tierMinimumUnits: expected a number 0 or "
                                                r"more \(0 for the on-demand price, more for a volume tier\), got "):
        azure_model_prices.rows_from_pages([("azure p1", page)])


def test_vertex_logs_the_skus_read_kept_and_skipped_and_the_tiers_not_priced(caplog):
    caplog.set_level(logging.INFO, logger="flows.sources.vertex_model_prices")
    tiered = vertex_sku("Llama 3.1 8B Instruct Input Tokens", "0", 220, "count")
    tiered["pricingInfo"][0]["pricingExpression"]["tieredRates"].append(
        {"startUsageAmount": 1e9, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 100}})
    page = {"skus": [
        tiered,
        vertex_sku("Llama 3.1 8B Instruct Output Tokens", "0", 440, "count", sku_id="TEST-0000-0002"),
        vertex_sku("Gemini 2.0 Flash Input Tokens", "0", 100, "count", sku_id="TEST-0000-0003"),  # not asked for
        vertex_sku("Vertex AI Prediction node hours", "1", 0, "h", sku_id="TEST-0000-0004"),  # not tokens
    ], "nextPageToken": ""}
    rows = vertex_model_prices.rows_from_pages([("vertex p1", page)], service="C7E2-9256-1C43",
                                               sku_filter=gcp_billing.SkuFilter(description_contains=["llama"]))
    # the first tier only: 220 nanos = 2.2e-7 USD a token x 1e6 = 0.22 per million (not the later tier's 0.10)
    assert [(r["direction"], r["usd_per_million_tokens"], r["rate_code"]) for r in rows] == [
        ("input", pytest.approx(0.22), "tier 0"), ("output", pytest.approx(0.44), "tier 0")]
    # 4 SKUs read = 2 kept + 1 out of scope (node hours) + 1 not asked for (Gemini); the input SKU's second tier
    assert caplog.messages == [
        "vertex model prices C7E2-9256-1C43: kept 2 of 4 SKUs read, 2 rows; skipped: 1 not on-demand input or "
        "output token SKUs, 1 not matching description_contains or regions, 0 token SKUs whose first tier starts "
        "above 0 (no on-demand price to rank), 1 volume tiers after a kept SKU's first (only the first, the on-demand "
        "price, is priced)"]


def test_a_vertex_sku_whose_first_tier_starts_above_0_is_not_priced_and_is_counted(caplog):
    """A review's finding: the first rate was taken as the on-demand price whatever its startUsageAmount: a SKU listed
    from its volume tiers on (first tier at 1e9 tokens) was ranked at the volume price."""
    caplog.set_level(logging.INFO, logger="flows.sources.vertex_model_prices")
    volume_only = vertex_sku("Llama 3.1 8B Instruct Input Tokens", "0", 100, "count")
    volume_only["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["startUsageAmount"] = 1e9
    page = {"skus": [volume_only, vertex_sku("Llama 3.1 8B Instruct Output Tokens", "0", 440, "count",
                                             sku_id="TEST-0000-0002")]}
    rows = vertex_model_prices.rows_from_pages([("vertex p1", page)])
    assert [(r["direction"], r["usd_per_million_tokens"]) for r in rows] == [("output", pytest.approx(0.44))]
    assert caplog.messages == [
        "vertex model prices: kept 1 of 2 SKUs read, 1 rows; skipped: 0 not on-demand input or output token SKUs, 0 "
        "not matching description_contains or regions, 1 token SKUs whose first tier starts above 0 (no on-demand "
        "price to rank), 0 volume tiers after a kept SKU's first (only the first, the on-demand price, is priced)"]
    volume_only["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["startUsageAmount"] = "a lot"
    with pytest.raises(SourceFormatError, match=r"^vertex p1: skus\[0\]\.pricingInfo\[0\]\.pricingExpression\."
                                                r"tieredRates\[0\]\.startUsageAmount: 'a lot' is not a number$"):
        vertex_model_prices.rows_from_pages([("vertex p1", page)])


def test_vertex_token_skus_price_per_token_counts_and_skip_other_skus():
    page = {"skus": [
        vertex_sku("Llama 3.1 8B Instruct Input Tokens", "0", 220, "count"),  # 2.2e-7 USD a token
        vertex_sku("Llama 3.1 8B Instruct Output Tokens", "0", 440000, "k{count}", sku_id="TEST-0000-0002"),
        vertex_sku("Vertex AI Prediction node hours", "1", 0, "h", sku_id="TEST-0000-0003"),  # not tokens
    ], "nextPageToken": ""}
    rows = vertex_model_prices.rows_from_pages([("vertex p1", page)])
    # 220 nanos = 2.2e-7 USD a token x 1e6 = 0.22 USD per million; 440,000 nanos = 0.00044 per 1K x 1,000 = 0.44
    assert [(r["api_model"], r["direction"], r["region"], r["usd_per_million_tokens"]) for r in rows] == [
        ("Llama 3.1 8B Instruct", "input", "us-central1", pytest.approx(0.22)),
        ("Llama 3.1 8B Instruct", "output", "us-central1", pytest.approx(0.44))]


def test_a_price_in_another_unit_is_rejected_with_the_reason(fresh_db, catalog):
    rows = bedrock_pricing.rows_from_pages([("p", aws_page(
        bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0002200000"),
        bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.0400000000", unit="1 image",
                     sku="TESTSKU000000002")))])
    assert rows[1]["usd_per_million_tokens"] is None
    load = land_batch(fresh_db, batch(rows), RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)
    [(expectation, value)] = fresh_db.execute(
        "select expectation, unexpected_value from ops.quarantine where column_name = 'unit_problem'").fetchall()
    assert expectation == "unit_is_tokens"
    assert value == ("unit '1 image' is not a token unit (expected '1K tokens' or '1M tokens'): its price cannot be "
                     "put per million tokens")


def test_a_bedrock_price_in_another_currency_or_none_is_quarantined_and_its_neighbours_land(fresh_db, catalog):
    """As aws_pricing reads a Price List dimension: a CNY price keeps its currency and figure and goes to quarantine
    (currency_usd), an empty pricePerUnit too (currency_present); neither fails the source, and the USD price on the
    same page lands."""
    rows = bedrock_pricing.rows_from_pages([("p", aws_page(
        bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0003000000"),
        bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "", region="cn-north-1", sku="TESTSKUCNY",
                     per_unit={"CNY": "0.0022000000"}),
        bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "", sku="TESTSKUEMPTY", per_unit={})))])
    # 0.0003 USD per 1K tokens x 1,000 = 0.30 per million; the CNY figure is kept as listed (0.0022 per 1K x 1,000 =
    # 2.2, in CNY: never read as USD, as it is quarantined); the empty one has no figure at all
    assert [(r["currency_code"], r["price_text"], r["usd_per_million_tokens"]) for r in rows] == [
        ("USD", "0.0003000000", pytest.approx(0.30)), ("CNY", "0.0022000000", pytest.approx(2.2)),
        (None, None, None)]
    load = land_batch(fresh_db, batch(rows), RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select row_no, list(expectation order by expectation) from ops.quarantine "
                            "group by row_no order by row_no").fetchall() == [
        (1, ["currency_usd"]), (2, ["currency_present", "usd_per_million_tokens_present"])]
    assert fresh_db.execute("select sku, currency_code from raw.model_api_prices").fetchall() == [
        ("TESTSKU000000001", "USD")]


def test_the_snapshot_lands_the_genai_prices_per_million(fresh_db, catalog):
    load = land_batch(fresh_db, fetch_source(catalog, "bedrock_pricing"), RUN, AS_OF, catalog)
    assert (load.rows_landed, load.rows_quarantined) == (4, 0)
    assert fresh_db.execute("select api_model, direction, round(usd_per_million_tokens, 6) from raw.model_api_prices "
                            "order by api_model, direction").fetchall() == [
        ("Llama 3.1 70B Instruct", "input", 0.72), ("Llama 3.1 70B Instruct", "output", 0.72),
        ("Llama 3.1 8B Instruct", "input", 0.22), ("Llama 3.1 8B Instruct", "output", 0.22)]


# ---------------------------------------------------------------- live fetch
def test_get_products_is_asked_for_on_demand_input_and_output_tokens_of_each_model():
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    stubber = Stubber(client)

    def filters(inference_type: str) -> list[dict]:
        return [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
                {"Type": "TERM_MATCH", "Field": "feature", "Value": "On-demand Inference"},
                {"Type": "TERM_MATCH", "Field": "inferenceType", "Value": inference_type},
                {"Type": "TERM_MATCH", "Field": "model", "Value": "Llama 3.1 8B Instruct"}]

    stubber.add_response("get_products", aws_page(bedrock_item("Llama 3.1 8B Instruct", "Input tokens",
                                                               "0.0002200000"), next_token="t1"),
                         {"ServiceCode": "AmazonBedrock", "Filters": filters("Input tokens")})
    stubber.add_response("get_products", aws_page(),
                         {"ServiceCode": "AmazonBedrock", "Filters": filters("Input tokens"), "NextToken": "t1"})
    stubber.add_response("get_products", aws_page(bedrock_item("Llama 3.1 8B Instruct", "Output tokens",
                                                               "0.0002200000", sku="TESTSKU000000002")),
                         {"ServiceCode": "AmazonBedrock", "Filters": filters("Output tokens")})
    with stubber:
        rows = bedrock_pricing.rows_from_pages(bedrock_pricing.region_pages(
            client, "us-east-1", models=["Llama 3.1 8B Instruct"], sleep=lambda s: None))
    stubber.assert_no_pending_responses()
    assert [(r["direction"], r["usd_per_million_tokens"]) for r in rows] == [
        ("input", pytest.approx(0.22)), ("output", pytest.approx(0.22))]
    assert rows[1]["source_ref"] == ("pricing.get_products AmazonBedrock us-east-1 'Output tokens' "
                                     "'Llama 3.1 8B Instruct' page 1: PriceList[0]")


@pytest.mark.parametrize(("module", "options", "message"), [
    (bedrock_pricing, {"regions": ["us-east-1"], "endpoint_region": "us-west-2"}, "endpoint_region 'us-west-2'"),
    (bedrock_pricing, {"regions": ["us-east-1"], "instance_families": ["x"]}, "unknown live option"),
    (azure_model_prices, {"regions": []}, "'regions': expected a non-empty list"),
    (vertex_model_prices, {"service": ["x"]}, "^vertex_model_prices live options: unknown key 'service'"),
])
def test_live_options_are_checked_with_the_reason(module, options, message):
    with pytest.raises(SourceFormatError, match=message):
        module.check_live_options(options)


def test_an_api_name_maps_to_one_model(catalog_copy):
    path = catalog_copy / "models.yaml"
    path.write_text(path.read_text().replace('api_names: ["Llama 3.1 70B Instruct"',
                                             'api_names: ["llama 3.1 8b instruct"'))
    with pytest.raises(CatalogError, match="'llama 3.1 8b instruct' already names llama-3.1-8b"):
        load_catalog(catalog_copy)


# ---------------------------------------------------------------- the API beside self-hosting
@pytest.fixture(scope="module")
def bf16_catalog(tmp_path_factory):
    """The catalog with llama31-8b-chat-small served at bf16 only, so its pick is the hand-worked estimate of
    tests/test_cost_model.py (Llama-3.1-8B bf16 on one H100 of p5.4xlarge)."""
    catalog_dir = tmp_path_factory.mktemp("bf16") / "catalogs"
    shutil.copytree(CATALOGS, catalog_dir)
    path = catalog_dir / "workloads.yaml"
    text, n = re.subn(r"(llama31-8b-chat-small:.*?precisions: )\[bf16, fp8\]", r"\1[bf16]", path.read_text(),
                      count=1, flags=re.DOTALL)
    assert n == 1
    path.write_text(text)
    return load_catalog(catalog_dir)


@pytest.fixture(scope="module")
def api_built(tmp_path_factory, bf16_catalog):
    """Built once for the module's tests, which only read it."""
    con = warehouse.connect(tmp_path_factory.mktemp("api") / "api.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, bf16_catalog)
    aws_rows = batch(aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5.4xlarge", "6.8800000000", sku="A000000000000001", gpu="1")))]), "aws_pricing", "aws_pricing", "aws_pricing")
    # us-east-1: the snapshot's real 0.22 / 0.22 per 1M; us-west-2: a made-up 0.30 / 0.60, written per 1K
    api_rows = bedrock_pricing.rows_from_pages([("p", aws_page(
        bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.22", unit="1M tokens", sku="E1IN"),
        bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.22", unit="1M tokens", sku="E1OUT"),
        bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0003", region="us-west-2", sku="W2IN"),
        bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.0006", region="us-west-2", sku="W2OUT"),
        # eu-west-1 lists an input price only: no cost per request, no comparison
        bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0004", region="eu-west-1", sku="EW1IN")))])
    loads = land_all(con, bf16_catalog, [aws_rows, batch(api_rows)], RUN, AS_OF)
    assert [(load.source_id, load.rows_landed, load.rows_quarantined) for load in loads] == [
        ("aws_pricing", 1, 0), ("bedrock_pricing", 5, 0)]
    transform.build_models(con, RUN, AS_OF)
    yield con
    con.close()


def test_self_hosted_cost_splits_into_input_and_output_tokens_by_prefill_and_decode(api_built):
    [row] = fetch_dicts(api_built, "select * from marts.inference_costs where workload_id = 'llama31-8b-chat-small'")
    # tests/test_cost_model.py: batch 333, decode step 28.2649 ms, prefill of 1,024 tokens 33.1191 ms. A batch takes
    # 256 x 0.0282649 = 7.23581 s decoding and 333 x 0.0331191 = 11.02866 s prefilling: prefill share
    # 11.02866 / 18.26447 = 0.603831
    assert row["prefill_share"] == pytest.approx(0.603831, abs=1e-5)
    # output: 6.88 / (4,667.4 tokens/s x 3,600) x 1e6 = 0.409459 USD per million output tokens x (1 - 0.603831)
    #       = 0.162215; input: 6.88 x 0.603831 / (18.2320 requests/s x 1,024 x 3,600) x 1e6 = 0.061811
    assert row["usd_per_million_output_tokens"] == pytest.approx(0.162215, abs=1e-5)
    assert row["usd_per_million_input_tokens"] == pytest.approx(0.061811, abs=1e-5)
    # both together are the cost of a request at full load: 1,024 x 0.061811 + 256 x 0.162215 = 104.82 USD per
    # million requests = 6.88 / (18.2320 x 3,600) x 1e6
    per_request = 1024 * row["usd_per_million_input_tokens"] + 256 * row["usd_per_million_output_tokens"]
    assert per_request == pytest.approx(6.88 / (row["deployment_requests_per_s"] * 3600) * 1e6)
    # the existing columns keep their values
    assert (row["monthly_usd"], round(row["outcome_value"], 2)) == (pytest.approx(5022.40), 965.21)


def test_the_api_beside_the_best_self_hosted_offer_with_the_break_even_traffic(api_built):
    rows = {r["region"]: r for r in fetch_dicts(
        api_built, "select * from marts.api_comparisons where workload_id = 'llama31-8b-chat-small'")}
    assert sorted(rows) == ["us-east-1", "us-west-2"]
    east, west = rows["us-east-1"], rows["us-west-2"]
    # The workload: 2 requests/s of 1,024 input + 256 output tokens, peaks x3, 99% succeed. Self-hosted pick:
    # p5.4xlarge (one H100, bf16), U = 6.88 USD an hour per unit, C = 4,667.4 / 256 = 18.2320 requests/s; one unit
    # carries m = C / 3 = 6.0773 requests/s on average (units are sized for the peak); the traffic needs one unit.
    assert (west["self_hosted_instance_type"], west["self_hosted_deployments"]) == ("p5.4xlarge", 1)
    assert west["self_hosted_usd_per_hour"] == pytest.approx(6.88)
    # us-west-2 at 0.30 in / 0.60 out (0.0003 / 0.0006 per 1K): c = (1,024 x 0.30 + 256 x 0.60) / 1e6
    #   = (307.2 + 153.6) / 1e6 = 0.0004608 USD a request; 2 x 0.0004608 x 3,600 = 3.31776 USD an hour,
    #   x 730 = 2,421.96 a month; 0.0004608 / 0.99 x 1e6 = 465.45 USD per million successful requests.
    assert (west["usd_per_million_input_tokens"], west["usd_per_million_output_tokens"]) == (
        pytest.approx(0.30), pytest.approx(0.60))
    assert west["api_usd_per_request"] == pytest.approx(0.0004608)
    assert west["api_usd_per_hour"] == pytest.approx(3.31776)
    assert west["api_monthly_usd"] == pytest.approx(2421.9648)
    assert west["api_usd_per_million_successful_requests"] == pytest.approx(465.4545, abs=1e-3)
    assert west["api_lifetime_usd"] == pytest.approx(12 * 2421.9648)
    # at 2 requests/s the API (3.32 USD an hour) is cheaper than the unit (6.88). Break-even k = U / (3,600 x c)
    #   = 6.88 / (3,600 x 0.0004608) = 6.88 / 1.65888 = 4.1474 requests/s, within what one unit carries (6.0773):
    #   from 4.15 requests/s self-hosting is cheaper.
    assert west["is_self_hosted_cheaper"] is False
    assert west["break_even_requests_per_s"] == pytest.approx(4.14738, abs=1e-4)
    assert west["is_self_hosting_never_cheaper"] is False
    # Units come whole, so that is not "cheaper from 4.15 on": n units carry ((n - 1) x m, n x m] and cost n x 6.88,
    #   cheaper there only above n x k. n = 2: (6.0774, 12.1547], 2k = 8.2948: at 7 requests/s the API's
    #   7 x 1.65888 = 11.61 USD an hour beats 2 x 6.88 = 13.76. n = 3: (12.1547, 18.2321], 3k = 12.4421: at 12.3 the
    #   API's 20.40 beats 20.64. n = 4: 4k = 16.5895 <= 3m = 18.2321, so past 3k it is cheaper at any traffic
    #   (N = m / (m - k) = 6.0774 / 1.9300 = 3.149, N' = 4: the open range starts at (N' - 1) x k).
    assert west["self_hosted_deployment_mean_requests_per_s"] == pytest.approx(6.07737, abs=1e-4)
    assert [(r["from_requests_per_s"], r["to_requests_per_s"]) for r in west["self_hosted_cheaper_ranges"]] == [
        (pytest.approx(4.14738, abs=1e-4), pytest.approx(6.07737, abs=1e-4)),
        (pytest.approx(8.29475, abs=1e-4), pytest.approx(12.15474, abs=1e-4)),
        (pytest.approx(12.44213, abs=1e-4), None)]
    assert west["self_hosted_cheaper_throughout_from_requests_per_s"] == pytest.approx(12.44213, abs=1e-4)
    # us-east-1 at the real 0.22 / 0.22: c = 1,280 x 0.22 / 1e6 = 0.0002816 USD a request; k = 6.88 / (3,600 x
    #   0.0002816) = 6.88 / 1.01376 = 6.7866 requests/s, more than one unit carries (6.0773): never. Equivalently a
    #   self-hosted request at full load costs U x 3 / (3,600 x C) = 20.64 / 65,635.2 = 0.00031446 USD > 0.0002816.
    assert east["api_usd_per_hour"] == pytest.approx(2 * 0.0002816 * 3600)
    assert east["self_hosted_usd_per_request_at_full_load"] == pytest.approx(0.00031446, rel=1e-4)
    assert east["break_even_requests_per_s"] is None
    assert east["is_self_hosting_never_cheaper"] is True
    assert (east["self_hosted_cheaper_ranges"], east["self_hosted_cheaper_throughout_from_requests_per_s"]) == (
        None, None)
    assert (east["price_source_id"], east["api_offer_id"]) == ("bedrock_pricing",
                                                              "aws:us-east-1:Llama 3.1 8B Instruct")



@pytest.mark.parametrize(("unit_usd", "spare", "expected"), [
    # no spare: k = 3.515625 / 1.7578125 = 2 = m. One unit costs 3.515625 an hour, the API's bill at r = 2 is
    # 2 x 1.7578125 = 3.515625: a tie at the most a unit carries; above 2, two units (7.03125) against the API's
    # 1.7578125 x r <= 7.03125 up to r = 4, and so on: n units tie the API only at r = n x m, never beat it
    (3.515625, 0, {"break_even_requests_per_s": None, "break_even_deployments": None,
                   "self_hosted_cheaper_ranges": None, "self_hosted_cheaper_throughout_from_requests_per_s": None,
                   "is_self_hosting_never_cheaper": True}),
    # a spare: k = 1.7578125 / 1.7578125 = 1, m = 2. n = 1 unit and the spare cost 2 x 1.7578125 = 3.515625, the
    # API's bill at r = 2: again only a tie at the unit's capacity ((1 + 1) x k = 1 x m); n = 2 and the spare cost
    # 5.2734375 = the API's at r = 3 and carry up to 4: cheaper above 3 = (2 + 1) x k, and from there on
    # (N = (m + s x k) / (m - k) = 3 / 1 = 3: the open range starts at (N - 1 + 1) x k = 3)
    (1.7578125, 1, {"break_even_requests_per_s": 3.0, "break_even_deployments": 2,
                    "self_hosted_cheaper_ranges": [{"from_requests_per_s": 3.0, "to_requests_per_s": None}],
                    "self_hosted_cheaper_throughout_from_requests_per_s": 3.0,
                    "is_self_hosting_never_cheaper": False}),
])
def test_a_unit_whose_bill_only_ties_the_apis_at_its_capacity_is_no_break_even(api_built, unit_usd, spare, expected):
    # exact binary figures, so the edge is met exactly: the API at 1 / 2,048 = 0.00048828125 USD a request, i.e.
    # 3,600 / 2,048 = 1.7578125 USD an hour per request/s; one self-hosted unit serves C = 6 requests/s, m = 6 / 3
    # (the workload's peaks) = 2 on average
    select = (PROJECT_ROOT / "sql" / "marts" / "api_comparisons.sql").read_text()
    pick = ("select candidate_id from marts.rankings where is_pick and workload_id = 'llama31-8b-chat-small' "
            "and as_of = $as_of")
    # the module's warehouse is shared: the changes are rolled back
    api_built.execute("begin transaction")
    try:
        api_built.execute("update intermediate.int_api_costs_computed set api_usd_per_request = 1 / 2048 "
                          "where region = 'us-west-2' and workload_id = 'llama31-8b-chat-small'")
        api_built.execute(f"update marts.inference_costs set deployment_usd_per_hour = $usd, "
                          f"deployment_requests_per_s = 6, spare_deployments = $spare "
                          f"where as_of = $as_of and candidate_id = ({pick})",
                          {"usd": unit_usd, "spare": spare, "as_of": AS_OF})
        result = api_built.execute(f"select * from ({select}) where region = 'us-west-2' "
                                   "and workload_id = 'llama31-8b-chat-small'")
        [west] = [dict(zip([d[0] for d in result.description], row, strict=True)) for row in result.fetchall()]
    finally:
        api_built.execute("rollback")
    assert (west["api_usd_per_request"], west["self_hosted_deployment_mean_requests_per_s"]) == (1 / 2048, 2.0)
    assert {column: west[column] for column in expected} == expected

def test_an_api_that_lists_only_an_input_price_is_not_compared(api_built):
    # eu-west-1 landed its input price (0.40 per 1M) and no output price: a request's cost cannot be worked out
    assert fetch_dicts(api_built, "select region, direction, usd_per_million_tokens from "
                                  "staging.stg_model_api_prices__tokens where region = 'eu-west-1'") == [
        {"region": "eu-west-1", "direction": "input", "usd_per_million_tokens": pytest.approx(0.40)}]
    assert fetch_dicts(api_built, "select * from intermediate.int_api_costs_computed where region = 'eu-west-1'") == []
    assert fetch_dicts(api_built, "select * from marts.api_comparisons where region = 'eu-west-1'") == []


def test_a_pick_on_spot_breaks_even_with_its_spare_unit_paid(fresh_db, bf16_catalog):
    from flows.sources import aws_spot

    warehouse.load_catalog_tables(fresh_db, bf16_catalog)
    spot = aws_spot.rows_from_pages([("s", {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p5.4xlarge", "ProductDescription": "Linux/UNIX",
        "SpotPrice": "2.000000", "Timestamp": "2026-11-29T12:00:00+00:00"}]}, None)])
    land_all(fresh_db, bf16_catalog, [
        batch(aws_pricing.rows_from_pages([("p", aws_page(aws_product("p5.4xlarge", "6.8800000000", gpu="1")))]),
              "aws_pricing", "aws_pricing", "aws_pricing"),
        batch(spot, "aws_spot", "aws_spot", "aws_spot"),
        batch(bedrock_pricing.rows_from_pages([("p", aws_page(
            bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0003", region="us-west-2", sku="W2IN"),
            bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.0006", region="us-west-2", sku="W2OUT")))]))],
        RUN, AS_OF)
    # the service buys spot here (its default leaves reclaimable capacity out)
    fresh_db.execute("update catalog.workloads set pricing_terms = list_append(pricing_terms, 'spot') "
                     "where workload_id = 'llama31-8b-chat-small'")
    transform.build_models(fresh_db, RUN, AS_OF)
    [west] = fetch_dicts(fresh_db, "select * from marts.api_comparisons where workload_id = 'llama31-8b-chat-small'")
    # the pick: p5.4xlarge on spot, U = 2.00 USD an hour a unit, one serving unit and one spare (4.00 USD an hour)
    assert (west["self_hosted_pricing_term"], west["self_hosted_deployments"],
            west["self_hosted_spare_deployments"]) == ("spot", 2, 1)
    # k = 2.00 / (3,600 x 0.0004608) = 2.00 / 1.65888 = 1.205633 requests/s; m = 18.2320 / 3 = 6.0773. With the spare
    # paid at any traffic, n serving units cost (n + 1) x U: n* = max(1, ceil(1 x 1.205633 / (6.0773 - 1.205633))) =
    # ceil(0.2475) = 1, so the break-even is (1 + 1) x 1.205633 = 2.411265 requests/s (not k: there the API's
    # 2.00 USD an hour buys a unit and no spare)
    assert west["break_even_deployments"] == 1
    assert west["break_even_requests_per_s"] == pytest.approx(2.411265, abs=1e-5)
    # and it stays cheaper: N = (m + s x k) / (m - k) = 7.2829 / 4.8717 = 1.495, N' = 2, so one range, from
    # (N' - 1 + 1) x k = 2.411265 on (2 serving units and the spare, 6.00 an hour, beat the API's 3.32 at 2 x m)
    assert [(r["from_requests_per_s"], r["to_requests_per_s"]) for r in west["self_hosted_cheaper_ranges"]] == [
        (pytest.approx(2.411265, abs=1e-5), None)]
    # at the workload's 2 requests/s the API's 3.318 USD an hour is cheaper than the 4.00 of self-hosting
    assert west["is_self_hosted_cheaper"] is False and west["self_hosted_usd_per_hour"] == pytest.approx(4.0)


def test_a_tie_for_the_pick_gives_the_api_the_same_self_hosted_offer_as_the_decision(fresh_db, bf16_catalog):
    """p5.4xlarge at 6.88 USD an hour in us-east-1 and in us-west-2: the same chip, price and estimate, so the same
    outcome and chip-hour. The tie goes to the lower candidate id (marts.decisions' order), and the API is compared
    with that offer, not with the other."""
    warehouse.load_catalog_tables(fresh_db, bf16_catalog)
    land_all(fresh_db, bf16_catalog, [
        batch(aws_pricing.rows_from_pages([("p", aws_page(
            aws_product("p5.4xlarge", "6.8800000000", gpu="1", sku="A000000000000001"),
            aws_product("p5.4xlarge", "6.8800000000", gpu="1", region="us-west-2", sku="A000000000000002")))]),
              "aws_pricing", "aws_pricing", "aws_pricing"),
        batch(bedrock_pricing.rows_from_pages([("p", aws_page(
            bedrock_item("Llama 3.1 8B Instruct", "Input tokens", "0.0003", region="us-west-2", sku="W2IN"),
            bedrock_item("Llama 3.1 8B Instruct", "Output tokens", "0.0006", region="us-west-2", sku="W2OUT")))]))],
        RUN, AS_OF)
    transform.build_models(fresh_db, RUN, AS_OF)
    outcomes = fetch_dicts(fresh_db, "select offer_id, outcome_value from marts.rankings "
                                     "where workload_id = 'llama31-8b-chat-small' order by offer_id")
    assert [r["offer_id"] for r in outcomes] == ["aws:us-east-1:p5.4xlarge:on_demand",
                                                 "aws:us-west-2:p5.4xlarge:on_demand"]
    assert outcomes[0]["outcome_value"] == outcomes[1]["outcome_value"]  # a tie, to the last digit
    [decision] = fetch_dicts(fresh_db, "select * from marts.decisions where workload_id = 'llama31-8b-chat-small'")
    [west] = fetch_dicts(fresh_db, "select * from marts.api_comparisons where workload_id = 'llama31-8b-chat-small'")
    assert decision["pick_offer_id"] == "aws:us-east-1:p5.4xlarge:on_demand"
    assert west["self_hosted_candidate_id"] == decision["pick_candidate_id"]


def test_the_workload_page_shows_the_hosted_api_section(api_built):
    from flows import reports

    page = reports.render(api_built, AS_OF)["llama31-8b-chat-small.md"]
    section = page.split("## Hosted API", 1)[1].split("\n## ", 1)[0]
    assert ("**aws Llama 3.1 8B Instruct** (us-west-2; bedrock_pricing, as of 2026-11-30): 0.300 USD per million "
            "input tokens and 0.600 per million output tokens, 460.80 USD per million requests. For this traffic: "
            "3.318 USD an hour, 2,421.96 USD a month, 465.45 USD per million successful requests.") in section
    # the ranges of test_the_api_beside_the_best_self_hosted_offer_with_the_break_even_traffic, to 3 decimals
    assert ("at this traffic the API is cheaper on the estimated cost (965.21 against the API's 465.45 USD per "
            "million successful requests). Units come whole, so self-hosting is not cheaper from one traffic on: it "
            "is cheaper at a mean traffic from 4.147 to 6.077 requests/s, from 8.295 to 12.155, and at any from "
            "12.442 on; the API below 4.147 and between those ranges, where the traffic has just outgrown whole units "
            "(at 4.147 a unit's 6.880 USD an hour equals the API's bill; one unit carries up to 6.077 requests/s on "
            "average at 3.00x peaks, estimated).") in section
    assert "becomes cheaper from" not in section
    assert ("Self-hosting is never cheaper: at full load a self-hosted request costs 314.46 USD per million requests "
            "(its units sized for 3.00x peaks) against the API's 281.60.") in section


CHAT_SMALL_PICK = ("select candidate_id from marts.rankings where is_pick and workload_id = 'llama31-8b-chat-small' "
                   "and as_of = ?")


def chat_small_west_with(con, **pick_columns) -> tuple[dict, str]:
    """llama31-8b-chat-small's us-west-2 Bedrock comparison and its page line, rebuilt (marts.api_comparisons, the
    page) after `pick_columns` are set on the pick's ranking row."""
    from flows import reports

    settings = ", ".join(f"{column} = ?" for column in pick_columns)
    con.execute(f"update marts.rankings set {settings} where candidate_id = ({CHAT_SMALL_PICK})",
                [*pick_columns.values(), AS_OF])
    con.execute("delete from marts.api_comparisons where as_of = ?", [AS_OF])
    con.execute(f"insert into marts.api_comparisons by name "
                f"{(PROJECT_ROOT / 'sql' / 'marts' / 'api_comparisons.sql').read_text()}")
    [west] = fetch_dicts(con, "select * from marts.api_comparisons where as_of = ? and region = 'us-west-2' "
                              "and workload_id = 'llama31-8b-chat-small'", [AS_OF])
    page = reports.render(con, AS_OF)["llama31-8b-chat-small.md"]
    return west, page.split("us-west-2; bedrock_pricing", 1)[1].split("\n", 1)[0]


@pytest.mark.parametrize(("unverified", "uncharged", "caveats"), [
    (True, False, "; of the self-hosted offer, **its price is unverified** (catalogs/sources.yaml says why)."),
    (False, True, ("; of the self-hosted offer, its 2-chip split's communication is not charged (no link figure for "
                   "h100-sxm-80gb).")),
    (False, False, "."),
])
def test_the_hosted_api_section_says_each_caveat_of_the_compared_offer_only_where_it_applies(
        api_built, unverified, uncharged, caveats):
    # the pick, p5.4xlarge (one h100-sxm-80gb), is verified and unsplit; here it is marked as the ranking marks an
    # unverified price or an uncharged split (given 2 chips, the figure the clause names), one flag at a time: the
    # verdict (the API cheaper, 965.21 against 465.45) ends with that flag's clause alone, and with none without
    # (the module's warehouse is shared: the pick's row is put back after)
    [before] = api_built.execute(f"select price_unverified, split_uncharged, chips from marts.rankings "
                                 f"where candidate_id = ({CHAT_SMALL_PICK})", [AS_OF]).fetchall()
    assert before == (False, False, 1)
    try:
        west, line = chat_small_west_with(api_built, price_unverified=unverified, split_uncharged=uncharged, chips=2)
        assert (west["self_hosted_price_unverified"], west["self_hosted_split_uncharged"],
                west["self_hosted_chips"]) == (unverified, uncharged, 2)
        assert ("at this traffic the API is cheaper on the estimated cost (965.21 against the API's 465.45 USD per "
                "million successful requests)" + caveats + " Units come whole") in line
        assert line.count("of the self-hosted offer") == (1 if unverified or uncharged else 0)
    finally:
        chat_small_west_with(api_built, **dict(zip(("price_unverified", "split_uncharged", "chips"), before,
                                                   strict=True)))


@pytest.mark.parametrize(("units", "nanos", "message"), [
    # int(0.5) would price these tokens at 0 USD
    (0.5, 0, r"units 0.5 / nanos 0 are not integers"),
    ("0", 1000000220, r"nanos 1000000220 is out of range \(expected billionths of a unit"),
])
def test_vertex_units_with_a_fraction_or_nanos_of_a_whole_unit_are_refused_at_the_rate(units, nanos, message):
    page = {"skus": [vertex_sku("Llama 3.1 8B Instruct Input Tokens", units, nanos, "count")]}
    with pytest.raises(SourceFormatError, match=r"^vertex p1: skus\[0\]\.pricingInfo\[0\]\.pricingExpression"
                                                r"\.tieredRates\[0\]\.unitPrice: " + message):
        vertex_model_prices.rows_from_pages([("vertex p1", page)])


def test_which_is_cheaper_is_not_settled_when_the_likely_range_holds_the_apis_cost(api_built):
    # the module's warehouse is shared (its readers use cursors of their own, which see no open transaction): the
    # pick's range is put back to none after
    try:
        # the pick's estimate is 965.21 USD per million successful requests against the API's 465.45; a likely range
        # of 400 to 1,200 holds 465.45: the API is cheaper at the estimate, but not settled
        west, line = chat_small_west_with(api_built, outcome_low=400.0, outcome_high=1200.0)
        assert (west["is_self_hosted_cheaper"], west["is_api_within_likely_range"]) == (False, True)
        assert ("at this traffic the API is cheaper on the estimated cost (965.21 against the API's 465.45 USD per "
                "million successful requests), but that is not settled: the self-hosted cost's likely range, 400.00 "
                "to 1,200.00, reaches below the API's.") in line
        # 500 to 1,200 lies wholly above 465.45: settled
        west, line = chat_small_west_with(api_built, outcome_low=500.0, outcome_high=1200.0)
        assert west["is_api_within_likely_range"] is False
        assert ("465.45 USD per million successful requests), and the self-hosted cost's likely range, 500.00 to "
                "1,200.00, stays above the API's.") in line
    finally:
        chat_small_west_with(api_built, outcome_low=None, outcome_high=None)
