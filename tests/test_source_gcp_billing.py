"""gcp_billing: Billing Catalog SKUs -> raw rows; an offer's price is the sum of its SKU components."""

import datetime as dt

import pytest
from builders import gcp_sku

from flows import transform
from flows.land import land_batch
from flows.source_batches import SourceBatch
from flows.sources import gcp_billing
from flows.sources._common import SourceFormatError

AS_OF = dt.date(2026, 11, 30)


def land(con, catalog, skus):
    rows = gcp_billing.rows_from_pages([("skus", {"skus": skus, "nextPageToken": ""})])
    batch = SourceBatch.of_rows("gcp", "gcp_billing", "gcp_billing", ["t"], AS_OF,
                        [r | {"row_no": i, "source_id": "gcp", "data_as_of": AS_OF} for i, r in enumerate(rows)])
    return land_batch(con, batch, "run-1", AS_OF, catalog)


def test_units_plus_nanos_and_one_row_per_region():
    rows = gcp_billing.rows_from_pages([("p", {"skus": [
        gcp_sku("Nvidia H100 80GB GPU running in Americas", "9", 796550569, regions=("us-east4", "us-east5"))]})])
    # 9 + 796,550,569 / 1e9 = 9.796550569, once per service region
    assert [(r["region"], r["price_usd"]) for r in rows] == [("us-east4", 9.796550569), ("us-east5", 9.796550569)]


def test_vm_plus_gpu_composition_and_tpu_per_chip_pricing(fresh_db, catalog):
    load = land(fresh_db, catalog, [
        gcp_sku("Nvidia H100 80GB GPU running in Iowa", "4", 200761250),
        gcp_sku("A3 Instance Core running in Iowa", "0", 29300000, group="CPU"),
        gcp_sku("A3 Instance Ram running in Iowa", "0", 1797895, group="RAM", unit="GiBy.h"),
        gcp_sku("TPU v5p chip running in Iowa", "4", 200000000, group="TPU"),
        gcp_sku("TPU v5p chip running in Netherlands", "700", 0, group="TPU", regions=("europe-west4",)),
        # a GPU price in us-east4 with no A3 core/RAM price there: no complete a3 offer in us-east4
        gcp_sku("Nvidia H100 80GB GPU running in Americas", "9", 796550569, regions=("us-east4",)),
    ])
    # the 700.0 "not offered" placeholder is quarantined by the <= 100 USD per unit-hour expectation
    assert (load.rows_landed, load.rows_quarantined) == (5, 1)
    transform.build_models(fresh_db, "run-1", AS_OF)
    offers = dict(fresh_db.execute("select offer_id, usd_per_hour from intermediate.int_offers_priced").fetchall())
    # a3-highgpu-8g = 8 x 4.20076125 + 208 x 0.0293 + 1872 x 0.001797895 = 33.60609 + 6.0944 + 3.36566 = 43.06615
    # tpu-v5p-8 = 4 chips x 4.20 = 16.80
    assert offers == {
        "gcp:us-central1:a3-highgpu-8g:on_demand": pytest.approx(43.06615, abs=1e-5),
        "gcp:us-central1:tpu-v5p-8:on_demand": pytest.approx(16.8),
    }


def test_units_that_are_not_integers_name_the_rate():
    sku = gcp_sku("TPU v5e chip running in Iowa", "1.2", 0, group="TPU")
    with pytest.raises(SourceFormatError, match=r"skus\[0\]\.pricingInfo\[0\]\.pricingExpression\.tieredRates\[0\]"
                                                r"\.unitPrice: units '1.2' / nanos 0 are not integers"):
        gcp_billing.rows_from_pages([("p", {"skus": [sku]})])


RATE = r"^p: skus\[0\]\.pricingInfo\[0\]\.pricingExpression\.tieredRates\[0\]\.unitPrice: "


@pytest.mark.parametrize(("units", "nanos", "message"), [
    # int(9.79) would land 9: the 0.79 USD the API puts in nanos lost without a word
    (9.79, 0, r"units 9.79 / nanos 0 are not integers \(expected units as a string of digits"),
    (True, 0, r"units True / nanos 0 are not integers"),
    ("9", 796550569.5, r"units '9' / nanos 796550569.5 are not integers"),
    # 7,965,505,690 billionths is 7.97 units: a price written with its decimal point in the wrong place
    ("9", 7965505690, (r"nanos 7965505690 is out of range \(expected billionths of a unit, between -999,999,999 and "
                       r"999,999,999; whole units go in units, here '9'\)$")),
    ("-9", -1000000000, r"nanos -1000000000 is out of range"),
])
def test_units_with_a_fraction_or_nanos_of_a_whole_unit_are_refused_at_the_rate(units, nanos, message):
    sku = gcp_sku("Nvidia H100 80GB GPU running in Americas", units, nanos)
    with pytest.raises(SourceFormatError, match=RATE + message):
        gcp_billing.rows_from_pages([("p", {"skus": [sku]})])


def test_units_as_a_signed_string_or_a_json_integer_are_whole_units():
    rows = gcp_billing.rows_from_pages([("p", {"skus": [
        gcp_sku("TPU v5p chip running in Iowa", 4, 200000000, group="TPU"),
        gcp_sku("Credit running in Iowa", "-1", -500000000, group="TPU")]})])
    # 4 + 200,000,000 / 1e9 = 4.2; -1 + -500,000,000 / 1e9 = -1.5 (a credit; the suite quarantines a negative price)
    assert [(r["units"], r["nanos"], r["price_usd"]) for r in rows] == [("4", 200000000, 4.2),
                                                                         ("-1", -500000000, -1.5)]


def test_sku_without_pricing_info_names_the_sku():
    sku = gcp_sku("TPU v5e chip running in Iowa", "1", 0, group="TPU")
    sku["pricingInfo"] = []
    with pytest.raises(SourceFormatError, match=r"^p: skus\[0\]\.pricingInfo: empty"):
        gcp_billing.rows_from_pages([("p", {"skus": [sku]})])


def test_a_price_component_that_matches_no_sku_is_listed_not_silently_unpriced(fresh_db, catalog):
    land(fresh_db, catalog, [gcp_sku("Nvidia H100 80GB GPU running in Iowa", "4", 200761250)])
    fresh_db.execute("update catalog.instance_price_components set sku_description_prefix = 'A3 Instance RAM' "
                     "where sku_description_prefix = 'A3 Instance Ram'")
    transform.build_models(fresh_db, "run-1", AS_OF)
    transform.run_sql_tests(fresh_db)  # the run goes on ...
    unmatched = fresh_db.execute("select instance_type, sku_description_prefix from "
                                 "intermediate.int_price_components_unmatched order by all").fetchall()
    # ... and names every component no SKU matched (a typo here; the snapshot's A3 core and TPU SKUs are not landed)
    assert ("a3-highgpu-8g", "A3 Instance RAM") in unmatched
    assert ("a3-highgpu-8g", "Nvidia H100 80GB GPU") not in unmatched


def test_volume_tiers_land_but_offers_use_the_list_price(fresh_db, catalog):
    tiered = gcp_sku("TPU v5p chip running in Iowa", "4", 200000000, group="TPU")
    tiered["pricingInfo"][0]["pricingExpression"]["tieredRates"].append(
        {"startUsageAmount": 1000, "unitPrice": {"currencyCode": "USD", "units": "3", "nanos": 0}})
    load = land(fresh_db, catalog, [tiered])
    assert load.rows_landed == 2
    transform.build_models(fresh_db, "run-1", AS_OF)
    # 4 chips x 4.20 at the first tier; the 3.00 tier from 1,000 hours on is kept in staging, not mixed in
    assert fresh_db.execute("select usd_per_hour from intermediate.int_offers_priced").fetchall() == [
        (pytest.approx(16.8),)]
    assert fresh_db.execute("select count(*) from staging.stg_gcp_billing__skus").fetchall() == [(2,)]


def test_commitments_are_reserved_terms_and_other_usage_types_are_kept_apart(fresh_db, catalog):
    """Committed-use SKUs price a reserved offer of their length; a usage type hweval does not price (here DWS's
    flex-start) is landed and classified under its own name, never mixed into on-demand."""
    skus = [
        gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU"),
        gcp_sku("Commitment v1: TPU v5e chip running in Iowa", "0", 756000000, group="TPU", usage="Commit1Yr"),
        gcp_sku("Commitment v1: TPU v5e chip running in Iowa", "0", 540000000, group="TPU", usage="Commit3Yr"),
        gcp_sku("TPU v5e chip running in Iowa", "0", 600000000, group="TPU", usage="FlexStart"),
    ]
    for n, sku in enumerate(skus):
        sku["skuId"] = f"TEST-0000-000{n}"
    assert land(fresh_db, catalog, skus).rows_landed == 4
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert fresh_db.execute("select pricing_term, term_detail from staging.stg_gcp_billing__skus order by row_no"
                            ).fetchall() == [("on_demand", None), ("reserved", "1yr commitment"),
                                             ("reserved", "3yr commitment"), ("flexstart", None)]
    offers = fresh_db.execute("select offer_id, round(usd_per_hour, 4), term_months from intermediate.int_offers_priced "
                              "where instance_type = 'tpu-v5litepod-8' order by usd_per_hour").fetchall()
    # 8 chips x 0.54 (3yr) = 4.32; 8 x 0.756 (1yr) = 6.048; 8 x 1.20 on-demand = 9.60; the flex-start SKU prices none
    assert offers == [("gcp:us-central1:tpu-v5litepod-8:reserved:3yr-commitment", 4.32, 36),
                      ("gcp:us-central1:tpu-v5litepod-8:reserved:1yr-commitment", 6.048, 12),
                      ("gcp:us-central1:tpu-v5litepod-8:on_demand", 9.6, None)]
