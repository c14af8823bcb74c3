"""The SQL runner: file name = model name, one select per file, layers run in a fixed order
(within a layer, a model runs after the models it reads).

staging and intermediate hold this run's rows only (rebuilt each run); marts keep every as-of date,
this run's date replaced. After the build, each sql/tests/*.sql query must return no rows.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from flows.paths import SQL_DIR

log = logging.getLogger(__name__)
LAYERS = ("staging", "intermediate", "marts")


class ModelError(RuntimeError):
    """A SQL model failed to build, or a SQL test found offending rows."""


@dataclass(frozen=True)
class BuiltModel:
    layer: str
    name: str
    rows: int


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    return bool(con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?", [schema, name]
    ).fetchall()[0][0])


def _columns(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> dict[str, str]:
    return dict(con.execute(
        "select column_name, data_type from information_schema.columns where table_schema = ? and table_name = ? "
        "order by ordinal_position", [schema, name]).fetchall())


def _append_run(con: duckdb.DuckDBPyConnection, name: str, select: str, as_of: dt.date) -> None:
    """Replace this as-of date's rows of a mart; a column the model gained is added (older rows read null)."""
    con.execute(f"create or replace temp table _mart_rows as {select}")
    existing = _columns(con, "marts", name)
    for column, data_type, *_ in con.execute("describe _mart_rows").fetchall():
        if column not in existing:
            con.execute(f'alter table marts.{name} add column "{column}" {data_type}')
    con.execute(f"delete from marts.{name} where as_of = ?", [as_of])
    con.execute(f"insert into marts.{name} by name select * from _mart_rows")
    con.execute("drop table _mart_rows")


def _in_dependency_order(layer: str, paths: list[Path]) -> list[Path]:
    """Models of one layer, each after the models of the same layer it reads (`<layer>.<name>`)."""
    texts = {p.stem: p.read_text() for p in paths}
    by_name = {p.stem: p for p in paths}
    ordered: list[Path] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if by_name[name] in ordered:
            return
        if name in visiting:
            raise ModelError(f"sql/{layer}/{name}.sql: models of the layer read each other in a cycle")
        visiting.add(name)
        for other in sorted(by_name):
            if other != name and re.search(rf"\b{layer}\.{re.escape(other)}\b", texts[name]):
                visit(other)
        visiting.discard(name)
        ordered.append(by_name[name])

    for name in sorted(by_name):
        visit(name)
    return ordered


def build_models(con: duckdb.DuckDBPyConnection, run_id: str, as_of: dt.date, sql_dir: Path = SQL_DIR) -> list[BuiltModel]:
    con.execute("set variable run_id = ?", [run_id])
    con.execute("set variable as_of = ?", [as_of.isoformat()])
    built = []
    for layer in LAYERS:
        for path in _in_dependency_order(layer, sorted((sql_dir / layer).glob("*.sql"))):
            name = path.stem
            select = path.read_text().strip().rstrip(";")
            try:
                if layer != "marts":
                    con.execute(f"create or replace table {layer}.{name} as {select}")
                elif _table_exists(con, "marts", name):
                    _append_run(con, name, select, as_of)
                else:
                    con.execute(f"create table marts.{name} as {select}")
            except duckdb.Error as exc:
                raise ModelError(f"sql/{layer}/{path.name}: {exc}") from exc
            if layer == "marts":
                rows = con.execute(f"select count(*) from marts.{name} where as_of = ?", [as_of]).fetchall()[0][0]
            else:
                rows = con.execute(f"select count(*) from {layer}.{name}").fetchall()[0][0]
            built.append(BuiltModel(layer, name, rows))
            log.info("built %s.%s (%d rows)", layer, name, rows)
    return built


def run_sql_tests(con: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR) -> None:
    """Each test returns offending rows; any row fails the run with the test's header comment."""
    failures = []
    for path in sorted((sql_dir / "tests").glob("*.sql")):
        text = path.read_text()
        rows = con.sql(text).fetchall()
        if rows:
            header = " ".join(line.lstrip("- ") for line in text.splitlines() if line.startswith("--"))
            failures.append(f"sql/tests/{path.name}: {len(rows)} offending row(s), e.g. {rows[0]}. {header}")
    if failures:
        raise ModelError("\n".join(failures))
