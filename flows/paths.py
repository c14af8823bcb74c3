"""Where things live; every path can be overridden by a flag or an environment variable."""

from __future__ import annotations

import os
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
