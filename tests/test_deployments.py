"""prefect.yaml declares deployments a real Prefect server accepts: `prefect deploy --all` against the test server."""

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CATALOGS

from flows.paths import PROJECT_ROOT

# registers deployments with a Prefect server (~5 s): make test-slow, so that make test stays within 3 minutes
pytestmark = pytest.mark.slow

PREFECT = str(Path(sys.executable).with_name("prefect"))


def prefect_cli(*args, env):
    result = subprocess.run([PREFECT, *args], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def deployed(prefect_server):
    """`prefect deploy --all` against the session's test server, as the README says; prefect.yaml left as it was."""
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), HWEVAL_HOME=str(PROJECT_ROOT))
    prefect_cli("work-pool", "create", "hweval", "--type", "process", "--overwrite", env=env)
    before = (PROJECT_ROOT / "prefect.yaml").read_text()
    prefect_cli("--no-prompt", "deploy", "--all", env=env)
    assert (PROJECT_ROOT / "prefect.yaml").read_text() == before


def test_prefect_deploy_all_registers_nightly_on_demand_and_the_crash_notice(deployed):
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        nightly = client.read_deployment_by_name("nightly/nightly")
        on_demand = client.read_deployment_by_name("nightly/on-demand")
        notice = client.read_deployment_by_name("crash_notice/crash-notice")
    assert (notice.entrypoint, notice.work_pool_name, notice.schedules) == (
        "flows/crash_notice.py:crash_notice", "hweval", [])
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


def test_the_deployed_pull_steps_take_the_workers_hweval_home_not_the_deployers(deployed, tmp_path, monkeypatch):
    """Deployed as the README says (HWEVAL_HOME exported, here this checkout), then run by a worker whose checkout is
    elsewhere: `{{ $HWEVAL_HOME }}` in a pull step was filled in by `prefect deploy`, so every run moved into the
    deployer's folder (a FileNotFoundError, Crashed, on any other machine). The steps the server holds name no folder,
    and take the worker's."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.deployments.steps.core import run_steps

    with get_client(sync_client=True) as client:
        steps = [client.read_deployment_by_name(name).pull_steps
                 for name in ("nightly/nightly", "nightly/on-demand", "crash_notice/crash-notice")]
    assert all(str(PROJECT_ROOT) not in json.dumps(s) for s in steps)
    checkout = tmp_path / "elsewhere" / "hweval"
    (checkout / "flows").mkdir(parents=True)
    (checkout / "flows" / "nightly.py").write_text("")
    monkeypatch.chdir(tmp_path)  # set_working_directory changes it; monkeypatch puts it back
    monkeypatch.setenv("HWEVAL_HOME", str(checkout))
    for deployed_steps in steps:
        os.chdir(tmp_path)
        asyncio.run(run_steps(deployed_steps, print_function=lambda *a, **k: None))
        assert Path.cwd() == checkout


def crashed_nightly_run(client, parameters: dict, message: str):
    """A flow run of nightly/on-demand, put straight into Crashed as a worker does when the run's process dies or its
    pull step fails (the flow never ran)."""
    from prefect.states import Crashed

    deployment = client.read_deployment_by_name("nightly/on-demand")
    run = client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
    client.set_flow_run_state(run.id, Crashed(message=message), force=True)
    return client.read_flow_run(run.id)


def notices_of(client, crashed_id) -> list:
    """The crash-notice deployment's runs that Prefect's automation made for the run `crashed_id`."""
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    deployment = client.read_deployment_by_name("crash_notice/crash-notice")
    runs = client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])))
    return [r for r in runs if r.parameters.get("flow_run_id") == f"prefect.flow-run.{crashed_id}"]


def wait_for_notices(client, crashed_id, within_s: float = 60) -> list:
    import time

    deadline = time.monotonic() + within_s
    while not (notices := notices_of(client, crashed_id)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return notices


def test_a_nightly_run_crashed_before_its_flow_is_told_by_the_crash_notice_deployment(deployed, tmp_path, webhook,
                                                                                     monkeypatch):
    """prefect.yaml's crash-notice deployment: its trigger (a Prefect automation) makes a run of it when a nightly run
    tagged hweval enters Crashed (another project's flow named nightly is not hweval's); that run, run here as a
    worker would, tells the crashed run's channels, once."""
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.states import Crashed

    from flows.crash_notice import TOLD_TAG, CrashNoticeError, attempt_of, crash_notice, mark

    @flow(name="nightly")
    def another_projects_nightly() -> None:
        pass

    parameters = {"as_of": "2026-12-03", "catalog_dir": str(CATALOGS), "warehouse_file": str(tmp_path / "w.duckdb"),
                  "reports_dir": str(tmp_path / "reports")}
    message = "Flow run infrastructure exited with non-zero status code -9."  # a process killed outright
    with get_client(sync_client=True) as client:
        other = client.create_flow_run(another_projects_nightly)  # first: the automation sees its event first
        client.set_flow_run_state(other.id, Crashed(message="not ours"), force=True)
        crashed = crashed_nightly_run(client, parameters, message)
        [notice] = wait_for_notices(client, crashed.id)  # one run of crash-notice, given the event's resource
        assert notices_of(client, other.id) == []
    assert notice.parameters == {"flow_run_id": f"prefect.flow-run.{crashed.id}"}

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    with pytest.raises(CrashNoticeError, match=r"is no hweval nightly run \(flow 'nightly', tags \[\]; expected"):
        crash_notice(flow_run_id=str(other.id))
    assert crash_notice(**notice.parameters) == "told: team sent"
    [sent] = webhook.requests
    body = json.loads(sent["body"])
    assert body["title"] == "hweval 2026-12-03: run failed"
    assert body["message"].splitlines()[0] == (f"flow run {crashed.name} crashed before it finished (Crashed: "
                                               f"{message})")
    assert f"Report: {tmp_path / 'reports' / 'latest' / 'index.md'}" in body["message"].splitlines()
    with get_client(sync_client=True) as client:
        # the attempt that crashed never ran its flow: its mark names the Crashed state
        assert attempt_of(client.read_flow_run_states(crashed.id), crashed.state) == str(crashed.state.id)
        assert mark(TOLD_TAG, str(crashed.state.id)) in client.read_flow_run(crashed.id).tags
    # a second notice of the same crash (the automation fired twice, a run by hand) says nothing again
    assert crash_notice(flow_run_id=str(crashed.id)) == "told by the run"
    assert len(webhook.requests) == 1


def test_a_nightly_run_cancelled_from_prefect_is_told_by_the_crash_notice_deployment(deployed, tmp_path, webhook,
                                                                                     monkeypatch):
    """A run cancelled from Prefect (the UI, `prefect flow-run cancel`) ends Cancelled, which runs no on_crashed hook:
    cancelled after its publish, it told no one of the sources stale past their limit it had found. The automation
    makes a crash-notice run for the Cancelled state too, which tells the channels, once."""
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled, Running

    from flows.crash_notice import crash_notice

    parameters = {"as_of": "2026-12-05", "catalog_dir": str(CATALOGS), "warehouse_file": str(tmp_path / "w.duckdb"),
                  "reports_dir": str(tmp_path / "reports")}
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("nightly/on-demand")
        run = client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
        client.set_flow_run_state(run.id, Running(), force=True)
        client.set_flow_run_state(run.id, Cancelled(message="Flow run was cancelled successfully."), force=True)
        cancelled = client.read_flow_run(run.id)
        [notice] = wait_for_notices(client, cancelled.id)
        # a scheduled run cancelled before it ran (a night skipped on purpose) did nothing: no word of it
        skipped = client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
        client.set_flow_run_state(skipped.id, Cancelled(message="skipped"), force=True)
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    assert crash_notice(flow_run_id=str(skipped.id)) == "cancelled before it ran"
    assert webhook.requests == []
    assert crash_notice(**notice.parameters) == "told: team sent"
    [sent] = webhook.requests
    assert json.loads(sent["body"])["message"].splitlines()[0] == (
        f"flow run {cancelled.name} was cancelled before it finished (Cancelled: Flow run was cancelled successfully.)")
    assert crash_notice(flow_run_id=str(cancelled.id)) == "told by the run"  # once
    assert len(webhook.requests) == 1


def wait_until(read, done, within_s: float, what: str):
    """read() again every half second until done(its value), at most `within_s`; that value."""
    import time

    deadline = time.monotonic() + within_s
    while not done(value := read()):
        assert time.monotonic() < deadline, f"{what}: not within {within_s} s (last: {value!r})"
        time.sleep(0.5)
    return value


def test_a_nightly_run_that_died_with_its_worker_is_crashed_by_the_automation_and_told(deployed, tmp_path, webhook,
                                                                                      monkeypatch):
    """A deployment's run killed outright with no worker left to mark it (the machine lost, worker and flow killed
    together) stays Running, and nobody is told. flows/automations.yaml, created as prefect.yaml's header says, marks
    it Crashed once its heartbeats (every 30 s, the deployment's job variables) stop for `within`; that Crashed state
    starts the crash-notice deployment, whose run tells the channels. The run here is started as a process worker
    starts it (prefect/workers/process.py: `python -m prefect.engine`, with the job's env and the run's id), runs the
    real pull steps and flow, and is SIGKILLed once it has sent a heartbeat."""
    import yaml
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
    from prefect.settings import PREFECT_API_URL

    from flows.crash_notice import crash_notice

    document = yaml.safe_load((PROJECT_ROOT / "flows" / "automations.yaml").read_text())
    [automation] = document["automations"]
    automation["trigger"]["within"] = 10  # Prefect's least for a proactive trigger: seconds here, not two minutes
    quick = tmp_path / "automations.yaml"
    quick.write_text(yaml.safe_dump(document))
    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), HWEVAL_HOME=str(PROJECT_ROOT))
    created_by = subprocess.run([str(Path(sys.executable).with_name("hweval")), "automations", "--file", str(quick)],
                                env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert created_by.returncode == 0, created_by.stderr
    assert created_by.stdout.startswith(f"created {automation['name']} (")
    parameters = {"as_of": "2026-12-06", "catalog_dir": str(CATALOGS), "warehouse_file": str(tmp_path / "w.duckdb"),
                  "reports_dir": str(tmp_path / "reports")}
    log = tmp_path / "run.log"
    with get_client(sync_client=True) as client:
        [created] = client.read_automations_by_name(automation["name"])
        try:
            deployment = client.read_deployment_by_name("nightly/on-demand")
            run = client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
            job_env = deployment.job_variables["env"]  # the heartbeat prefect.yaml asks of its runs
            with log.open("w") as out:
                process = subprocess.Popen([sys.executable, "-m", "prefect.engine"], cwd=tmp_path, stdout=out,
                                           stderr=subprocess.STDOUT,
                                           env=dict(env, **job_env, PREFECT__FLOW_RUN_ID=str(run.id)))
            try:
                def beats() -> list:  # a filter made anew each time: its default window ends when it is made
                    return client.read_events(EventFilter(
                        event=EventNameFilter(name=["prefect.flow-run.heartbeat"]),
                        resource=EventResourceFilter(id=[f"prefect.flow-run.{run.id}"])), limit=1).events

                wait_until(beats, bool, 120, "a heartbeat of the run")
            finally:
                process.kill()  # nothing is left to mark it: no worker watches this process
                process.wait()
            # nothing but the automation marks it: still Running, or (a loaded machine seeing the heartbeat late:
            # the automation fires 10-15 s after it, killed or not, the next beat being 30 s away) Crashed by it
            killed = client.read_flow_run(run.id).state
            assert killed.is_running() or (killed.is_crashed() and killed.message == automation["actions"][0][
                "message"]), (killed, log.read_text()[-3000:])
            crashed = wait_until(lambda: client.read_flow_run(run.id), lambda r: r.state.is_crashed(), 90,
                                 "the silent run marked Crashed")
            [notice] = wait_for_notices(client, run.id)
        finally:
            client.delete_automation(created.id)
    message = automation["actions"][0]["message"]
    assert crashed.state.message == message
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    assert crash_notice(**notice.parameters) == "told: team sent"
    [sent] = webhook.requests
    body = json.loads(sent["body"])
    assert body["title"] == "hweval 2026-12-06: run failed"
    assert body["message"].splitlines()[0] == f"flow run {crashed.name} crashed before it finished (Crashed: {message})"


def test_the_crash_notice_takes_only_what_the_crashed_runs_parameters_may_hold(deployed, tmp_path, webhook,
                                                                              monkeypatch):
    """A run that crashed before its flow started never had its parameters checked: a run id that is no run id (here
    with a line break that would forge a line in the message) is not used, and a path past 4,096 characters is
    refused, naming the parameter."""
    from prefect.client.orchestration import get_client

    from flows.crash_notice import CrashNoticeError, crash_notice

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    with get_client(sync_client=True) as client:
        forged = crashed_nightly_run(client, {"as_of": "2026-12-03", "catalog_dir": str(CATALOGS),
                                              "warehouse_file": str(tmp_path / "w.duckdb"),
                                              "run_id": "x\nbest offer for llama changed: FAKE"}, "killed")
        # the server checks a deployment run's parameters against the flow's types: a str, but no path
        listed = crashed_nightly_run(client, {"catalog_dir": "x" * 5000}, "killed")
    assert crash_notice(flow_run_id=str(forged.id)) == "told: team sent"
    [sent] = webhook.requests
    lines = json.loads(sent["body"])["message"].splitlines()
    assert f"Run: flow-run-{forged.id}" in lines and not any("FAKE" in line for line in lines)
    with pytest.raises(CrashNoticeError, match=r"the crashed run's parameter catalog_dir 'x{100}': expected a path "
                                               r"\(text of at most 4096 characters\), or none"):
        crash_notice(flow_run_id=str(listed.id))


def crashed_after_running(client, parameters: dict) -> tuple:
    """A nightly/on-demand run that ran its flow (Running: its attempt) and crashed; (the run, its attempt)."""
    from prefect.states import Crashed, Pending, Running

    deployment = client.read_deployment_by_name("nightly/on-demand")
    run = client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
    client.set_flow_run_state(run.id, Pending(), force=True)
    attempt = str(client.set_flow_run_state(run.id, Running(), force=True).state.id)
    client.set_flow_run_state(run.id, Crashed(message="Execution was aborted by an interrupt signal."), force=True)
    return client.read_flow_run(run.id), attempt


def test_a_hook_stopped_while_it_tells_leaves_the_crash_to_the_notice(deployed, tmp_path, webhook, monkeypatch):
    """The run's on_crashed hook tags the run as telling before it sends and as told after: stopped in between (a
    second Ctrl-C, SIGKILL at the end of a grace period), the run is not told, and the notice tells it after waiting
    for the hook (briefly here). Tagged as told first, the notice stayed quiet and no one was told."""
    from prefect.client.orchestration import get_client

    from flows import crash_notice as notice_module
    from flows import notify
    from flows.catalog import load_catalog

    with get_client(sync_client=True) as client:
        crashed, attempt = crashed_after_running(client, {"catalog_dir": str(CATALOGS), "as_of": "2026-12-03",
                                                          "warehouse_file": str(tmp_path / "w.duckdb")})
    notice_module.NOTICES[str(crashed.id)] = notice_module.CrashNotice(
        load_catalog(CATALOGS), dt.date(2026, 12, 3), "stopped", tmp_path / "reports", tmp_path / "outbox", attempt)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # the second Ctrl-C, as the hook sends

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    with monkeypatch.context() as patch:
        patch.setattr(notify, "send", stopped)
        with pytest.raises(KeyboardInterrupt):
            notice_module.tell_of_a_crash(None, crashed, crashed.state)
    with get_client(sync_client=True) as client:
        tags = client.read_flow_run(crashed.id).tags
    assert notice_module.mark(notice_module.TELLING_TAG, attempt) in tags
    assert notice_module.mark(notice_module.TOLD_TAG, attempt) not in tags
    monkeypatch.setattr(notice_module, "TELLING_WAIT_S", 1.0)
    assert notice_module.crash_notice(flow_run_id=str(crashed.id)) == "told: team sent"
    assert len(webhook.requests) == 1


def test_the_notice_waits_for_a_hook_that_is_telling_and_stays_quiet_once_it_told(deployed, tmp_path, webhook,
                                                                                  monkeypatch):
    """A hook still sending (a slow channel, kept messages sent again first) finishes 2 s after the notice starts:
    the notice waited for it, and said nothing."""
    import threading
    import time

    from prefect.client.orchestration import get_client

    from flows import crash_notice as notice_module

    with get_client(sync_client=True) as client:
        crashed, attempt = crashed_after_running(client, {"catalog_dir": str(CATALOGS)})
    tags = notice_module.tag_run(crashed.id, crashed.tags, notice_module.TELLING_TAG, attempt)
    done = threading.Timer(2.0, notice_module.tag_run, (crashed.id, tags, notice_module.TOLD_TAG, attempt))
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    started = time.monotonic()
    done.start()
    try:
        assert notice_module.crash_notice(flow_run_id=str(crashed.id)) == "told by the run"
    finally:
        done.join()
    assert time.monotonic() - started >= 2.0 and webhook.requests == []


def test_a_retried_run_that_crashes_is_told_though_an_earlier_attempt_told(deployed, webhook, monkeypatch):
    """`prefect flow-run retry` runs the same flow run again, its tags kept: the first attempt told its channels
    (tagged told), the retry was killed before its flow ran. The marks name their attempt, so the notice tells."""
    from prefect.client.orchestration import get_client
    from prefect.states import AwaitingRetry, Crashed, Pending

    from flows import crash_notice as notice_module

    with get_client(sync_client=True) as client:
        first, attempt = crashed_after_running(client, {"catalog_dir": str(CATALOGS)})
        notice_module.tag_run(first.id, first.tags, notice_module.TOLD_TAG, attempt)
        client.set_flow_run_state(first.id, AwaitingRetry(), force=True)
        client.set_flow_run_state(first.id, Pending(), force=True)
        client.set_flow_run_state(first.id, Crashed(message="exited with status -9"), force=True)
    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    assert notice_module.crash_notice(flow_run_id=str(first.id)) == "told: team sent"
    assert len(webhook.requests) == 1


def test_the_crash_notice_refuses_what_is_no_crashed_nightly_run(deployed, webhook, monkeypatch):
    from prefect.client.orchestration import get_client

    from flows.crash_notice import CrashNoticeError, crash_notice

    monkeypatch.setenv("HWEVAL_NOTIFY_URL", webhook.url())
    for bad in ("", "prefect.flow-run.1234", "prefect.deployment.0b7e0c5e-6c1a-4c4e-9a8e-3f0f1c2d3e4f",
                "0b7e0c5e-6c1a-4c4e-9a8e-3f0f1c2d3e4f\n"):
        with pytest.raises(CrashNoticeError, match="expected a flow run's UUID, or the event resource"):
            crash_notice(flow_run_id=bad)
    with pytest.raises(CrashNoticeError, match="no such flow run on this Prefect server"):
        crash_notice(flow_run_id="0b7e0c5e-6c1a-4c4e-9a8e-3f0f1c2d3e4f")
    with get_client(sync_client=True) as client:
        run = client.create_flow_run_from_deployment(client.read_deployment_by_name("nightly/on-demand").id)
    assert crash_notice(flow_run_id=str(run.id)) == "not crashed"  # Scheduled
    assert webhook.requests == []
