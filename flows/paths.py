"""Where things live; every path can be overridden by a flag or an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = PROJECT_ROOT / "sql"


def catalog_dir() -> Path:
    return Path(os.environ.get("HWEVAL_CATALOG_DIR", PROJECT_ROOT / "catalogs"))


def warehouse_path() -> Path:
    return Path(os.environ.get("HWEVAL_WAREHOUSE", PROJECT_ROOT / "warehouse" / "hweval.duckdb"))


def reports_dir() -> Path:
    return Path(os.environ.get("HWEVAL_REPORTS_DIR", PROJECT_ROOT / "reports"))
