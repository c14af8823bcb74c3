"""What a warehouse built by an older hweval needs before this version's models build on it.

A migration runs at the start of the build (flows/transform.py `build_models`), on the run's build copy: if the run
fails, the published warehouse is as it was. Each one looks for what it changes and does nothing when it is done, so
it runs every build; it returns what it did, in words, for the run's log.
"""

from __future__ import annotations

import duckdb

from flows import relations


def migrate_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply every migration of the marts; what each did."""
    return [note for note in (rank_history_becomes_a_view(con),) if note]


def rank_history_becomes_a_view(con: duckdb.DuckDBPyConnection) -> str | None:
    """marts.rank_history was a table: every run stored its candidates' ranks and figures again beside
    marts.rankings', with `is_pick` added. It is a view of marts.rankings now (sql/marts/rank_history.sql), and
    rankings keeps `is_pick` itself.

    Each stored `is_pick` goes to the rankings row it was computed from (same as-of date and candidate), then the
    table is dropped. A rankings row the table has no row for (none in a warehouse hweval wrote) gets the pick rule
    of sql/marts/rankings.sql, and the note says how many did.
    """
    if relations.kind(con, "marts", "rank_history") != "BASE TABLE":
        return None
    if relations.kind(con, "marts", "rankings") != "BASE TABLE":  # a history without its rankings: nothing to move to
        raise RuntimeError("marts.rank_history is a table, but marts.rankings is missing: the warehouse is not one "
                           "hweval wrote; rank_history was not migrated (nothing was dropped)")
    # a history row with no rankings row (none in a warehouse hweval wrote) would go with the table: refused
    [(orphans,)] = con.execute("""
        select count(*) from marts.rank_history as h
        where not exists (select 1 from marts.rankings as r where r.as_of = h.as_of and r.candidate_id = h.candidate_id)
    """).fetchall()
    if orphans:
        raise RuntimeError(f"marts.rank_history has {orphans:,} rows with no marts.rankings row of the same as-of date "
                           "and candidate: the warehouse is not one hweval wrote; rank_history was not migrated "
                           "(nothing was dropped)")
    con.execute("alter table marts.rankings add column if not exists is_pick boolean")
    [(stored,)] = con.execute("select count(*) from marts.rank_history").fetchall()
    con.execute("""
        update marts.rankings as r set is_pick = h.is_pick
        from marts.rank_history as h
        where r.is_pick is null and h.as_of = r.as_of and h.candidate_id = r.candidate_id
    """)
    [(missing,)] = con.execute("select count(*) from marts.rankings where is_pick is null").fetchall()
    if missing:
        con.execute("""
            update marts.rankings as r set is_pick = p.is_pick
            from (select as_of, candidate_id,
                         row_number() over (partition by as_of, workload_id
                                            order by outcome_value, usd_per_chip_hour, candidate_id) = 1 as is_pick
                  from marts.rankings) as p
            where r.is_pick is null and p.as_of = r.as_of and p.candidate_id = r.candidate_id
        """)
    con.execute("drop table marts.rank_history")
    return (f"migrated marts.rank_history, a table of {stored:,} rows, to a view of marts.rankings: its is_pick "
            f"moved to rankings" + (f" ({missing:,} rankings rows it had no row for took the pick rule)"
                                    if missing else ""))
