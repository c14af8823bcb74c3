"""prefect.yaml declares deployments a real Prefect server accepts: `prefect deploy --all` against the test server."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.paths import PROJECT_ROOT

# registers deployments with a Prefect server (~5 s): make test-slow, so that make test stays within 3 minutes
pytestmark = pytest.mark.slow

PREFECT = str(Path(sys.executable).with_name("prefect"))


def prefect_cli(*args, env):
    result = subprocess.run([PREFECT, *args], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def test_prefect_deploy_all_registers_nightly_and_on_demand(prefect_server):
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), HWEVAL_HOME=str(PROJECT_ROOT))
    prefect_cli("work-pool", "create", "hweval", "--type", "process", "--overwrite", env=env)
    before = (PROJECT_ROOT / "prefect.yaml").read_text()
    prefect_cli("--no-prompt", "deploy", "--all", env=env)
    assert (PROJECT_ROOT / "prefect.yaml").read_text() == before

    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        nightly = client.read_deployment_by_name("nightly/nightly")
        on_demand = client.read_deployment_by_name("nightly/on-demand")
    [schedule] = nightly.schedules
    assert (schedule.schedule.cron, schedule.schedule.timezone, schedule.active) == ("30 2 * * *", "UTC", True)
    assert on_demand.schedules == []
    assert nightly.entrypoint == on_demand.entrypoint == "flows/nightly.py:nightly"
    assert nightly.work_pool_name == "hweval"
    assert nightly.parameters == {"live": True} and on_demand.parameters == {}  # nightly fetches live prices
    assert set(json.loads(json.dumps(nightly.parameter_openapi_schema))["properties"]) == {
        "as_of", "catalog_dir", "warehouse_file", "reports_dir", "run_id", "source_files", "live", "accept_changes", "wait_s",
        "allow_future_as_of"}


@pytest.mark.parametrize("home", [None, "/nonexistent/hweval", "."])
def test_the_pull_steps_refuse_a_worker_whose_hweval_home_names_no_checkout(home, tmp_path, monkeypatch):
    """prefect.yaml's pull steps, run as a worker runs them (prefect.deployments.steps.core.run_steps): without
    HWEVAL_HOME the working directory was '' and the run crashed on a FileNotFoundError in a temporary folder, with
    no word of the variable. Now the first step fails naming it; with the checkout named, the steps pass and the
    working directory is the checkout."""
    import asyncio

    import yaml
    from prefect.deployments.steps.core import StepExecutionError, run_steps

    steps = yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text())["pull"]
    monkeypatch.chdir(tmp_path)  # set_working_directory changes it; monkeypatch puts it back
    if home is None:
        monkeypatch.delenv("HWEVAL_HOME", raising=False)
    else:
        monkeypatch.setenv("HWEVAL_HOME", str(PROJECT_ROOT) if home == "." else home)
    if home == ".":
        asyncio.run(run_steps(steps, print_function=lambda *a, **k: None))
        assert Path.cwd() == PROJECT_ROOT
        return
    with pytest.raises(StepExecutionError) as err:
        asyncio.run(run_steps(steps, print_function=lambda *a, **k: None))
    assert f"HWEVAL_HOME='{home or ''}' names no hweval checkout (no flows/nightly.py there)" in str(err.value.__cause__)
    assert Path.cwd() == tmp_path
