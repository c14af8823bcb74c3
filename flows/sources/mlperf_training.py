"""MLPerf Training result-summarizer output (summary or detailed, JSON or CSV) -> rows of raw.mlperf_training.

The summarizer writes one row per system with benchmarks side by side; we land one row per system x benchmark.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flows.names import normalise_alias
from flows.safe_yaml import cut, quoted
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    blank,
    excerpt,
    load_csv_numbered,
    load_json,
    require,
    to_float,
)

TABLE = "mlperf_training"

_SYSTEM_KEYS = (
    "division", "availability", "submitter", "system", "number_of_nodes", "host_processor_model_name",
    "host_processors_count", "accelerator_model_name", "accelerators_count", "framework", "notes",
    "private_id", "details_url", "code_url",
)


def _system(record: dict, where: str) -> dict:
    for key in ("submitter", "system", "accelerator_model_name", "accelerators_count", "number_of_nodes"):
        require(record, key, where)
    accelerator = str(record.get("accelerator_model_name") or "")
    return {
        "division": record.get("division"),
        "availability": record.get("availability"),
        "submitter": record.get("submitter"),
        "system": record.get("system"),
        "accelerator": accelerator,
        "accelerator_key": normalise_alias(accelerator),
        "accelerators_count": to_float(record.get("accelerators_count")),
        "number_of_nodes": to_float(record.get("number_of_nodes")),
        "framework": record.get("framework"),
        "details_url": record.get("details_url"),
    }


# the figures the summarizer's detailed output gives per benchmark, as `<benchmark>:<figure>` columns; RCP (the
# reference convergence check, "Pass") and rcp_scaling_factor are read by no model
FIGURES = ("time_to_train", "Energy", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor")
# figure -> the raw column it lands in as a number, beside `<column>_text` as written: a cell given but not a number
# (a thousands separator, "Infinity") is quarantined with its text; an empty one was not reported (NULL)
NUMBER_FIGURES = {"Energy": "energy", "GBS": "global_batch_size", "samples_to_converge": "samples_to_converge"}
# a benchmark as the summarizer names it (gpt3, llama2_70b_lora, llama31_405b): `GPT3` or ` gpt3` would land as a
# benchmark no task in models.yaml is, its results unused without a word
BENCHMARK_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")



def _figure_keys(record: Any) -> list[str]:
    """The `<benchmark>:<figure>` keys of one detailed record, spelt right or not (none when it is not an object)."""
    return [k for k in record if ":" in k] if isinstance(record, dict) else []


def _known_column(column: str) -> bool:
    """A system column, or `<benchmark>:<figure>` with a figure the summarizer writes, named and spelt as it does."""
    if column in _SYSTEM_KEYS:
        return True
    bench, _, figure = column.partition(":")
    return figure in FIGURES and BENCHMARK_NAME.fullmatch(bench) is not None


def _meant(column: str) -> str:
    """' (the summarizer's 'gpt3:time_to_train'?)' where `column` is a known one but for spacing or case, else ''."""
    bench, colon, figure = column.partition(":")
    if colon:
        folded = figure.strip().casefold()
        spelt = next((f for f in FIGURES if f.casefold() == folded), None)
        named = bench.strip().lower()
        guess = f"{named}:{spelt}" if spelt and BENCHMARK_NAME.fullmatch(named) else None
    else:
        guess = next((k for k in _SYSTEM_KEYS if k == column.strip().casefold()), None)
    return f" (the summarizer's {guess!r}?)" if guess else ""


def _check_columns(records: list, where: str, what: str) -> None:
    """SourceFormatError naming each column (`what`: column or key) the summarizer does not write: a misspelt
    `gpt3:time_to_train ` would drop every gpt3 result unread, a misspelt `gpt3:GBS` its figure. A nameless column
    left empty is a trailing comma."""
    columns = dict.fromkeys(k for record in records if isinstance(record, dict) for k in record)
    unknown = [c for c in columns if not _known_column(c)
               and (c.strip() or any(isinstance(r, dict) and not blank(r.get(c)) for r in records))]
    if unknown:
        raise SourceFormatError(
            f"{where}: unknown {what}(s) {', '.join(excerpt(c) + _meant(c) for c in unknown[:10])}"
            f"{f' and {len(unknown) - 10:,} more' if len(unknown) > 10 else ''}: expected the result "
            f"summarizer's `<benchmark>:<figure>` (a benchmark in lower case, no spaces; the figure one of "
            f"{', '.join(FIGURES)}, spelt so) or one of its system {what}s ({', '.join(_SYSTEM_KEYS)})")


def _figures(record: dict, bench: str) -> dict:
    """`bench`'s extra figures of one record: each as a number (None when not one) and as written (None when empty)."""
    figures = {}
    for figure, column in NUMBER_FIGURES.items():
        value = record.get(f"{bench}:{figure}")
        figures[column] = to_float(value)
        figures[f"{column}_text"] = None if blank(value) else str(value)
    return figures


def detailed_rows(records: list[dict], where: str, lines: list[int] | None = None) -> list[dict]:
    """Rows from the detailed output: `<benchmark>:time_to_train`, `:Energy`, `:GBS`, `:samples_to_converge`.

    A column the summarizer does not write (`gpt3:time_to_train ` misspelt, `gpt3:Power`) fails the file, naming it.
    A record is named as the user finds it in the file: `row N` of a CSV, N the line it starts on (`lines`, one per
    record; the header is line 1), or `[i]` of a JSON list (no `lines`).
    """
    if not records:
        return []
    _check_columns(records, where, "column" if lines is not None else "key")
    # over all records: a detailed JSON lists only the benchmarks each system submitted, not the first one's alone
    benchmarks = sorted({k.split(":", 1)[0] for record in records for k in _figure_keys(record)
                         if k.endswith(":time_to_train")})
    if not benchmarks:
        raise SourceFormatError(f"{where}: no '<benchmark>:time_to_train' column; not a summarizer detailed output")
    rows = []
    for i, record in enumerate(records):
        row_where = f"{where}: row {lines[i]}" if lines is not None else f"{where}: [{i}]"
        system = _system(record, row_where)
        for bench in benchmarks:
            minutes_text = record.get(f"{bench}:time_to_train")
            if minutes_text in (None, ""):
                continue  # the system did not submit this benchmark
            rows.append(system | {
                "benchmark": bench,
                "time_to_train_text": minutes_text,
                "time_to_train_minutes": to_float(minutes_text),
                **_figures(record, bench),
                "source_ref": f"{row_where} ({system['system']}, {bench})",
            })
    return rows


def summary_rows(records: Any, where: str) -> list[dict]:
    """Rows from the summary JSON: benchmark names as keys, minutes as values, null where not submitted."""
    if not isinstance(records, list):
        raise SourceFormatError(f"{where}: expected a JSON list of systems, got {type(records).__name__}")
    rows = []
    for i, record in enumerate(records):
        row_where = f"{where}: [{i}]"
        system = _system(record, row_where)
        for bench, minutes in record.items():
            if bench in _SYSTEM_KEYS or minutes is None:
                continue
            if isinstance(minutes, bool) or not isinstance(minutes, int | float):
                # a benchmark's value is its minutes (a number) or null; text is a column hweval does not know, and
                # would land as a benchmark of that name
                raise SourceFormatError(
                    f"{row_where}: key {cut(bench)!r} is {type(minutes).__name__} {quoted(minutes)}: expected a "
                    f"benchmark's minutes to train (a number or null) or one of the summarizer's system keys "
                    f"({', '.join(_SYSTEM_KEYS)})")
            rows.append(system | {
                "benchmark": bench,
                "time_to_train_text": str(minutes),
                "time_to_train_minutes": to_float(minutes),
                **_figures({}, bench),
                "source_ref": f"{row_where} ({system['system']}, {bench})",
            })
    return rows


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    if path.suffix == ".csv":
        numbered = load_csv_numbered(path, label, limits=limits)
        return detailed_rows([record for _, record in numbered], label, [line for line, _ in numbered])
    if path.suffix == ".json":
        records = load_json(path, label, limits)
        # a `<benchmark>:<figure>` key, spelt right or not, is the detailed output's (no benchmark name has a colon)
        if isinstance(records, list) and any(_figure_keys(record) for record in records):
            return detailed_rows(records, label)  # the detailed output, written as JSON
        return summary_rows(records, label)
    raise SourceFormatError(f"{label}: unknown file type {path.suffix!r}; expected .csv (detailed) or .json (summary)")
