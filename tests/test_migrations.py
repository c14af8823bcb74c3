"""flows/migrations.py: a warehouse an older hweval built, brought to this version's layout by the next build."""

from __future__ import annotations

import datetime as dt
import shutil

import duckdb
import pytest
from conftest import AS_OF, RUN_ID

from flows import migrations, pipeline, transform, warehouse

EARLIER = AS_OF - dt.timedelta(days=1)


def stored_as_before(con) -> None:
    """The layout before marts.rank_history became a view: a table of its rows, and rankings without is_pick."""
    con.execute("create table marts.rank_history_stored as select * from marts.rank_history")
    con.execute("drop view marts.rank_history")
    con.execute("alter table marts.rank_history_stored rename to rank_history")
    con.execute("alter table marts.rankings drop column is_pick")


def picks(con, as_of: dt.date) -> dict[str, str]:
    return dict(con.execute("select workload_id, candidate_id from marts.rank_history where as_of = ? and is_pick",
                            [as_of]).fetchall())


@pytest.fixture
def old_warehouse(flow_run, tmp_path):
    """The session's run as an older version stored it, with an earlier date (the same rows a day before) whose
    stored picks differ from what the pick rule gives: one workload's pick stored on its runner-up, and another's
    pick row missing from the table."""
    path = tmp_path / "w.duckdb"
    shutil.copy(flow_run.warehouse, path)
    con = warehouse.connect(path)
    rule = picks(con, AS_OF)
    stored_as_before(con)
    # two workloads with two candidates or more: the first's pick moves to its second candidate, the second's pick
    # row is not stored
    [(moved, runner_up), (unstored, unstored_pick)] = con.execute("""
        select workload_id, candidate_id from (
            select workload_id, candidate_id, outcome_rank, count(*) over (partition by workload_id) as candidates,
                   row_number() over (partition by workload_id order by outcome_value, usd_per_chip_hour,
                                      candidate_id) as n
            from marts.rank_history where as_of = ?)
        where candidates > 1 and n = (case when workload_id = (select min(workload_id) from marts.rank_history)
                                      then 2 else 1 end)
        order by workload_id limit 2""", [AS_OF]).fetchall()
    assert rule[moved] != runner_up and rule[unstored] == unstored_pick
    con.execute("insert into marts.rankings by name select * replace (cast(? as date) as as_of) from marts.rankings "
                "where as_of = ?", [EARLIER, AS_OF])
    con.execute("insert into marts.rank_history by name select * replace (cast(? as date) as as_of, "
                "case when workload_id = ? then candidate_id = ? else is_pick end as is_pick) from marts.rank_history "
                "where as_of = ? and candidate_id <> ?", [EARLIER, moved, runner_up, AS_OF, unstored_pick])
    yield con, rule, moved, runner_up, unstored
    con.close()


def test_the_stored_picks_move_to_rankings_and_rank_history_becomes_a_view_of_it(old_warehouse, catalog, caplog):
    con, rule, moved, runner_up, unstored = old_warehouse
    [(stored_rows,)] = con.execute("select count(*) from marts.rank_history").fetchall()
    with caplog.at_level("WARNING", logger="flows.transform"):
        pipeline.build(con, RUN_ID, AS_OF, catalog)
    assert con.execute("select table_type from information_schema.tables where table_schema = 'marts' "
                       "and table_name = 'rank_history'").fetchall() == [("VIEW",)]
    # 1 row of the earlier date was not stored (the unstored workload's pick): the rule gave it
    assert (f"migrated marts.rank_history, a table of {stored_rows:,} rows, to a view of marts.rankings: its is_pick "
            "moved to rankings (1 rankings rows it had no row for took the pick rule)") in caplog.text
    # the earlier date keeps what was stored: the moved workload's pick is its runner-up; the unstored one's is the
    # rule's; every other workload's is the rule's too (stored so)
    assert picks(con, EARLIER) == rule | {moved: runner_up}
    assert picks(con, AS_OF) == rule  # rebuilt: rankings.sql marks it
    assert con.execute("select count(*) from marts.rankings where is_pick is null").fetchall() == [(0,)]
    assert con.execute("select count(*) from analytics.rank_history where as_of = ?", [EARLIER]).fetchall() == \
        con.execute("select count(*) from marts.rankings where as_of = ?", [EARLIER]).fetchall()
    assert unstored in rule and migrations.migrate_marts(con) == []  # done: the next build finds nothing to do


def test_a_view_model_over_a_table_no_migration_moved_is_refused_and_nothing_is_dropped(old_warehouse, catalog,
                                                                                        monkeypatch):
    con, *_ = old_warehouse
    [(stored_rows,)] = con.execute("select count(*) from marts.rank_history").fetchall()
    monkeypatch.setattr(migrations, "migrate_marts", lambda con: [])
    with pytest.raises(transform.ModelError, match=r"sql/marts/rank_history.sql: marts.rank_history is a table in "
                                                   r"this warehouse, and the model is a view now"):
        pipeline.build(con, RUN_ID, AS_OF, catalog)
    assert con.execute("select count(*) from marts.rank_history").fetchall() == [(stored_rows,)]


def test_history_rows_without_their_rankings_rows_refuse_the_migration_and_nothing_is_dropped(old_warehouse):
    con, *_ = old_warehouse
    # a date whose rankings rows are gone: dropping the table would lose its history without a word
    con.execute("insert into marts.rank_history by name select * replace (cast(? as date) as as_of) "
                "from marts.rank_history where as_of = ?", [EARLIER - dt.timedelta(days=1), AS_OF])
    [(stored_rows,)] = con.execute("select count(*) from marts.rank_history").fetchall()
    [(orphans,)] = con.execute("select count(*) from marts.rank_history where as_of = ?",
                               [EARLIER - dt.timedelta(days=1)]).fetchall()
    with pytest.raises(RuntimeError, match=rf"marts.rank_history has {orphans:,} rows with no marts.rankings row of "
                                           r"the same as-of date and candidate: .* \(nothing was dropped\)"):
        migrations.migrate_marts(con)
    assert con.execute("select count(*) from marts.rank_history").fetchall() == [(stored_rows,)]


# ---------------------------------------------------------------- warehouse.apply_ddl on a warehouse an older DDL made
def _older_azure_retail(con) -> None:
    """raw.azure_retail as a DDL before is_primary_meter_region made it, holding one row."""
    con.execute("alter table raw.azure_retail drop column is_primary_meter_region")
    con.execute("insert into raw.azure_retail (run_id, as_of, source_id, data_as_of, row_no, source_ref, retail_price) "
                "values ('run-0', ?, 'azure_retail', ?, 0, 'page-1', 98.32)", [AS_OF, AS_OF])


def test_apply_ddl_adds_the_columns_a_newer_ddl_declares_and_keeps_the_rows(fresh_db):
    _older_azure_retail(fresh_db)
    warehouse.apply_ddl(fresh_db)
    assert fresh_db.execute("select retail_price, is_primary_meter_region from raw.azure_retail").fetchall() == [
        (98.32, None)]


def test_apply_ddl_that_fails_part_way_changes_nothing(fresh_db, tmp_path):
    """One transaction: a macro that does not parse, after the column is added, leaves the table as it was."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(warehouse.SQL_DIR, sql_dir)
    with (sql_dir / "macros.sql").open("a") as f:
        f.write("\ncreate or replace macro broken(x) as x +;\n")
    _older_azure_retail(fresh_db)
    with pytest.raises(duckdb.ParserException):
        warehouse.apply_ddl(fresh_db, sql_dir)
    assert "is_primary_meter_region" not in warehouse.relations.columns(fresh_db, "raw", "azure_retail")
    assert fresh_db.execute("select count(*) from raw.azure_retail").fetchall() == [(1,)]
    assert fresh_db.execute("select count(*) from duckdb_functions() where function_name = 'broken'").fetchall() == [
        (0,)]
