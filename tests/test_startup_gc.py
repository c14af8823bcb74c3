"""flows/startup_gc.py: the imports at a process's start made with fewer garbage collections, then frozen. Its users:
the temporary Prefect server's process (flows/prefect_server.py SERVER_MAIN, started for real in
tests/test_run_startup.py), GX's process (tests/test_gx_process.py), the chart workers (tests/test_charts.py) and
`hweval run`'s own process (tests/test_cli.py)."""

import gc
import json
import os
import subprocess
import sys

from flows import prefect_server, startup_gc


def pythons_own_thresholds() -> list[int]:
    """The thresholds a new interpreter starts with (700, 10, 10 on CPython 3.11)."""
    done = subprocess.run([sys.executable, "-c", "import gc; print(list(gc.get_threshold()))"], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def test_preloading_imports_the_module_collecting_less_then_runs_main_as_python_m_with_its_arguments(tmp_path):
    """The code `python -c` runs for the server: the module imported with the first threshold at 10,000, then Python's
    thresholds again and what the import made frozen, then the main module run as `python -m` runs it (named
    __main__, with the arguments after the code), finding the module already imported (not imported again)."""
    (tmp_path / "probe_app.py").write_text("import gc\nIMPORTED_WITH = gc.get_threshold()\n")
    (tmp_path / "probe_main.py").write_text(
        "import gc, json, sys\n"
        "import probe_app\n"
        "print(json.dumps({'name': __name__, 'argv0': sys.argv[0], 'argv': sys.argv[1:],\n"
        "                  'imported_with': probe_app.IMPORTED_WITH,\n"
        "                  'now': gc.get_threshold(), 'frozen': gc.get_freeze_count()}))\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", startup_gc.preloading("probe_app", "probe_main"), "--port", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert found.pop("frozen") > 0
    assert found.pop("argv0") == str(tmp_path / "probe_main.py")  # as `python -m` names it (uvicorn's program name)
    assert found == {"name": "__main__", "argv": ["--port", "1"], "imported_with": [10_000, 10, 10],
                     "now": pythons_own_thresholds()}


def test_the_temporary_server_preloads_prefects_server_app_then_runs_uvicorn(monkeypatch):
    """The server's command runs the code above for Prefect's server module and uvicorn, which then serves that
    module's create_app, with Prefect's arguments (the server answering is tested in test_run_startup.py). -P: the
    working folder is not first on sys.path (a prefect.py there is not taken for Prefect)."""
    import importlib.util
    from pathlib import Path

    assert prefect_server.SERVER_MAIN == startup_gc.preloading("prefect.server.api.server", "uvicorn")
    started = []
    monkeypatch.setattr(prefect_server.TemporaryServer, "_start",
                        lambda self, command, start_new_session=False: started.append(command))
    server = prefect_server.TemporaryServer()
    server._launch()
    [command] = started
    site = str(Path(importlib.util.find_spec("prefect").submodule_search_locations[0]).parent)
    server_command = command[command.index(sys.executable, 1 if command[0] == sys.executable and "-S" in command
                                           else 0):]
    assert server_command[:8] == [sys.executable, "-P", "-c", prefect_server.SERVER_MAIN, "--app-dir", site,
                                  "--factory", "prefect.server.api.server:create_app"]
    assert server_command[8:] == ["--host", "127.0.0.1", "--port", str(server.port), "--log-level", "error",
                                  "--lifespan", "on"]


def test_importing_raises_the_first_threshold_and_imported_sets_it_back_then_freezes(monkeypatch):
    frozen_with = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen_with.append(gc.get_threshold()))
    before = gc.get_threshold()
    try:
        previous = startup_gc.importing()
        assert previous == before
        assert gc.get_threshold() == (10_000, before[1], before[2])
        startup_gc.imported(previous)
        assert gc.get_threshold() == before
        assert frozen_with == [before]  # set back first, then frozen
    finally:
        gc.set_threshold(*before)
