"""flows/automations.yaml: the automation that marks Crashed a nightly run gone silent, read as Prefect reads it
(`prefect automation create --from-file` validates each entry as an AutomationCore). Its run on a real server, with a
run killed outright, is tests/test_deployments.py's (make test-slow)."""

import datetime as dt

import yaml

from flows.paths import PROJECT_ROOT

AUTOMATIONS = PROJECT_ROOT / "flows" / "automations.yaml"


def automations() -> list:
    from prefect.events.schemas.automations import AutomationCore

    return [AutomationCore.model_validate(entry) for entry in yaml.safe_load(AUTOMATIONS.read_text())["automations"]]


def deployments() -> dict:
    return {d["name"]: d for d in yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text())["deployments"]}


def test_the_file_holds_one_automation_prefect_accepts_that_marks_a_silent_run_crashed():
    from prefect.client.schemas.objects import StateType
    from prefect.events.actions import ChangeFlowRunState
    from prefect.events.schemas.automations import Posture

    [automation] = automations()
    assert automation.name == "hweval-silent-nightly-runs-crashed" and automation.enabled
    trigger = automation.trigger
    # proactive: it fires on what did not come: after a heartbeat, none of `expect` within `within`, per run
    assert trigger.posture == Posture.Proactive and trigger.threshold == 1
    assert trigger.after == {"prefect.flow-run.heartbeat"}
    assert trigger.for_each == {"prefect.resource.id"}
    # a run that ended in any way sends no more heartbeats and is no zombie: every terminal state disarms it
    assert trigger.expect == {"prefect.flow-run.heartbeat", "prefect.flow-run.Completed", "prefect.flow-run.Failed",
                              "prefect.flow-run.Cancelled", "prefect.flow-run.Crashed"}
    [action] = automation.actions
    assert isinstance(action, ChangeFlowRunState) and action.state == StateType.CRASHED
    assert "No heartbeat for 120 s" in action.message


def test_it_watches_the_runs_the_crash_notice_tells_of():
    """The runs it marks Crashed are those whose Crashed state starts prefect.yaml's crash-notice: a run of the flow
    nightly tagged hweval (another project's flow named nightly is left alone)."""
    [automation] = automations()
    [notice_trigger] = deployments()["crash-notice"]["triggers"]
    assert automation.trigger.match.model_dump() == notice_trigger["match"] == {
        "prefect.resource.id": "prefect.flow-run.*"}
    assert [spec.model_dump() for spec in automation.trigger.match_related] == notice_trigger["match_related"] == [
        {"prefect.resource.role": "flow", "prefect.resource.name": "nightly"},
        {"prefect.resource.role": "tag", "prefect.resource.id": "prefect.tag.hweval"}]
    for name in ("nightly", "on-demand"):
        assert "hweval" in deployments()[name]["tags"]


def test_a_run_is_taken_as_dead_after_four_heartbeats_of_silence():
    """Both nightly deployments send a heartbeat every 30 s (Prefect's default is 180 s, longer than the automation's
    wait: without it every run would be marked Crashed while it works); silence for within = 120 s = 4 x 30 s means
    three heartbeats missed in a row."""
    [automation] = automations()
    for name in ("nightly", "on-demand"):
        deployment = deployments()[name]
        assert deployment["entrypoint"] == "flows/nightly.py:nightly"
        assert deployment["work_pool"]["job_variables"]["env"] == {"PREFECT_FLOWS_HEARTBEAT_FREQUENCY": "30"}
    assert automation.trigger.within == dt.timedelta(seconds=120)  # 4 x 30 s
