"""flows/automations.yaml: the automation that marks Crashed a nightly run gone silent, read as Prefect reads it
(`prefect automation create --from-file` validates each entry as an AutomationCore). Its run on a real server, with a
run killed outright, is tests/test_deployments.py's (make test-slow)."""

import datetime as dt
import re

import pytest
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


# ---------------------------------------------------------------- hweval automations: created once, updated in place
def write_automations(path, *entries: dict):
    path.write_text(yaml.safe_dump({"automations": list(entries)}))
    return path


def file_automation(name: str, within: int = 120) -> dict:
    """The file's automation under another name (the session's server may hold the file's own), waiting `within`."""
    [entry] = yaml.safe_load(AUTOMATIONS.read_text())["automations"]
    entry["name"] = name
    entry["trigger"]["within"] = within
    return entry


def test_hweval_automations_creates_once_then_updates_in_place_and_refuses_copies(prefect_server, tmp_path, capsys):
    """`prefect automation create` makes another copy each time it runs: two would each mark a silent run Crashed and
    its crash notice would tell the channels twice. `hweval automations` finds each by its name on the server."""
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore

    from flows import automations as applying
    from flows.cli import main

    name = f"hweval-test-{tmp_path.name}"
    path = write_automations(tmp_path / "automations.yaml", file_automation(name))
    with get_client(sync_client=True) as client:
        try:
            assert main(["automations", "--file", str(path)]) == 0
            [created] = client.read_automations_by_name(name)
            assert capsys.readouterr().out == f"created {name} ({created.id})\n"
            assert created.trigger.within == dt.timedelta(seconds=120)
            # the same file again: nothing to do, still one
            assert [(a.done, a.automation_id) for a in applying.apply(path)] == [("unchanged", created.id)]
            # a changed file: the same automation, changed in place
            write_automations(path, file_automation(name, within=60))
            assert [(a.done, a.automation_id) for a in applying.apply(path)] == [("updated", created.id)]
            [updated] = client.read_automations_by_name(name)
            assert (updated.id, updated.trigger.within) == (created.id, dt.timedelta(seconds=60))
            # a copy made as `prefect automation create` makes one: refused, naming both, and nothing changed
            copy = client.create_automation(AutomationCore.model_validate(file_automation(name, within=90)))
            write_automations(path, file_automation(name, within=30))
            assert main(["automations", "--file", str(path)]) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"hweval: the server holds 2 automations named {name!r} (")
            assert str(created.id) in err and str(copy) in err and "nothing was changed" in err
            assert sorted(a.trigger.within.seconds for a in client.read_automations_by_name(name)) == [60, 90]
        finally:
            for automation in client.read_automations_by_name(name):
                client.delete_automation(automation.id)


def test_a_key_taken_out_of_the_file_is_taken_off_the_server(prefect_server, tmp_path):
    """Prefect's update sends only the fields a model was given: a key taken out of the file would stay on the server,
    and every later run would say `updated` again. Each field is sent, so the server then matches the file."""
    from prefect.client.orchestration import get_client

    from flows import automations as applying

    name = f"hweval-test-keys-{tmp_path.name}"
    extra = {"tags": ["x"], "enabled": False, "actions_on_trigger": [{"type": "do-nothing"}]}
    path = write_automations(tmp_path / "a.yaml", file_automation(name) | extra)
    with get_client(sync_client=True) as client:
        try:
            [created] = applying.apply(path)
            write_automations(path, file_automation(name))  # no tags, enabled as the file says, no actions_on_trigger
            assert [(a.done, a.automation_id) for a in applying.apply(path)] == [("updated", created.automation_id)]
            assert [a.done for a in applying.apply(path)] == ["unchanged"]
            [there] = client.read_automations_by_name(name)
            assert (there.tags, there.enabled, there.actions_on_trigger) == ([], True, [])
        finally:
            for automation in client.read_automations_by_name(name):
                client.delete_automation(automation.id)


def test_a_server_that_does_not_answer_is_one_line_and_exit_1(tmp_path, capsys):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.cli import main

    path = write_automations(tmp_path / "a.yaml", file_automation("a"))
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):  # port 9 (discard): nothing listens
        assert main(["automations", "--file", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hweval: the Prefect server at http://127.0.0.1:9/api did not take the automations "
                          "(ConnectError: ")
    assert err.endswith("; applied before it: nothing\n") and err.count("\n") == 1


@pytest.mark.parametrize(("text", "message"), [
    ("automations: []\n", r": expected a mapping with a non-empty list `automations`"),
    ("automations: [\n", r": while parsing a flow node expected the node content"),
    ("automations:\n  - name: x\n", r": automations\[0\]\.trigger: Field required$"),
    ("automations:\n  - just a name\n", r": automations\[0\]: Input should be a valid dictionary"),
    ("automations:\n  - {name: x, tags: [a, 1], trigger: {type: event}, actions: []}\n",
     r": automations\[0\]\.tags\[1\]: Input should be a valid string$"),
    ("automations:\n  - {name: x, owner_resource: prefect.deployment.d}\n",
     r": automations\[0\]\.owner_resource: an automation owned by a resource \(a deployment's trigger\) is made "),
])
def test_a_file_prefect_would_not_take_is_refused_naming_it_before_the_server_is_asked(tmp_path, text, message):
    from flows.automations import AutomationsError, read_file

    path = tmp_path / "automations.yaml"
    path.write_text(text)
    with pytest.raises(AutomationsError, match=re.escape(str(path)) + message):
        read_file(path)


def test_two_automations_of_one_name_and_too_many_are_refused(tmp_path, monkeypatch):
    from flows import automations as applying

    path = write_automations(tmp_path / "a.yaml", file_automation("a"), file_automation("b"), file_automation("a"))
    with pytest.raises(applying.AutomationsError, match=r": two automations are named 'a': each is found on the "):
        applying.read_file(path)
    monkeypatch.setattr(applying, "MAX_AUTOMATIONS", 2)
    with pytest.raises(applying.AutomationsError, match=r": 3 automations, more than 2 \(MAX_AUTOMATIONS in "):
        applying.read_file(path)


def test_without_a_lasting_server_nothing_is_applied(monkeypatch):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.automations import AutomationsError, apply

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with (temporary_settings(restore_defaults={PREFECT_API_URL}),
          pytest.raises(AutomationsError, match=r"^PREFECT_API_URL is not set: automations live on a lasting ")):
        apply()
