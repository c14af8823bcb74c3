"""EC2 spot price history (`ec2.describe_spot_price_history`) pages -> rows of raw.aws_spot.

One row per price point as published; staging keeps the latest price per region, availability zone and
instance type, with its timestamp. Spot is its own pricing term: it never stands in for on-demand.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from flows.sources import _aws
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    check_number_option,
    excerpt,
    load_json,
    name_list,
    require,
    to_float,
)
from flows.sources._concurrency import CloudSlots

TABLE = "aws_spot"
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "aws"  # whose fetch_concurrency slots its regions hold
LIVE_OPTIONS = {"regions", "instance_types", "product_descriptions", "lookback_hours"}
WHAT = "aws_spot live options"  # how its live options' errors begin
DEFAULT_LOOKBACK_HOURS = 6  # `lookback_hours` when sources.yaml gives none: the latest prices are what staging keeps
MAX_LOOKBACK_HOURS = 24 * 90  # EC2 keeps 90 days of spot price history

_REGION_OF_ZONE = re.compile(r"^([a-z]{2}(?:-gov)?-[a-z]+-\d+)")


def region_of_zone(zone: str | None) -> str | None:
    """us-east-1a -> us-east-1 (also for Local Zones such as us-east-1-bos-1a)."""
    match = _REGION_OF_ZONE.match(zone or "")
    return match.group(1) if match else None


def utc_text(stamp: Any) -> str:
    """A spot price's Timestamp as `YYYY-MM-DDTHH:MM:SSZ` in UTC, the one form staging orders the prices by: boto3
    parses it into a datetime, a saved response holds ISO text (`2026-08-31T01:00:00Z`, or `2026-08-31 23:00:00+00:00`
    as `json.dump(..., default=str)` writes it). Text that is not a timestamp with its offset is kept as written, and
    the suite quarantines it (price_timestamp_utc)."""
    if isinstance(stamp, str):
        try:
            parsed = dt.datetime.fromisoformat(stamp.strip())
        except ValueError:
            return stamp
        if parsed.tzinfo is None:  # no offset: which hour it names is unknown
            return stamp
        stamp = parsed
    if isinstance(stamp, dt.datetime):
        return stamp.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(stamp)


def price_rows(page: Any, where: str, region: str | None = None) -> Iterator[dict]:
    history = require(page, "SpotPriceHistory", where, list)
    for i, item in enumerate(history):
        item_where = f"{where}: SpotPriceHistory[{i}]"
        if not isinstance(item, dict):
            raise SourceFormatError(f"{item_where}: expected an object, got {type(item).__name__} {excerpt(item)}")
        # a price point without its zone or time lands in quarantine (availability_zone_present,
        # price_timestamp_present), as one without its price does: not a failed source
        zone = item.get("AvailabilityZone")
        if zone is not None and not isinstance(zone, str):
            raise SourceFormatError(f"{item_where}.AvailabilityZone: expected a string, got "
                                    f"{type(zone).__name__} {excerpt(zone)}")
        stamp = item.get("Timestamp")
        price_text = item.get("SpotPrice")
        yield {
            "region": region or region_of_zone(zone),
            "availability_zone": zone,
            "availability_zone_id": item.get("AvailabilityZoneId"),
            "instance_type": item.get("InstanceType"),
            "product_description": item.get("ProductDescription"),
            "price_text": None if price_text is None else str(price_text),
            "price_usd": to_float(price_text),
            "price_timestamp": None if stamp is None else utc_text(stamp),
            "source_ref": item_where,
        }


def rows_from_pages(pages: Iterable[tuple[str, Any, str | None]]) -> list[dict]:
    return [row for where, page, region in pages for row in price_rows(page, where, region)]


def _history_query(options: dict, now: dt.datetime) -> dict:
    """describe_spot_price_history arguments: `lookback_hours` ago (default 6) to now, the options' filters."""
    start = now - dt.timedelta(hours=float(options.get("lookback_hours", DEFAULT_LOOKBACK_HOURS)))
    kwargs = {"StartTime": start, "EndTime": now,
              "ProductDescriptions": name_list(options, "product_descriptions", WHAT) or ["Linux/UNIX"]}
    if instance_types := name_list(options, "instance_types", WHAT):
        kwargs["InstanceTypes"] = instance_types
    return kwargs


def region_pages(client, region: str, query: dict, *, sleep=time.sleep,
                 limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict, str]]:
    """One region's spot price history pages, through that region's EC2 client."""
    what = f"ec2.describe_spot_price_history {region}"
    for n, page in enumerate(_aws.pages(client, "describe_spot_price_history", what, sleep=sleep, limits=limits,
                                        **query), start=1):
        yield f"{what} page {n}", page, region


def pages_from_api(session, options: dict, *, now: dt.datetime | None = None, sleep=time.sleep,
                   limits: SourceLimits = DEFAULT_LIMITS) -> Iterator[tuple[str, dict, str]]:
    """Spot price history pages per region, from `lookback_hours` ago (default 6) to now."""
    query = _history_query(options, now or dt.datetime.now(dt.UTC))
    for region in name_list(options, "regions", WHAT, required=True):
        yield from region_pages(_aws.client("ec2", region, session), region, query, sleep=sleep, limits=limits)


def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    _aws.check_options(options, LIVE_OPTIONS, {"regions"}, "aws_spot")
    name_list(options, "regions", WHAT, required=True)
    name_list(options, "instance_types", WHAT, hint=" (leave it out for every type)")
    name_list(options, "product_descriptions", WHAT, hint=" (leave it out for Linux/UNIX)")
    check_number_option(options, "lookback_hours", MAX_LOOKBACK_HOURS, "aws_spot",
                        "MAX_LOOKBACK_HOURS: the 90 days of spot prices EC2 keeps")


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS, session=None, now: dt.datetime | None = None,
               sleep=time.sleep, slots: CloudSlots | None = None) -> list[dict]:
    """Spot prices for `regions` (required); `instance_types` narrows the call (default: every type). With `slots`,
    regions are fetched side by side, each holding one of AWS's slots; rows come in region order either way."""
    check_live_options(options)
    query = _history_query(options, now or dt.datetime.now(dt.UTC))
    regions = name_list(options, "regions", WHAT, required=True)
    return _aws.rows_by_region("ec2", regions, session, slots, lambda client, region: rows_from_pages(
        region_pages(client, region, query, sleep=sleep, limits=limits)))


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """A saved describe_spot_price_history response (Timestamp as ISO text), read exactly as a live page."""
    page = load_json(path, label, limits)
    if not isinstance(page, dict):
        raise SourceFormatError(f"{label}: expected a describe_spot_price_history response object")
    return rows_from_pages([(label, page, region)])
