"""A JSON GET for the live sources, on the standard library only: retries, backoff, and no secret in any message.

Retried: HTTP 429, 500, 502, 503, 504 and network errors (refused, reset, timed out), with exponential backoff
(`backoff_s`, 2 x, 4 x ...) or the server's `Retry-After` when it sends one. Not retried: 401/403 (access denied),
other 4xx and a certificate that does not verify, which raise `LiveSourceError` at once with the server's own error
message or the reason. A body that is not JSON,
or is larger than the source's `max_file_bytes`, raises `SourceFormatError` (never retried). URLs in messages and logs
go through `redact`; headers are never logged.

Only http(s) URLs are fetched (never file:, ftp: or data:, whatever a next-page link says). The caller's headers
(credentials: `Authorization`) go to the URL asked for only, never on to a redirect's; a redirect from https to
http is refused. A whole response must arrive within `MAX_RESPONSE_S` of its request (`timeout_s` bounds each
wait for the server), so a server that sends its TLS handshake, status line, headers or body a byte at a time cannot
hold a run (the connection is shut at that deadline, `_cut_at`); and no request starts, waits or is waited for past
the source's `max_fetch_s` (`SourceLimits.deadline`), which raises a SourceLimitError.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import logging
import math
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from flows.redaction import is_secret_param, redact_url, scrub
from flows.safe_yaml import cut
from flows.sources._common import (
    DEFAULT_LIMITS,
    LiveSourceError,
    SourceFormatError,
    SourceLimits,
    parse_json,
    read_at_most,
)
from flows.text import visible

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 300.0  # a server asking for longer than this is not going to answer tonight
_EXCERPT_CHARS = 300
REASON_CHARS = 100  # of an HTTP error's reason phrase ("Too Many Requests"), which the server writes
_ERROR_BODY_BYTES = 64 * 1024  # of an error response: enough for any API's error message
_USER_AGENT = "hweval/0.1 (+urllib)"
MAX_RESPONSE_S = 600.0  # one response, from its request to its last byte
_READ_CHUNK = 64 * 1024
FETCHED_SCHEMES = ("http", "https")
_SHORTEST_SECRET = 4  # a header value shorter than this is no credential, and scrubbing it would garble messages


def _origin(url: str) -> tuple[str, str | None, int | None]:
    """A URL's scheme, host and port, in lower case, the port filled in from the scheme (`:443` written out or not);
    ValueError for a port that is no number."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(scheme)


def _same_origin(url: str, other: str) -> bool:
    """Whether two URLs have one scheme, host and port (a port that is no number is no origin)."""
    try:
        return _origin(url) == _origin(other)
    except ValueError:
        return False


class _NoDowngrade(urllib.request.HTTPRedirectHandler):
    """urllib's redirects, never from https to http. The credentials (the headers added as unredirected) go on only to
    the same scheme, host and port; urllib itself would drop them on any redirect."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if urllib.parse.urlsplit(req.full_url).scheme == "https" and urllib.parse.urlsplit(target).scheme != "https":
            raise urllib.error.HTTPError(req.full_url, code, f"redirect from https to {redact_url(target)} refused",
                                         headers, fp)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _same_origin(target, req.full_url):
            for name, value in req.unredirected_hdrs.items():
                new.add_unredirected_header(name, value)
        return new


class _Cut:
    """The sockets a request opens (its redirects' too, and an HTTPS connection's TLS socket), shut at `deadline`
    (time.monotonic) wherever the request is: its TLS handshake, its status line and headers, or its body. A socket
    timeout bounds each wait for the server, not the whole, and http.client reads a status line and headers sent a
    byte at a time, each byte within the timeout, for as long as they come."""

    def __init__(self, deadline: float) -> None:
        self.lock = threading.Lock()
        self.fired = False
        self.done = False  # the request is over: a timer past its cancel's reach shuts nothing (a caller's response)
        self.answered = False  # the server's answer (an HTTP error's status) came: a cut ends its body, no more
        self.sockets: list[socket.socket] = []
        self.timer = threading.Timer(max(0.0, deadline - time.monotonic()), self.fire)
        self.timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` at the deadline (now, if it has passed): a read it blocks in returns, or fails."""
        with self.lock:
            self.sockets.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def answer_came(self) -> None:
        """The server's answer (an HTTP error's status line and headers) came: from now on the deadline ends the
        reading of its body, and the block's error is that answer, not a TimeoutError. Unless the cut had fired by
        then: its headers may be whole or cut short (http.client reads a shut connection as headers that ended), and
        it is a timeout as any response cut there is."""
        with self.lock:
            self.answered = not self.fired

    def fire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.fired = True
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed meanwhile, or a TCP socket handed over to its TLS socket
        # the plain socket's shutdown, a TLS socket's too: SSLSocket's own drops its SSL object, which a read under way
        # in another thread still uses
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


_cutting = threading.local()  # the _Cut of the request this thread is making, if any


@contextlib.contextmanager
def _cut_at(deadline: float, why: str):
    """Requests made in this thread inside the block have their sockets shut at `deadline`; a block that ends after
    that, or fails then (http.client reads a shut connection as the server's close, or as headers that ended), raises
    TimeoutError(why): a network error, retried as one is. Once the block says the server's answer came
    (`answer_came`: an HTTP error's status), its error is raised as it is."""
    cut, outer = _Cut(deadline), getattr(_cutting, "cut", None)
    _cutting.cut = cut
    try:
        cut.timer.start()
        yield cut
    except (OSError, http.client.HTTPException) as exc:
        if cut.fired and not cut.answered:
            if isinstance(exc, urllib.error.HTTPError):  # its status came as the deadline passed: its response closed
                exc.close()
            raise TimeoutError(why) from exc
        raise
    finally:
        _cutting.cut = outer
        cut.timer.cancel()
        with cut.lock:  # a timer already past cancel's reach: it now shuts nothing, or it has, and fired says so
            cut.done = True
    if cut.fired and not cut.answered:
        raise TimeoutError(why)


class _WatchedTLSSocket(ssl.SSLSocket):
    """A TLS socket the thread's _Cut watches from the start of its handshake, which a server sending a byte at a time
    would otherwise stretch read by read."""

    def do_handshake(self, block: bool = False) -> None:
        cut = getattr(_cutting, "cut", None)
        if cut is not None:
            cut.watch(self)
        super().do_handshake(block)


def _watched(connection_class):
    """`connection_class` whose sockets the thread's _Cut, if it has one, watches: the TCP socket as it is made (a
    proxy's CONNECT reply is read on it), and an HTTPS connection's TLS socket as its handshake begins. Through
    http.client's `_create_connection` and the connection's SSL context (`_context`: made for each connection on
    Python 3.11, the handler's own and shared on 3.12; its `sslsocket_class` is SSLContext's documented hook for a
    subclass, and a shared one is harmless: a socket registers with its own thread's cut only): a Python without them
    leaves that part unwatched."""
    def connection(*args, **kwargs) -> http.client.HTTPConnection:
        made = connection_class(*args, **kwargs)
        cut = getattr(_cutting, "cut", None)
        if cut is None:
            return made
        create = getattr(made, "_create_connection", None)
        if create is not None:
            def create_then_watch(*create_args, **create_kwargs) -> socket.socket:
                sock = create(*create_args, **create_kwargs)
                cut.watch(sock)
                return sock

            made._create_connection = create_then_watch
        context = getattr(made, "_context", None)
        if isinstance(context, ssl.SSLContext):
            context.sslsocket_class = _WatchedTLSSocket
        return made

    return connection


class _Watching:
    """urllib's HTTP(S) handler, its connections `_watched`."""

    def do_open(self, http_class, req, **http_conn_args):
        return super().do_open(_watched(http_class), req, **http_conn_args)


class _WatchedHTTP(_Watching, urllib.request.HTTPHandler):
    pass


class _WatchedHTTPS(_Watching, urllib.request.HTTPSHandler):
    pass


def _opener() -> urllib.request.OpenerDirector:
    """urllib's default opener less the file:, ftp: and data: handlers, with redirects that never downgrade, and
    connections that a request's _Cut shuts at its deadline."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.UnknownHandler(), _WatchedHTTP(), _WatchedHTTPS(),
                    urllib.request.HTTPDefaultErrorHandler(), _NoDowngrade(), urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


def same_origin_link(link: str, first_url: str, where: str) -> str:
    """A next-page link from a response, if it points where the listing started (scheme, host and port): the
    request carries the listing's credentials, and a link elsewhere (another host, a file: URL) is not followed."""
    if not _same_origin(link, first_url):
        raise SourceFormatError(f"{where}: the next page's link points elsewhere than the listing's endpoint "
                                f"({cut(redact_url(link))}, not {cut(redact_url(first_url))}); not followed")
    return link


def _response_deadline(deadline: float, fetch_deadline: float | None) -> tuple[float, str]:
    """The earlier of a response's own `deadline` (its request + MAX_RESPONSE_S) and the source's `fetch_deadline`
    (max_fetch_s), with what to say when it passes."""
    if fetch_deadline is not None and fetch_deadline < deadline:
        return fetch_deadline, "the source's max_fetch_s ran out while the response arrived"
    return deadline, f"the response took more than {MAX_RESPONSE_S:g} s (MAX_RESPONSE_S) to arrive"


def _read_body(response: http.client.HTTPResponse, limit: int, deadline: float,
               fetch_deadline: float | None = None) -> bytes | None:
    """The body, read as it comes; None past `limit` bytes. Past `deadline` (time.monotonic) or the source's
    `fetch_deadline` (max_fetch_s), whichever comes first, a TimeoutError; a body that ends before its
    Content-Length, IncompleteRead (both retried, as network errors are; past max_fetch_s nothing is)."""
    deadline, why = _response_deadline(deadline, fetch_deadline)

    def in_time() -> None:
        if time.monotonic() > deadline:
            raise TimeoutError(why)

    body = read_at_most(response, limit, _READ_CHUNK, read=response.read1, each=in_time)
    if body is not None and getattr(response, "length", None):  # read1 ends quietly where the server closed early
        raise http.client.IncompleteRead(body, response.length)
    return body


def _secret_values(url: str, headers: dict | None = None) -> list[str]:
    """The secret values a URL and the caller's headers carry (every header the caller adds is a credential, here
    `Authorization: Bearer <token>`: the whole value and the token after its scheme), raw and decoded, longest first
    (to scrub them from server text: an error page may echo the request)."""
    values: set[str] = set()
    for field in urllib.parse.urlsplit(url).query.split("&"):
        name, _, value = field.partition("=")
        if value and is_secret_param(urllib.parse.unquote_plus(name)):
            values |= {value, urllib.parse.unquote_plus(value)}
    for value in (headers or {}).values():
        values |= {part for part in (value.strip(), value.strip().rpartition(" ")[2]) if len(part) >= _SHORTEST_SECRET}
    return sorted((v for v in values if v), key=len, reverse=True)


def url_secrets(url: str) -> list[str]:
    """The secret values a URL's query carries (an API key, a signed URL's signature), raw and decoded: what a server
    that echoes the request may quote back."""
    return _secret_values(url)


def reason_phrase(exc: urllib.error.HTTPError, secrets: Sequence[str] = ()) -> str:
    """The reason phrase of an HTTP error as a message quotes it: the server writes it, so on one line, its control
    characters seen (flows/text.py visible), the request's `secrets` it echoes masked (a key in the URL: "API key
    AIza... not valid"), and at most REASON_CHARS characters (a real one is a few words)."""
    return cut(scrub(visible(" ".join(str(exc.reason).split())), secrets), REASON_CHARS)


def _error_body(exc: urllib.error.HTTPError, deadline: float, fetch_deadline: float | None) -> bytes:
    """The start of an HTTP error's body (at most _ERROR_BODY_BYTES), read as a body is read (get_json's
    `_read_body`), no longer than the response's MAX_RESPONSE_S or the source's max_fetch_s: what came by then. Read
    whole, a body sent a byte at a time, each within the socket's timeout, held the run for hours. Read inside the
    request's `_cut_at`, whose timer shuts the connection at that deadline, a body that stops coming is not waited
    for either (a read blocks up to the socket's timeout)."""
    if fetch_deadline is not None:
        deadline = min(deadline, fetch_deadline)
    response = getattr(exc, "fp", None)
    read = getattr(response, "read1", None) or getattr(response, "read", None)
    parts, total = [], 0
    while read is not None and total < _ERROR_BODY_BYTES and time.monotonic() <= deadline:
        try:
            part = read(min(_READ_CHUNK, _ERROR_BODY_BYTES - total))
        except (OSError, http.client.HTTPException):  # the status says what failed; its message is what came
            break
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def _excerpt(body: bytes, secrets: list[str]) -> str:
    """The server's error message: `error.message` of a Google/Azure JSON error body, else the body's start."""
    text = body[:_ERROR_BODY_BYTES].decode("utf-8", errors="replace")
    message = None
    try:
        doc = json.loads(text) if len(body) <= _ERROR_BODY_BYTES else None
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, dict):
        err = doc.get("error", doc.get("Error"))
        if isinstance(err, dict):
            message = err.get("message", err.get("Message"))
        elif isinstance(err, str):
            message = err
        elif isinstance(doc.get("message"), str):
            message = doc["message"]
    text = visible(" ".join(str(message if message is not None else text).split()))
    if len(text) > _EXCERPT_CHARS:
        text = text[:_EXCERPT_CHARS] + "..."
    return scrub(text, secrets) or "(empty body)"


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds, or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def with_query(url: str, params: dict | None) -> str:
    """`url` with `params` (those not None) encoded onto its query, as `get_json` requests it: %20 for spaces and a
    literal `$` (OData's `$filter`), as the APIs' own next-page links are written."""
    if not params:
        return url
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None},
                                   safe="$", quote_via=urllib.parse.quote)
    return f"{url}{'&' if urllib.parse.urlsplit(url).query else '?'}{query}"


def page_key(url: str) -> tuple:
    """A page's URL as a pager compares it with the pages it fetched, to stop a listing whose next-page link leads back
    (Azure's): scheme and host in lower case, the port filled in from the scheme, the path decoded, and the query's
    parameters decoded and sorted, since a link may write them otherwise than the request did (`%24filter` or
    `$Filter` is `$filter`, `%20` or `+` a space). An OData `$skip` of 0 skips nothing: the first page, which is
    requested without one."""
    split = urllib.parse.urlsplit(url)
    try:  # the host as _same_origin reads it: a scheme's default port written out (Azure's links say :443) is none
        scheme, *host = _origin(url)
    except ValueError:  # a port that is no number: the text as written
        scheme, host = split.scheme.lower(), [split.netloc.lower(), None]
    query = []
    for name, value in urllib.parse.parse_qsl(split.query, keep_blank_values=True):
        if name.startswith("$"):  # OData's own options ($filter, $skip) are named in any case
            name = name.lower()
        if name == "$skip" and value.strip() and not value.strip().strip("0"):  # 0, 00: not int(), which reads ²
            continue
        query.append((name, value))
    return scheme, tuple(host), urllib.parse.unquote(split.path) or "/", tuple(sorted(query))


class PagesSeen:
    """The pages a listing has fetched (by page_key), the first as it was requested, so that a next-page link that
    leads back to one of them stops the listing at once rather than running on to max_pages."""

    def __init__(self, first_url: str) -> None:
        self.keys = {page_key(first_url)}

    def follow(self, link: str, where: str) -> None:
        """`link` taken as the next page; SourceFormatError (`where` names the link) if it leads back."""
        key = page_key(link)
        if key in self.keys:
            raise SourceFormatError(f"{where}: leads back to an earlier page ({cut(redact_url(link))}); stopping "
                                    "instead of looping")
        self.keys.add(key)


def get_json(
    url: str,
    *,
    params: dict | None = None,
    headers: dict | None = None,
    what: str,
    retries: int = 5,
    backoff_s: float = 1.0,
    timeout_s: float = 60,
    sleep: Callable[[float], Any] = time.sleep,
    limits: SourceLimits = DEFAULT_LIMITS,
) -> Any:
    """GET `url` (plus `params`, encoded onto its query) and parse the JSON body.

    `what` names the request in every message (e.g. "azure retail prices eastus page 2"). At most `retries`
    retries follow the first attempt. A body over `limits.max_file_bytes` is refused without reading the rest.
    """
    url = with_query(url, params)
    shown = redact_url(url)
    # what a server may echo back (a body quoting the request): the URL's secret parameters and the caller's headers
    secrets = _secret_values(url, headers)
    _check_scheme(url, f"{what}: ")
    try:
        request = urllib.request.Request(
            url, headers={"Accept": "application/json", "User-Agent": _USER_AGENT}, method="GET")
    except ValueError as exc:  # e.g. a URL without a host; urllib's message would carry the whole URL
        raise LiveSourceError(f"{what}: not a URL that can be fetched: {shown} ({type(exc).__name__})") from None
    for name, value in (headers or {}).items():  # credentials: for this URL only, never copied onto a redirect
        request.add_unredirected_header(name, value)
    attempts = max(0, retries) + 1
    last = ""
    for attempt in range(1, attempts + 1):
        wait = backoff_s * 2 ** (attempt - 1)
        limits.check_time(what)  # the source's max_fetch_s, retries and their waits included
        started = time.monotonic()
        error_body = b""
        try:
            # the status line and headers too, not the body alone, within the response's deadline; an error's body too
            with _cut_at(*_response_deadline(started + MAX_RESPONSE_S, limits.deadline)) as request_cut:
                try:
                    opened = _OPENER.open(request, timeout=limits.seconds_left(timeout_s))
                except urllib.error.HTTPError as exc:
                    request_cut.answer_came()
                    error_body = _error_body(exc, started + MAX_RESPONSE_S, limits.deadline)
                    raise
                with opened as response:
                    length = (response.headers.get("Content-Length") or "").strip()
                    if length.isdigit() and int(length) > limits.max_file_bytes:
                        raise limits.exceeded(f"{what}: response from {shown}", "max_file_bytes",
                                              f"the body ({int(length):,} bytes) is larger")
                    # read as it comes, whatever Content-Length says (a chunked body ignores it): stopped past the limit
                    body = _read_body(response, limits.max_file_bytes, started + MAX_RESPONSE_S, limits.deadline)
                    status = response.status
            if body is None:
                raise limits.exceeded(f"{what}: response from {shown}", "max_file_bytes", "the body is larger")
        except urllib.error.HTTPError as exc:
            exc.close()
            status = exc.code
            excerpt = _excerpt(error_body, secrets)
            if status in (401, 403):
                raise LiveSourceError(f"{what}: access denied (HTTP {status}) from {shown}: {excerpt}") from None
            if status not in RETRY_STATUSES:
                raise LiveSourceError(f"{what}: HTTP {status} {reason_phrase(exc, secrets)} from {shown}: "
                                      f"{excerpt}") from None
            last = f"HTTP {status}: {excerpt}"
            header_wait = retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            if header_wait is not None:
                wait = header_wait
        except http.client.InvalidURL as exc:  # e.g. a next-page link with a space: the same on every try
            raise LiveSourceError(f"{what}: not a URL that can be fetched: {shown} "
                                  f"({cut(scrub(visible(str(exc)), secrets), REASON_CHARS)})") from None
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, resets, truncated bodies
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, ssl.SSLCertVerificationError):  # the same certificate on every try: not retried
                raise LiveSourceError(f"{what}: the certificate of {shown} does not verify "
                                      f"({reason.verify_message})") from None
            last = f"network error: {scrub(f'{type(exc).__name__}: {reason}', secrets)}"
        else:
            log.info("GET %s -> HTTP %d, %d bytes in %.1fs (%s)", shown, status, len(body),
                     time.monotonic() - started, what)

            def not_json(detail: str, body: bytes = body) -> SourceFormatError:
                return SourceFormatError(
                    f"{what}: response from {shown} is not JSON ({detail}): {_excerpt(body, secrets)}")

            try:
                text = body.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise not_json(exc.reason) from None
            return parse_json(text, f"{what}: response from {shown}", not_json=not_json)
        limits.check_time(what, cause=last)  # past max_fetch_s (a request cut at it): that, then the last error
        if attempt < attempts:
            limits.check_time(what, wait, cause=last)  # a retry that would start past it is not waited for
            log.warning("%s: %s from %s; retry %d of %d in %.1fs", what, last, shown, attempt, attempts - 1, wait)
            sleep(wait)
    raise LiveSourceError(f"{what}: gave up after {attempts} attempts to GET {shown}; last: {last}")


_OPENER = _opener()


def open_url(url: str, timeout_s: float, fetch_deadline: float | None = None, headers: dict[str, str] | None = None):
    """`url` opened as get_json opens its requests (http and https only, redirects never from https to http, its
    handshake, status line and headers within MAX_RESPONSE_S and the source's `fetch_deadline`, else a TimeoutError),
    with `headers` (a conditional GET's If-None-Match, say); a LiveSourceError, not retried, for any other scheme. The
    caller reads the body within its own deadline."""
    _check_scheme(url)
    response = None
    try:
        with _cut_at(*_response_deadline(time.monotonic() + MAX_RESPONSE_S, fetch_deadline)):
            response = _OPENER.open(urllib.request.Request(url, headers=headers or {}), timeout=timeout_s)
    except TimeoutError:
        if response is not None:  # opened as the deadline passed: closed, not left to the garbage collector
            response.close()
        raise
    return response


def _check_scheme(url: str, prefix: str = "") -> None:
    """A LiveSourceError for a URL that is not http(s): a file:, ftp: or data: URL is never read."""
    if urllib.parse.urlsplit(url).scheme.lower() not in FETCHED_SCHEMES:
        raise LiveSourceError(f"{prefix}not a URL that can be fetched: {redact_url(url)} (expected http:// or https://)")
