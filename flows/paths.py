"""Where things live; every path can be overridden by a flag or an environment variable. And how a date given on
the command line or in a catalog is read (`iso_date`)."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = PROJECT_ROOT / "sql"
WAREHOUSE_ENV, REPORTS_DIR_ENV = "HWEVAL_WAREHOUSE", "HWEVAL_REPORTS_DIR"


def absolute(path: str | Path) -> Path:
    """A path given relative to the working directory (or with ~), made absolute as the run starts."""
    return Path(os.path.abspath(Path(path).expanduser()))


def catalog_dir() -> Path:
    return Path(os.environ.get("HWEVAL_CATALOG_DIR", PROJECT_ROOT / "catalogs"))


def warehouse_path() -> Path:
    return Path(os.environ.get(WAREHOUSE_ENV, PROJECT_ROOT / "warehouse" / "hweval.duckdb"))


def reports_dir() -> Path:
    return Path(os.environ.get(REPORTS_DIR_ENV, PROJECT_ROOT / "reports"))


def set_by(given: object, flag: str, env: str) -> str:
    """What set a path, for an error about it: `flag` (an option, a flow parameter) when it was given, else the
    environment variable `env` when it is set, else the default (and how to move it)."""
    if given:
        return flag
    if env in os.environ:
        return env
    return f"the default; {flag} or {env} moves it"


def iso_date(text: str) -> dt.date:
    """A date as the messages ask for it, YYYY-MM-DD, and in no other form: Python 3.11's date.fromisoformat also
    reads `20261130` and `2026-W48-1`. ValueError for anything else, or for a day that does not exist."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        raise ValueError(f"{text!r} is not written YYYY-MM-DD")
    return dt.date.fromisoformat(text)
