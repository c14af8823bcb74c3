"""The DuckDB warehouse file: schema, catalog tables, landing, and the build-aside-and-swap that makes a run atomic."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from flows.catalog import Catalog, normalise_alias
from flows.paths import SQL_DIR

# DuckDB 1.x clients (analysts' CLIs, BI drivers) can open files written with this storage version (checked with 1.1.3).
STORAGE_COMPATIBILITY = {"storage_compatibility_version": "v1.0.0"}
RAW_TABLES = ("aws_pricing", "aws_spot", "azure_retail", "gcp_billing", "price_sheet", "mlperf_inference", "mlperf_training",
              "benchmark_runs")


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    path.parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(path), config=STORAGE_COMPATIBILITY)


def connect_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), read_only=True)


def fetch_dicts(con: duckdb.DuckDBPyConnection, query: str, params: list | None = None) -> list[dict]:
    """Rows of a query as dicts keyed by column name (on a cursor of its own, so no result is left open)."""
    cursor = con.cursor()
    result = cursor.execute(query, params or [])
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def apply_ddl(con: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR) -> None:
    """Create schemas and raw/ops tables, add the columns a newer DDL gained, then (re)define the cost macros.

    A warehouse built by an older version keeps its rows: a new column is added and reads null for them.
    """
    scratch = duckdb.connect()  # the DDL applied to an empty database: the columns each table should have
    try:
        for ddl in sorted((sql_dir / "raw").glob("*.sql")):
            scratch.execute(ddl.read_text())
            con.execute(ddl.read_text())
        wanted = scratch.execute(
            "select table_schema, table_name, column_name, data_type from information_schema.columns "
            "where table_schema in ('raw', 'ops') order by table_schema, table_name, ordinal_position").fetchall()
    finally:
        scratch.close()
    have = {(r[0], r[1], r[2]) for r in con.execute(
        "select table_schema, table_name, column_name from information_schema.columns "
        "where table_schema in ('raw', 'ops')").fetchall()}
    for schema, table, column, data_type in wanted:
        if (schema, table, column) not in have:
            con.execute(f'alter table {schema}.{table} add column "{column}" {data_type}')
    con.execute((sql_dir / "macros.sql").read_text())


def remove_leftovers_of_killed_runs(folder: Path, pattern: str) -> list[Path]:
    """Remove the private files and folders a run killed mid-way left in `folder`: names matching the regular
    expression `pattern` (group `pid`: the run's process id).

    The caller holds runlock.exclusive, so no other run is writing: every match is a killed run's, even when its
    pid has since been given to another process. They never were the published state. Only exact patterns of
    hweval's own private names are given here.
    """
    removed = []
    for leftover in sorted(folder.iterdir()) if folder.exists() else []:
        if not re.fullmatch(pattern, leftover.name):
            continue
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


MANIFEST_NAME = "latest.json"  # in the reports folder: the run a publish committed, written last


def write_publish_journal(reports_root: Path, publish_id: str, run_id: str, warehouse_file: Path,
                          placing: list[Path]) -> Path:
    """Write `.publish-<pid>.json` before a publish moves anything: what it is about to replace, for recovery."""
    reports_root.mkdir(parents=True, exist_ok=True)
    journal = reports_root / f".publish-{os.getpid()}.json"
    journal.write_text(json.dumps({
        "publish_id": publish_id, "run_id": run_id, "warehouse": str(warehouse_file),
        "warehouse_existed": warehouse_file.exists(), "placing": {folder.name: folder.exists() for folder in placing},
    }), encoding="utf-8")
    return journal


def write_manifest(reports_root: Path, manifest: dict) -> None:
    """Write reports/latest.json by one rename: the step that commits a publish."""
    path = reports_root / MANIFEST_NAME
    new = reports_root / f".{MANIFEST_NAME}.new-{os.getpid()}"
    new.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    try:
        os.replace(new, path)
    except BaseException:
        new.unlink(missing_ok=True)
        raise


def read_manifest(reports_root: Path) -> dict:
    """reports/latest.json: the last committed publish (empty before the first)."""
    path = reports_root / MANIFEST_NAME
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _read_journal(journal: Path | None) -> dict:
    """A killed publish's journal; one cut short by the kill (nothing had moved yet) or missing reads as empty."""
    try:
        data = json.loads(journal.read_text(encoding="utf-8")) if journal else {}
    except (OSError, ValueError):
        data = {}
    if "placing" not in data and "run_id" not in data:  # written by an earlier hweval: {folder name: existed}
        data = {"placing": data}
    return {"publish_id": None, "warehouse": None, "warehouse_existed": True, "placing": {}} | data


def recover_killed_publish(path: Path, reports_root: Path) -> list[str]:
    """Finish or undo a publish that a killed run left half done, so the warehouse and the reports agree again.

    A publish writes its journal `.publish-<pid>.json` first, then renames the new warehouse in (keeping the old one
    as `.<warehouse>.previous-<pid>`) and the report folders (moving the old ones aside as `.<name>.old-<pid>`), then
    reports/latest.json (the commit). If latest.json names the killed publish, it was committed: what it moved aside
    goes. If not, the old warehouse and the old report folders go back, and what it had newly placed goes.
    Recovery assumes the caller holds `runlock.exclusive`: no other run is publishing, so whatever a publish left
    here is a dead run's, whether or not its pid has since been given to another process (or to this one). That
    run's previous warehouse is the last committed one: every earlier run finished or was recovered before it.
    """
    actions = []
    journal_re = re.compile(r"\.publish-(?P<pid>\d+)\.json")
    previous_re = re.compile(rf"\.{re.escape(path.name)}\.previous-(?P<pid>\d+)")
    journals = {m.group("pid"): p for p in _entries(reports_root) if (m := journal_re.fullmatch(p.name))}
    previous = {m.group("pid"): p for p in _entries(path.parent) if (m := previous_re.fullmatch(p.name))}
    committed = read_manifest(reports_root).get("publish_id")
    left: set[str] = set()
    for pid in sorted(journals.keys() | previous.keys(), key=int):
        journal = _read_journal(journals.get(pid))
        if journal["warehouse"] is not None and Path(journal["warehouse"]).resolve() != path.resolve():
            # a publish to another warehouse (sharing this reports folder): not this run's to touch
            left.add(pid)
            actions.append(f"left a killed publish (pid {pid}) to {journal['warehouse']} for a run on that warehouse")
            continue
        if journal["publish_id"] is not None and journal["publish_id"] == committed:
            if pid in previous:
                previous[pid].unlink()
            actions.append(f"finished the publish of run {journal['run_id']}, committed before it was killed "
                           f"(pid {pid})")
            continue
        if pid in previous:
            if path.exists() and os.path.samefile(previous[pid], path):  # killed before its rename: a rename of
                previous[pid].unlink()  # one name of a file onto another does nothing, so the link goes instead
            else:
                os.replace(previous[pid], path)
            actions.append(f"restored the warehouse a killed run (pid {pid}) was replacing")
        elif not journal["warehouse_existed"] and path.exists():  # the first warehouse, placed by the killed run
            path.unlink()
            actions.append(f"removed the warehouse a killed run (pid {pid}) had just placed (there was none before)")
        for name, existed in journal["placing"].items():  # each folder the killed publish was placing: the old back
            target, old = reports_root / name, reports_root / f".{name}.old-{pid}"
            if old.exists():
                if target.exists():
                    shutil.rmtree(target)
                os.replace(old, target)
                actions.append(f"restored reports/{name}")
            elif not existed and target.exists():  # a new folder (a new date) the killed run had placed
                shutil.rmtree(target)
                actions.append(f"removed reports/{name}, which the killed run had just placed")
        if pid in journals:
            journals[pid].unlink()
    finished_re = re.compile(rf"\.(?:.+\.old-(?P<old>\d+)|publish-(?P<journal>\d+)\.json|"
                             rf"{re.escape(MANIFEST_NAME)}\.new-(?P<manifest>\d+))")
    for leftover in _entries(reports_root):
        match = finished_re.fullmatch(leftover.name)
        if match and not {match.group("old"), match.group("journal"), match.group("manifest")} & left:
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink(missing_ok=True)
            actions.append(f"removed {leftover.name}, left by a publish that finished")
    return actions


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.exists() else []


@contextmanager
def building_copy(path: Path) -> Iterator[Path]:
    """Yield a private copy of the warehouse to build in; the caller swaps it in with `swapped_in`.

    Nothing touches `path` until then, so a run that fails leaves the last good warehouse, and an analyst's
    open read-only handle neither blocks the build nor sees it half done.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers_of_killed_runs(path.parent, rf"\.{re.escape(path.name)}\.building-(?P<pid>\d+)(\.wal)?")
    building = path.with_name(f".{path.name}.building-{os.getpid()}")
    for leftover in (building, building.with_name(building.name + ".wal")):
        leftover.unlink(missing_ok=True)
    if path.exists():
        shutil.copy2(path, building)
    try:
        yield building
    finally:
        for leftover in (building, building.with_name(building.name + ".wal")):
            leftover.unlink(missing_ok=True)


@contextmanager
def swapped_in(building: Path, path: Path) -> Iterator[Path | None]:
    """Replace the warehouse with the finished copy (a rename); put the previous one back if the block fails.

    Yields `.<name>.previous-<pid>`, a second name for the previous file (None if there was none), for the caller to
    remove once the publish is committed: until then recovery puts it back.
    """
    previous = path.with_name(f".{path.name}.previous-{os.getpid()}")
    previous.unlink(missing_ok=True)
    had_previous = path.exists()
    if had_previous:
        os.link(path, previous)  # a second name for the old file: the swap below never leaves `path` missing
    os.replace(building, path)
    try:
        yield previous if had_previous else None
    except BaseException:
        if had_previous:
            os.replace(previous, path)
        else:
            path.unlink(missing_ok=True)
        raise


PEAK_TFLOPS_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4", "int4")
_DOUBLE, _BIGINT, _TEXT, _TEXTS = pa.float64(), pa.int64(), pa.string(), pa.list_(pa.string())
# Catalog columns that can be null in every row (nobody published an FP16 peak; a catalog of training workloads
# only has no SLO): their types, the ones the values get when there are some, so a column is never typed NULL.
NULLABLE_CATALOG_COLUMNS: dict[str, dict[str, pa.DataType]] = {
    "accelerators": {"memory_gb": _DOUBLE, "memory_bandwidth_tbps": _DOUBLE, "tdp_w": _DOUBLE,
                     **{f"peak_tflops_{p}": _DOUBLE for p in PEAK_TFLOPS_PRECISIONS}},
    "instances": {"vcpu": _BIGINT, "memory_gib": _DOUBLE},
    "models": {"active_params": _DOUBLE},
    "mlperf_training_tasks": {"note": _TEXT},
    "workloads": {
        "benchmark_suite": _TEXT, "benchmark_task": _TEXT, "benchmark_scenario": _TEXT,
        "benchmark_divisions": _TEXTS, "benchmark_suites": _TEXTS, "benchmark_availabilities": _TEXTS,
        "tokens": _DOUBLE, "training_precision": _TEXT, "state_bytes_per_param": _DOUBLE, "training_chips": _BIGINT,
        "deadline_hours": _DOUBLE, "mfu": _DOUBLE, "accuracy_target_pct": _DOUBLE, "input_tokens": _BIGINT,
        "output_tokens": _BIGINT, "slo_ttft_ms": _DOUBLE, "slo_tpot_ms": _DOUBLE, "mean_requests_per_s": _DOUBLE,
        "peak_factor": _DOUBLE, "success_rate": _DOUBLE, "months": _DOUBLE, "trained_by": _TEXT,
        "max_instances_per_replica": _BIGINT, "pricing_terms": _TEXTS,
    },
}


def typed_catalog_table(name: str, table: pa.Table) -> pa.Table:
    """The rows of catalog.`name` with the declared types of its nullable columns; any other column that Arrow
    could only type null (every value None, or every list empty) is text."""
    declared = NULLABLE_CATALOG_COLUMNS.get(name, {})
    for i, field in enumerate(table.schema):
        if field.name in declared:
            table = table.set_column(i, field.name, table.column(i).cast(declared[field.name]))
        elif pa.types.is_null(field.type) or (pa.types.is_list(field.type) and pa.types.is_null(field.type.value_type)):
            wanted = _TEXTS if pa.types.is_list(field.type) else _TEXT
            table = table.set_column(i, field.name, table.column(i).cast(wanted))
    return table


def load_catalog_tables(con: duckdb.DuckDBPyConnection, catalog: Catalog) -> None:
    """Replace catalog.* with the YAML catalogs as this run read them."""
    accs = catalog.accelerators.accelerators
    tables: dict[str, list[dict]] = {
        "accelerators": [
            {
                "accelerator_id": acc_id,
                "name": a.name,
                "family": a.family,
                "vendor": a.vendor,
                "memory_gb": a.memory_gb.value,
                "memory_bandwidth_tbps": a.memory_bandwidth_tbps.value,
                "tdp_w": a.tdp_w.value,
                **{f"peak_tflops_{p}": (a.peak_tflops[p].value if p in a.peak_tflops else None)
                   for p in PEAK_TFLOPS_PRECISIONS},
            }
            for acc_id, a in accs.items()
        ],
        "accelerator_aliases": [
            {"accelerator_id": acc_id, "alias": alias, "alias_key": normalise_alias(alias)}
            for acc_id, a in accs.items()
            for alias in a.aliases
        ],
        "instances": [
            {
                "cloud": i.cloud,
                "instance_type": i.instance_type,
                "accelerator_id": i.accelerator,
                "accelerator_count": i.accelerator_count,
                "vcpu": i.vcpu,
                "memory_gib": i.memory_gib,
            }
            for i in catalog.instances.instances
        ],
        "instance_price_components": [
            {"cloud": i.cloud, "instance_type": i.instance_type,
             "sku_description_prefix": c.sku_description_prefix, "quantity": c.quantity}
            for i in catalog.instances.instances
            for c in i.price_components
        ],
        "models": [
            {"model_id": m_id, "name": m.name, "params": m.params, "active_params": m.active_params,
             "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads, "head_dim": m.head_dim}
            for m_id, m in catalog.models.models.items()
        ],
        "workloads": [
            {
                "workload_id": w_id,
                "kind": w.kind,
                "title": w.title,
                "description": w.description,
                "model_id": w.model,
                "benchmark_suite": w.benchmark.suite if w.benchmark else None,
                "benchmark_task": w.benchmark.task if w.benchmark else None,
                "benchmark_scenario": getattr(w.benchmark, "scenario", None),
                "benchmark_divisions": [d.casefold() for d in w.benchmark.divisions] if w.benchmark else None,
                "benchmark_suites": ([x.casefold() for x in w.benchmark.suites]
                                     if w.benchmark and hasattr(w.benchmark, "suites") else None),
                "benchmark_availabilities": ([a.casefold() for a in w.benchmark.availabilities]
                                             if w.benchmark else None),
                "tokens": getattr(w, "tokens", None),
                "training_precision": getattr(w, "precision", None),
                "state_bytes_per_param": getattr(w, "state_bytes_per_param", None),
                "training_chips": getattr(w, "chips", None),
                "deadline_hours": getattr(w, "deadline_hours", None),
                "mfu": getattr(w, "mfu", None),
                "accuracy_target_pct": getattr(w, "accuracy_target_pct", None),
                "input_tokens": getattr(w, "input_tokens", None),
                "output_tokens": getattr(w, "output_tokens", None),
                "is_offline": w.kind == "inference" and w.slo == "offline",
                "slo_ttft_ms": None if w.kind == "training" or w.slo == "offline" else w.slo.ttft_ms,
                "slo_tpot_ms": None if w.kind == "training" or w.slo == "offline" else w.slo.tpot_ms,
                "mean_requests_per_s": w.traffic.mean_requests_per_s if getattr(w, "traffic", None) else None,
                "peak_factor": w.traffic.peak_factor if getattr(w, "traffic", None) else None,
                "success_rate": getattr(w, "success_rate", None),
                "months": getattr(w, "months", None),
                "trained_by": getattr(w, "trained_by", None),
                "max_instances_per_replica": getattr(w, "max_instances_per_replica", None),
                "pricing_terms": list(w.pricing_terms),
            }
            for w_id, w in catalog.workloads.workloads.items()
        ],
        "workload_precisions": [
            {"workload_id": w_id, "precision": p}
            for w_id, w in catalog.workloads.workloads.items()
            for p in getattr(w, "precisions", [])
        ],
        "family_defaults": [
            {"family": family, **d.model_dump()} for family, d in catalog.accelerators.family_defaults.items()
        ],
        "pricing_terms": [
            {"pricing_term": term, **t.model_dump()} for term, t in catalog.instances.pricing_terms.items()
        ],
        "mlperf_training_tasks": [
            {"task": task, **t.model_dump()} for task, t in catalog.models.mlperf_training_tasks.items()
        ],
        "settings": [{"price_move_threshold": catalog.sources.price_move_threshold}],
        "sources": [
            {"source_id": s_id, "kind": s.kind, "enabled": s.enabled, "description": s.description,
             "path": f.path, "data_as_of": f.as_of, "source": f.source}
            for s_id, s in catalog.sources.sources.items()
            for f in s.files
        ],
    }
    # tables a catalog may leave empty still need their columns for the SQL models
    prototypes = {
        "workload_precisions": {"workload_id": "", "precision": ""},
        "mlperf_training_tasks": {"task": "", "model": "", "sequence_length": 0, "tokens_per_sample": 0.0,
                                  "flops_per_token": 0.0, "note": ""},
        "instance_price_components": {"cloud": "", "instance_type": "", "sku_description_prefix": "", "quantity": 0.0},
        "accelerator_aliases": {"accelerator_id": "", "alias": "", "alias_key": ""},
        # a catalog whose sources are all live-only declares no files
        "sources": {"source_id": "", "kind": "", "enabled": True, "description": "", "path": "",
                    "data_as_of": dt.date(2000, 1, 1), "source": ""},
    }
    for name, rows in tables.items():
        con.execute(f"drop table if exists catalog.{name}")
        empty = not rows
        if empty:
            if name not in prototypes:
                raise ValueError(f"catalog table {name} would be empty")
            rows = [prototypes[name]]
        con.register("_catalog_rows", typed_catalog_table(name, pa.Table.from_pylist(rows)))
        con.execute(f"create table catalog.{name} as select * from _catalog_rows where {'false' if empty else 'true'}")
        con.unregister("_catalog_rows")


_ARROW_TYPES = {"VARCHAR": pa.string(), "DOUBLE": pa.float64(), "INTEGER": pa.int32(), "BIGINT": pa.int64(),
                "DATE": pa.date32(), "BOOLEAN": pa.bool_(), "TIMESTAMP": pa.timestamp("us")}


def _as_text(value):
    """A value for a text column: a number or a flag that a source wrote where text belongs is kept as its text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list)) else str(value)


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Append rows to `table` by column name, typed as the table's columns; columns the rows lack are left null.

    A value that cannot take its column's type raises pyarrow.ArrowInvalid naming the column: the caller decides
    whether that fails one source (the run goes on) or the run.
    """
    if not rows:
        return
    schema_name, _, table_name = table.rpartition(".")
    types = dict(con.execute("select column_name, data_type from information_schema.columns "
                             "where table_schema = ? and table_name = ?", [schema_name or "main", table_name]).fetchall())
    names = list(dict.fromkeys(key for row in rows for key in row))
    unknown = [n for n in names if n not in types]
    if unknown:
        raise KeyError(f"{table}: no column(s) {', '.join(unknown)}")
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        arrow_type = _ARROW_TYPES.get(types[name])
        if arrow_type == pa.string():
            values = [_as_text(v) for v in values]
        elif arrow_type in (pa.int32(), pa.int64()):
            bad = next((v for v in values if isinstance(v, float) and not v.is_integer()), None)
            if bad is not None:
                raise pa.ArrowInvalid(f"{table}.{name}: {bad!r} is not a whole number")
        try:
            columns[name] = pa.array(values, type=arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise pa.ArrowInvalid(f"{table}.{name}: a value is not a {types[name]}: {exc}") from None
    con.register("_rows", pa.table(columns))
    try:
        con.execute(f"insert into {table} by name select * from _rows")
    finally:
        con.unregister("_rows")


def clear_as_of(con: duckdb.DuckDBPyConnection, as_of, keep_sources: set[str] = frozenset()) -> None:
    """Re-running an as-of date replaces that date's rows instead of duplicating them.

    Landed rows of `keep_sources` (stale this run) stay: they may be the last good data the run falls back on.
    """
    keep = sorted(keep_sources) or [""]
    for table in [f"raw.{t}" for t in RAW_TABLES]:
        con.execute(f"delete from {table} where as_of = ? and source_id not in (select unnest(?))", [as_of, keep])
    for table in ["ops.source_loads", "ops.quarantine", "ops.runs"]:
        con.execute(f"delete from {table} where as_of = ?", [as_of])
    existing = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts' and table_type = 'BASE TABLE'"
    ).fetchall()}
    for table in existing:
        con.execute(f"delete from marts.{table} where as_of = ?", [as_of])
