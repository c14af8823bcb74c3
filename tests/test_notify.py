"""Notifications: one short message per channel, sent with apprise to a webhook on 127.0.0.1, never leaking a secret."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import socket
import time
from pathlib import Path

import pytest
import yaml

from flows import notify
from flows.catalog import CatalogError, load_catalog
from flows.catalog_models import NotificationsFile
from flows.notify import Delivery, Event, compose, report_link, send

AS_OF = dt.date(2026, 11, 30)
RUN_ID = "2026-11-30-nightly"
LINK = "https://reports.example.org/hweval/2026-11-30/index.md"
ALL_EVENTS = ["best_offer_changed", "source_stale_past_limit", "run_failed"]
SECRET_PASSWORD = "s3cr3tpass"
SECRET_TOKEN = "abcd1234"

BEST_CHANGED = Event("best_offer_changed", "Best for llama31-8b-chat-small is now aws g6.2xlarge spot "
                                           "(was azure Standard_NC40ads_H100_v5 on_demand): 0.42 USD per 1M tokens")
STALE = Event("source_stale_past_limit", "aws_pricing stale for 9 days (limit 7): LiveSourceError: access denied\n"
                                         "fetching https://pricing.example/p?X-Amz-Signature=deadbeef")
FAILED = Event("run_failed",
               "run 2026-11-30-nightly failed: CatalogError: sources.yaml: sources.aws_pricing: unknown key")


def channels(**events_by_channel: list[str]) -> NotificationsFile:
    return NotificationsFile.model_validate({"channels": {
        name: {"url_env": f"HWEVAL_NOTIFY_{name.upper()}", "events": events}
        for name, events in events_by_channel.items()}})


def test_a_channel_on_every_event_gets_one_message_with_the_lines_and_the_link(webhook):
    config = channels(team=ALL_EVENTS)
    deliveries = send(config, [BEST_CHANGED, STALE, FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_TEAM": webhook.url()})
    assert deliveries == [Delivery("team", "sent", "one message via HWEVAL_NOTIFY_TEAM")]
    [request] = webhook.requests
    assert request["path"] == "/hook"
    payload = json.loads(request["body"])
    assert set(payload) >= {"title", "message", "type", "version"}
    assert payload["type"] == "failure"
    assert payload["title"] == ("hweval 2026-11-30: run failed; 1 source stale past its limit; "
                                "best offer changed for 1 workload")
    assert payload["message"] == (
        "run 2026-11-30-nightly failed: CatalogError: sources.yaml: sources.aws_pricing: unknown key\n"
        "aws_pricing stale for 9 days (limit 7): LiveSourceError: access denied fetching "
        "https://pricing.example/p?X-Amz-Signature=***\n"
        "Best for llama31-8b-chat-small is now aws g6.2xlarge spot (was azure Standard_NC40ads_H100_v5 on_demand): "
        "0.42 USD per 1M tokens\n"
        "\n"
        "Report: https://reports.example.org/hweval/2026-11-30/index.md\n"
        "Run: 2026-11-30-nightly"
    )


def test_a_channel_gets_only_its_events_and_nothing_when_none_happened(webhook):
    config = channels(oncall=["run_failed"], analysts=["best_offer_changed"])
    environ = {"HWEVAL_NOTIFY_ONCALL": webhook.url("/oncall"), "HWEVAL_NOTIFY_ANALYSTS": webhook.url("/analysts")}
    deliveries = send(config, [BEST_CHANGED, BEST_CHANGED], as_of=AS_OF, run_id=RUN_ID, link=LINK, environ=environ)
    assert deliveries == [
        Delivery("oncall", "nothing to send", "none of its events (run_failed) happened"),
        Delivery("analysts", "sent", "one message via HWEVAL_NOTIFY_ANALYSTS"),
    ]
    assert [r["path"] for r in webhook.requests] == ["/analysts"]
    payload = json.loads(webhook.requests[0]["body"])
    assert payload["title"] == "hweval 2026-11-30: best offer changed for 2 workloads"
    assert payload["type"] == "info"


def test_an_unset_variable_skips_the_channel_and_the_others_still_go(webhook, caplog):
    caplog.set_level(logging.INFO, logger="flows.notify")
    config = channels(team=ALL_EVENTS, oncall=["run_failed"])
    deliveries = send(config, [FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_ONCALL": webhook.url()})
    assert deliveries == [Delivery("team", "skipped", "HWEVAL_NOTIFY_TEAM is not set"),
                          Delivery("oncall", "sent", "one message via HWEVAL_NOTIFY_ONCALL")]
    assert len(webhook.requests) == 1
    assert "notification channel team: skipped (HWEVAL_NOTIFY_TEAM is not set)" in caplog.text


def test_no_secret_of_the_url_reaches_the_log_or_a_delivery(webhook, caplog):
    caplog.set_level(1)  # everything, apprise's TRACE included: it logs the URL it unpacks there
    secret_url = f"json://user:{SECRET_PASSWORD}@127.0.0.1:{webhook.port}/hook?token={SECRET_TOKEN}"
    not_a_url = f"https://example.invalid/hook?token={SECRET_TOKEN}&password={SECRET_PASSWORD}"
    config = channels(team=ALL_EVENTS, broken=ALL_EVENTS)
    deliveries = send(config, [FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_TEAM": secret_url, "HWEVAL_NOTIFY_BROKEN": not_a_url})
    assert deliveries == [
        Delivery("team", "sent", "one message via HWEVAL_NOTIFY_TEAM"),
        Delivery("broken", "failed", "HWEVAL_NOTIFY_BROKEN is not a URL apprise understands"),
    ]
    assert webhook.requests[0]["headers"]["Authorization"].startswith("Basic ")  # the secret URL was used
    assert "apprise" in {r.name for r in caplog.records}
    shown = caplog.text + "".join(d.detail for d in deliveries)
    assert SECRET_PASSWORD not in shown and SECRET_TOKEN not in shown


@pytest.mark.parametrize(("path", "decoded"), [
    ("/hooks/ab%2Bs3cr3tT0kenZZ", "ab+s3cr3tT0kenZZ"),  # apprise logs the path decoded: the raw piece was masked only
    ("/hooks/q%20s3cr3t+T0ken", "q s3cr3t T0ken"),  # + read as a space (unquote_plus)
])
def test_a_percent_escaped_secret_reaches_the_log_in_no_form(webhook, caplog, path, decoded):
    caplog.set_level(1)  # everything, apprise's TRACE and DEBUG included
    deliveries = send(channels(team=ALL_EVENTS), [FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_TEAM": f"json://127.0.0.1:{webhook.port}{path}"})
    assert deliveries == [Delivery("team", "sent", "one message via HWEVAL_NOTIFY_TEAM")]
    assert "apprise" in {r.name for r in caplog.records}
    shown = caplog.text + "".join(d.detail for d in deliveries)
    for form in {decoded, path.rpartition("/")[2], *decoded.split("+"), *decoded.split(" ")} - {"q", "ab"}:
        assert form not in shown, form


def test_an_exception_inside_apprise_is_a_failed_delivery_without_the_url(webhook, monkeypatch, caplog):
    secret_url = f"json://user:{SECRET_PASSWORD}@127.0.0.1:{webhook.port}/hook"

    def explode(*args: object, **kwargs: object) -> bool:
        raise RuntimeError(f"could not reach {secret_url}")

    monkeypatch.setattr(notify.apprise.Apprise, "notify", explode)
    deliveries = send(channels(team=ALL_EVENTS), [FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_TEAM": secret_url})
    assert deliveries == [Delivery("team", "failed", "RuntimeError: could not reach ***")]
    assert SECRET_PASSWORD not in caplog.text


def test_a_receiver_answering_500_is_a_failed_delivery_not_an_exception(webhook):
    webhook.status = 500
    deliveries = send(channels(team=ALL_EVENTS), [STALE], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                      environ={"HWEVAL_NOTIFY_TEAM": webhook.url()})
    assert deliveries == [Delivery("team", "failed", "the service at HWEVAL_NOTIFY_TEAM refused the message or did "
                                                     "not answer in time; apprise's log says which")]
    assert len(webhook.requests) == 1


def test_an_endpoint_that_never_answers_costs_at_most_the_declared_timeouts(monkeypatch):
    monkeypatch.setattr(notify, "CONNECT_TIMEOUT_S", 0.5)
    monkeypatch.setattr(notify, "READ_TIMEOUT_S", 0.5)
    with socket.socket() as silent:  # accepts connections into its backlog, never reads or answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        started = time.monotonic()
        [delivery] = send(channels(team=ALL_EVENTS), [FAILED], as_of=AS_OF, run_id=RUN_ID, link=LINK,
                          environ={"HWEVAL_NOTIFY_TEAM": f"json://127.0.0.1:{silent.getsockname()[1]}/hook"})
        elapsed_s = time.monotonic() - started
    assert delivery.status == "failed"
    assert elapsed_s < 3  # apprise's own read timeout is 4 s: the declared 0.5 s applied


def test_more_events_than_max_lines_are_counted_not_shown():
    events = [Event("best_offer_changed", f"Best for workload-{i} changed") for i in range(5)]
    title, body = compose(events, as_of=AS_OF, run_id=RUN_ID, link=LINK, max_lines=2)
    assert title == "hweval 2026-11-30: best offer changed for 5 workloads"
    assert body == ("Best for workload-0 changed\n"
                    "Best for workload-1 changed\n"
                    "… and 3 more\n"
                    "\n"
                    f"Report: {LINK}\n"
                    f"Run: {RUN_ID}")


def test_long_lines_are_cut_and_the_body_is_bounded():
    events = [Event("source_stale_past_limit", f"src{i} " + "x" * 1000) for i in range(100)]
    title, body = compose(events, as_of=AS_OF, run_id=RUN_ID, link=LINK, max_lines=100)
    lines = body.split("\n")
    assert title == "hweval 2026-11-30: 100 sources stale past their limit"
    assert len(lines[0]) == notify.MAX_LINE_CHARS and lines[0].endswith("…")
    shown = len(lines) - 4  # the "… and N more" line, a blank line, Report and Run
    assert sum(len(line) + 1 for line in lines[:shown]) <= notify.MAX_BODY_CHARS
    assert lines[shown] == f"… and {100 - shown} more"


def test_the_report_link_uses_report_url_or_the_local_path(tmp_path):
    served = NotificationsFile(report_url="https://reports.example.org/hweval/")
    assert report_link(served, tmp_path, AS_OF) == "https://reports.example.org/hweval/2026-11-30/index.md"
    assert report_link(NotificationsFile(), tmp_path, AS_OF) == str(tmp_path / "2026-11-30" / "index.md")
    # a failed run's message: it published no reports, the last good run's are in latest/
    assert report_link(served, tmp_path, None) == "https://reports.example.org/hweval/latest/index.md"
    assert report_link(NotificationsFile(), tmp_path, None) == str(tmp_path / "latest" / "index.md")


def test_an_unknown_event_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown notification event 'price_dropped'"):
        Event("price_dropped", "text")


def write_notifications(catalog_dir: Path, data: dict) -> None:
    (catalog_dir / "notifications.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def test_the_shipped_notifications_catalog_reads_the_url_from_the_environment(catalog):
    team = catalog.notifications.channels["team"]
    assert (team.url_env, team.events, team.max_lines) == ("HWEVAL_NOTIFY_URL", ALL_EVENTS, 10)
    assert catalog.notifications.report_url is None


def test_the_shipped_notifications_catalog_says_an_undelivered_message_fails_the_run_with_status_5(catalog):
    # it said "is logged and never fails the run", where the run exits with status 5 (README.md, Notifications)
    comments = " ".join(line.lstrip("# ") for line in (catalog.root / "notifications.yaml").read_text().splitlines()
                        if line.startswith("#"))
    assert "never fails the run" not in comments
    assert ("A notification that cannot be sent changes nothing the run published, but the run fails: the undelivered "
            "events are logged as warnings and `hweval run` exits with status 5") in comments


def test_a_url_written_in_the_catalog_is_rejected(catalog_copy):
    write_notifications(catalog_copy, {"channels": {"team": {"url": "json://host/hook", "events": ["run_failed"]}}})
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value) == ("notifications.yaml: channels.team.url_env: missing required key\n"
                              "notifications.yaml: channels.team.url: unknown key (not part of the notifications.yaml "
                              "schema)")


def test_a_missing_notifications_catalog_means_no_channels(catalog_copy):
    (catalog_copy / "notifications.yaml").unlink()
    assert load_catalog(catalog_copy).notifications == NotificationsFile()


def test_an_unknown_event_name_is_rejected_naming_the_channel(catalog_copy):
    write_notifications(catalog_copy, {"channels": {"team": {"url_env": "HWEVAL_NOTIFY_URL",
                                                             "events": ["run_failed", "price_dropped"]}}})
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert str(err.value).startswith("notifications.yaml: channels.team.events.1: Input should be ")
    assert "(got 'price_dropped')" in str(err.value)


def test_an_event_listed_twice_or_a_lowercase_variable_is_rejected(catalog_copy):
    write_notifications(catalog_copy, {"channels": {"team": {"url_env": "hweval_url",
                                                             "events": ["run_failed", "run_failed"]}}})
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    message = str(err.value)
    assert "notifications.yaml: channels.team.url_env: String should match pattern" in message
    assert "notifications.yaml: channels.team.events: Value error, run_failed listed more than once" in message


# ---------------------------------------------------------------- messages a channel did not take (flows/outbox.py)
def kept_files(box: Path, channel: str = "team") -> list[Path]:
    return sorted((box / channel).glob("*.json"))


def to_team(webhook, box: Path, events: list[Event], *, as_of: dt.date = AS_OF, run_id: str = RUN_ID,
            environ: dict[str, str] | None = None) -> list[Delivery]:
    """One run's notification of the channel `team` (every event), its URL the webhook's unless `environ` says."""
    return send(channels(team=ALL_EVENTS), events, as_of=as_of, run_id=run_id, link=LINK, box=box,
                environ={"HWEVAL_NOTIFY_TEAM": webhook.url()} if environ is None else environ)


def refused_once(webhook, box: Path) -> Path:
    """A night whose run_failed message the webhook refused (500): the file it left in the outbox. The webhook
    answers 200 from then on."""
    webhook.status = 500
    to_team(webhook, box, [FAILED])
    webhook.status = 200
    [kept] = kept_files(box)
    return kept


def test_a_message_the_channel_refused_is_kept_and_sent_first_by_the_next_run(webhook, tmp_path):
    box = tmp_path / "outbox"
    webhook.status = 500
    [refused] = to_team(webhook, box, [STALE])
    assert refused.status == "failed"
    assert refused.detail.endswith(f"; kept in {box} to be sent again by the next run")
    [kept] = kept_files(box)
    stored = json.loads(kept.read_text())
    assert (stored["run_id"], stored["as_of"], stored["notify_type"], stored["attempts"]) == (
        RUN_ID, "2026-11-30", "warning", 1)
    assert "aws_pricing stale for 9 days" in stored["body"]
    assert "deadbeef" not in kept.read_text()  # kept as composed: the signature already masked

    webhook.status = 200  # the next day: the kept message goes first, then the day's own
    deliveries = to_team(webhook, box, [BEST_CHANGED], as_of=dt.date(2026, 12, 1), run_id="2026-12-01-nightly")
    assert [d.status for d in deliveries] == ["re-sent", "sent"]
    assert deliveries[0].detail == (f"run {RUN_ID}'s message, first tried at {stored['first_tried']} UTC, "
                                    "via HWEVAL_NOTIFY_TEAM")
    _, again, today = [json.loads(r["body"]) for r in webhook.requests]
    assert again["title"] == "[re-sent] hweval 2026-11-30: 1 source stale past its limit"
    assert again["type"] == "warning"
    assert again["message"] == (stored["body"] + f"\n(not delivered when first tried at {stored['first_tried']} "
                                                  "UTC; 1 attempt before this one)")
    assert today["title"] == "hweval 2026-12-01: best offer changed for 1 workload"
    assert list((box / "team").iterdir()) == []  # nothing kept, nor held as taken (".sending") to be sent again


def test_a_kept_message_refused_again_stays_with_the_ones_behind_it_and_counts_its_attempts(webhook, tmp_path):
    box = tmp_path / "outbox"
    webhook.status = 500
    for day in (1, 2):  # two nights refused: two kept messages
        to_team(webhook, box, [FAILED], as_of=dt.date(2026, 12, day), run_id=f"2026-12-0{day}-nightly")
    # night 1: its own message; night 2: night 1's again (refused), then its own
    assert len(kept_files(box)) == 2 and len(webhook.requests) == 1 + 2
    deliveries = to_team(webhook, box, [], as_of=dt.date(2026, 12, 3), run_id="2026-12-03-nightly")
    # the oldest tried once more and refused; the second not tried behind it; no events of its own this night
    assert [d.status for d in deliveries] == ["failed", "nothing to send"]
    assert deliveries[0].detail.startswith("re-sending run 2026-12-01-nightly's message, first tried at ")
    assert deliveries[0].detail.endswith(f"; kept with 1 other in {box}")
    assert len(webhook.requests) == 3 + 1
    attempts = {json.loads(p.read_text())["run_id"]: json.loads(p.read_text())["attempts"] for p in kept_files(box)}
    assert attempts == {"2026-12-01-nightly": 3, "2026-12-02-nightly": 1}  # night 1's: its own, nights 2 and 3


def test_the_outbox_keeps_at_most_max_kept_a_channel_and_says_which_it_removed(webhook, tmp_path, monkeypatch):
    monkeypatch.setattr(notify.outbox, "MAX_KEPT", 2)
    box = tmp_path / "outbox"
    webhook.status = 500
    details = [to_team(webhook, box, [FAILED], as_of=dt.date(2026, 12, day),
                       run_id=f"2026-12-0{day}-nightly")[-1].detail for day in (1, 2, 3)]
    assert "removed" not in details[0] + details[1]
    # the third night keeps its own, and the first night's goes: 2 kept at most, and the delivery names it
    assert details[2].endswith(", which removed the oldest kept (2 at most): run 2026-12-01-nightly's "
                               "'hweval 2026-12-01: run failed'")
    assert sorted(json.loads(p.read_text())["run_id"] for p in kept_files(box)) == [
        "2026-12-02-nightly", "2026-12-03-nightly"]


def test_kept_messages_wait_while_the_variable_is_unset_and_an_unreadable_one_is_named(webhook, tmp_path):
    box = tmp_path / "outbox"
    webhook.status = 500
    to_team(webhook, box, [FAILED])
    [waiting] = to_team(webhook, box, [], environ={})
    assert waiting == Delivery("team", "skipped", f"HWEVAL_NOTIFY_TEAM is not set; 1 undelivered message kept in {box}")
    assert len(kept_files(box)) == 1

    broken = box / "team" / "0000-broken.json"  # sorts first: read before the good one
    broken.write_text('{"channel": "team", "attempts": "many"}')
    webhook.status = 200
    deliveries = to_team(webhook, box, [])
    assert [d.status for d in deliveries] == ["failed", "re-sent", "nothing to send"]
    assert deliveries[0].detail.startswith(f"a kept message could not be read: {broken}: not a kept message")
    assert deliveries[0].detail.endswith("; renamed to 0000-broken.json.unreadable")
    assert (box / "team" / "0000-broken.json.unreadable").exists() and kept_files(box) == []


def test_a_message_another_run_is_sending_is_left_to_it_until_that_run_is_presumed_dead(webhook, tmp_path,
                                                                                         monkeypatch):
    box = tmp_path / "outbox"
    kept = refused_once(webhook, box)
    claimed = kept.rename(kept.with_name(f"{kept.name}.{time.time_ns()}.sending"))  # another run has just taken it
    assert notify.outbox.count(box, "team") == 0
    to_team(webhook, box, [BEST_CHANGED])
    assert len(webhook.requests) == 2 and claimed.exists()  # the day's own message only
    monkeypatch.setattr(notify.outbox, "CLAIM_STALE_S", 0.0)  # that run died holding it
    time.sleep(0.01)
    deliveries = to_team(webhook, box, [FAILED])
    assert [d.status for d in deliveries] == ["re-sent", "sent"]
    assert json.loads(webhook.requests[2]["body"])["title"] == "[re-sent] hweval 2026-11-30: run failed"
    assert not claimed.exists() and kept_files(box) == []


def test_a_kept_message_sent_but_not_removed_is_a_failed_delivery_and_the_days_own_still_goes(webhook, tmp_path,
                                                                                              monkeypatch):
    box = tmp_path / "outbox"
    refused_once(webhook, box)

    def read_only(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(notify.outbox.Taken, "sent", read_only)
    deliveries = to_team(webhook, box, [BEST_CHANGED])
    assert [d.status for d in deliveries] == ["failed", "sent"]  # told, and the day's own message not held back
    assert re.search(r"\.json\.[0-9]+\.sending could not be removed \(\[Errno 13\] Permission denied\): it is "
                     r"sent again once its claim is 900 s old$", deliveries[0].detail)
    assert len(webhook.requests) == 3


def test_a_file_nested_too_deep_to_read_is_set_aside_and_the_channel_still_told(webhook, tmp_path):
    box = tmp_path / "outbox"
    (box / "team").mkdir(parents=True)
    (box / "team" / "0000-deep.json").write_text("[" * 50_000)  # under 64 KB; json.loads raises RecursionError
    deliveries = to_team(webhook, box, [FAILED])
    assert [d.status for d in deliveries] == ["failed", "sent"]
    assert "0000-deep.json: not a kept message (RecursionError" in deliveries[0].detail
    assert [p.name for p in (box / "team").iterdir()] == ["0000-deep.json.unreadable"]


def test_an_outbox_that_cannot_be_read_is_a_failed_delivery_and_the_days_own_still_goes(webhook, tmp_path,
                                                                                         monkeypatch):
    def refused(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(notify.outbox, "count", refused)
    deliveries = to_team(webhook, tmp_path / "outbox", [FAILED])
    assert deliveries == [
        Delivery("team", "failed", f"the outbox {tmp_path / 'outbox'} could not be read or written: "
                                   "PermissionError: [Errno 13] Permission denied", kept=True),
        Delivery("team", "sent", "one message via HWEVAL_NOTIFY_TEAM")]


def test_a_message_refused_max_attempts_times_is_set_aside_and_the_next_is_tried(webhook, tmp_path, monkeypatch):
    """Attempts: night 1 keeps its message (1); night 2 tries it again (2 = MAX_ATTEMPTS here): set aside, not sent
    again and never removed, and night 2's own is tried after it (and kept, the channel still refusing)."""
    monkeypatch.setattr(notify.outbox, "MAX_ATTEMPTS", 2)
    box = tmp_path / "outbox"
    webhook.status = 500
    to_team(webhook, box, [FAILED], as_of=dt.date(2026, 12, 1), run_id="2026-12-01-nightly")
    deliveries = to_team(webhook, box, [STALE], as_of=dt.date(2026, 12, 2), run_id="2026-12-02-nightly")
    assert [(d.status, d.kept) for d in deliveries] == [("failed", True), ("failed", False)]
    [aside] = (box / "team").glob("*.undeliverable")
    assert deliveries[0].detail.endswith(f"; refused 2 times in all, so set aside as {aside} and not sent again")
    assert json.loads(aside.read_text())["run_id"] == "2026-12-01-nightly"
    assert [json.loads(p.read_text())["run_id"] for p in kept_files(box)] == ["2026-12-02-nightly"]


def test_a_claim_is_judged_by_the_time_in_its_name_not_the_file_time_the_rename_kept(webhook, tmp_path):
    """A rename keeps the file's time: a message kept a day ago and taken just now must not look a day-old claim
    to another run (which would take it back and send it twice)."""
    box = tmp_path / "outbox"
    kept = refused_once(webhook, box)
    day_ago = time.time() - 86_400
    os.utime(kept, (day_ago, day_ago))
    claimed = kept.rename(kept.with_name(f"{kept.name}.{time.time_ns()}.sending"))  # another run, just now
    assert notify.outbox.count(box, "team") == 0 and claimed.exists()


def test_a_run_fails_on_its_own_message_undelivered_and_apart_on_earlier_ones(webhook, tmp_path):
    """Night 1's own message refused: its run fails saying its events were not delivered. Night 2, the channel's
    variable unset: the kept message waits, and that is no failure. Night 3 has no events of its own and the kept
    message is refused again: the run fails (exit 5) for the earlier message only, and says nothing of its own."""
    box = tmp_path / "outbox"
    webhook.status = 500
    night1 = to_team(webhook, box, [FAILED])
    assert notify.failures(night1) == [(
        "notifying channel(s) team failed (the run's events were not delivered: the service at HWEVAL_NOTIFY_TEAM "
        f"refused the message or did not answer in time; apprise's log says which; kept in {box} to be sent again by "
        "the next run)")]
    kept = kept_files(box)
    # the variable unset: kept messages wait, no failure
    night2 = to_team(webhook, box, [], as_of=dt.date(2026, 12, 1), run_id="2026-12-01-nightly", environ={})
    assert notify.failures(night2) == [] and kept_files(box) == kept
    webhook.status = 500
    # nothing of its own: only the kept message, refused again
    night3 = to_team(webhook, box, [], as_of=dt.date(2026, 12, 2), run_id="2026-12-02-nightly")
    [failure] = notify.failures(night3)
    assert failure.startswith(f"re-sending earlier runs' undelivered messages to channel(s) team failed: re-sending "
                              f"run {RUN_ID}'s message, first tried at ")


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_fifo_or_a_link_in_the_outbox_is_set_aside_unread_and_the_channel_still_told(webhook, tmp_path, kind):
    """A FIFO reports size 0 and blocked the read (and the run) for ever; a link to /dev/zero read without end."""
    box = tmp_path / "outbox"
    (box / "team").mkdir(parents=True)
    odd = box / "team" / "0000-odd.json"
    os.mkfifo(odd) if kind == "fifo" else odd.symlink_to("/dev/zero")
    deliveries = to_team(webhook, box, [FAILED])
    assert [d.status for d in deliveries] == ["failed", "sent"]
    why = "not a regular file (a kept message is one)" if kind == "fifo" else "a link, not a kept message"
    assert deliveries[0].detail == (f"a kept message could not be read: {odd}: {why}; renamed to "
                                    "0000-odd.json.unreadable")


def test_a_read_error_that_may_pass_keeps_the_message_for_the_next_run(webhook, tmp_path, monkeypatch):
    """EMFILE on one night set a good message aside as unreadable for good; it is now put back, named, and sent by
    the next night."""
    box = tmp_path / "outbox"
    kept = refused_once(webhook, box)
    real = notify.outbox._read_bounded

    def too_many_open_files(path, shown):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(notify.outbox, "_read_bounded", too_many_open_files)
    deliveries = to_team(webhook, box, [BEST_CHANGED])
    assert [d.status for d in deliveries] == ["failed", "sent"]  # the night's own still goes
    assert deliveries[0].detail.endswith(f"OSError: [Errno 24] {kept} could not be read (Too many open files); kept "
                                         "for the next run")
    assert kept_files(box) == [kept]
    monkeypatch.setattr(notify.outbox, "_read_bounded", real)
    deliveries = to_team(webhook, box, [])
    assert [d.status for d in deliveries] == ["re-sent", "nothing to send"] and kept_files(box) == []


def test_a_claim_like_name_that_is_no_time_is_passed_over_not_an_error(webhook, tmp_path):
    box = tmp_path / "outbox"
    (box / "team").mkdir(parents=True)
    (box / "team" / "x.json.\u00b2.sending").write_text("{}")  # str.isdigit() is true for a superscript two
    deliveries = to_team(webhook, box, [FAILED])
    assert [d.status for d in deliveries] == ["sent"]


def test_a_run_marked_failed_for_stale_sources_has_a_run_failed_line_naming_them():
    """A channel that lists only run_failed (README's on-call example) heard nothing of a run whose exit status (3)
    and Prefect state said Failed for sources stale past their limit: the run adds a run_failed line naming them."""
    from flows.nightly import stale_past_limit_failed_line

    one = ("aws_spot stale for 5 days, last loaded by the run of 2026-11-30 (limit 2 days): SourceFormatError: x",)
    assert stale_past_limit_failed_line(one) == (
        "marked failed: 1 source stale past its limit (aws_spot); the reports are published, every page warning that "
        "they use the last good data of that source")
    two = (*one, "gcp_billing has never landed (limit 3 days): LiveSourceError: y")
    assert stale_past_limit_failed_line(two).startswith(
        "marked failed: 2 sources stale past their limit (aws_spot, gcp_billing); the reports are published")
    # what a run_failed-only channel is sent of such a run: that line alone, under "run failed"
    events = [Event("source_stale_past_limit", one[0]), Event("run_failed", stale_past_limit_failed_line(one))]
    title, body = compose([e for e in events if e.kind in ("run_failed",)], as_of=dt.date(2026, 12, 5),
                          run_id="r", link="reports/index.md", max_lines=10)
    assert title == "hweval 2026-12-05: run failed" and "(aws_spot)" in body
