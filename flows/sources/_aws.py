"""boto3 plumbing shared by the AWS sources: clients from the standard credential chain, pages with retries.

botocore's own retries are turned off so that one layer decides: a throttled page, or one the service failed to
serve (HTTP 5xx: InternalError, ServiceUnavailable ...), is retried here, with exponential backoff, from the page it
stopped at; a denied call or a missing credential fails the source at once with the reason (never the credentials
themselves).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flows.redaction import redact_text
from flows.sources._common import DEFAULT_LIMITS, LiveSourceError, SourceFormatError, SourceLimits
from flows.sources._concurrency import CloudSlots, in_order

log = logging.getLogger(__name__)

THROTTLING_CODES = {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException",
                    "RequestThrottled", "RequestThrottledException", "SlowDown", "PriorRequestNotComplete"}
# the service failed to serve the call: worth the same retries as throttling (botocore's own retry modes retry them)
SERVER_ERROR_CODES = {"InternalError", "InternalFailure", "InternalServerError", "ServiceUnavailable", "Unavailable",
                      "ServiceUnavailableException", "InternalServiceError"}
DENIED_CODES = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
                "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException", "AuthFailure", "SignatureDoesNotMatch",
                "OptInRequired"}
# The CPU baseline instance types (catalogs/instances.yaml, family cpu) the AWS price sources keep besides the
# accelerated families: named one by one, since a CPU family ("Compute optimized") holds thousands of products.
CPU_BASELINE_INSTANCE_TYPES = ("c8i.96xlarge", "c8i.metal-48xl", "c8a.48xlarge", "c8g.metal-24xl")


def client(service: str, region: str, session: Any = None):
    """A boto3 client whose credentials come from boto3's standard chain (environment, profile, SSO, role)."""
    import boto3
    from botocore.config import Config

    session = session or boto3.Session()
    return session.client(service, region_name=region,
                          config=Config(retries={"total_max_attempts": 1}, connect_timeout=10, read_timeout=60))


def rows_by_region(service: str, regions: Sequence[str], session: Any, slots: CloudSlots | None,
                   region_rows: Callable[[Any, str], list[dict]]) -> list[dict]:
    """`region_rows(client, region)` for every region, side by side within `slots` (AWS's share), rows in region order.

    Every client is made here, before the threads: a boto3 session is not thread-safe (its clients are).
    """
    clients = {region: client(service, region, session) for region in regions}
    return [row for rows in in_order(lambda region: region_rows(clients[region], region), list(regions), slots)
            for row in rows]


_LAST = object()  # what _next_page gives after a listing's last page


def _next_page(listing: Iterator[dict], limits: SourceLimits, where: str, given_up: threading.Event,
               when_it_ends: Callable[[], Any]) -> Any:
    """The listing's next page (`_LAST` after its last), given up at the fetch's deadline (max_fetch_s) when it has one.

    botocore bounds each read of a response (read_timeout, 60 s), not the whole: a page that trickles in, a byte within
    each read's timeout, would hold the run past max_fetch_s for as long as it came, and one that stops coming for
    60 s past it. So the page is asked for in a thread of its own, and the fetch stops at the deadline with the
    source's max_fetch_s error. The thread given up on (a daemon: the process's exit does not wait for it) ends at
    its next read's timeout or the response's end: `given_up` is set for it (the listing parses nothing more), and it
    calls `when_it_ends` as it ends.
    """
    if limits.deadline is None:
        return next(listing, _LAST)
    outcome: dict[str, Any] = {}
    answered = threading.Event()
    lock = threading.Lock()  # the page is answered, or given up on: one of the two, decided under it

    def ask() -> None:
        try:
            outcome["page"] = next(listing, _LAST)
        except BaseException as exc:  # noqa: BLE001 - raised again in the fetch's own thread, below
            outcome["error"] = exc
        finally:
            with lock:
                answered.set()
                left_behind = given_up.is_set()
            if left_behind:
                when_it_ends()

    threading.Thread(target=ask, name="hweval-aws-page", daemon=True).start()
    answered.wait(max(0.0, limits.deadline - time.monotonic()))
    with lock:
        if not answered.is_set():
            given_up.set()
    if given_up.is_set():
        raise limits.exceeded(where, "max_fetch_s", "the page is taking longer to arrive")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["page"]


def check_options(options: dict, allowed: set[str], required: set[str], what: str) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise SourceFormatError(f"{what}: unknown live option(s) {', '.join(unknown)} "
                                f"(expected: {', '.join(sorted(allowed))})")
    missing = sorted(k for k in required if not options.get(k))
    if missing:
        raise SourceFormatError(f"{what}: live option(s) {', '.join(missing)} missing")


def pages(api_client, operation: str, what: str, *, limits: SourceLimits = DEFAULT_LIMITS, attempts: int = 5,
          backoff_s: float = 1.0, sleep=time.sleep, **kwargs) -> Iterator[dict]:
    """Every page of `operation` through its boto3 paginator; a throttled page is retried where it stopped.

    At most `limits.max_pages` pages; a NextToken that repeats an earlier page's (A, B, A ...) stops the listing
    with a SourceFormatError instead of following it forever (botocore only notices the same token twice in a row).
    """
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
        ReadTimeoutError,
    )
    from botocore.paginate import TokenEncoder

    transient_network = (ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError)

    paginator = api_client.get_paginator(operation)
    token, throttled, page_no = None, 0, 0

    given_up = threading.Event()  # set by _next_page when it gives up on a page (max_fetch_s), which is read on

    def within_bytes(response_dict: dict, **_) -> None:
        if given_up.is_set():  # a page the fetch gave up on, read whole since: not parsed, for nobody
            raise limits.exceeded(f"{what}: page {page_no + 1}", "max_fetch_s", "the page came after the fetch gave "
                                  "it up: it took longer")
        # botocore has read the page whole by now: refused before it is parsed into Python objects (several times
        # its size), as get_json refuses an HTTP source's body past the same limit
        body = response_dict.get("body")
        if isinstance(body, bytes | bytearray) and len(body) > limits.max_file_bytes:
            raise limits.exceeded(f"{what}: page {page_no + 1}", "max_file_bytes",
                                  f"the response ({len(body):,} bytes) is larger")

    # on this client (its own emitter), for this listing: taken off as the listing ends, however it ends
    event = (f"before-parse.{api_client.meta.service_model.service_id.hyphenize()}."
             f"{api_client.meta.method_to_api_mapping[operation]}")
    api_client.meta.events.register(event, within_bytes)

    def stop_checking() -> None:
        api_client.meta.events.unregister(event, within_bytes)

    seen: dict[str, int] = {}  # NextToken -> the page that returned it
    limits.check_time(what)  # the source's max_fetch_s: checked before each page and each retry's wait
    try:
        while True:
            # a paginator resumes from its own token (the service's NextToken encoded as botocore writes it): given
            # the service's token as is, botocore would try to read it as its own and could split it into parameters
            config = {"StartingToken": TokenEncoder().encode({"NextToken": token})} if token else {}
            try:
                listing = iter(paginator.paginate(**kwargs, PaginationConfig=config))
                while (page := _next_page(listing, limits, f"{what}: page {page_no + 1}", given_up,
                                          stop_checking)) is not _LAST:
                    page_no += 1
                    throttled = 0
                    log.info("%s: page %d", what, page_no)
                    yield page
                    token = page.get("NextToken") or None
                    if token is None:
                        continue
                    if token in seen:
                        raise SourceFormatError(f"{what}: page {page_no}'s NextToken repeats page {seen[token]}'s: "
                                                f"the API is going round in a loop; stopping instead of following it")
                    if page_no >= limits.max_pages:
                        raise limits.exceeded(what, "max_pages", "the listing has more pages")
                    limits.check_time(what)
                    seen[token] = page_no
                return
            except ClientError as exc:
                error = exc.response.get("Error", {})
                code, message = error.get("Code", "?"), error.get("Message", "")
                status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
                server_error = code in SERVER_ERROR_CODES or (code not in THROTTLING_CODES and status >= 500)
                if (code in THROTTLING_CODES or server_error) and throttled < attempts - 1:
                    throttled += 1
                    wait = backoff_s * 2 ** (throttled - 1)
                    limits.check_time(what, wait, cause=redact_text(f"{code}: {message}"))
                    log.warning("%s: %s (%s); retrying page %d in %.1f s (%d of %d)", what,
                                "throttled" if code in THROTTLING_CODES else f"HTTP {status or '5xx'}", code,
                                page_no + 1, wait, throttled, attempts - 1)
                    sleep(wait)
                    continue
                where = f"{what}: page {page_no + 1}"  # the page that failed, as the retries' warnings name it
                if code in THROTTLING_CODES:
                    raise LiveSourceError(f"{where}: still throttled ({code}) after {attempts} attempts") from None
                if server_error:
                    raise LiveSourceError(redact_text(f"{where}: still failing ({code}: {message}) after {attempts} "
                                                      f"attempts")) from None
                if code in DENIED_CODES:
                    raise LiveSourceError(redact_text(f"{where}: access denied ({code}): {message}")) from None
                raise LiveSourceError(redact_text(f"{where}: {code}: {message}")) from None
            except transient_network as exc:
                if throttled < attempts - 1:
                    throttled += 1
                    wait = backoff_s * 2 ** (throttled - 1)
                    limits.check_time(what, wait, cause=type(exc).__name__)
                    log.warning("%s: %s; retrying page %d in %.1f s", what, type(exc).__name__, page_no + 1, wait)
                    sleep(wait)
                    continue
                raise LiveSourceError(f"{what}: page {page_no + 1}: {type(exc).__name__} after {attempts} attempts: "
                                      f"{exc}") from None
            except (NoCredentialsError, PartialCredentialsError):
                raise LiveSourceError(f"{what}: no AWS credentials in boto3's standard chain (environment variables, "
                                      f"~/.aws/config profile, SSO or an instance role)") from None
            except BotoCoreError as exc:  # endpoint unreachable, timeouts: the message names the endpoint, no secret
                raise LiveSourceError(f"{what}: page {page_no + 1}: {type(exc).__name__}: {exc}") from None
            except RecursionError:  # botocore parses with json.loads, which has no depth bound but Python's
                raise SourceFormatError(f"{what}: page {page_no + 1}: the response nests deeper than Python reads "
                                        "(its recursion limit); no AWS API nests so") from None
    finally:
        if not given_up.is_set():  # else the page's thread, still reading, takes it off as it ends (_next_page)
            stop_checking()
