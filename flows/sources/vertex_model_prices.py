"""Cloud Billing Catalog `services/C7E2-9256-1C43/skus` (Vertex AI) pages -> token prices in raw.model_api_prices.

The page and SKU shape is the documented Sku schema (as raw.gcp_billing reads it: `description`, `category`,
`serviceRegions`, `pricingInfo[0].pricingExpression` with `usageUnit` and `tieredRates[].unitPrice` units + nanos).
A token SKU's description names the model and the direction ("<model> Input Tokens", "<model> Output Tokens"); one
row per SKU x service region, at the first tier (startUsageAmount 0, the on-demand price; the later volume tiers are
not priced). The SKUs read, kept and skipped (by reason) and the later tiers are counted in the log. Not known: the
descriptions of the Llama and DeepSeek model-as-a-service SKUs and the `usageUnit` token SKUs carry; the units
accepted (`count` = one token, `k{count}`, `M{count}`) are an assumption, and any other unit is rejected with the
reason. No snapshot is shipped; catalogs/sources.yaml keeps the source disabled.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from flows.sources import _model_api, gcp_billing
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    load_json,
    require,
)
from flows.sources._concurrency import CloudSlots, in_order

TABLE = _model_api.TABLE
# the live options list whose items are fetched independently: a fan-out task per service (the Billing Catalog is
# listed per service, not per region)
SPLIT_BY = "services"
CLOUD = "gcp"  # whose fetch_concurrency slots its services hold
VERTEX_AI = "C7E2-9256-1C43"
TOKEN_UNITS = {"count": 1.0, "k{count}": 1_000.0, "M{count}": 1_000_000.0}
DIRECTION_WORDS = {"Input": "input", "Output": "output"}
# why a SKU (or a rate) is not a row, as the log counts them
OUT_OF_SCOPE = "not on-demand input or output token SKUs"
NOT_ASKED_FOR = "not matching description_contains or regions"
LATER_TIER = "volume tiers after a kept SKU's first (only the first, the on-demand price, is priced)"
NO_FIRST_TIER = "token SKUs whose first tier starts above 0 (no on-demand price to rank)"
SKIP_REASONS = (OUT_OF_SCOPE, NOT_ASKED_FOR, NO_FIRST_TIER, LATER_TIER)

log = logging.getLogger(__name__)


def in_scope(description: Any) -> bool:
    """A SKU of on-demand input or output tokens (not cached, batch or provisioned throughput)."""
    return (isinstance(description, str) and "token" in description.lower()
            and _model_api.split_direction(description, DIRECTION_WORDS)[1] is not None)


def price_rows(page: Any, where: str, *, sku_filter: gcp_billing.SkuFilter | None = None,
               count: _model_api.ItemCount | None = None) -> Iterator[dict]:
    """One row per token SKU x service region of one page; the other SKUs, and the tiers after a SKU's first, are
    counted in `count` by reason."""
    count = count if count is not None else _model_api.ItemCount(SKIP_REASONS)
    for i, sku in enumerate(require(page, "skus", where, list)):
        sku_where = f"{where}: skus[{i}]"
        count.read += 1
        description = require(sku, "description", sku_where, str)
        if not in_scope(description):
            count.skip(OUT_OF_SCOPE)
            continue
        if sku_filter is not None and not sku_filter.keep(sku, sku_where):
            count.skip(NOT_ASKED_FOR)
            continue
        category = require(sku, "category", sku_where, dict)
        regions = require(sku, "serviceRegions", sku_where, list)
        if sku_filter is not None:
            regions = sku_filter.regions_of(regions)
        pricing = require(sku, "pricingInfo", sku_where, list)
        if not pricing:
            raise SourceFormatError(f"{sku_where}.pricingInfo: empty, expected at least one pricing entry")
        expr = require(pricing[0], "pricingExpression", f"{sku_where}.pricingInfo[0]", dict)
        rates_where = f"{sku_where}.pricingInfo[0].pricingExpression.tieredRates"
        rates = require(expr, "tieredRates", f"{sku_where}.pricingInfo[0].pricingExpression", list)
        if not rates:
            raise SourceFormatError(f"{rates_where}: empty, expected at least one rate")
        unit_price = require(rates[0], "unitPrice", f"{rates_where}[0]", dict)
        if gcp_billing.start_usage(rates[0], f"{rates_where}[0]") != 0:  # a volume tier's price, not on-demand
            count.skip(NO_FIRST_TIER)
            continue
        count.kept += 1
        for _ in rates[1:]:
            count.skip(LATER_TIER)
        # None (the row is quarantined as not a number) when units are too large for a float
        price = gcp_billing._price(*gcp_billing.unit_price_parts(unit_price, f"{rates_where}[0].unitPrice"))
        api_model, direction = _model_api.split_direction(description, DIRECTION_WORDS)
        for region in regions:
            yield _model_api.token_price_row(
                units=TOKEN_UNITS, unit=expr.get("usageUnit"), price_text=None if price is None else repr(price),
                source_ref=sku_where,
                cloud="gcp", region=region, api_model=api_model, direction=direction, inference_type=None,
                sku=sku.get("skuId"), rate_code="tier 0",
                offer_detail=description, product=category.get("resourceGroup"), feature=category.get("usageType"),
                term_type=None, currency_code=unit_price.get("currencyCode"),
                effective_at=pricing[0].get("effectiveTime"))


def rows_from_pages(pages: Iterable[tuple[str, Any]], *, sku_filter: gcp_billing.SkuFilter | None = None,
                    service: str | None = None) -> list[dict]:
    """Rows of every page, and a log line of the SKUs read, kept and skipped (`service` names them in it)."""
    count = _model_api.ItemCount(SKIP_REASONS)
    rows = [row for where, page in pages for row in price_rows(page, where, sku_filter=sku_filter, count=count)]
    log.info("vertex model prices%s: %s", f" {service}" if service else "", count.summary("SKUs", len(rows)))
    return rows


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One page on disk, read exactly as a live Billing Catalog response."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (Cloud Billing Catalog API v1)
def check_live_options(options: Mapping) -> None:
    """SourceFormatError for a `live:` block this source cannot use: gcp_billing's options (services default to
    Vertex AI's)."""
    try:
        gcp_billing.check_options(options)
    except SourceFormatError as exc:
        raise SourceFormatError(str(exc).replace("gcp_billing", "vertex_model_prices", 1)) from None


def fetch_live(options: Mapping, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               environ: Mapping[str, str] = os.environ, slots: CloudSlots | None = None) -> list[dict]:
    """Rows from the Billing Catalog API (API key from GOOGLE_API_KEY or `api_key_env`), paged by gcp_billing's
    own nextPageToken loop; `description_contains` and `regions` narrow the SKUs as they do there."""
    check_live_options(options)
    api_key = gcp_billing._api_key(options, environ)

    def service_rows(service: str) -> list[dict]:
        pages = gcp_billing.service_pages(options, service, api_key, sleep=sleep, limits=limits)
        return rows_from_pages(pages, sku_filter=gcp_billing.sku_filter(options), service=service)

    services = list(options.get("services") or [VERTEX_AI])
    return [row for rows in in_order(service_rows, services, slots) for row in rows]
