"""Shared fixtures: the real catalog, a scratch copy of it, a Prefect test server, one whole-flow run."""

from __future__ import annotations

import atexit
import datetime as dt
import os
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest
from builders import discard, open_copy

from flows import warehouse
from flows.catalog import load_catalog
from flows.paths import PROJECT_ROOT
from flows.run_command import PREFECT_DEFAULTS

# Prefect's settings as `hweval run` sets them for its temporary server (run_command.PREFECT_DEFAULTS), for the
# temporary servers of the flows the tests call (the test server, `prefect_server`, turns the server's services on
# again), but its flow-run and task-run loggers at INFO: where a test's Prefect fixtures share no worker (`make
# test-slow`, no --dist loadgroup), Prefect's API log handler wrote to a stream pytest had closed. Set once, here, and
# each test leaves os.environ as it found it (`_environment_left_as_found`): `hweval run` sets them with `setdefault`
# for the rest of its process, and a test that ran it changed them for the later tests of its worker, the test server's
# among them where it started later (then with no triggers for the automations the deployment tests run)
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
for _key, _value in PREFECT_DEFAULTS.items():
    if not _key.startswith("PREFECT_LOGGING_"):
        os.environ.setdefault(_key, _value)
# the fixtures are dated 2026-11-30 and later, whatever the clock says (tests of the refusal unset it)
os.environ.setdefault("HWEVAL_ALLOW_FUTURE_AS_OF", "1")
# charts and catalog checks are cached (flows/cache.py) in a folder of this test process's own, empty at the start, so
# that no test reads what an earlier session or another checkout left, while the many catalog loads of one session
# check the same figures once; tests of the cache give it folders of their own
os.environ["HWEVAL_CACHE"] = tempfile.mkdtemp(prefix="hweval-test-cache-")
atexit.register(shutil.rmtree, os.environ["HWEVAL_CACHE"], ignore_errors=True)
# Prefect keeps its database (flow runs, task runs, logs) and its persisted results (a failed flow's exception) under
# PREFECT_HOME, ~/.prefect unless set: each test process has one of its own, made here and removed at its exit, so that
# the tests neither grow the user's nor read its profile (a PREFECT_API_URL there would send the tests' flows to the
# user's server). Measured before: a `make test` left 4 result files there, a `make test-slow` 30 and 7 MB of database,
# and this machine's had grown to 83 MB. Prefect reads its settings once, at its import, which no import above makes
# (test_prefect_server checks the home it took). The `hweval run`s the tests start inherit it and take its start lock
# as any run does (flows/prefect_server.py); the tests of that lock set homes of their own.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="hweval-test-prefect-home-")
atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], ignore_errors=True)

CATALOGS = PROJECT_ROOT / "catalogs"
AS_OF = dt.date(2026, 11, 30)
RUN_ID = "2026-11-30-golden"


@pytest.fixture(autouse=True)
def _environment_left_as_found():
    """Each test leaves os.environ as it found it: `hweval run` sets Prefect's defaults with `setdefault` for the rest
    of its process (monkeypatch.delenv of an unset name records nothing to restore), and a test may set more. The
    defaults themselves are set for every test above, so the servers of later tests start as before."""
    before = dict(os.environ)
    yield
    if dict(os.environ) != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(scope="session")
def catalog():
    return load_catalog(CATALOGS)


@pytest.fixture
def catalog_copy(tmp_path) -> Path:
    """A writable copy of catalogs/ to break on purpose."""
    target = tmp_path / "catalogs"
    shutil.copytree(CATALOGS, target)
    return target


@pytest.fixture(scope="session")
def empty_warehouse(tmp_path_factory, catalog) -> Path:
    """The file of an empty warehouse with schemas, macros and the real catalog tables, made once a test process
    (0.2-0.3 s); each `fresh_db` is a copy of it (~0.03 s)."""
    path = tmp_path_factory.mktemp("empty-warehouse") / "test.duckdb"
    con = warehouse.connect(path)
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    con.close()  # checkpointed: the file alone holds it, no .wal beside it
    return path


@pytest.fixture(scope="session")
def snapshot_warehouse(tmp_path_factory, catalog) -> Path:
    """The file of a warehouse with every enabled source of the embedded snapshot landed and every model built,
    without Prefect, made once a test process (3-6 s); a module takes a copy (`open_copy`). The modules that use it
    share a worker (`pytest_itemcollected`), so that it is made once."""
    from flows import pipeline
    from flows.land import land_all
    from flows.source_batches import fetch_source

    path = tmp_path_factory.mktemp("snapshot") / "snapshot.duckdb"
    con = warehouse.connect(path)
    try:
        batches = [fetch_source(catalog, source_id) for source_id in pipeline.sources_to_run(catalog)]
        loads = land_all(con, catalog, batches, "snapshot", AS_OF)
        assert all(load.status == "landed" for load in loads), [(ld.source_id, ld.error) for ld in loads]
        pipeline.build(con, "snapshot", AS_OF, catalog)
    finally:
        con.close()
    return path


@pytest.fixture
def fresh_db(tmp_path, empty_warehouse):
    """An empty warehouse with schemas, macros and the real catalog tables."""
    con = open_copy(empty_warehouse, tmp_path / "test.duckdb")
    yield con
    discard(con)


@pytest.fixture
def copy_of(tmp_path):
    """`copy_of(template)`: a connection to this test's own copy of the warehouse file `template`, closed after the
    test. A module lands and builds its warehouse once, in a module-scoped fixture that returns the file (closed, so
    that the file holds it all), and each test changes its copy as it likes (~0.03 s against a build's 1-3 s)."""
    opened = []

    def open_(template: Path, name: str = "test.duckdb") -> duckdb.DuckDBPyConnection:
        opened.append(open_copy(template, tmp_path / name))
        return opened[-1]

    yield open_
    for con in opened:
        discard(con)


def _module_fixtures(item: pytest.Item) -> bool:
    """Whether the test uses a fixture made once a module (a landed and built warehouse, mostly: 2-10 s)."""
    fixtures = getattr(item, "_fixtureinfo", None)  # pytest's FuncFixtureInfo, the fixtures each test resolved
    return fixtures is not None and any(defs[-1].scope == "module" for defs in fixtures.name2fixturedefs.values())


def pytest_itemcollected(item: pytest.Item) -> None:
    """`make test` runs with `--dist loadgroup`, two workers:
    - the tests that need Prefect's test server (the whole-flow run among them) go to one worker, so that one worker,
      not each, starts the server and runs the flow (~50 s);
    - the tests that read the embedded snapshot's warehouse (`snapshot_warehouse`) go to one worker, which makes it
      once;
    - a module whose tests share a module-scoped fixture goes to one worker, which makes the fixture once.
    Marked as each test is collected: pytest-xdist reads the groups in its own `pytest_collection_modifyitems`."""
    fixtures = getattr(item, "fixturenames", ())
    if "prefect_server" in fixtures:
        item.add_marker(pytest.mark.xdist_group("prefect"))
    elif "snapshot_warehouse" in fixtures:
        item.add_marker(pytest.mark.xdist_group("snapshot"))
    elif _module_fixtures(item):
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture(scope="session")
def prefect_server():
    """Prefect's test server, a real server as `prefect server start` runs it: it registers Prefect's blocks, stores
    events and runs the automations' triggers (the deployment tests need them), which PREFECT_DEFAULTS, set above for
    the temporary servers of flows the tests call, turns off."""
    from prefect.settings import (
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        PREFECT_SERVER_REGISTER_BLOCKS_ON_START,
        PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED,
        PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED,
        temporary_settings,
    )
    from prefect.testing.utilities import prefect_test_harness

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None,
                                     PREFECT_SERVER_REGISTER_BLOCKS_ON_START: True,
                                     PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED: True,
                                     PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED: True}):
        with prefect_test_harness(server_startup_timeout=90):
            yield


# The files the session's flow run (`flow_run`) opened a read-write connection to, one entry a connection.
FLOW_RUN_CONNECTIONS: list[Path] = []


@pytest.fixture(scope="session")
def flow_run(prefect_server, tmp_path_factory):
    """One run of the nightly flow on the embedded snapshot, into a scratch warehouse and reports folder; the files
    it connected to are in FLOW_RUN_CONNECTIONS."""
    from flows.nightly import nightly

    root = tmp_path_factory.mktemp("run")
    connect = warehouse.connect

    def recorded(path: Path) -> duckdb.DuckDBPyConnection:
        FLOW_RUN_CONNECTIONS.append(path)
        return connect(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(warehouse, "connect", recorded)
        result = nightly(
            as_of=AS_OF,
            catalog_dir=str(CATALOGS),
            warehouse_file=str(root / "warehouse" / "hweval.duckdb"),
            reports_dir=str(root / "reports"),
            run_id=RUN_ID,
        )
    return result


class Receiver:
    """A webhook on 127.0.0.1 that records each request and answers with `status`."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers),
                                          "body": self.rfile.read(length)})
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"json://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def webhook():
    """A running webhook receiver on 127.0.0.1, shut down after the test."""
    receiver = Receiver()
    yield receiver
    receiver.close()
