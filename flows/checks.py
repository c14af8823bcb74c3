"""Checks that need more than one row: columns derived before validation so that row-level expectations can
catch duplicates, spot prices at or above on-demand, accelerator counts that disagree with the catalog; and the
catalog's own figures checked against plausible ranges.

Derived columns are named `check_*`: the expectation suites read them, ops.quarantine keeps them in the row it
stores, and they are not landed in raw tables.
"""

from __future__ import annotations

CHECK_PREFIX = "check_"


def add_check_columns(batches, catalog, con) -> None:
    """Add the `check_*` columns each batch's suite reads (in place)."""


def check_catalog(catalog) -> None:
    """Raise CatalogError when a catalog figure fails its expectation (e.g. trn2 memory as 512 GiB per chip)."""
