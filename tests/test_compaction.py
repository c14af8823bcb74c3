"""Month compaction (flows/compaction.py): a closed month's mart rows rewritten in grain order, the same rows."""

from __future__ import annotations

import datetime as dt

import pytest

from flows import compaction, warehouse
from flows.analytics import load_contract
from flows.compaction import Compacted

SEP, OCT, NOV = dt.date(2026, 9, 1), dt.date(2026, 10, 1), dt.date(2026, 11, 1)
# a mart kept by as-of date, and one that is not (no as_of in its grain: left alone)
CONTRACT = {"models": {"toy": {"grain": ["as_of", "k"]}, "snapshot_only": {"grain": ["k"]}}}
# inserted run after run, as nightly runs append: each date's 'b' before its 'a'
DATES = [dt.date(2026, 9, 29), dt.date(2026, 9, 30), dt.date(2026, 10, 1), dt.date(2026, 10, 2), dt.date(2026, 11, 1)]


@pytest.fixture
def toy_db(tmp_path):
    con = warehouse.connect(tmp_path / "w.duckdb")
    warehouse.apply_ddl(con)
    con.execute("create table marts.toy (run_id varchar, as_of date, k varchar, v double)")
    con.execute("create table marts.snapshot_only (k varchar)")
    for n, day in enumerate(DATES):
        for k, v in (("b", 2.0), ("a", 1.0)):
            con.execute("insert into marts.toy values (?, ?, ?, ?)", [f"run-{n}", day, k, v + n])
        con.execute("insert into ops.runs (run_id, as_of, started_at, status) values (?, ?, now()::timestamp, "
                    "'succeeded')", [f"run-{n}", day])
    yield con
    con.close()


def stored(con) -> list[tuple[str, dt.date]]:
    """(k, as_of) in the order the rows lie in the table."""
    return con.execute("select k, as_of from marts.toy order by rowid").fetchall()


def test_closed_months_are_rewritten_in_grain_order_with_the_same_rows(toy_db):
    before = sorted(toy_db.execute("select * from marts.toy").fetchall())
    done, left = compaction.compact_closed_months(toy_db, "run-4", DATES[-1], contract=CONTRACT)
    assert left == 0
    # the newest run is 2026-11-01: September and October are closed, 4 rows each (2 dates x 2 keys)
    assert done == [Compacted("toy", SEP, 4), Compacted("toy", OCT, 4)]
    assert sorted(toy_db.execute("select * from marts.toy").fetchall()) == before
    d = DATES
    # November as it was appended; then September, then October, each sorted by k, then by date
    assert stored(toy_db) == [("b", d[4]), ("a", d[4]),
                              ("a", d[0]), ("a", d[1]), ("b", d[0]), ("b", d[1]),
                              ("a", d[2]), ("a", d[3]), ("b", d[2]), ("b", d[3])]
    assert toy_db.execute("select table_name, month, rows, run_id from ops.compacted_months order by month").fetchall() \
        == [("toy", SEP, 4, "run-4"), ("toy", OCT, 4, "run-4")]


def test_a_compacted_month_is_not_rewritten_again_but_a_backfilled_one_is(toy_db):
    compaction.compact_closed_months(toy_db, "run-4", DATES[-1], contract=CONTRACT)
    order = stored(toy_db)
    assert compaction.compact_closed_months(toy_db, "run-5", dt.date(2026, 11, 2), contract=CONTRACT) == ([], 0)
    assert stored(toy_db) == order
    # a backfill of 2026-10-02 replaced that date's rows (appended at the end): October is sorted again
    toy_db.execute("delete from marts.toy where as_of = ?", [DATES[3]])
    toy_db.execute("insert into marts.toy values ('run-6', ?, 'b', 9), ('run-6', ?, 'a', 8)", [DATES[3], DATES[3]])
    assert compaction.compact_closed_months(toy_db, "run-6", DATES[3], contract=CONTRACT) == (
        [Compacted("toy", OCT, 4)], 0)
    assert stored(toy_db)[-4:] == [("a", DATES[2]), ("a", DATES[3]), ("b", DATES[2]), ("b", DATES[3])]
    assert toy_db.execute("select month, run_id from ops.compacted_months order by month").fetchall() == [
        (SEP, "run-4"), (OCT, "run-6")]


def test_at_most_the_limit_a_run_and_how_many_are_left(toy_db):
    first = compaction.compact_closed_months(toy_db, "run-4", DATES[-1], limit=1, contract=CONTRACT)
    assert first == ([Compacted("toy", SEP, 4)], 1)  # oldest first; October left
    assert compaction.compact_closed_months(toy_db, "run-5", DATES[-1], limit=1, contract=CONTRACT) == (
        [Compacted("toy", OCT, 4)], 0)


def test_a_month_without_rows_is_recorded_and_a_mart_not_built_yet_is_left_alone(toy_db):
    toy_db.execute("create table marts.quiet (run_id varchar, as_of date, k varchar)")  # no rows in any month
    contract = {"models": CONTRACT["models"] | {"quiet": {"grain": ["as_of", "k"]}, "absent": {"grain": ["as_of"]}}}
    done, left = compaction.compact_closed_months(toy_db, "run-4", DATES[-1], limit=1, contract=contract)
    assert (done, left) == ([Compacted("toy", SEP, 4)], 1)  # the empty months count toward nothing
    assert toy_db.execute("select table_name, month, rows from ops.compacted_months order by all").fetchall() == [
        ("quiet", SEP, 0), ("quiet", OCT, 0), ("toy", SEP, 4)]  # marts.absent: no table, nothing recorded
    assert compaction.compact_closed_months(toy_db, "run-5", DATES[-1], contract=contract) == (
        [Compacted("toy", OCT, 4)], 0)


def test_the_newest_date_can_be_given(toy_db):
    # as of 2026-10-02 (a bench replaying history, or a warehouse whose ops.runs is not written yet): only September
    assert compaction.compact_closed_months(toy_db, "r", DATES[3], newest=DATES[3], contract=CONTRACT) == (
        [Compacted("toy", SEP, 4)], 0)


def test_every_mart_is_compacted_by_its_documented_grain():
    orders = compaction.history_order(load_contract())
    models = load_contract()["models"]
    assert set(orders) == set(models)  # every mart keeps its as-of dates
    assert orders["rankings"] == ["candidate_id", "as_of"]  # grain [as_of, candidate_id]
    assert orders["inference_costs"] == ["workload_id", "offer_id", "precision_class", "as_of"]


def test_month_bounds():
    assert compaction.month_start(dt.date(2026, 2, 28)) == dt.date(2026, 2, 1)
    assert compaction.next_month(dt.date(2026, 12, 1)) == dt.date(2027, 1, 1)
    assert compaction.next_month(dt.date(2028, 2, 1)) == dt.date(2028, 3, 1)


def test_a_compacted_month_of_unchanged_prices_takes_a_fraction_of_the_blocks(tmp_path):
    """30 nightly runs of 10,000 candidates whose values do not move: appended run after run, every run's values
    are stored again; sorted by candidate, each candidate's 30 equal values are stored once (run-length)."""
    con = warehouse.connect(tmp_path / "w.duckdb")
    warehouse.apply_ddl(con)
    con.execute("create table marts.toy (run_id varchar, as_of date, k varchar, v double, w double)")
    for day in range(30):
        con.execute("insert into marts.toy select 'run-' || ?, ?::date + ?, 'candidate-' || i, hash(i) / 7e15, "
                    "hash(i + 1) / 3e14 from range(10000) as t(i)", [day, SEP, day])
        con.execute("insert into ops.runs (run_id, as_of, started_at, status) values ('run-' || ?, ?::date + ?, "
                    "now()::timestamp, 'succeeded')", [day, SEP, day])
    con.execute("checkpoint")
    blocks = "select count(distinct block_id) from pragma_storage_info('marts.toy') where block_id >= 0"
    [(appended,)] = con.execute(blocks).fetchall()
    done, _ = compaction.compact_closed_months(con, "run-30", OCT, newest=OCT, contract=CONTRACT)
    con.execute("checkpoint")
    [(compacted,)] = con.execute(blocks).fetchall()
    con.close()
    assert done == [Compacted("toy", SEP, 30 * 10000)]
    # measured on DuckDB 1.5.5: 23 blocks appended, 5 compacted (the 10,000 keys' strings and the 30 run ids stay);
    # the bound is a third, with room for another DuckDB's choices of compression
    assert compacted * 3 <= appended, (appended, compacted)
