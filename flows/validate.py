"""Great Expectations at the door: each landed table has a suite (catalogs/expectations/<table>.json);
rows that fail a row-level expectation are split off for ops.quarantine, with the expectation's name."""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import sys
import threading
import warnings
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

log = logging.getLogger(__name__)

# every failing row's id (row_no), which quarantine needs
COMPLETE = {"result_format": "COMPLETE", "unexpected_index_column_names": ["row_no"]}
REGEX_GROUPS_WARNING = "This pattern is interpreted as a regular expression, and has match groups"
CHECK_PREFIX = "check_"  # derived columns (flows/checks.py); a batch without them is not checked by them

@dataclass(frozen=True)
class Failure:
    row_no: int
    expectation: str  # the expectation's meta.name in the suite file
    expectation_type: str
    column: str | None
    value: Any
    reason: str | None  # the expectation's meta.why


@dataclass
class ValidationOutcome:
    passed: list[dict] = field(default_factory=list)  # validate_rows only: the rows themselves
    failed: list[dict] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    failed_row_nos: set[int] = field(default_factory=set)  # rows that failed at least one expectation
    result: Any = None  # the GX ExpectationSuiteValidationResult, rendered into the run's Data Docs
    suite: Any = None  # the GX ExpectationSuite it was validated against


class SuiteError(ValueError):
    """An expectation suite file is missing or malformed."""


class BatchDataError(ValueError):
    """An expectation could not be evaluated on a batch's data (e.g. a text value where a number belongs): the
    batch cannot be trusted, its source is stale for the run; the suite itself is fine."""


def load_suite_json(path: Path) -> dict:
    if not path.is_file():
        raise SuiteError(f"{path}: no expectation suite for this table (expected a GX suite JSON file)")
    try:
        suite = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(suite.get("expectations"), list):
        raise SuiteError(f"{path}: key 'expectations' must be a list of {{type, kwargs}} objects")
    return suite


# Modules that Great Expectations imports with itself but uses only in expectations and metrics no suite here declares
# (scipy.stats: the KL divergence and Kolmogorov-Smirnov ones): made lazy before GX is imported (importlib's
# LazyLoader), so that they load at their first use, if any, rather than with GX. scipy.stats was ~1 s of GX's 2.6-3 s
# import on a 2-core machine (-X importtime), and a run waits for that import at its start (cold runs on the snapshot,
# 5 each alternated: median 11.09 s before, 10.55 s after). A suite that uses one gets the whole module at its first
# use (an attribute read, or an `import scipy.stats`).
# Python 3.11's LazyLoader is not safe at that first use from two threads at once (the second can see a module half
# loaded): here it can only come in a validation, and validations run one at a time in a process (_ONE_AT_A_TIME);
# nothing else in hweval uses scipy.
DEFERRED_IMPORTS = ("scipy.stats",)
_IMPORTING_GX = threading.Lock()  # the deferral made once, by the first of two threads that import GX at once


def _defer_import(name: str) -> None:
    """`name` registered as a module that loads at its first use; left as it is when imported already or
    not installed (GX then imports it, or says it is missing, as it would have)."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)  # imports its parent package (scipy itself: a few ms)
    except ImportError:
        return
    if spec is None or spec.loader is None:
        return
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)  # LazyLoader's: it only arms the first use
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def import_gx():
    """`great_expectations`, imported with DEFERRED_IMPORTS made lazy first: every import of GX in hweval goes through
    this (the validations, the Data Docs, Great Expectations' process)."""
    with _IMPORTING_GX:
        if "great_expectations" not in sys.modules:
            for name in DEFERRED_IMPORTS:
                _defer_import(name)
        import great_expectations

    return great_expectations


# One validation at a time in a process: the GX context, its data source and each suite's asset are made once and
# shared (the caches below), and _forget_batches clears the engine's caches that every batch shares.
_ONE_AT_A_TIME = threading.Lock()


@lru_cache(maxsize=1)
def _context():
    gx = import_gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


@lru_cache(maxsize=1)
def _landed_source():
    return _context().data_sources.add_or_update_pandas(name="landed")


@lru_cache(maxsize=None)
def _whole_frame(suite_name: str):
    """The batch definition that a suite's batches are validated through: a dataframe asset of the pandas data source
    "landed", one a suite, made once a process; each batch comes as a batch parameter (and is let go of after its
    validation: _forget_batches).
    Made and removed for each batch, the data source and its asset had GX save its project configuration three times
    a batch (~0.3 s of a cold run's 11 validations here, measured)."""
    return _landed_source().add_dataframe_asset(suite_name).add_batch_definition_whole_dataframe("whole")


def _forget_batches() -> None:
    """Let go of what GX keeps of the batches validated so far: the data source's execution engine, which lives as
    long as the (cached) data source, keeps each batch's frame and every metric it computed, per-row ones included.
    GX has no public call for this; these are its engine's batch and metric caches (GX 1.x)."""
    engine = _landed_source().get_execution_engine()
    engine.batch_manager.reset_batch_cache()
    engine.batch_manager._batch_data_cache.clear()
    engine._metric_cache.clear()


def _suite(suite_json: dict):
    from great_expectations.core.expectation_suite import ExpectationSuite
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    expectations = []
    for i, exp in enumerate(suite_json["expectations"]):
        try:
            expectations.append(ExpectationConfiguration(**exp).to_domain_obj())
        except Exception as exc:  # GX raises several types for a bad config
            raise SuiteError(f"suite {suite_json.get('name')!r}: expectations[{i}] ({exp.get('type')}): {exc}") from None
    return ExpectationSuite(name=suite_json["name"], expectations=expectations)


def _missing_as_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None  # pandas' stand-in for a missing value
    return value


def _pair(kwargs: dict) -> tuple[str, str] | None:
    """A column-pair expectation's (row's own column, column it is compared with): a derived check_ column is the
    one compared with."""
    a, b = kwargs.get("column_A"), kwargs.get("column_B")
    if not (a and b):
        return None
    return (b, a) if a.startswith(CHECK_PREFIX) and not b.startswith(CHECK_PREFIX) else (a, b)


def _derived_columns(suite_json: dict) -> set[str]:
    """Derived `check_*` columns the suite reads (see flows/checks.py)."""
    return {value for exp in suite_json["expectations"] for key, value in (exp.get("kwargs") or {}).items()
            if key in ("column", "column_A", "column_B") and isinstance(value, str) and value.startswith(CHECK_PREFIX)}


def _raised(exception_info: dict | None) -> str | None:
    """The message of an error Great Expectations caught while evaluating an expectation, else None: at the top of
    its `exception_info`, or under the id of each metric that raised (GX 1.x nests it so, e.g. when a value of the
    wrong type meets a bound)."""
    if not exception_info:
        return None
    found = [exception_info, *(v for v in exception_info.values() if isinstance(v, dict))]
    messages = [str(info.get("exception_message") or "an error") for info in found if info.get("raised_exception")]
    return "; ".join(dict.fromkeys(messages)) or None  # a message that several metrics raised, once


def _raise_if_not_evaluated(suite_name: str, results: list) -> None:
    for res in results:
        if message := _raised(res.exception_info):
            config = res.expectation_config
            raise BatchDataError(f"suite {suite_name!r}: {(config.meta or {}).get('name') or config.type} could not "
                                 f"be evaluated on this batch: {message}")


def _config_key(res) -> str:
    return json.dumps(res.expectation_config.to_json_dict(), sort_keys=True, default=str)


def validate_rows(rows: list[dict], suite_json: dict, parameters: dict[str, Any] | None = None, *,
                  counts: bool = True) -> ValidationOutcome:
    """Split `rows` (each with a unique `row_no`) into rows that pass every expectation and rows that fail one."""
    if not rows:
        return ValidationOutcome()
    outcome = validate_frame(pd.DataFrame(rows), suite_json, parameters, counts=counts)
    for row in rows:
        (outcome.failed if row["row_no"] in outcome.failed_row_nos else outcome.passed).append(row)
    return outcome


def validate_frame(frame: pd.DataFrame, suite_json: dict, parameters: dict[str, Any] | None = None, *,
                   counts: bool = True) -> ValidationOutcome:
    """Validate a batch (a pandas frame, as Great Expectations takes it, with a unique `row_no` column): which rows
    fail which expectation (`failures`, `failed_row_nos`). Without `counts`, GX's result (`outcome.result`) carries
    the passing expectations' outcomes alone, not their counts: for a caller that shows no Data Docs."""
    if frame.empty:
        return ValidationOutcome()
    for column in _derived_columns(suite_json):
        if column not in frame.columns:
            frame[column] = None  # not derived for this batch (e.g. rows landed without add_check_columns): no check
    named = {value for exp in suite_json["expectations"] for key, value in (exp.get("kwargs") or {}).items()
             if key in ("column", "column_A", "column_B") and isinstance(value, str)}
    missing = sorted(named - set(frame.columns))
    if missing:  # the suite names a column its table's rows do not have: a typo in the suite, not bad data
        raise SuiteError(f"suite {suite_json['name']!r}: column(s) {', '.join(missing)} are not in the rows of this "
                         f"table (expected some of: {', '.join(sorted(c for c in frame.columns if c != 'row_no'))})")
    name = suite_json["name"]
    with _ONE_AT_A_TIME:
        try:
            return _validate_batch(_whole_frame(name).get_batch(batch_parameters={"dataframe": frame}), suite_json,
                                   parameters, counts)
        finally:
            _forget_batches()


def _validate_batch(batch, suite_json: dict, parameters: dict[str, Any] | None, counts: bool) -> ValidationOutcome:
    """The suite's outcome on one GX batch: its result and each failing row's failures."""
    name = suite_json["name"]
    outcome = ValidationOutcome(suite=_suite(suite_json))

    def validated(suite, result_format: dict):
        with warnings.catch_warnings():  # under _ONE_AT_A_TIME: no other validation's filters to disturb
            # GX matches a regex with pandas' str.contains, which warns of every capturing group, though the
            # match is the same: noise in every run's log for a suite written `(\.0+)?`, not a finding
            warnings.filterwarnings("ignore", message=REGEX_GROUPS_WARNING, category=UserWarning)
            result = batch.validate(suite, expectation_parameters=parameters or {}, result_format=result_format)
        _raise_if_not_evaluated(name, result.results)
        return result

    # BASIC first: every expectation's outcome and counts, for ~0.6x COMPLETE's cost (GX's cost is per
    # expectation, not per row: 11 batches took 3.3-3.9 s of CPU against 4.9-6.2 s, measured). Only the
    # expectations that failed are validated again, COMPLETE: the ids of their failing rows, which quarantine
    # needs; the run's Data Docs show those results in place of their BASIC ones.
    # Without `counts` (a validation whose result nobody shows: GX's process drops what it does not keep for the Data
    # Docs) the first pass is BOOLEAN_ONLY: each expectation's outcome without its counts, for ~0.7x BASIC's cost
    # (measured on three of the snapshot's batches); which rows fail, and why, come from the second pass all the same.
    result = validated(outcome.suite, {"result_format": "BASIC" if counts else "BOOLEAN_ONLY"})
    failed = [res for res in result.results if not res.success]
    if failed:
        from great_expectations.core.expectation_suite import ExpectationSuite

        # their configurations as validated (parameters in place), which the second pass gives back unchanged
        again = validated(ExpectationSuite(name=name, expectations=[res.expectation_config.to_domain_obj()
                                                                    for res in failed]), COMPLETE)
        complete: dict[str, list] = {}
        for res in again.results:  # in an order of GX's own: matched by configuration
            complete.setdefault(_config_key(res), []).append(res)
        if (Counter({key: len(found) for key, found in complete.items()}) == Counter(map(_config_key, failed))
                and not any(res.success for res in again.results)):
            result.results = [res if res.success else complete[_config_key(res)].pop(0)
                              for res in result.results]
        else:  # a configuration GX gave back changed (or an outcome did): the whole suite, COMPLETE, as before
            log.warning("suite %r: the second pass did not match the first; validating the whole suite with "
                        "COMPLETE results", name)
            result = validated(outcome.suite, COMPLETE)
    outcome.result = result
    failed_rows: set[int] = set()
    for res in result.results:
        config = res.expectation_config
        if res.success:
            continue
        column = config.kwargs.get("column")
        pair = None if column else _pair(config.kwargs)
        if pair:
            column = pair[0]
        meta = config.meta or {}
        expectation_name = meta.get("name") or f"{config.type}({column})"
        unexpected = res.result.get("unexpected_index_list")
        if unexpected is None:
            if res.result.get("partial_unexpected_list") is None and res.result.get("unexpected_count") is None:
                raise BatchDataError(f"suite {name!r}: {expectation_name} ({config.type}) could not be evaluated on "
                                     f"this batch (no result for its rows: a value of the wrong type?)")
            raise SuiteError(f"suite {name!r}: {expectation_name} ({config.type}) is not a row-level expectation "
                             f"(no failing row ids)")
        for hit in unexpected:
            row_no = int(hit["row_no"])
            failed_rows.add(row_no)
            value = _missing_as_none(hit.get(column)) if column else None
            if pair:  # the row's own value, then the value it was compared with
                value = f"{value} ({pair[1]}: {_missing_as_none(hit.get(pair[1]))})"
            outcome.failures.append(Failure(row_no, expectation_name, config.type, column, value, meta.get("why")))
    outcome.failed_row_nos = failed_rows
    return outcome
