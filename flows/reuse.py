"""What a run can reuse instead of doing again: a source's batch is identified by a digest of everything validating
and landing it depends on; a batch whose digest equals its source's last landed load reuses that load's rows
(flows/land.py: reuse_load). The SQL build's own reuse is in flows/transform.py."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from flows import checks
from flows.catalog_models import Catalog

if TYPE_CHECKING:
    from flows.source_batches import SourceBatch


def arrow_digest(data: pa.Table) -> str:
    """sha256 of an Arrow table as an IPC stream: equal for equal columns, types and values."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    return hashlib.sha256(sink.getvalue()).hexdigest()


# The code that decides what landing does with a batch's rows: a change to it re-validates every source. It includes
# source_batches.py, whose SourceBatch.of_rows types a batch's rows (or rejects the batch whole) before landing, and
# gx_process.py, which hands Great Expectations the batch as the frame it validates.
LANDING_CODE = tuple(Path(__file__).with_name(name) for name in (
    "land.py", "source_batches.py", "reuse.py", "checks.py", "validate.py", "gx_process.py", "warehouse.py", "names.py"))


def input_digests(con: duckdb.DuckDBPyConnection, catalog: Catalog, batches: list[SourceBatch],
                  as_of: dt.date) -> dict[str, str]:
    """source_id -> digest of everything validating and landing its batch depends on: the rows as read (with the
    `source_ref` and `data_as_of` they carry: the same file read from another folder or under another date is
    another batch), the table's suite, what of the catalog the expectations and checks read (checks.catalog_inputs:
    a catalog edit elsewhere re-validates nothing), the landing code and the Great
    Expectations version, and the batches its multi-row checks read (checks.CHECK_INPUTS). Batches that were not
    read, or that a table-level check rejected, have none."""
    from importlib.metadata import version

    code = hashlib.sha256(b"".join(path.read_bytes() for path in LANDING_CODE)
                          + version("great-expectations").encode()).hexdigest()
    own = {b.source_id: b.data_digest for b in batches if b.data_digest and not b.error}
    digests = {}
    tables: dict[str, tuple[str, str]] = {}  # once a table in this call, not once a batch (instance_types: one a cloud)
    for b in batches:
        if b.source_id not in own:
            continue
        if b.table not in tables:
            tables[b.table] = _table_parts(catalog, b.table)
        parts = [own[b.source_id], b.table, code, *tables[b.table]]
        for table in checks.CHECK_INPUTS.get(b.table, ()):
            read = sorted(own[o.source_id] for o in batches if o.table == table and o.source_id in own)
            parts.append(f"{table}:{','.join(read)}" if read else
                         f"{table} from the warehouse:{checks.warehouse_inputs_digest(con, table, as_of)}")
        digests[b.source_id] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return digests


def _table_parts(catalog: Catalog, table: str) -> tuple[str, str]:
    """A table's part of its batches' input digests: what of the catalog validating it reads, and its suite's bytes."""
    suite = catalog.root / "expectations" / f"{table}.json"
    suite_bytes = suite.read_bytes() if suite.is_file() else None
    return (hashlib.sha256(checks.catalog_inputs(catalog, table, _suite_json(suite_bytes)).encode()).hexdigest(),
            hashlib.sha256(suite_bytes).hexdigest() if suite_bytes is not None else "no suite")


def _suite_json(suite: bytes | None) -> object:
    """A suite's JSON for checks.catalog_inputs; None for one that is not JSON (the digest still takes its bytes, and
    validating the batch fails on it, naming the file: flows/validate.py load_suite_json)."""
    try:
        return None if suite is None else json.loads(suite)
    except ValueError:
        return None


@dataclass(frozen=True)
class PreviousLoad:
    """A source's last load that landed: what a batch with the same input digest reuses."""

    run_id: str
    used_run_id: str
    input_digest: str | None
    rows_in: int
    rows_landed: int
    rows_quarantined: int


def previous_load(con: duckdb.DuckDBPyConnection, source_id: str, as_of: dt.date) -> PreviousLoad | None:
    """The source's latest landed load dated `as_of` or earlier, whose landed rows are all still in the warehouse.

    Dated as the table-level checks' last good load is (flows/land.py `last_good_load`): a batch equal to it is not
    compared with it, and reuses its verdict. A backfill whose batch equals a later date's load (one landed with
    --accept-changes, say) is validated and checked as a cold run would be, against its own date's baseline: reusing
    the later load skipped a price check that a cold run fails."""
    found = con.execute(
        "select run_id, used_run_id, input_digest, rows_in, rows_landed, rows_quarantined, "
        "landed_table from ops.source_loads where source_id = ? and status = 'landed' and used_run_id is not null "
        "and as_of <= ? order by as_of desc, run_id desc limit 1", [source_id, as_of]).fetchall()
    if not found:
        return None
    *fields_, table = found[0]
    load = PreviousLoad(*fields_)
    [(rows,)] = con.execute(f"select count(*) from {table} where source_id = ? and run_id = ?",
                            [source_id, load.used_run_id]).fetchall()
    return load if rows == load.rows_landed else None
