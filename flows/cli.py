"""The `hweval` command: run the pipeline, check the catalogs, list the sources, query the warehouse, put the
Prefect automations on a server.

Exit status of `hweval run`: RUN_EXIT_STATUSES (the help prints them). A command whose stdout's reader closes it
early (`| head`) goes on without writing there and ends with its own status, or 141 (as a command SIGPIPE ended) where
that was 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import math
import os
import re
import signal
import sys
from pathlib import Path

from flows import paths, query_command, run_command, sources_command
from flows.run_command import EXIT_INTERRUPTED, run_exit_statuses
from flows.std_streams import ReaderGone

# Each command is a module's `cmd_*` (`run`: flows/run_command.py, `query`: flows/query_command.py, `sources`:
# flows/sources_command.py); `check` and `automations`, a few lines each, are here, with the parser and the entry point.
EXIT_READER_GONE = 128 + signal.SIGPIPE  # 141, as a shell reports `yes | head`'s yes: any command, its output unread


def _date(text: str) -> dt.date:
    try:
        return paths.iso_date(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (expected YYYY-MM-DD)") from None


def _whole_number_up_to(limit: int, least: int = 0, why: str = ""):
    """An argparse type: a whole number from `least` (0: DuckDB's table printer fails on a negative one) to `limit`;
    `why` follows the refusal."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if not least <= value <= limit:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from {least} to {limit}{why}")
        return value
    return parse


def _seconds_up_to(limit: float):
    """An argparse type: a number of seconds above 0 and at most `limit` (not nan, not inf)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= limit):
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds above 0 and at most {limit:g}")
        return value
    return parse


def cmd_check(args: argparse.Namespace) -> int:
    from flows.catalog import load_catalog
    from flows.pipeline import ALLOW_FUTURE_AS_OF_ENV, check_files_dated

    catalog = load_catalog(args.catalog or paths.catalog_dir())
    check_files_dated(catalog, lift=f"set {ALLOW_FUTURE_AS_OF_ENV}=1 if that is what you want")
    read = check_source_files(catalog)
    print(f"{catalog.root}: {len(catalog.accelerators.accelerators)} accelerators, "
          f"{len(catalog.instances.instances)} instances, {len(catalog.models.models)} models, "
          f"{len(catalog.workloads.workloads)} workloads, {len(catalog.sources.sources)} sources: OK")
    print(f"source files: {sum(read.values())} files of {len(read)} enabled sources read as a run reads them: OK "
          f"(their size, nesting, format and fields; a run checks their rows' values, and quarantines a row that fails)")
    return 0


def check_source_files(catalog) -> dict[str, int]:
    """Read every file a run (in sources.yaml's mode) reads, with the run's own readers, so that `hweval check` refuses
    what `hweval run` would (a file too large or nested too deep, not its format, an unknown field): a CatalogError
    naming sources.yaml's entry for each file refused. Returns each source read from files -> its number of files."""
    from flows.catalog_models import CatalogError
    from flows.sources import read_declared_file, read_declared_table, reads_tables
    from flows.sources._common import SourceFormatError

    read, errors = {}, []
    for source_id, source in catalog.sources.sources.items():
        if not source.enabled or source.reads_live(catalog.sources.mode):
            continue
        read[source_id] = len(source.files)
        for index in range(len(source.files)):
            try:
                reader = read_declared_table if reads_tables(source.kind) else read_declared_file
                reader(catalog.root, source, source_id, index)
            except SourceFormatError as exc:
                errors.append(f"sources.yaml: sources.{source_id}.files[{index}]: {exc}")
    if errors:
        raise CatalogError("\n".join(errors))
    return read


def cmd_automations(args: argparse.Namespace) -> int:
    from flows import automations

    for applied in automations.apply(args.file or automations.AUTOMATIONS_FILE):
        print(f"{applied.done} {applied.name} ({applied.automation_id})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from flows.runlock import DEFAULT_WAIT_S, MAX_WAIT_S

    # (no docstring under python -OO: the help is then without it)
    description = (__doc__ or "").replace("RUN_EXIT_STATUSES (the help prints them)", run_exit_statuses())
    parser = argparse.ArgumentParser(prog="hweval", description=description)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the nightly flow once: ingest, validate, build the warehouse, publish reports",
                         epilog=f"exit status: {run_exit_statuses()}")
    run.add_argument("--as-of", type=_date, default=None,
                     help="as-of date of the run (default: today, UTC); a date later than tomorrow (UTC) is refused")
    run.add_argument("--allow-future-as-of", action="store_true",
                     help="accept an --as-of later than tomorrow (UTC; also HWEVAL_ALLOW_FUTURE_AS_OF=1): "
                          "reports/latest then shows that date until it comes, and every run dated before it is a "
                          "backfill")
    run.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    run.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: warehouse/hweval.duckdb)")
    run.add_argument("--reports", type=Path, default=None, help="reports folder (default: reports/)")
    run.add_argument("--source", action="append", metavar="SOURCE_ID=PATH[@AS_OF]",
                     help="read this file instead of the source's declared files for this run; repeat to give a "
                          "source several files; @YYYY-MM-DD is the data's as-of date (default: the run's), e.g. "
                          "mlperf_inference_snapshot=../shared/samples/mlperf_inference_v4.1_summary_results.json"
                          "@2024-08-28")
    run.add_argument("--live", action="store_true",
                     help="fetch every source that has a `live:` block in sources.yaml from its API (AWS through "
                          "boto3's credential chain, Azure Retail Prices, GCP Billing Catalog with GOOGLE_API_KEY); "
                          "a source that cannot be fetched is stale and the run uses its last good data")
    run.add_argument("--accept-changes", action="append", metavar="SOURCE_ID",
                     help="land this source even if it has far fewer rows than its last good run or its prices "
                          "moved past max_price_change (a real change, reviewed); repeat for several sources")
    run.add_argument("--wait", default=None, metavar="SECONDS",
                     help=f"how long to wait when another run holds the warehouse or reports (default: "
                          f"HWEVAL_LOCK_WAIT_S or {DEFAULT_WAIT_S:g}; at most {MAX_WAIT_S:g}); past it the run exits "
                          "with status 4 and changes nothing")
    run.set_defaults(func=run_command.cmd_run)

    sources = sub.add_parser("sources", help="list the declared sources, what they read, and their last good fetch")
    sources.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    sources.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: warehouse/hweval.duckdb)")
    sources.add_argument("--live", action="store_true", help="show what a live run would fetch")
    sources.set_defaults(func=sources_command.cmd_sources)

    automations = sub.add_parser(
        "automations", help="create or update flows/automations.yaml's Prefect automations on the server "
                            "PREFECT_API_URL names, each found by its name (never a second copy)",
        epilog="exit status: 0 each created, updated or unchanged; 1 the server did not answer or refused a request "
               "(what was applied before it is said); 2 a file Prefect would not take, no PREFECT_API_URL, or the "
               "server already holding two automations of one name (nothing changed)")
    automations.add_argument("--file", type=Path, default=None,
                             help="the automations file (default: flows/automations.yaml)")
    automations.set_defaults(func=cmd_automations)

    check = sub.add_parser("check", help="validate the catalogs and their cross-references, and read the files of the "
                                         "enabled sources as a run reads them")
    check.add_argument("--catalog", type=Path, default=None, help="catalog folder (default: catalogs/)")
    check.set_defaults(func=cmd_check)

    query = sub.add_parser("query", help="run a SQL query against the warehouse, read-only",
                           epilog="the query reads the warehouse only: files outside it, ATTACH, COPY, INSTALL and "
                                  "settings are refused. A SQL error prints one line with its position and exits "
                                  "with status 2")
    query.add_argument("sql", help="the query, e.g. \"select * from marts.rankings limit 5\"")
    query.add_argument("--warehouse", type=Path, default=None,
                       help="DuckDB file (default: the DuckLake when HWEVAL_LAKE is set, else warehouse/hweval.duckdb)")
    query.add_argument("--run", default=None, metavar="RUN_ID",
                       help="read the DuckLake warehouse as this run committed it (time travel to its snapshot)")
    query.add_argument("--format", choices=["table", "csv", "json"], default="table",
                       help="table (default: aligned), CSV or JSON; in CSV and JSON a blob is written as hexadecimal "
                            "text, and in JSON a nan or infinite number as null (JSON has no such number)")
    bounds = query_command  # the query's bounds: QUERY_MAX_ROWS, QUERY_MAX_WIDTH, QUERY_TIMEOUT_S and their limits
    query.add_argument("--max-rows", type=_whole_number_up_to(bounds.QUERY_MAX_ROWS_LIMIT),
                       default=bounds.QUERY_MAX_ROWS, metavar="N",
                       help=f"rows to print, the first ones, in every format (default: {bounds.QUERY_MAX_ROWS}, at "
                            f"most {bounds.QUERY_MAX_ROWS_LIMIT}; 0 prints the columns only); each format says on "
                            "stderr when it cut them")
    query.add_argument("--max-width", type=_whole_number_up_to(
                           bounds.QUERY_MAX_WIDTH_LIMIT, bounds.QUERY_MIN_WIDTH,
                           f" (DuckDB's table is never narrower than {bounds.QUERY_MIN_WIDTH} characters)"),
                       default=bounds.QUERY_MAX_WIDTH, metavar="N",
                       help=f"characters per line of the table (default: {bounds.QUERY_MAX_WIDTH}, from "
                            f"{bounds.QUERY_MIN_WIDTH} to {bounds.QUERY_MAX_WIDTH_LIMIT})")
    query.add_argument("--max-cell-chars", type=_whole_number_up_to(bounds.QUERY_MAX_CELL_CHARS_LIMIT, 1),
                       default=bounds.QUERY_MAX_CELL_CHARS, metavar="N",
                       help=f"characters of one value in CSV or JSON (default: {bounds.QUERY_MAX_CELL_CHARS:,}, at "
                            f"most {bounds.QUERY_MAX_CELL_CHARS_LIMIT:,}); a longer one is refused with status 2, "
                            "naming its row and column")
    query.add_argument("--timeout", type=_seconds_up_to(bounds.QUERY_TIMEOUT_S_LIMIT),
                       default=bounds.QUERY_TIMEOUT_S, metavar="SECONDS",
                       help=f"stop the query after this long, with status 2 (default: {bounds.QUERY_TIMEOUT_S:g}, at "
                            f"most {bounds.QUERY_TIMEOUT_S_LIMIT:g})")
    query.set_defaults(func=query_command.cmd_query)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:
        status = _exit_status(exc)
        if status is None:  # unexpected: its traceback, exit status 1
            raise
        print(f"hweval: {exc}", file=sys.stderr)
        return status


def _exit_status(exc: Exception) -> int | None:
    """The exit status of an error main() reports in one line: 2 bad input; 1 a DuckLake down, or one that other runs
    kept committing to (nothing changed), a warehouse file another process is writing, or a Prefect server that did not
    take `hweval automations`' requests; None for any other error.
    The error classes are imported here, once an error came: their modules import DuckDB, pandas and pyarrow (1.3 s),
    and `hweval run` launches its temporary server before that (flows/run_command.py, cmd_run), so that the server's
    start (its imports, seconds) begins at once."""
    from flows.automations import AutomationsError, AutomationsUnavailable
    from flows.catalog import CatalogError
    from flows.chart_workers import ChartWorkersError
    from flows.duckdb_settings import MemoryLimitError, ThreadsError
    from flows.fanout import FanoutError
    from flows.gx_process import GxProcessSettingError
    from flows.lake import LakeConflict, LakeError, LakeUnavailable
    from flows.object_store import ObjectStoreError
    from flows.outbox import OutboxSettingError
    from flows.pipeline import AsOfError, RunSettingError
    from flows.runlock import WaitSettingError
    from flows.sources._common import SourceFormatError
    from flows.transform import ModelError
    from flows.validate import SuiteError

    if isinstance(exc, (CatalogError, SourceFormatError, SuiteError, ModelError, AsOfError, ObjectStoreError, LakeError,
                        FanoutError, ChartWorkersError, GxProcessSettingError, MemoryLimitError, ThreadsError,
                        RunSettingError, WaitSettingError, OutboxSettingError, query_command.WarehouseFileError,
                        AutomationsError)):
        return 2
    if isinstance(exc, (LakeUnavailable, LakeConflict, query_command.WarehouseBusy, AutomationsUnavailable)):
        return 1
    return None


def _ending_by_ctrl_c(line: str | None) -> None:
    """The command ends by its Ctrl-C: Python's hook for the KeyboardInterrupt raised next says `line` (None: the
    command said it itself), not a traceback; any other error as Python says it."""
    def said(kind, value, traceback) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, traceback)
        elif line is not None:
            print(line, file=sys.stderr)

    sys.excepthook = said


INTERRUPTED = "hweval: interrupted (Ctrl-C)"
MAX_CAUSES = 20  # how deep `_is_ctrl_c` reads: each error's own cause in turn, and each group's members


def _is_ctrl_c(exc: BaseException, depth: int = 0, read: dict[int, bool] | None = None) -> bool:
    """Whether `exc` is a Ctrl-C: the KeyboardInterrupt itself; an error raised from one (a library that caught it
    raised its own: pydantic, serializing Prefect's states, raises PydanticSerializationError from it, or, serializing
    them to JSON, one that says it: `_pydantic_json_ctrl_c`); or a group of errors (an anyio task group's, as async
    code gathers what its tasks raised) raised from one, or every one of whose errors is a Ctrl-C. Causes only
    (`raise ... from`), not an error's context: one raised while a Ctrl-C was handled (a publish's undo that failed, a
    full disk) is a failure of its own, with its traceback; so is a group that holds one. Read at most MAX_CAUSES deep,
    each error once (`read`: a group may hold one error twice)."""
    read = {} if read is None else read
    if depth > MAX_CAUSES:
        return False
    if id(exc) not in read:
        read[id(exc)] = False  # while it is read: an error met again inside itself is no Ctrl-C
        cause = exc.__cause__
        read[id(exc)] = (isinstance(exc, KeyboardInterrupt)
                         or _pydantic_json_ctrl_c(exc)
                         or (cause is not None and _is_ctrl_c(cause, depth + 1, read))
                         or (isinstance(exc, BaseExceptionGroup)
                             and all(_is_ctrl_c(member, depth + 1, read) for member in exc.exceptions)))
    return read[id(exc)]


# pydantic-core 2's text of an error raised inside its JSON serializer, nested as deep as the serializers were, around
# a KeyboardInterrupt's (a SIGINT's has no message); the whole text must be this, so that another error whose message
# merely ends the same way is not taken for a Ctrl-C
PYDANTIC_JSON_CTRL_C = re.compile(
    r"(?:(?:Error serializing to JSON|PydanticSerializationError|Error calling function `[^`]*`): )*"
    r"KeyboardInterrupt: ")


def _pydantic_json_ctrl_c(exc: BaseException) -> bool:
    """A Ctrl-C inside pydantic's JSON serializer (`model_dump_json`, as Prefect serializes a state): it keeps only the
    text of the error raised there, with no cause, as "Error serializing to JSON: PydanticSerializationError: Error
    calling function `...`: KeyboardInterrupt: " (PYDANTIC_JSON_CTRL_C)."""
    return (type(exc).__name__ == "PydanticSerializationError"
            and PYDANTIC_JSON_CTRL_C.fullmatch(str(exc)) is not None)


def entry() -> None:
    """The `hweval` command (pyproject's [project.scripts]): main() in a process of its own, which ends with it."""
    run_command.OWN_PROCESS = True
    from flows import gx_process

    gx_process.RELEASE_AFTER_SITE = True  # one run: GX's process stops once its Data Docs are built
    # stdout or stderr closed before the command started (`>&-`): Python leaves it None, and writes go nowhere.
    # stderr too: `hweval run 2>&1 | head` closed both, and the run's next log line failed it (exit 1, nothing
    # published)
    sys.stdout = guarded = ReaderGone(sys.stdout if sys.stdout is not None else open(os.devnull, "w"))  # noqa: SIM115
    sys.stderr = guarded_err = ReaderGone(sys.stderr if sys.stderr is not None else open(os.devnull, "w"))  # noqa: SIM115
    try:
        code = main()
    except KeyboardInterrupt:
        # Ctrl-C (a run's flow run, if it had begun, is marked Crashed and its channels told; its publish undone unless
        # latest.json names it): one line, not a traceback. Raised on, so that Python ends the process by SIGINT once
        # its exit handlers ran, as a shell expects of a command Ctrl-C ended (status 130; a script's loop stops
        # there too, where an exit status of 130 would let it go on)
        _ending_by_ctrl_c(INTERRUPTED)
        raise
    except BaseException as exc:  # SystemExit, and any error but a Ctrl-C's, goes on as raised
        if isinstance(exc, SystemExit) or not _is_ctrl_c(exc):
            raise
        _ending_by_ctrl_c(INTERRUPTED)  # its Ctrl-C, as above: the error it caused is no failure of the command
        raise KeyboardInterrupt from exc
    finally:
        gx_process.stop_now()  # nothing takes its answers any more: the exit does not wait for its current call
    guarded.flush()  # a reader gone shows here at the latest, not in the interpreter's flush at exit (status 120)
    guarded_err.flush()
    if (guarded.gone or guarded_err.gone) and code == 0:
        code = EXIT_READER_GONE  # quietly, with the status of a writer SIGPIPE ended; a failure keeps its own
    # what is left is freed with the process: without this, the interpreter's last full collection walks every
    # object the run loaded (1-3 s after a run; atexit handlers and Prefect's log flush still run). An object in a
    # reference cycle is not finalized at exit then: close what must be closed (DuckDB connections) explicitly
    gc.freeze()
    if code == EXIT_INTERRUPTED:
        # a command that said its Ctrl-C itself and returned its status (`hweval query`): ended by SIGINT all the
        # same, as above, so that a script's loop stops there too
        _ending_by_ctrl_c(None)
        raise KeyboardInterrupt
    sys.exit(code)


if __name__ == "__main__":
    entry()
