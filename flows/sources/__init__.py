"""One module per source kind; each turns its format into rows of one landed table."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa

from flows.sources import (
    aws_instance_types,
    aws_offer_file,
    aws_pricing,
    aws_spot,
    azure_model_prices,
    azure_retail,
    azure_skus,
    bedrock_pricing,
    benchmark_runs,
    gcp_billing,
    gcp_machine_types,
    mlperf_inference,
    mlperf_training,
    price_sheet,
    vertex_model_prices,
)
from flows.sources._common import DEFAULT_LIMITS, LIMIT_NAMES, SourceLimits

# kind -> module (its TABLE names the landed table)
SOURCE_KINDS = {
    "aws_pricing": aws_pricing,
    "aws_spot": aws_spot,
    "aws_offer_file": aws_offer_file,
    "azure_retail": azure_retail,
    "gcp_billing": gcp_billing,
    "price_sheet": price_sheet,
    "mlperf_inference": mlperf_inference,
    "mlperf_training": mlperf_training,
    "benchmark_runs": benchmark_runs,
    # hosted model APIs' token prices, all into raw.model_api_prices
    "bedrock_pricing": bedrock_pricing,
    "azure_model_prices": azure_model_prices,
    "vertex_model_prices": vertex_model_prices,
    # instance hardware from the clouds' own APIs, all into raw.instance_types
    "aws_instance_types": aws_instance_types,
    "azure_skus": azure_skus,
    "gcp_machine_types": gcp_machine_types,
}

# Kinds that price the same AWS SKUs into raw.aws_pricing: one of them is read in a run.
SAME_SKU_KINDS = {"aws_pricing", "aws_offer_file"}

# Kinds that can fetch from an API (`live:` in sources.yaml).
LIVE_KINDS = {kind for kind, module in SOURCE_KINDS.items() if hasattr(module, "fetch_live")}


def limits_for(source: Any, source_id: str | None = None) -> SourceLimits:
    """The limits of a declared source (catalog_models.Source): what sources.yaml says, else its kind's defaults."""
    defaults = getattr(SOURCE_KINDS[source.kind], "DEFAULT_LIMITS", DEFAULT_LIMITS)
    declared = {name: getattr(source, name) for name in LIMIT_NAMES if getattr(source, name, None) is not None}
    return dataclasses.replace(defaults, source_id=source_id, **declared)


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _read_declared(reader: str, root: Path, source: Any, source_id: str, index: int) -> tuple[Any, Any]:
    """File `index` of a declared source read by its kind's `reader` (read_file or read_table), and the file's as-of
    date."""
    file = source.files[index]
    path = root / file.path
    extra = {"metadata": file.metadata} if file.metadata else {}
    read = getattr(SOURCE_KINDS[source.kind], reader)
    return read(path, display_path(path), file.region, limits=limits_for(source, source_id), **extra), file.as_of


def read_declared_file(root: Path, source: Any, source_id: str, index: int) -> list[dict]:
    """The rows of file `index` of a declared source (catalog_models.Source; its paths are under the catalog folder
    `root`), each with its `data_as_of`: how a run reads it, and `hweval check` (a file the run would refuse is
    refused there too, with the same message)."""
    rows, as_of = _read_declared("read_file", root, source, source_id, index)
    return [row | {"data_as_of": as_of} for row in rows]


def reads_tables(kind: str) -> bool:
    """Whether a source kind reads its files into Arrow (`read_table`: the offer file, whose rows are counted in tens
    of thousands) rather than into a dict a row; such a kind fetches live into Arrow too (`fetch_live_table`)."""
    return hasattr(SOURCE_KINDS[kind], "read_table")


def read_declared_table(root: Path, source: Any, source_id: str, index: int) -> pa.Table:
    """`read_declared_file`'s rows as one Arrow table, for a kind that `reads_tables`: the same columns, in the same
    order, `data_as_of` last."""
    return with_data_as_of(*_read_declared("read_table", root, source, source_id, index))


def with_data_as_of(table: pa.Table, as_of: Any) -> pa.Table:
    """`table` with a last column `data_as_of`, `as_of` (a date) in every row, as a dict row gets it last."""
    return table.append_column("data_as_of", pa.repeat(pa.scalar(as_of, pa.date32()), table.num_rows))
