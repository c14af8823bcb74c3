"""Checks that need more than one row: columns derived before validation so that row-level expectations can
catch duplicates, spot prices at or above on-demand, accelerator counts that disagree with the catalog; and the
catalog's own figures checked against plausible ranges.

Derived columns are named `check_*`: the expectation suites read them, ops.quarantine keeps them in the row it
stores, and they are not landed in raw tables.
"""

from __future__ import annotations

import logging
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import duckdb

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
_WHOLE_NUMBER = re.compile(r"^[0-9]+$")
_GCP_SPOT_PREFIXES = ("Spot Preemptible ", "Preemptible ")


def _value(value: Any) -> Any:
    """A value as compared: NaN (pandas' missing) is None."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _set_column(rows: list[dict], column: str, values: dict[int, Any]) -> None:
    for row in rows:
        row[column] = values.get(row["row_no"])


# ---------------------------------------------------------------- duplicates
def _where(row: dict) -> str:
    """Where a row is in its file, as the user finds it (its source_ref), else its position in the batch."""
    return row.get("source_ref") or f"row {row['row_no']}"


def duplicate_notes(rows: list[dict], key: tuple[str, ...]) -> dict[int, str]:
    """row_no -> why it is a duplicate. A later exact copy names the first; copies that disagree all fail."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        values = tuple(_value(row.get(c)) for c in key)
        if all(v is None for v in values):
            continue  # no key at all: other expectations say what is missing, it duplicates nothing
        groups[values].append(row)
    notes: dict[int, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        columns: list[str] = []
        for row in members:
            columns += [c for c in row if c not in columns and c not in _PROVENANCE and not c.startswith(CHECK_PREFIX)]
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
def _catalog_counts(catalog) -> dict[tuple[str, str], tuple[int, str]]:
    """(cloud, instance_type) -> (accelerator count, accelerator family)."""
    accelerators = catalog.accelerators.accelerators
    return {(i.cloud, i.instance_type): (i.accelerator_count,
                                         accelerators[i.accelerator].family if i.accelerator in accelerators else "")
            for i in catalog.instances.instances if i.accelerator_count is not None}


def listed_counts(rows: Iterable[dict]) -> dict[tuple[str, str], tuple[int, str]]:
    """(cloud, instance_type) -> (device count, "gpu" or the ML ASIC kind) from this run's instance-type listings
    (raw.instance_types rows), where one region lists one whole-number count of one device kind."""
    seen: dict[tuple[str, str], set[tuple[float, str]]] = defaultdict(set)
    for row in rows:
        count, kind = _value(row.get("device_count")), row.get("device_kind")
        if row.get("instance_type") and isinstance(count, (int, float)) and kind:
            seen[(row.get("cloud"), row["instance_type"])].add((count, kind))
    return {key: (int(count), kind) for key, values in seen.items() if len(values) == 1
            for count, kind in values if float(count).is_integer()}


def aws_catalog_counts(rows: list[dict], catalog, listed: dict[tuple[str, str], tuple[int, str]] | None = None
                       ) -> dict[int, str]:
    """row_no -> the count the instance carries, written as the Price List writes `gpu` (a whole number as text):
    instances.yaml's where it gives one (it corrects listings), else the instance-type API's (`listed`).

    No check where the row has no whole-number `gpu` (fractional GPUs have an expectation of their own; ML ASIC
    rows may leave it out) or where an ML ASIC instance lists 0 GPUs (true: its chips are not GPUs).
    """
    counts = {**(listed or {}), **_catalog_counts(catalog)}
    out: dict[int, str] = {}
    for row in rows:
        gpu = row.get("gpu")
        known = counts.get(("aws", row.get("instance_type")))
        if known is None or not isinstance(gpu, str) or not _WHOLE_NUMBER.match(gpu.strip()):
            continue
        count, family = known
        listed = int(gpu)
        if listed == 0 and family != "gpu":
            continue
        out[row["row_no"]] = gpu.strip() if listed == count else str(count)  # "08" matches 8
    return out


def price_sheet_catalog_counts(rows: list[dict], catalog) -> dict[int, float]:
    """row_no -> the catalog's count for a quote's (cloud, instance_type)."""
    counts = _catalog_counts(catalog)
    return {row["row_no"]: float(counts[(row.get("cloud"), row.get("instance_type"))][0])
            for row in rows
            if row.get("entry_kind") == "quote" and (row.get("cloud"), row.get("instance_type")) in counts}


# ---------------------------------------------------------------- spot prices against on-demand
def _positive(price: Any) -> float | None:
    price = _value(price)
    return float(price) if isinstance(price, (int, float)) and price > 0 else None


def _lowest(prices: dict, key, price) -> None:
    if price is not None and (key not in prices or price < prices[key]):
        prices[key] = price


def azure_is_spot(row: dict) -> bool:
    """As staging classifies it: a Consumption row whose skuName or meterName ends in ' Spot'."""
    if row.get("price_type") in ("Reservation", "DevTestConsumption"):
        return False
    return any(str(row.get(c) or "").endswith(" Spot") for c in ("sku_name", "meter_name"))


def _azure_is_low_priority(row: dict) -> bool:
    return any(str(row.get(c) or "").endswith(" Low Priority") for c in ("sku_name", "meter_name"))


def azure_on_demand(rows: list[dict]) -> dict[int, float]:
    """Spot row_no -> the lowest on-demand price of the same ARM SKU, region, product (OS) and unit."""
    key = ("arm_sku_name", "arm_region_name", "product_name", "unit_of_measure")
    on_demand: dict[tuple, float] = {}
    for row in rows:
        if row.get("price_type") == "Consumption" and not azure_is_spot(row) and not _azure_is_low_priority(row):
            _lowest(on_demand, tuple(row.get(c) for c in key), _positive(row.get("retail_price")))
    return {row["row_no"]: on_demand[k] for row in rows
            if azure_is_spot(row) and (k := tuple(row.get(c) for c in key)) in on_demand}


def aws_plain_linux_on_demand(rows: Iterable[dict]) -> dict[tuple[str, str], float]:
    """(region, instance type) -> the lowest plain-Linux on-demand hourly price among Price List rows."""
    prices: dict[tuple[str, str], float] = {}
    for row in rows:
        if all(row.get(c) == v for c, v in _AWS_PLAIN_LINUX_ON_DEMAND.items()):
            _lowest(prices, (row.get("region_code"), row.get("instance_type")), _positive(row.get("price_usd")))
    return prices


def warehouse_aws_on_demand(con) -> dict[tuple[str, str], float]:
    """Plain-Linux on-demand prices from the last landed raw.aws_pricing rows of each source ({} when none)."""
    where = " and ".join(f"{c} = ?" for c in _AWS_PLAIN_LINUX_ON_DEMAND)
    try:
        found = con.execute(f"""
            with latest as (select source_id, max(as_of) as as_of from raw.aws_pricing group by source_id)
            select region_code, instance_type, min(price_usd)
            from raw.aws_pricing semi join latest using (source_id, as_of)
            where {where} and price_usd > 0
            group by region_code, instance_type
        """, list(_AWS_PLAIN_LINUX_ON_DEMAND.values())).fetchall()
    except duckdb.Error as exc:  # no warehouse tables yet: nothing to compare with
        log.info("spot check: no landed AWS on-demand prices to compare with (%s)", exc)
        return {}
    return {(region, instance_type): price for region, instance_type, price in found}


def aws_spot_on_demand(rows: list[dict], on_demand: dict[tuple[str, str], float]) -> dict[int, float]:
    return {row["row_no"]: on_demand[k] for row in rows
            if row.get("product_description") in _AWS_SPOT_LINUX
            and (k := (row.get("region"), row.get("instance_type"))) in on_demand}


def gcp_on_demand(rows: list[dict]) -> dict[int, float]:
    """Spot SKU row_no ("Spot Preemptible X running in R") -> the on-demand price of "X running in R", same region
    and tier."""
    key = ("description", "region", "start_usage_amount")
    on_demand: dict[tuple, float] = {}
    for row in rows:
        if row.get("usage_type") == "OnDemand":
            _lowest(on_demand, tuple(row.get(c) for c in key), _positive(row.get("price_usd")))
    out: dict[int, float] = {}
    for row in rows:
        description = str(row.get("description") or "")
        prefix = next((p for p in _GCP_SPOT_PREFIXES if description.startswith(p)), None)
        if prefix is None or row.get("usage_type") not in ("Preemptible", None):
            continue
        k = (description.removeprefix(prefix), row.get("region"), row.get("start_usage_amount"))
        if k in on_demand:
            out[row["row_no"]] = on_demand[k]
    return out


# ---------------------------------------------------------------- entry points
def add_check_columns(batches, catalog, con) -> None:
    """Add the `check_*` columns each batch's suite reads (in place)."""
    aws_batches = [b for b in batches if b.table == "aws_pricing"]
    listed = listed_counts(r for b in batches if b.table == "instance_types" for r in b.rows)
    aws_on_demand_prices = None
    for batch in batches:
        rows = batch.rows
        if not rows:
            continue
        key = NATURAL_KEYS.get(batch.table)
        if key:
            _set_column(rows, "check_duplicate_of", duplicate_notes(rows, key))
        if batch.table == "aws_pricing":
            _set_column(rows, "check_catalog_accelerator_count", aws_catalog_counts(rows, catalog, listed))
        elif batch.table == "price_sheet":
            _set_column(rows, "check_catalog_accelerator_count", price_sheet_catalog_counts(rows, catalog))
        elif batch.table == "azure_retail":
            _set_column(rows, "check_on_demand_usd_per_hour", azure_on_demand(rows))
        elif batch.table == "gcp_billing":
            _set_column(rows, "check_on_demand_usd_per_hour", gcp_on_demand(rows))
        elif batch.table == "aws_spot":
            if aws_on_demand_prices is None:
                aws_on_demand_prices = (
                    aws_plain_linux_on_demand(r for b in aws_batches for r in b.rows) if aws_batches
                    else warehouse_aws_on_demand(con))
            _set_column(rows, "check_on_demand_usd_per_hour", aws_spot_on_demand(rows, aws_on_demand_prices))


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


def check_catalog(catalog) -> None:
    """Raise CatalogError when a catalog figure fails its expectation (e.g. trn2 memory as 512 GiB per chip)."""
    from flows.catalog import CatalogError
    from flows.validate import load_suite_json, validate_rows

    rows = accelerator_rows(catalog)
    suite = load_suite_json(catalog.root / "expectations" / ACCELERATOR_SUITE)
    outcome = validate_rows(rows, suite)
    if not outcome.failures:
        return
    ids = {row["row_no"]: row["accelerator_id"] for row in rows}
    errors = []
    for failure in sorted(outcome.failures, key=lambda f: (ids[f.row_no], f.column or "")):
        value = failure.value
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        errors.append(f"accelerators.yaml: accelerators.{ids[failure.row_no]}.{_figure_path(failure.column)}: "
                      f"{shown} fails {failure.expectation}: {failure.reason}")
    raise CatalogError("\n".join(errors))
