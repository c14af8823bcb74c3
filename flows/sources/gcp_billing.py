"""Cloud Billing Catalog `services/{id}/skus` pages -> rows of raw.gcp_billing, one per SKU x region x tier."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator

from flows.sources._common import SourceFormatError, load_json, require

TABLE = "gcp_billing"


def price_rows(page: Any, where: str) -> Iterator[dict]:
    skus = require(page, "skus", where, list)
    for i, sku in enumerate(skus):
        sku_where = f"{where}: skus[{i}]"
        category = require(sku, "category", sku_where, dict)
        regions = require(sku, "serviceRegions", sku_where, list)
        pricing = require(sku, "pricingInfo", sku_where, list)
        if not pricing:
            raise SourceFormatError(f"{sku_where}.pricingInfo: empty, expected at least one pricing entry")
        info = pricing[0]  # the API returns the current price first
        expr = require(info, "pricingExpression", f"{sku_where}.pricingInfo[0]", dict)
        rates = require(expr, "tieredRates", f"{sku_where}.pricingInfo[0].pricingExpression", list)
        for t, rate in enumerate(rates):
            rate_where = f"{sku_where}.pricingInfo[0].pricingExpression.tieredRates[{t}]"
            unit_price = require(rate, "unitPrice", rate_where, dict)
            units, nanos = unit_price.get("units", "0"), unit_price.get("nanos", 0)
            try:
                price_usd = int(units) + int(nanos) / 1e9
            except (TypeError, ValueError):
                raise SourceFormatError(
                    f"{rate_where}.unitPrice: units {units!r} / nanos {nanos!r} are not integers"
                ) from None
            for region in regions:
                yield {
                    "sku_id": sku.get("skuId"),
                    "description": require(sku, "description", sku_where, str),
                    "resource_family": category.get("resourceFamily"),
                    "resource_group": category.get("resourceGroup"),
                    "usage_type": category.get("usageType"),
                    "region": region,
                    "usage_unit": expr.get("usageUnit"),
                    "start_usage_amount": float(rate.get("startUsageAmount") or 0),
                    "currency_code": unit_price.get("currencyCode"),
                    "units": str(units),
                    "nanos": int(nanos),
                    "price_usd": price_usd,
                    "effective_time": info.get("effectiveTime"),
                    "source_ref": sku_where,
                }


def rows_from_pages(pages: Iterable[tuple[str, Any]]) -> list[dict]:
    return [row for where, page in pages for row in price_rows(page, where)]


def read_file(path: Path, label: str, region: str | None = None) -> list[dict]:
    """One snapshot page on disk, read exactly as a live Billing Catalog response."""
    return rows_from_pages([(label, load_json(path, label))])
