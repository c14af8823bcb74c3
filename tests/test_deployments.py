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
