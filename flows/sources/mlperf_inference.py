"""MLPerf Inference `summary_results.json` (one object per result) -> rows of raw.mlperf_inference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.names import normalise_alias, precision_name
from flows.sources._common import (
    DEFAULT_LIMITS,
    SourceFormatError,
    SourceLimits,
    load_json,
    require,
    to_bool,
    to_float,
)

TABLE = "mlperf_inference"

_REQUIRED = ("ID", "Model", "Scenario", "Accelerator", "a#", "Nodes", "Performance_Result", "Performance_Units")
_TEXT = {
    "result_id": "ID",
    "version": "version",
    "submitter": "Submitter",
    "availability": "Availability",
    "division": "Category",
    "suite": "Suite",
    "system": "System",
    "model": "Model",
    "scenario": "Scenario",
    "accelerator": "Accelerator",
    "weight_data_types": "weight_data_types",
    "performance_units": "Performance_Units",
    "details_url": "Details",
}


def result_rows(results: Any, where: str) -> list[dict]:
    if not isinstance(results, list):
        raise SourceFormatError(f"{where}: expected a JSON list of result objects, got {type(results).__name__}")
    rows = []
    for i, result in enumerate(results):
        row_where = f"{where}: [{i}]"
        for key in _REQUIRED:
            require(result, key, row_where)
        row = {col: (None if result.get(key) is None else str(result.get(key))) for col, key in _TEXT.items()}
        row["accelerator_key"] = normalise_alias(row["accelerator"] or "")
        row["precision"] = precision_name(row["weight_data_types"])  # `float8` is fp8; weight_data_types as written
        row["accelerators_per_node"] = to_float(result.get("a#"))
        row["nodes"] = to_float(result.get("Nodes"))
        # bounded as a whole by the suite: each may be within its bound and their product past an integer's range
        per_node, nodes = row["accelerators_per_node"], row["nodes"]
        row["accelerators_total"] = None if per_node is None or nodes is None else per_node * nodes
        performance = result.get("Performance_Result")
        # as published, so that a result that is not a number ("12,345.6") is quarantined with its text
        row["performance_result_text"] = None if performance is None else str(performance)
        row["performance_result"] = to_float(performance)
        row["has_power"] = to_bool(result.get("has_power"))
        power = result.get("Power_Result")  # where the submitter measured power
        # as published, so that one given but not a number ("6,152.98") is quarantined with its text; empty is none
        row["power_result_text"] = None if power is None or not str(power).strip() else str(power)
        row["power_result"] = to_float(power)
        row["power_units"] = None if result.get("Power_Units") is None else str(result.get("Power_Units"))
        row["source_ref"] = f"{row_where} ({result.get('ID')}, {result.get('Model')}, {result.get('Scenario')})"
        rows.append(row)
    return rows


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    return result_rows(load_json(path, label, limits), label)
