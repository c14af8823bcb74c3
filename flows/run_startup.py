"""What `hweval run` does before its flow starts: it launches the temporary Prefect server the run needs when none is
configured (a process of its own, seconds to answer), and while that server starts it does what the flow would
otherwise do first: the catalog loaded and checked, the flow's first imports, the report templates compiled, the
declared tables read, the large files given with --source read (flows/read_ahead.py). flows/run_command.py calls
these in that order; flows/prefect_server.py is the server itself.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from flows import paths

if TYPE_CHECKING:
    import datetime as dt

    from flows.prefect_server import TemporaryServer


def launch_temporary_server() -> TemporaryServer | None:
    """Launch the temporary Prefect server this run needs when PREFECT_API_URL is not set (a process of its own:
    ~3-4 s to answer on a quiet 2-core machine, mostly its imports), without importing Prefect here; `attach` it, then
    `wait_ready` before the flow is called (flows/prefect_server.py: the server Prefect would start, without
    importing the server's package here)."""
    from flows import prefect_server

    return prefect_server.TemporaryServer.launch()


def start_temporary_server() -> TemporaryServer | None:
    """`launch_temporary_server`, then attached: None with a running server to talk to (the environment or the
    Prefect profile names one)."""
    from flows import prefect_server

    return prefect_server.TemporaryServer.start()


def warm_catalog_check(catalog_dir: str | None) -> None:
    """Load the catalog now, while Prefect's server starts, and begin its per-chip figures' check in Great Expectations'
    process without waiting for it (on a catalog not checked before, that process's start and the validation take
    ~2.5 s, which now overlap the server's start and the flow's imports): `finish_catalog_check` takes its answer
    before the flow, which takes this Catalog (flows/catalog.py, `take_catalog_loaded_ahead`) unless a file under the
    folder changed since; a later run finds the check in the cache (flows/checks.py). An error is left for
    `check_run_inputs`, which loads the catalog again and refuses it in one line."""
    from flows.catalog import load_catalog_ahead
    from flows.paths import absolute

    try:
        load_catalog_ahead(absolute(catalog_dir or paths.catalog_dir()))
    except Exception as exc:  # noqa: BLE001 - the run's input check loads the catalog again and says what is wrong
        logging.getLogger(__name__).debug("catalog not loaded ahead of the flow: %s", exc)


def finish_catalog_check(catalog_dir: str | None) -> None:
    """Wait for the catalog's per-chip figures' check begun by `warm_catalog_check` (or by the run's input check);
    CatalogError if a figure fails it, before any flow run."""
    from flows.catalog import checked_catalog_ahead
    from flows.paths import absolute

    checked_catalog_ahead(absolute(catalog_dir or paths.catalog_dir()))


def read_given_files_ahead(catalog_dir: str | None, source_files: dict[str, list[str]], as_of: dt.date | None) -> None:
    """Begin reading the files given with --source whose kind reads into Arrow (an offer file), while the server
    starts: the flow's fetch takes each table unless its file changed meanwhile (flows/read_ahead.py). Called once
    `check_run_inputs` passed, on the catalog it loaded."""
    from flows import pipeline, read_ahead
    from flows.catalog import catalog_loaded_ahead
    from flows.paths import absolute

    if not source_files:
        return
    catalog = catalog_loaded_ahead(absolute(catalog_dir or paths.catalog_dir()))
    read_ahead.begin(catalog, pipeline.source_snapshot_files(catalog, source_files, as_of or pipeline.default_as_of()))


# Modules the flow imports on first use (Prefect's engines and what they import lazily, DuckDB's Arrow scan), about
# 0.6 s on a 2-core machine: imported while the server starts instead. A name a later version lacks is skipped.
FLOW_FIRST_IMPORTS = (
    "prefect.flow_engine",
    "prefect.task_engine",
    "prefect.concurrency.sync",
    "prefect.utilities.visualization",  # a flow's call imports it (and graphviz)
    "fastapi.encoders",  # Prefect encodes a flow run's parameters with fastapi's jsonable_encoder
    "pyarrow.dataset",  # DuckDB imports it to scan an Arrow table (a landed batch)
)


def warm_flow_imports() -> None:
    """Import what the flow would import on first use, compile the report templates and read the declared tables,
    while the server starts."""
    import importlib

    from flows import report_templates, warehouse

    for name in FLOW_FIRST_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    report_templates.compile_templates()
    warehouse.read_declared_tables()
