"""The DuckDB warehouse file: schema, catalog tables and landing (building aside and publishing: flows/publishing.py
and flows/publish_journal.py)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow as pa

from flows import duckdb_settings, relations
from flows.catalog_models import PEAK_TFLOPS_PRECISIONS, Catalog
from flows.names import normalise_alias
from flows.paths import SQL_DIR

# DuckDB 1.x clients (analysts' CLIs, BI drivers) can open files written with this storage version (checked with 1.1.3).
STORAGE_COMPATIBILITY = {"storage_compatibility_version": "v1.0.0"}
RAW_TABLES = ("aws_pricing", "aws_spot", "azure_retail", "gcp_billing", "price_sheet", "mlperf_inference", "mlperf_training",
              "benchmark_runs", "model_api_prices", "instance_types")


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    path.parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(path), config=duckdb_settings.config(**STORAGE_COMPATIBILITY))


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One transaction: committed when the block ends, rolled back when it raises (a commit that failed has ended it
    already)."""
    con.begin()
    try:
        yield con
        con.commit()
    except BaseException:
        with contextlib.suppress(duckdb.TransactionException):
            con.rollback()
        raise


# Connections a step left open for the next step that writes the same file (`hand_on`, `connect_handed_on`): a run's
# land task hands its connection to the build, which checkpoints once for both. Closing it would checkpoint the landed
# rows, and the build's new connection would read the file back: 0.065 s of every run, measured.
_HANDED_ON: dict[Path, duckdb.DuckDBPyConnection] = {}
_HANDED_ON_LOCK = threading.Lock()


def hand_on(path: Path, con: duckdb.DuckDBPyConnection) -> None:
    """Leave `con` (open on `path`) for the next `connect_handed_on(path)`; one handed-on connection a file."""
    with _HANDED_ON_LOCK:
        if path in _HANDED_ON:
            raise RuntimeError(f"{path}: a connection was already handed on and not taken")
        _HANDED_ON[path] = con


def connect_handed_on(path: Path) -> duckdb.DuckDBPyConnection:
    """The connection handed on for `path`, if one was (the caller closes it), else a new one."""
    with _HANDED_ON_LOCK:
        con = _HANDED_ON.pop(path, None)
    return con if con is not None else connect(path)


def close_handed_on(path: Path) -> None:
    """Close a connection handed on for `path` and never taken (the step after it did not run)."""
    with _HANDED_ON_LOCK:
        con = _HANDED_ON.pop(path, None)
    if con is not None:
        con.close()


def connect_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), read_only=True, config=duckdb_settings.config())


def fetch_dicts(con: duckdb.DuckDBPyConnection, query: str, params: list | dict | None = None) -> list[dict]:
    """Rows of a query as dicts keyed by column name (on a cursor of its own, so no result is left open)."""
    cursor = con.cursor()
    result = cursor.execute(query, params or [])
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def apply_ddl(con: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR) -> None:
    """Create schemas and raw/ops tables, add the columns a newer DDL gained, then (re)define the cost macros.

    A warehouse built by an older version keeps its rows: a new column is added and reads null for them.

    One transaction: all of it or nothing, and one commit rather than one a statement (the ~60 macros committed one
    at a time took ~47 ms of every run's landing, at once ~21 ms, measured on the embedded snapshot's warehouse).
    """
    ddl = _ddl_texts(sql_dir)
    macros = (sql_dir / "macros.sql").read_text()
    with transaction(con):
        for text in ddl:
            con.execute(text)
        for (schema, table), wanted in _declared(ddl).items():
            have = relations.columns(con, schema, table)
            for column, data_type in wanted.items():
                if column not in have:
                    con.execute(f'alter table {schema}.{table} add column "{column}" {data_type}')
        con.execute(macros)


def _ddl_texts(sql_dir: Path) -> tuple[str, ...]:
    return tuple(path.read_text() for path in sorted((sql_dir / "raw").glob("*.sql")))


@lru_cache(maxsize=8)
def _declared(ddl: tuple[str, ...]) -> dict[tuple[str, str], dict[str, str]]:
    """(schema, table) -> its columns (name -> DuckDB type, in order), for the raw and ops tables as the DDL texts
    `ddl` declare them: applied to an empty in-memory database, once a process for the same texts (a run applies
    them once, and types every fetched batch by them; `read_declared_tables` reads them ahead). Read-only: the dicts
    are shared."""
    scratch = duckdb.connect(config=duckdb_settings.config())
    try:
        for text in ddl:
            scratch.execute(text)
        found: dict[tuple[str, str], dict[str, str]] = {}
        for schema, table, column, data_type in scratch.execute(
                "select table_schema, table_name, column_name, data_type from information_schema.columns "
                "where table_schema in ('raw', 'ops') order by table_schema, table_name, ordinal_position").fetchall():
            found.setdefault((schema, table), {})[column] = data_type
        return found
    finally:
        scratch.close()


_DOUBLE, _BIGINT, _TEXT, _TEXTS = pa.float64(), pa.int64(), pa.string(), pa.list_(pa.string())
# Catalog columns that can be null in every row (nobody published an FP16 peak; a catalog of training workloads
# only has no SLO): their types, the ones the values get when there are some, so a column is never typed NULL.
NULLABLE_CATALOG_COLUMNS: dict[str, dict[str, pa.DataType]] = {
    "accelerators": {"memory_gb": _DOUBLE, "memory_bandwidth_tbps": _DOUBLE, "tdp_w": _DOUBLE, "link_gb_per_s": _DOUBLE,
                     **{f"peak_tflops_{p}": _DOUBLE for p in PEAK_TFLOPS_PRECISIONS}},
    "instances": {"accelerator_id": _TEXT, "accelerator_count": _BIGINT, "vcpu": _BIGINT, "memory_gib": _DOUBLE,
                  "network_gbps": _DOUBLE, "correction": _TEXT, "note": _TEXT},
    "accelerator_api_names": {"memory_mib": _BIGINT},
    "models": {"active_params": _DOUBLE},
    "mlperf_training_tasks": {"sequence_length": _BIGINT, "tokens_per_sample": _DOUBLE, "flops_per_token": _DOUBLE,
                              "note": _TEXT},
    "mlperf_inference_tasks": {"ttft_ms": _DOUBLE, "tpot_ms": _DOUBLE},
    "workloads": {
        "benchmark_suite": _TEXT, "benchmark_task": _TEXT, "benchmark_scenario": _TEXT,
        "benchmark_divisions": _TEXTS, "benchmark_suites": _TEXTS, "benchmark_availabilities": _TEXTS,
        "tokens": _DOUBLE, "training_precision": _TEXT, "state_bytes_per_param": _DOUBLE, "training_chips": _BIGINT,
        "deadline_hours": _DOUBLE, "global_batch_tokens": _DOUBLE,
        "checkpoint_interval_hours": _DOUBLE, "mfu": _DOUBLE, "accuracy_target_pct": _DOUBLE, "input_tokens": _BIGINT,
        "output_tokens": _BIGINT, "slo_ttft_ms": _DOUBLE, "slo_tpot_ms": _DOUBLE, "mean_requests_per_s": _DOUBLE,
        "peak_factor": _DOUBLE, "success_rate": _DOUBLE, "months": _DOUBLE, "trained_by": _TEXT,
        "max_instances_per_replica": _BIGINT, "shape_tolerance": _DOUBLE, "pricing_terms": _TEXTS,
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
                "link_gb_per_s": a.link_gb_per_s.value if a.link_gb_per_s else None,
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
                "network_gbps": i.network_gbps,
                "correction": i.correction,
                "note": i.note,
                "source": i.source,
            }
            for i in catalog.instances.instances
        ],
        "accelerator_api_names": [
            {"accelerator_id": acc_id, "cloud": n.cloud, "api_name": n.name, "api_name_key": n.name.casefold(),
             "memory_mib": n.memory_mib}
            for acc_id, a in accs.items()
            for n in a.api_names
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
        # the names hosted model APIs give a catalog model, matched case-insensitively (api_name_key)
        "model_api_names": [
            {"model_id": m_id, "api_name": name, "api_name_key": name.lower()}
            for m_id, m in catalog.models.models.items()
            for name in m.api_names
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
                "global_batch_tokens": getattr(w, "global_batch_tokens", None),
                "checkpoint_interval_hours": getattr(w, "checkpoint_interval_hours", None),
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
                "shape_tolerance": getattr(w, "shape_tolerance", None),
                "pricing_terms": list(w.pricing_terms),
                "objective": w.objective,
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
            {"pricing_term": term, **t.model_dump(exclude={"interruptions_per_instance_month"})}
            for term, t in catalog.instances.pricing_terms.items()
        ],
        "grid_intensity": [
            {"cloud": g.cloud, "region": g.region, "gco2e_per_kwh": g.gco2e_per_kwh, "source": g.source}
            for g in catalog.instances.grid_intensity
        ],
        "interruption_rates": [
            {"pricing_term": term, "cloud": cloud, "per_instance_month": rate.value, "restart_hours": t.restart_hours,
             "source": rate.source, "note": rate.note}
            for term, t in catalog.instances.pricing_terms.items()
            for cloud, rate in t.interruptions_per_instance_month.items()
        ],
        "mlperf_training_tasks": [
            {"task": task, **t.model_dump(exclude={"trained_at"})}
            for task, t in catalog.models.mlperf_training_tasks.items()
        ],
        "mlperf_training_precisions": [
            {"task": task, "submitter": d.submitter, "accelerator_id": d.accelerator, "precision": d.precision,
             "source": d.source}
            for task, t in catalog.models.mlperf_training_tasks.items() for d in t.trained_at
        ],
        "mlperf_inference_tasks": [
            {"task": task, "scenario": scenario, "model": t.model, "input_tokens": t.input_tokens,
             "output_tokens": t.output_tokens, "ttft_ms": bounds.ttft_ms if bounds else None,
             "tpot_ms": bounds.tpot_ms if bounds else None, "source": t.source}
            for task, t in catalog.models.mlperf_inference_tasks.items()
            for scenario, bounds in [("Offline", None), *sorted(t.latency.items())]
        ],
        "settings": [{"price_move_threshold": catalog.sources.price_move_threshold}],
        "sources": [
            {"source_id": s_id, "kind": s.kind, "enabled": s.enabled, "description": s.description,
             "path": f.path, "data_as_of": f.as_of, "source": f.source, "unverified": f.unverified}
            for s_id, s in catalog.sources.sources.items()
            for f in s.files
        ],
    }
    # tables a catalog may leave empty still need their columns for the SQL models
    prototypes = {
        "workload_precisions": {"workload_id": "", "precision": ""},
        "mlperf_training_tasks": {"task": "", "model": "", "sequence_length": 0, "tokens_per_sample": 0.0,
                                  "flops_per_token": 0.0, "note": ""},
        "mlperf_training_precisions": {"task": "", "submitter": "", "accelerator_id": "", "precision": "",
                                       "source": ""},
        "mlperf_inference_tasks": {"task": "", "scenario": "", "model": "", "input_tokens": 0, "output_tokens": 0,
                                   "ttft_ms": 0.0, "tpot_ms": 0.0, "source": ""},
        "grid_intensity": {"cloud": "", "region": "", "gco2e_per_kwh": 0.0, "source": ""},
        "interruption_rates": {"pricing_term": "", "cloud": "", "per_instance_month": 0.0, "restart_hours": 0.0,
                               "source": "", "note": ""},
        "instance_price_components": {"cloud": "", "instance_type": "", "sku_description_prefix": "", "quantity": 0.0},
        "accelerator_aliases": {"accelerator_id": "", "alias": "", "alias_key": ""},
        "model_api_names": {"model_id": "", "api_name": "", "api_name_key": ""},
        "accelerator_api_names": {"accelerator_id": "", "cloud": "", "api_name": "", "api_name_key": "",
                                  "memory_mib": 0},
        # a catalog whose sources are all live-only declares no files
        "sources": {"source_id": "", "kind": "", "enabled": True, "description": "", "path": "",
                    "data_as_of": dt.date(2000, 1, 1), "source": "", "unverified": False},
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


# DuckDB column type -> the Arrow type a batch is typed as for it
ARROW_TYPES = {"VARCHAR": pa.string(), "DOUBLE": pa.float64(), "INTEGER": pa.int32(), "BIGINT": pa.int64(),
                "DATE": pa.date32(), "BOOLEAN": pa.bool_(), "TIMESTAMP": pa.timestamp("us")}


def _as_text(value):
    """A value for a text column: a number or a flag that a source wrote where text belongs is kept as its text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list)) else str(value)


def _refuse_unknown(label: str, types: dict[str, str], names: list[str], loose_prefix: str | None) -> None:
    """KeyError for the columns `types` does not declare (a loose one, `loose_prefix`, aside)."""
    unknown = [n for n in names if n not in types and not (loose_prefix and n.startswith(loose_prefix))]
    if unknown:
        raise KeyError(f"{label}: no column(s) {', '.join(unknown)}")


def typed_table(label: str, types: dict[str, str], rows: list[dict], loose_prefix: str | None = None) -> pa.Table:
    """`rows` as an Arrow table typed as the columns `types` declares (name -> DuckDB type), in the rows' column
    order; a column named with `loose_prefix` (derived, never landed) may be absent from `types` and is inferred.

    A value that cannot take its column's type raises pyarrow.ArrowInvalid naming `label`.column: the caller decides
    whether that fails one source (the run goes on) or the run. An unknown column raises KeyError.
    """
    names = list(dict.fromkeys(key for row in rows for key in row))
    _refuse_unknown(label, types, names, loose_prefix)
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        arrow_type = ARROW_TYPES.get(types.get(name, ""))
        if arrow_type == pa.string():
            values = [_as_text(v) for v in values]
        elif arrow_type in (pa.int32(), pa.int64()):
            bad = next((v for v in values if isinstance(v, float) and not v.is_integer()), None)
            if bad is not None:
                raise pa.ArrowInvalid(f"{label}.{name}: {bad!r} is not a whole number")
        try:
            columns[name] = pa.array(values, type=arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise pa.ArrowInvalid(f"{label}.{name}: a value is not a {types.get(name, 'single type')}: {exc}") from None
    return pa.table(columns)


# The Arrow types typed_arrow takes for each declared type, and casts to it: those whose values typed_table would
# take from the same rows as dicts, unchanged (text of another string layout, a narrower or wider integer, an integer
# where a DOUBLE is declared). Anything else (text where a number or a date belongs, a number where text belongs,
# which typed_table would write as its text) is refused: a source that reads into Arrow gives its declared types.
_TAKEN = {"VARCHAR": (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view),
          "DOUBLE": (pa.types.is_floating, pa.types.is_integer), "INTEGER": (pa.types.is_integer,),
          "BIGINT": (pa.types.is_integer,), "DATE": (pa.types.is_date,), "BOOLEAN": (pa.types.is_boolean,),
          "TIMESTAMP": (pa.types.is_timestamp,)}


def typed_arrow(label: str, types: dict[str, str], data: pa.Table, loose_prefix: str | None = None) -> pa.Table:
    """`data` (rows a source read into Arrow) typed as `typed_table` types the same rows given as dicts: each column
    cast to its declared type (a loose column, `loose_prefix`, kept as it is), one chunk a column, in `data`'s column
    order.

    A column of a type its declared one does not take (`_TAKEN`), or a value that cannot take it (an integer past
    INTEGER's range), raises pyarrow.ArrowInvalid naming `label`.column; an unknown column raises KeyError."""
    _refuse_unknown(label, types, data.column_names, loose_prefix)
    columns = {}
    for name in data.column_names:
        column = data.column(name).combine_chunks()
        arrow_type = ARROW_TYPES.get(types.get(name, ""))
        if arrow_type is not None and column.type != arrow_type:
            if not any(taken(column.type) for taken in _TAKEN[types[name]]):
                raise pa.ArrowInvalid(f"{label}.{name}: a value is not a {types[name]}: the column is {column.type}")
            try:
                column = column.cast(arrow_type)  # a safe cast: nothing truncated or wrapped
            except pa.ArrowInvalid as exc:  # an integer past INTEGER's range, a timestamp finer than microseconds
                raise pa.ArrowInvalid(f"{label}.{name}: a value is not a {types[name]}: {exc}") from None
        columns[name] = column
    return pa.table(columns)


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    """Columns of `table` (schema.name) in the database: name -> DuckDB type, in order."""
    schema_name, _, table_name = table.rpartition(".")
    return relations.columns(con, schema_name or "main", table_name)


# The fetch tasks, each in a thread of its own, ask for their table's types at once: lru_cache alone lets each of
# them build the scratch schema (13 at once took 0.6 s of the run, one 0.04 s, measured); the first builds it.
_RAW_SCHEMA_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _raw_schema() -> dict[str, dict[str, str]]:
    return {table: columns for (schema, table), columns in _declared(_ddl_texts(SQL_DIR)).items() if schema == "raw"}


def read_declared_tables() -> None:
    """Read the tables sql/raw declares now (once a process: what types each fetched batch and what apply_ddl
    compares a warehouse with), e.g. while the run's Prefect server starts, instead of in the first fetch task."""
    with _RAW_SCHEMA_LOCK:
        _raw_schema()


def raw_column_types(table: str) -> dict[str, str]:
    """Columns of raw.`table` as sql/raw declares them (name -> DuckDB type): what a fetched batch is typed as."""
    with _RAW_SCHEMA_LOCK:
        return _raw_schema()[table]


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Append rows to `table` by column name, typed as the table's columns; columns the rows lack are left null.

    A value that cannot take its column's type raises pyarrow.ArrowInvalid naming the column (see typed_table).
    """
    if not rows:
        return
    insert_arrow(con, table, typed_table(table, table_columns(con, table), rows))


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table, constants: dict | None = None) -> None:
    """Append an Arrow table to `table` by column name (DuckDB reads the Arrow buffers: no Python row loop), with
    `constants` (column -> value, e.g. the run id) set on every row."""
    if data.num_rows == 0:
        return
    extra = "".join(f", ${name} as \"{name}\"" for name in constants or {})
    con.register("_rows", data)
    try:
        con.execute(f"insert into {table} by name select *{extra} from _rows", constants or {})
    finally:
        con.unregister("_rows")


# Runs whose landed rows a run of another as-of date reads (it reused them, or ran on them while stale): they stay
# when their own date is re-run. One parameter: the date being cleared.
RUNS_READ_ELSEWHERE = "select used_run_id from ops.source_loads where as_of <> ? and used_run_id is not null"


def clear_other_sources(con: duckdb.DuckDBPyConnection, as_of, keep_sources: set[str]) -> None:
    """Re-running an as-of date replaces that date's rows instead of duplicating them: first, the date's rows of every
    source but `keep_sources` (this run's, and those it may fall back on) go, with their loads and quarantined rows,
    but landed rows a run of another date reads. A run does it before anything reads the warehouse (flows/land.py),
    so that its checks and input digests never read rows it is about to remove: a cold run would not have had them;
    and once landing ends, for a source it replaced but did not fall back on (its load line is gone by then).
    `keep_sources`' landed rows stay until each lands anew: they may be the last good data the run falls back on,
    or the rows it reuses. (The build replaces each mart's rows of the date, or keeps them when the mart's inputs are
    unchanged: transform.py.)"""
    keep = sorted(keep_sources) or [""]
    for table in [f"raw.{t}" for t in RAW_TABLES]:
        con.execute(f"delete from {table} where as_of = ? and source_id not in (select unnest(?)) "
                    f"and run_id not in ({RUNS_READ_ELSEWHERE})", [as_of, keep, as_of])
    for table in ["ops.source_loads", "ops.quarantine"]:
        con.execute(f"delete from {table} where as_of = ? and source_id not in (select unnest(?))", [as_of, keep])


def clear_run_records(con: duckdb.DuckDBPyConnection, as_of) -> None:
    """Then the date's loads, quarantined rows and run, which the run records anew (read what it needs of them first:
    the loads it reuses, its sources' last good ones)."""
    for table in ["ops.source_loads", "ops.quarantine", "ops.runs"]:
        con.execute(f"delete from {table} where as_of = ?", [as_of])
