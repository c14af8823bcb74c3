"""Benchmark runs hweval did not get from MLPerf -> rows of raw.benchmark_runs, each of one `kind`: `serving` (the
user's own load test at one concurrency level of a setup, with latency percentiles and request counts), `offline`
(a throughput-only run, e.g. a batch job: no latency, no request counts) or `training` (an own run of a catalog
training `workload` on `chips` in `time_to_train_minutes`, or a published training figure: tokens/s per chip, MFU).

Two formats: vLLM's `benchmark_serving` result JSON (`--save-result`; always a serving run; what the file does not
say -- the accelerator, chips, model, precision -- comes from the source file's `metadata` in sources.yaml or from
the keys vLLM's `--metadata` adds), and a generic CSV with one run per line (columns documented in README.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flows.names import precision_name
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

TABLE = "benchmark_runs"

DEFAULT_KIND = "serving"
# generic CSV columns, in the order a file written for hweval has them
CSV_COLUMNS = (
    "kind", "accelerator", "instance_type", "chips", "model", "precision", "concurrency", "input_tokens",
    "output_tokens", "request_throughput", "output_tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
    "tpot_p99_ms", "completed", "failed", "power_w", "tokens_per_s_per_chip", "mfu", "sequence_length", "workload",
    "time_to_train_minutes", "source", "date",
)
# required in the header of a file holding a row of that kind (whether a row's values are there is the suite's
# check, catalogs/expectations/benchmark_runs.json); a row of an unknown kind needs only what every run names, so
# that it is quarantined with the accepted kinds instead of failing the file
_SETUP_COLUMNS = ("accelerator", "chips", "model", "precision", "source", "date")
KIND_CSV_COLUMNS = {
    "serving": _SETUP_COLUMNS + ("concurrency", "input_tokens", "output_tokens", "request_throughput",
                                 "output_tokens_per_s", "completed", "failed"),
    "offline": _SETUP_COLUMNS + ("input_tokens", "output_tokens"),
    "training": _SETUP_COLUMNS,
}
_SETUP_KEYS = ("accelerator", "chips", "model", "precision")
# a column _run_row reads besides CSV_COLUMNS: vLLM's offered request rate, which a CSV may give too
KNOWN_CSV_COLUMNS = CSV_COLUMNS + ("request_rate",)
# what lands as a number; a cell here that is not one keeps its row, with number_problem saying which and its text
NUMBER_COLUMNS = (
    "chips", "concurrency", "request_rate", "input_tokens", "output_tokens", "request_throughput",
    "output_tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "completed", "failed",
    "power_w", "tokens_per_s_per_chip", "mfu", "sequence_length", "time_to_train_minutes",
)
UNLIMITED = "inf"  # vLLM's request_rate when the run set no rate: no limit, not a figure
# a vLLM result's figures for its mean request shape: a total over `completed`, and the per-request list of
# --save-detailed (one entry per request sent)
VLLM_TOKEN_FIGURES = {"input_tokens": ("total_input_tokens", "input_lens"),
                      "output_tokens": ("total_output_tokens", "output_lens")}
# how many bad entries of one per-request list a row's number_problem quotes (the rest it counts)
QUOTED_LIST_ENTRIES = 3
# the per-request lists of --save-detailed, one entry a request sent: of one length, or which failed cannot be told
PER_REQUEST_LISTS = ("input_lens", "output_lens", "errors")
# the `date` vLLM's --save-result writes (its local time, %Y%m%d-%H%M%S): the day it names is the run's date
VLLM_DATE = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})-[0-9]{6}")



def _not_numbers(values: dict[str, Any], columns: tuple[str, ...]) -> list[str]:
    """`column 'text'` for each of `columns` whose value is given but not a finite number ("64 users", "1,210.5",
    "700 W"): to_float makes it None, which would land as a figure left out (a NULL concurrency is unlimited)."""
    problems = []
    for column in columns:
        value = values.get(column)
        if blank(value) or (column == "request_rate" and str(value).strip().lower() == UNLIMITED):
            continue
        if to_float(value) is None:
            problems.append(f"{column} {excerpt(value)}")
    return problems


def _kind(value: Any, default: str = DEFAULT_KIND) -> str:
    """A row's kind as written (trimmed, lower case); an empty cell is the file's default kind."""
    return (str(value or "").strip() or default).lower()


def _run_row(values: dict[str, Any], where: str, default_kind: str = DEFAULT_KIND,
             problems: tuple[str, ...] = (), reasons: tuple[str, ...] = ()) -> dict:
    """One raw row from a run's values (CSV cells or vLLM keys); `problems` adds figures the row was derived from
    that are not numbers, `reasons` other faults of them, each a phrase of its own."""
    not_numbers = [*problems, *_not_numbers(values, NUMBER_COLUMNS)]
    number_reasons = ([f"not a finite number: {', '.join(not_numbers)}"] if not_numbers else []) + list(reasons)
    chips = values.get("chips")
    row = {
        "kind": _kind(values.get("kind"), default_kind),
        "accelerator": str(values.get("accelerator") or ""),
        "instance_type": values.get("instance_type") or None,
        "chips": to_float(chips),
        # as written, so that the suite refuses a share of an accelerator (1.5 would be labelled "2 x ...")
        "chips_text": None if blank(chips) else str(chips).strip(),
        "model": values.get("model"),
        "precision": precision_name(values.get("precision")) if values.get("precision") else None,
        "concurrency": to_float(values.get("concurrency")),
        "request_rate": to_float(values.get("request_rate")),
        "input_tokens": to_float(values.get("input_tokens")),
        "output_tokens": to_float(values.get("output_tokens")),
        "request_throughput": to_float(values.get("request_throughput")),
        "output_tokens_per_s": to_float(values.get("output_tokens_per_s")),
        "ttft_p50_ms": to_float(values.get("ttft_p50_ms")),
        "ttft_p99_ms": to_float(values.get("ttft_p99_ms")),
        "tpot_p50_ms": to_float(values.get("tpot_p50_ms")),
        "tpot_p99_ms": to_float(values.get("tpot_p99_ms")),
        "completed": to_float(values.get("completed")),
        "failed": to_float(values.get("failed")),
        "power_w": to_float(values.get("power_w")),
        "tokens_per_s_per_chip": to_float(values.get("tokens_per_s_per_chip")),
        "mfu": to_float(values.get("mfu")),
        "sequence_length": to_float(values.get("sequence_length")),
        "workload": str(values.get("workload") or "").strip() or None,
        "time_to_train_minutes": to_float(values.get("time_to_train_minutes")),
        # as written, an empty cell None: the suite refuses a run without them, a date that is none, or a later one
        "run_source": None if blank(values.get("source")) else str(values["source"]),
        "run_date": None if blank(values.get("date")) else str(values["date"]),
        "source_ref": where,
        "number_problem": "; ".join(number_reasons) or None,
    }
    return row


def _vllm_date(value: Any) -> Any:
    """vLLM's `date` (20261120-101500) as the day it names (2026-11-20); anything else as written, for the suite."""
    match = VLLM_DATE.fullmatch(value) if isinstance(value, str) else None
    return "-".join(match.groups()) if match else value


def _quoted_entries(key: str, bad: list[tuple[int, Any]]) -> list[str]:
    """`key[i] 'text'` for the first QUOTED_LIST_ENTRIES of `bad` (index, entry), and how many more there are."""
    quoted = [f"{key}[{i}] {excerpt(entry)}" for i, entry in bad[:QUOTED_LIST_ENTRIES]]
    more = len(bad) - QUOTED_LIST_ENTRIES
    return quoted + [f"{more:,} more in {key}"] if more > 0 else quoted


def _token_figure_problems(result: dict) -> tuple[list[str], list[str]]:
    """The token totals and per-request list entries `result` gives that are not finite numbers (`total_input_tokens
    '1,024,000'`, `input_lens[1] 'n/a'`), and reasons for list entries below 0 tokens or a per-request list that is
    not a list."""
    totals = tuple(total for total, _ in VLLM_TOKEN_FIGURES.values())
    not_numbers, reasons = _not_numbers(result, totals), []
    for _, lens_key in VLLM_TOKEN_FIGURES.values():
        lens = result.get(lens_key)
        if blank(lens):
            continue
        if not isinstance(lens, list):
            reasons.append(f"not a list of token counts per request: {lens_key} {excerpt(lens)}")
            continue
        counts = [(i, entry, to_float(entry)) for i, entry in enumerate(lens)]
        not_numbers += _quoted_entries(lens_key, [(i, entry) for i, entry, n in counts if n is None])
        negative = _quoted_entries(lens_key, [(i, entry) for i, entry, n in counts if n is not None and n < 0])
        if negative:
            reasons.append(f"a token count below 0: {', '.join(negative)}")
    if lengths := _unequal_per_request_lists(result):
        reasons.append(f"per-request lists of different lengths ({lengths}; one entry a request sent)")
    return not_numbers, reasons


def _unequal_per_request_lists(result: dict) -> str:
    """"input_lens 100, errors 99" where the per-request lists vLLM writes (one entry a request sent) differ in length:
    which requests failed, and their tokens, cannot be told apart; "" where they agree."""
    lengths = {key: len(result[key]) for key in PER_REQUEST_LISTS if isinstance(result.get(key), list)}
    return ", ".join(f"{key} {n:,}" for key, n in lengths.items()) if len(set(lengths.values())) > 1 else ""


def _mean_per_completed_request(result: dict, total_key: str, lens_key: str) -> float | None:
    """Mean tokens per completed request: vLLM's total over `completed`, else its per-request list (written with
    --save-detailed; a failed request is one with an error, or with 0 output tokens where errors are absent); None
    where a figure it needs is given but not a number, or not a list (_token_figure_problems names it)."""
    completed, total = to_float(result.get("completed")), to_float(result.get(total_key))
    if not blank(result.get(total_key)) and total is None:
        return None
    if completed and total is not None:
        return to_float(total / completed)
    lens = result.get(lens_key)
    if not isinstance(lens, list) or _unequal_per_request_lists(result):
        return None
    counts = [to_float(n) for n in lens]
    errors, output_lens = result.get("errors"), result.get("output_lens")
    if isinstance(errors, list) and len(errors) == len(lens):
        succeeded = [not error for error in errors]
    elif isinstance(output_lens, list) and len(output_lens) == len(lens):
        # vLLM writes a failed request's output as 0 tokens; an entry that is no number cannot tell
        succeeded = [None if n is None else n != 0 for n in (to_float(n) for n in output_lens)]
    elif not (blank(output_lens) or isinstance(output_lens, list)):
        return None  # which requests failed cannot be told (_token_figure_problems names it)
    else:
        succeeded = [True] * len(lens)
    if None in counts or None in succeeded:
        return None
    ok = [n for n, good in zip(counts, succeeded) if good]
    return to_float(sum(ok) / len(ok)) if ok else None


def vllm_rows(result: Any, where: str, metadata: dict | None = None) -> list[dict]:
    """One serving row from a vLLM `benchmark_serving` result; failed = num_prompts - completed."""
    if not isinstance(result, dict):
        raise SourceFormatError(f"{where}: expected a vLLM benchmark_serving result object, got {type(result).__name__}")
    for key in ("completed", "num_prompts", "request_throughput", "output_throughput"):
        require(result, key, where)
    if _kind((metadata or {}).get("kind")) != "serving":
        raise SourceFormatError(f"{where}: metadata kind {metadata['kind']!r}: a vLLM benchmark_serving result is a "
                                f"serving run (it has latency percentiles); leave kind out or give serving")
    setup = {k: result.get(k) for k in _SETUP_KEYS} | (metadata or {})
    missing = [k for k in _SETUP_KEYS if setup.get(k) in (None, "")]
    if missing:
        raise SourceFormatError(
            f"{where}: the vLLM result does not say its {', '.join(missing)}; declare them under the file's "
            f"`metadata` in sources.yaml (or pass vLLM --metadata {missing[0]}=...)")
    # failed is derived from both counts: one that is not a number leaves it out, and the row says which
    completed, sent = to_float(result["completed"]), to_float(result["num_prompts"])
    token_problems, token_reasons = _token_figure_problems(result)
    # the request shape the run measured; `metadata` gives it only where the file has neither total nor list (a
    # figure the file gives but that is not a number is named in the row, never replaced)
    shape = {figure: _mean_per_completed_request(result, total_key, lens_key)
             if not (blank(result.get(total_key)) and blank(result.get(lens_key))) else setup.get(figure)
             for figure, (total_key, lens_key) in VLLM_TOKEN_FIGURES.items()}
    return [_run_row({
        **setup,
        "kind": "serving",
        # vLLM writes max_concurrency null and request_rate "inf" when neither limit was set
        "concurrency": result.get("max_concurrency"),
        "request_rate": result.get("request_rate"),
        "input_tokens": shape["input_tokens"],
        "output_tokens": shape["output_tokens"],
        "request_throughput": result["request_throughput"],
        "output_tokens_per_s": result["output_throughput"],
        "ttft_p50_ms": result.get("median_ttft_ms"),
        "ttft_p99_ms": result.get("p99_ttft_ms"),
        "tpot_p50_ms": result.get("median_tpot_ms"),
        "tpot_p99_ms": result.get("p99_tpot_ms"),
        "completed": result["completed"],
        "failed": sent - completed if sent is not None and completed is not None else None,
        "power_w": setup.get("power_w"),
        "source": setup.get("source") or f"vLLM benchmark_serving ({result.get('backend', 'vllm')})",
        "date": setup.get("date") or _vllm_date(result.get("date")),
    }, where, problems=(*_not_numbers(result, ("num_prompts",)), *token_problems), reasons=tuple(token_reasons))]


def csv_rows(numbered: list[tuple[int, dict]], where: str, metadata: dict | None = None) -> list[dict]:
    """One row per CSV record, named by the file line it starts on; the header must have the columns of every kind
    its rows are, and no others. `metadata` fills the cells a record leaves empty (its kind: the rows' default)."""
    default_kind = _kind((metadata or {}).get("kind"))
    records = [record for _, record in numbered]
    if records:
        header = records[0]
        kinds = {_kind(r.get("kind"), default_kind) for r in records}
        required = {c for kind in kinds for c in KIND_CSV_COLUMNS.get(kind, _SETUP_COLUMNS)}
        missing = [c for c in CSV_COLUMNS if c in required and c not in header]
        if missing:
            raise SourceFormatError(f"{where}: missing column(s) {', '.join(missing)} (see README, 'Your own runs')")
        # a misspelt column (power_watts) would be dropped unread; a nameless one left empty is a trailing comma
        unknown = [c for c in header if c not in KNOWN_CSV_COLUMNS
                   and (c.strip() or any(not blank(r.get(c)) for r in records))]
        if unknown:
            raise SourceFormatError(f"{where}: unknown column(s) {', '.join(excerpt(c) for c in unknown)} "
                                    f"(expected some of: {', '.join(KNOWN_CSV_COLUMNS)})")
    fill = {k: v for k, v in (metadata or {}).items() if k != "kind"}
    return [_run_row(record | {k: v for k, v in fill.items() if blank(record.get(k))}, f"{where}: row {line}",
                     default_kind)
            for line, record in numbered]


METADATA_KEYS = ("kind", "accelerator", "instance_type", "chips", "model", "precision", "concurrency",
                 "input_tokens", "output_tokens", "sequence_length", "source", "date")


def read_file(path: Path, label: str, region: str | None = None, metadata: dict | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """A vLLM result (.json) or a generic CSV; `metadata` (sources.yaml) fills what the file does not say."""
    unknown = sorted(set(metadata or {}) - set(METADATA_KEYS))
    if unknown:
        raise SourceFormatError(f"{label}: metadata key(s) {', '.join(unknown)} unknown "
                                f"(expected some of: {', '.join(METADATA_KEYS)})")
    if path.suffix == ".json":
        return vllm_rows(load_json(path, label, limits), label, metadata)
    if path.suffix == ".csv":
        return csv_rows(load_csv_numbered(path, label, limits=limits), label, metadata)
    raise SourceFormatError(f"{label}: unknown file type {path.suffix!r}; expected .json (vLLM) or .csv (generic)")
