"""How names from sources and catalogs are matched: the one normalisation the catalog and the source readers share."""

from __future__ import annotations


def normalise_alias(raw: str) -> str:
    """Aliases match exactly, ignoring case and surrounding or repeated whitespace."""
    return " ".join(raw.split()).casefold()
