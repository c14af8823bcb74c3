"""flows/relations.py: a relation's columns and kind, asked cheaply, say what information_schema says."""

from __future__ import annotations

import duckdb
import pytest

from flows import relations, warehouse

INFORMATION_COLUMNS = ("select column_name, data_type from information_schema.columns where table_schema = ? and "
                       "table_name = ? order by ordinal_position")


def test_every_relation_of_a_built_warehouse_has_information_schemas_columns_and_kind(flow_run):
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    try:
        found = con.execute("select table_schema, table_name, table_type from information_schema.tables").fetchall()
        kinds = {kind for _, _, kind in found}
        assert kinds == {"BASE TABLE", "VIEW"} and len(found) > 50  # the marts, their analytics views, ...
        for schema, name, kind in found:
            assert relations.columns(con, schema, name) == dict(con.execute(INFORMATION_COLUMNS, [schema, name])
                                                                .fetchall()), f"{schema}.{name}"
            assert relations.kind(con, schema, name) == kind, f"{schema}.{name}"
        # types as information_schema writes them, e.g. a list and a date
        columns = relations.columns(con, "marts", "rankings")
        assert columns["as_of"] == "DATE" and columns["outcome_rank"] in {"BIGINT", "INTEGER"}
    finally:
        con.close()


def test_a_missing_relation_has_no_columns_and_no_kind_and_leaves_a_transaction_usable(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create schema marts; create table marts.t (a integer, b varchar[]); "
                "create view marts.v as select a from marts.t")
    con.begin()
    con.execute("insert into marts.t values (1, ['x'])")
    assert relations.columns(con, "marts", "nope") == {}
    assert relations.columns(con, "nope", "t") == {}  # no such schema either
    assert relations.kind(con, "marts", "nope") == ""
    con.execute("insert into marts.t values (2, ['y'])")  # the catalog errors did not abort the transaction
    con.commit()
    assert con.execute("select count(*) from marts.t").fetchall() == [(2,)]
    assert relations.columns(con, "marts", "t") == {"a": "INTEGER", "b": "VARCHAR[]"}
    assert (relations.kind(con, "marts", "t"), relations.kind(con, "marts", "v")) == ("BASE TABLE", "VIEW")
    # names are case-blind in DuckDB: a view asked for in capitals is still a view, not a table
    assert (relations.kind(con, "MARTS", "V"), relations.columns(con, "Marts", "V")) == ("VIEW", {"a": "INTEGER"})
    con.close()


@pytest.mark.parametrize("name", ['we ird', 'x"y', "it's"])
def test_a_name_that_is_no_plain_identifier_is_looked_up_in_information_schema(tmp_path, name):
    con = duckdb.connect()
    quoted = '"' + name.replace('"', '""') + '"'
    con.execute(f"create schema s; create table s.{quoted} (price decimal(18,3))")
    assert relations.columns(con, "s", name) == {"price": "DECIMAL(18,3)"}
    assert relations.kind(con, "s", name) == "BASE TABLE"
    assert warehouse.table_columns(con, f"s.{name}") == {"price": "DECIMAL(18,3)"}
    con.close()
