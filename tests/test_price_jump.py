"""A price feed whose prices moved by more than the declared factor overnight is stale for the run: its last good
prices are used, and ops.source_loads says why (a unit or currency switch must not re-rank everything)."""

from __future__ import annotations

import datetime as dt

from builders import aws_page, aws_product

from flows import warehouse
from flows.land import SourceBatch, land_all
from flows.sources import aws_pricing

DAY1, DAY2 = dt.date(2026, 11, 29), dt.date(2026, 11, 30)


def batch(prices: dict[str, str], as_of: dt.date) -> SourceBatch:
    gpus = {"p5.48xlarge": "8", "p4d.24xlarge": "8", "g6.2xlarge": "1"}  # as instances.yaml has them
    page = aws_page(*(aws_product(t, usd, sku=f"SKU-{t}", gpu=gpus[t]) for t, usd in prices.items()))
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
