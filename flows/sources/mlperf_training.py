"""MLPerf Training result-summarizer output (summary or detailed, JSON or CSV) -> rows of raw.mlperf_training.

The summarizer writes one row per system with benchmarks side by side; we land one row per system x benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.names import normalise_alias
from flows.safe_yaml import cut, quoted
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
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


def _detailed_keys(record: Any) -> list[str]:
    """The `<benchmark>:time_to_train` keys of one detailed record (none when it is not an object)."""
    return [k for k in record if k.endswith(":time_to_train")] if isinstance(record, dict) else []


def detailed_rows(records: list[dict], where: str, lines: list[int] | None = None) -> list[dict]:
    """Rows from the detailed output: `<benchmark>:time_to_train`, `:Energy`, `:GBS`, `:samples_to_converge`.

    A record is named as the user finds it in the file: `row N` of a CSV, N the line it starts on (`lines`, one per
    record; the header is line 1), or `[i]` of a JSON list (no `lines`).
    """
    if not records:
        return []
    # over all records: a detailed JSON lists only the benchmarks each system submitted, not the first one's alone
    benchmarks = sorted({k.split(":", 1)[0] for record in records for k in _detailed_keys(record)})
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
                "energy": to_float(record.get(f"{bench}:Energy")),
                "global_batch_size": to_float(record.get(f"{bench}:GBS")),
                "samples_to_converge": to_float(record.get(f"{bench}:samples_to_converge")),
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
                "energy": None,
                "global_batch_size": None,
                "samples_to_converge": None,
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
        if isinstance(records, list) and any(_detailed_keys(record) for record in records):
            return detailed_rows(records, label)  # the detailed output, written as JSON
        return summary_rows(records, label)
    raise SourceFormatError(f"{label}: unknown file type {path.suffix!r}; expected .csv (detailed) or .json (summary)")
