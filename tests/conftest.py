"""Shared fixtures: the real catalog, a scratch copy of it, a Prefect test server, one whole-flow run."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from flows import warehouse
from flows.catalog import load_catalog
from flows.paths import PROJECT_ROOT

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

CATALOGS = PROJECT_ROOT / "catalogs"
AS_OF = dt.date(2026, 11, 30)
RUN_ID = "2026-11-30-golden"


@pytest.fixture(scope="session")
def catalog():
    return load_catalog(CATALOGS)


@pytest.fixture
def catalog_copy(tmp_path) -> Path:
    """A writable copy of catalogs/ to break on purpose."""
    target = tmp_path / "catalogs"
    shutil.copytree(CATALOGS, target)
    return target


@pytest.fixture
def fresh_db(tmp_path, catalog):
    """An empty warehouse with schemas, macros and the real catalog tables."""
    con = warehouse.connect(tmp_path / "test.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    yield con
    con.close()


@pytest.fixture(scope="session")
def prefect_server():
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        with prefect_test_harness(server_startup_timeout=90):
            yield


@pytest.fixture(scope="session")
def flow_run(prefect_server, tmp_path_factory):
    """One run of the nightly flow on the embedded snapshot, into a scratch warehouse and reports folder."""
    from flows.nightly import nightly

    root = tmp_path_factory.mktemp("run")
    result = nightly(
        as_of=AS_OF,
        catalog_dir=str(CATALOGS),
        warehouse_file=str(root / "warehouse" / "hweval.duckdb"),
        reports_dir=str(root / "reports"),
        run_id=RUN_ID,
    )
    return result
