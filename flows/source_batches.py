"""Reading the sources: each declared source's rows, from its files or its live API (whole, or in fan-out parts on Dask
workers), as one batch typed as its raw table declares, or the reason the source gave none this run. What becomes of a
batch (checked, validated, landed or quarantined, or its source kept stale) is flows/land.py's."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from flows import checks, read_ahead, warehouse
from flows.catalog_models import Catalog
from flows.redaction import error_text
from flows.reuse import arrow_digest
from flows.sources import (
    SOURCE_KINDS,
    limits_for,
    read_declared_file,
    read_declared_table,
    reads_tables,
    with_data_as_of,
)
from flows.sources._common import SourceLimits
from flows.sources._concurrency import FetchSlots, held

log = logging.getLogger(__name__)


@dataclass
class SourceBatch:
    """What one source produced for its landed table, before validation: its rows as one Arrow table (`data`),
    typed as raw.<table> declares. Tasks hand it on by reference: Prefect does not walk an Arrow table's rows.

    A batch whose values do not take their columns' types is rejected whole (`rejected_by` "landing_rejected"); its
    `data` then holds each row as JSON (`row_no`, `source_ref`, `row_json`) for ops.quarantine.
    """

    source_id: str
    kind: str
    table: str
    files: list[str]
    data_as_of: dt.date | None
    data: pa.Table | None = None
    error: str | None = None  # why the source could not be read this run: it is stale
    rejected_by: str | None = None  # the table-level check that rejected the rows it read (they are quarantined)
    data_digest: str | None = None  # sha256 of `data` as Arrow IPC: the content, whichever file or API it came from

    def __post_init__(self) -> None:
        # the error as the run keeps and shows it (ops.source_loads, every page's banner, the command line), whoever
        # wrote it: a server's words included (a reason phrase of 60,000 characters, an escape sequence); its secrets
        # masked here, once for every place that makes or replaces a batch
        if self.error is not None:
            self.error = error_text(self.error)

    @property
    def rows_in(self) -> int:
        return self.data.num_rows if self.data is not None else 0

    @classmethod
    def of_rows(cls, source_id: str, kind: str, table: str, files: list[str], data_as_of: dt.date | None,
                rows: list[dict]) -> SourceBatch:
        """A batch of `rows` (dicts, as a source module parses them, each with its `row_no`), typed as raw.`table`."""
        try:
            data = warehouse.typed_table(f"raw.{table}", warehouse.raw_column_types(table), rows,
                                         loose_prefix=checks.CHECK_PREFIX)
        except pa.ArrowInvalid as exc:
            return cls(source_id, kind, table, files, data_as_of, _as_json(rows), rejected_by="landing_rejected",
                       error=f"{type(exc).__name__} while landing: {exc}")
        return cls(source_id, kind, table, files, data_as_of, data, data_digest=arrow_digest(data))

    @classmethod
    def of_table(cls, source_id: str, kind: str, table: str, files: list[str], data_as_of: dt.date | None,
                 data: pa.Table) -> SourceBatch:
        """The batch `of_rows` makes of the same rows given as one Arrow table (a source that reads its files into
        Arrow: `sources.reads_tables`), each with its `row_no`: typed column by column, the same table and digest."""
        if not data.num_rows:  # no columns either, as of_rows([]) has none
            return cls.of_rows(source_id, kind, table, files, data_as_of, [])
        try:
            typed = warehouse.typed_arrow(f"raw.{table}", warehouse.raw_column_types(table), data,
                                          loose_prefix=checks.CHECK_PREFIX)
        except pa.ArrowInvalid as exc:
            return cls(source_id, kind, table, files, data_as_of, _as_json(data.to_pylist()),
                       rejected_by="landing_rejected", error=f"{type(exc).__name__} while landing: {exc}")
        return cls(source_id, kind, table, files, data_as_of, typed, data_digest=arrow_digest(typed))

    @classmethod
    def combined(cls, parts: list[SourceBatch]) -> SourceBatch:
        """One source's batch from its fan-out parts (flows/fanout.py), in their order: the batch fetching it whole
        gives, its rows numbered again from 0. A part rejected whole rejects the source's batch, as it would have."""
        first = parts[0]
        data_as_of = max((p.data_as_of for p in parts if p.data_as_of is not None), default=None)
        rejected = next((p for p in parts if p.rejected_by), None)
        if rejected is not None:  # rejected whole, for the reason of the first part rejected, every row kept as JSON
            rows = [json.loads(r["row_json"]) if p.rejected_by else r for p in parts for r in p.row_dicts()]
            as_json = _as_json([row | {"row_no": n} for n, row in enumerate(rows)])
            return cls(first.source_id, first.kind, first.table, first.files, data_as_of, as_json,
                       rejected_by=rejected.rejected_by, error=rejected.error)
        with_rows = [p.data for p in parts if p.rows_in]
        if not with_rows:
            return cls.of_rows(first.source_id, first.kind, first.table, first.files, data_as_of, [])
        data = pa.concat_tables(with_rows).combine_chunks()  # one chunk, as a whole fetch: the same digest
        renumbered = pa.array(range(data.num_rows), data.schema.field("row_no").type)
        data = data.set_column(data.schema.get_field_index("row_no"), "row_no", renumbered)
        return cls(first.source_id, first.kind, first.table, first.files, data_as_of, data,
                   data_digest=arrow_digest(data))

    def row_dicts(self, row_nos=None) -> list[dict]:
        """The batch's rows as dicts (all, or those whose row_no is in `row_nos`): for the few that are quarantined."""
        if not self.rows_in:
            return []
        data = self.data
        if row_nos is not None:
            data = data.filter(pc.is_in(data["row_no"], value_set=pa.array(sorted(row_nos), data["row_no"].type)))
        return data.to_pylist()


def _as_json(rows: list[dict]) -> pa.Table:
    """A rejected batch's rows (each with its `row_no`) as ops.quarantine keeps them: row_no, source_ref, the row as
    JSON."""
    return pa.table({
        "row_no": pa.array([row["row_no"] for row in rows], pa.int64()),
        "source_ref": pa.array([None if row.get("source_ref") is None else str(row["source_ref"]) for row in rows],
                               pa.string()),
        "row_json": pa.array([json.dumps(row, default=str, sort_keys=True) for row in rows], pa.string()),
    })


@dataclass(frozen=True)
class LivePart:
    """One fan-out task's share of a live source (flows/fanout.py): what it needs and nothing more, since Prefect
    walks every task argument (a whole Catalog cost ~0.3 s of CPU a task, which serialised 90 tasks)."""

    source_id: str
    kind: str
    table: str
    options: dict
    limits: SourceLimits


def live_parts(catalog: Catalog, source_id: str, options: list[dict]) -> list[LivePart]:
    source = catalog.sources.sources[source_id]
    limits = limits_for(source, source_id)
    return [LivePart(source_id, source.kind, SOURCE_KINDS[source.kind].TABLE, part, limits) for part in options]


def fetch_live_part(part: LivePart) -> SourceBatch:
    """The rows of one fan-out part, numbered from 0 (SourceBatch.combined numbers the source's rows again)."""
    fetched_on = dt.datetime.now(dt.UTC).date()
    limits = part.limits.started()  # the part's max_fetch_s counts from here, on the machine that fetches it
    module, files = SOURCE_KINDS[part.kind], [f"live {part.kind} API"]
    if reads_tables(part.kind):  # into Arrow, not a dict a row (the offer file)
        data = module.fetch_live_table(dict(part.options), limits=limits, slots=None)
        return SourceBatch.of_table(part.source_id, part.kind, part.table, files, fetched_on,
                                    numbered(with_data_as_of(data, fetched_on), part.source_id))
    rows = module.fetch_live(dict(part.options), limits=limits, slots=None)
    rows = [row | {"data_as_of": fetched_on, "row_no": n, "source_id": part.source_id} for n, row in enumerate(rows)]
    return SourceBatch.of_rows(part.source_id, part.kind, part.table, files, fetched_on, rows)


def numbered(data: pa.Table, source_id: str) -> pa.Table:
    """A source's rows read into Arrow with the last columns a dict row gets: `row_no` (0, 1, ...) and `source_id`."""
    data = data.append_column("row_no", pa.array(range(data.num_rows), pa.int32()))
    return data.append_column("source_id", pa.repeat(pa.scalar(source_id, pa.string()), data.num_rows))


def fetch_source(catalog: Catalog, source_id: str, slots: FetchSlots | None = None) -> SourceBatch:
    """Read one declared source, from its API in live mode or from its files; rows carry where they came from.

    With `slots` (a run's, shared by the sources fetched at once), a live source fetches its regions side by side
    within its cloud's share, and a source read from files holds one slot of it while it reads.
    """
    source = catalog.sources.sources[source_id]
    module = SOURCE_KINDS[source.kind]
    limits = limits_for(source, source_id)
    cloud_slots = slots.of(getattr(module, "CLOUD", None)) if slots else None
    rows: list[dict] = []
    tables: list[pa.Table] = []  # a kind that reads into Arrow: its files' (or its live fetch's) tables, not rows
    arrow = reads_tables(source.kind)
    if source.reads_live(catalog.sources.mode):
        fetched_on = dt.datetime.now(dt.UTC).date()
        log.info("%s: fetching live (%s)", source_id, source.kind)
        if arrow:  # into Arrow, not a dict a row (the offer file)
            tables.append(with_data_as_of(module.fetch_live_table(dict(source.live), limits=limits.started(),
                                                                  slots=cloud_slots), fetched_on))
        else:
            fetched = module.fetch_live(dict(source.live), limits=limits.started(), slots=cloud_slots)
            rows = [row | {"data_as_of": fetched_on} for row in fetched]
        files, data_as_of = [f"live {source.kind} API"], fetched_on
    else:
        with held(cloud_slots):
            for index in range(len(source.files)):
                if arrow:  # the table `hweval run` read while its server started, if it is the same read
                    ahead = read_ahead.take(catalog.root, source, source_id, index)
                    tables.append(ahead if ahead is not None
                                  else read_declared_table(catalog.root, source, source_id, index))
                else:
                    rows.extend(read_declared_file(catalog.root, source, source_id, index))
        files, data_as_of = [f.path for f in source.files], max(f.as_of for f in source.files)
    if tables:
        return SourceBatch.of_table(source_id, source.kind, module.TABLE, files, data_as_of,
                                    numbered(pa.concat_tables(tables), source_id))
    for row_no, row in enumerate(rows):
        row["row_no"] = row_no
        row["source_id"] = source_id
    return SourceBatch.of_rows(source_id, source.kind, module.TABLE, files, data_as_of, rows)


def failed_batch(catalog: Catalog, source_id: str, error: BaseException) -> SourceBatch:
    """What a source that could not be read contributes: no rows, and the reason."""
    source = catalog.sources.sources[source_id]
    return SourceBatch(source_id=source_id, kind=source.kind, table=SOURCE_KINDS[source.kind].TABLE,
                       files=[f.path for f in source.files], data_as_of=None,
                       error=f"{type(error).__name__}: {error}")


def replaced_batch(catalog: Catalog, source_id: str, replaced_by: str) -> SourceBatch:
    """What a source replaced this run by a file given on the command line contributes when that file failed: no
    rows read, and the reason it runs on its last good rows."""
    source = catalog.sources.sources[source_id]
    return SourceBatch(source_id=source_id, kind=source.kind, table=SOURCE_KINDS[source.kind].TABLE,
                       files=[f.path for f in source.files], data_as_of=None,
                       error=f"not read in this run: --source {replaced_by} replaced it and failed")
