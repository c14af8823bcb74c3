"""azure_retail: Retail Prices pages -> raw rows; Linux vs Windows by productName, Spot by skuName."""

import datetime as dt

import pytest
from builders import azure_item, azure_page

from flows import transform
from flows.land import land_batch
from flows.source_batches import SourceBatch
from flows.sources import azure_retail
from flows.sources._common import SourceFormatError

AS_OF = dt.date(2026, 11, 30)
ND = "Standard_ND96isr_H100_v5"


def test_terms_and_operating_systems_are_told_apart(fresh_db, catalog):
    page1 = azure_page(
        azure_item(ND, 98.32, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isr H100 v5"),
        azure_item(ND, 102.736, product="Virtual Machines NDsr H100 v5 Series Windows", meter="ND96isr H100 v5"),
        next_link="https://prices.azure.com/api/retail/prices?$skip=100",
    )
    page2 = azure_page(
        azure_item(ND, 18.169536, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isr H100 v5 Spot"),
        azure_item(ND, 41.094, product="Virtual Machines NDsr H100 v5 Series Windows",
                   meter="ND96isr H100 v5 Low Priority"),
        azure_item(ND, 6.98, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isr H100 v5",
                   price_type="DevTestConsumption"),
    )
    rows = azure_retail.rows_from_pages([("p1", page1), ("p2", page2)])
    assert len(rows) == 5 and rows[2]["source_ref"] == "p2: Items[0]"
    batch = SourceBatch.of_rows("az", "azure_retail", "azure_retail", ["t"], AS_OF,
                        [r | {"row_no": i, "source_id": "az", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    land_batch(fresh_db, batch, "run-1", AS_OF, catalog)
    transform.build_models(fresh_db, "run-1", AS_OF)
    staged = fresh_db.execute(
        "select operating_system, pricing_term, price_usd from staging.stg_azure_retail__prices order by row_no").fetchall()
    assert staged == [("Linux", "on_demand", 98.32), ("Windows", "on_demand", 102.736), ("Linux", "spot", 18.169536),
                      ("Windows", "low_priority", 41.094), ("Linux", "dev_test", 6.98)]
    offers = fresh_db.execute("select offer_id, usd_per_hour, usd_per_chip_hour from intermediate.int_offers_priced "
                              "order by offer_id").fetchall()
    # Linux on-demand and Linux spot only; 98.32 / 8 = 12.29 and 18.169536 / 8 = 2.271192 per chip-hour
    assert offers == [("azure:eastus:Standard_ND96isr_H100_v5:on_demand", 98.32, pytest.approx(12.29)),
                      ("azure:eastus:Standard_ND96isr_H100_v5:spot", 18.169536, pytest.approx(2.271192))]


def test_page_without_items_names_the_page():
    with pytest.raises(SourceFormatError, match=r"^eastus page 3: missing key 'Items'"):
        azure_retail.rows_from_pages([("eastus page 3", {"NextPageLink": None})])


def test_item_without_arm_sku_name_names_the_item():
    item = azure_item(ND, 1.0, product="p", meter="m")
    del item["armSkuName"]
    with pytest.raises(SourceFormatError, match=r"^p1: Items\[0\]: missing key 'armSkuName'"):
        azure_retail.rows_from_pages([("p1", azure_page(item))])


def test_linux_low_priority_is_its_own_offer(fresh_db, catalog):
    page = azure_page(azure_item(ND, 29.5, product="Virtual Machines NDsr H100 v5 Series",
                                 meter="ND96isr H100 v5 Low Priority"))
    rows = azure_retail.rows_from_pages([("p", page)])
    batch = SourceBatch.of_rows("az", "azure_retail", "azure_retail", ["t"], AS_OF,
                        [r | {"row_no": i, "source_id": "az", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    land_batch(fresh_db, batch, "run-1", AS_OF, catalog)
    transform.build_models(fresh_db, "run-1", AS_OF)
    # 29.50 / 8 GPUs = 3.6875 per chip-hour; a reclaimable term, like spot (interruption overhead in instances.yaml)
    assert fresh_db.execute("select offer_id, usd_per_hour, usd_per_chip_hour from intermediate.int_offers_priced"
                            ).fetchall() == [("azure:eastus:Standard_ND96isr_H100_v5:low_priority", 29.5, 3.6875)]


def test_a_meter_listed_again_for_a_region_it_is_not_billed_from_is_quarantined_not_priced_twice(fresh_db, catalog):
    """Without meterRegion='primary' the API lists a meter again under the other regions it covers, with
    isPrimaryMeterRegion false: another meter id, so no duplicate of the primary row by the natural key. Landed, the
    VM size would have two on-demand prices (98.32 and 101.00) in one region. The row goes to quarantine with its
    reason; an item that does not say (older pages, the snapshot) lands."""
    primary = azure_item(ND, 98.32, product="Virtual Machines NDsr H100 v5 Series", meter="ND96isr H100 v5")
    again = primary | {"retailPrice": 101.0, "unitPrice": 101.0, "meterId": "m-2", "skuId": "s-2",
                       "isPrimaryMeterRegion": False}
    silent = {k: v for k, v in primary.items() if k != "isPrimaryMeterRegion"} | {
        "armSkuName": "Standard_NC40ads_H100_v5", "meterId": "m-3", "skuId": "s-3", "retailPrice": 6.98,
        "unitPrice": 6.98, "productName": "Virtual Machines NCadsH100v5 Series", "meterName": "NC40ads H100 v5"}
    rows = azure_retail.rows_from_pages([("p", azure_page(primary, again, silent))])
    assert [r["is_primary_meter_region"] for r in rows] == [True, False, None]
    batch = SourceBatch.of_rows("az", "azure_retail", "azure_retail", ["t"], AS_OF,
                        [r | {"row_no": i, "source_id": "az", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    land_batch(fresh_db, batch, "run-1", AS_OF, catalog)
    assert fresh_db.execute("select row_no, expectation from ops.quarantine").fetchall() == [
        (1, "primary_meter_region")]
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert fresh_db.execute("select offer_id, usd_per_hour from intermediate.int_offers_priced order by offer_id"
                            ).fetchall() == [("azure:eastus:Standard_NC40ads_H100_v5:on_demand", 6.98),
                                             ("azure:eastus:Standard_ND96isr_H100_v5:on_demand", 98.32)]
