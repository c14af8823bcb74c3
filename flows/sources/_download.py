"""A large file streamed to disk over HTTP(S), for the live sources that download whole files (the EC2 offer file:
flows/sources/aws_offer_file.py): retries with backoff, the source's limits and deadline, and a conditional GET.

Retried: HTTP 429/500/502/503/504 (after the server's Retry-After when it sends one), network errors and a body cut
short of its Content-Length, up to RETRIES times with exponential backoff (BACKOFF_S, 2 x, 4 x ...). Not retried: any
other status, a certificate that does not verify, a target that cannot be written (a full TMPDIR), a file past the
source's `max_file_bytes`. With the validators an earlier response sent (ETag, Last-Modified) the GET is conditional:
a server whose file did not change answers HTTP 304 and nothing is written. URLs in messages go through
flows/redaction.py; the request goes through flows/sources/_http.py's `open_url` (http(s) only, deadlines).
"""

from __future__ import annotations

import logging
import ssl
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from flows.redaction import redact_text, redact_url
from flows.sources import _http
from flows.sources._common import DEFAULT_LIMITS, LiveSourceError, SourceFormatError, SourceLimits

log = logging.getLogger(__name__)

RETRIES = 3
BACKOFF_S = 1.0
CHUNK_BYTES = 1 << 20
# a response's validator -> the request header that asks the server whether the file it names is still the one served
VALIDATOR_HEADERS = {"ETag": "If-None-Match", "Last-Modified": "If-Modified-Since"}
MAX_VALIDATOR_CHARS = 256  # an ETag or date longer than this (or not printable ASCII) is not kept, nor sent back



class _Truncated(OSError):
    """The body ended before its Content-Length: retried as a network error is."""


@dataclass(frozen=True)
class Downloaded:
    """What `download` did: whether it wrote the file, and the validators to ask with next time whether it changed."""

    validators: dict[str, str] = field(default_factory=dict)  # the ETag and Last-Modified to send back next time
    not_modified: bool = False  # HTTP 304: the file is the one the request's validators name; nothing written


def _validators(headers) -> dict[str, str]:
    """The response's ETag and Last-Modified, those that can be sent back as they came (printable ASCII, at most
    MAX_VALIDATOR_CHARS): the server writes them."""
    kept = {}
    for name in VALIDATOR_HEADERS:
        value = headers.get(name)
        if value and len(value) <= MAX_VALIDATOR_CHARS and value.isascii() and value.isprintable():
            kept[name] = value
    return kept


def download(url: str, target: Path, *, timeout_s: float = 60.0, sleep: Callable[[float], None] = time.sleep,
             limits: SourceLimits = DEFAULT_LIMITS, validators: dict[str, str] | None = None) -> Downloaded:
    """Stream `url` to `target` in chunks; retry HTTP 429/500/502/503/504 (after the server's Retry-After when it
    sends one), network errors and a body cut short of its Content-Length up to RETRIES times with exponential
    backoff. With `validators` (an earlier response's ETag and Last-Modified) the GET is conditional
    (If-None-Match, If-Modified-Since): a server whose file did not change answers HTTP 304 with no body.

    Returns the response's validators (`Downloaded`; `not_modified` on a 304, nothing written);
    LiveSourceError (URL and status or reason) when it cannot be fetched, at once
    for what a retry cannot mend (another HTTP status, a certificate that does not verify, a `target` that cannot be
    written: a full TMPDIR); SourceLimitError, not retried, as soon as the file is larger than
    `limits.max_file_bytes`.
    """
    shown = redact_text(redact_url(url))  # a signed or mirrored URL may carry a key: never in a message or a row
    secrets = _http.url_secrets(url)  # nor where the server's reason phrase echoes it
    conditions = {VALIDATOR_HEADERS[name]: value for name, value in _validators(validators or {}).items()}
    for attempt in range(RETRIES + 1):
        limits.check_time(shown)  # the source's max_fetch_s, retries and their waits included
        delay = BACKOFF_S * 2 ** attempt
        try:
            with _http.open_url(url, limits.seconds_left(timeout_s), limits.deadline, conditions) as response:
                expected = response.headers.get("Content-Length")
                if expected is not None and expected.isdigit() and int(expected) > limits.max_file_bytes:
                    raise limits.exceeded(shown, "max_file_bytes", f"the file ({int(expected):,} bytes) is larger")
                written = _write_body(response, target, shown, limits)
                sent = _validators(response.headers)
            if expected is not None and expected.isdigit() and int(expected) != written:
                raise _Truncated(f"truncated: {written:,} of {int(expected):,} bytes")
            log.info("%s: downloaded %d bytes", shown, written)
            return Downloaded(sent)
        except SourceFormatError:  # past max_file_bytes: the same file would be just as large on a retry
            raise
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 304:  # Not Modified: the answer to a conditional GET, or a server's mistake
                if not conditions:
                    raise LiveSourceError(f"{shown}: HTTP 304 Not Modified, to a request that named no earlier "
                                          f"download (no If-None-Match or If-Modified-Since)") from None
                return Downloaded(_validators(validators or {}), not_modified=True)
            retryable = exc.code in _http.RETRY_STATUSES
            if not retryable or attempt == RETRIES:
                tries = f" after {attempt + 1} tries" if retryable else ""
                raise LiveSourceError(f"{shown}: HTTP {exc.code} {_http.reason_phrase(exc, secrets)}{tries}"
                                      ) from None
            asked = _http.retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            delay = delay if asked is None else asked
            problem = f"HTTP {exc.code} {_http.reason_phrase(exc, secrets)}"
        except (urllib.error.URLError, OSError, ValueError) as exc:  # unreachable, reset or timed out mid-download
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if isinstance(reason, ssl.SSLCertVerificationError):  # the same certificate on every try
                raise LiveSourceError(f"{shown}: the server's certificate does not verify ({reason.verify_message})"
                                      ) from None
            problem = (f"cannot be reached ({reason})" if isinstance(exc, urllib.error.URLError)
                       else f"download {exc}" if isinstance(exc, _Truncated)
                       else f"download failed ({type(exc).__name__}: {exc})")
            if attempt == RETRIES:
                raise LiveSourceError(redact_text(f"{shown}: {problem} after {attempt + 1} tries")) from None
        problem = redact_text(problem)
        limits.check_time(shown, delay, cause=problem)
        log.warning("%s: %s, retrying in %.0f s (%d/%d)", shown, problem, delay, attempt + 1, RETRIES)
        sleep(delay)
    raise AssertionError("unreachable")


def _write_body(response, target: Path, shown: str, limits: SourceLimits) -> int:
    """The response's body written to `target`, its bytes counted; a file that cannot be written (a full or
    read-only TMPDIR) is a LiveSourceError at once, since the next try would meet it too."""
    written, next_report = 0, 256 * CHUNK_BYTES
    try:
        out = target.open("wb")
    except OSError as exc:
        raise _unwritable(shown, target, exc) from None
    with out:
        # read1: what has come, at most a chunk, so that max_fetch_s is checked while a slow body trickles
        while chunk := response.read1(CHUNK_BYTES):
            if written + len(chunk) > limits.max_file_bytes:
                raise limits.exceeded(shown, "max_file_bytes", "the file is larger")
            limits.check_time(shown)
            try:
                out.write(chunk)
            except OSError as exc:
                raise _unwritable(shown, target, exc) from None
            written += len(chunk)
            if written >= next_report:
                log.info("%s: %d MiB downloaded", shown, written >> 20)
                next_report += 256 * CHUNK_BYTES
        try:
            out.flush()
        except OSError as exc:
            raise _unwritable(shown, target, exc) from None
    return written


def _unwritable(shown: str, target: Path, exc: OSError) -> LiveSourceError:
    return LiveSourceError(f"{shown}: cannot write the download to {target} ({exc.strerror or exc}); it goes to the "
                           f"temporary folder (TMPDIR), which needs room for each region's offer file in flight")
