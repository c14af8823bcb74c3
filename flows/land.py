"""Landing: check each source's batch as a whole, validate its rows at the door, land them or quarantine them, and keep
a source that failed running on its last good data (stale). Reading the sources into batches is
flows/source_batches.py's."""

from __future__ import annotations

import collections
import datetime as dt
import json
import logging
from dataclasses import dataclass, replace

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from flows import chart_workers, checks, data_docs, gx_process, warehouse
from flows.catalog_models import Catalog
from flows.formatting import last_loaded
from flows.reuse import PreviousLoad, input_digests, previous_load
from flows.source_batches import SourceBatch, replaced_batch
from flows.validate import BatchDataError, load_suite_json

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceLoad:
    source_id: str
    table: str
    rows_in: int
    rows_landed: int
    rows_quarantined: int
    status: str = "landed"  # landed | stale
    error: str | None = None
    stale_since: dt.date | None = None  # as-of date of the last good data a stale source runs on
    reused_from: str | None = None  # the run whose validated, landed rows this load reuses (its input is unchanged)


def last_good_load(con: duckdb.DuckDBPyConnection, source_id: str, as_of: dt.date) -> tuple | None:
    """(run id, since, data as-of, rows in) of the latest load dated `as_of` or earlier that landed this source, or
    that ran on such a load's rows while stale: the rows a stale source runs on (a backfill never runs on prices of a
    date after its own), and what the table-level checks compare a new batch with. Found through the lines that use
    it, so that it is still found once a same-date re-run has replaced its own line (a stale re-run of its date).

    Its rows in: as the line says (`used_rows_in`); a line written before that column was kept says it only on the
    landed line itself."""
    rows = con.execute(
        "select l.used_run_id, coalesce(l.stale_since, l.as_of), l.data_as_of, coalesce("
        "  l.used_rows_in, case when l.status = 'landed' then l.rows_in end,"
        "  (select max(g.rows_in) from ops.source_loads g where g.source_id = l.source_id"
        "   and g.used_run_id = l.used_run_id and g.status = 'landed')) "
        "from ops.source_loads l where l.source_id = ? and l.used_run_id is not null and l.as_of <= ? "
        "order by coalesce(l.stale_since, l.as_of) desc, l.as_of desc, l.run_id desc limit 1",
        [source_id, as_of]).fetchall()
    return rows[0] if rows else None


def quarantine_row(tag: dict, batch: SourceBatch, row: dict, expectation: str | None, expectation_type: str,
                   reason: str | None, column: str | None = None, value=None) -> dict:
    """One ops.quarantine row: the rejected source row whole, with what rejected it and why."""
    row_json = row["row_json"] if set(row) == {"row_no", "source_ref", "row_json"} else json.dumps(
        row, default=str, sort_keys=True)  # a batch rejected before it was typed holds its rows as JSON already
    return {**tag, "source_id": batch.source_id, "landed_table": f"raw.{batch.table}", "row_no": row["row_no"],
            "source_ref": row.get("source_ref"), "expectation": expectation, "expectation_type": expectation_type,
            "reason": reason, "column_name": column, "unexpected_value": None if value is None else str(value),
            "row_json": row_json}


MOST_FAILED_NAMED = 3  # the checks an every-row-quarantined source's reason names, those failed most (the rest counted)


class EveryRowQuarantined(ValueError):
    """Every row of a batch failed its checks: the source is stale (it runs on its last good rows) rather than landed
    with none, which would have dropped all its offers from the rankings and passed for a good load. Holds each row's
    ops.quarantine record, with the expectation that rejected it."""

    def __init__(self, reason: str, quarantined: list[dict]) -> None:
        super().__init__(reason)
        self.quarantined = quarantined


def record_stale(con: duckdb.DuckDBPyConnection, batch: SourceBatch, run_id: str, as_of: dt.date,
                 last_good: tuple | None, quarantined: list[dict] | None = None) -> SourceLoad:
    """A source that failed runs on its last good data; ops.source_loads says which, since when and why.

    Rows it did read are kept in ops.quarantine, so that rows in = landed + quarantined holds for stale sources too:
    `quarantined` (each row with the expectation that rejected it) when every row failed its checks, else, for a
    batch a table-level check rejected, each row with that check and the reason.
    """
    used_run_id, stale_since, data_as_of, used_rows_in = last_good if last_good else (None, None, None, None)
    tag = {"run_id": run_id, "as_of": as_of}
    warehouse.insert_rows(con, "ops.quarantine", quarantined if quarantined is not None else [
        quarantine_row(tag, batch, row, batch.rejected_by, "table_level", batch.error)
        for row in (batch.row_dicts() if batch.rejected_by else [])
    ])
    rows_in = batch.rows_in if batch.rejected_by else 0
    warehouse.insert_rows(con, "ops.source_loads", [{
        **tag, "source_id": batch.source_id, "kind": batch.kind,
        "landed_table": f"raw.{batch.table}", "data_as_of": data_as_of, "files": len(batch.files),
        "rows_in": rows_in, "rows_landed": 0, "rows_quarantined": rows_in, "status": "stale", "error": batch.error,
        "used_run_id": used_run_id, "stale_since": stale_since, "used_rows_in": used_rows_in,
    }])
    log.warning("%s is stale: %s; using %s", batch.source_id, batch.error,
                f"the rows of its last good run, the run of {stale_since}" if stale_since else "no data (it never landed)")
    return SourceLoad(batch.source_id, batch.table, rows_in, 0, rows_in, "stale", batch.error, stale_since)


def _validated_data(batch: SourceBatch) -> pa.Table:
    return batch.data if batch.rows_in else pa.table({"row_no": pa.array([], pa.int64())})  # no rows: no columns


def ask_validation(batch: SourceBatch, catalog: Catalog, keep: bool) -> gx_process.Pending:
    """The batch's validation with its table's suite, asked of Great Expectations' process (flows/gx_process.py) and
    not waited for: `land_all` asks for every batch's before it lands the first, so that the process validates the
    next batches while the run lands this one's rows (before, each was asked once the last had landed). With `keep`,
    that process keeps the result for the Data Docs."""
    suite = load_suite_json(catalog.root / "expectations" / f"{batch.table}.json")
    parameters = checks.suite_parameters(catalog)
    # rows landed again: the run draws its charts again, so its chart workers import Matplotlib while GX validates;
    # in the `hweval` command's process, once GX's process is stopped instead (gx_process._release): with both alive
    # at once the run's summed memory peaked here
    if not gx_process.releases_after_site():
        chart_workers.start()
    return gx_process.validate_table_later(_validated_data(batch), suite, parameters, keep=keep)


def land_batch(
    con: duckdb.DuckDBPyConnection,
    batch: SourceBatch,
    run_id: str,
    as_of: dt.date,
    catalog: Catalog,
    validated: list[data_docs.ValidatedBatch] | None = None,
    input_digest: str | None = None,
    asked: gx_process.Pending | None = None,
) -> SourceLoad:
    """Validate a batch with its table's suite; land passing rows in raw.<table>, the rest in ops.quarantine.

    The GX validation result is appended to `validated` (for the run's Data Docs) when given. `asked`: the batch's
    validation, asked ahead (`ask_validation`); else it is asked here.
    """
    outcome = (asked or ask_validation(batch, catalog, keep=validated is not None)).result()
    data = _validated_data(batch)
    tag = {"run_id": run_id, "as_of": as_of}
    failed = pc.is_in(data["row_no"], value_set=pa.array(sorted(outcome.failed_row_nos), data["row_no"].type))
    passed = data.filter(pc.invert(failed))
    # DuckDB reads the passing rows straight from the Arrow buffers
    warehouse.insert_arrow(con, f"raw.{batch.table}",
                           passed.drop_columns([c for c in passed.column_names if c.startswith(checks.CHECK_PREFIX)]),
                           tag)
    by_no = {row["row_no"]: row for row in batch.row_dicts(outcome.failed_row_nos)}
    quarantined = [quarantine_row(tag, batch, by_no[failure.row_no], failure.expectation, failure.expectation_type,
                                  failure.reason, failure.column, failure.value)
                   for failure in outcome.failures]
    if validated is not None and outcome.result is not None:
        validated.append(data_docs.ValidatedBatch(batch.source_id, outcome.result, outcome.suite))
    if batch.rows_in and not passed.num_rows:
        failing = collections.Counter(failure.expectation for failure in outcome.failures).most_common()
        raise EveryRowQuarantined(
            f"every one of its {batch.rows_in} rows was quarantined ("
            + ", ".join(f"{expectation}: {rows}" for expectation, rows in failing[:MOST_FAILED_NAMED])
            + (f", and {len(failing) - MOST_FAILED_NAMED} more checks" if len(failing) > MOST_FAILED_NAMED else "")
            + "): nothing of it can be ranked", quarantined)
    warehouse.insert_rows(con, "ops.quarantine", quarantined)
    load = SourceLoad(batch.source_id, batch.table, batch.rows_in, passed.num_rows, len(outcome.failed_row_nos))
    if load.rows_in != load.rows_landed + load.rows_quarantined:
        raise AssertionError(f"{batch.source_id}: rows in {load.rows_in} != landed + quarantined")
    warehouse.insert_rows(con, "ops.source_loads", [{
        **tag,
        "source_id": batch.source_id,
        "kind": batch.kind,
        "landed_table": f"raw.{batch.table}",
        "data_as_of": batch.data_as_of,
        "files": len(batch.files),
        "rows_in": load.rows_in,
        "rows_landed": load.rows_landed,
        "rows_quarantined": load.rows_quarantined,
        "status": "landed",
        "used_run_id": run_id,
        "used_rows_in": load.rows_in,
        "input_digest": input_digest,
    }])
    log.info("%s: %d rows in, %d landed in raw.%s, %d quarantined",
             batch.source_id, load.rows_in, load.rows_landed, batch.table, load.rows_quarantined)
    return load


def reuse_load(con: duckdb.DuckDBPyConnection, batch: SourceBatch, run_id: str, as_of: dt.date,
               previous: PreviousLoad, quarantined: pa.Table) -> SourceLoad:
    """Land nothing: the batch is the one `previous` validated and landed (same input digest). Its load reads that
    run's rows, and the rows it quarantined are recorded again for this run (`quarantined`, read before this date's
    earlier rows were cleared), so this run's ops tables say what a cold run's would."""
    tag = {"run_id": run_id, "as_of": as_of}
    warehouse.insert_arrow(con, "ops.quarantine", quarantined.drop_columns(["run_id", "as_of"]), tag)
    warehouse.insert_rows(con, "ops.source_loads", [{
        **tag, "source_id": batch.source_id, "kind": batch.kind, "landed_table": f"raw.{batch.table}",
        # the batch's own files and data date, as a cold run records them: a declared file that adds no row changes
        # neither the rows nor their digest, but it is one file more, and its date may be the newest
        "data_as_of": batch.data_as_of, "files": len(batch.files), "rows_in": previous.rows_in,
        "rows_landed": previous.rows_landed, "rows_quarantined": previous.rows_quarantined, "status": "landed",
        "used_run_id": previous.used_run_id, "used_rows_in": previous.rows_in, "input_digest": previous.input_digest,
        "reused_from": previous.used_run_id,  # the run that validated and landed them (a chain of reuses ends there)
    }])
    log.info("%s: unchanged since run %s (input digest %s): reused its %d landed and %d quarantined rows, not "
             "validated again", batch.source_id, previous.used_run_id, (previous.input_digest or "")[:12],
             previous.rows_landed, previous.rows_quarantined)
    return SourceLoad(batch.source_id, batch.table, previous.rows_in, previous.rows_landed, previous.rows_quarantined,
                      reused_from=previous.used_run_id)


def days_stale(load: SourceLoad, as_of: dt.date) -> int | None:
    """Days since a stale source's last good data (None: it never landed); None for a source that landed."""
    if load.status != "stale" or load.stale_since is None:
        return None
    return (as_of - load.stale_since).days


def stale_past_limit(catalog: Catalog, loads: list[SourceLoad], as_of: dt.date) -> list[str]:
    """One line per source stale for longer than its max_stale_days (or never landed): the run must not look fine."""
    lines = []
    for load in loads:
        if load.status != "stale":
            continue
        limit = catalog.sources.sources[load.source_id].stale_limit_days
        days = days_stale(load, as_of)
        if days is None:
            lines.append(f"{load.source_id} has never landed (limit {limit} days): {load.error}")
        elif days > limit:
            lines.append(f"{load.source_id} stale for {days} days, {last_loaded(load.stale_since)} "
                         f"(limit {limit} days): {load.error}")
    return lines


def prepare_warehouse(con: duckdb.DuckDBPyConnection, catalog: Catalog, as_of: dt.date) -> None:
    """The catalog tables, with this as-of date's run records cleared (`warehouse.clear_run_records`), in a warehouse
    whose DDL is applied (`warehouse.apply_ddl`) and whose other sources' rows of the date are gone
    (`warehouse.clear_other_sources`, which `land_all` runs first): one transaction (its ~40 statements committed one
    at a time took 0.084 s, at once 0.065 s, on the embedded snapshot's warehouse)."""
    with warehouse.transaction(con):
        warehouse.clear_run_records(con, as_of)
        warehouse.load_catalog_tables(con, catalog)


# Price tables: the columns that identify one price across runs, and the price column, for the overnight check.
PRICE_KEYS = {
    "aws_pricing": (("sku", "rate_code"), "price_usd"),
    "aws_spot": (("availability_zone", "instance_type", "product_description"), "price_usd"),
    "azure_retail": (("arm_region_name", "meter_id", "product_name", "price_type", "reservation_term"), "retail_price"),
    "gcp_billing": (("sku_id", "region", "start_usage_amount"), "price_usd"),
    "model_api_prices": (("cloud", "region", "sku", "rate_code"), "usd_per_million_tokens"),
}
# ...and the columns that say what a price is for, where its identity (a SKU, a meter) may be renumbered: a feed whose
# prices moved 100x under new SKUs shared only its unchanged prices' identities with the last run, and passed. The
# lowest price of each is compared too.
PRICED_THINGS = {
    "aws_pricing": ("region_code", "instance_type", "operating_system", "license_model", "pre_installed_sw", "tenancy",
                    "capacity_status", "market_option", "term_type", "lease_contract_length", "purchase_option",
                    "offering_class", "unit"),
    "azure_retail": ("arm_region_name", "arm_sku_name", "sku_name", "product_name", "price_type", "reservation_term",
                     "unit_of_measure"),
    "gcp_billing": ("description", "region", "start_usage_amount"),
    "model_api_prices": ("cloud", "region", "api_model", "direction", "inference_type", "feature", "term_type",
                         "product"),
}


def price_change_problem(con: duckdb.DuckDBPyConnection, batch: SourceBatch, factor: float,
                         as_of: dt.date) -> str | None:
    """Whether this batch's prices moved by more than `factor` (up or down, median over the prices it shares with
    the source's last good run dated `as_of` or earlier: a backfill is not judged against a later date's prices): a
    feed that switched units or currency overnight is not trusted as a whole."""
    if batch.table not in PRICE_KEYS:
        return None
    key, price = PRICE_KEYS[batch.table]
    last = last_good_load(con, batch.source_id, as_of)
    if last is None:
        return None
    things = PRICED_THINGS.get(batch.table)
    data = batch.data
    for column in [c for c in dict.fromkeys((*key, *(things or ()), price)) if c not in data.column_names]:
        declared = warehouse.raw_column_types(batch.table)[column]  # a source that never writes it
        data = data.append_column(column, pa.nulls(data.num_rows, warehouse.ARROW_TYPES[declared]))
    con.register("_batch", data)
    try:
        # by each price's identity (its last copy), then by what it prices (the lowest): either moving past the
        # factor is a problem
        comparisons = [(key, "last({price} order by row_no)", "prices shared")]
        if things:
            comparisons.append((things, "min({price})", "priced things (instance or model, region, term ...) shared"))
        for columns, pick, shared_what in comparisons:
            same = " and ".join(f"b.{c} is not distinct from p.{c}" for c in columns)
            grouped = ", ".join(columns)
            [(median, shared)] = con.execute(f"""
                with previous as (
                    select {grouped}, {pick.format(price=price)} as {price} from raw.{batch.table}
                    where source_id = ? and run_id = ? and {price} > 0 group by all
                ), current as (
                    select {grouped}, {pick.format(price=price)} as {price} from _batch where {price} > 0 group by all
                )
                select median(b.{price} / p.{price}), count(*) from current b join previous p on {same}
                """, [batch.source_id, last[0]]).fetchall()
            if shared and (median > factor or median < 1 / factor):
                return (f"prices moved {median:.3g}x (median over {shared} {shared_what} with the last good run), "
                        f"more than the {factor:g}x sources.yaml allows (max_price_change): a unit or currency "
                        "change?")
    finally:
        con.unregister("_batch")
    return None


def table_level_problem(con: duckdb.DuckDBPyConnection, catalog: Catalog, batch: SourceBatch, as_of: dt.date,
                        compare: bool = True) -> tuple[str, str] | None:
    """(check, why) when a batch that parsed cannot be trusted as a whole: no rows, far fewer rows than its last
    good run (dated `as_of` or earlier: a backfill is not compared with a later date's load), prices that moved by
    more than the declared factor overnight; else None. `compare=False`: the batch is its source's last landed batch
    again, so the two comparisons with that load are not made (they would compare it with itself)."""
    if not batch.rows_in:
        return "no_rows", "no rows: the source returned nothing"
    if not compare:
        return None
    last = last_good_load(con, batch.source_id, as_of)
    last_rows = last[3] if last else None
    source = catalog.sources.sources[batch.source_id]
    allowed = source.max_row_drop
    if last_rows and batch.rows_in < last_rows * (1 - allowed):
        return "row_count_drop", (
            f"{batch.rows_in} rows, {1 - batch.rows_in / last_rows:.0%} fewer than the last good run's "
            f"{last_rows} (more than the {allowed:.0%} drop sources.yaml allows; if the change is real, "
            f"`hweval run --accept-changes {batch.source_id}` lands it)")
    if source.max_price_change is not None:
        problem = price_change_problem(con, batch, source.max_price_change, as_of)
        if problem:
            return "price_change", problem
    return None


# Errors in a batch's data that fail that source for the run (it is stale) rather than the run: a value that cannot
# take its column's type, a row the database rejects. A broken suite or catalog, a full disk, a bug: the run fails.
BATCH_DATA_ERRORS = (pa.ArrowException, duckdb.ConversionException, duckdb.InvalidInputException,
                     duckdb.ConstraintException, duckdb.OutOfRangeException)


def land_all(con: duckdb.DuckDBPyConnection, catalog: Catalog, batches: list[SourceBatch], run_id: str,
             as_of: dt.date, validated: list[data_docs.ValidatedBatch] | None = None,
             accept_changes: frozenset[str] = frozenset(),
             fallbacks: dict[str, list[str]] | None = None) -> list[SourceLoad]:
    """Land every batch that was read and passes the table-level checks; the rest run on their last good data.

    Each batch lands in its own transaction: a batch whose data the database rejects is rolled back, whole, and
    its source is stale. `accept_changes` names sources whose table-level checks are skipped this run (a real
    change in a feed that would otherwise stay stale). `fallbacks` maps a source given on the command line to the
    sources it replaces this run (`replaced_sources`): if it is stale with no last good data of its own, the run
    uses their last good rows instead, and they are listed as stale. A replaced source the run does not fall back on
    loses its rows of the date (but those a run of another date reads), as a cold run never had them.
    """
    warehouse.apply_ddl(con)
    checks.check_catalog(catalog)
    run_ids = {b.source_id for b in batches}
    fallbacks = {s_id: replaced for s_id, replaced in (fallbacks or {}).items() if s_id in run_ids}
    # found before this date's records are cleared: on a same-date re-run the earlier run may be the last good one
    last_good = {s_id: last_good_load(con, s_id, as_of)
                 for s_id in run_ids.union(*fallbacks.values())}
    # a source with last good data of its own never falls back on those it replaces (below): they are not kept
    fallbacks = {s_id: replaced for s_id, replaced in fallbacks.items() if last_good[s_id] is None}
    fallback_ids = {other_id for replaced in fallbacks.values() for other_id in replaced}
    # every source of this run keeps its same-date rows until its own batch replaces them, in its transaction, and
    # each it may fall back on until landing ends (below). The date's rows of every other source go now, before
    # anything reads the warehouse: a same-date re-run's cross-source checks and input digests must not read rows
    # this run removes (a run without aws_pricing checked its spot prices against the earlier run's on-demand prices,
    # then cleared them; one whose offer file failed, against the replaced Price List's, then cleared them too)
    kept = run_ids | fallback_ids
    with warehouse.transaction(con):
        warehouse.clear_other_sources(con, as_of, kept)
    # a batch whose input digest over the batches as read equals its source's last landed load's is that batch again
    as_read = input_digests(con, catalog, batches, as_of)
    previous = {s_id: previous_load(con, s_id, as_of) for s_id in as_read}
    again = {s_id for s_id, digest in as_read.items()
             if previous[s_id] is not None and previous[s_id].input_digest == digest}
    checked = []
    for b in batches:
        problem = None if b.error or b.source_id in accept_changes else table_level_problem(
            con, catalog, b, as_of, compare=b.source_id not in again)
        checked.append(replace(b, rejected_by=problem[0], error=problem[1]) if problem else b)
    # a batch whose input digest (over the batches that passed the table-level checks: what the row checks read)
    # equals its source's last landed load is not validated or landed again
    digests = input_digests(con, catalog, checked, as_of) if any(c.rejected_by for c in checked) else as_read
    reused = {s_id: previous[s_id] for s_id, digest in digests.items()
              if previous[s_id] is not None and previous[s_id].input_digest == digest}
    # read before this date's rows are cleared: a same-date re-run reuses the earlier run's
    reused_quarantine = {s_id: con.sql("select * from ops.quarantine where run_id = $run and source_id = $source",
                                       params={"run": load.run_id, "source": s_id}).to_arrow_table()
                         for s_id, load in reused.items()}
    readable = [b for b in checked if not b.error]
    to_check = [b for b in readable if b.source_id not in reused]  # a reused batch is still read by their checks
    with_checks = dict(zip([id(b) for b in to_check], checks.add_check_columns(to_check, catalog, con, readable, as_of),
                           strict=True))
    checked = [with_checks.get(id(b), b) for b in checked]
    prepare_warehouse(con, catalog, as_of)
    # every batch to land is asked of Great Expectations' process now: it validates the next ones while each lands
    asked = {id(b): ask_validation(b, catalog, keep=validated is not None)
             for b in checked if not b.error and b.source_id not in reused}
    loads = []
    for b in checked:
        if b.error:
            loads.append(record_stale(con, b, run_id, as_of, last_good[b.source_id]))
            continue
        # this date's earlier rows of the source, unless a run of another date reads them (or this run reuses them)
        keep_run = reused[b.source_id].used_run_id if b.source_id in reused else ""
        earlier = (f"delete from raw.{b.table} where as_of = ? and source_id = ? and run_id <> ? "
                   f"and run_id not in ({warehouse.RUNS_READ_ELSEWHERE})")
        delete_earlier = (earlier, [as_of, b.source_id, keep_run, as_of])
        if b.source_id in reused:  # in a transaction of its own too: its earlier rows go as its reuse is recorded
            with warehouse.transaction(con):
                con.execute(*delete_earlier)
                loads.append(reuse_load(con, b, run_id, as_of, reused[b.source_id], reused_quarantine[b.source_id]))
            continue
        try:
            # the batch's rows and the delete of its earlier same-date rows, committed or undone together; a row the
            # database refuses only as the transaction commits is the batch's data too
            with warehouse.transaction(con):
                con.execute(*delete_earlier)
                load = land_batch(con, b, run_id, as_of, catalog, validated, digests.get(b.source_id),
                                  asked.pop(id(b)))
        except EveryRowQuarantined as exc:  # the batch's transaction is undone: its rows are quarantined here
            failed = replace(b, rejected_by="every_row_quarantined", error=str(exc))
            loads.append(record_stale(con, failed, run_id, as_of, last_good[b.source_id], exc.quarantined))
            continue
        except (*BATCH_DATA_ERRORS, BatchDataError) as exc:
            failed = replace(b, rejected_by="landing_rejected",
                             error=f"{type(exc).__name__} while landing: {exc}")
            loads.append(record_stale(con, failed, run_id, as_of, last_good[b.source_id]))
            continue
        loads.append(load)
    for load in [load for load in loads if load.source_id in fallbacks]:
        if load.status == "stale" and last_good[load.source_id] is None:
            loads += [record_stale(con, replaced_batch(catalog, other_id, load.source_id), run_id, as_of,
                                   last_good[other_id])
                      for other_id in fallbacks[load.source_id] if last_good[other_id] is not None]
    # a fallback the run did not fall back on (the source given landed) loses its rows of this date now, as its load
    # line went with the date's records: a cold run would not have had them. Nothing read them: the spot check reads
    # the warehouse's prices only with no Price List batch to read, and then the source given, with no last good
    # rows of its own, falls back
    used = fallback_ids & {load.source_id for load in loads}
    if used != fallback_ids:
        with warehouse.transaction(con):
            warehouse.clear_other_sources(con, as_of, run_ids | used)
    return loads
