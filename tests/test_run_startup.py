"""The run's start-up (flows/run_startup.py): the temporary Prefect server launched when the run has none, and what the
flow would do first done while it starts (the catalog checked, the flow's first imports, the declared tables read)."""

import os
import subprocess
import sys
import textwrap

import pytest
from builders import gone

from flows.paths import PROJECT_ROOT
from flows.run_command import PREFECT_DEFAULTS


def test_the_flows_first_imports_exist_so_that_importing_them_ahead_is_not_a_no_op():
    """FLOW_FIRST_IMPORTS are skipped when missing (a later Prefect may move them): these versions have them all."""
    import importlib.util

    from flows.run_startup import FLOW_FIRST_IMPORTS

    assert [name for name in FLOW_FIRST_IMPORTS if importlib.util.find_spec(name) is None] == []


def test_the_declared_tables_are_read_while_the_server_starts_not_in_the_first_fetch_task(monkeypatch):
    """warm_flow_imports reads sql/raw's tables (a DuckDB of its own, once a process) so that the fetch tasks, which
    type their batches by them, find them read: the first of them no longer waits on it."""
    from flows import run_startup, warehouse

    warehouse._raw_schema.cache_clear()
    monkeypatch.setattr(run_startup, "FLOW_FIRST_IMPORTS", ())
    run_startup.warm_flow_imports()
    assert warehouse._raw_schema.cache_info().currsize == 1
    hits = warehouse._raw_schema.cache_info().hits
    assert list(warehouse.raw_column_types("aws_pricing"))[:2] == ["run_id", "as_of"]
    assert warehouse._raw_schema.cache_info().hits == hits + 1  # the fetch task's ask: read ahead, not read again


def test_with_a_prefect_server_to_talk_to_no_temporary_server_is_started(monkeypatch):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows import prefect_server
    from flows.run_startup import start_temporary_server

    launched = []
    launch = prefect_server.TemporaryServer._launch

    def recorded(self):
        launch(self)
        launched.append(self.process)

    monkeypatch.setattr(prefect_server.TemporaryServer, "_launch", recorded)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # in the environment: nothing is launched
    assert start_temporary_server() is None and launched == []
    monkeypatch.delenv("PREFECT_API_URL")
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):  # as a Prefect profile sets it
        assert start_temporary_server() is None  # launched before Prefect was asked, then stopped
    [process] = launched
    assert process.poll() is not None


@pytest.mark.slow
def test_a_run_without_a_server_talks_to_its_own_without_importing_prefects_server_package(tmp_path):
    """A flow in a process of its own, as `hweval run` starts one: the server answers (and its warm-up requests are
    answered), the flow's run is recorded in it, Prefect's server package is never imported in the flow's process,
    and the server stops at exit."""
    program = textwrap.dedent("""
        import os, sys
        from flows.run_startup import start_temporary_server
        server = start_temporary_server()
        server.wait_ready()
        from prefect import flow, get_client
        from prefect.settings import get_current_settings
        @flow(name="own-server")
        def f():
            return get_current_settings().flows.heartbeat_frequency
        with server.flows_settings():
            assert f() is None  # no heartbeats to a server that ends with the run
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs()
        print(os.environ["PREFECT_API_URL"], server.process.pid, len(runs), [r.state.type.value for r in runs],
              server.warmed.wait(30), "prefect.server.api.server" in sys.modules)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")} | {
        "PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
        # a new database on a loaded 2-core machine: Prefect's 20 s was not always enough (as `hweval run` allows)
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": PREFECT_DEFAULTS["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"]}
    done = subprocess.run([sys.executable, "-c", program], check=False, env=env, capture_output=True, text=True,
                          timeout=120, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    url, pid, runs, states, warmed, imported = done.stdout.strip().split(maxsplit=5)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/api")
    assert (runs, states, warmed, imported) == ("1", "['COMPLETED']", "True", "False")
    assert "View at" not in done.stderr and "Error logging to API" not in done.stderr
    # asked to stop as the process exited, and not waited for (TemporaryServer.stop_at_exit): it ends within seconds
    # (gone, or a zombie its new parent has not reaped yet)
    assert gone(int(pid))


def test_the_catalog_check_begun_while_the_server_starts_is_what_the_run_and_the_flow_take(catalog_copy, tmp_path,
                                                                                            monkeypatch):
    """warm_catalog_check asks Great Expectations' process for the figures' check and does not wait for it (the
    process's start, seconds, overlaps the server's); finish_catalog_check takes that answer and leaves a passed check
    in the cache, which the flow's take_catalog_loaded_ahead then finds. A catalog that cannot be loaded raises nothing
    there (the run's input check loads it again and refuses it)."""
    from flows import cache
    from flows.catalog import load_catalog, take_catalog_loaded_ahead
    from flows.checks import ACCELERATOR_SUITE, accelerator_rows, catalog_check_digest
    from flows.run_startup import finish_catalog_check, warm_catalog_check
    from flows.validate import load_suite_json

    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    calls = asked_and_answered(monkeypatch)
    warm_catalog_check(str(catalog_copy))
    assert calls == ["asked"]  # not waited for
    finish_catalog_check(str(catalog_copy))
    assert calls == ["asked", "answered"]  # that answer, not a second validation
    catalog = load_catalog(catalog_copy, check_figures=False)
    suite = load_suite_json(catalog_copy / "expectations" / ACCELERATOR_SUITE)
    assert cache.catalog_check_passed(catalog_check_digest(accelerator_rows(catalog), suite))
    assert [p.name for p in (tmp_path / "cache" / "catalog-checks").iterdir()] == [
        f"{catalog_check_digest(accelerator_rows(catalog), suite)}.passed"]
    assert take_catalog_loaded_ahead(catalog_copy.resolve()) is not None and calls == ["asked", "answered"]

    (catalog_copy / "workloads.yaml").write_text("workloads: [\n")  # not YAML
    warm_catalog_check(str(catalog_copy))
    warm_catalog_check(str(tmp_path / "no-such-catalog"))


def test_with_gx_in_the_runs_process_nothing_is_begun_ahead_and_the_check_is_made_where_it_is_taken(
        catalog_copy, tmp_path, monkeypatch):
    """HWEVAL_GX_PROCESS=0: begun ahead, the check would run at once in this process (GX imported, ~2.5 s), before
    `hweval run` checks its settings, overlapping nothing (a review timed a refused setting at 3.2 s against 0.8 s). It
    is made when finish_catalog_check takes it instead, once."""
    from flows import gx_process
    from flows.run_startup import finish_catalog_check, warm_catalog_check

    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(gx_process.ENV, "0")
    calls = asked_and_answered(monkeypatch)
    validated = []
    real = gx_process.validate_rows
    monkeypatch.setattr(gx_process, "validate_rows", lambda *args, **kwargs: validated.append(1) or real(*args,
                                                                                                        **kwargs))
    warm_catalog_check(str(catalog_copy))
    assert calls == [] and validated == []
    finish_catalog_check(str(catalog_copy))
    assert validated == [1] and calls == ["asked", "answered"]  # validate_rows: asked and answered at once, here


def asked_and_answered(monkeypatch) -> list[str]:
    """Record when the catalog check is asked of GX's process and when its answer is taken."""
    from flows import gx_process

    calls: list[str] = []
    real = gx_process.validate_rows_later

    def later(*args, **kwargs):
        calls.append("asked")
        pending = real(*args, **kwargs)
        taken = pending.result
        pending.result = lambda: calls.append("answered") or taken()
        return pending

    monkeypatch.setattr(gx_process, "validate_rows_later", later)
    return calls


def test_a_catalog_figure_that_fails_the_check_begun_ahead_is_refused_before_the_flow(catalog_copy, tmp_path,
                                                                                       monkeypatch):
    """The figures' check begun while the server starts fails the run where its answer is taken, before any flow run:
    CatalogError naming the figure (exit 2, as a catalog that does not load), from the one validation asked."""
    from flows.catalog import CatalogError
    from flows.run_startup import finish_catalog_check, warm_catalog_check

    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    path = catalog_copy / "accelerators.yaml"
    path.write_text(path.read_text().replace("memory_gb: {value: 103.08, source: aws-neuron-trainium2",
                                             "memory_gb: {value: 512, source: aws-neuron-trainium2"))
    calls = asked_and_answered(monkeypatch)
    warm_catalog_check(str(catalog_copy))
    with pytest.raises(CatalogError, match="trainium2.memory_gb: 512 fails memory_per_chip_plausible"):
        finish_catalog_check(str(catalog_copy))
    assert calls == ["asked", "answered"]
    assert not (tmp_path / "cache" / "catalog-checks").exists() or not any(
        (tmp_path / "cache" / "catalog-checks").iterdir())


# the pool of a process that imported hweval, and the environment a process it spawns starts with (a GX or chart
# worker's: multiprocessing's spawn, as flows/gx_process.py and flows/chart_workers.py start them)
ARROW_POOL_PROBE = """
import multiprocessing, os
import flows, pyarrow as pa
if __name__ == "__main__":
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(pa.default_memory_pool().backend_name, pool.apply(os.getenv, ("ARROW_DEFAULT_MEMORY_POOL",)))
"""


def test_hwevals_processes_take_arrows_buffers_from_the_system_allocator_unless_the_user_chose_a_pool(tmp_path):
    """flows/__init__.py sets ARROW_DEFAULT_MEMORY_POOL=system before pyarrow is imported (Arrow reads it once): its
    mimalloc pool kept ~30 MiB of a run's freed batches. A pool the user set is kept; spawned workers inherit it."""
    probe = tmp_path / "probe.py"  # a file, not -c: spawn imports the parent's main module again
    probe.write_text(ARROW_POOL_PROBE)
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | {"PYTHONPATH": str(PROJECT_ROOT)}
    chosen = subprocess.run([sys.executable, str(probe)], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True,
                            check=True)
    assert chosen.stdout.split() == ["system", "system"]
    kept = subprocess.run([sys.executable, str(probe)], env=env | {"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"},
                          cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert kept.stdout.split() == ["mimalloc", "mimalloc"]
