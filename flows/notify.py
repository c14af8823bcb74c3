"""Notifications: one short message per channel and run, sent with apprise to URLs read from the environment."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args
from urllib.parse import unquote, unquote_plus

import apprise

from flows import outbox
from flows.catalog_models import Channel, NotificationEvent, NotificationsFile
from flows.redaction import redact_text, scrub

log = logging.getLogger(__name__)

EVENTS: tuple[str, ...] = get_args(NotificationEvent)
LINE_ORDER = ("run_failed", "source_stale_past_limit", "best_offer_changed")  # most severe first, in title and body
NOTIFY_TYPES = {"run_failed": apprise.NotifyType.FAILURE, "source_stale_past_limit": apprise.NotifyType.WARNING,
                "best_offer_changed": apprise.NotifyType.INFO}

MAX_LINE_CHARS = 500  # one event line; longer text (an error message) is cut with an ellipsis
MAX_BODY_CHARS = 4000  # the event lines of one message together; the lines past it are counted, not shown
CONNECT_TIMEOUT_S = 3.0  # apprise `cto`: the wait for a channel's server to accept the connection
READ_TIMEOUT_S = 5.0  # apprise `rto`: the wait for each answer from it; a URL that sets cto or rto keeps its own
MIN_SECRET_PIECE_CHARS = 4  # parts of a channel URL this long or longer are masked in the log records below
# apprise logs a channel's URL, password included, at its TRACE level; urllib3 logs the request path at DEBUG
SCRUBBED_LOGGERS = ("apprise", "urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry")


@dataclass(frozen=True)
class Event:
    """Something a person should hear about after a run, as one plain-text line."""

    kind: NotificationEvent
    text: str

    def __post_init__(self) -> None:
        if self.kind not in EVENTS:
            raise ValueError(f"unknown notification event {self.kind!r} (expected one of {', '.join(EVENTS)})")


@dataclass(frozen=True)
class Delivery:
    """What became of one channel's message: sent, skipped, failed or nothing to send, and why (never the URL).
    `kept` marks the delivery of a message an earlier run could not deliver (flows/outbox.py), or of the outbox."""

    channel: str
    status: str
    detail: str
    kept: bool = False


def report_link(notifications: NotificationsFile, reports_root: Path, as_of: dt.date | None) -> str:
    """The run's report index, or with `as_of` None the latest published one (a failed run published none): under the
    served `report_url` when the catalog gives one, else the local path."""
    folder = as_of.isoformat() if as_of is not None else "latest"
    if notifications.report_url:
        return f"{notifications.report_url.rstrip('/')}/{folder}/index.md"
    return str(reports_root / folder / "index.md")


def _one_line(text: str) -> str:
    """Event text from data as one redacted line of at most MAX_LINE_CHARS."""
    line = redact_text(" ".join(text.split()))
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _title(events: list[Event], as_of: dt.date) -> str:
    """`hweval <date>: ` and what happened, counted per kind, most severe first."""
    counts = {kind: sum(e.kind == kind for e in events) for kind in LINE_ORDER}
    parts = []
    if counts["run_failed"]:
        parts.append("run failed")
    if counts["source_stale_past_limit"]:
        stale = counts["source_stale_past_limit"]
        parts.append(f"{_plural(stale, 'source', 'sources')} stale past {'its' if stale == 1 else 'their'} limit")
    if counts["best_offer_changed"]:
        parts.append(f"best offer changed for {_plural(counts['best_offer_changed'], 'workload', 'workloads')}")
    return f"hweval {as_of.isoformat()}: {'; '.join(parts)}"


def compose(events: list[Event], *, as_of: dt.date, run_id: str, link: str, max_lines: int) -> tuple[str, str]:
    """The (title, body) of one message: event lines, most severe kind first, then the report link and run id."""
    ordered = sorted(events, key=lambda e: LINE_ORDER.index(e.kind))
    shown: list[str] = []
    used_chars = 0
    for event in ordered:
        line = _one_line(event.text)
        if len(shown) == max_lines or used_chars + len(line) + 1 > MAX_BODY_CHARS:
            break
        shown.append(line)
        used_chars += len(line) + 1
    if len(ordered) > len(shown):
        shown.append(f"… and {len(ordered) - len(shown)} more")
    body = "\n".join([*shown, "", f"Report: {redact_text(link)}", f"Run: {redact_text(run_id)}"])
    return _title(ordered, as_of), body


def _with_timeouts(url: str) -> str:
    """The apprise URL with CONNECT_TIMEOUT_S and READ_TIMEOUT_S appended, unless it sets its own."""
    query = url.partition("?")[2]
    given = {pair.partition("=")[0] for pair in query.split("&")}
    extra = [f"{key}={value:g}" for key, value in (("cto", CONNECT_TIMEOUT_S), ("rto", READ_TIMEOUT_S))
             if key not in given]
    if not extra:
        return url
    separator = "&" if query else "" if url.endswith("?") else "?"
    return url + separator + "&".join(extra)


class _Scrubber(logging.Filter):
    """Masks a channel URL and its parts in every record of SCRUBBED_LOGGERS while that channel is sent to."""

    def __init__(self, url: str) -> None:
        super().__init__()
        # apprise logs a URL's pieces decoded (%2B as +, and + as a space in a query): the URL and each piece are
        # masked as written and as unquote() and unquote_plus() read them
        after_scheme = url.partition("://")[2]
        wholes = {form for text in (url, after_scheme) for form in (text, unquote(text), unquote_plus(text))}
        pieces = {piece for text in (after_scheme, unquote(after_scheme), unquote_plus(after_scheme))
                  for piece in re.split(r"[/:@?&=#,;\s]+", text)}
        pieces |= {decode(piece) for piece in pieces for decode in (unquote, unquote_plus)}
        pieces = {piece for piece in pieces if len(piece) >= MIN_SECRET_PIECE_CHARS}
        self.secrets = sorted((wholes | pieces) - {""}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        return redact_text(scrub(text, self.secrets))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        record.msg, record.args = self.scrub(message), ()
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


@contextlib.contextmanager
def _logs_scrubbed(scrubber: _Scrubber) -> Iterator[None]:
    """Installs `scrubber` on the loggers of apprise and its HTTP client for the duration of one delivery."""
    loggers = [logging.getLogger(name) for name in SCRUBBED_LOGGERS]
    for logger in loggers:
        logger.addFilter(scrubber)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(scrubber)


def _deliver(url: str, url_env: str, title: str, body: str, notify_type: apprise.NotifyType) -> tuple[str, str]:
    """Send one message to one apprise URL; (status, detail) with no part of the URL in the detail."""
    scrubber = _Scrubber(url)
    try:
        with _logs_scrubbed(scrubber):
            sender = apprise.Apprise()
            if not sender.add(_with_timeouts(url)):
                return "failed", f"{url_env} is not a URL apprise understands"
            delivered = sender.notify(title=title, body=body, notify_type=notify_type,
                                      body_format=apprise.NotifyFormat.TEXT)
    except Exception as exc:  # a notification must never fail or alter the run
        return "failed", f"{type(exc).__name__}: {scrubber.scrub(str(exc))}"
    if not delivered:
        return "failed", (f"the service at {url_env} refused the message or did not answer in time; "
                          "apprise's log says which")
    return "sent", f"one message via {url_env}"


def _resend_kept(channel_id: str, channel: Channel, url: str, box: Path, deliveries: list[Delivery]) -> None:
    """Send the channel's kept messages again, oldest first, each delivery added to `deliveries` as it is made (an
    error part-way keeps those before it). The first refused stays, with the rest behind it (the channel is down:
    they are not tried); one refused for the MAX_ATTEMPTS-th time is set aside and the next tried."""
    for taken in outbox.pending(box, channel_id):
        if isinstance(taken, ValueError):
            deliveries.append(Delivery(channel_id, "failed", f"a kept message could not be read: {taken}", kept=True))
            continue
        kept = taken.message
        status, detail = _deliver(url, channel.url_env, kept.resend_title(), kept.resend_body(),
                                  apprise.NotifyType(kept.notify_type))
        what = f"run {kept.run_id}'s message, first tried at {kept.first_tried} UTC"
        try:
            aside = taken.sent() if status == "sent" else taken.refused()
        except OSError as exc:  # the outbox cannot be written: say so, and leave the rest for the next run
            after = (f"could not be removed ({exc}): it is sent again once its claim is {outbox.CLAIM_STALE_S:g} s old"
                     if status == "sent" else f"could not be kept again ({exc})")
            deliveries.append(Delivery(channel_id, "failed", f"{what}: {status}, but {taken.path} {after}",
                                       kept=True))
            break
        if status == "sent":
            deliveries.append(Delivery(channel_id, "re-sent", f"{what}, via {channel.url_env}", kept=True))
            continue
        if aside is not None:  # tried MAX_ATTEMPTS times: it no longer holds the others back
            deliveries.append(Delivery(channel_id, "failed", f"re-sending {what}: {detail}; refused "
                                                             f"{outbox.MAX_ATTEMPTS} times in all, so set aside as "
                                                             f"{aside} and not sent again", kept=True))
            continue
        waiting = outbox.count(box, channel_id)
        deliveries.append(Delivery(channel_id, "failed", f"re-sending {what}: {detail}; kept with "
                                                         f"{_plural(waiting - 1, 'other', 'others')} in {box}",
                                   kept=True))
        break


def _send_to_channel(channel_id: str, channel: Channel, events: list[Event], environ: Mapping[str, str], *,
                     as_of: dt.date, run_id: str, link: str, box: Path | None) -> list[Delivery]:
    """The deliveries for one channel: its kept messages sent again (with `box`), then this run's, holding only the
    events it subscribes to; a message not delivered is kept in `box`. An outbox that cannot be read or written is a
    failed delivery of its own: this run's message is still sent."""
    chosen = [e for e in events if e.kind in channel.events]
    nothing = Delivery(channel_id, "nothing to send", f"none of its events ({', '.join(channel.events)}) happened")
    deliveries: list[Delivery] = []
    waiting = 0
    url = environ.get(channel.url_env, "").strip()
    if box is not None:
        try:
            waiting = outbox.count(box, channel_id)
            if waiting and url:
                _resend_kept(channel_id, channel, url, box, deliveries)
        except Exception as exc:  # noqa: BLE001 (no outbox problem may hold back the night's own message)
            deliveries.append(Delivery(channel_id, "failed", f"the outbox {box} could not be read or written: "
                                                             f"{type(exc).__name__}: {redact_text(str(exc))}",
                                       kept=True))
    if not url and (chosen or waiting):
        kept = f"; {_plural(waiting, 'undelivered message', 'undelivered messages')} kept in {box}" if waiting else ""
        return [*deliveries, Delivery(channel_id, "skipped", f"{channel.url_env} is not set{kept}")]
    if not chosen:
        return [*deliveries, nothing]
    title, body = compose(chosen, as_of=as_of, run_id=run_id, link=link, max_lines=channel.max_lines)
    worst = min(chosen, key=lambda e: LINE_ORDER.index(e.kind)).kind
    status, detail = _deliver(url, channel.url_env, title, body, NOTIFY_TYPES[worst])
    if status == "failed" and box is not None:
        try:
            dropped = outbox.keep(box, outbox.KeptMessage(
                channel=channel_id, run_id=run_id, as_of=as_of.isoformat(), title=title, body=body,
                notify_type=NOTIFY_TYPES[worst].value, first_tried=outbox.now_text(), attempts=1))
        except OSError as exc:  # the message is still in the flow log (the run logs undelivered events)
            return [*deliveries, Delivery(channel_id, status, f"{detail}; not kept either: {exc}")]
        detail += f"; kept in {box} to be sent again by the next run"
        if dropped:
            detail += (f", which removed the oldest kept ({outbox.MAX_KEPT} at most): "
                       + "; ".join(f"run {d.run_id}'s {d.title!r}" for d in dropped))
    return [*deliveries, Delivery(channel_id, status, detail)]


def send(notifications: NotificationsFile, events: list[Event], *, as_of: dt.date, run_id: str, link: str,
         environ: Mapping[str, str] | None = None, box: Path | None = None,
         delivered: Callable[[Delivery], None] | None = None) -> list[Delivery]:
    """Send each channel its message for this run and say what became of it; never raises. With `box` (an outbox
    folder, flows/outbox.py), the messages earlier runs could not deliver go first and one not delivered is kept.
    `delivered` is called with each delivery as soon as its channel is done (a run stopped mid-way knows which
    channels took its message)."""
    environ = os.environ if environ is None else environ
    deliveries = []
    for channel_id, channel in notifications.channels.items():
        try:
            found = _send_to_channel(channel_id, channel, events, environ, as_of=as_of, run_id=run_id, link=link,
                                     box=box)
        except Exception as exc:  # a notification must never fail or alter the run
            found = [Delivery(channel_id, "failed", f"{type(exc).__name__}: {redact_text(str(exc))}")]
        for delivery in found:
            level = logging.WARNING if delivery.status == "failed" else logging.INFO
            log.log(level, "notification channel %s: %s (%s)", channel_id, delivery.status, delivery.detail)
            if delivered is not None:
                delivered(delivery)
        deliveries.extend(found)
    return deliveries


def log_deliveries(logger: logging.Logger | logging.LoggerAdapter, deliveries: list[Delivery], about: str = "") -> None:
    """Each delivery as one line of a run's log (a warning when it failed); `about` follows the channel's name."""
    for delivery in deliveries:
        logger.log(logging.WARNING if delivery.status == "failed" else logging.INFO, "notification %s%s: %s (%s)",
                   delivery.channel, about, delivery.status, delivery.detail)


def failures(deliveries: list[Delivery]) -> list[str]:
    """What a run that notified must not pass over (each makes it fail after its publish, exit 5): this run's own
    message not delivered to a channel, and, apart, earlier runs' kept messages (or the outbox) that failed again."""
    own = [d for d in deliveries if d.status == "failed" and not d.kept]
    earlier = [d for d in deliveries if d.status == "failed" and d.kept]
    found = []
    if own:
        found.append(f"notifying channel(s) {', '.join(dict.fromkeys(d.channel for d in own))} failed (the run's "
                     f"events were not delivered: {'; '.join(d.detail for d in own)})")
    if earlier:
        found.append(f"re-sending earlier runs' undelivered messages to channel(s) "
                     f"{', '.join(dict.fromkeys(d.channel for d in earlier))} failed: "
                     f"{'; '.join(d.detail for d in earlier)}")
    return found
