"""The DuckDB settings every connection hweval opens shares: its memory limit and its threads.

HWEVAL_DUCKDB_MEMORY_LIMIT (a size: 2GB, 1.5GiB, 512MB) is DuckDB's memory_limit in each connection hweval opens:
the run's warehouse, the DuckLake, each offer-file scan (one per region fetched, several at once when regions are
fetched concurrently), `hweval query` and `hweval sources`. It bounds each connection, not the run: the run's
DuckDB memory is at most the limit times the connections open at once. Past it DuckDB spills to disk where an
operator can (the warehouse's connections beside the file, `<warehouse>.tmp`; an in-memory one, such as the
offer-file scan's, in `.tmp` under the working directory), and a query that cannot spill fails with DuckDB's "Out
of Memory Error": a model names its file, a scan its offer file and this setting. Unset, DuckDB takes 80% of the
machine's memory. Measured on `make bench`'s market of 35,000 offers: see the README (Speed).

HWEVAL_DUCKDB_THREADS (a whole number, 1 to MAX_THREADS) is DuckDB's `threads` in each of those connections. Unset,
DuckDB takes the machine's cores. `make test` sets it to 1: each of its two pytest workers has a core of its own, and
two DuckDB threads a worker made four on two cores (measured: the suite took 3 min 4-35 s, and 2 min 40 s-3 min 10 s
with 1; alternated, 197 s against 172 s and 217 s against 184 s).
"""

from __future__ import annotations

import functools
import os
import re

import duckdb

MEMORY_LIMIT_ENV = "HWEVAL_DUCKDB_MEMORY_LIMIT"
THREADS_ENV = "HWEVAL_DUCKDB_THREADS"
MAX_THREADS = 1024
# the embedded snapshot's models build in 256 MiB, not in 128 (int_inference_estimates_computed: measured)
MIN_MEMORY_LIMIT_BYTES = 256 * 2**20
# the units accepted (DuckDB reads these, and a few more): 1000^i and 1024^i bytes
UNITS = {"kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
         "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*([a-z]{2,3})", re.IGNORECASE)


class MemoryLimitError(ValueError):
    """An HWEVAL_DUCKDB_MEMORY_LIMIT that is no size DuckDB can run in (exit 2, one line)."""


class ThreadsError(ValueError):
    """An HWEVAL_DUCKDB_THREADS that is no number of threads (exit 2, one line)."""


class OutOfMemory(RuntimeError):
    """DuckDB ran out of the memory HWEVAL_DUCKDB_MEMORY_LIMIT gives it where it cannot spill."""


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
    refused = _refused_by_duckdb(text)
    if refused:
        raise MemoryLimitError(f"{MEMORY_LIMIT_ENV}={text!r}: DuckDB refuses it: {refused}")
    return text


@functools.lru_cache(maxsize=8)
def _refused_by_duckdb(text: str) -> str | None:
    """DuckDB's own reading of a limit (a size past what it can count, say), now rather than at a connection mid-run;
    once a process for each text (every connection asks)."""
    try:
        duckdb.connect(config={"memory_limit": text}).close()
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]
    return None


def threads(environ: dict[str, str] | None = None) -> int | None:
    """DuckDB's threads for hweval's connections (HWEVAL_DUCKDB_THREADS), or None to leave DuckDB's own (the cores)."""
    env = os.environ if environ is None else environ
    text = env.get(THREADS_ENV, "").strip()
    if not text:
        return None
    if not (len(text) <= len(str(MAX_THREADS)) and text.isascii() and text.isdigit()
            and 1 <= int(text) <= MAX_THREADS):
        raise ThreadsError(f"{THREADS_ENV}={text[:40]!r}: expected a whole number of threads from 1 to {MAX_THREADS} "
                           "(unset, DuckDB takes the machine's cores)")
    return int(text)


def config(**settings: object) -> dict[str, object]:
    """`settings` for duckdb.connect(config=...), with the memory limit and the threads where they are set."""
    limit, count = memory_limit(), threads()
    return (settings | ({"memory_limit": limit} if limit is not None else {})
            | ({"threads": count} if count is not None else {}))


def out_of_memory(what: str, exc: duckdb.Error) -> OutOfMemory:
    """The error of a query past the memory limit: what it was doing, DuckDB's words, and the setting to change."""
    limit = memory_limit()
    setting = (f"{MEMORY_LIMIT_ENV}={limit} allows too little: raise it, or unset it" if limit is not None
               else f"DuckDB's default limit (80% of the machine's memory) was reached: set {MEMORY_LIMIT_ENV}")
    return OutOfMemory(f"{what}: DuckDB ran out of memory ({str(exc).splitlines()[0]}); {setting}")
