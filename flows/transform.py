"""The SQL runner: file name = model name, one select per file, layers run in a fixed order
(within a layer, a model runs after the models it reads).

staging and intermediate hold this run's rows only; marts keep every as-of date, this run's date replaced. After
the build, each sql/tests/*.sql query must return no rows.

Incremental: a model whose inputs are unchanged is not built again. Its fingerprint is a digest of its SQL, the
macros, the as-of date when it reads it, and the content of every relation it reads (the models before it, the
catalog tables, the raw rows); ops.model_builds keeps the fingerprint each model (each mart and as-of date) was last
built with. A model that reads ops.* (run history) is built every run, and so is one that writes the run id outside
a mart; a reused mart's rows of the date get this run's id. Schema analytics keeps its row there too
(flows/analytics.py, `analytics.*`).

A model whose SQL has the line `-- materialized: view` is a view, defined again each run: a projection of another
model's table (marts.rank_history of marts.rankings) that would otherwise store the same figures twice.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from flows import migrations, relations
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
    reused: bool = False  # its inputs were unchanged: the table (a mart's rows of the date) was kept
    view: bool = False  # a view model (`-- materialized: view`): nothing stored, defined again


_VIEW = re.compile(r"^-- materialized: view[ \t]*$", re.MULTILINE)
_RELATION = re.compile(r"\b(raw|ops|catalog|staging|intermediate|marts)\.([a-z_][a-z0-9_]*)\b")


def _reads(text: str) -> set[tuple[str, str]]:
    """(schema, table) of every relation a model's SQL names outside its comments and string literals."""
    return set(_RELATION.findall(re.sub(r"'[^']*'", "''", re.sub(r"--[^\n]*", "", text))))


def _layer_files(sql_dir: Path, layer: str) -> list[Path]:
    """The model files of a layer, as a build reads them (and models_digest digests them)."""
    return sorted((sql_dir / layer).glob("*.sql"))


def is_view(text: str) -> bool:
    """Whether a model's SQL declares it a view (`-- materialized: view`), not a table."""
    return bool(_VIEW.search(text))


def view_models(sql_dir: Path = SQL_DIR) -> dict[str, str]:
    """The view models, `layer.name` -> select, in build order (DuckLake re-creates them over its tables)."""
    views = {}
    for layer in LAYERS:
        for path in _in_dependency_order(layer, _layer_files(sql_dir, layer)):
            text = path.read_text().strip().rstrip(";")
            if is_view(text):
                views[f"{layer}.{path.stem}"] = text
    return views


def _define_view(con: duckdb.DuckDBPyConnection, layer: str, name: str, select: str, path: Path) -> None:
    """(Re)define a view model. A table of its name (an older version's) is refused, not dropped: what it held goes
    first where the view reads it (flows/migrations.py), which drops it."""
    if relations.kind(con, layer, name) == "BASE TABLE":
        raise ModelError(f"sql/{layer}/{path.name}: {layer}.{name} is a table in this warehouse, and the model is a "
                         "view now; no migration in flows/migrations.py moved its rows (nothing was dropped)")
    try:
        con.execute(f"create or replace view {layer}.{name} as {select}")
    except duckdb.Error as exc:
        raise ModelError(f"sql/{layer}/{path.name}: {exc}") from exc


def content_digest(con: duckdb.DuckDBPyConnection, relation: str, where: str = "", params: list | None = None,
                   exclude: tuple[str, ...] = ()) -> str:
    """Digest of a table's rows and columns, without the columns `exclude`: the row count, an order-free sum of row
    hashes, and the columns' names and types. DuckDB's row hash reads neither names nor the integer types apart (a
    column renamed, or INTEGER made BIGINT, hashes the same): without them, a model whose SQL only renamed or retyped
    a column left the models reading it reused, as they were."""
    have = relations.columns(con, *relation.split(".")) if exclude else {}
    present = [c for c in exclude if c in have]
    columns = f"* exclude ({', '.join(present)})" if present else "*"
    query = f"select {columns} from {relation} {where}"
    shape = [(name, str(data_type)) for name, data_type, *_ in con.execute(f"{query} limit 0", params or []).description]
    [(count, total)] = con.execute(f"select count(*), sum(hash(r)::hugeint) from ({query}) r", params or []).fetchall()
    return f"{count}:{total or 0}:{hashlib.sha256(repr(shape).encode()).hexdigest()[:16]}"


def _restamped(schema: str) -> tuple[str, ...]:
    """Columns a digest leaves out: a reused mart's run_id (restamped with each run's); nothing elsewhere."""
    return ("run_id",) if schema == "marts" else ()


# Staging models read raw tables through `semi join staging.stg_ops__source_runs_used using (source_id, run_id)`:
# their input is the raw rows of the runs this run uses, whoever landed them.
USED_RUNS = ("staging", "stg_ops__source_runs_used")


def _raw_digest(con: duckdb.DuckDBPyConnection, table: str, used_only: bool) -> str:
    """Digest of a raw table's rows: those of the runs this run uses (`used_only`), or all of them."""
    used = f"semi join {'.'.join(USED_RUNS)} using (source_id, run_id)" if used_only else ""
    return content_digest(con, f"(select * from raw.{table} {used})")


def _fingerprint(con: duckdb.DuckDBPyConnection, text: str, macros: str, as_of: dt.date,
                 digests: dict[str, str], tables: set[tuple[str, str]]) -> str | None:
    """Digest of a model's SQL and inputs; None when it must be built every run (it reads run history, or writes the
    run id into a rebuilt table)."""
    reads = _reads(text)
    if any(schema == "ops" for schema, _ in reads):
        return None
    parts = [text, macros, f"as_of={as_of}" if "getvariable('as_of')" in text else ""]
    used_only = USED_RUNS in reads and any(schema == "raw" for schema, _ in reads)
    for schema, table in sorted(reads):
        if used_only and (schema, table) == USED_RUNS:
            continue  # it only picks the raw rows, whose digest follows
        relation = f"{schema}.{table}" + (" (runs used)" if used_only and schema == "raw" else "")
        if relation not in digests:
            if (schema, table) not in tables:
                return None  # a relation the build has not made (the model will fail and say so)
            digests[relation] = (_raw_digest(con, table, used_only) if schema == "raw"
                                 else content_digest(con, relation, exclude=_restamped(schema)))
        parts.append(f"{relation}={digests[relation]}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _append_run(con: duckdb.DuckDBPyConnection, name: str, select: str, as_of: dt.date) -> None:
    """Replace this as-of date's rows of a mart; a column the model gained is added (older rows read null). A column
    whose type the model changed keeps its type while the new values cast to it unchanged; otherwise it is widened to
    the new type when every older value casts to that unchanged (BIGINT to DOUBLE), and the build fails naming the
    mart, the column and both types when not: `insert ... by name` cast the new values to the old type (0.5 stored
    as 0) without a word."""
    con.execute(f"create or replace temp table _mart_rows as {select}")
    existing = relations.columns(con, "marts", name)
    for column, data_type, *_ in con.execute("describe _mart_rows").fetchall():
        if column not in existing:
            con.execute(f'alter table marts.{name} add column "{column}" {data_type}')
        elif (existing[column] != data_type
              and _changed_by_cast(con, "_mart_rows", column, data_type, existing[column]) != 0):
            _widen(con, name, column, existing[column], data_type)
    con.execute(f"delete from marts.{name} where as_of = ?", [as_of])
    con.execute(f"insert into marts.{name} by name select * from _mart_rows")
    con.execute("drop table _mart_rows")


def _changed_by_cast(con: duckdb.DuckDBPyConnection, table: str, column: str, data_type: str, other: str) -> int | None:
    """How many values of `table`.`column` (of `data_type`) a cast to `other` and back changes; None when the cast
    fails for some."""
    quoted = f'"{column}"'
    try:
        [(changed,)] = con.execute(f"select count(*) from {table} where {quoted} is not null and "
                                   f"{quoted}::{other}::{data_type} is distinct from {quoted}").fetchall()
    except duckdb.Error:
        return None
    return changed


def _widen(con: duckdb.DuckDBPyConnection, name: str, column: str, old_type: str, new_type: str) -> None:
    """Change marts.`name`'s `column` from `old_type` to `new_type`, if every value it holds casts there and back
    unchanged; ModelError otherwise (nothing is changed)."""
    quoted = f'"{column}"'
    lost = _changed_by_cast(con, f"marts.{name}", column, old_type, new_type)
    if lost != 0:
        raise ModelError(f"sql/marts/{name}.sql: marts.{name}.{column} is {new_type} in the model and {old_type} in "
                         f"the warehouse, and the rows it holds do not cast to {new_type} unchanged"
                         f"{f' ({lost} would change)' if lost else ''}; a migration in flows/migrations.py must move "
                         "them (nothing was changed)")
    con.execute(f"alter table marts.{name} alter column {quoted} type {new_type}")
    log.warning("marts.%s.%s: widened from %s to %s, the type its model gives now", name, column, old_type, new_type)


def _in_dependency_order(layer: str, paths: list[Path]) -> list[Path]:
    """Models of one layer, each after the models of the same layer it reads (`<layer>.<name>`)."""
    by_name = {p.stem: p for p in paths}
    # the models of the layer each one names (`<layer>.<name>`, as _reads finds them: comments and strings aside)
    reads = {p.stem: sorted(name for schema, name in _reads(p.read_text()) if schema == layer and name in by_name
                            and name != p.stem) for p in paths}
    ordered: list[Path] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if by_name[name] in ordered:
            return
        if name in visiting:
            raise ModelError(f"sql/{layer}/{name}.sql: models of the layer read each other in a cycle")
        visiting.add(name)
        for other in reads[name]:
            visit(other)
        visiting.discard(name)
        ordered.append(by_name[name])

    for name in sorted(by_name):
        visit(name)
    return ordered


def previous_build(con: duckdb.DuckDBPyConnection, model: str, as_of: dt.date | None) -> tuple[str, str] | None:
    """(fingerprint, content digest) that ops.model_builds keeps for a model (a mart: of one as-of date), if any."""
    found = con.execute("select fingerprint, content_digest from ops.model_builds where model = ? and "
                        "as_of is not distinct from ?", [model, as_of]).fetchall()
    return found[0] if found else None


def previous_builds(con: duckdb.DuckDBPyConnection,
                    as_of: dt.date) -> dict[tuple[str, dt.date | None], tuple[str, str]]:
    """`previous_build` of every model a build of `as_of` may reuse, read at once: (model, None) for a staging or
    intermediate model, (model, as_of) for a mart."""
    return {(model, built_as_of): (fingerprint, digest) for model, built_as_of, fingerprint, digest in con.execute(
        "select model, as_of, fingerprint, content_digest from ops.model_builds where as_of is null or as_of = ?",
        [as_of]).fetchall()}


def digest_rows(digest: str) -> int:
    """The rows a `content_digest` counted (its first part)."""
    return int(digest.split(":", 1)[0])


def record_build(con: duckdb.DuckDBPyConnection, model: str, as_of: dt.date | None, fingerprint: str,
                 digest: str, run_id: str) -> None:
    """Keep in ops.model_builds what a model was built from (`fingerprint`) and what it then held (`digest`)."""
    record_builds(con, [(model, as_of, fingerprint, digest)], run_id)


def record_builds(con: duckdb.DuckDBPyConnection, builds: list[tuple[str, dt.date | None, str, str]],
                  run_id: str) -> None:
    """`record_build` of several models, (model, as_of, fingerprint, digest) each, in three statements: a build
    kept its ~45 records with two statements each, ~0.1 s of a 0.8 s build of the embedded snapshot."""
    if not builds:
        return
    rows = ", ".join(["(?, ?::date, ?, ?)"] * len(builds))
    con.execute(f"create or replace temp table _model_builds as select * from (values {rows}) "
                "b(model, as_of, fingerprint, content_digest)", [value for build in builds for value in build])
    con.execute("delete from ops.model_builds m using _model_builds b where m.model = b.model "
                "and m.as_of is not distinct from b.as_of")
    con.execute("insert into ops.model_builds select model, as_of, fingerprint, content_digest, ?, now()::timestamp "
                "from _model_builds", [run_id])
    con.execute("drop table _model_builds")


def models_digest(sql_dir: Path = SQL_DIR) -> str:
    """Digest of the SQL models and macros, the files `build_models` reads: what a run built with (build_models sets
    it as the variable `models_digest`, which ops.runs keeps). A release that changed them may word the reports'
    labels otherwise; marts.changes tells that from new results."""
    paths = [sql_dir / "macros.sql", *(p for layer in LAYERS for p in _layer_files(sql_dir, layer))]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path.relative_to(sql_dir).as_posix()}\n{path.read_text()}\n".encode())
    return digest.hexdigest()[:16]


def build_models(con: duckdb.DuckDBPyConnection, run_id: str, as_of: dt.date, sql_dir: Path = SQL_DIR) -> list[BuiltModel]:
    """Build every model in order; keep those whose fingerprint equals the one they were last built with."""
    con.execute("set variable run_id = ?", [run_id])
    con.execute("set variable as_of = ?", [as_of.isoformat()])
    con.execute("set variable models_digest = ?", [models_digest(sql_dir)])
    macros = (sql_dir / "macros.sql").read_text()
    for note in migrations.migrate_marts(con):
        log.warning("%s", note)
    digests: dict[str, str] = {}  # relation -> content digest, as this run's models read it
    previous_by_model = previous_builds(con, as_of)
    tables = {tuple(row) for row in con.execute(
        "select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE'").fetchall()}
    built = []
    records: list[tuple[str, dt.date | None, str, str]] = []  # kept in ops.model_builds once every model is built
    for layer in LAYERS:
        for path in _in_dependency_order(layer, _layer_files(sql_dir, layer)):
            name = path.stem
            relation = f"{layer}.{name}"
            select = path.read_text().strip().rstrip(";")
            mart_date = as_of if layer == "marts" else None
            where, params = ("where as_of = ?", [as_of]) if layer == "marts" else ("", [])
            if is_view(select):
                _define_view(con, layer, name, select, path)
                tables.add((layer, name))
                [(rows,)] = con.execute(f"select count(*) from {relation} {where}", params).fetchall()
                built.append(BuiltModel(layer, name, rows, view=True))
                log.info("defined %s, a view (%d rows)", relation, rows)
                continue
            fingerprint = _fingerprint(con, select, macros, as_of, digests, tables)
            if layer != "marts" and "getvariable('run_id')" in select:
                fingerprint = None
            previous = previous_by_model.get((relation, mart_date)) if fingerprint else None
            held = (content_digest(con, relation, where, params, _restamped(layer))
                    if previous and previous[0] == fingerprint and (layer, name) in tables else None)
            reused = held is not None and held == previous[1]
            if reused:
                if layer == "marts" and "run_id" in relations.columns(con, layer, name):
                    con.execute(f"update {relation} set run_id = ? where as_of = ?", [run_id, as_of])
            else:
                try:
                    if layer != "marts":
                        con.execute(f"create or replace table {relation} as {select}")
                    elif ("marts", name) in tables:
                        _append_run(con, name, select, as_of)
                    else:
                        con.execute(f"create table marts.{name} as {select}")
                except duckdb.Error as exc:
                    raise ModelError(f"sql/{layer}/{path.name}: {exc}") from exc
                held = None
                if fingerprint:
                    held = content_digest(con, relation, where, params, _restamped(layer))
                    records.append((relation, mart_date, fingerprint, held))
            # what a later model that reads it digests: the table as it is now. A staging or intermediate table's
            # whole content is the digest just taken; a mart's is every date's rows, without run_id
            if layer != "marts" and held is not None:
                digests[relation] = held
            else:
                digests.pop(relation, None)
            tables.add((layer, name))
            if held is not None:  # its rows (of the date, for a mart) are counted in the digest just taken
                rows = digest_rows(held)
            else:
                [(rows,)] = con.execute(f"select count(*) from {relation} {where}", params).fetchall()
            built.append(BuiltModel(layer, name, rows, reused))
            log.info("%s %s (%d rows)%s", "reused" if reused else "built", relation, rows,
                     ": its inputs are unchanged" if reused else "")
    # a build that failed part way records nothing: the next one builds again what this one had (slower, not wrong)
    record_builds(con, records, run_id)
    _drop_rows_of_removed_marts(con, {m.name for m in built if m.layer == "marts"}, as_of)
    return built


def _drop_rows_of_removed_marts(con: duckdb.DuckDBPyConnection, marts: set[str], as_of: dt.date) -> None:
    """A mart table no model builds any more keeps its history, but no rows of this date (which it did not build)."""
    for (table,) in con.execute("select table_name from information_schema.tables where table_schema = 'marts' "
                                "and table_type = 'BASE TABLE'").fetchall():
        if table not in marts:
            con.execute(f"delete from marts.{table} where as_of = ?", [as_of])


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
