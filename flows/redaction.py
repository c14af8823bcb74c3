"""Secrets out of every message that reaches logs, ops tables, notifications and reports: one place for the rules.

A credential may reach a message by three roads: in a URL a source fetches (`?subscription-key=...`, a signed URL's
`X-Amz-Signature`, `user:password@`), quoted back by a server in an error (AWS's SignatureDoesNotMatch quotes its
canonical request, a web server may echo `Authorization: Bearer ...`), or as a value the caller knows is secret (a
header it sent, a notification channel's URL). `redact_url` masks the first, `redact_text` the second wherever it
stands, and `scrub` the third by value. Each masks with MASK and leaves ordinary words alone.
"""

from __future__ import annotations

import re
import urllib.parse

from flows.safe_yaml import cut
from flows.text import visible

MASK = "***"
MAX_ERROR_CHARS = 2_000  # of a source's error as a run keeps and shows it (a real one is a line or a short list)

_SECRET_NAME = r"(?:[\w.-]*(?:key|token|sig|credential|secret|password)[\w.-]*|code)"
_SECRET_IN_TEXT = re.compile(rf"(?i)([?&]{_SECRET_NAME}=)[^&\s'\"]+")
_SECRET_PARAM = re.compile(rf"(?i){_SECRET_NAME}")


def is_secret_param(name: str) -> bool:
    """Whether a query parameter of this name carries a secret (key, api-key, subscription-key, token, sig,
    X-Amz-Signature, X-Amz-Credential, client_secret, password, code ...; any case): one rule for every redaction."""
    return _SECRET_PARAM.fullmatch(name.strip()) is not None


_USERINFO = re.compile(r"(://[^/\s:@]+:)[^@/\s]+@")
_ACCOUNT_IN_ARN = re.compile(r"(arn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:)\d{12}(:)")
# A request quoted back in an error: AWS's SignatureDoesNotMatch quotes its canonical request, headers and all
# (`x-amz-security-token:<session token>`, `authorization:AWS4-HMAC-SHA256 Credential=...`), and a web server's
# error page may echo `Authorization: Bearer <token>`. An Authorization header's whole value goes, to the line's end;
# of another header or field named like a secret (`...token`, `...secret`, `...signature`, `...credential`,
# `...password`, `...api-key`), the value; a bearer token and an AWS access key id wherever they stand. A value under
# 8 characters is no credential (`AZURE_ACCESS_TOKEN: a bearer token for ...` in a message saying what to set).
_AUTHORIZATION = re.compile(r"(?i)(\bauthorization\s*[:=]\s*)[^\r\n'\"]+")
_SECRET_FIELD = re.compile(
    r"(?i)(\b[\w-]*(?:token|secret|signature|credential|password|api[-_]?key|subscription-key)['\"]?"
    r"(?:\s+(?:header|value))?\s*[:=]\s*['\"]?)[^\s'\"&,;*]{8,}")
# a token has a digit or a punctuation mark in it ("Bearer authentication failed" names no token)
_BEARER = re.compile(r"(?i)(\bbearer\s+)(?=[\w.~+/=-]*[\d.~+/=-])[\w.~+/=-]{8,}")
_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")


def redact_text(text: str) -> str:
    """A last line of defence for messages that reach logs, ops tables and reports: secret query parameters
    (key=, token=, sig= ...), AWS account ids inside ARNs, an Authorization header's value, the values of headers
    and fields named like secrets (x-amz-security-token: ...), bearer tokens and AWS access key ids become ***."""
    text = _SECRET_IN_TEXT.sub(r"\1***", text)
    text = _AUTHORIZATION.sub(r"\1***", text)
    text = _SECRET_FIELD.sub(r"\1***", text)
    text = _BEARER.sub(r"\1***", text)
    text = _ACCESS_KEY_ID.sub("***", text)
    return _USERINFO.sub(r"\1***@", _ACCOUNT_IN_ARN.sub(r"\1***\2", text))


def error_text(text: str) -> str:
    """A source's error as a run keeps and shows it (ops.source_loads, the pages, the command line, the log): secrets
    masked (redact_text), control characters seen (flows/text.py visible), at most MAX_ERROR_CHARS characters."""
    return cut(visible(redact_text(text)), MAX_ERROR_CHARS)


def redact_url(url: str) -> str:
    """`url` with the values of secret query parameters (key, token, sig ...; any case) and any password as ***."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{userinfo}@{host}"
    fields = []
    for field in parts.query.split("&") if parts.query else []:
        name = field.split("=", 1)[0]
        if is_secret_param(urllib.parse.unquote_plus(name)):
            field = f"{name}=***"
        fields.append(field)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "&".join(fields), parts.fragment))


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with each of `secrets` (known secret values, longest first so that none is half-masked) as MASK."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
