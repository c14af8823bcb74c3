"""Azure Retail Prices API pages for `serviceName eq 'Foundry Models'` -> token prices in raw.model_api_prices.

The page envelope is the Retail Prices API's (`Items`, `NextPageLink`, as raw.azure_retail reads it). A token meter's
`meterName` names the model, the direction and the deployment ("gpt-4o Inp Global Tokens", "... Outp ... Tokens")
and `unitOfMeasure` is "1K" or "1M" (tokens); another unit is rejected with the reason. Meters of cached, batch,
provisioned or fine-tuning tokens and meters that are not per token are out of scope (not rows), and so is a volume
tier (`tierMinimumUnits` above 0: a lower price from that much usage on): only tier 0, the on-demand price, is priced,
as vertex_model_prices prices a SKU's first tier. The meters read, kept and skipped (by reason) are counted in the
log. The shape comes from several public test fixtures, not from a captured response; the productName and meter names
of Meta (Llama) serverless models are not known, so no snapshot is shipped and catalogs/sources.yaml keeps the source
disabled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flows.sources import _model_api, azure_retail
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    excerpt,
    load_json,
    name_list,
    require,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order

TABLE = _model_api.TABLE
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "azure"  # whose fetch_concurrency slots its regions hold
SERVICE_NAME = "Foundry Models"
TOKEN_UNITS = {"1K": 1_000.0, "1M": 1_000_000.0}
DIRECTION_WORDS = {"Inp": "input", "Input": "input", "Outp": "output", "Output": "output"}
OPTION_KEYS = ("regions", "endpoint", "api_version", "meter_name_contains")
# why a meter is not a row, as the log counts them
OUT_OF_SCOPE = "not on-demand input or output token meters"
NOT_ASKED_FOR = "not matching meter_name_contains"
VOLUME_TIER = "volume tiers (tierMinimumUnits above 0; only tier 0, the on-demand price, is priced)"
SKIP_REASONS = (OUT_OF_SCOPE, NOT_ASKED_FOR, VOLUME_TIER)

log = logging.getLogger(__name__)


def in_scope(meter_name: Any) -> bool:
    """A meter of on-demand input or output tokens (not cached, batch, provisioned or fine-tuning tokens)."""
    return (isinstance(meter_name, str) and "token" in meter_name.lower()
            and _model_api.split_direction(meter_name, DIRECTION_WORDS)[1] is not None)


def tier_minimum(item: dict, where: str) -> float:
    """An item's `tierMinimumUnits`: 0 for the on-demand price, more for a volume tier; absent or null is tier 0 (the
    public fixtures this source's shape comes from write none); anything but a number 0 or more is refused."""
    value = item.get("tierMinimumUnits")
    if value is None:
        return 0.0
    units = to_float(value) if isinstance(value, (int, float)) else None
    if units is None or units < 0:
        raise SourceFormatError(f"{where}.tierMinimumUnits: expected a number 0 or more (0 for the on-demand price, "
                                f"more for a volume tier), got {type(value).__name__} {excerpt(value)}")
    return units


def price_rows(page: Any, where: str, *, meter_name_contains: list[str] | None = None,
               count: _model_api.ItemCount | None = None) -> Iterator[dict]:
    """One row per on-demand token meter of one Retail Prices page; the others are counted in `count` by reason."""
    count = count if count is not None else _model_api.ItemCount(SKIP_REASONS)
    items = require(page, "Items", where, list)
    for i, item in enumerate(items):
        item_where = f"{where}: Items[{i}]"
        count.read += 1
        meter = require(item, "meterName", item_where, str)
        if not in_scope(meter):
            count.skip(OUT_OF_SCOPE)
            continue
        if meter_name_contains and not any(part.lower() in meter.lower() for part in meter_name_contains):
            count.skip(NOT_ASKED_FOR)
            continue
        if tier_minimum(item, item_where) > 0:
            count.skip(VOLUME_TIER)
            continue
        count.kept += 1
        api_model, direction = _model_api.split_direction(meter, DIRECTION_WORDS)
        yield _model_api.token_price_row(
            units=TOKEN_UNITS, unit=item.get("unitOfMeasure"), price_text=item.get("retailPrice"),
            source_ref=item_where, cloud="azure", region=item.get("armRegionName"), api_model=api_model,
            direction=direction, inference_type=None, sku=item.get("skuId"),
            rate_code=f"{item.get('meterId')}|{item.get('type')}|{item.get('tierMinimumUnits')}",
            offer_detail=meter, product=item.get("productName"), feature=item.get("type"), term_type=None,
            currency_code=item.get("currencyCode"), effective_at=item.get("effectiveStartDate"))


def rows_from_pages(pages: Iterable[tuple[str, Any]], *, meter_name_contains: list[str] | None = None,
                    region: str | None = None) -> list[dict]:
    """Rows of every page, and a log line of the meters read, kept and skipped (`region` names them in it)."""
    count = _model_api.ItemCount(SKIP_REASONS)
    rows = [row for where, page in pages
            for row in price_rows(page, where, meter_name_contains=meter_name_contains, count=count)]
    log.info("azure model prices%s: %s", f" {region}" if region else "", count.summary("meters", len(rows)))
    return rows


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One page on disk, read exactly as a live Retail Prices response."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (public API, no credentials)
def _string_list(options: dict, key: str, required: bool) -> list[str] | None:
    return name_list(options, key, "azure_model_prices live options", required=required)


def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    if not isinstance(options, dict):
        raise SourceFormatError(f"azure_model_prices live options: expected a mapping, got {type(options).__name__}")
    unknown = [key for key in options if key not in OPTION_KEYS]
    if unknown:
        raise SourceFormatError(f"azure_model_prices live options: unknown key {unknown[0]!r} "
                                f"(allowed: {', '.join(OPTION_KEYS)})")
    _string_list(options, "regions", required=True)
    _string_list(options, "meter_name_contains", required=False)
    for key in ("endpoint", "api_version"):
        if key in options and not (isinstance(options[key], str) and options[key].strip()):
            raise SourceFormatError(f"azure_model_prices live options: {key!r}: expected a non-empty string, "
                                    f"got {excerpt(options[key])}")


def region_filter(region: str) -> str:
    """The `$filter` for Foundry Models meters in one region."""
    return f"serviceName eq '{SERVICE_NAME}' and armRegionName eq '{region.replace(chr(39), chr(39) * 2)}'"


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               slots: CloudSlots | None = None) -> list[dict]:
    """Rows from the public Retail Prices API (no credentials), paged by azure_retail's own NextPageLink loop."""
    check_live_options(options)
    paging = {k: options[k] for k in ("endpoint", "api_version") if k in options}
    contains = _string_list(options, "meter_name_contains", required=False)

    def region_rows(region: str) -> list[dict]:
        pages = azure_retail.region_pages(paging, region, sleep=sleep, limits=limits,
                                          odata_filter=region_filter(region))
        return rows_from_pages(pages, meter_name_contains=contains, region=region)

    return [row for rows in in_order(region_rows, _string_list(options, "regions", required=True), slots)
            for row in rows]
