"""A price feed whose prices moved by more than the declared factor overnight is stale for the run: its last good
prices are used, and ops.source_loads says why (a unit or currency switch must not re-rank everything)."""

from __future__ import annotations

import datetime as dt

from builders import aws_page, aws_product

from flows import warehouse
from flows.land import land_all
from flows.source_batches import SourceBatch
from flows.sources import aws_pricing

DAY1, DAY2 = dt.date(2026, 11, 29), dt.date(2026, 11, 30)


def batch(prices: dict[str, str], as_of: dt.date, skus: dict[str, str] | None = None) -> SourceBatch:
    gpus = {"p5.48xlarge": "8", "p4d.24xlarge": "8", "g6.2xlarge": "1", "p5en.48xlarge": "8"}  # as instances.yaml
    page = aws_page(*(aws_product(t, usd, sku=(skus or {}).get(t, f"SKU-{t}"), gpu=gpus[t])
                      for t, usd in prices.items()))
    rows = aws_pricing.rows_from_pages([("page", page)])
    rows = [r | {"row_no": i, "source_id": "aws_pricing", "data_as_of": as_of} for i, r in enumerate(rows)]
    return SourceBatch.of_rows("aws_pricing", "aws_pricing", "aws_pricing", ["page"], as_of, rows)


def test_prices_that_moved_past_the_factor_make_the_source_stale(fresh_db, catalog):
    # sources.yaml declares max_price_change: 3 for aws_pricing
    assert catalog.sources.sources["aws_pricing"].max_price_change == 3
    day1 = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776"}
    [load] = land_all(fresh_db, catalog, [batch(day1, DAY1)], "run-1", DAY1)
    assert load.status == "landed"
    # overnight every price is in cents: ratios 5504 / 55.04 = 100, 2195.7642 / 21.957642 = 100, ... median 100
    cents = {t: str(float(usd) * 100) for t, usd in day1.items()}
    [load] = land_all(fresh_db, catalog, [batch(cents, DAY2)], "run-2", DAY2)
    assert load.status == "stale" and load.stale_since == DAY1
    assert "prices moved 100x (median over 3 prices shared with the last good run), more than the 3x" in load.error
    used = warehouse.fetch_dicts(fresh_db, "select used_run_id, status from ops.source_loads where run_id = 'run-2'")
    assert used == [{"used_run_id": "run-1", "status": "stale"}]  # the run reads day 1's prices


def test_a_move_within_the_factor_lands(fresh_db, catalog):
    day1 = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776"}
    land_all(fresh_db, catalog, [batch(day1, DAY1)], "run-1", DAY1)
    # one price cut to a quarter (55.04 -> 13.76) and the others unchanged: median ratio 1.0, the feed is trusted
    day2 = day1 | {"p5.48xlarge": "13.76"}
    [load] = land_all(fresh_db, catalog, [batch(day2, DAY2)], "run-2", DAY2)
    assert (load.status, load.rows_landed) == ("landed", 3)


def test_prices_that_moved_under_new_skus_are_compared_by_what_they_price(fresh_db, catalog):
    """Two of three prices 100x under renumbered SKUs: by identity only the unchanged g6 price was shared (median
    1.0) and the batch landed. By what each prices (region, instance type, OS, term ...), the medians are 5504 /
    55.04 = 100, 2195.7642 / 21.957642 = 100 and 0.9776 / 0.9776 = 1: median 100, past the 3x."""
    day1 = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776"}
    land_all(fresh_db, catalog, [batch(day1, DAY1)], "run-1", DAY1)
    cents = {"p5.48xlarge": "5504", "p4d.24xlarge": "2195.7642", "g6.2xlarge": "0.9776"}
    [load] = land_all(fresh_db, catalog, [batch(cents, DAY2, {"p5.48xlarge": "NEW-1", "p4d.24xlarge": "NEW-2"})],
                      "run-2", DAY2)
    assert load.status == "stale"
    assert "prices moved 100x (median over 3 priced things (instance or model, region, term ...) shared with the " \
           "last good run), more than the 3x" in load.error


def test_a_backfill_is_checked_against_the_last_load_on_or_before_its_date(fresh_db, catalog):
    """A backfill of 11-28 after a run of 11-30: the row-count and price checks compare it with loads dated 11-28 or
    earlier (here none: it lands), not with 11-30's 4 rows (1 row, "75% fewer") or its prices."""
    later = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776", "p5en.48xlarge": "63.296"}
    land_all(fresh_db, catalog, [batch(later, DAY2)], "run-2", DAY2)
    backfill = DAY1 - dt.timedelta(days=1)
    [load] = land_all(fresh_db, catalog, [batch({"p5.48xlarge": "55.04"}, backfill)], "backfill", backfill)
    assert (load.status, load.error, load.rows_landed) == ("landed", None, 1)
    # and a run of a date between them is compared with the backfill (200 / 55.04 = 3.63x, past the 3x), not with
    # the later run's 4 rows
    [load] = land_all(fresh_db, catalog, [batch({"p5.48xlarge": "200"}, DAY1)], "run-1", DAY1)
    assert load.status == "stale" and "prices moved 3.63x (median over 1 prices shared" in load.error


def test_a_re_run_of_the_date_a_stale_run_held_back_is_compared_with_the_same_last_good_load(fresh_db, catalog):
    """A run lands 4 prices on 11-30; a re-run of 11-30 with every price 10x is held back (stale, on the first run's
    rows) and its line replaces the first run's. Re-run again with the same input, it is compared with those same
    rows, through the stale line: still held back. So is a row-count drop (1 row against 4: 75% fewer, past the 50%
    sources.yaml allows), the second time as the first."""
    assert catalog.sources.sources["aws_pricing"].max_row_drop == 0.5
    good = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776", "p5en.48xlarge": "63.296"}
    land_all(fresh_db, catalog, [batch(good, DAY2)], "first", DAY2)
    tenfold = {t: str(float(usd) * 10) for t, usd in good.items()}  # 550.4 / 55.04 = 10, ...: median 10
    for run_id in ("second", "third"):
        [load] = land_all(fresh_db, catalog, [batch(tenfold, DAY2)], run_id, DAY2)
        assert (load.status, load.stale_since) == ("stale", DAY2), run_id
        assert "prices moved 10x (median over 4 prices shared with the last good run)" in load.error, run_id
    for run_id in ("fourth", "fifth"):
        [load] = land_all(fresh_db, catalog, [batch({"p5.48xlarge": "55.04"}, DAY2)], run_id, DAY2)
        assert load.status == "stale", run_id
        assert load.error.startswith("1 rows, 75% fewer than the last good run's 4 (more than the 50% drop"), run_id
    used = warehouse.fetch_dicts(fresh_db, "select used_run_id, used_rows_in, status from ops.source_loads")
    assert used == [{"used_run_id": "first", "used_rows_in": 4, "status": "stale"}]  # the models read run 1's rows


def test_a_stale_line_from_before_used_rows_in_is_compared_with_its_landed_loads_rows(fresh_db, catalog):
    """A warehouse written before ops.source_loads kept used_rows_in: a stale line without it (null) is compared
    with the rows in of the landed line of the run it runs on (4), on a later date."""
    good = {"p5.48xlarge": "55.04", "p4d.24xlarge": "21.957642", "g6.2xlarge": "0.9776", "p5en.48xlarge": "63.296"}
    land_all(fresh_db, catalog, [batch(good, DAY1)], "first", DAY1)
    land_all(fresh_db, catalog, [batch({t: str(float(u) * 10) for t, u in good.items()}, DAY2)], "second", DAY2)
    fresh_db.execute("update ops.source_loads set used_rows_in = null")
    day3 = DAY2 + dt.timedelta(days=1)
    [load] = land_all(fresh_db, catalog, [batch({"p5.48xlarge": "55.04"}, day3)], "third", day3)
    assert load.error.startswith("1 rows, 75% fewer than the last good run's 4"), load.error


def test_model_api_prices_that_moved_under_new_skus_are_compared_by_model_region_and_direction(fresh_db, catalog):
    """The embedded Bedrock prices (four: Llama 3.1 8B and 70B, input and output) a day later, all 1,000x (a feed
    that switched from per-1K-token to per-token prices) under renumbered SKUs and rate codes: no identity shared,
    so the check by identity found nothing. By model, region, direction and the rest, the four medians are each
    1,000 (0.22 -> 220 USD per million tokens ...): median 1,000, past the 3x sources.yaml declares."""
    from flows.source_batches import fetch_source

    assert catalog.sources.sources["bedrock_pricing"].max_price_change == 3
    day1 = fetch_source(catalog, "bedrock_pricing")
    land_all(fresh_db, catalog, [day1], "run-1", DAY1)
    rows = [r | {"sku": f"NEW-{i}", "rate_code": f"NEW-{i}.RATE", "price_usd": r["price_usd"] * 1000,
                 "usd_per_million_tokens": r["usd_per_million_tokens"] * 1000}
            for i, r in enumerate(day1.data.to_pylist())]
    day2 = SourceBatch.of_rows("bedrock_pricing", day1.kind, day1.table, day1.files, DAY2, rows)
    [load] = land_all(fresh_db, catalog, [day2], "run-2", DAY2)
    assert load.status == "stale"
    assert "prices moved 1e+03x (median over 4 priced things (instance or model, region, term ...) shared" in load.error
