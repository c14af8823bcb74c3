"""`hweval query`: an analyst's SQL on the warehouse, read-only and bounded. It reads the warehouse file (or the
DuckLake) and nothing else: DuckDB's access to other files is off and locked, so COPY ... TO, ATTACH, file readers
and INSTALL are refused. Every format prints at most --max-rows rows (and says on stderr when it cut them), and a
query stops after --timeout seconds.
flows/cli.py parses the command line and calls `cmd_query`; `hweval sources` opens the warehouse the same way."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import signal
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from flows import paths
from flows.text import visible

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

# `hweval query`'s bounds, so that an analyst's query cannot fill a terminal or a disk, nor run all night: rows printed
# in any format (--max-rows), characters per line of the table (--max-width), seconds the query may run (--timeout)
QUERY_MAX_ROWS = 40
QUERY_MAX_ROWS_LIMIT = 1_000_000
QUERY_MAX_WIDTH = 250
QUERY_MIN_WIDTH = 80  # DuckDB's table printer draws no narrower: it takes a smaller --max-width as 80, and 0 as 120
QUERY_MAX_WIDTH_LIMIT = 100_000
QUERY_TIMEOUT_S = 60.0
QUERY_TIMEOUT_S_LIMIT = 3600.0
# seconds a query has to stop once interrupted (at its --timeout, or by Ctrl-C): see _Stopper
QUERY_INTERRUPT_GRACE_S = 2.0
QUERY_INTERRUPT_RESEND_S = 0.05  # ... and how often the interrupt is sent again until it is taken
# characters of one value in CSV or JSON (its cell's text, or its JSON text): a longer one is refused, naming its row
# and column, rather than printed (a 50,000,000-character value, or a list of 3,000,000 numbers, filled a terminal)
QUERY_MAX_CELL_CHARS = 10_000
QUERY_MAX_CELL_CHARS_LIMIT = 100_000_000
# DuckLake's maintenance table functions (ducklake_flush_inlined_data, ducklake_merge_adjacent_files, ...) write under
# the lake's data folder from a SELECT, read-only attachment or not: refused by name, as the statements are by type
LAKE_WRITING_FUNCTION = re.compile(r"(?i)\bducklake_\w+\s*\(")
# the statements `hweval query` runs (DuckDB's StatementType): queries. select, with, from, values, describe, show,
# summarize and pragma are SELECT to DuckDB; COPY, ATTACH, SET, INSTALL, CREATE and the rest are refused before they
# run, in the DuckLake too, where DuckDB may write under the lake's data folder. An EXPLAIN runs when it explains one
# SELECT without ANALYZE: EXPLAIN ANALYZE runs the statement it explains (a COPY ... TO wrote its file)
QUERY_STATEMENT_TYPES = frozenset({"SELECT", "EXPLAIN"})
EXPLAIN_ANALYZE_WORDS = frozenset({"analyze", "analyse"})  # DuckDB takes both spellings, bare or in EXPLAIN's options
QUERIES_RUN = "select, with, from, describe, show, summarize, pragma, explain of one of these without analyze"


class WarehouseFileError(ValueError):
    """A --warehouse that is not a DuckDB database (exit 2, one line)."""


class WarehouseBusy(RuntimeError):
    """A warehouse another process holds open for writing (exit 1, one line: try again later)."""


def sql_error_line(exc: Exception) -> str:
    """A DuckDB error as one line: its first line, the position DuckDB marks (line, column), and its hint."""
    lines = [line for line in visible(str(exc)).splitlines() if line.strip()]
    text = lines[0]
    for i, line in enumerate(lines[1:], start=1):
        marker = re.match(r"LINE (\d+): ", line)
        if marker and i + 1 < len(lines) and "^" in lines[i + 1]:
            text += f" (line {marker.group(1)}, column {lines[i + 1].index('^') - len(marker.group(0)) + 1})"
            break
        if not marker and "^" not in line:
            text += f" {line.strip()}"
    return text


def open_warehouse_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """The warehouse file opened for reading only, with DuckDB's access to other files off and locked: read_only
    guards this one attachment, not COPY ... TO (which overwrote the warehouse itself), ATTACH (read_write), file
    readers (read_csv of a host file) or INSTALL. DuckDB still spills to its own temp folder (`<warehouse>.tmp`)."""
    import duckdb

    from flows import duckdb_settings

    # arrow_lossless_conversion: the table's rows travel through Arrow (_first_rows_drawn) as UUID, HUGEINT, BIT, JSON
    config = duckdb_settings.config(enable_external_access=False, lock_configuration=True,
                                    arrow_lossless_conversion=True)
    try:
        return duckdb.connect(str(path), read_only=True, config=config)
    except duckdb.Error as exc:
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        if "Conflicting lock" in first:
            raise WarehouseBusy(f"{path}: another process has it open for writing (a run?); try again when it has "
                                f"finished ({first})") from None
        raise WarehouseFileError(f"{path}: not a DuckDB warehouse ({first})") from None


def _not_utf8(text: str) -> str | None:
    """Where `text` (a command-line argument) holds a byte that is not UTF-8, in words; None when it is all UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = ord(text[exc.start])
        byte = f"byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"character U+{char:04X}"
        return f"{byte} at character {exc.start + 1}"
    return None


def _explain_refused(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """Why `sql`, one EXPLAIN statement, is refused ("EXPLAIN ANALYZE", which runs the statement it explains, or
    "EXPLAIN COPY" and the like: what it explains is no query); None for the EXPLAIN of one SELECT. The statement
    after the keyword and its options is read by DuckDB again, as the EXPLAIN's own would be."""
    import duckdb

    tokens = [position for position, _ in duckdb.tokenize(sql)]  # comments are no tokens; tokens[0] is EXPLAIN

    def word(i: int) -> str:
        return re.match(r'"?(\w*)', sql[tokens[i]:]).group(1).lower()

    i = 1
    if i < len(tokens) and word(i) in EXPLAIN_ANALYZE_WORDS:
        return "EXPLAIN ANALYZE"
    if i < len(tokens) and sql[tokens[i]] == "(":  # EXPLAIN (option, ...): ANALYZE among them analyzes, even false
        depth = 0
        while i < len(tokens):
            if word(i) in EXPLAIN_ANALYZE_WORDS:
                return "EXPLAIN ANALYZE"
            depth += {"(": 1, ")": -1}.get(sql[tokens[i]], 0)  # each parenthesis is a token of its own
            i += 1
            if depth == 0:
                break
    explained = con.extract_statements(sql[tokens[i]:]) if i < len(tokens) else []
    kinds = [statement.type.name for statement in explained]
    return None if kinds == ["SELECT"] else " ".join(["EXPLAIN", *kinds])


def _json_value(value: object) -> object:
    """A value as JSON can hold it: nan and infinities as null (JSON has no such number), blobs as hexadecimal text,
    decimals as numbers where a number keeps every digit (a whole one as a whole number, another when a float reads
    back as the same decimal), else as their exact text: a float would change 12345678901234567.89."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        return float(value) if Decimal(repr(float(value))) == value else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value


def _csv_cell(value: object) -> str:
    """A value as a CSV cell: NULL as nothing, an empty string as `""` (so the two differ; Python 3.11's csv has no
    QUOTE_NOTNULL), blobs as hexadecimal text (not Python's b'...'), a control character but a line break or tab as
    `{U+001B}` (flows/text.py visible: an escape sequence from a source's data reached the terminal; JSON writes them
    escaped, `\u001b`); quoted as csv's QUOTE_MINIMAL quotes."""
    if value is None:
        return ""
    text = bytes(value).hex() if isinstance(value, bytes | bytearray | memoryview) else visible(str(value))
    if text == "" or any(char in text for char in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _first_rows_drawn(con: duckdb.DuckDBPyConnection, result: duckdb.DuckDBPyRelation,
                      max_rows: int) -> tuple[duckdb.DuckDBPyRelation, bool]:
    """The first `max_rows` rows of the query `result` (run once) for DuckDB's table printer, and whether it returned
    more. show(max_rows=N) on the query itself read every row and drew up to N + 3 of them whole, without a footer
    (--max-rows 0 drew 5 rows as an empty table). The rows travel through Arrow under positional names (a query may
    name two columns alike) and are cast back where Arrow changed their type (an ENUM comes back as VARCHAR)."""
    rows = result.limit(max_rows + 1).to_arrow_table()  # one more: whether any were left
    arrived = con.from_arrow(rows.slice(0, max_rows).rename_columns([f"c{i}" for i in range(rows.num_columns)]))
    types = zip(result.columns, result.types, arrived.types, strict=True)
    columns = [(f"c{i}" if str(arrived_type) == str(query_type) else f"cast(c{i} as {query_type})")
               + ' as "' + name.replace('"', '""') + '"' for i, (name, query_type, arrived_type) in enumerate(types)]
    return arrived.project(", ".join(columns)), rows.num_rows > max_rows


class _Stopper:
    """Stops the query at its deadline (--timeout) or at Ctrl-C, with DuckDB's interrupt. From `listen()`, first in
    the command, to `end()`, SIGINT's handler only notes a Ctrl-C (`ctrl_c`, a plain attribute: a handler runs again
    inside itself at a second signal, and an Event's lock taken twice by one thread hangs it): Python's own raised
    KeyboardInterrupt wherever the main thread was, at times inside the handling of DuckDB's InterruptException for
    the same Ctrl-C (a traceback, exit -2, in 7 of 40 tries under load). Ctrl-C is seen as it arrives, through
    Python's signal wakeup file descriptor (a thread reads it), not only when the main thread next runs Python code,
    after DuckDB's call. One that comes before `start(con)` is acted on by the command once connected: it runs nothing.
    DuckDB takes an interrupt only while a query executes: one sent before it begins, or between two of its calls, is
    lost, so it is sent again every QUERY_INTERRUPT_RESEND_S until the query ends. Nor does DuckDB act on one as it
    binds and plans: 20 chained `not materialized` CTEs planned on for 17 s and 2.4 GB past a 2 s --timeout, and a
    Ctrl-C waited as long. A query that has not ended QUERY_INTERRUPT_GRACE_S after the first interrupt, or a
    connection not made that long after a Ctrl-C (a DuckLake's catalog that does not answer), is ended with the
    command's process, which says so (the connection is read-only: nothing is left half-written)."""

    def __init__(self, timeout_s: float) -> None:
        self.con: duckdb.DuckDBPyConnection | None = None  # from start(con)
        self.timeout_s = timeout_s
        self.ctrl_c = False
        self.timed_out, self.connected, self.ended = threading.Event(), threading.Event(), threading.Event()
        self.timer = threading.Timer(timeout_s, self._stop, args=(True,))
        self.timer.daemon = True
        self.wakeup: tuple[int, int] | None = None  # the wakeup pipe's ends, while set
        self.previous_wakeup_fd = -1
        self.previous_handler: signal.Handlers | Callable | None = None  # SIGINT's, while ours is set
        self.watcher: threading.Thread | None = None
        self.cleaned_up = False

    def listen(self) -> _Stopper:
        """Ctrl-C noted, and watched for, from here to end()."""
        if threading.current_thread() is not threading.main_thread():  # (set_wakeup_fd is the main thread's alone)
            return self
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (one ignored, or the caller's, stays)
            self.previous_handler = signal.signal(signal.SIGINT, self._note_ctrl_c)  # first: then nothing raises
        read_end = write_end = None
        try:
            read_end, write_end = os.pipe()
            os.set_blocking(write_end, False)
            self.previous_wakeup_fd = signal.set_wakeup_fd(write_end)
            self.wakeup = (read_end, write_end)
            self.watcher = threading.Thread(target=self._watch, args=(read_end,), name="hweval-query-ctrl-c",
                                            daemon=True)
            self.watcher.start()
        except BaseException:
            self.end()  # (the handler and wakeup fd given back, the pipe closed: nothing of it left behind)
            for fd in (read_end, write_end) if self.wakeup is None else ():
                if fd is not None:
                    os.close(fd)
            raise
        return self

    def start(self, con: duckdb.DuckDBPyConnection) -> None:
        """The query's connection, to interrupt; its deadline starts."""
        self.con = con
        self.connected.set()
        self.timer.start()

    def _note_ctrl_c(self, signum: int, frame: object) -> None:
        self.ctrl_c = True  # the watcher, woken by the same signal, interrupts the query

    def _watch(self, read_end: int) -> None:
        while data := os.read(read_end, 64):  # b"": the write end closed as the command ended
            if signal.SIGINT in data:
                self.ctrl_c = True
                self._stop(deadline=False)

    def _stop(self, deadline: bool) -> None:
        if deadline:
            self.timed_out.set()
        give_up = time.monotonic() + QUERY_INTERRUPT_GRACE_S
        while not self.connected.is_set():  # connecting: once connected, the command sees `ctrl_c` and runs nothing
            if self.ended.wait(QUERY_INTERRUPT_RESEND_S):
                return
            if time.monotonic() >= give_up:
                self._exit(deadline, f"still connecting to the warehouse {QUERY_INTERRUPT_GRACE_S:g} s later")
        con = self.con
        if self.ended.is_set():
            return
        con.interrupt()
        while not self.ended.wait(QUERY_INTERRUPT_RESEND_S):
            if time.monotonic() >= give_up:  # binding or planning: the interrupt is not seen there
                self._exit(deadline,
                           f"DuckDB, still planning it, took no interrupt within {QUERY_INTERRUPT_GRACE_S:g} s")
            con.interrupt()

    def _exit(self, deadline: bool, why: str) -> None:
        how = (f"hweval: query stopped after {self.timeout_s:g} s (--timeout)" if deadline
               else "hweval query: interrupted (Ctrl-C)")
        print(f"{how}; {why}, so the command ended", file=sys.stderr, flush=True)
        os._exit(2 if deadline else 130)

    def end(self) -> None:
        """The query ended (or failed, or never ran): no deadline, no interrupt sent, no Ctrl-C watch; SIGINT's
        handler and the wakeup fd given back. Before the connection closes; a second call does nothing."""
        self.ended.set()
        if self.cleaned_up:
            return
        self.cleaned_up = True
        self.timer.cancel()
        if self.timer.is_alive():
            self.timer.join()  # a deadline reached as the query ended: its interrupts are done before the close
        if self.wakeup is not None:
            signal.set_wakeup_fd(self.previous_wakeup_fd)
            read_end, write_end = self.wakeup
            os.close(write_end)
            if self.watcher is not None and self.watcher.is_alive():
                self.watcher.join()
            os.close(read_end)
        # last: a Ctrl-C before it is noted (Python's own would raise KeyboardInterrupt in the middle of this)
        if self.previous_handler is not None:
            signal.signal(signal.SIGINT, self.previous_handler)


def cmd_query(args: argparse.Namespace) -> int:
    stopper = _Stopper(args.timeout).listen()  # first: a Ctrl-C as the command starts is noted too
    try:
        return _query(args, stopper)
    except KeyboardInterrupt:  # Python's own handler again, as the rows are written (a write blocked on a pager)
        print("hweval query: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    finally:
        stopper.end()


def _query(args: argparse.Namespace, stopper: _Stopper) -> int:
    import duckdb

    from flows import duckdb_settings, lake
    from flows.analytics import quoted

    problem = _not_utf8(args.sql)
    if problem:
        print(f"hweval query: the SQL is not UTF-8 text ({problem}); expected UTF-8", file=sys.stderr)
        return 2
    lake_config = None if args.warehouse else lake.configured()
    if args.run and lake_config is None:
        print("hweval query: --run reads a past snapshot of the DuckLake warehouse: set HWEVAL_LAKE and "
              "HWEVAL_LAKE_DATA_PATH (the DuckDB file keeps only its latest state; its marts keep every as-of date)",
              file=sys.stderr)
        return 2
    if lake_config is not None:
        snapshot = lake.snapshot_of_run(lake_config, args.run) if args.run else None
        con = lake.connect(lake_config, read_only=True, snapshot=snapshot)
        try:
            con.execute(f"use {lake.ALIAS}")
            # file access off as for a warehouse file (open_warehouse_read_only), but for the lake's data folder,
            # which DuckLake reads through DuckDB (a COPY into it would not be refused: QUERY_STATEMENT_TYPES is)
            con.execute(f"set allowed_directories = [{quoted(lake_config.data_path)}]")
            con.execute("set arrow_lossless_conversion = true")  # as open_warehouse_read_only's, for the table
            con.execute("set enable_external_access = false")
            con.execute("set lock_configuration = true")
        except BaseException:
            con.close()
            raise
    else:
        path = args.warehouse or paths.warehouse_path()
        if not Path(path).exists():
            print(f"hweval: no warehouse at {path}; run `hweval run` first", file=sys.stderr)
            return 1
        con = open_warehouse_read_only(path)
    stopper.start(con)
    timed_out = stopper.timed_out
    try:
        if stopper.ctrl_c:  # a Ctrl-C as the command started: nothing is run
            raise KeyboardInterrupt
        statements = con.extract_statements(args.sql)
        refused = sorted({statement.type.name for statement in statements} - QUERY_STATEMENT_TYPES)
        refused += sorted({why for statement in statements if statement.type.name == "EXPLAIN"
                           and (why := _explain_refused(con, statement.query)) is not None})
        if refused:
            print(f"hweval query: {', '.join(refused)} refused: hweval query runs queries only ({QUERIES_RUN}) and "
                  "reads the warehouse only", file=sys.stderr)
            return 2
        if LAKE_WRITING_FUNCTION.search(args.sql):
            print("hweval query: DuckLake's functions (ducklake_...) refused: some write under the lake's data "
                  "folder; hweval query reads the warehouse only", file=sys.stderr)
            return 2
        if len(statements) != 1:
            held = "no statement (it is empty, or comments only)" if not statements else f"{len(statements)} statements"
            print(f"hweval query: the SQL holds {held}; expected one query", file=sys.stderr)
            return 2
        result = con.sql(args.sql)  # a query (QUERY_STATEMENT_TYPES): it has rows, if none
        repeated = sorted({name for name in result.columns if result.columns.count(name) > 1})
        if args.format == "json" and repeated:  # a JSON object keeps one value a key: the others would be lost
            print(f"hweval query: the query returns more than one column named {', '.join(map(repr, repeated))}; "
                  "a JSON object holds one value a name: give each its own name (`... as name`), or use "
                  "--format table or csv", file=sys.stderr)
            return 2
        if args.format == "table":
            drawn, cut = _first_rows_drawn(con, result, args.max_rows)
            if cut and args.max_rows == 0:  # the columns only: DuckDB writes "0 rows" under them, of a query that
                table = io.StringIO()  # had some
                with contextlib.redirect_stdout(table):
                    drawn.show(max_rows=0, max_width=args.max_width)
                sys.stdout.write(re.sub(r"\n *0 rows *\n+\Z", "\n\n", table.getvalue()))
            else:
                drawn.show(max_rows=args.max_rows, max_width=args.max_width)  # all of them: it holds no more
        else:
            columns, rows = result.columns, result.fetchmany(args.max_rows + 1)  # one more: whether any were left
            cut, rows = len(rows) > args.max_rows, rows[:args.max_rows]
    except duckdb.Error as exc:
        if timed_out.is_set():
            print(f"hweval: query stopped after {args.timeout:g} s (--timeout)", file=sys.stderr)
        elif stopper.ctrl_c:
            print("hweval query: interrupted (Ctrl-C)", file=sys.stderr)
            return 130
        elif isinstance(exc, duckdb.OutOfMemoryException):
            print(f"hweval query: {duckdb_settings.out_of_memory('the query', exc)}", file=sys.stderr)
        else:
            print(f"hweval query: {sql_error_line(exc)}"
                  + ("; hweval query reads the warehouse only: files, ATTACH, COPY and extensions are off"
                     if isinstance(exc, duckdb.PermissionException) else ""), file=sys.stderr)
        return 2
    except (KeyboardInterrupt, RuntimeError) as exc:  # Ctrl-C: DuckDB's "Query interrupted", or Python's own
        if isinstance(exc, RuntimeError) and "interrupted" not in str(exc).lower():
            raise
        # Python's KeyboardInterrupt can come between DuckDB's calls with a query still running in its threads:
        # stopped here, or closing the connection waits for it (for ever, its deadline's timer cancelled)
        con.interrupt()
        print("hweval query: interrupted (Ctrl-C)" if not timed_out.is_set()
              else f"hweval: query stopped after {args.timeout:g} s (--timeout)", file=sys.stderr)
        return 130 if not timed_out.is_set() else 2
    finally:
        stopper.end()
        con.close()
    if stopper.ctrl_c:  # a Ctrl-C as the query ended: it ends the command, as Python's own handler did
        print("hweval query: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    if args.format == "csv":
        lines = [[_csv_cell(value) for value in line] for line in [columns, *rows]]
        texts = lines
    elif args.format == "json":
        values = [{column: _json_value(value) for column, value in zip(columns, row, strict=True)} for row in rows]
        texts = [[json.dumps(value, default=str, allow_nan=False) for value in row.values()] for row in values]
    else:  # the table: DuckDB drew it at --max-width
        texts = []
    too_long = next(((n, i, len(text)) for n, line in enumerate(texts) for i, text in enumerate(line)
                     if len(text) > args.max_cell_chars), None)
    if too_long is not None:
        n, i, length = too_long
        where = "the header" if args.format == "csv" and n == 0 else f"row {n if args.format == 'csv' else n + 1}"
        print(f"hweval query: {where}, column {visible(quoted(columns[i]))}: a value of {length:,} characters, past "
              f"--max-cell-chars ({args.max_cell_chars:,}); select part of it (left(x, 100), len(x)) or raise "
              f"--max-cell-chars (at most {QUERY_MAX_CELL_CHARS_LIMIT:,})", file=sys.stderr)
        return 2
    if args.format == "csv":
        sys.stdout.writelines(",".join(line) + "\n" for line in lines)
    elif args.format == "json":
        print(json.dumps(values, default=str, allow_nan=False, indent=1))
    if cut:
        sys.stdout.flush()  # the rows first, then the line saying they were cut, when both go to one terminal
        rows_cut = f"{args.max_rows:,} row" + ("" if args.max_rows == 1 else "s")
        print(f"hweval query: output cut at {rows_cut}; the query returned more (--max-rows N prints up "
              f"to N, at most {QUERY_MAX_ROWS_LIMIT})", file=sys.stderr)
    return 0
