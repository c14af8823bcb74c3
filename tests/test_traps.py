"""Every trap FACTS.md lists ("Traps seen in real published catalogs") has a fixture here, caught by a named
expectation: the row is quarantined with that name (or the catalog is refused with it), and rows in = landed +
quarantined. Rows go through land.land_all, as in a run, so the derived check_* columns are added."""

from __future__ import annotations

import datetime as dt
import io
import json

import pandas as pd
import polars as pl
import pytest
from builders import aws_page, aws_product, azure_item, azure_page, gcp_sku, mlperf_inference_result

from flows import checks, transform
from flows.catalog import CatalogError, load_catalog
from flows.land import land_all
from flows.source_batches import SourceBatch
from flows.sources import aws_pricing, aws_spot, azure_retail, gcp_billing, mlperf_inference, price_sheet

AS_OF = dt.date(2026, 11, 30)
RUN = "2026-11-30-traps"
ND = "Standard_ND96isr_H100_v5"
ND_LINUX = "Virtual Machines NDsr H100 v5 Series"


# ---------------------------------------------------------------- helpers
def batch(source_id: str, kind: str, table: str, rows: list[dict], as_of: dt.date = AS_OF) -> SourceBatch:
    return SourceBatch.of_rows(source_id, kind, table, ["test"], as_of,
                       [r | {"row_no": i, "source_id": source_id, "data_as_of": as_of}
                        for i, r in enumerate(rows)])


def land(con, catalog, *batches: SourceBatch, as_of: dt.date = AS_OF, run_id: str = RUN) -> dict:
    """Land batches as a run does; every load's rows in = landed + quarantined."""
    loads = land_all(con, catalog, list(batches), run_id, as_of)
    for load in loads:
        assert load.status == "landed", load.error
        assert load.rows_in == load.rows_landed + load.rows_quarantined
    return {load.source_id: (load.rows_in, load.rows_landed, load.rows_quarantined) for load in loads}


def quarantined(con, as_of: dt.date = AS_OF) -> list[tuple]:
    """(source_id, row_no, expectation, column, value) of every quarantined failure, in order."""
    return con.execute("select source_id, row_no, expectation, column_name, unexpected_value from ops.quarantine "
                       "where as_of = ? order by source_id, row_no, expectation", [as_of]).fetchall()


def reason_of(con, expectation: str) -> str:
    [(reason,)] = con.execute("select distinct reason from ops.quarantine where expectation = ?",
                              [expectation]).fetchall()
    return reason


def aws_item(instance_type: str, usd: str, sku: str, **attributes) -> str:
    """A Price List item; `attributes` override the product's (None removes one)."""
    item = json.loads(aws_product(instance_type, usd, sku=sku))
    attrs = item["product"]["attributes"]
    for key, value in attributes.items():
        if value is None:
            attrs.pop(key)
        else:
            attrs[key] = value
    return json.dumps(item)


def aws_rows(*items: str) -> list[dict]:
    return aws_pricing.rows_from_pages([("price-list page 1", aws_page(*items))])


def aws_batch(*items: str, as_of: dt.date = AS_OF) -> SourceBatch:
    return batch("aws_pricing", "aws_pricing", "aws_pricing", aws_rows(*items), as_of)


def azure(sku: str, price: float, meter_id: str, *, product: str = ND_LINUX, meter: str = "ND96isr H100 v5",
          price_type: str = "Consumption", term: str | None = None) -> dict:
    """A Retail Prices item with its own meter and SKU id (as real items have)."""
    item = azure_item(sku, price, product=product, meter=meter, price_type=price_type)
    item.update(meterId=meter_id, skuId=f"sku-{meter_id}")
    if term is not None:
        item["reservationTerm"] = term
    return item


def azure_batch(*items: dict) -> SourceBatch:
    rows = azure_retail.rows_from_pages([("eastus page 1", azure_page(*items))])
    return batch("azure_retail", "azure_retail", "azure_retail", rows)


def gcp_batch(*skus: dict) -> SourceBatch:
    for n, sku in enumerate(skus):
        sku["skuId"] = f"TEST-0000-{n:04d}"
    rows = gcp_billing.rows_from_pages([("skus page 1", {"skus": list(skus), "nextPageToken": ""})])
    return batch("gcp_billing", "gcp_billing", "gcp_billing", rows)


def spot_batch(*points: tuple[str, str, str], as_of: dt.date = AS_OF) -> SourceBatch:
    """(zone, instance type, SpotPrice) points of one describe_spot_price_history page."""
    page = {"SpotPriceHistory": [{"AvailabilityZone": zone, "InstanceType": itype, "ProductDescription": "Linux/UNIX",
                                  "SpotPrice": price, "Timestamp": "2026-11-20T06:00:00Z"}
                                 for zone, itype, price in points]}
    return batch("aws_spot", "aws_spot", "aws_spot", aws_spot.rows_from_pages([("spot page 1", page, None)]), as_of)


def sheet_batch(*entries: dict) -> SourceBatch:
    rows = [price_sheet.entry_row(e, f"sheet.yaml: entries[{i}]") for i, e in enumerate(entries)]
    return batch("price_sheet", "price_sheet", "price_sheet", rows)


# ---------------------------------------------------------------- "a $0.00 AWS row for p5.48xlarge (a Capacity Block)"
def test_zero_dollar_capacity_block_row_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
        aws_item("p5.48xlarge", "0.0000000000", "CAPBLOCK00000001", marketoption="CapacityBlock")))
    assert loads == {"aws_pricing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_pricing", 1, "on_demand_hourly_price_positive", "price_usd", "0.0")]


# ---------------------------------------------------------------- "Windows and license-included rows beside Linux"
def test_windows_and_licence_included_rows_land_but_never_pose_as_linux(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
        aws_item("p5.48xlarge", "63.8720000000", "WINDOWSSKU000001", operatingSystem="Windows"),
        aws_item("p5.48xlarge", "70.0000000000", "SQLSKU0000000001", operatingSystem="Windows",
                 licenseModel="License included", preInstalledSw="SQL Std")))
    assert loads == {"aws_pricing": (3, 3, 0)}  # landed as what they are: classified in staging
    transform.build_models(fresh_db, RUN, AS_OF)
    assert fresh_db.execute("select offer_id, usd_per_hour from intermediate.int_offers_priced").fetchall() == [
        ("aws:us-east-1:p5.48xlarge:on_demand", 55.04)]


@pytest.mark.parametrize(("attribute", "expectation"), [
    ("operatingSystem", "operating_system_present"),
    ("licenseModel", "license_model_present"),
    ("preInstalledSw", "pre_installed_sw_present"),
    ("tenancy", "tenancy_present"),
    ("capacitystatus", "capacity_status_present"),
    ("marketoption", "market_option_present"),
])
def test_a_row_missing_a_classifying_attribute_is_quarantined(fresh_db, catalog, attribute, expectation):
    # without the attribute, a Windows / licence-included / dedicated / Capacity Block row could pass for Linux
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
        aws_item("p5.48xlarge", "63.8720000000", "UNKNOWNSKU000001", **{attribute: None})))
    assert loads == {"aws_pricing": (2, 1, 1)}
    [(_, row_no, name, _, value)] = quarantined(fresh_db)
    assert (row_no, name, value) == (1, expectation, None)


# ---------------------------------------------------------------- "GCP TPU price 700.0 used as a placeholder"
def test_gcp_700_placeholder_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, gcp_batch(
        gcp_sku("TPU v5p chip running in Iowa", "4", 200000000, group="TPU"),
        gcp_sku("TPU v5p chip running in Netherlands", "700", 0, group="TPU", regions=("europe-west4",))))
    assert loads == {"gcp_billing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("gcp_billing", 1, "price_not_placeholder", "price_usd", "700.0")]


# ---------------------------------------------------------------- "duplicate rows"
def test_aws_exact_duplicate_lands_once(fresh_db, catalog):
    p5 = aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001")
    loads = land(fresh_db, catalog, aws_batch(p5, aws_item("p5en.48xlarge", "63.2960000000", "P5ENSKU000000001"), p5))
    assert loads == {"aws_pricing": (3, 2, 1)}
    # the first copy lands, the later one names it
    assert quarantined(fresh_db) == [("aws_pricing", 2, "natural_key_unique", "check_duplicate_of",
                                      "same values as price-list page 1: PriceList[0]")]
    assert fresh_db.execute("select row_no from raw.aws_pricing order by 1").fetchall() == [(0,), (1,)]


def test_aws_conflicting_duplicates_are_all_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
        aws_item("p5.48xlarge", "98.3200000000", "LINUXSKU00000001"),
        # a batch with no row left would leave the source stale (tests/test_guards.py): one good row lands
        aws_item("p5en.48xlarge", "63.2960000000", "LINUXSKU00000002")))
    assert loads == {"aws_pricing": (3, 1, 2)}  # which price is right? neither can be trusted
    rows = quarantined(fresh_db)
    assert [(row_no, name) for _, row_no, name, _, _ in rows] == [(0, "natural_key_unique"),
                                                                 (1, "natural_key_unique")]
    assert {value for *_, value in rows} == {
        "price-list page 1: PriceList[0] and price-list page 1: PriceList[1] disagree on price_text, price_usd, description"}
    assert "none can be trusted" in reason_of(fresh_db, "natural_key_unique")


SERVER_DISAGREE = ("summary_results.json: [2] (4.1-0002, llama2-70b-99, Server) and summary_results.json: [3] "
                   "(4.1-0002, llama2-70b-99, Server) disagree on performance_result_text, performance_result")


def test_mlperf_duplicates_exact_and_conflicting(fresh_db, catalog):
    results = [
        mlperf_inference_result("4.1-0001", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3),
        mlperf_inference_result("4.1-0001", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24528.3),  # copy
        mlperf_inference_result("4.1-0002", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 21000.0),
        mlperf_inference_result("4.1-0002", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Server", 23000.0),  # differs
        mlperf_inference_result("4.1-0002", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 24000.0),  # other key
    ]
    rows = mlperf_inference.result_rows(results, "summary_results.json")
    loads = land(fresh_db, catalog, batch("mlperf_inference_snapshot", "mlperf_inference", "mlperf_inference", rows))
    assert loads == {"mlperf_inference_snapshot": (5, 2, 3)}
    assert [(row_no, name, value) for _, row_no, name, _, value in quarantined(fresh_db)] == [
        (1, "natural_key_unique", "same values as summary_results.json: [0] (4.1-0001, llama2-70b-99, Offline)"),
        (2, "natural_key_unique", SERVER_DISAGREE),
        (3, "natural_key_unique", SERVER_DISAGREE),
    ]


def test_rows_without_any_key_are_not_duplicates_of_each_other():
    rows = [{"row_no": 0, "sku": None, "offer_term_code": None, "rate_code": None, "price_usd": 1.0},
            {"row_no": 1, "sku": None, "offer_term_code": None, "rate_code": None, "price_usd": 2.0}]
    assert checks.duplicate_notes(pl.DataFrame(rows), checks.NATURAL_KEYS["aws_pricing"]) == {}


# ---------------------------------------------------------------- "an Azure ND96isr_H100_v5 listed with 12 GPUs"
def test_quote_with_more_gpus_than_the_instance_has_is_quarantined(fresh_db, catalog):
    # Azure Retail rows carry no GPU count: the count comes with a quote in the user's price sheet
    loads = land(fresh_db, catalog, sheet_batch(
        {"kind": "quote", "cloud": "azure", "region": "eastus", "instance_type": ND, "usd_per_hour": 80.0,
         "accelerator_count": 12, "source": "reseller quote"},
        {"kind": "quote", "cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "usd_per_hour": 40.0,
         "accelerator_count": 8, "source": "private pricing agreement"}))
    assert loads == {"price_sheet": (2, 1, 1)}
    assert quarantined(fresh_db) == [("price_sheet", 0, "accelerator_count_matches_catalog", "accelerator_count",
                                      "12.0 (check_catalog_accelerator_count: 8.0)")]


def test_quote_naming_another_accelerator_than_the_instance_has_is_quarantined(fresh_db, catalog):
    # p5.48xlarge has 8 H100s (instances.yaml): a quote saying H200 would be priced on the H100 without a word
    loads = land(fresh_db, catalog, sheet_batch(
        {"kind": "quote", "cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "usd_per_hour": 40.0,
         "accelerator": "h200-sxm-141gb", "accelerator_count": 8, "source": "a quote that names the wrong chip"},
        {"kind": "quote", "cloud": "aws", "region": "us-east-1", "instance_type": "p5en.48xlarge", "usd_per_hour": 50.0,
         "accelerator": "NVIDIA H200-SXM5-141GB", "accelerator_count": 8, "source": "an alias of the right chip"}))
    assert loads == {"price_sheet": (2, 1, 1)}
    assert quarantined(fresh_db) == [("price_sheet", 0, "accelerator_matches_catalog", "check_quoted_accelerator",
                                      "h200-sxm-141gb (check_catalog_accelerator: h100-sxm-80gb)")]


def test_aws_row_with_more_gpus_than_the_catalog_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001", gpu="12"),
        aws_item("p5en.48xlarge", "63.2960000000", "P5ENSKU000000001", gpu="8"),
        aws_item("trn1.32xlarge", "21.5000000000", "TRN1SKU000000001", gpu=None),  # ML ASIC: no gpu attribute
        aws_item("inf2.48xlarge", "12.9812700000", "INF2SKU000000001", gpu="0")))  # no GPUs: its chips are not GPUs
    assert loads == {"aws_pricing": (4, 3, 1)}
    assert quarantined(fresh_db) == [("aws_pricing", 0, "accelerator_count_matches_catalog", "gpu",
                                      "12 (check_catalog_accelerator_count: 8)")]


# ---------------------------------------------------------------- "a spot price equal to on-demand" (Azure)
def test_azure_spot_equal_to_on_demand_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, azure_batch(
        azure(ND, 98.32, "m-linux"),
        azure(ND, 102.736, "m-windows", product=f"{ND_LINUX} Windows"),
        azure(ND, 98.32, "m-spot", meter="ND96isr H100 v5 Spot"),  # = the Linux on-demand price
        azure("Standard_NC40ads_H100_v5", 6.98, "m-nc", product="Virtual Machines NCadsH100v5 Series",
              meter="NC40ads H100 v5"),
        azure("Standard_NC40ads_H100_v5", 2.19, "m-nc-spot", product="Virtual Machines NCadsH100v5 Series",
              meter="NC40ads H100 v5 Spot")))
    assert loads == {"azure_retail": (5, 4, 1)}
    assert quarantined(fresh_db) == [("azure_retail", 2, "spot_below_on_demand", "retail_price",
                                      "98.32 (check_on_demand_usd_per_hour: 98.32)")]


# ---------------------------------------------------------------- "spot prices above on-demand"
def test_aws_spot_above_on_demand_in_the_same_run_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog,
                 aws_batch(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
                           aws_item("p5.48xlarge", "63.8720000000", "WINDOWSSKU000001", operatingSystem="Windows")),
                 spot_batch(("us-east-1a", "p5.48xlarge", "60.000000"),  # above Linux on-demand (below Windows)
                            ("us-east-1b", "p5.48xlarge", "10.240000"),
                            ("us-east-2a", "p5e.48xlarge", "63.000000")))  # no on-demand price to compare with
    assert loads == {"aws_pricing": (2, 2, 0), "aws_spot": (3, 2, 1)}
    assert quarantined(fresh_db) == [("aws_spot", 0, "spot_below_on_demand", "price_usd",
                                      "60.0 (check_on_demand_usd_per_hour: 55.04)")]


def test_aws_spot_is_compared_with_the_last_landed_on_demand_price(fresh_db, catalog):
    yesterday = AS_OF - dt.timedelta(days=1)
    land(fresh_db, catalog, aws_batch(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"), as_of=yesterday),
         as_of=yesterday, run_id="yesterday")
    loads = land(fresh_db, catalog, spot_batch(("us-east-1a", "p5.48xlarge", "55.040000"),
                                               ("us-east-1b", "p5.48xlarge", "21.150000")))
    assert loads == {"aws_spot": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_spot", 0, "spot_below_on_demand", "price_usd",
                                      "55.04 (check_on_demand_usd_per_hour: 55.04)")]


def test_the_latest_spot_price_is_the_latest_instant_however_its_timestamp_is_written(fresh_db, catalog):
    """A saved response holds Timestamp as text: `2026-11-20T01:00:00Z`, or `2026-11-20 23:00:00+00:00` as
    json.dump(boto3's response, default=str) writes it. Compared as text, a space sorts before `T`, and staging kept
    the 01:00 price (30.00) as the latest. Both are read as UTC instants; a text with no offset is quarantined."""
    page = {"SpotPriceHistory": [
        {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
         "SpotPrice": price, "Timestamp": stamp}
        for price, stamp in (("30.000000", "2026-11-20T01:00:00Z"), ("20.000000", "2026-11-20 23:00:00+00:00"),
                             ("25.000000", "2026-11-21T00:30:00+02:00"), ("15.000000", "yesterday"))]}
    rows = aws_spot.rows_from_pages([("spot.json", page, None)])
    # 00:30 +02:00 on the 21st is 22:30 UTC on the 20th: before the second price, though its text sorts after it
    assert [r["price_timestamp"] for r in rows] == [
        "2026-11-20T01:00:00Z", "2026-11-20T23:00:00Z", "2026-11-20T22:30:00Z", "yesterday"]
    loads = land(fresh_db, catalog, batch("aws_spot", "aws_spot", "aws_spot", rows))
    assert loads == {"aws_spot": (4, 3, 1)}
    assert quarantined(fresh_db) == [("aws_spot", 3, "price_timestamp_utc", "price_timestamp", "yesterday")]
    transform.build_models(fresh_db, RUN, AS_OF)
    # the latest instant is 23:00 UTC (20.00)
    assert fresh_db.execute("select price_timestamp, price_usd from staging.stg_aws_spot__prices").fetchall() == [
        ("2026-11-20T23:00:00Z", 20.0)]


def test_a_spot_price_dated_after_its_data_is_quarantined_not_taken_as_the_latest(fresh_db, catalog):
    """One point dated 2099-01-01 was the zone's latest price, and the offer's spot price (1.00 USD/h against the
    zone's 10.24). A price may take effect up to the end of the day after its data's as-of date: the file's as-of is
    2026-11-30, so up to 2026-11-30 + 2 days = 2026-12-02T00:00:00Z; a second later is quarantined."""
    page = {"SpotPriceHistory": [
        {"AvailabilityZone": zone, "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
         "SpotPrice": price, "Timestamp": stamp}
        for zone, price, stamp in (("us-east-1a", "10.240000", "2026-11-20T06:00:00Z"),
                                   ("us-east-1a", "1.000000", "2099-01-01T00:00:00Z"),
                                   ("us-east-1b", "11.000000", "2026-12-02T00:00:00Z"),
                                   ("us-east-1b", "2.000000", "2026-12-02T00:00:01Z"))]}
    rows = aws_spot.rows_from_pages([("spot.json", page, None)])
    loads = land(fresh_db, catalog, batch("aws_spot", "aws_spot", "aws_spot", rows))
    assert loads == {"aws_spot": (4, 2, 2)}
    assert quarantined(fresh_db) == [
        ("aws_spot", 1, "price_timestamp_not_after_as_of", "price_timestamp",
         "2099-01-01T00:00:00Z (check_latest_price_timestamp: 2026-12-02T00:00:00Z)"),
        ("aws_spot", 3, "price_timestamp_not_after_as_of", "price_timestamp",
         "2026-12-02T00:00:01Z (check_latest_price_timestamp: 2026-12-02T00:00:00Z)")]
    transform.build_models(fresh_db, RUN, AS_OF)
    # each zone's latest point that landed; the offer takes the lower: 10.24 in us-east-1a
    assert fresh_db.execute("select availability_zone, price_usd, price_timestamp from staging.stg_aws_spot__prices "
                            "order by availability_zone").fetchall() == [
        ("us-east-1a", 10.24, "2026-11-20T06:00:00Z"), ("us-east-1b", 11.0, "2026-12-02T00:00:00Z")]
    assert fresh_db.execute("select usd_per_hour from intermediate.int_offers_priced where pricing_term = 'spot'"
                            ).fetchall() == [(10.24,)]


def test_a_backfills_spot_prices_are_checked_against_the_on_demand_prices_of_its_own_date(fresh_db, catalog):
    """Spot prices backfilled for 11-29 are checked against the on-demand price landed on or before 11-29 (55.04),
    not against a later run's (20.00 on 11-30): 30.00 is below 55.04, and was quarantined as above 20.00."""
    before, later, backfill = AS_OF - dt.timedelta(days=3), AS_OF, AS_OF - dt.timedelta(days=1)
    land(fresh_db, catalog, aws_batch(aws_item("p5.48xlarge", "55.0400000000", "S1"), as_of=before), as_of=before,
         run_id="before")
    land(fresh_db, catalog, aws_batch(aws_item("p5.48xlarge", "20.0000000000", "S1"), as_of=later), as_of=later,
         run_id="later")
    loads = land(fresh_db, catalog, spot_batch(("us-east-1a", "p5.48xlarge", "30.000000"), as_of=backfill),
                 as_of=backfill, run_id="backfill")
    assert loads == {"aws_spot": (1, 1, 0)}


def test_spot_is_not_checked_against_an_on_demand_price_that_is_itself_quarantined(fresh_db, catalog):
    """Two p5 on-demand copies of one SKU that disagree (55.04 and 5.504) are both quarantined (natural_key_unique):
    the spot price (10.24) is checked against no on-demand price of this run, not against the rejected 5.504. The
    Azure check likewise."""
    loads = land(fresh_db, catalog,
                 aws_batch(aws_item("p5.48xlarge", "55.0400000000", "L1"), aws_item("p5.48xlarge", "5.5040000000", "L1"),
                           aws_item("p5en.48xlarge", "63.2960000000", "E1")),  # a batch with no row left is stale
                 spot_batch(("us-east-1a", "p5.48xlarge", "10.240000")))
    assert loads == {"aws_pricing": (3, 1, 2), "aws_spot": (1, 1, 0)}
    assert {row[2] for row in quarantined(fresh_db)} == {"natural_key_unique"}


def test_azure_spot_is_not_checked_against_a_quarantined_on_demand_copy(fresh_db, catalog):
    loads = land(fresh_db, catalog, azure_batch(azure(ND, 98.32, "m-linux"), azure(ND, 9.832, "m-linux"),
                                                azure(ND, 40.0, "m-spot", meter="ND96isr H100 v5 Spot")))
    assert loads == {"azure_retail": (3, 1, 2)}
    assert {row[2] for row in quarantined(fresh_db)} == {"natural_key_unique"}


def test_a_price_with_no_currency_or_unit_is_quarantined_not_read_as_usd_per_hour(fresh_db, catalog):
    """GX's in-set check passes a null: a GCP SKU without its currency or usage unit landed and priced a TPU offer
    (9.60 and 20.00 USD/h), an Azure item without its currency an H100 offer (98.32)."""
    no_currency = gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU")
    del no_currency["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]["currencyCode"]
    no_unit = gcp_sku("TPU v6e chip running in Iowa", "2", 500000000, group="TPU")
    del no_unit["pricingInfo"][0]["pricingExpression"]["usageUnit"]
    whole = gcp_sku("TPU v5p chip running in Iowa", "4", 200000000, group="TPU")
    item = azure(ND, 98.32, "m-linux")
    del item["currencyCode"]
    loads = land(fresh_db, catalog, gcp_batch(no_currency, no_unit, whole),
                 azure_batch(item, azure(ND, 40.0, "m-spot", meter="ND96isr H100 v5 Spot")))
    assert loads == {"gcp_billing": (3, 1, 2), "azure_retail": (2, 1, 1)}
    assert sorted((row[0], row[1], row[2]) for row in quarantined(fresh_db)) == [
        ("azure_retail", 0, "currency_present"), ("gcp_billing", 0, "currency_present"),
        ("gcp_billing", 1, "usage_unit_present")]


def test_gcp_spot_sku_above_its_on_demand_sku_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, gcp_batch(
        gcp_sku("Nvidia H100 80GB GPU running in Iowa", "4", 200761250),
        gcp_sku("Spot Preemptible Nvidia H100 80GB GPU running in Iowa", "5", 0, usage="Preemptible"),
        gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU"),
        gcp_sku("Spot Preemptible TPU v5e chip running in Iowa", "0", 245000000, group="TPU", usage="Preemptible")))
    assert loads == {"gcp_billing": (4, 3, 1)}
    assert quarantined(fresh_db) == [("gcp_billing", 1, "spot_below_on_demand", "price_usd",
                                      "5.0 (check_on_demand_usd_per_hour: 4.20076125)")]


def test_an_azure_low_priority_price_is_not_taken_as_the_on_demand_price(fresh_db, catalog):
    """Low Priority is a Consumption row that is not Spot: taken as on-demand, 29.50 (below 98.32) was the price the
    spot 39.00 was checked against, and a real spot offer went to quarantine (39.00 >= 29.50)."""
    loads = land(fresh_db, catalog, azure_batch(
        azure(ND, 98.32, "m-linux"),
        azure(ND, 29.5, "m-low", meter="ND96isr H100 v5 Low Priority"),
        azure(ND, 39.0, "m-spot", meter="ND96isr H100 v5 Spot")))  # 39.00 < 98.32: a spot price below on-demand
    assert loads == {"azure_retail": (3, 3, 0)}
    assert quarantined(fresh_db) == []


def test_aws_spot_is_compared_with_the_newest_landed_on_demand_price_not_the_oldest(fresh_db, catalog):
    """On-demand 20.00 landed on 11-27, then 55.04 on 11-29: spot 30.00 on 11-30 is checked against 55.04 (the
    newest load on or before 11-30) and lands; against the 11-27 price it would be quarantined (30.00 >= 20.00)."""
    oldest, newest = AS_OF - dt.timedelta(days=3), AS_OF - dt.timedelta(days=1)
    land(fresh_db, catalog, aws_batch(aws_item("p5.48xlarge", "20.0000000000", "S1"), as_of=oldest), as_of=oldest,
         run_id="oldest")
    land(fresh_db, catalog, aws_batch(aws_item("p5.48xlarge", "55.0400000000", "S1"), as_of=newest), as_of=newest,
         run_id="newest")
    loads = land(fresh_db, catalog, spot_batch(("us-east-1a", "p5.48xlarge", "30.000000")))
    assert loads == {"aws_spot": (1, 1, 0)}
    assert quarantined(fresh_db) == []


def test_aws_spot_is_checked_against_the_lowest_on_demand_price_across_the_runs_price_lists(fresh_db, catalog):
    """Two Price List batches in one run (the API's and an offer file) give p5.48xlarge 55.04 and 70.00: the spot
    60.00 is checked against the lower, 55.04, and quarantined (60.00 >= 55.04); against 70.00 it would land."""
    loads = land(fresh_db, catalog,
                 aws_batch(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001")),
                 batch("aws_offer_file", "aws_offer_file", "aws_pricing",
                       aws_rows(aws_item("p5.48xlarge", "70.0000000000", "LINUXSKU00000002"))),
                 spot_batch(("us-east-1a", "p5.48xlarge", "60.000000"), ("us-east-1b", "p5.48xlarge", "10.240000")))
    assert loads == {"aws_pricing": (1, 1, 0), "aws_offer_file": (1, 1, 0), "aws_spot": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_spot", 0, "spot_below_on_demand", "price_usd",
                                      "60.0 (check_on_demand_usd_per_hour: 55.04)")]


def test_a_windows_spot_price_is_not_checked_against_the_linux_on_demand_price(fresh_db, catalog):
    """Windows spot 60.00 is above the Linux on-demand 55.04 but below Windows on-demand (63.872): it is not compared
    with the Linux price and lands; the Linux spot 60.00 beside it is quarantined (60.00 >= 55.04)."""
    page = {"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge",
                                  "ProductDescription": os, "SpotPrice": "60.000000",
                                  "Timestamp": "2026-11-20T06:00:00Z"} for os in ("Windows", "Linux/UNIX")]}
    loads = land(fresh_db, catalog,
                 aws_batch(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001")),
                 batch("aws_spot", "aws_spot", "aws_spot", aws_spot.rows_from_pages([("spot page 1", page, None)])))
    assert loads == {"aws_pricing": (1, 1, 0), "aws_spot": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_spot", 1, "spot_below_on_demand", "price_usd",
                                      "60.0 (check_on_demand_usd_per_hour: 55.04)")]


def test_gcp_spot_is_checked_against_the_lowest_of_two_on_demand_skus_of_one_description(fresh_db, catalog):
    """Two on-demand SKUs (two ids) describe one GPU in one region at 4.00 and 6.00: the spot 5.00 is checked against
    the lower, 4.00, and quarantined (5.00 >= 4.00); against 6.00 it would land."""
    loads = land(fresh_db, catalog, gcp_batch(
        gcp_sku("Nvidia H100 80GB GPU running in Iowa", "4", 0),
        gcp_sku("Nvidia H100 80GB GPU running in Iowa", "6", 0),
        gcp_sku("Spot Preemptible Nvidia H100 80GB GPU running in Iowa", "5", 0, usage="Preemptible")))
    assert loads == {"gcp_billing": (3, 2, 1)}
    assert quarantined(fresh_db) == [("gcp_billing", 2, "spot_below_on_demand", "price_usd",
                                      "5.0 (check_on_demand_usd_per_hour: 4.0)")]


# ---------------------------------------------------------------- "trn2 memory given as 512 GiB per chip (it is 96)"
# (96 GiB: the catalog holds 96 x 1.073741824 = 103.08 GB, since GB = 1e9 bytes)
def test_embedded_catalog_figures_are_plausible(catalog):
    assert checks.check_catalog(catalog) is None


def test_a_catalog_that_passed_is_not_checked_again_and_a_changed_figure_is(tmp_path, monkeypatch, catalog_copy):
    from flows import gx_process

    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    checks.check_catalog(load_catalog(catalog_copy, check_figures=False))
    [marker] = (tmp_path / "cache" / "catalog-checks").glob("*.passed")
    calls = []
    real = gx_process.validate_rows  # where the check hands its rows to Great Expectations
    monkeypatch.setattr(gx_process, "validate_rows", lambda *a, **k: calls.append(1) or real(*a, **k))
    checks.check_catalog(load_catalog(catalog_copy, check_figures=False))
    assert calls == []  # the same figures, suite and code: the earlier verdict stands
    path = catalog_copy / "accelerators.yaml"
    path.write_text(path.read_text().replace("memory_gb: {value: 103.08, source: aws-neuron-trainium2",
                                             "memory_gb: {value: 512, source: aws-neuron-trainium2"))
    with pytest.raises(CatalogError, match="trainium2.memory_gb: 512 fails"):  # another digest: checked, refused
        checks.check_catalog(load_catalog(catalog_copy, check_figures=False))
    assert calls == [1] and [p.name for p in marker.parent.iterdir()] == [marker.name]


H100 = "accelerators.yaml: accelerators.h100-sxm-80gb"


@pytest.mark.parametrize(("figure", "wrong", "message"), [
    ("memory_gb: {value: 80,", "memory_gb: {value: 640,",  # the 8-GPU instance's 640 GB
     f"{H100}.memory_gb: 640 fails memory_per_chip_plausible: memory_gb is per chip: between 8 and 288 GB (the "
     f"largest HBM stack shipped is 288 GB); a larger figure is usually a whole instance's host memory divided "
     f"wrongly (e.g. trn2 listed as 512 GiB per chip; it has 96 GiB, 103.08 GB)"),
    ("memory_bandwidth_tbps: {value: 3.35,", "memory_bandwidth_tbps: {value: 3350,",  # GB/s typed as TB/s
     f"{H100}.memory_bandwidth_tbps: 3350 fails memory_bandwidth_per_chip_plausible: memory_bandwidth_tbps is per "
     f"chip in TB/s: between 0.1 and 20 (HBM3e chips reach about 8); a larger figure is a whole system's, a smaller "
     f"one GB/s typed as TB/s"),
    ("tdp_w: {value: 700,", "tdp_w: {value: 5600,",  # 8 x 700 W: the server's
     f"{H100}.tdp_w: 5600 fails tdp_per_chip_plausible: tdp_w is one chip's power in watts: between 10 and 2,000; a "
     f"larger figure is a whole server's or kW typed as W"),
    ("bf16: {value: 989.4,", "bf16: {value: 7915.2,",  # 8 x 989.4: the system's
     f"{H100}.peak_tflops.bf16: 7915.2 fails peak_bf16_per_chip_plausible: peak_tflops.bf16 is one chip's dense "
     f"peak: between 1 and 5,000 TFLOPS (B200: 2,250); a larger figure is a whole system's or a sparse headline of "
     f"a future part"),
], ids=["memory", "bandwidth", "tdp", "peak-bf16"])
def test_each_implausible_per_chip_figure_refuses_the_catalog(catalog_copy, figure, wrong, message):
    path = catalog_copy / "accelerators.yaml"
    text = path.read_text()
    h100 = text.index("  h100-sxm-80gb:\n")
    assert text.count(figure, h100, text.index("\n\n", h100)) == 1
    path.write_text(text[:h100] + text[h100:].replace(figure, wrong, 1))
    with pytest.raises(CatalogError) as refused:
        checks.check_catalog(load_catalog(catalog_copy))
    assert str(refused.value) == message


def test_trn2_memory_of_512_per_chip_refuses_the_catalog(catalog_copy, fresh_db):
    path = catalog_copy / "accelerators.yaml"
    text = path.read_text()
    assert text.count("memory_gb: {value: 103.08, source: aws-neuron-trainium2") == 1
    path.write_text(text.replace("memory_gb: {value: 103.08, source: aws-neuron-trainium2",
                                 "memory_gb: {value: 512, source: aws-neuron-trainium2"))
    broken = load_catalog(catalog_copy, check_figures=False)  # a well-formed catalog: only the figure is wrong
    message = (r"^accelerators\.yaml: accelerators\.trainium2\.memory_gb: 512 fails memory_per_chip_plausible: "
               r"memory_gb is per chip: between 8 and 288 GB")
    with pytest.raises(CatalogError, match=message):
        checks.check_catalog(broken)
    with pytest.raises(CatalogError, match=message):  # a run stops before landing anything
        land_all(fresh_db, broken, [aws_batch(aws_item("p5.48xlarge", "55.04", "LINUXSKU00000001"))],
                 RUN, AS_OF)
    assert fresh_db.execute("select count(*) from ops.source_loads").fetchone() == (0,)


# ---------------------------------------------------------------- "fractional GPUs (g6f: 0.25 of an L4)"
def test_fractional_gpu_row_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("g6.2xlarge", "0.9776000000", "G6SKU00000000001", gpu="1"),
        aws_item("g6f.large", "0.2000000000", "G6FSKU0000000001", gpu="0.25", vcpu="2")))
    assert loads == {"aws_pricing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_pricing", 1, "whole_accelerators", "gpu", "0.25")]
    assert reason_of(fresh_db, "whole_accelerators").startswith("fractional GPUs are not supported")


# ---------------------------------------------------------------- the offer file's "NA" read as null
def test_pre_installed_sw_na_read_as_null_is_quarantined(fresh_db, catalog):
    # pandas' default reader turns the offer file's "NA" (no pre-installed software) into a missing value
    frame = pd.read_csv(io.StringIO("Pre Installed S/W,Operating System\nNA,Linux\n"))
    assert frame["Pre Installed S/W"].isna().all()
    rows = aws_rows(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
                    aws_item("p5en.48xlarge", "63.2960000000", "P5ENSKU000000001"))
    rows[1]["pre_installed_sw"] = None  # what such a reader hands on
    loads = land(fresh_db, catalog, batch("aws_pricing", "aws_pricing", "aws_pricing", rows))
    assert loads == {"aws_pricing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_pricing", 1, "pre_installed_sw_present", "pre_installed_sw", None)]
    reason = reason_of(fresh_db, "pre_installed_sw_present")
    assert '"NA"' in reason and "pandas" in reason and "silently finds no plain-Linux row" in reason


def test_a_reserved_lease_that_is_no_whole_number_of_years_is_quarantined(fresh_db, catalog):
    """LeaseContractLength "0yr" gave a term of 0 months, whose fee was amortised over 0 hours: an inf price ranked
    in five workloads; "forever" gave no term, and the offer was never ranked and listed as excluded with a false
    reason. A reserved term is 1yr to 5yr; its rows (hourly rate and fee) are quarantined, the 3yr term beside them is
    priced."""
    rows = aws_rows(aws_product("p5.48xlarge", "55.0400000000", sku="LINUXSKU00000001", reserved=[
        ("3yr", "Partial Upfront", "12.0000000000", "300000"), ("0yr", "All Upfront", "0.0000000000", "600000"),
        ("forever", "Partial Upfront", "20.0000000000", "27156"), (None, "No Upfront", "30.0000000000", None)]))
    loads = land(fresh_db, catalog, batch("aws_pricing", "aws_pricing", "aws_pricing", rows))
    assert loads == {"aws_pricing": (8, 3, 5)}
    assert [(name, value) for _, _, name, _, value in quarantined(fresh_db)] == [
        ("lease_contract_length_known", "0yr"), ("lease_contract_length_known", "0yr"),
        ("lease_contract_length_known", "forever"), ("lease_contract_length_known", "forever"),
        ("lease_contract_length_present", None)]
    assert "0yr would amortise its fee over 0 hours" in reason_of(fresh_db, "lease_contract_length_known")
    transform.build_models(fresh_db, RUN, AS_OF)
    # 3yr = 36 x 730 = 26,280 h: 12.00 + 300,000 / 26,280 = 12 + 11.4155 = 23.4155 USD/h
    assert fresh_db.execute("select term_months, round(usd_per_hour, 4) from intermediate.int_offers_priced "
                            "where pricing_term = 'reserved'").fetchall() == [(36, 23.4155)]


# ---------------------------------------------------------------- "Azure reservation retailPrice is the term total"
def test_reservation_without_a_known_term_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, azure_batch(
        azure(ND, 98.32, "m-linux"),
        azure(ND, 525600.0, "m-res-none", price_type="Reservation"),
        azure(ND, 700000.0, "m-res-2y", price_type="Reservation", term="2 Years")))
    assert loads == {"azure_retail": (3, 1, 2)}
    assert quarantined(fresh_db) == [
        ("azure_retail", 1, "reservation_term_present", "reservation_term", None),
        ("azure_retail", 2, "reservation_term_known", "reservation_term", "2 Years"),
    ]


def test_reservation_total_is_amortised_over_its_term(fresh_db, catalog):
    loads = land(fresh_db, catalog, azure_batch(
        azure(ND, 98.32, "m-linux"),
        azure(ND, 525600.0, "m-res-1y", price_type="Reservation", term="1 Year")))
    assert loads == {"azure_retail": (2, 2, 0)}  # a 525,600 USD total is no hourly price: the ceiling skips it
    transform.build_models(fresh_db, RUN, AS_OF)
    offers = fresh_db.execute("select offer_id, upfront_usd, usd_per_hour from intermediate.int_offers_priced "
                              "where pricing_term = 'reserved'").fetchall()
    # 1 year = 12 months x 730 h = 8,760 h; 525,600 USD / 8,760 h = 60.0 USD/h (not 525,600 USD/h)
    assert offers == [(f"azure:eastus:{ND}:reserved:1-year", 525600.0, pytest.approx(60.0))]


# ---------------------------------------------------------------- issue 6: prices below a declared ceiling, in USD
def test_aws_hourly_price_above_the_ceiling_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, aws_batch(
        aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
        aws_item("p5en.48xlarge", "40176.0000000000", "MONTHLYSKU000001")))  # 55.04 x 730: a month, not an hour
    assert loads == {"aws_pricing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("aws_pricing", 1, "hourly_price_below_ceiling", "price_usd", "40176.0")]


def test_azure_consumption_price_above_the_ceiling_is_quarantined(fresh_db, catalog):
    loads = land(fresh_db, catalog, azure_batch(
        azure(ND, 71773.6, "m-monthly"),  # 98.32 x 730: a monthly total as an hourly price
        azure(ND, 0.0, "m-zero", product=f"{ND_LINUX} Windows"),
        azure(ND, 1576800.0, "m-res-3y", price_type="Reservation", term="3 Years")))  # a term total: no ceiling
    assert loads == {"azure_retail": (3, 1, 2)}
    assert quarantined(fresh_db) == [("azure_retail", 0, "hourly_price_below_ceiling", "retail_price", "71773.6"),
                                     ("azure_retail", 1, "price_positive", "retail_price", "0.0")]


def test_gcp_price_not_in_usd_is_quarantined(fresh_db, catalog):
    euro = gcp_sku("TPU v6e chip running in Iowa", "2", 500000000, group="TPU")
    euro["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]["currencyCode"] = "EUR"
    loads = land(fresh_db, catalog, gcp_batch(gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU"),
                                              euro))
    assert loads == {"gcp_billing": (2, 1, 1)}
    assert quarantined(fresh_db) == [("gcp_billing", 1, "currency_usd", "currency_code", "EUR")]


# ---------------------------------------------------------------- names of any length from a feed
def test_an_instance_type_region_or_zone_past_100_characters_is_quarantined_not_printed(fresh_db, catalog):
    """Names from a feed reach the reports' pages whole; one past MAX_ID_CHARS (100) is no real name: quarantined by
    the suite's `<column>_short`, naming the column, while the row beside it lands."""
    long_type = "p5." + "x" * 98  # 101 characters
    long_zone = "us-east-1" + "a" * 92  # 101 characters
    long_sku = "Standard_" + "N" * 92
    loads = land(fresh_db, catalog,
                 aws_batch(aws_item("p5.48xlarge", "55.0400000000", "LINUXSKU00000001"),
                           aws_item(long_type, "55.0400000000", "LONGSKU000000001")),
                 spot_batch(("us-east-1a", "p5.48xlarge", "10.24"), (long_zone, "p5.48xlarge", "10.24")),
                 azure_batch(azure(ND, 98.32, "m-linux"), azure(long_sku, 98.32, "m-long")),
                 sheet_batch(*({"kind": "quote", "cloud": "aws", "region": region, "instance_type": "p5.48xlarge",
                                "usd_per_hour": 40.0, "accelerator_count": 8, "source": "private pricing agreement"}
                               for region in ("us-east-1", "us-east-" + "1" * 93))))
    assert loads == {"aws_pricing": (2, 1, 1), "aws_spot": (2, 1, 1), "azure_retail": (2, 1, 1),
                     "price_sheet": (2, 1, 1)}
    assert [(source, row_no, name, column, len(value)) for source, row_no, name, column, value
            in quarantined(fresh_db)] == [
        ("aws_pricing", 1, "instance_type_short", "instance_type", 101),
        ("aws_spot", 1, "availability_zone_short", "availability_zone", 101),
        ("azure_retail", 1, "arm_sku_name_short", "arm_sku_name", 101),
        ("price_sheet", 1, "region_short", "region", 101),
    ]
