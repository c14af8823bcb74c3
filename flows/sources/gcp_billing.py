"""Cloud Billing Catalog `services/{id}/skus` pages -> rows of raw.gcp_billing, one per SKU x region x tier."""

from __future__ import annotations

import logging
import os
import re
import time
import urllib.parse
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.sources import _http
from flows.sources._common import (
    DEFAULT_LIMITS,
    LiveSourceError,
    SourceFormatError,
    SourceLimits,
    excerpt,
    load_json,
    name_list,
    require,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order

TABLE = "gcp_billing"
# the live options list whose items are fetched independently: a fan-out task per service (the Billing Catalog is
# listed per service, not per region)
SPLIT_BY = "services"
CLOUD = "gcp"  # whose fetch_concurrency slots its services hold

log = logging.getLogger(__name__)


@dataclass
class SkuFilter:
    """Which SKUs become rows (scope, not validation): counts what it read and kept so the run can say so.

    A SKU is kept when its description contains any of `description_contains` (case-insensitive) and, with
    `regions`, when any of its serviceRegions is listed; a kept SKU gets rows for the listed regions only.
    """

    description_contains: Collection[str] | None = None
    regions: Collection[str] | None = None
    read: int = 0
    kept: int = 0

    def keep(self, sku: Any, where: str) -> bool:
        self.read += 1
        if self.description_contains:
            text = require(sku, "description", where, str).lower()
            if not any(part.lower() in text for part in self.description_contains):
                return False
        if self.regions and not any(r in self.regions for r in require(sku, "serviceRegions", where, list)):
            return False
        self.kept += 1
        return True

    def regions_of(self, regions: list) -> list:
        return [r for r in regions if r in self.regions] if self.regions else regions


# Money's nanos are billionths of a unit: anything larger belongs in units
NANOS_PER_UNIT = 1_000_000_000
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


def _whole(value: Any) -> int | None:
    """An integer as the API writes one (int64 as a string of digits, int32 as a JSON number); None otherwise: int()
    alone would truncate 9.79 to 9 and take a price's fraction for whole units."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # over Python's 4,300 digits
            return None
    return None


def unit_price_parts(unit_price: dict, where: str) -> tuple[int, int]:
    """(units, nanos) of a `unitPrice` Money; a SourceFormatError at `where` unless units is whole and nanos is a
    whole number of billionths below one unit."""
    units, nanos = unit_price.get("units", "0"), unit_price.get("nanos", 0)
    units_int, nanos_int = _whole(units), _whole(nanos)
    if units_int is None or nanos_int is None:
        raise SourceFormatError(
            f"{where}: units {excerpt(units)} / nanos {excerpt(nanos)} are not integers (expected units as a string "
            f"of digits, as the Billing API writes them, and nanos as an integer; a fraction goes in nanos)")
    if abs(nanos_int) >= NANOS_PER_UNIT:
        raise SourceFormatError(
            f"{where}: nanos {excerpt(nanos)} is out of range (expected billionths of a unit, between "
            f"-999,999,999 and 999,999,999; whole units go in units, here {excerpt(units)})")
    return units_int, nanos_int


def start_usage(rate: dict, where: str) -> float:
    """A tiered rate's `startUsageAmount` (absent: 0, the first tier's); SourceFormatError where it is no number."""
    start = rate.get("startUsageAmount") or 0
    amount = to_float(start)
    if amount is None:
        raise SourceFormatError(f"{where}.startUsageAmount: {excerpt(start)} is not a number")
    return amount


def _price(units: int, nanos: int) -> float | None:
    """USD from the API's Money (whole units plus billionths); None when it does not fit a float."""
    whole, part = to_float(units), to_float(nanos)
    return None if whole is None or part is None else whole + part / NANOS_PER_UNIT


def price_rows(page: Any, where: str, *, sku_filter: SkuFilter | None = None) -> Iterator[dict]:
    """One row per SKU x service region x price tier of one page; `sku_filter` (default none) narrows the SKUs."""
    skus = require(page, "skus", where, list)
    for i, sku in enumerate(skus):
        sku_where = f"{where}: skus[{i}]"
        if sku_filter is not None and not sku_filter.keep(sku, sku_where):
            continue
        category = require(sku, "category", sku_where, dict)
        regions = require(sku, "serviceRegions", sku_where, list)
        if sku_filter is not None:
            regions = sku_filter.regions_of(regions)
        pricing = require(sku, "pricingInfo", sku_where, list)
        if not pricing:
            raise SourceFormatError(f"{sku_where}.pricingInfo: empty, expected at least one pricing entry")
        info = pricing[0]  # the API returns the current price first
        expr = require(info, "pricingExpression", f"{sku_where}.pricingInfo[0]", dict)
        rates = require(expr, "tieredRates", f"{sku_where}.pricingInfo[0].pricingExpression", list)
        for t, rate in enumerate(rates):
            rate_where = f"{sku_where}.pricingInfo[0].pricingExpression.tieredRates[{t}]"
            unit_price = require(rate, "unitPrice", rate_where, dict)
            units_int, nanos_int = unit_price_parts(unit_price, f"{rate_where}.unitPrice")
            # None (the row is quarantined as not a number) when units are too large for a float
            price_usd = _price(units_int, nanos_int)
            start_usage_amount = start_usage(rate, rate_where)
            for region in regions:
                yield {
                    "sku_id": sku.get("skuId"),
                    "description": require(sku, "description", sku_where, str),
                    "resource_family": category.get("resourceFamily"),
                    "resource_group": category.get("resourceGroup"),
                    "usage_type": category.get("usageType"),
                    "region": region,
                    "usage_unit": expr.get("usageUnit"),
                    "start_usage_amount": start_usage_amount,
                    "currency_code": unit_price.get("currencyCode"),
                    "units": str(unit_price.get("units", "0")),
                    "nanos": nanos_int,
                    "price_usd": price_usd,
                    "effective_time": info.get("effectiveTime"),
                    "source_ref": sku_where,
                }


def rows_from_pages(pages: Iterable[tuple[str, Any]], *, sku_filter: SkuFilter | None = None) -> list[dict]:
    return [row for where, page in pages for row in price_rows(page, where, sku_filter=sku_filter)]


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One snapshot page on disk, read exactly as a live Billing Catalog response."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (Cloud Billing Catalog API v1)
ENDPOINT = "https://cloudbilling.googleapis.com"
COMPUTE_ENGINE = "6F81-5844-456A"  # GPUs, VM cores/RAM, and TPU v5e/v5p/v6e chips
CLOUD_TPU = "E000-3F24-B8AA"  # the older Cloud TPU service: TPU v2/v3/v4 devices and pods
SERVICES = (COMPUTE_ENGINE, CLOUD_TPU)
PAGE_SIZE = 5000  # the API's maximum
OPTION_KEYS = ("services", "api_key_env", "endpoint", "description_contains", "regions")


def _string_list(options: Mapping, key: str) -> list[str] | None:
    return name_list(options, key, "gcp_billing live options", hint=f" (leave `{key}` out for the default)")


def check_options(options: Mapping) -> None:
    """SourceFormatError for an options block this source cannot use (unknown keys, wrong types)."""
    if not isinstance(options, Mapping):
        raise SourceFormatError(f"gcp_billing live options: expected a mapping, got {type(options).__name__}")
    for key in options:
        if key not in OPTION_KEYS:
            raise SourceFormatError(
                f"gcp_billing live options: unknown key {key!r} (allowed: {', '.join(OPTION_KEYS)})")
    for key in ("services", "description_contains", "regions"):
        _string_list(options, key)
    for key in ("endpoint", "api_key_env"):
        if key in options and not (isinstance(options[key], str) and options[key].strip()):
            raise SourceFormatError(f"gcp_billing live options: {key!r}: expected a non-empty string, "
                                    f"got {excerpt(options[key])}")


def sku_filter(options: Mapping) -> SkuFilter:
    return SkuFilter(description_contains=_string_list(options, "description_contains"),
                     regions=_string_list(options, "regions"))


def pages_from_api(options: Mapping, *, sleep=time.sleep, environ: Mapping[str, str] = os.environ,
                   limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """(where, page) for every `services/{id}/skus` page of each service, following nextPageToken, at most
    `limits.max_pages` per service (a token that repeats an earlier one stops the service at once).

    The API key comes from the environment variable `options["api_key_env"]` (GOOGLE_API_KEY) and is sent as
    the `key` query parameter; `where` ("gcp billing services/6F81-5844-456A/skus page 2") never carries it.
    """
    check_options(options)
    api_key = _api_key(options, environ)
    for service in _services(options):
        yield from service_pages(options, service, api_key, sleep=sleep, limits=limits)


def _api_key(options: Mapping, environ: Mapping[str, str]) -> str:
    key_env = options.get("api_key_env", "GOOGLE_API_KEY")
    api_key = (environ.get(key_env) or "").strip()
    if not api_key:
        raise LiveSourceError(
            f"gcp billing: no API key: set {key_env} (a Google Cloud API key with the Cloud Billing API enabled)")
    return api_key


def _services(options: Mapping) -> list[str]:
    return _string_list(options, "services") or list(SERVICES)


def service_pages(options: Mapping, service: str, api_key: str, *, sleep=time.sleep,
                  limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """(where, page) for every `services/{id}/skus` page of one service (options already checked)."""
    endpoint = options.get("endpoint", ENDPOINT).rstrip("/")
    service_id = service.removeprefix("services/")
    url = f"{endpoint}/v1/services/{urllib.parse.quote(service_id, safe='')}/skus"
    token, seen, page_no = "", set(), 0
    while True:
        page_no += 1
        where = f"gcp billing services/{service_id}/skus page {page_no}"
        params = {"pageSize": PAGE_SIZE, "currencyCode": "USD", "key": api_key}
        if token:
            params["pageToken"] = token
        page = _http.get_json(url, params=params, what=where, sleep=sleep, limits=limits)
        yield where, page
        token = page.get("nextPageToken") if isinstance(page, dict) else None
        if token is not None and not isinstance(token, str):
            raise SourceFormatError(f"{where}.nextPageToken: expected a string, got {type(token).__name__}")
        if not token:
            break
        if token in seen:
            raise SourceFormatError(f"{where}.nextPageToken: repeats an earlier page's token; "
                                    "stopping instead of looping")
        if page_no >= limits.max_pages:
            raise limits.exceeded(f"gcp billing services/{service_id}/skus", "max_pages",
                                  "the listing has more pages")
        seen.add(token)


def fetch_live(options: Mapping, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               environ: Mapping[str, str] = os.environ, slots: CloudSlots | None = None) -> list[dict]:
    """Rows of raw.gcp_billing from the Billing Catalog API, narrowed by the options' SKU filters (logged). With
    `slots`, services are fetched side by side, each holding one of GCP's slots; rows come in service order."""
    check_options(options)
    api_key = _api_key(options, environ)

    def fetch_service(service: str) -> tuple[list[dict], SkuFilter]:
        scope = sku_filter(options)  # one per service: the threads never count into the same one
        return rows_from_pages(service_pages(options, service, api_key, sleep=sleep, limits=limits),
                               sku_filter=scope), scope

    fetched = in_order(fetch_service, _services(options), slots)
    rows = [row for service_rows, _ in fetched for row in service_rows]
    scope = sku_filter(options)
    log.info("gcp billing: kept %d of %d SKUs read (description_contains=%s, regions=%s); %d rows",
             sum(s.kept for _, s in fetched), sum(s.read for _, s in fetched),
             scope.description_contains or "any", scope.regions or "any", len(rows))
    return rows


check_live_options = check_options  # the name every live kind gives it (run by `hweval check` too)
