"""The row of raw.instance_types that the three instance-hardware kinds (AWS, Azure, GCP) share, and its helpers.

One row per device group of one instance type as one region (GCP: one zone) lists it; a CPU-only type has one row
with the device columns null. Figures are kept as the API gives them (a wrong one stays visible, for instances.yaml
to correct): counts also as published text, so that validation can refuse a fractional one.
"""

from __future__ import annotations

import re
from typing import Any

from flows.sources._common import SourceFormatError, excerpt, to_float

TABLE = "instance_types"

COLUMNS = (
    "cloud", "listing", "region", "zone", "instance_type",
    "device_kind", "device_manufacturer", "device_name", "device_description",
    "device_count_text", "device_count", "device_memory_mib", "max_devices_per_instance",
    "vcpu_text", "vcpu", "memory_mib", "cpu_manufacturer", "cpu_architecture",
    "source_ref",
)

_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")


def hardware_row(**values: Any) -> dict:
    """A row with every column of raw.instance_types: the given values, None for the rest."""
    unknown = sorted(set(values) - set(COLUMNS))
    if unknown:  # a typo in a source module, not bad data
        raise TypeError(f"not columns of raw.{TABLE}: {', '.join(unknown)}")
    return dict.fromkeys(COLUMNS) | values


def count_text(value: Any) -> str | None:
    """A count as published ("8", 8, "0.25"), as text; None when absent. Validation refuses one that is not whole."""
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value).strip()


def number(value: Any, where: str) -> float | None:
    """A JSON number or numeric string; a value of another type (an object, a list) is a format error naming where."""
    if isinstance(value, (dict, list)):
        raise SourceFormatError(f"{where}: expected a number, got {type(value).__name__} {excerpt(value)}")
    return to_float(value)


def items_of(obj: Any, key: str, where: str, *, required: bool = True) -> list:
    """obj[key] as a list ([] when absent and not required); anything else is a format error naming where."""
    if not isinstance(obj, dict):
        raise SourceFormatError(f"{where}: expected an object, got {type(obj).__name__} {excerpt(obj)}")
    if key not in obj or obj[key] is None:
        if required:
            raise SourceFormatError(f"{where}: missing key {key!r}")
        return []
    value = obj[key]
    if not isinstance(value, list):
        raise SourceFormatError(f"{where}.{key}: expected a list, got {type(value).__name__} {excerpt(value)}")
    return value


def object_at(obj: dict, key: str, where: str) -> dict:
    """obj[key] as an object ({} when absent or null); anything else is a format error naming where."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SourceFormatError(f"{where}.{key}: expected an object, got {type(value).__name__} {excerpt(value)}")
    return value


def text_at(obj: dict, key: str, where: str) -> str | None:
    """obj[key] as text (None when absent); a list or object there is a format error naming where."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise SourceFormatError(f"{where}.{key}: expected a string, got {type(value).__name__} {excerpt(value)}")
    return str(value)


def gcp_region_of_zone(zone: str | None) -> str | None:
    """us-central1-a -> us-central1."""
    match = _GCP_ZONE.match(zone or "")
    return match.group(1) if match else None
