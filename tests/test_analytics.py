"""Schema `analytics`, the analysts' contract: a documented view per mart, the newest run's rows, typed columns, and
a DuckDB 1.x client reading it all read-only."""

from __future__ import annotations

import json
import re
import subprocess

import duckdb
import pytest

from flows import analytics, warehouse
from flows.paths import PROJECT_ROOT
from flows.warehouse import fetch_dicts

CONTRACT = analytics.load_contract()
MARTS = sorted(CONTRACT["models"])
LATEST = CONTRACT["views"]
DUCKDB1_PYTHON = PROJECT_ROOT / ".venv-duckdb1" / "bin" / "python"


def query(path, sql, params=None) -> list[dict]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return fetch_dicts(con, sql, params)
    finally:
        con.close()


def null_typed_columns(path, schemas: str = "%") -> list[str]:
    """Columns whose type is NULL or holds it (`NULL[]`): a literal null or an all-None catalog column."""
    columns = query(path, "select schema_name, table_name, column_name, data_type from duckdb_columns() "
                          "where schema_name like ? and not internal", [schemas])
    return [f"{c['schema_name']}.{c['table_name']}.{c['column_name']}: {c['data_type']}"
            for c in columns if "NULL" in re.findall(r"\w+", c["data_type"])]


def test_every_view_and_column_carries_its_description(flow_run):
    assert query(flow_run.warehouse,
                 "select * from duckdb_columns() where schema_name = 'analytics' and comment is null") == []
    views = query(flow_run.warehouse, "select view_name, comment from duckdb_views() where schema_name = 'analytics'")
    assert sorted(v["view_name"] for v in views) == sorted([*MARTS, *LATEST])
    assert [v["view_name"] for v in views if not v["comment"]] == []


def test_a_comment_reads_back_as_marts_yaml_writes_it(flow_run):
    [subject] = query(flow_run.warehouse, "select comment from duckdb_columns() where schema_name = 'analytics' "
                                          "and table_name = 'latest_changes' and column_name = 'subject'")
    # a quote in the description survives the SQL literal it is written with
    assert subject["comment"] == "what changed (an offer_id, a result_key, a source id, 'catalog', or a workload id)"
    assert subject["comment"] == CONTRACT["models"]["changes"]["columns"]["subject"]
    [view] = query(flow_run.warehouse, "select comment from duckdb_views() where view_name = 'latest_rankings'")
    assert view["comment"] == LATEST["latest_rankings"]["description"]


@pytest.mark.parametrize("mart", MARTS)
def test_each_mart_has_a_view_of_its_documented_columns_and_every_row(flow_run, mart):
    columns = [c["column_name"] for c in query(
        flow_run.warehouse, "select column_name from duckdb_columns() where schema_name = 'analytics' "
                            "and table_name = ? order by column_index", [mart])]
    assert columns == list(CONTRACT["models"][mart]["columns"])
    [counts] = query(flow_run.warehouse, f"select (select count(*) from marts.{mart}) as mart, "
                                         f"(select count(*) from analytics.{mart}) as view")
    assert counts["view"] == counts["mart"]


def test_the_latest_views_of_a_first_run_are_its_rows(flow_run):
    for name, view in LATEST.items():
        [counts] = query(flow_run.warehouse, f"select (select count(*) from marts.{view['mart']}) as mart, "
                                             f"(select count(*) from analytics.{name}) as view")
        assert counts["view"] == counts["mart"], name
    assert query(flow_run.warehouse, "select * from analytics.latest_changes") == []  # nothing to compare with


def test_no_column_in_the_warehouse_is_typed_null(flow_run):
    assert null_typed_columns(flow_run.warehouse) == []


def test_catalog_columns_null_in_every_row_keep_their_types(tmp_path, catalog):
    training_only = catalog.model_copy(update={"workloads": catalog.workloads.model_copy(update={"workloads": {
        w_id: w for w_id, w in catalog.workloads.workloads.items() if w.kind == "training"}})})
    con = warehouse.connect(tmp_path / "training-only.duckdb")
    try:
        warehouse.apply_ddl(con)
        warehouse.load_catalog_tables(con, training_only)
        types = dict(con.execute("select column_name, data_type from duckdb_columns() "
                                 "where schema_name = 'catalog' and table_name = 'workloads'").fetchall())
    finally:
        con.close()
    assert null_typed_columns(tmp_path / "training-only.duckdb", "catalog") == []
    # the types these columns have when an inference workload gives them values
    assert (types["input_tokens"], types["slo_ttft_ms"], types["benchmark_scenario"], types["benchmark_suites"]) == (
        "BIGINT", "DOUBLE", "VARCHAR", "VARCHAR[]")


READ_WITH_DUCKDB1 = """
import json, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
views = [v for (v,) in con.execute(
    "select view_name from duckdb_views() where schema_name = 'analytics' order by view_name").fetchall()]
print(json.dumps({
    "version": duckdb.__version__,
    "rows": {v: len(con.execute(f"select * from analytics.{v}").fetchall()) for v in views},
    "uncommented": con.execute(
        "select table_name, column_name from duckdb_columns() where schema_name = 'analytics' and comment is null"
    ).fetchall(),
    "comment": con.execute("select comment from duckdb_columns() where schema_name = 'analytics' "
                           "and table_name = 'rankings' and column_name = 'outcome_rank'").fetchall()[0][0],
}))
"""


@pytest.mark.skipif(not DUCKDB1_PYTHON.exists(),
                    reason="no .venv-duckdb1 (DuckDB 1.1.3, as analysts' clients often are): `make test` creates it")
def test_a_duckdb_1_client_reads_every_view_and_its_comments_read_only(flow_run):
    expected = {name: query(flow_run.warehouse, f"select count(*) as n from analytics.{name}")[0]["n"]
                for name in [*MARTS, *LATEST]}
    done = subprocess.run([str(DUCKDB1_PYTHON), "-c", READ_WITH_DUCKDB1, str(flow_run.warehouse)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert read["version"].startswith("1.")
    assert read["rows"] == expected
    assert read["uncommented"] == []
    assert read["comment"] == CONTRACT["models"]["rankings"]["columns"]["outcome_rank"]


def test_the_schema_is_kept_when_nothing_it_is_made_from_changed_and_made_again_when_something_did(flow_run, tmp_path):
    """A build (a run id given) keeps schema `analytics` when the statements, the marts' columns and the schema itself
    are as the last build left them (its row in ops.model_builds); anything else makes it again, as before."""
    import shutil

    path = tmp_path / "copy.duckdb"
    shutil.copy(flow_run.warehouse, path)
    con = warehouse.connect(path)
    try:
        def views(run_id):
            return analytics.create_views(con, run_id=run_id)[1]

        def comment():
            [(text,)] = con.execute("select comment from duckdb_views() where view_name = 'latest_rankings'").fetchall()
            return text

        assert views("b") is True  # as the run's own build left it
        con.execute("comment on view analytics.latest_rankings is 'edited by hand'")
        assert views("c") is False and comment() == LATEST["latest_rankings"]["description"]  # made again ...
        assert views("d") is True  # ... and recorded
        con.execute("alter table marts.rankings add column extra integer")  # a mart gained a column
        assert views("e") is False and views("f") is True
        # a mart column's type changed (as a migration may): a view kept over it would fail to bind ("Contents of
        # view were altered"); made again, it reads the new type
        con.execute("alter table marts.rankings alter column outcome_rank type double")
        assert views("e2") is False
        [(rank_type,)] = con.execute("select typeof(outcome_rank) from analytics.rankings limit 1").fetchall()
        assert rank_type == "DOUBLE" and views("f2") is True
        edited = analytics.load_contract()
        edited["views"]["latest_rankings"]["description"] = "the newest rankings"  # marts.yaml edited
        assert analytics.create_views(con, edited, run_id="g")[1] is False and comment() == "the newest rankings"
        assert views("h") is False  # back to the file's description
        assert analytics.create_views(con)[1] is False  # no run id (no build): always made
        [(model, run)] = con.execute("select model, run_id from ops.model_builds where model = ?",
                                     [analytics.BUILD_RECORD]).fetchall()
        assert (model, run) == ("analytics.*", "h")  # one row, the last build that made it
    finally:
        con.close()
