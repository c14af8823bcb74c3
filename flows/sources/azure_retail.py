"""Azure Retail Prices API pages (`Items`, `NextPageLink`) -> rows of raw.azure_retail."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator

from flows.sources._common import load_json, require, to_float

TABLE = "azure_retail"

_FIELDS = {
    "arm_region_name": "armRegionName",
    "location": "location",
    "arm_sku_name": "armSkuName",
    "sku_name": "skuName",
    "meter_name": "meterName",
    "product_name": "productName",
    "service_name": "serviceName",
    "price_type": "type",
    "unit_of_measure": "unitOfMeasure",
    "currency_code": "currencyCode",
    "reservation_term": "reservationTerm",
    "effective_start_date": "effectiveStartDate",
    "sku_id": "skuId",
    "meter_id": "meterId",
}


def price_rows(page: Any, where: str) -> Iterator[dict]:
    """One row per item of one Retail Prices page."""
    items = require(page, "Items", where, list)
    for i, item in enumerate(items):
        item_where = f"{where}: Items[{i}]"
        require(item, "armSkuName", item_where, str)
        row = {col: item.get(key) for col, key in _FIELDS.items()}
        row["retail_price"] = to_float(item.get("retailPrice"))
        row["unit_price"] = to_float(item.get("unitPrice"))
        row["source_ref"] = item_where
        yield row


def rows_from_pages(pages: Iterable[tuple[str, Any]]) -> list[dict]:
    return [row for where, page in pages for row in price_rows(page, where)]


def read_file(path: Path, label: str, region: str | None = None) -> list[dict]:
    """One snapshot page on disk, read exactly as a live Retail Prices response."""
    return rows_from_pages([(label, load_json(path, label))])
