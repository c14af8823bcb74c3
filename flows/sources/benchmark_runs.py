"""Benchmark runs hweval did not get from MLPerf -> rows of raw.benchmark_runs: the user's own serving runs (one
concurrency level of a setup each), the user's own training runs (a catalog training `workload` run on `chips`
in `time_to_train_minutes`), and published training figures (tokens/s per chip, MFU).

Two formats: vLLM's `benchmark_serving` result JSON (`--save-result`; what the file does not say -- the
accelerator, chips, model, precision -- comes from the source file's `metadata` in sources.yaml or from the
keys vLLM's `--metadata` adds), and a generic CSV with one run per line (columns documented in README.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    load_csv,
    load_json,
    require,
    to_float,
)

TABLE = "benchmark_runs"

# generic CSV columns: name -> required in the header (values of serving-only columns may be empty on
# training rows, `kind` defaults to serving, and a file without the own-training-run columns still reads)
CSV_COLUMNS = {
    "kind": False,
    "accelerator": True, "instance_type": False, "chips": True, "model": True, "precision": True,
    "concurrency": True, "input_tokens": True, "output_tokens": True, "request_throughput": True,
    "output_tokens_per_s": True, "ttft_p50_ms": False, "ttft_p99_ms": False, "tpot_p50_ms": False,
    "tpot_p99_ms": False, "completed": True, "failed": True, "power_w": False,
    "tokens_per_s_per_chip": False, "mfu": False, "sequence_length": False, "workload": False,
    "time_to_train_minutes": False, "source": True, "date": True,
}
# required in the header of a file of training rows only (the serving columns need not be there at all)
TRAINING_CSV_COLUMNS = ("accelerator", "chips", "model", "precision", "source", "date")
_SETUP_KEYS = ("accelerator", "chips", "model", "precision")


def _run_row(values: dict[str, Any], where: str) -> dict:
    row = {
        "kind": (values.get("kind") or "serving").strip().lower(),
        "accelerator": str(values.get("accelerator") or ""),
        "instance_type": values.get("instance_type") or None,
        "chips": to_float(values.get("chips")),
        "model": values.get("model"),
        "precision": (str(values.get("precision")).lower() if values.get("precision") else None),
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
        "run_source": values.get("source"),
        "run_date": str(values["date"]) if values.get("date") else None,
        "source_ref": where,
    }
    return row


def vllm_rows(result: Any, where: str, metadata: dict | None = None) -> list[dict]:
    """One row from a vLLM `benchmark_serving` result; failed = num_prompts - completed."""
    if not isinstance(result, dict):
        raise SourceFormatError(f"{where}: expected a vLLM benchmark_serving result object, got {type(result).__name__}")
    for key in ("completed", "num_prompts", "request_throughput", "output_throughput", "total_input_tokens",
                "total_output_tokens"):
        require(result, key, where)
    setup = {k: result.get(k) for k in _SETUP_KEYS} | (metadata or {})
    missing = [k for k in _SETUP_KEYS if setup.get(k) in (None, "")]
    if missing:
        raise SourceFormatError(
            f"{where}: the vLLM result does not say its {', '.join(missing)}; declare them under the file's "
            f"`metadata` in sources.yaml (or pass vLLM --metadata {missing[0]}=...)")
    completed = to_float(result["completed"]) or 0.0
    input_total, output_total = to_float(result["total_input_tokens"]), to_float(result["total_output_tokens"])
    return [_run_row({
        **setup,
        # vLLM writes max_concurrency null and request_rate "inf" when neither limit was set
        "concurrency": result.get("max_concurrency"),
        "request_rate": result.get("request_rate"),
        "input_tokens": to_float(input_total / completed) if completed and input_total is not None else None,
        "output_tokens": to_float(output_total / completed) if completed and output_total is not None else None,
        "request_throughput": result["request_throughput"],
        "output_tokens_per_s": result["output_throughput"],
        "ttft_p50_ms": result.get("median_ttft_ms"),
        "ttft_p99_ms": result.get("p99_ttft_ms"),
        "tpot_p50_ms": result.get("median_tpot_ms"),
        "tpot_p99_ms": result.get("p99_tpot_ms"),
        "completed": completed,
        "failed": (to_float(result["num_prompts"]) or 0.0) - completed,
        "power_w": setup.get("power_w"),
        "source": setup.get("source") or f"vLLM benchmark_serving ({result.get('backend', 'vllm')})",
        "date": setup.get("date") or result.get("date"),
    }, where)]


def csv_rows(records: list[dict], where: str) -> list[dict]:
    if records:
        training_only = all((r.get("kind") or "").strip().lower() == "training" for r in records)
        missing = [c for c, required in CSV_COLUMNS.items()
                   if (c in TRAINING_CSV_COLUMNS if training_only else required) and c not in records[0]]
        if missing:
            raise SourceFormatError(f"{where}: missing column(s) {', '.join(missing)} (see README, 'Your own runs')")
    return [_run_row(record, f"{where}: row {i + 2}") for i, record in enumerate(records)]


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
        rows = csv_rows(load_csv(path, label, limits=limits), label)
        column = {"source": "run_source", "date": "run_date"}  # metadata keys as the row names them
        fill = {column.get(k, k): v for k, v in (metadata or {}).items()}
        return [row | {k: v for k, v in fill.items() if row.get(k) in (None, "")} for row in rows]
    raise SourceFormatError(f"{label}: unknown file type {path.suffix!r}; expected .json (vLLM) or .csv (generic)")
