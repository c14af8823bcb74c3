"""Azure Resource SKUs (`Microsoft.Compute/skus`) pages -> rows of raw.instance_types, one per VM size and location.

Only `resourceType: virtualMachines` items become rows; the other resource types the listing mixes in (disks,
availabilitySets, hostGroups/hosts, snapshots ...) are counted and logged, not landed. A VM size's `capabilities`
(name/value strings) give `vCPUs`, `MemoryGB` (GiB, landed as MiB) and `GPUs`; they name no GPU model and no memory
per GPU, so a GPU row's device_name is the SKU's `family` (e.g. standardNDSH100v5Family) and device_memory_mib is
null. A size without GPUs (or with "0") is one CPU-only row. Counts stay as listed: a size listed with 12 GPUs lands
with 12, for instances.yaml to correct.

Live: the subscription from AZURE_SUBSCRIPTION_ID and a bearer token from AZURE_ACCESS_TOKEN (sent as a header,
never logged nor put in a message).
"""

from __future__ import annotations

import logging
import os
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
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
    odata_literal,
    require,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order
from flows.sources._hardware import count_text, hardware_row, items_of, number

TABLE = "instance_types"
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "azure"  # whose fetch_concurrency slots its regions hold
LISTING = "resource_skus"
VIRTUAL_MACHINES = "virtualMachines"
MIB_PER_GIB = 1024

log = logging.getLogger(__name__)


@dataclass
class SkuCount:
    """How many SKU items were read and how many were VM sizes (the rest are not landed)."""

    read: int = 0
    kept: int = 0


def capabilities(item: dict, where: str) -> dict[str, str]:
    """An item's `capabilities` name/value pairs as a dict (values as given: strings); a name given twice is refused,
    since which of its values is right cannot be told (a dict would keep the last)."""
    pairs: dict[str, str] = {}
    index_of: dict[str, int] = {}
    for j, pair in enumerate(items_of(item, "capabilities", where, required=False)):
        pair_where = f"{where}.capabilities[{j}]"
        name = require(pair, "name", pair_where, str)
        if name in index_of:
            raise SourceFormatError(f"{pair_where}.name: {excerpt(name)} again, first given at capabilities"
                                    f"[{index_of[name]}] (expected each capability once)")
        index_of[name] = j
        value = require(pair, "value", pair_where)
        if isinstance(value, (dict, list)):
            raise SourceFormatError(f"{pair_where}.value: expected a string, got {type(value).__name__} "
                                    f"{excerpt(value)}")
        pairs[name] = None if value is None else str(value)
    return pairs


def sku_row(item: dict, where: str, region: str | None) -> dict:
    """The row of one virtualMachines item."""
    name = require(item, "name", where, str)
    caps = capabilities(item, where)
    locations = [loc for loc in items_of(item, "locations", where, required=False) if isinstance(loc, str)]
    location = (locations[0] if locations else region or "").lower() or None  # Azure location names ignore case
    gpus = count_text(caps.get("GPUs"))
    gpu_count = to_float(gpus)
    memory_gib = number(caps.get("MemoryGB"), f"{where}.capabilities MemoryGB")
    row = {"cloud": "azure", "listing": LISTING, "region": location, "instance_type": name,
           "vcpu_text": count_text(caps.get("vCPUs")), "vcpu": to_float(caps.get("vCPUs")),
           "memory_mib": None if memory_gib is None else memory_gib * MIB_PER_GIB,
           "cpu_architecture": caps.get("CpuArchitectureType"), "source_ref": where}
    if gpus and gpu_count != 0:
        family = item.get("family")
        row |= {"device_kind": "gpu", "device_name": family if isinstance(family, str) else None,
                "device_count_text": gpus, "device_count": gpu_count}
    return hardware_row(**row)


def sku_rows(page: Any, where: str, region: str | None = None, count: SkuCount | None = None) -> Iterator[dict]:
    """One row per virtualMachines item of one Resource SKUs page (`value`)."""
    count = count if count is not None else SkuCount()
    for i, item in enumerate(require(page, "value", where, list)):
        item_where = f"{where}: value[{i}]"
        count.read += 1
        if require(item, "resourceType", item_where, str) != VIRTUAL_MACHINES:
            continue
        count.kept += 1
        yield sku_row(item, item_where, region)


def rows_from_pages(pages: Iterable[tuple[str, Any]], region: str | None = None) -> list[dict]:
    count = SkuCount()
    rows = [row for where, page in pages for row in sku_rows(page, where, region, count)]
    log.info("azure skus%s: kept %d virtualMachines items of %d SKU items read (other resource types are not "
             "landed)", f" {region}" if region else "", count.kept, count.read)
    return rows


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One saved Resource SKUs page, read exactly as a live one; `region` stands in for an item without locations."""
    page = load_json(path, label, limits)
    if not isinstance(page, dict):
        raise SourceFormatError(f"{label}: expected a Resource SKUs response object, got {type(page).__name__}")
    return rows_from_pages([(label, page)], region)


# ---------------------------------------------------------------- live fetch (Azure Resource Manager)
ENDPOINT = "https://management.azure.com"
API_VERSION = "2021-07-01"
SUBSCRIPTION_ENV = "AZURE_SUBSCRIPTION_ID"
TOKEN_ENV = "AZURE_ACCESS_TOKEN"
OPTION_KEYS = ("regions", "endpoint", "api_version")


def check_options(options: Mapping) -> None:
    """SourceFormatError for an options block this source cannot use: unknown keys, missing or empty regions."""
    if not isinstance(options, Mapping):
        raise SourceFormatError(f"azure_skus live options: expected a mapping, got {type(options).__name__}")
    for key in options:
        if key not in OPTION_KEYS:
            raise SourceFormatError(f"azure_skus live options: unknown key {key!r} (allowed: {', '.join(OPTION_KEYS)})")
    name_list(options, "regions", "azure_skus live options", required=True, hint=" (location names, e.g. eastus)")
    for key in ("endpoint", "api_version"):
        if key in options and not (isinstance(options[key], str) and options[key].strip()):
            raise SourceFormatError(f"azure_skus live options: {key!r}: expected a non-empty string, "
                                    f"got {excerpt(options[key])}")


check_live_options = check_options  # the name every live kind gives it (run by `hweval check` too)


def credentials(environ: Mapping[str, str]) -> tuple[str, str]:
    """(subscription id, bearer token) from the environment, or a LiveSourceError naming what to set."""
    subscription = (environ.get(SUBSCRIPTION_ENV) or "").strip()
    token = (environ.get(TOKEN_ENV) or "").strip()
    missing = [name for name, value in ((SUBSCRIPTION_ENV, subscription), (TOKEN_ENV, token)) if not value]
    if missing:
        raise LiveSourceError(
            f"azure skus: no credentials: set {' and '.join(missing)} ({SUBSCRIPTION_ENV}: the subscription whose "
            f"Resource SKUs are listed; {TOKEN_ENV}: a bearer token for Azure Resource Manager, e.g. from "
            f"`az account get-access-token --query accessToken -o tsv`)")
    return subscription, token


def region_pages(options: Mapping, region: str, subscription: str, token: str, *, sleep=time.sleep,
                 limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """(where, page) for every Resource SKUs page of one location, following nextLink (options already checked)."""
    endpoint = options.get("endpoint", ENDPOINT).rstrip("/")
    url: str | None = (f"{endpoint}/subscriptions/{urllib.parse.quote(subscription, safe='')}"
                       f"/providers/Microsoft.Compute/skus")
    params: dict | None = {"api-version": options.get("api_version", API_VERSION),
                           "$filter": f"location eq {odata_literal(region)}"}
    headers = {"Authorization": f"Bearer {token}"}
    seen = _http.PagesSeen(_http.with_query(url, params))
    page_no = 0
    while url:
        page_no += 1
        where = f"azure skus {region} page {page_no}"
        try:
            page = _http.get_json(url, params=params, headers=headers, what=where, sleep=sleep, limits=limits)
        except LiveSourceError as exc:  # a server that echoes the token never gets it into a message
            raise LiveSourceError(str(exc).replace(token, "***")) from None
        yield where, page
        next_link = page.get("nextLink") if isinstance(page, dict) else None
        if next_link is not None and not isinstance(next_link, str):
            raise SourceFormatError(f"{where}.nextLink: expected a URL or null, got {excerpt(next_link)}")
        if next_link:  # it would carry the token: only where the listing started
            _http.same_origin_link(next_link, endpoint, f"{where}.nextLink")
            seen.follow(next_link, f"{where}.nextLink")
        if next_link and page_no >= limits.max_pages:
            raise limits.exceeded(f"azure skus {region}", "max_pages", "the listing has more pages")
        url, params = next_link or None, None  # the link already carries the whole query


def fetch_live(options: Mapping, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               environ: Mapping[str, str] = os.environ, slots: CloudSlots | None = None) -> list[dict]:
    """Rows of raw.instance_types from the Resource SKUs API, one listing per location in `regions`. With `slots`,
    locations are fetched side by side, each holding one of Azure's slots; rows come in location order."""
    check_options(options)
    subscription, token = credentials(environ)

    def region_rows(region: str) -> list[dict]:
        pages = region_pages(options, region, subscription, token, sleep=sleep, limits=limits)
        return rows_from_pages(pages, region)

    return [row for rows in in_order(region_rows, name_list(options, "regions", "azure_skus live options",
                                                          required=True), slots) for row in rows]
