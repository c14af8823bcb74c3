"""Schema `analytics`, the analysts' contract: a documented view per mart and views of the newest run's rows.

Every view and column carries its sql/marts/marts.yaml description as a DuckDB comment (`duckdb_views()`,
`duckdb_columns()`). The views use only SQL that DuckDB 1.x clients bind, since they open the file read-only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import yaml

from flows import transform, warehouse
from flows.paths import SQL_DIR

CONTRACT_FILE = SQL_DIR / "marts" / "marts.yaml"
SCHEMA = "analytics"
# The newest run: the latest as-of date a run was recorded for (the same rule as reports/latest/). Only published
# warehouses hold ops.runs rows, and a backfill of an earlier date does not move it.
NEWEST_AS_OF = "(select max(as_of) from ops.runs)"
# The schema's row in ops.model_builds (where flows/transform.py keeps each model's): what it was made from, and what
# DuckDB then listed in it. A run that would make it again from the same statements over marts of the same columns,
# and finds it as the last run left it, keeps it: making it takes ~0.3 s here (670 statements, each comment on a
# column rewriting its view's catalog entry), ~0.05 s to check.
BUILD_RECORD = f"{SCHEMA}.*"


def load_contract(path: Path = CONTRACT_FILE) -> dict:
    """marts.yaml: `models` (each mart's description and columns) and `views` (the latest_* views). The project's own
    file, read with libyaml's safe loader (ten times PyYAML's Python one: a run reads it twice)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def quoted(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def view_definitions(contract: dict) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Each view of the schema: name -> (select, description, column descriptions in order)."""
    views = {}
    for mart, model in contract["models"].items():
        columns = model["columns"]
        names = ", ".join(f'"{column}"' for column in columns)
        select = f"select {names} from marts.{mart}"
        views[mart] = (select, model["description"], columns)
    for name, view in contract["views"].items():
        select, _, columns = views[view["mart"]]
        views[name] = (f"{select} where as_of = {NEWEST_AS_OF}", view["description"], columns)
    return views


def statements(views: dict[str, tuple[str, str, dict[str, str]]]) -> list[str]:
    """The statements that make schema `analytics` anew with these views and their comments."""
    made = [f"drop schema if exists {SCHEMA} cascade", f"create schema {SCHEMA}"]
    for name, (select, description, columns) in views.items():
        made.append(f"create view {SCHEMA}.{name} as {select}")
        made.append(f"comment on view {SCHEMA}.{name} is {quoted(description)}")
        made += [f'comment on column {SCHEMA}.{name}."{column}" is {quoted(text)}' for column, text in columns.items()]
    return made


def _fingerprint(con: duckdb.DuckDBPyConnection, made: list[str]) -> str:
    """Digest of the statements, of the marts tables' columns and types (a view keeps the types it was made over)
    and of the marts views' SQL (their types follow from it; DuckDB lists a view's types as of its last binding)."""
    tables = con.execute("select table_name, column_name, data_type from duckdb_columns() where database_name = "
                         "current_database() and schema_name = 'marts' and table_oid in (select table_oid from "
                         "duckdb_tables()) order by all").fetchall()
    views = con.execute("select view_name, sql from duckdb_views() where database_name = current_database() and "
                        "schema_name = 'marts' order by all").fetchall()
    return hashlib.sha256("\n".join([*made, repr(tables), repr(views)]).encode()).hexdigest()


def _state(con: duckdb.DuckDBPyConnection) -> str:
    """Digest of schema `analytics` as DuckDB lists it: each view's SQL and comment, each column's name, type and
    comment."""
    views = con.execute("select view_name, sql, comment from duckdb_views() "
                        f"where database_name = current_database() and schema_name = '{SCHEMA}' order by all").fetchall()
    columns = con.execute("select table_name, column_index, column_name, data_type, comment from duckdb_columns() "
                          f"where database_name = current_database() and schema_name = '{SCHEMA}' order by all"
                          ).fetchall()
    return hashlib.sha256(repr((views, columns)).encode()).hexdigest()


def create_views(con: duckdb.DuckDBPyConnection, contract: dict | None = None,
                 run_id: str | None = None) -> tuple[list[str], bool]:
    """(Re)create schema `analytics` with its views and their comments, in one transaction; returns the view names,
    and whether the schema was kept as it was: with a run id (the run's build), a schema that the same statements
    made over marts of the same columns, found as the last build left it (BUILD_RECORD), is kept."""
    views = view_definitions(contract or load_contract())
    made = statements(views)
    fingerprint = _fingerprint(con, made) if run_id else None
    if fingerprint and transform.previous_build(con, BUILD_RECORD, None) == (fingerprint, _state(con)):
        return list(views), True
    with warehouse.transaction(con):
        con.execute(";\n".join(made))
        if fingerprint:
            transform.record_build(con, BUILD_RECORD, None, fingerprint, _state(con), run_id)
    return list(views), False
