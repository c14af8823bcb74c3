"""Reading helpers shared by the source modules: every error names the file, the row or key, and what was expected.

Every read is bounded by the source's limits (`SourceLimits`: pages, file bytes, line bytes; declared per source in
sources.yaml, defaults below) and by format bounds that no real source comes near (number digits, JSON nesting).
Past one of them the source fails with a `SourceLimitError` (a `SourceFormatError`: never retried) that names the
file, the limit, its value and how to raise it.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
import reprlib
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# Defaults of the limits a source may raise in sources.yaml (`sources.<id>.max_pages` ...; see catalog_models.Source).
MAX_PAGES = 2_000  # pages one live listing (a region, service or filter) follows; real ones take tens, or hundreds
MAX_FILE_BYTES = 256 * MIB  # a file or API response; JSON is parsed whole, at several times its size in memory
MAX_LINE_BYTES = 1 * MIB  # a line of a CSV file, or one CSV record (a quoted field may span lines)
# seconds one live fetch (a region or service fanned out, else the whole source) may take from its start, retries and
# their waits included: each request is also bounded (flows/sources/_http.py MAX_RESPONSE_S, boto3's read timeout),
# but a listing of thousands of slow pages, or a server asking again and again to retry later, is not
MAX_FETCH_S = 3_600.0
LIMIT_NAMES = ("max_pages", "max_file_bytes", "max_line_bytes", "max_fetch_s")

# Format bounds, the same for every source: no price, count or rate needs more, and past them parsing costs
# quadratic time (digits) or the interpreter's stack (nesting).
MAX_NUMBER_DIGITS = 1_000  # characters of one JSON number; Python itself refuses integers over 4,300 digits
MAX_JSON_DEPTH = 500  # lists and objects one JSON document may nest; real ones nest under 10
EXCERPT_CHARS = 200  # data quoted in a message


class SourceFormatError(ValueError):
    """A source file or response is not in the format its kind expects."""


class SourceLimitError(SourceFormatError):
    """A source file, line or listing is larger than a limit its source declares (or the default)."""


@dataclasses.dataclass(frozen=True)
class SourceLimits:
    """The bounds one source's reads run under; `source_id` (when known) makes the messages say where to raise them."""

    max_pages: int = MAX_PAGES
    max_file_bytes: int = MAX_FILE_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    max_fetch_s: float = MAX_FETCH_S
    source_id: str | None = None
    deadline: float | None = None  # time.monotonic() past which the fetch stops: set by started()

    def exceeded(self, where: str, name: str, what: str) -> SourceLimitError:
        """The error for `what` (e.g. "line 3 is longer") past the limit `name`: its value and how to raise it."""
        value = getattr(self, name)
        shown = {"max_pages": f"{value:,} pages", "max_fetch_s": f"{value:,g} s"}.get(name) or _bytes(value)
        entry = f"sources.{self.source_id}" if self.source_id else "the source's entry"
        return SourceLimitError(f"{where}: {what} than {name} allows ({shown}); if that is right, raise it with "
                                f"`{name}: N` under {entry} in catalogs/sources.yaml")

    def started(self) -> SourceLimits:
        """These limits for a live fetch starting now: its requests stop `max_fetch_s` from now."""
        return dataclasses.replace(self, deadline=time.monotonic() + self.max_fetch_s)

    def check_time(self, where: str, wait_s: float = 0.0, cause: str | None = None) -> None:
        """A SourceLimitError (never retried) once the fetch is past its deadline, or would be after waiting `wait_s`
        (a retry's backoff: not waited for nothing); `cause`, what the retry is for, is named after it."""
        if self.deadline is not None and time.monotonic() + wait_s > self.deadline:
            what = "the fetch is taking longer" if wait_s == 0 else f"a retry {wait_s:g} s from now would take longer"
            error = self.exceeded(where, "max_fetch_s", what)
            raise SourceLimitError(f"{error} (last: {cause})") if cause else error

    def seconds_left(self, at_most: float) -> float:
        """`at_most` seconds, or what is left before the deadline when that is less (at least 0.1 s: a timeout)."""
        if self.deadline is None:
            return at_most
        return max(0.1, min(at_most, self.deadline - time.monotonic()))


DEFAULT_LIMITS = SourceLimits()


def _bytes(n: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n:,} bytes = {n // size:,} {unit}"
    return f"{n:,} bytes"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = EXCERPT_CHARS
_REPR.maxlevel = 3


def blank(value: Any) -> bool:
    """A value not given: missing (None), or text of spaces only (an empty CSV cell, `""` in JSON)."""
    return value is None or (isinstance(value, str) and not value.strip())


def excerpt(value: Any) -> str:
    """`value` as a message quotes it: its repr, at most a few hundred characters."""
    if isinstance(value, str) and len(value) > EXCERPT_CHARS:
        return repr(value[:EXCERPT_CHARS]) + f"... ({len(value):,} characters)"
    return _REPR.repr(value)


# items in one list of a `live:` block (regions, services, instance types or families, name filters): each region or
# service is a listing of its own (a fan-out task each on Dask, flows/fanout.py), each name a filter the API is sent.
# A longer list is refused by `hweval check` and the run's catalog check, as any wrong option is, rather than fetched
# one listing after another until the source's max_fetch_s, or failing every live source's fan-out at once.
MAX_LIVE_LIST_ITEMS = 500


def odata_literal(value: str) -> str:
    """An OData string literal, as Azure's `$filter` reads one: single quotes, an inner quote doubled."""
    return "'" + value.replace("'", "''") + "'"


def name_list(options: Any, key: str, what: str, *, required: bool = False, empty_ok: bool = False,
              hint: str = "") -> list[str] | None:
    """`options[key]` as a list of names (each stripped): None when it is absent and not `required`. Anything else
    than a list of non-empty strings (non-empty unless `empty_ok`), of at most MAX_LIVE_LIST_ITEMS, is a
    SourceFormatError naming `what` and `key` (a plain string was read a character at a time: 18 Price List calls
    for the regions 'u', 's', '-', ... and no row)."""
    value = options.get(key)
    if value is None and not required:
        return None
    if (not isinstance(value, list) or not (value or empty_ok)
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise SourceFormatError(f"{what}: {key!r}: expected a {'' if empty_ok else 'non-empty '}list of names, "
                                f"got {excerpt(value)}{hint}")
    if len(value) > MAX_LIVE_LIST_ITEMS:
        raise SourceFormatError(f"{what}: {key!r}: {len(value):,} items, more than the {MAX_LIVE_LIST_ITEMS} a live "
                                f"option's list may hold (MAX_LIVE_LIST_ITEMS)")
    return [v.strip() for v in value]


def _line_col(text: str, pos: int) -> str:
    line, line_start = text.count("\n", 0, pos) + 1, text.rfind("\n", 0, pos) + 1
    return f"line {line} column {pos - line_start + 1}"


def read_at_most(stream: Any, limit: int, chunk: int = MIB, *, read: Callable[[int], bytes] | None = None,
                 each: Callable[[], None] | None = None) -> bytes | None:
    """The rest of `stream` (a file or an HTTP response), or None as soon as it passes `limit` bytes: read in
    chunks, since read(limit + 1) would allocate the whole limit up front. `read` replaces `stream.read` (an HTTP
    response's read1: what has come, not a whole chunk); `each` is called after every chunk (a deadline's check)."""
    read = read or stream.read
    parts, total = [], 0
    while part := read(chunk):
        total += len(part)
        if total > limit:
            return None
        parts.append(part)
        if each is not None:
            each()
    return b"".join(parts)


def read_bytes(path: Path, label: str | Path, limits: SourceLimits = DEFAULT_LIMITS) -> bytes:
    """The file's bytes, refused unread when it is larger than `max_file_bytes` (never more than that is read)."""
    try:
        with path.open("rb") as f:
            size = path.stat().st_size
            if size > limits.max_file_bytes:
                raise limits.exceeded(str(label), "max_file_bytes", f"the file ({size:,} bytes) is larger")
            data = f.read(size + 1)
            if len(data) > size:  # the file grew since stat said its size (or is not a regular file)
                room = limits.max_file_bytes - len(data)
                rest = read_at_most(f, room) if room >= 0 else None
                if rest is None:
                    raise limits.exceeded(str(label), "max_file_bytes", "the file is larger")
                data += rest
    except OSError as exc:
        raise SourceFormatError(f"{label}: cannot be read ({exc.strerror})") from None
    return data


def read_text(path: Path, label: str | None = None, encoding: str = "utf-8",
              limits: SourceLimits = DEFAULT_LIMITS) -> str:
    """The file's text; errors name `label` (how the user knows the file), else the path."""
    name = label or path
    return decode_text(read_bytes(path, name, limits), name, encoding)


# what a text file saved as UTF-16 or UTF-32 holds and UTF-8 text never does: a NUL byte beside each ASCII letter
_NUL = b"\x00"
_UTF16_OR_32 = "UTF-16 or UTF-32 writes NUL bytes; expected UTF-8: save the file as UTF-8"
# a line that ends in a carriage return with no line feed after it: as classic Mac OS (and old Excel for Mac) wrote
_BARE_CR = "its lines end in a bare carriage return (as classic Mac OS wrote); expected LF or CRLF line ends"


def decode_text(data: bytes, name: str | Path, encoding: str = "utf-8") -> str:
    """A file's bytes as text, a UTF-8 byte-order mark left out (spreadsheets and some editors write one: the CSV and
    YAML readers took it, JSON's refused it); an error names the file, the byte and its line, and a file of NUL bytes
    (UTF-16 or UTF-32 without a byte-order mark, which decode as UTF-8 all the same) is refused as such."""
    if _NUL in data:
        at = data.index(_NUL)
        line = data.count(b"\n", 0, at) + 1
        raise SourceFormatError(f"{name}: line {line}: not UTF-8 text (byte {at} is a NUL; {_UTF16_OR_32})")
    try:
        return data.decode("utf-8-sig" if encoding == "utf-8" else encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SourceFormatError(f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason}) on line {line}") from None


class _LongNumber(Exception):
    def __init__(self, text: str):
        super().__init__(text[:EXCERPT_CHARS])
        self.text = text


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _LongNumber(text)
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise _LongNumber(text)
    return float(text)


_JSON_NESTING = re.compile(r'"(?:[^"\\]+|\\.)*"|[\[\]{}]')
_JSON_TOKEN = re.compile(r'"(?:[^"\\]+|\\.)*"|[\[\]{}:]')
_NOT_QUOTE_OR_BRACKET = bytes(b for b in range(256) if b not in b'"[]{}')
_QUOTED = re.compile(rb'"[^"]*"')
_DEPTH_STEP = [{ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.get(b, 0) for b in range(256)]


def _deeper_than_allowed(text: str) -> bool:
    """Whether `text` nests lists and objects more than MAX_JSON_DEPTH deep (brackets in strings not counted): a few
    passes at C speed, a fraction of what parsing costs, and none for a document with too few brackets."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    data = text.encode("utf-8", "surrogatepass")  # UTF-8 writes no other character with the bytes of " [ ] { }
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # escapes: the quotes left open or close strings
    # quotes side by side (an empty string, or two strings with no bracket between them) leave brackets as they were
    marks = data.translate(None, _NOT_QUOTE_OR_BRACKET).replace(b'""', b"")
    return max(accumulate(map(_DEPTH_STEP.__getitem__, _QUOTED.sub(b"", marks))), default=0) > MAX_JSON_DEPTH


def _too_deep(text: str) -> str:
    """Where `text` first nests deeper than MAX_JSON_DEPTH (strings skipped)."""
    depth = 0
    for match in _JSON_NESTING.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"{_line_col(text, match.start())}: nested more than {MAX_JSON_DEPTH:,} levels deep"
        elif token in "]}":
            depth -= 1
    return "nested too deeply for the JSON parser"


class _RepeatedKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """An object's pairs as a dict, refusing a key given twice (json.loads would keep the last silently)."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return obj


def _repeated_key_place(text: str) -> str | None:
    """Where in `text` an object first gives a key twice, and where it gave it first (strings read as JSON reads
    them, so that "\\u0041" and "A" are the same key)."""
    objects: list[dict[str, int] | None] = []  # per open list or object: an object's keys and where each was
    last_string = None
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == ":" and last_string is not None and objects and objects[-1] is not None:
            key, keys = json.loads(last_string.group()), objects[-1]
            if key in keys:
                return (f"{_line_col(text, last_string.start())}: key {excerpt(key)} appears twice in one object "
                        f"(first at {_line_col(text, keys[key])})")
            keys[key] = last_string.start()
        elif token in ("{", "["):
            objects.append({} if token == "{" else None)
        elif token in ("}", "]") and objects:
            objects.pop()
        last_string = match if token.startswith('"') else None
    return None


def parse_json(text: str, where: str, not_json: Callable[[str], SourceFormatError] | None = None) -> Any:
    """`text` as JSON; every way it can fail (syntax, digits, nesting, a key given twice in one object, memory) is a
    SourceFormatError naming `where` and the line (`not_json(detail)` words a syntax error, when given). A number
    longer than MAX_NUMBER_DIGITS is refused; a shorter one too large for a float parses (to_float makes it None:
    validation quarantines its row). Nesting past MAX_JSON_DEPTH is refused before parsing."""
    try:
        if _deeper_than_allowed(text):
            raise SourceFormatError(f"{where}: {_too_deep(text)}")
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        if not_json is not None:
            raise not_json(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
        raise SourceFormatError(f"{where}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except _LongNumber as exc:
        at = text.find(exc.text)
        place = f"{_line_col(text, at)}: " if at >= 0 else ""
        raise SourceFormatError(f"{where}: {place}a number {len(exc.text):,} characters long (more than the "
                                f"{MAX_NUMBER_DIGITS:,} a number may have): {excerpt(exc.text)}") from None
    except _RepeatedKey as exc:
        place = _repeated_key_place(text) or f"key {excerpt(exc.key)} appears twice in one object"
        raise SourceFormatError(f"{where}: {place}; expected each key once") from None
    except RecursionError:  # nesting within MAX_JSON_DEPTH, on a stack already deep
        raise SourceFormatError(f"{where}: {_too_deep(text)}") from None
    except MemoryError:
        raise SourceFormatError(f"{where}: too large to parse in memory ({len(text):,} characters); "
                                f"lower max_file_bytes so that such a file is refused before it is read") from None


def load_json(path: Path, label: str | None = None, limits: SourceLimits = DEFAULT_LIMITS) -> Any:
    name = label or str(path)
    return parse_json(read_text(path, name, limits=limits), name)


class _BoundedLines:
    """A file's lines as text for csv.reader, none longer than max_line_bytes (a longer one is refused after reading
    max_line_bytes of it); `record_bytes` adds up the lines since `next_record`, so that one CSV record (a quoted
    field may span lines) is bounded too."""

    def __init__(self, f: io.BufferedIOBase, name: str, limits: SourceLimits):
        self.f, self.name, self.limits = f, name, limits
        self.line_no = 0  # lines read so far
        self.offset = 0  # bytes read so far
        self.record_start, self.record_bytes = 1, 0
        self.record_lines: list[str] = []  # the lines since `next_record` (at most max_line_bytes): where a quote opened

    def next_record(self) -> None:
        self.record_start, self.record_bytes, self.record_lines = self.line_no + 1, 0, []

    def __iter__(self):
        return self

    def __next__(self) -> str:
        limit = self.limits.max_line_bytes
        data = self.f.readline(limit + 2)  # room for "\r\n"
        if not data:
            raise StopIteration
        self.line_no += 1
        size = len(data.rstrip(b"\r\n"))
        if size > limit:
            cr = b"\r" in data.rstrip(b"\r\n")  # a file of bare carriage returns is one line here: say why
            raise self.limits.exceeded(self.name, "max_line_bytes",
                                       f"line {self.line_no} is longer" + (f" ({_BARE_CR})" if cr else ""))
        self.record_bytes += size
        if self.record_bytes > limit:
            raise self.limits.exceeded(
                self.name, "max_line_bytes",
                f"lines {self.record_start}-{self.line_no} (one CSV record: a quoted field spans them) are longer")
        if self.offset + len(data) > self.limits.max_file_bytes:  # a file that grows while it is read
            raise self.limits.exceeded(self.name, "max_file_bytes", "the file is larger")
        if _NUL in data:
            raise SourceFormatError(f"{self.name}: line {self.line_no}: not UTF-8 text (byte "
                                    f"{self.offset + data.index(_NUL)} is a NUL; {_UTF16_OR_32})")
        try:
            # spreadsheets often write a byte-order mark
            text = data.decode("utf-8-sig" if self.line_no == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise SourceFormatError(f"{self.name}: not UTF-8 text (byte {self.offset + exc.start}: {exc.reason}) "
                                    f"on line {self.line_no}") from None
        self.offset += len(data)
        self.record_lines.append(text)
        return text

    def quote_opened_on(self) -> int:
        """The line, of the record read so far, on which its last quoted field opened: the field a strict csv.reader
        found never closed (the file ended inside it) or closed mid-field. As csv.reader reads: a field is quoted
        when its first character is a quote, and "" inside it is a quote of its text."""
        opened, state = self.record_start, "start"
        for line_no, text in enumerate(self.record_lines, start=self.record_start):
            for char in text:
                if state == "quoted":
                    state = "quote" if char == '"' else "quoted"
                elif state == "quote" and char == '"':
                    state = "quoted"
                elif state == "start" and char == '"':
                    opened, state = line_no, "quoted"
                else:
                    state = "start" if char in ",\r\n" else "unquoted"
        return opened


def load_csv(path: Path, label: str | None = None, skip_lines: int = 0,
             limits: SourceLimits = DEFAULT_LIMITS) -> list[dict[str, str | None]]:
    """Rows as dicts keyed by header name (columns vary between versions: read by name); a row with more or fewer
    fields than the header is refused, and so is a quoted field never closed or closed mid-field (naming the line it
    opened on). Read line by line: a line or record longer than max_line_bytes is refused, not read whole."""
    return [record for _, record in load_csv_numbered(path, label, skip_lines, limits)]


def load_csv_numbered(path: Path, label: str | None = None, skip_lines: int = 0,
                      limits: SourceLimits = DEFAULT_LIMITS) -> list[tuple[int, dict[str, str | None]]]:
    """(line, row) for each row `load_csv` reads: the file line its record starts on, what an error should name (a
    quoted field may span lines, and blank lines are skipped, so the row's count is not its line)."""
    name = str(label or path)
    if csv.field_size_limit() < limits.max_line_bytes:
        # the csv module's own bound (131,072 characters) would refuse fields that max_line_bytes allows;
        # _BoundedLines bounds every record at max_line_bytes instead
        csv.field_size_limit(limits.max_line_bytes)
    rows: list[tuple[int, dict[str, str | None]]] = []
    try:
        with path.open("rb") as f:
            size = path.stat().st_size
            if size > limits.max_file_bytes:
                raise limits.exceeded(name, "max_file_bytes", f"the file ({size:,} bytes) is larger")
            lines = _BoundedLines(f, name, limits)
            for _ in range(skip_lines):
                next(lines, None)
            lines.next_record()
            # strict: a quote never closed is an error, not every line after it read as that field's text (and a
            # quote closed mid-field, `"x"y`, is not read as xy)
            reader = csv.reader(lines, strict=True)
            header = next(reader, None)
            if not header:
                raise SourceFormatError(f"{name}: empty CSV, expected a header line")
            _check_header(header, f"{name}: line {lines.record_start} (header)")
            lines.next_record()
            for row in reader:
                first_line = lines.record_start  # set before the reader took this record's lines
                lines.next_record()
                if not row:
                    continue
                # fewer fields, as more: the cells there may have moved left, and the missing ones read as left out
                if len(row) != len(header):
                    raise SourceFormatError(f"{name}: line {lines.line_no}: {len(row)} fields, "
                                            f"expected {len(header)} (the header's)")
                record: dict[str, str | None] = dict.fromkeys(header)
                # unnamed columns may repeat (_check_header): a filled cell under one is kept, not overwritten by an
                # empty one further right, so that a reader sees the value it does not know what to do with
                record.update((name, value) for name, value in zip(header, row, strict=False)
                              if name or value or record[name] is None)
                rows.append((first_line, record))
    except csv.Error as exc:
        if str(exc) == "unexpected end of data":  # a strict reader's words for a file that ends inside a quoted field
            raise SourceFormatError(
                f"{name}: line {lines.quote_opened_on()}: a quoted field opens here and is never closed (the file ends "
                f"inside it, on line {lines.line_no}); expected a closing quote (a quote inside the field is written "
                f'"")') from None
        if str(exc).endswith("expected after '\"'"):  # `"x"y`: text after a closing quote
            raise SourceFormatError(
                f"{name}: line {lines.quote_opened_on()}: a quoted field opens here and is closed mid-field (text "
                f"follows its closing quote on line {lines.line_no}); expected a comma or the line's end after the "
                f'closing quote (a quote inside the field is written "")') from None
        if "new-line character seen in unquoted field" in str(exc):  # a carriage return inside an unquoted line
            raise SourceFormatError(f"{name}: line {lines.line_no}: {_BARE_CR}") from None
        raise SourceFormatError(f"{name}: line {lines.line_no}: not valid CSV ({exc})") from None
    except OSError as exc:
        raise SourceFormatError(f"{name}: cannot be read ({exc.strerror})") from None
    return rows


def _check_header(header: list[str], where: str) -> None:
    """SourceFormatError for a column named twice: its rows would keep the last one's value and drop the first's.
    Unnamed columns (a spreadsheet's trailing commas) may repeat: no reader asks for one by name."""
    seen: dict[str, int] = {}
    for number, column in enumerate(header, start=1):
        if column in seen and column:
            raise SourceFormatError(f"{where}: column {excerpt(column)} appears twice (columns {seen[column]} and "
                                    f"{number}); expected each column once")
        seen.setdefault(column, number)


def require(obj: Any, key: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """obj[key], or a SourceFormatError saying where the key was expected and what type."""
    if not isinstance(obj, dict):
        raise SourceFormatError(f"{where}: expected an object with key {key!r}, got {type(obj).__name__}")
    if key not in obj:
        raise SourceFormatError(f"{where}: missing key {key!r}")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SourceFormatError(f"{where}.{key}: expected {names}, got {type(value).__name__} {excerpt(value)}")
    return value


def check_number_option(options: dict, name: str, most: float, what: str, why: str) -> None:
    """SourceFormatError unless live option `name`, when given, is a number above 0 and at most `most` (`why` says
    where that bound comes from): run by `hweval check`, so that a typo fails there, not mid-fetch."""
    if name not in options:
        return
    value = options[name]
    # bool is an int to Python; NaN fails both comparisons; YAML reads `1e12` (no dot) as text
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
        raise SourceFormatError(f"{what}: live option {name}: expected a number above 0 and at most {most:,} "
                                f"({why}), got {excerpt(value)}")


def to_float(text: Any) -> float | None:
    """A finite number from a JSON number or numeric string; None when it is not one, is too large for a float or
    is not finite (validation quarantines its row, saying the value is not a number)."""
    if text is None or isinstance(text, bool) or not isinstance(text, (int, float, str)):
        return None
    # Python reads "1_000" as 1000 and "１０００" (full-width digits) too; no price file writes a number so
    if isinstance(text, str) and ("_" in text or not text.isascii()):
        return None
    try:
        value = float(text) if isinstance(text, (int, float)) else float(text.strip())
    except (ValueError, OverflowError):  # OverflowError: an integer of hundreds of digits
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
