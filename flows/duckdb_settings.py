"""The DuckDB settings every connection hweval opens shares: its memory limit.

HWEVAL_DUCKDB_MEMORY_LIMIT (a size: 2GB, 1.5GiB, 512MB) caps the memory DuckDB may use in each connection of a run
(the warehouse, the DuckLake, the offer-file scan) and of `hweval query` and `hweval sources`; past it DuckDB spills to
disk where an operator can (next to the warehouse file: `<warehouse>.tmp`), and a query that cannot spill fails with
DuckDB's "Out of Memory Error", naming its model. Unset, DuckDB takes 80% of the machine's memory. Measured on
`make bench`'s market of 35,000 offers: see the README (Speed).
"""

from __future__ import annotations

import os
import re

MEMORY_LIMIT_ENV = "HWEVAL_DUCKDB_MEMORY_LIMIT"
# the embedded snapshot's models build in 256 MiB, not in 128 (int_inference_estimates_computed: measured)
MIN_MEMORY_LIMIT_BYTES = 256 * 2**20
# the units DuckDB's memory_limit reads: 1000^i and 1024^i bytes
UNITS = {"kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
         "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*([a-z]{2,3})", re.IGNORECASE)


class MemoryLimitError(ValueError):
    """An HWEVAL_DUCKDB_MEMORY_LIMIT that is no size DuckDB can run in (exit 2, one line)."""


def memory_limit(environ: dict[str, str] | None = None) -> str | None:
    """DuckDB's memory_limit for hweval's connections (HWEVAL_DUCKDB_MEMORY_LIMIT), or None to leave DuckDB's own."""
    env = os.environ if environ is None else environ
    text = env.get(MEMORY_LIMIT_ENV, "").strip()
    if not text:
        return None
    match = _SIZE.fullmatch(text)
    if match is None or match.group(2).lower() not in UNITS:
        raise MemoryLimitError(f"{MEMORY_LIMIT_ENV}={text!r}: expected a size such as 2GB, 1.5GiB or 512MB (units "
                               "KB, MB, GB, TB or KiB, MiB, GiB, TiB)")
    if float(match.group(1)) * UNITS[match.group(2).lower()] < MIN_MEMORY_LIMIT_BYTES:
        raise MemoryLimitError(f"{MEMORY_LIMIT_ENV}={text!r}: at least {MIN_MEMORY_LIMIT_BYTES // 2**20} MiB (the "
                               "embedded snapshot's models do not build in 128 MiB)")
    return text


def config(**settings: object) -> dict[str, object]:
    """`settings` for duckdb.connect(config=...), with the memory limit when one is set."""
    limit = memory_limit()
    return settings | ({"memory_limit": limit} if limit is not None else {})
