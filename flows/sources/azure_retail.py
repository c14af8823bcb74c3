"""Azure Retail Prices API pages (`Items`, `NextPageLink`) -> rows of raw.azure_retail."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flows.sources import _http
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    excerpt,
    load_json,
    name_list,
    odata_literal,
    require,
    to_bool,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order

TABLE = "azure_retail"
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "azure"  # whose fetch_concurrency slots its regions hold

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
        # false: the same meter listed again for a region it is not billed from (its primary region's row prices
        # it); the live request asks for primary meters only, and the suite quarantines such a row from a file
        row["is_primary_meter_region"] = to_bool(item.get("isPrimaryMeterRegion"))
        row["retail_price"] = to_float(item.get("retailPrice"))
        row["unit_price"] = to_float(item.get("unitPrice"))
        row["source_ref"] = item_where
        yield row


def rows_from_pages(pages: Iterable[tuple[str, Any]]) -> list[dict]:
    return [row for where, page in pages for row in price_rows(page, where)]


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One snapshot page on disk, read exactly as a live Retail Prices response."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (public API, no credentials)
ENDPOINT = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
OPTION_KEYS = ("regions", "arm_sku_names", "endpoint", "api_version")


def _string_list(options: dict, key: str, required: bool) -> list[str] | None:
    return name_list(options, key, "azure_retail live options", required=required,
                     hint="" if required else f" (leave `{key}` out for no filter)")


def check_options(options: dict) -> None:
    """SourceFormatError for an options block this source cannot use: unknown keys, missing or empty regions."""
    if not isinstance(options, dict):
        raise SourceFormatError(f"azure_retail live options: expected a mapping, got {type(options).__name__}")
    for key in options:
        if key not in OPTION_KEYS:
            raise SourceFormatError(
                f"azure_retail live options: unknown key {key!r} (allowed: {', '.join(OPTION_KEYS)})")
    _string_list(options, "regions", required=True)
    _string_list(options, "arm_sku_names", required=False)
    for key in ("endpoint", "api_version"):
        if key in options and not (isinstance(options[key], str) and options[key].strip()):
            raise SourceFormatError(f"azure_retail live options: {key!r}: expected a non-empty string, "
                                    f"got {excerpt(options[key])}")


def region_filter(region: str, arm_sku_names: list[str] | None = None) -> str:
    """The `$filter` for Virtual Machines prices in one region, optionally only the named ARM SKUs."""
    text = f"serviceName eq 'Virtual Machines' and armRegionName eq {odata_literal(region)}"
    if arm_sku_names:
        text += " and (" + " or ".join(f"armSkuName eq {odata_literal(name)}" for name in arm_sku_names) + ")"
    return text


def pages_from_api(options: dict, *, sleep=time.sleep,
                   limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """(where, page) for every Retail Prices page of every region in `options["regions"]`, following NextPageLink,
    at most `limits.max_pages` per region (a link back to an earlier page stops the region at once).

    `where` names the region and page ("azure retail prices eastus page 2"); rows point at it in `source_ref`.
    """
    check_options(options)
    for region in _string_list(options, "regions", required=True):
        yield from region_pages(options, region, sleep=sleep, limits=limits)


def region_pages(options: dict, region: str, *, sleep=time.sleep, limits: SourceLimits = DEFAULT_LIMITS,
                 odata_filter: str | None = None) -> Iterator[tuple[str, dict]]:
    """(where, page) for every Retail Prices page of one region (options already checked); `odata_filter` replaces
    the Virtual Machines filter (azure_model_prices lists Foundry Models meters through the same paging)."""
    endpoint = options.get("endpoint", ENDPOINT)
    skus = None if odata_filter else _string_list(options, "arm_sku_names", required=False)
    # meterRegion='primary': each meter once, from the region it is billed in; without it the API also lists a meter
    # again for the other regions it covers (isPrimaryMeterRegion false), and one VM size would get two prices
    params = {"api-version": options.get("api_version", API_VERSION), "currencyCode": "'USD'",
              "meterRegion": "'primary'", "$filter": odata_filter or region_filter(region, skus)}
    url: str | None = endpoint
    seen = _http.PagesSeen(_http.with_query(endpoint, params))
    page_no = 0
    while url:
        page_no += 1
        where = f"azure retail prices {region} page {page_no}"
        page = _http.get_json(url, params=params, what=where, sleep=sleep, limits=limits)
        yield where, page
        next_link = page.get("NextPageLink") if isinstance(page, dict) else None
        if next_link is not None and not isinstance(next_link, str):
            raise SourceFormatError(f"{where}.NextPageLink: expected a URL or null, got {excerpt(next_link)}")
        if next_link:
            _http.same_origin_link(next_link, endpoint, f"{where}.NextPageLink")
            seen.follow(next_link, f"{where}.NextPageLink")
        if next_link and page_no >= limits.max_pages:
            raise limits.exceeded(f"azure retail prices {region}", "max_pages", "the listing has more pages")
        url, params = next_link or None, None  # the link already carries the whole query


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               slots: CloudSlots | None = None) -> list[dict]:
    """Rows of raw.azure_retail fetched from the public Retail Prices API (no credentials). With `slots`, regions
    are fetched side by side, each holding one of Azure's slots; rows come in region order either way."""
    check_options(options)

    def region_rows(region: str) -> list[dict]:
        return rows_from_pages(region_pages(options, region, sleep=sleep, limits=limits))

    return [row for rows in in_order(region_rows, _string_list(options, "regions", required=True), slots)
            for row in rows]


check_live_options = check_options  # the name every live kind gives it (run by `hweval check` too)
