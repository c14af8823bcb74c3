"""Checks that need more than one row: columns derived before validation so that row-level expectations can
catch duplicates, spot prices at or above on-demand, accelerator counts that disagree with the catalog, a run's two
throughputs that disagree or an MFU its throughput implies past the chip's peak; and the catalog's own figures checked
against plausible ranges.

Derived columns are named `check_*`: the expectation suites read them, ops.quarantine keeps them in the row it
stores, and they are not landed in raw tables.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from flows import cache
from flows.names import normalise_alias

log = logging.getLogger(__name__)

CHECK_PREFIX = "check_"

# landed table -> the columns that name one row of the source; a second row with the same key is a duplicate.
# benchmark_runs has none: two runs of one setup at one concurrency are two measurements, not one row twice.
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "aws_pricing": ("sku", "offer_term_code", "rate_code"),
    "aws_spot": ("availability_zone", "instance_type", "product_description", "price_timestamp"),
    "azure_retail": ("arm_region_name", "meter_id", "product_name", "price_type", "reservation_term", "sku_id"),
    "gcp_billing": ("sku_id", "region", "start_usage_amount"),
    # term_months too: a 1-year and a 3-year quote for one instance are two offers
    "price_sheet": ("entry_kind", "cloud", "region", "instance_type", "pricing_term", "applies_to", "term_months"),
    "mlperf_inference": ("result_id", "model", "scenario"),
    # details_url too: it names the system description file; two submissions may share a system name
    "mlperf_training": ("system", "benchmark", "submitter", "accelerators_count", "division", "details_url"),
    # a token price: the SKU and its rate (Bedrock rate code; Azure meter, type and tier; Vertex tier) per region
    "model_api_prices": ("cloud", "region", "sku", "rate_code"),
    # a device group of an instance type (or a GCP accelerator type) as one region or zone lists it
    "instance_types": ("cloud", "listing", "region", "zone", "instance_type", "device_kind", "device_name"),
}

# columns that say where a row came from, not what it says: two copies of a row may differ in them
_PROVENANCE = {"row_no", "source_ref", "source_id", "data_as_of"}

# plain Linux on-demand hourly in the AWS Price List (what staging calls is_plain_linux + on_demand + Hrs)
_AWS_PLAIN_LINUX_ON_DEMAND = {
    "operating_system": "Linux", "license_model": "No License required", "pre_installed_sw": "NA",
    "tenancy": "Shared", "capacity_status": "Used", "market_option": "OnDemand", "term_type": "OnDemand",
    "unit": "Hrs",
}
_AWS_SPOT_LINUX = {"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}
_GCP_SPOT_PREFIXES = ("Spot Preemptible ", "Preemptible ")


def _value(value: Any) -> Any:
    """A value as compared: NaN (a missing float) is None."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _present(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """`frame` with every named column it lacks added as nulls (a batch whose source never writes it)."""
    return frame.with_columns(pl.lit(None).alias(c) for c in columns if c not in frame.columns)


def _nan_as_null(frame: pl.DataFrame, columns) -> pl.DataFrame:
    return frame.with_columns(pl.col(c).fill_nan(None) for c in columns if frame.schema[c].is_float())


def _values(frame: pl.DataFrame, pairs: pl.DataFrame, column: str) -> pl.Series:
    """The `column` of `pairs` (row_no, value) lined up with `frame`'s rows (null where a row has none)."""
    joined = frame.select("row_no").join(pairs.select("row_no", column), on="row_no", how="left",
                                         maintain_order="left")
    return joined[column]


# ---------------------------------------------------------------- duplicates
def _where(row: dict) -> str:
    """Where a row is in its file, as the user finds it (its source_ref), else its position in the batch."""
    return row.get("source_ref") or f"row {row['row_no']}"


def duplicate_notes(frame: pl.DataFrame, key: tuple[str, ...]) -> dict[int, str]:
    """row_no -> why it is a duplicate. A later exact copy names the first; copies that disagree all fail.

    The groups are found with a group-by; only rows that share a key are compared in Python (few, when any).
    """
    keyed = _nan_as_null(_present(frame, *key), key).with_row_index("_order")
    groups = (keyed.filter(~pl.all_horizontal(pl.col(c).is_null() for c in key))  # no key at all: duplicates nothing
              .group_by(list(key), maintain_order=True).agg(pl.col("_order"))
              .filter(pl.col("_order").list.len() > 1))
    notes: dict[int, str] = {}
    if groups.is_empty():
        return notes
    columns = [c for c in frame.columns if c not in _PROVENANCE and not c.startswith(CHECK_PREFIX)]
    for order in groups["_order"].to_list():
        members = [frame.row(i, named=True) for i in sorted(order)]
        first = members[0]
        disagree = [c for c in columns if any(_value(r.get(c)) != _value(first.get(c)) for r in members[1:])]
        if disagree:
            text = f"{' and '.join(_where(r) for r in members)} disagree on {', '.join(disagree)}"
            for row in members:
                notes[row["row_no"]] = text
        else:
            for row in members[1:]:
                notes[row["row_no"]] = f"same values as {_where(first)}"
    return notes


# ---------------------------------------------------------------- accelerator counts against the catalog
def _catalog_counts(catalog) -> list[list]:
    """[cloud, instance_type, accelerator count, accelerator family] of each instance type the catalog counts."""
    accelerators = catalog.accelerators.accelerators
    return sorted([i.cloud, i.instance_type, i.accelerator_count,
                   accelerators[i.accelerator].family if i.accelerator in accelerators else ""]
                  for i in catalog.instances.instances if i.accelerator_count is not None)


def listed_counts(frames: Iterable[pl.DataFrame]) -> dict[tuple[str, str], tuple[int, str]]:
    """(cloud, instance_type) -> (device count, "gpu" or the ML ASIC kind) from this run's instance-type listings
    (raw.instance_types batches), where one region lists one whole-number count of one device kind."""
    frames = [_present(f, "cloud", "instance_type", "device_count", "device_kind")
              .select("cloud", "instance_type", pl.col("device_count").cast(pl.Float64), "device_kind")
              for f in frames]
    if not frames:
        return {}
    found = (pl.concat(frames).filter(pl.col("instance_type").is_not_null() & (pl.col("instance_type") != "")
                                      & pl.col("device_count").is_not_nan() & pl.col("device_count").is_not_null()
                                      & pl.col("device_kind").is_not_null() & (pl.col("device_kind") != ""))
             .unique().group_by("cloud", "instance_type").agg(pl.col("device_count"), pl.col("device_kind"))
             .filter(pl.col("device_count").list.len() == 1))
    return {(cloud, instance_type): (int(counts[0]), kinds[0])
            for cloud, instance_type, counts, kinds in found.iter_rows() if float(counts[0]).is_integer()}


def aws_catalog_counts(frame: pl.DataFrame, reads: dict[str, Any],
                       listed: dict[tuple[str, str], tuple[int, str]] | None = None) -> pl.DataFrame:
    """(row_no, check_catalog_accelerator_count): the count the instance carries, written as the Price List writes
    `gpu` (a whole number as text): instances.yaml's where it gives one (it corrects listings: `reads`'
    catalog_counts, catalog_reads), else the instance-type API's (`listed`).

    No check where the row has no whole-number `gpu` (fractional GPUs have an expectation of their own; ML ASIC
    rows may leave it out) or where an ML ASIC instance lists 0 GPUs (true: its chips are not GPUs).
    """
    counts = {**(listed or {}), **{(cloud, t): (n, f) for cloud, t, n, f in reads["catalog_counts"]}}
    known = pl.DataFrame([{"instance_type": t, "count": n, "family": f} for (cloud, t), (n, f) in counts.items()
                          if cloud == "aws"], schema={"instance_type": pl.String, "count": pl.Int64, "family": pl.String})
    gpu = pl.col("gpu").str.strip_chars()
    return (_present(frame, "gpu", "instance_type").select("row_no", "instance_type", pl.col("gpu").cast(pl.String))
            .join(known, on="instance_type", how="inner")
            .filter(gpu.str.contains(r"^[0-9]+$"))
            .filter((gpu.cast(pl.Int64, strict=False) != 0) | (pl.col("family") == "gpu"))
            .select("row_no", pl.when(gpu.cast(pl.Int64, strict=False) == pl.col("count")).then(gpu)  # "08" matches 8
                    .otherwise(pl.col("count").cast(pl.String)).alias("check_catalog_accelerator_count")))


def _listed_quotes(catalog) -> list[dict]:
    """The catalog's count and accelerator id of each instance type it lists with both, as a quote is checked."""
    accelerators = catalog.accelerators.accelerators
    return [{"cloud": i.cloud, "instance_type": i.instance_type,
             "check_catalog_accelerator_count": float(i.accelerator_count), "check_catalog_accelerator": i.accelerator}
            for i in catalog.instances.instances if i.accelerator_count is not None and i.accelerator in accelerators]


def _accelerator_keys(catalog) -> dict[str, str]:
    """A quote's accelerator key (an id or alias, normalised) -> the accelerator id it names."""
    return {normalise_alias(acc_id): acc_id for acc_id in catalog.accelerators.accelerators} | catalog.alias_map()


def price_sheet_catalog_counts(frame: pl.DataFrame, reads: dict[str, Any]) -> pl.DataFrame:
    """(row_no, check_catalog_accelerator_count, check_catalog_accelerator, check_quoted_accelerator) of each quote
    for an instance type catalogs/instances.yaml lists: the catalog's count and accelerator id for its (cloud,
    instance_type), and the accelerator id the quote's own `accelerator` names (an id or alias; null when it names
    none or one the catalog does not know, which accelerator_in_catalog refuses). `reads`: catalog_reads'."""
    known = pl.DataFrame(reads["listed_quotes"],
                         schema={"cloud": pl.String, "instance_type": pl.String,
                                 "check_catalog_accelerator_count": pl.Float64, "check_catalog_accelerator": pl.String})
    ids = reads["accelerator_keys"]
    quoted = pl.col("accelerator_key").cast(pl.String).replace_strict(ids, default=None, return_dtype=pl.String)
    return (_present(frame, "entry_kind", "cloud", "instance_type", "accelerator_key")
            .filter(pl.col("entry_kind") == "quote")
            .join(known, on=["cloud", "instance_type"], how="inner")
            .select("row_no", "check_catalog_accelerator_count", "check_catalog_accelerator",
                    quoted.alias("check_quoted_accelerator")))


# ---------------------------------------------------------------- spot prices against on-demand
def _positive(column: str) -> pl.Expr:
    """The price where it is a positive number, else null (a missing or zero price says nothing)."""
    price = pl.col(column).cast(pl.Float64, strict=False)
    return pl.when(price.is_not_nan() & (price > 0)).then(price).otherwise(None)


def _ends_with(column: str, suffix: str) -> pl.Expr:
    return pl.col(column).cast(pl.String).fill_null("").str.ends_with(suffix)


def azure_is_spot() -> pl.Expr:
    """As staging classifies it: a Consumption row whose skuName or meterName ends in ' Spot'."""
    return (~pl.col("price_type").is_in(["Reservation", "DevTestConsumption"]).fill_null(False)
            & (_ends_with("sku_name", " Spot") | _ends_with("meter_name", " Spot")))


def azure_on_demand(frame: pl.DataFrame, duplicates: Iterable[int] = ()) -> pl.DataFrame:
    """(row_no, check_on_demand_usd_per_hour): a spot row's lowest on-demand price of the same ARM SKU, region,
    product (OS) and unit, but `duplicates` (the row_nos its natural key quarantines)."""
    key = ["arm_sku_name", "arm_region_name", "product_name", "unit_of_measure"]
    frame = _present(frame, *key, "price_type", "sku_name", "meter_name", "retail_price")
    low_priority = _ends_with("sku_name", " Low Priority") | _ends_with("meter_name", " Low Priority")
    on_demand = (_without(frame, duplicates)
                 .filter((pl.col("price_type") == "Consumption") & ~azure_is_spot() & ~low_priority)
                 .group_by(key).agg(_positive("retail_price").min().alias("check_on_demand_usd_per_hour"))
                 .filter(pl.col("check_on_demand_usd_per_hour").is_not_null()))
    return (frame.filter(azure_is_spot()).join(on_demand, on=key, how="inner", nulls_equal=True)
            .select("row_no", "check_on_demand_usd_per_hour"))


def _without(frame: pl.DataFrame, duplicates: Iterable[int]) -> pl.DataFrame:
    """The rows of a batch but `duplicates`, the row_nos its natural key quarantines (copies that disagree, a later
    exact copy; `duplicate_notes`): an on-demand price a spot price is checked against must be one that lands."""
    duplicates = list(duplicates)
    return frame.filter(~pl.col("row_no").is_in(duplicates)) if duplicates else frame


def aws_plain_linux_on_demand(frames: Iterable[pl.DataFrame]) -> dict[tuple[str, str], float]:
    """(region, instance type) -> the lowest plain-Linux on-demand hourly price among Price List rows (but those
    their natural key quarantines)."""
    found = {}
    for frame in frames:
        frame = _present(_without(frame, duplicate_notes(frame, NATURAL_KEYS["aws_pricing"])),
                         *_AWS_PLAIN_LINUX_ON_DEMAND, "region_code", "instance_type", "price_usd")
        plain = frame.filter(pl.all_horizontal(pl.col(c) == v for c, v in _AWS_PLAIN_LINUX_ON_DEMAND.items()))
        for region, instance_type, price in (plain.group_by("region_code", "instance_type")
                                             .agg(_positive("price_usd").min()).iter_rows()):
            if price is not None and ((region, instance_type) not in found or price < found[(region, instance_type)]):
                found[(region, instance_type)] = price
    return found


def warehouse_aws_on_demand(con, as_of: dt.date) -> dict[tuple[str, str], float]:
    """Plain-Linux on-demand prices from the rows each Price List source's latest landed load dated `as_of` or
    earlier reads ({} when none): a backfill's spot prices are not checked against a later date's."""
    where = " and ".join(f"{c} = ?" for c in _AWS_PLAIN_LINUX_ON_DEMAND)
    try:
        found = con.execute(f"""
            with latest as (  -- each source's rows that its latest landed load reads
                select source_id, used_run_id as run_id from ops.source_loads
                where landed_table = 'raw.aws_pricing' and status = 'landed' and used_run_id is not null
                  and as_of <= ?
                qualify row_number() over (partition by source_id order by as_of desc, run_id desc) = 1
            )
            select region_code, instance_type, min(price_usd)
            from raw.aws_pricing semi join latest using (source_id, run_id)
            where {where} and price_usd > 0
            group by region_code, instance_type
        """, [as_of, *_AWS_PLAIN_LINUX_ON_DEMAND.values()]).fetchall()
    except duckdb.Error as exc:  # no warehouse tables yet: nothing to compare with
        log.info("spot check: no landed AWS on-demand prices to compare with (%s)", exc)
        return {}
    return {(region, instance_type): price for region, instance_type, price in found}


def aws_spot_on_demand(frame: pl.DataFrame, on_demand: dict[tuple[str, str], float]) -> pl.DataFrame:
    """(row_no, check_on_demand_usd_per_hour): a Linux spot price's plain on-demand price, same region and type."""
    prices = pl.DataFrame([{"region": r, "instance_type": t, "check_on_demand_usd_per_hour": p}
                           for (r, t), p in on_demand.items()],
                          schema={"region": pl.String, "instance_type": pl.String,
                                  "check_on_demand_usd_per_hour": pl.Float64})
    return (_present(frame, "product_description", "region", "instance_type")
            .filter(pl.col("product_description").is_in(sorted(_AWS_SPOT_LINUX)))
            .join(prices, on=["region", "instance_type"], how="inner")
            .select("row_no", "check_on_demand_usd_per_hour"))


def gcp_on_demand(frame: pl.DataFrame, duplicates: Iterable[int] = ()) -> pl.DataFrame:
    """(row_no, check_on_demand_usd_per_hour): a spot SKU's ("Spot Preemptible X running in R") on-demand price
    ("X running in R"), same region and tier, but `duplicates` (the row_nos its natural key quarantines)."""
    frame = _present(frame, "description", "region", "start_usage_amount", "usage_type", "price_usd")
    key = ["description", "region", "start_usage_amount"]
    on_demand = (_without(frame, duplicates).filter(pl.col("usage_type") == "OnDemand")
                 .group_by(key).agg(_positive("price_usd").min().alias("check_on_demand_usd_per_hour"))
                 .filter(pl.col("check_on_demand_usd_per_hour").is_not_null()))
    description = pl.col("description").cast(pl.String).fill_null("")
    prefix = pl.coalesce([pl.when(description.str.starts_with(p)).then(pl.lit(p)) for p in _GCP_SPOT_PREFIXES])
    spot = (frame.with_columns(prefix.alias("_prefix"))
            .filter(pl.col("_prefix").is_not_null()
                    & (pl.col("usage_type").is_in(["Preemptible"]).fill_null(False) | pl.col("usage_type").is_null()))
            .with_columns(description.str.slice(pl.col("_prefix").str.len_chars()).alias("description")))
    return spot.join(on_demand, on=key, how="inner", nulls_equal=True).select("row_no", "check_on_demand_usd_per_hour")


# ---------------------------------------------------------------- own runs' dates
ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


# days a run's own date may be after its file's as-of date: vLLM dates a result by the machine's local day, a day ahead
# of UTC (where the file's as-of is dated) east of Greenwich in the hours after UTC midnight
RUN_DATE_DAYS_AHEAD = 1


def run_dates(frame: pl.DataFrame) -> pl.DataFrame:
    """(row_no, check_run_date_unreadable, check_latest_run_date) of each run with a `run_date`: that text where it is
    no real YYYY-MM-DD date (2026-13-45, 20261120), else the latest date the run may have, the day after the row's
    data as-of date (RUN_DATE_DAYS_AHEAD; YYYY-MM-DD text, which compares with run_date as dates do)."""
    frame = _present(frame, "run_date", "data_as_of")
    text = pl.col("run_date").cast(pl.String)
    day = pl.when(text.str.contains(ISO_DATE)).then(text.str.to_date("%Y-%m-%d", strict=False))
    return (frame.filter(pl.col("run_date").is_not_null())
            .select("row_no",
                    pl.when(day.is_null()).then(text).alias("check_run_date_unreadable"),
                    pl.when(day.is_not_null()).then(
                        pl.col("data_as_of").cast(pl.Date).dt.offset_by(f"{RUN_DATE_DAYS_AHEAD}d").dt.to_string("%Y-%m-%d"))
                    .alias("check_latest_run_date")))


# days a spot price may take effect after its data's as-of day (price_timestamp_not_after_as_of): a file dated by the
# local day east of UTC holds UTC timestamps of the next day in the hours after midnight, as run_dates allows
SPOT_TIMESTAMP_DAYS_AHEAD = 1
UTC_INSTANT = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"


def spot_timestamps(frame: pl.DataFrame) -> pl.DataFrame:
    """(row_no, check_latest_price_timestamp) of an aws_spot batch: the latest instant each row's price may have
    taken effect, the end of the day SPOT_TIMESTAMP_DAYS_AHEAD after its data_as_of (2026-11-20:
    2026-11-22T00:00:00Z), as text that compares with price_timestamp (YYYY-MM-DDTHH:MM:SSZ) as the instants do;
    none where price_timestamp is no such text (price_timestamp_utc quarantines it)."""
    frame = _present(frame, "price_timestamp", "data_as_of")
    is_instant = pl.col("price_timestamp").cast(pl.String).str.contains(UTC_INSTANT).fill_null(False)
    end_of_day = pl.col("data_as_of").cast(pl.Date).dt.offset_by(f"{1 + SPOT_TIMESTAMP_DAYS_AHEAD}d")
    return frame.select("row_no", pl.when(is_instant).then(end_of_day.dt.to_string("%Y-%m-%dT00:00:00Z"))
                        .alias("check_latest_price_timestamp"))


# ---------------------------------------------------------------- own runs' throughput
# how far a run's tokens_per_s_per_chip x chips may be from its output_tokens_per_s (a share of the latter): a figure
# rounded to 3 significant digits is off by 0.5% at most; staging would otherwise take one and drop the other unseen.
# Besides it, half a token/s a chip: a per-chip figure written as a whole number (38 for 37.5, 21 for 21.4: large
# models on many chips, CPUs) is off by up to that much, which is more than 1% below 50 tokens/s a chip
THROUGHPUT_TOLERANCE = 0.01
PER_CHIP_ROUNDING = 0.5


def _peaks(catalog) -> list[dict]:
    """(accelerator, precision, peak TFLOP/s) as int_accelerator_precisions_listed lists them: an fp16 run without an
    fp16 peak runs at the bf16 one."""
    return [{"accelerator": acc_id, "precision": p, "_peak_tflops": v}
            for acc_id, acc in catalog.accelerators.accelerators.items() for p, v in acc.modelled_peaks().items()]


def _active_params(catalog) -> dict[str, float]:
    """model id -> the parameters a token's FLOPs count: a mixture-of-experts model's active ones, else all."""
    return {m: float(model.active_params or model.params) for m, model in catalog.models.models.items()}


def _workload_flops(catalog) -> list[dict]:
    """A training workload's FLOPs by 6 x N x tokens, N its model's (active) parameters, where it names its tokens."""
    active = _active_params(catalog)
    return [{"workload": w, "_workload_flops": 6 * active[wl.model] * wl.tokens}
            for w, wl in catalog.workloads.workloads.items()
            if wl.kind == "training" and wl.tokens is not None and wl.model in active]


def _shown(figure: pl.Expr) -> pl.Expr:
    """A figure as a message writes it: 8, not 8.0."""
    return figure.cast(pl.String).str.replace(r"\.0$", "")


def run_throughputs(frame: pl.DataFrame, reads: dict[str, Any]) -> pl.DataFrame:
    """(row_no, check_output_tokens_per_s_per_chip, check_throughputs_disagree, check_implied_mfu,
    check_time_implied_mfu) of each run: output_tokens_per_s over its chips; where it also gives tokens_per_s_per_chip
    and the two differ by more than THROUGHPUT_TOLERANCE, both figures worked out; for a training row, the MFU its
    tokens/s per chip (staging's: that column, else output_tokens_per_s over chips) imply by 6 x N at the catalog peak
    of its chip and precision, as int_training_estimates_computed takes it (mfu_from_throughput), N a
    mixture-of-experts model's active parameters (what bounds the MFU at 1; the estimate's own N cancels out of its
    training time); and for an own run of a workload that names its `tokens`, the MFU its time implies: 6 x N x
    tokens over chips x peak x seconds, at the chip's highest listed peak where none is listed for the row's precision
    (a workload without tokens, an MLPerf task alone, or a chip with no peak listed, has no such figure). `reads`:
    catalog_reads' active_params, peaks and workload_flops."""
    frame = _nan_as_null(_present(frame, "kind", "accelerator", "model", "precision", "chips", "output_tokens_per_s",
                                  "tokens_per_s_per_chip", "workload", "time_to_train_minutes"),
                         ["chips", "output_tokens_per_s", "tokens_per_s_per_chip", "time_to_train_minutes"])
    chips, total, per_chip = (pl.col(c).cast(pl.Float64) for c in ("chips", "output_tokens_per_s",
                                                                   "tokens_per_s_per_chip"))
    from_total = pl.when(chips > 0).then(total / chips)
    together = per_chip * chips
    disagree = (total > 0) & ((together - total).abs() > THROUGHPUT_TOLERANCE * total + PER_CHIP_ROUNDING * chips)
    # the FLOPs a token costs: a mixture-of-experts model's active parameters (Mixtral 8x7B: 12.9e9 of 46.7e9), else
    # all of them; by all, a Mixtral run at 27% MFU on an H100 implied more than 1 and was refused
    params = pl.DataFrame([{"model": m, "_params": n} for m, n in reads["active_params"].items()],
                          schema={"model": pl.String, "_params": pl.Float64})
    peaks = pl.DataFrame(reads["peaks"], schema={"accelerator": pl.String, "precision": pl.String,
                                                  "_peak_tflops": pl.Float64})
    implied = 6 * pl.col("_params") * pl.coalesce(per_chip, from_total) / (pl.col("_peak_tflops") * 1e12)
    # a workload's FLOPs by 6 x N x tokens, N its model's (active) parameters: what one completed run of it computes
    workload_flops = pl.DataFrame(reads["workload_flops"], schema={"workload": pl.String, "_workload_flops": pl.Float64})
    seconds = pl.col("time_to_train_minutes").cast(pl.Float64) * 60
    # the peak of the row's precision; where the catalog lists none for it (fp32, or fp4 on an H100), the chip's
    # highest: a looser bound, but a bound (an own run prices its offers as measured whether or not a peak is listed)
    highest = peaks.group_by("accelerator").agg(pl.col("_peak_tflops").max().alias("_highest_peak_tflops"))
    time_implied = pl.when((chips > 0) & (seconds > 0)).then(
        pl.col("_workload_flops")
        / (chips * pl.coalesce("_peak_tflops", "_highest_peak_tflops") * 1e12 * seconds))
    return (frame.with_columns(pl.col("model", "accelerator", "precision", "workload").cast(pl.String))
            .join(params, on="model", how="left").join(peaks, on=["accelerator", "precision"], how="left")
            .join(workload_flops, on="workload", how="left").join(highest, on="accelerator", how="left")
            .select("row_no",
                    from_total.alias("check_output_tokens_per_s_per_chip"),
                    pl.when(disagree).then(pl.format(
                        "tokens_per_s_per_chip {} x {} chips = {} tokens/s, {}x the output_tokens_per_s {}: more than "
                        f"{THROUGHPUT_TOLERANCE:.0%} (and {PER_CHIP_ROUNDING:g} tokens/s a chip) apart",
                        *(_shown(e) for e in (per_chip, chips, together)),
                        _shown((together / total).round(3)), _shown(total))).alias("check_throughputs_disagree"),
                    pl.when(pl.col("kind") == "training").then(implied).alias("check_implied_mfu"),
                    pl.when(pl.col("kind") == "training").then(time_implied).alias("check_time_implied_mfu")))


# ---------------------------------------------------------------- what of the catalog landing reads
def suite_parameters(catalog) -> dict[str, list[str]]:
    """The catalog's lists the table suites compare rows with (`{"$PARAMETER": ...}` in catalogs/expectations)."""
    return {
        "accelerator_alias_keys": sorted(catalog.alias_map()),
        "accelerator_ids": sorted(catalog.accelerators.accelerators),
        "model_ids": sorted(catalog.models.models),
        # a price sheet names its accelerator by id or alias; its quotes' instance types, listed or not
        "accelerator_keys": sorted(_accelerator_keys(catalog)),
        "instance_types": sorted({i.instance_type for i in catalog.instances.instances}),
        # own training runs name the workload they measured
        "workload_ids": sorted(catalog.workloads.workloads),
        "non_training_workload_ids": sorted(w_id for w_id, w in catalog.workloads.workloads.items()
                                            if w.kind != "training"),
    }


# what of the catalog a row check compares rows with, by name (JSON-ready: what a batch's input digest takes)
CATALOG_READERS = {
    "catalog_counts": _catalog_counts,
    "listed_quotes": _listed_quotes,
    "accelerator_keys": _accelerator_keys,
    "active_params": _active_params,
    "peaks": _peaks,
    "workload_flops": _workload_flops,
}
# landed table -> what of the catalog its row checks read (add_check_columns hands aws_catalog_counts,
# price_sheet_catalog_counts and run_throughputs these, never the catalog); the other tables' checks read none of it
CHECK_CATALOG_INPUTS: dict[str, tuple[str, ...]] = {
    "aws_pricing": ("catalog_counts",),
    "price_sheet": ("listed_quotes", "accelerator_keys"),
    "benchmark_runs": ("active_params", "peaks", "workload_flops"),
}


def catalog_reads(catalog, table: str) -> dict[str, Any]:
    """What of the catalog the row checks of `table` compare rows with (CHECK_CATALOG_INPUTS), by name: all they are
    given of it, so that a batch's input digest (catalog_inputs) holds everything its checks read."""
    return {name: CATALOG_READERS[name](catalog) for name in CHECK_CATALOG_INPUTS.get(table, ())}


def suite_parameter_names(suite: object) -> set[str]:
    """The `{"$PARAMETER": name}` names anywhere in a suite's JSON."""
    if isinstance(suite, dict):
        found = {suite["$PARAMETER"]} if isinstance(suite.get("$PARAMETER"), str) else set()
        return found.union(*(suite_parameter_names(value) for value in suite.values()))
    if isinstance(suite, list):
        return set().union(*(suite_parameter_names(value) for value in suite))
    return set()


def catalog_inputs(catalog, table: str, suite: object) -> str:
    """What of the catalog validating a batch of `table` with `suite` (its JSON; None: no suite) reads, as JSON text:
    the suite's parameters it names (suite_parameters) and what the table's row checks compare rows with
    (CHECK_CATALOG_INPUTS). A batch's input digest (flows/reuse.py) takes this, not the whole catalog: an edit of
    anything else re-validates no batch of the table (a workload added re-validates own runs, which name workloads,
    not prices; a workload's deadline or targets, none), and the SQL build rebuilds what reads the edit."""
    parameters = suite_parameters(catalog)
    named = sorted(suite_parameter_names(suite))
    if not set(named) <= parameters.keys():  # GX reads " model_ids" as model_ids: a name not exactly one, every one
        named = sorted(parameters)
    return json.dumps({
        "suite_parameters": {name: parameters.get(name) for name in named},
        **catalog_reads(catalog, table),
    }, sort_keys=True)


# ---------------------------------------------------------------- entry points
# landed table -> the tables whose batches in the same run its check columns read; with none in the run, the spot
# check reads the warehouse's last landed on-demand prices instead (warehouse_inputs_digest)
CHECK_INPUTS: dict[str, tuple[str, ...]] = {"aws_spot": ("aws_pricing",), "aws_pricing": ("instance_types",)}


def warehouse_inputs_digest(con, table: str, as_of: dt.date) -> str:
    """Digest of what the checks read from the warehouse when no batch of `table` is in the run (of `as_of`)."""
    if table == "aws_pricing":
        return hashlib.sha256(repr(sorted(warehouse_aws_on_demand(con, as_of).items())).encode()).hexdigest()
    return "nothing"  # without a listing in the run, the Price List counts are checked against instances.yaml only


def add_check_columns(batches: list, catalog, con, inputs: list | None = None, as_of: dt.date | None = None) -> list:
    """The batches (source_batches.SourceBatch, each with its Arrow `data`) with the `check_*` columns their suites read
    added, computed with polars over the whole batch. `inputs` (default: `batches`) are every batch of the run the
    cross-source checks read (CHECK_INPUTS), including those that are not checked again because they are reused.
    `as_of`: the run's date, whose last landed prices (on or before it) the checks read when no batch gives them."""
    frames = {id(b): pl.from_arrow(b.data) for b in {id(b): b for b in [*batches, *(inputs or [])]}.values()
              if b.data is not None and b.data.num_rows}
    inputs = batches if inputs is None else inputs
    aws_frames = [frames[id(b)] for b in inputs if b.table == "aws_pricing" and id(b) in frames]
    listed = listed_counts(frames[id(b)] for b in inputs if b.table == "instance_types" and id(b) in frames)
    aws_on_demand_prices = None
    out = []
    for batch in batches:
        frame = frames.get(id(batch))
        if frame is None:
            out.append(batch)
            continue
        derived: dict[str, pl.Series] = {}
        key = NATURAL_KEYS.get(batch.table)
        notes: dict[int, str] = {}
        if key:
            notes = duplicate_notes(frame, key)
            derived["check_duplicate_of"] = pl.Series("check_duplicate_of",
                                                      [notes.get(n) for n in frame["row_no"].to_list()],
                                                      dtype=pl.String)
        pairs = None
        reads = catalog_reads(catalog, batch.table)
        if batch.table == "aws_pricing":
            pairs = aws_catalog_counts(frame, reads, listed)
        elif batch.table == "price_sheet":
            pairs = price_sheet_catalog_counts(frame, reads)
        elif batch.table == "azure_retail":
            pairs = azure_on_demand(frame, notes)
        elif batch.table == "gcp_billing":
            pairs = gcp_on_demand(frame, notes)
        elif batch.table == "benchmark_runs":
            pairs = run_dates(frame).join(run_throughputs(frame, reads), on="row_no", how="full", coalesce=True)
        elif batch.table == "aws_spot":
            if aws_on_demand_prices is None:
                aws_on_demand_prices = (aws_plain_linux_on_demand(aws_frames) if aws_frames
                                        else warehouse_aws_on_demand(con, as_of or dt.date.max))
            pairs = aws_spot_on_demand(frame, aws_on_demand_prices).join(spot_timestamps(frame), on="row_no",
                                                                         how="full", coalesce=True)
        if pairs is not None:
            for column in pairs.columns[1:]:
                derived[column] = _values(frame, pairs, column)
        out.append(replace(batch, data=frame.with_columns(*derived.values()).to_arrow()) if derived else batch)
    return out


ACCELERATOR_SUITE = "catalog_accelerators.json"


def accelerator_rows(catalog) -> list[dict]:
    """One row per accelerator with its figures (None where not published)."""
    rows = []
    for row_no, (acc_id, acc) in enumerate(catalog.accelerators.accelerators.items()):
        row = {"row_no": row_no, "accelerator_id": acc_id, "family": acc.family,
               "memory_gb": acc.memory_gb.value, "memory_bandwidth_tbps": acc.memory_bandwidth_tbps.value,
               "tdp_w": acc.tdp_w.value}
        for precision in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"):
            figure = acc.peak_tflops.get(precision)
            row[f"peak_{precision}_tflops"] = figure.value if figure else None
        rows.append(row)
    return rows


def _figure_path(column: str) -> str:
    match = re.fullmatch(r"peak_([a-z0-9]+)_tflops", column or "")
    return f"peak_tflops.{match.group(1)}" if match else column


def catalog_check_digest(rows: list[dict], suite: dict) -> str:
    """Digest of what the catalog check's verdict depends on: the figures, the suite, and the code that checks them."""
    code = b"".join(Path(__file__).with_name(name).read_bytes() for name in ("checks.py", "validate.py"))
    text = json.dumps([rows, suite], sort_keys=True, default=str).encode() + code
    return hashlib.sha256(text).hexdigest()


# The catalog check begun by `begin_catalog_check` and not waited on yet: (its digest, the GX process's Pending answer)
_begun: tuple[str, Any] | None = None


def _catalog_check_inputs(catalog) -> tuple[list[dict], dict, str]:
    from flows.validate import load_suite_json

    rows = accelerator_rows(catalog)
    suite = load_suite_json(catalog.root / "expectations" / ACCELERATOR_SUITE)
    return rows, suite, catalog_check_digest(rows, suite)


def begin_catalog_check(catalog) -> None:
    """Ask Great Expectations' process for `check_catalog`'s validation and go on without its answer (`hweval run`,
    while its Prefect server starts: the process's start, ~2 s of importing GX, then overlaps the run's own work
    instead of holding it); the next `check_catalog` of the same figures takes that answer. Nothing is asked when
    these figures passed before (the cache), nor when GX runs in the run's process (HWEVAL_GX_PROCESS=0): asked there,
    the check would import GX then and there, before `hweval run` has checked its settings, and overlap nothing."""
    global _begun
    from flows import gx_process

    if not gx_process.enabled():  # HWEVAL_GX_PROCESS=0: nothing to overlap, GX would be imported here and now
        return
    rows, suite, digest = _catalog_check_inputs(catalog)
    if cache.catalog_check_passed(digest):
        return
    _begun = (digest, gx_process.validate_rows_later(rows, suite))


def check_catalog(catalog) -> None:
    """Raise CatalogError when a catalog figure fails its expectation (e.g. trn2 memory as 512 GiB per chip)."""
    global _begun
    from flows import gx_process
    from flows.catalog import CatalogError

    rows, suite, digest = _catalog_check_inputs(catalog)
    if cache.catalog_check_passed(digest):  # these figures passed this suite in an earlier run
        return
    begun, _begun = _begun, None
    if begun is not None and begun[0] == digest:  # asked ahead (begin_catalog_check): its answer
        outcome = begun[1].result()
    else:
        outcome = gx_process.validate_rows(rows, suite)
    if not outcome.failures:
        cache.record_catalog_check_passed(digest)
        return
    ids = {row["row_no"]: row["accelerator_id"] for row in rows}
    errors = []
    for failure in sorted(outcome.failures, key=lambda f: (ids[f.row_no], f.column or "")):
        value = failure.value
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        errors.append(f"accelerators.yaml: accelerators.{ids[failure.row_no]}.{_figure_path(failure.column)}: "
                      f"{shown} fails {failure.expectation}: {failure.reason}")
    raise CatalogError("\n".join(errors))
