"""Your own prices (a CSV or YAML price sheet) -> rows of raw.price_sheet.

Three kinds of entry, one row each:

- `quote`: a private price for an instance (`cloud`, `region`, `instance_type`, `usd_per_hour`; a commitment may
  add `term_months` and `upfront_usd`, amortised like a reserved term); an instance type catalogs/instances.yaml
  does not list (a neocloud's box, a reseller's system) gives its hardware: `accelerator` and `accelerator_count`;
- `discount`: a negotiated `percent_off` a public price (`cloud`, `instance_type` or `*`, `applies_to` a pricing
  term, optionally one `region`);
- `on_prem`: hardware you own (`site`, `name`, `accelerator`, `accelerator_count`, `capex_usd` over `life_months`,
  `power_kw` at `usd_per_kwh` and `pue`, `opex_usd_per_month`).

An `accelerator` is a catalog id or one of its aliases (`accelerator_key` is the string as aliases are matched).

Every entry names its `source` (who quoted it, which invoice). The reader checks the shape (an entry kind it knows,
keys it knows and that apply to the kind, numbers where numbers go; a YAML sheet holds `entries:` and, for blocks
merged into them with `<<: *name`, `defaults:`); the expectation suite checks the values (and quarantines a YAML
entry whose number is written as text, `"19.92"`: never converted, as in the catalogs). A YAML text field holds its
value as written (`name: 0042` is '0042', not YAML 1.1's octal 34); a number YAML 1.1 reads other than as decimal
(`usd_per_hour: 030`, octal 24) is refused by the loader (flows/safe_yaml.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from flows import safe_yaml
from flows.names import normalise_alias
from flows.safe_yaml import cut, quoted
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    decode_text,
    load_csv_numbered,
    to_float,
)

TABLE = "price_sheet"

KINDS = {"quote", "discount", "on_prem"}
TEXT_FIELDS = ["kind", "cloud", "region", "instance_type", "pricing_term", "applies_to", "site", "name",
               "accelerator", "source", "note"]
NUMBER_FIELDS = ["usd_per_hour", "upfront_usd", "term_months", "accelerator_count", "percent_off", "capex_usd",
                 "life_months", "power_kw", "usd_per_kwh", "pue", "opex_usd_per_month"]
# the fields each kind of entry takes besides `kind`, `source` and `note`: another kind's field would land unused (a
# quote's percent_off, a discount's usd_per_hour) or be overwritten (an on_prem system's region by its site), so it is
# refused
KIND_FIELDS = {
    "quote": {"cloud", "region", "instance_type", "pricing_term", "usd_per_hour", "term_months", "upfront_usd",
              "accelerator", "accelerator_count"},
    "discount": {"cloud", "region", "instance_type", "applies_to", "percent_off"},
    "on_prem": {"site", "name", "accelerator", "accelerator_count", "capex_usd", "life_months", "power_kw",
                "usd_per_kwh", "pue", "opex_usd_per_month"},
}
EVERY_KIND_FIELDS = ("kind", "source", "note")
KIND_NAMES = {"quote": "a quote", "discount": "a discount", "on_prem": "an on_prem entry"}
# the top-level keys of a YAML sheet: its entries, and blocks of defaults that entries merge in (`<<: *name`), which
# are never read as entries themselves
TOP_LEVEL_KEYS = ("entries", "defaults")
# what an entry of a kind is given whatever it says (entry_row): written out, the same value is no misplaced field
SET_BY_KIND = {"on_prem": {"cloud": "on_prem", "pricing_term": "owned"}}
# what YAML reads as one value of a text field: a plain scalar is its text as written (PriceSheetLoader); one tagged
# explicitly (`!!int "42"`) lands as str() of its value
SCALARS = (str, int, float, bool, dt.date)


class PriceSheetLoader(safe_yaml.UniqueKeyLoader):
    """The loader of YAML price sheets: a text field's plain scalar is its text as written (`note: 1.50` is '1.50',
    `name: 0042` is '0042', not YAML 1.1's 1.5 and octal 34)."""

    text_keys = frozenset(TEXT_FIELDS)


def _listed(names) -> str:
    """Keys as a message names them: the first ten, each cut to MAX_QUOTED_CHARS."""
    shown = [cut(n) if isinstance(n, str) else quoted(n) for n in names]
    return ", ".join(shown[:10]) + (" ..." if len(shown) > 10 else "")


def entry_row(entry: Any, where: str, numbers_as_text: bool = False) -> dict:
    """One price-sheet entry (a YAML mapping or a CSV row) as a raw.price_sheet row. A CSV row's numbers are text
    (`numbers_as_text`); a YAML entry's number written as text (`usd_per_hour: "19.92"`: quoted, or `1e3`, which YAML
    reads as text) is not converted as if it were one: the row says so in `check_number_given_as_text`, and the
    suite quarantines it (numbers_not_text)."""
    if not isinstance(entry, dict):
        raise SourceFormatError(f"{where}: expected a mapping of field: value, got {type(entry).__name__}")
    unknown = [key for key in entry if key not in TEXT_FIELDS and key not in NUMBER_FIELDS]  # in the file's order
    if unknown:
        raise SourceFormatError(f"{where}: unknown field(s) {_listed(unknown)} "
                                f"(expected some of: {', '.join(TEXT_FIELDS + NUMBER_FIELDS)})")
    kind = entry.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise SourceFormatError(f"{where}.kind: {quoted(kind)}, expected one of {', '.join(sorted(KINDS))}")
    takes = [f for f in TEXT_FIELDS + NUMBER_FIELDS if f in KIND_FIELDS[kind] or f in EVERY_KIND_FIELDS]
    misplaced = [key for key in entry if key not in takes and entry[key] not in (None, "")
                 and entry[key] != SET_BY_KIND.get(kind, {}).get(key)]
    if misplaced:
        raise SourceFormatError(f"{where}: field(s) {_listed(misplaced)} do not apply to {KIND_NAMES[kind]} "
                                f"(it takes: {', '.join(takes)})")
    row: dict[str, Any] = {"entry_kind": kind, "source_ref": where}
    for name in TEXT_FIELDS[1:]:
        value = entry.get(name)
        if value is not None and not isinstance(value, SCALARS):  # str() would land "['eastus', 'westus3']"
            raise SourceFormatError(f"{where}.{name}: expected one value, got {type(value).__name__} {quoted(value)} "
                                    f"(for several, write one entry each)")
        row[name if name != "source" else "quoted_source"] = None if value in (None, "") else str(value)
    given_as_text = []
    for name in NUMBER_FIELDS:
        value = entry.get(name)
        if value in (None, ""):
            row[name] = None
            continue
        number = to_float(value)
        if number is None:
            raise SourceFormatError(f"{where}.{name}: {quoted(value)} is not a number")
        if isinstance(value, str) and not numbers_as_text:
            given_as_text.append(f"{name}: expected a number, got the text {quoted(value)}")
        row[name] = number
    if given_as_text:
        row["check_number_given_as_text"] = "; ".join(given_as_text)
    row["accelerator_key"] = normalise_alias(row["accelerator"]) if row["accelerator"] else None
    row |= SET_BY_KIND.get(kind, {})
    if kind == "on_prem":  # an on-prem system is an offer of its own: its site is the region, its name the instance
        row["region"] = row.pop("site")
        row["instance_type"] = row.pop("name")
    else:
        row.pop("site"), row.pop("name")
        if kind == "quote":  # the suite quarantines a term other than private (quote_term_private)
            row["pricing_term"] = row["pricing_term"] or "private"
    return row


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """A price sheet: YAML (`entries:` list) or CSV (one entry per record, header by name); a CSV entry is named by
    the line it starts on (a quoted field may span lines, blank lines are skipped)."""
    if path.suffix.lower() == ".csv":
        return [entry_row({k: v for k, v in row.items() if v != ""}, f"{label}: line {n}", numbers_as_text=True)
                for n, row in load_csv_numbered(path, label, limits=limits)]
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise SourceFormatError(f"{label}: a price sheet is a .csv or .yaml file")
    try:
        raw = safe_yaml.read_yaml_bytes(path, hint="; a longer price sheet can be a CSV, read line by line")
        if len(raw) > limits.max_file_bytes:
            raise limits.exceeded(label, "max_file_bytes", f"the file ({len(raw):,} bytes) is larger")
        data = safe_yaml.load(decode_text(raw, label), PriceSheetLoader)
    except OSError as exc:
        raise SourceFormatError(f"{label}: cannot be read ({exc.strerror})") from None
    except safe_yaml.YamlRefusedError as exc:
        raise SourceFormatError(f"{label}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise SourceFormatError(f"{label}: not valid YAML{at}: {cut(str(getattr(exc, 'problem', exc)))}") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise SourceFormatError(f"{label}: expected a mapping with an `entries:` list")
    unknown = [key for key in data if key not in TOP_LEVEL_KEYS]
    if unknown:  # a second list of entries would be ignored
        raise SourceFormatError(f"{label}: unknown top-level key(s) {_listed(unknown)} (expected `entries:`, and "
                                f"`defaults:` for blocks that entries merge in with `<<: *name`; every entry goes "
                                f"under `entries:`)")
    return [entry_row(entry, f"{label}: entries[{i}]") for i, entry in enumerate(data["entries"])]
