"""Reading helpers shared by the source modules: every error names the file, the row or key, and what was expected."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any


class SourceFormatError(ValueError):
    """A source file or response is not in the format its kind expects."""


def read_text(path: Path, label: str | None = None, encoding: str = "utf-8") -> str:
    """The file's text; errors name `label` (how the user knows the file), else the path."""
    name = label or path
    try:
        return path.read_text(encoding=encoding)
    except UnicodeDecodeError as exc:
        raise SourceFormatError(f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise SourceFormatError(f"{name}: cannot be read ({exc.strerror})") from None


def load_json(path: Path, label: str | None = None) -> Any:
    text = read_text(path, label)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceFormatError(
            f"{label or path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def load_csv(path: Path, label: str | None = None, skip_lines: int = 0) -> list[dict[str, str]]:
    """Rows as dicts keyed by header name (columns vary between versions: read by name)."""
    path_name = label or path
    lines = io.StringIO(read_text(path, label, encoding="utf-8-sig"))  # spreadsheets often write a byte-order mark
    for _ in range(skip_lines):
        lines.readline()
    reader = csv.DictReader(lines)
    if not reader.fieldnames:
        raise SourceFormatError(f"{path_name}: empty CSV, expected a header line")
    rows = []
    for row in reader:
        if None in row:
            raise SourceFormatError(
                f"{path_name}: line {reader.line_num}: {len(reader.fieldnames) + len(row[None])} fields, "
                f"expected {len(reader.fieldnames)} (the header's)"
            )
        rows.append(row)
    return rows


def require(obj: Any, key: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """obj[key], or a SourceFormatError saying where the key was expected and what type."""
    if not isinstance(obj, dict):
        raise SourceFormatError(f"{where}: expected an object with key {key!r}, got {type(obj).__name__}")
    if key not in obj:
        raise SourceFormatError(f"{where}: missing key {key!r}")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SourceFormatError(f"{where}.{key}: expected {names}, got {type(value).__name__} {value!r:.60}")
    return value


def to_float(text: Any) -> float | None:
    """A finite number from a JSON number or numeric string; None when it is not one (validation quarantines it)."""
    if text is None or isinstance(text, bool):
        return None
    try:
        value = float(text) if isinstance(text, (int, float)) else float(str(text).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def to_bool(value: Any) -> bool | None:
    """A JSON boolean, or the strings true/false/1/0 that CSV-born files carry."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False, "": None}.get(text)


class LiveSourceError(RuntimeError):
    """A live source could not be fetched: no credentials, access denied, throttled past its retries, network down.

    The message says which source and why, and never carries a secret (keys, tokens, signed URLs are redacted).
    """


_SECRET_IN_TEXT = re.compile(
    r"(?i)([?&](?:[\w.-]*(?:key|token|sig|credential|secret|password)[\w.-]*|code)=)[^&\s'\"]+")
_USERINFO = re.compile(r"(://[^/\s:@]+:)[^@/\s]+@")
_ACCOUNT_IN_ARN = re.compile(r"(arn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:)\d{12}(:)")


def redact_text(text: str) -> str:
    """A last line of defence for messages that reach logs, ops tables and reports: secret query parameters
    (key=, token=, sig= ...) and AWS account ids inside ARNs become ***."""
    return _USERINFO.sub(r"\1***@", _ACCOUNT_IN_ARN.sub(r"\1***\2", _SECRET_IN_TEXT.sub(r"\1***", text)))
