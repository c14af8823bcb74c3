"""Schema `analytics`, the analysts' contract: a documented view per mart and views of the newest run's rows.

Every view and column carries its sql/marts/marts.yaml description as a DuckDB comment (`duckdb_views()`,
`duckdb_columns()`). The views use only SQL that DuckDB 1.x clients bind, since they open the file read-only.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import yaml

from flows.paths import SQL_DIR

CONTRACT_FILE = SQL_DIR / "marts" / "marts.yaml"
SCHEMA = "analytics"
# The newest run: the latest as-of date a run was recorded for (the same rule as reports/latest/). Only published
# warehouses hold ops.runs rows, and a backfill of an earlier date does not move it.
NEWEST_AS_OF = "(select max(as_of) from ops.runs)"


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


def create_views(con: duckdb.DuckDBPyConnection, contract: dict | None = None) -> list[str]:
    """(Re)create schema `analytics` with its views and their comments, in one transaction; returns the view names."""
    views = view_definitions(contract or load_contract())
    con.begin()
    try:
        con.execute(f"drop schema if exists {SCHEMA} cascade")
        con.execute(f"create schema {SCHEMA}")
        for name, (select, description, columns) in views.items():
            con.execute(f"create view {SCHEMA}.{name} as {select}")
            con.execute(f"comment on view {SCHEMA}.{name} is {quoted(description)}")
            for column, text in columns.items():
                con.execute(f'comment on column {SCHEMA}.{name}."{column}" is {quoted(text)}')
    except BaseException:
        con.rollback()
        raise
    con.commit()
    return list(views)
