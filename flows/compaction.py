"""Month compaction of the marts' history: the rows of a closed month rewritten in grain order.

A nightly run appends every mart's rows of its date, so a month of history lies run after run, and DuckDB compresses
each run's values apart from the next run's. Most of them are the same from one night to the next (a price moves
now and then, a ranking rarely), so a closed month rewritten sorted by the mart's grain (`sql/marts/marts.yaml`, the
as-of date last) puts each candidate's 30 nights side by side, where DuckDB stores a run of equal values once
(`make bench`, goal P3: 2,244 -> 1,261 KiB a run for a market whose spot offers move nightly, 2,033 -> 865 KiB for one
that never moves). The rows are the same, only their order on disk changes; as-of dates stay together by month, so a
query bounded by date still skips the other months' row groups.

`ops.compacted_months` records each (mart, month) done. A month is closed once a later month has a run; a run of a
date in a compacted month (a backfill) replaces that date's rows, so its month is compacted again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb

from flows import analytics, warehouse

# At most this many (mart, month) rewrites a run (four months of the 16 marts): the first run after an upgrade,
# facing years of history, spreads the work over its next nights instead of taking minutes at once (a month of a
# market of 1,000 offers takes ~9 s for all the marts on 2 cores: `make bench` P3, 60 months in ~9 of its 14 minutes).
MAX_COMPACTIONS_PER_RUN = 64


@dataclass(frozen=True)
class Compacted:
    table: str
    month: dt.date
    rows: int


def month_start(day: dt.date) -> dt.date:
    return day.replace(day=1)


def next_month(month: dt.date) -> dt.date:
    return (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def history_order(contract: dict) -> dict[str, list[str]]:
    """Each mart kept by as-of date -> the columns its closed months are sorted by: its grain, the as-of date last."""
    orders = {}
    for mart, model in contract["models"].items():
        grain = list(model["grain"])
        if "as_of" in grain:
            orders[mart] = [c for c in grain if c != "as_of"] + ["as_of"]
    return orders


def _pending(con: duckdb.DuckDBPyConnection, tables: list[str], before: dt.date) -> list[tuple[dt.date, str, int]]:
    """(month, table, rows) of the tables' months before `before` that have runs (ops.runs: every mart row is a
    run's) and no compaction recorded, oldest first, rows 0 for a month the table has none of; a night with nothing to
    do reads no mart rows, and a table's pending months are counted in one query."""
    pairs = con.execute(
        "select t.table_name, m.month from (select distinct cast(date_trunc('month', as_of) as date) as month "
        "from ops.runs where as_of < ?) m cross join (select unnest(?::varchar[]) as table_name) t "
        "anti join ops.compacted_months c on c.table_name = t.table_name and c.month = m.month", [before, tables]
    ).fetchall()
    months: dict[str, list[dt.date]] = {}
    for table, month in pairs:
        months.setdefault(table, []).append(month)
    pending = []
    for table, wanted in months.items():
        counted = dict(con.execute(
            f"select cast(date_trunc('month', as_of) as date) as month, count(*) from marts.{table} "
            "where as_of >= ? and as_of < ? group by month", [min(wanted), next_month(max(wanted))]).fetchall())
        pending += [(month, table, counted.get(month, 0)) for month in wanted]
    return sorted(pending)


def compact_closed_months(con: duckdb.DuckDBPyConnection, run_id: str, as_of: dt.date, newest: dt.date | None = None,
                          limit: int = MAX_COMPACTIONS_PER_RUN, contract: dict | None = None
                          ) -> tuple[list[Compacted], int]:
    """Rewrite in grain order each mart's months before the newest run's month that are not compacted yet.

    Call it after the build has written this run's rows (of `as_of`): the month of `as_of` is forgotten first, since
    the build replaced a date of it. `newest` is the newest run's date (default: the latest in ops.runs, or `as_of`).
    Returns what was rewritten (at most `limit` (mart, month) pairs, oldest first) and how many pairs are left.
    """
    orders = history_order(contract or analytics.load_contract())
    con.execute("delete from ops.compacted_months where month = ?", [month_start(as_of)])
    if newest is None:
        [(newest,)] = con.execute("select max(as_of) from ops.runs").fetchall()
    closed_before = month_start(max(newest or as_of, as_of))
    present = {name for (name,) in con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts' and table_type = 'BASE TABLE'"
    ).fetchall()}
    work = _pending(con, sorted(orders.keys() & present), closed_before)
    empty = [(month, table) for month, table, rows in work if not rows]
    for month, table in empty:  # nothing to rewrite: recorded, so that later nights do not count it again
        con.execute("insert into ops.compacted_months values (?, ?, 0, ?, now()::timestamp)", [table, month, run_id])
    work = [w for w in work if w[2]]
    done = []
    for month, table, rows in work[:limit]:
        order = ", ".join(f'"{column}"' for column in orders[table])
        bounds = [month, next_month(month)]
        with warehouse.transaction(con):  # a month's rewrite commits whole or not at all
            # the month again, sorted, after the table's last row; then its rows from before, by row id
            [(last_row,)] = con.execute(f"select max(rowid) from marts.{table}").fetchall()
            con.execute(f"insert into marts.{table} select * from marts.{table} where as_of >= ? and as_of < ? "
                        f"order by {order}", bounds)
            [(deleted,)] = con.execute(f"delete from marts.{table} where as_of >= ? and as_of < ? and rowid <= ?",
                                       [*bounds, last_row]).fetchall()
            if deleted != rows:  # the count _pending read: nothing else writes the table meanwhile
                raise RuntimeError(f"compacting marts.{table} of {month:%Y-%m}: {deleted} rows replaced, {rows} expected")
            con.execute("insert into ops.compacted_months values (?, ?, ?, ?, now()::timestamp)",
                        [table, month, rows, run_id])
        done.append(Compacted(table, month, rows))
    return done, max(0, len(work) - limit)
