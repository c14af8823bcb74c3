"""Messages a notification channel did not take, kept to be sent again by the next run.

A message that could not be delivered (the service refused it or did not answer) is written, as composed (title,
body, kind: no URL, secrets already masked), to `<outbox>/<channel>/<time kept in ns>-<id>.json`. The next run that
notifies the channel sends the kept messages first, oldest first, each titled "[re-sent] ..." and saying when it was
first tried; a message sent is removed, one refused again stays (its attempts counted) and the rest wait behind it.
One refused MAX_ATTEMPTS times in all is set aside as `*.undeliverable` (never removed), so that it does not hold the
others back for ever.

The outbox sits beside the warehouse (`<warehouse folder>/notifications-outbox`, or HWEVAL_NOTIFY_OUTBOX). It holds
at most MAX_KEPT messages a channel: keeping one more removes the oldest, and the run log and the delivery say which.
A run takes a message by renaming it to `*.json.<time taken in ns>.sending` (two runs notifying at once never send it
twice); a message taken by a run that died is taken again CLAIM_STALE_S after the time in its name. A file that is not
a kept message is renamed `*.unreadable` and reported.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ENV = "HWEVAL_NOTIFY_OUTBOX"
FOLDER = "notifications-outbox"
MAX_KEPT = 20  # messages kept a channel; keeping one more removes the oldest (a month of nightly failures is 30)
MAX_FILE_BYTES = 64 * 1024  # a kept message is at most ~5 KB (notify.MAX_BODY_CHARS); a larger file is not one
CLAIM_STALE_S = 900.0  # a message taken by a run this long ago, and not put back, is taken again (that run died)
MAX_ATTEMPTS = 7  # tries of one message in all (a week of nights) before it is set aside as undeliverable
SUFFIX = ".json"
CLAIMED = ".sending"
UNREADABLE = ".unreadable"
UNDELIVERABLE = ".undeliverable"
NOTIFY_TYPES = ("info", "success", "warning", "failure")  # apprise.NotifyType's values


class OutboxSettingError(ValueError):
    """HWEVAL_NOTIFY_OUTBOX names no usable folder."""


@dataclass(frozen=True)
class KeptMessage:
    """One channel's message for one run, as composed, with what became of the tries to send it."""

    channel: str
    run_id: str
    as_of: str  # ISO date of the run
    title: str
    body: str
    notify_type: str  # apprise's NotifyType value: info, warning, failure
    first_tried: str  # UTC, ISO seconds
    attempts: int

    def resend_title(self) -> str:
        return f"[re-sent] {self.title}"

    def resend_body(self) -> str:
        tries = f"{self.attempts} attempt{'' if self.attempts == 1 else 's'}"
        return f"{self.body}\n(not delivered when first tried at {self.first_tried} UTC; {tries} before this one)"


@dataclass(frozen=True)
class Taken:
    """A kept message this run has taken to send: remove it (`sent`) or put it back (`refused`)."""

    message: KeptMessage
    path: Path  # the claimed file, <name>.json.<ns>.sending

    @property
    def kept_path(self) -> Path:
        return self.path.with_name(_unclaimed(self.path.name))

    def sent(self) -> None:
        self.path.unlink(missing_ok=True)

    def refused(self) -> Path | None:
        """Put the message back with its attempts counted; past MAX_ATTEMPTS, set it aside as undeliverable and
        return where it now lies."""
        again = replace(self.message, attempts=self.message.attempts + 1)
        aside = again.attempts >= MAX_ATTEMPTS
        target = self.kept_path.with_name(self.kept_path.name + UNDELIVERABLE) if aside else self.kept_path
        _write(target, again)
        self.path.unlink(missing_ok=True)
        return target if aside else None


def _unclaimed(name: str) -> str:
    """`x.json` of a claimed `x.json.<ns>.sending`."""
    return name.removesuffix(CLAIMED).rsplit(".", 1)[0]


def _claimed_at_s(name: str) -> float | None:
    """When a claimed file was taken, from its name (seconds since the epoch); None for a name of another form."""
    stamp = name.removesuffix(CLAIMED).rsplit(".", 1)[-1]
    return int(stamp) / 1e9 if re.fullmatch(r"[0-9]{1,20}", stamp) else None


def folder(warehouse_path: Path) -> Path:
    """HWEVAL_NOTIFY_OUTBOX, else `notifications-outbox` beside the warehouse file."""
    setting = os.environ.get(ENV, "").strip()
    if not setting:
        return warehouse_path.parent / FOLDER
    path = Path(setting).expanduser()
    if path.exists() and not path.is_dir():
        raise OutboxSettingError(f"{ENV}={setting!r} is a file, not a folder")
    return path.absolute()


def now_text() -> str:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0).isoformat(sep=" ")


def _write(path: Path, message: KeptMessage) -> None:
    """Write atomically: a reader sees the whole message or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.part")
    partial.write_text(json.dumps(asdict(message), ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, path)


def _read_bounded(path: Path, shown: Path) -> bytes:
    """At most MAX_FILE_BYTES of a regular file, never following a link or waiting on a FIFO or device (a FIFO
    reports size 0 and blocked the read for ever); ValueError for anything else, naming `shown`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{shown}: not a regular file (a kept message is one)")
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{shown}: more than a kept message's {MAX_FILE_BYTES} bytes (MAX_FILE_BYTES)")
    return data


def _read(path: Path, shown: Path | None = None) -> KeptMessage:
    """The message in `path`; ValueError naming the file (`shown`, its name before it was taken) and what is wrong.
    An OSError is the file system's (a link refused by O_NOFOLLOW is ELOOP: named as not a kept message)."""
    path_read, path = path, shown or path
    try:
        raw = _read_bounded(path_read, path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path}: a link, not a kept message") from None
        raise
    try:
        data = json.loads(raw.decode("utf-8"))
        message = KeptMessage(**data)
    except (ValueError, TypeError, RecursionError) as exc:  # not JSON (or not UTF-8), other keys, nested too deep
        raise ValueError(f"{path}: not a kept message ({type(exc).__name__}: {str(exc)[:200]})") from None
    fields = {f: getattr(message, f) for f in ("channel", "run_id", "as_of", "title", "body", "notify_type",
                                               "first_tried")}
    wrong = sorted(f for f, value in fields.items() if not isinstance(value, str))
    if message.notify_type not in NOTIFY_TYPES:
        wrong.append("notify_type")
    if wrong or not isinstance(message.attempts, int) or isinstance(message.attempts, bool) or message.attempts < 1:
        raise ValueError(f"{path}: not a kept message (expected text in {', '.join(fields)}, notify_type one of "
                         f"{', '.join(NOTIFY_TYPES)} and attempts a whole number >= 1; wrong: "
                         f"{', '.join(wrong) or 'attempts'})")
    return message


def _channel_folder(outbox: Path, channel: str) -> Path:
    return outbox / channel


def keep(outbox: Path, message: KeptMessage) -> list[KeptMessage]:
    """Keep `message` to be sent again; the kept messages it pushed out (past MAX_KEPT), oldest first."""
    where = _channel_folder(outbox, message.channel)
    name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}{SUFFIX}"  # names sort as the messages were kept
    _write(where / name, message)
    kept = sorted(where.glob(f"*{SUFFIX}"))
    dropped = []
    for path in kept[: max(0, len(kept) - MAX_KEPT)]:
        try:
            dropped.append(_read(path))
        except (OSError, ValueError):  # named below by pending() as unreadable, if it is still there
            continue
        path.unlink(missing_ok=True)
    return dropped


def _take_back_stale_claims(where: Path) -> None:
    for claimed in where.glob(f"*{SUFFIX}.*{CLAIMED}"):
        taken_at = _claimed_at_s(claimed.name)
        if taken_at is not None and time.time() - taken_at > CLAIM_STALE_S:
            try:
                os.rename(claimed, claimed.with_name(_unclaimed(claimed.name)))
            except FileNotFoundError:  # another run took it back first, or its run finished with it
                continue


def pending(outbox: Path, channel: str) -> Iterator[Taken | ValueError]:
    """Each of the channel's kept messages, oldest first, taken for this run (another run's are passed over); a file
    that holds no kept message is renamed *.unreadable and given as the ValueError naming it."""
    where = _channel_folder(outbox, channel)
    if not where.is_dir():
        return
    _take_back_stale_claims(where)
    for path in sorted(where.glob(f"*{SUFFIX}")):
        # the time taken is in the name: a claim is never judged stale by a file time the rename carried over
        claimed = path.with_name(f"{path.name}.{time.time_ns()}{CLAIMED}")
        try:
            os.rename(path, claimed)
        except FileNotFoundError:  # another run took it
            continue
        try:
            message = _read(claimed, shown=path)
        except ValueError as exc:  # what it holds is no kept message: set aside, named
            os.replace(claimed, path.with_name(path.name + UNREADABLE))
            yield ValueError(f"{exc}; renamed to {path.name + UNREADABLE}")
            continue
        except OSError as exc:  # the file system's error, which may pass: put back as it was, for the next run
            os.replace(claimed, path)
            raise OSError(exc.errno, f"{path} could not be read ({exc.strerror or exc}); kept for the next run") from None
        yield Taken(message, claimed)


def count(outbox: Path, channel: str) -> int:
    """How many messages the channel has kept, not counting those another run has taken (unless that run took them
    more than CLAIM_STALE_S ago: those are put back first)."""
    where = _channel_folder(outbox, channel)
    if not where.is_dir():
        return 0
    _take_back_stale_claims(where)
    return len(list(where.glob(f"*{SUFFIX}")))
