"""Rows of raw.model_api_prices shared by the hosted-model price kinds: one row per token price, its unit guarded.

Each kind (bedrock_pricing, azure_model_prices, vertex_model_prices) names the token units its API writes and how
many tokens each stands for; a price in another unit keeps its row with `unit_problem` saying why, and the suite
quarantines it with that reason (a price per image, per hour or per 1K characters cannot be put per token).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flows.sources._common import to_float

TABLE = "model_api_prices"
TOKENS_PER_MILLION = 1_000_000
DIRECTIONS = ("input", "output")

# a meter or SKU that prices cached, batch or provisioned tokens is not the on-demand input/output price
_NOT_ON_DEMAND = re.compile(r"\b(cd|cchd|cached|cache|batch|prvsn|provisioned|ft|fine[- ]?tun\w*)\b", re.IGNORECASE)


@dataclass
class ItemCount:
    """What a token-price kind read and what became rows (scope, not validation), so that the run's log can say so as
    gcp_billing, gcp_machine_types and azure_skus do: items read, kept, and skipped by each of the kind's reasons
    (every reason named, 0 too, in the kind's order)."""

    reasons: Iterable[str] = ()
    read: int = 0
    kept: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.skipped = dict.fromkeys(self.reasons, 0) | self.skipped

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1  # a KeyError for a reason the kind did not name

    def summary(self, items: str, rows: int) -> str:
        """As the log says it: "kept 2 of 5 meters read, 2 rows; skipped: 1 <reason>, 2 <reason>"."""
        skipped = ", ".join(f"{n} {reason}" for reason, n in self.skipped.items())
        return f"kept {self.kept} of {self.read} {items} read, {rows} rows; skipped: {skipped or 'none'}"


def unit_problem(unit: Any, units: Mapping[str, float]) -> str | None:
    """Why `unit` cannot be priced per token (None when it is one of `units`)."""
    if isinstance(unit, str) and unit.strip() in units:
        return None
    expected = " or ".join(repr(u) for u in units)
    return f"unit {unit!r} is not a token unit (expected {expected}): its price cannot be put per million tokens"


def token_price_row(*, unit: Any, price_text: Any, units: Mapping[str, float], **fields: Any) -> dict:
    """One row: the price as listed, and normalised to USD per million tokens when its unit is a token unit."""
    price = to_float(price_text)
    problem = unit_problem(unit, units)
    tokens_per_unit = None if problem else units[unit.strip()]
    return fields | {
        "unit": unit,
        "tokens_per_unit": tokens_per_unit,
        "unit_problem": problem,
        "price_text": None if price_text is None else str(price_text),
        "price_usd": price,
        "usd_per_million_tokens": (price * TOKENS_PER_MILLION / tokens_per_unit
                                   if price is not None and tokens_per_unit else None),
    }


def split_direction(text: str, words: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(model name, direction) from a meter name or SKU description such as "Llama 3.1 8B Instruct Inp Glbl Tokens":
    the text before the first direction word (`words`: word -> input | output), and that word's direction; (None,
    None) when no direction word is in it or it prices cached, batch or provisioned tokens."""
    if _NOT_ON_DEMAND.search(text):
        return None, None
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    match = pattern.search(text)
    if match is None:
        return None, None
    direction = next(d for w, d in words.items() if w.lower() == match.group(1).lower())
    return text[:match.start()].strip(" -:") or None, direction
