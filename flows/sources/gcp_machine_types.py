"""Compute Engine `aggregated/machineTypes` and `aggregated/acceleratorTypes` pages -> rows of raw.instance_types.

Both listings group their items by zone (`items: {"zones/us-central1-a": {"machineTypes": [...]}}`); a zone
with none holds only a `warning`. A machine type gives one row per `accelerators[]` entry (guestAcceleratorType as
device_name, e.g. nvidia-h100-80gb, and guestAcceleratorCount), or one CPU-only row; the API lists no memory per
accelerator, so device_memory_mib is null. An accelerator type is a row of its own (listing accelerator_types,
instance_type null) with its `description` (e.g. "NVIDIA H100 80GB") and `maximumCardsPerInstance`: staging takes
a GPU's manufacturer from it. A snapshot holds one response per file; which listing it is, its items say.

Live: the project from GOOGLE_CLOUD_PROJECT and a bearer token from GOOGLE_OAUTH_ACCESS_TOKEN (sent as a header,
never logged nor put in a message).
"""

from __future__ import annotations

import logging
import os
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
)
from flows.sources._concurrency import CloudSlots, in_order
from flows.sources._hardware import (
    count_text,
    gcp_region_of_zone,
    hardware_row,
    items_of,
    number,
    object_at,
    text_at,
)

TABLE = "instance_types"
CLOUD = "gcp"  # whose fetch_concurrency slots its listings hold
MACHINE_TYPES, ACCELERATOR_TYPES = "machineTypes", "acceleratorTypes"
LISTINGS = {MACHINE_TYPES: "machine_types", ACCELERATOR_TYPES: "accelerator_types"}  # scoped-list key -> listing

log = logging.getLogger(__name__)


@dataclass
class Scope:
    """Which items become rows (scope, not validation): `regions` for both listings, `machine_type_prefixes` for
    machine types; counts what it read and kept so that the run can say so."""

    regions: Collection[str] | None = None
    machine_type_prefixes: Collection[str] | None = None
    read: int = 0
    kept: int = 0

    def keep(self, listing: str, name: str, region: str | None) -> bool:
        self.read += 1
        if self.regions and region not in self.regions:
            return False
        if listing == MACHINE_TYPES and self.machine_type_prefixes and not name.startswith(
                tuple(self.machine_type_prefixes)):
            return False
        self.kept += 1
        return True


def device_kind(accelerator_type: str) -> str:
    """tpu for Cloud TPU accelerator names (tpu-v5-lite-podslice, ct6e ...); every other Compute Engine one is a GPU."""
    return "tpu" if accelerator_type.startswith(("tpu", "ct")) else "gpu"


def _zone(item: dict, scope: str, where: str) -> str | None:
    """The item's zone name: its `zone` (a name or a URL ending in one), else the scope key's (zones/<zone>)."""
    zone = text_at(item, "zone", where)
    if zone:
        return zone.rstrip("/").rsplit("/", 1)[-1]
    return scope.removeprefix("zones/") if scope.startswith("zones/") else None


def machine_type_rows(item: dict, where: str, zone: str | None) -> list[dict]:
    name = require(item, "name", where, str)
    cpus, memory = item.get("guestCpus"), item.get("memoryMb")
    host = {"cloud": "gcp", "listing": LISTINGS[MACHINE_TYPES], "region": gcp_region_of_zone(zone), "zone": zone,
            "instance_type": name, "vcpu_text": count_text(cpus), "vcpu": number(cpus, f"{where}.guestCpus"),
            "memory_mib": number(memory, f"{where}.memoryMb"),
            "cpu_architecture": text_at(item, "architecture", where)}
    rows = []
    for j, accelerator in enumerate(items_of(item, "accelerators", where, required=False)):
        acc_where = f"{where}.accelerators[{j}]"
        acc_type = require(accelerator, "guestAcceleratorType", acc_where, str)
        count = accelerator.get("guestAcceleratorCount")
        rows.append(hardware_row(**host, device_kind=device_kind(acc_type), device_name=acc_type,
                                 device_count_text=count_text(count),
                                 device_count=number(count, f"{acc_where}.guestAcceleratorCount"),
                                 source_ref=acc_where))
    return rows or [hardware_row(**host, source_ref=where)]


def accelerator_type_row(item: dict, where: str, zone: str | None) -> dict:
    name = require(item, "name", where, str)
    cards = item.get("maximumCardsPerInstance")
    return hardware_row(cloud="gcp", listing=LISTINGS[ACCELERATOR_TYPES], region=gcp_region_of_zone(zone),
                        zone=zone, device_kind=device_kind(name), device_name=name,
                        device_description=text_at(item, "description", where),
                        max_devices_per_instance=number(cards, f"{where}.maximumCardsPerInstance"), source_ref=where)


def _asked_for(location: Any, scope: Scope | None) -> bool:
    """Whether an unreachable location ("zones/us-east5-a", "regions/us-east5", "global") lies where a live listing
    asks for types: anywhere without `regions`, else in one of them. A listing read from a file (no scope) asks for
    nothing: what it holds is what was saved, and its unreachable locations are only logged."""
    if scope is None:
        return False
    if not scope.regions:
        return True
    name = str(location).rsplit("/", 1)[-1]
    return (gcp_region_of_zone(name) or name) in scope.regions


def hardware_rows(page: Any, where: str, scope: Scope | None = None) -> Iterator[dict]:
    """The rows of one aggregated machineTypes or acceleratorTypes page; `scope` (default: all) narrows them."""
    if not isinstance(page, dict):
        raise SourceFormatError(f"{where}: expected an aggregated list object, got {type(page).__name__}")
    unreachable = items_of(page, "unreachables", where, required=False)
    asked = [loc for loc in unreachable if _asked_for(loc, scope)]
    if asked:  # their types would be missing from a listing that passed for whole: stale on the last good rows
        raise LiveSourceError(f"{where}: {len(asked)} location(s) the listing asks for were unreachable "
                              f"(returnPartialSuccess): {excerpt(asked)}; their types would be missing")
    if unreachable:
        log.warning("%s: %d locations were unreachable and are missing from the listing (none the run asks for): "
                    "%s", where, len(unreachable), excerpt(unreachable))
    for key, scoped in object_at(page, "items", where).items():
        scope_where = f"{where}: items[{key!r}]"
        if not isinstance(scoped, dict):
            raise SourceFormatError(f"{scope_where}: expected a scoped list object, got {type(scoped).__name__}")
        for listing in LISTINGS:
            for j, item in enumerate(items_of(scoped, listing, scope_where, required=False)):
                item_where = f"{scope_where}.{listing}[{j}]"
                if not isinstance(item, dict):
                    raise SourceFormatError(f"{item_where}: expected an object, got {type(item).__name__}")
                zone = _zone(item, key, item_where)
                name = require(item, "name", item_where, str)
                if scope is not None and not scope.keep(listing, name, gcp_region_of_zone(zone)):
                    continue
                if listing == MACHINE_TYPES:
                    yield from machine_type_rows(item, item_where, zone)
                else:
                    yield accelerator_type_row(item, item_where, zone)


def rows_from_pages(pages: Iterable[tuple[str, Any]], scope: Scope | None = None) -> list[dict]:
    return [row for where, page in pages for row in hardware_rows(page, where, scope)]


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """One saved aggregated machineTypes or acceleratorTypes response, read exactly as a live page."""
    return rows_from_pages([(label, load_json(path, label, limits))])


# ---------------------------------------------------------------- live fetch (Compute Engine API v1)
ENDPOINT = "https://compute.googleapis.com"
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
TOKEN_ENV = "GOOGLE_OAUTH_ACCESS_TOKEN"
MAX_RESULTS = 500  # the API's largest page
OPTION_KEYS = ("regions", "machine_type_prefixes", "endpoint")


def _string_list(options: Mapping, key: str) -> list[str] | None:
    return name_list(options, key, "gcp_machine_types live options", hint=f" (leave `{key}` out for no filter)")


def check_options(options: Mapping) -> None:
    """SourceFormatError for an options block this source cannot use (unknown keys, wrong types)."""
    if not isinstance(options, Mapping):
        raise SourceFormatError(f"gcp_machine_types live options: expected a mapping, got {type(options).__name__}")
    for key in options:
        if key not in OPTION_KEYS:
            raise SourceFormatError(
                f"gcp_machine_types live options: unknown key {key!r} (allowed: {', '.join(OPTION_KEYS)})")
    for key in ("regions", "machine_type_prefixes"):
        _string_list(options, key)
    if "endpoint" in options and not (isinstance(options["endpoint"], str) and options["endpoint"].strip()):
        raise SourceFormatError(f"gcp_machine_types live options: 'endpoint': expected a non-empty string, "
                                f"got {excerpt(options['endpoint'])}")


check_live_options = check_options  # the name every live kind gives it (run by `hweval check` too)


def credentials(environ: Mapping[str, str]) -> tuple[str, str]:
    """(project, bearer token) from the environment, or a LiveSourceError naming what to set."""
    project = (environ.get(PROJECT_ENV) or "").strip()
    token = (environ.get(TOKEN_ENV) or "").strip()
    missing = [name for name, value in ((PROJECT_ENV, project), (TOKEN_ENV, token)) if not value]
    if missing:
        raise LiveSourceError(
            f"gcp machine types: no credentials: set {' and '.join(missing)} ({PROJECT_ENV}: the project whose "
            f"Compute Engine listings are read; {TOKEN_ENV}: an OAuth access token, e.g. from "
            f"`gcloud auth print-access-token`)")
    return project, token


def listing_pages(options: Mapping, listing: str, project: str, token: str, *, sleep=time.sleep,
                  limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict]]:
    """(where, page) for every page of one aggregated listing, following nextPageToken (options already checked)."""
    endpoint = options.get("endpoint", ENDPOINT).rstrip("/")
    url = f"{endpoint}/compute/v1/projects/{urllib.parse.quote(project, safe='')}/aggregated/{listing}"
    headers = {"Authorization": f"Bearer {token}"}
    token_seen: set[str] = set()
    page_token, page_no = "", 0
    while True:
        page_no += 1
        where = f"gcp {listing} page {page_no}"
        params = {"maxResults": MAX_RESULTS, "returnPartialSuccess": "true"}
        if page_token:
            params["pageToken"] = page_token
        try:
            page = _http.get_json(url, params=params, headers=headers, what=where, sleep=sleep, limits=limits)
        except LiveSourceError as exc:  # a server that echoes the token never gets it into a message
            raise LiveSourceError(str(exc).replace(token, "***")) from None
        yield where, page
        page_token = page.get("nextPageToken") if isinstance(page, dict) else None
        if page_token is not None and not isinstance(page_token, str):
            raise SourceFormatError(f"{where}.nextPageToken: expected a string, got {type(page_token).__name__}")
        if not page_token:
            return
        if page_token in token_seen:
            raise SourceFormatError(f"{where}.nextPageToken: repeats an earlier page's token; "
                                    "stopping instead of looping")
        if page_no >= limits.max_pages:
            raise limits.exceeded(f"gcp {listing}", "max_pages", "the listing has more pages")
        token_seen.add(page_token)


def fetch_live(options: Mapping, *, limits: SourceLimits = DEFAULT_LIMITS, sleep=time.sleep,
               environ: Mapping[str, str] = os.environ, slots: CloudSlots | None = None) -> list[dict]:
    """Rows of raw.instance_types from both aggregated listings (machine types first), narrowed by `regions` and
    `machine_type_prefixes` (logged). With `slots`, the two listings are fetched side by side."""
    check_options(options)
    project, token = credentials(environ)

    def listing_rows(listing: str) -> tuple[list[dict], Scope]:
        scope = Scope(regions=_string_list(options, "regions"),
                      machine_type_prefixes=_string_list(options, "machine_type_prefixes"))
        pages = listing_pages(options, listing, project, token, sleep=sleep, limits=limits)
        return rows_from_pages(pages, scope), scope

    fetched = in_order(listing_rows, list(LISTINGS), slots)
    rows = [row for listing_rows_, _ in fetched for row in listing_rows_]
    log.info("gcp machine types: kept %d of %d machine and accelerator types read; %d rows",
             sum(s.kept for _, s in fetched), sum(s.read for _, s in fetched), len(rows))
    return rows
