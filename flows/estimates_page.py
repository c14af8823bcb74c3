"""The back-test page (estimates.md): how far the estimates land from the measurements, per family and phase, against
the goals; the calibration factors; every comparison, bounded (COMPARISONS_LISTED; all of them in
marts.estimate_backtest). Also the back-test error behind each pick that rests on an estimate, which the index
quotes (`pick_errors`)."""

from __future__ import annotations

import datetime as dt

import duckdb

from flows import backtest_chart
from flows.chart_kit import Chart
from flows.formatting import count, figures, num, percent
from flows.report_templates import MARKDOWN, NO_HEAD, benchmark_label
from flows.warehouse import fetch_dicts

COMPARISONS_LISTED = 60  # rows of the back-test page's "Every comparison" table; the rest are in the warehouse
# The back-test's goals (issue 13): leave-one-out median absolute error, over comparisons another measurement
# calibrated. (name, short name, phase, family or None for every family, goal, what the figure covers)
ESTIMATE_GOALS = [
    ("Serving throughput, GPUs", "GPU serving", "serving", "gpu", backtest_chart.SERVING_ESTIMATE_GOAL,
     "GPU results whose accelerator has another measurement at that precision and model"),
    ("Training time", "training", "training", None, backtest_chart.TRAINING_ESTIMATE_GOAL,
     "training results whose accelerator has another measurement"),
]


def render(con: duckdb.DuckDBPyConnection, as_of: dt.date,
           head: dict | None = None) -> tuple[dict[str, str | Chart], list[dict]]:
    """The back-test page: how far estimates land from measurements, per family and phase, against the goals."""
    comparisons = fetch_dicts(con, "select * from marts.estimate_backtest where as_of = ? "
                                   "order by phase, accelerator_id, precision, model_id, comparison_id", [as_of])
    summary = fetch_dicts(con, """
        select phase, family, count(*) as comparisons, count(*) filter (precision_doubtful) as doubtful,
            count(*) filter (loo_measurements > 0 and not precision_doubtful) as calibrated,
            median(loo_abs_error) filter (loo_measurements > 0 and not precision_doubtful) as calibrated_median,
            max(loo_abs_error) filter (loo_measurements > 0 and not precision_doubtful) as calibrated_worst,
            median(abs(ratio - 1)) filter (not precision_doubtful) as uncalibrated_median,
            max(abs(ratio - 1)) filter (not precision_doubtful) as uncalibrated_worst,
            median(abs_error_without_comm) filter (not precision_doubtful) as without_comm_median
        from marts.estimate_backtest where as_of = ? group by all order by phase, family""", [as_of])
    goals = []
    for name, short, phase, family, goal, scope in ESTIMATE_GOALS:
        row = con.execute(
            "select median(loo_abs_error), count(*) from marts.estimate_backtest where as_of = ? and phase = ? "
            "and (? is null or family = ?) and loo_measurements > 0 and not precision_doubtful",
            [as_of, phase, family, family]).fetchall()[0]
        goals.append({"name": name, "short": short, "goal": goal, "value": row[0], "comparisons": row[1], "scope": scope})
    # what this run holds against what it compared: results of a task no catalog entry describes, of a chip without a
    # peak at their precision, or a serving run without its request shape cannot be estimated
    held = fetch_dicts(con, """
        select 'MLPerf Inference' as kind, count(*) as held,
            count(distinct (version, submitter, system, task, scenario_normalised, precision, performance_result))
                as distinct_held
        from staging.stg_mlperf_inference__results where performance_units = 'Tokens/s' and performance_result > 0
        union all
        select 'MLPerf Training', count(*), count(*) from staging.stg_mlperf_training__results
        where time_to_train_minutes > 0
        union all
        select 'own or published', count(*), count(*) from staging.stg_benchmark_runs__results""")
    compared = dict(con.execute(
        "select case when measurement_basis in ('own run', 'published MFU') then 'own or published' "
        "else measurement_basis end, count(*) from marts.estimate_backtest where as_of = ? group by 1",
        [as_of]).fetchall())
    coverage = [h | {"compared": compared.get(h["kind"], 0)} for h in held if h["held"]]
    factors = fetch_dicts(con, "select * from marts.estimate_calibration where as_of = ? "
                               "order by phase, accelerator_id, precision_class, model_id", [as_of])
    chart = backtest_chart.backtest_chart(con, as_of)
    page = MARKDOWN.get_template("estimates.md.j2").render(
        **(head or NO_HEAD), as_of=as_of.isoformat(), comparisons=comparisons, goals=goals, chart=chart, coverage=coverage,
        units=list(dict.fromkeys(c["unit"] for c in comparisons if c["unit"])),  # each phase's, in page order
        listed=COMPARISONS_LISTED, more_comparisons=max(0, len(comparisons) - COMPARISONS_LISTED),
        summary_rows=[[r["phase"], r["family"], count(r["comparisons"]), count(r["doubtful"]), count(r["calibrated"]),
                       percent(r["calibrated_median"]), percent(r["calibrated_worst"]),
                       percent(r["uncalibrated_median"]), percent(r["uncalibrated_worst"]),
                       percent(r["without_comm_median"])] for r in summary],
        factor_rows=[[f["phase"], f["accelerator_id"], _factor_precision(f), f["model_id"], figures(f["factor"]),
                      f"{count(f['measurements'])} ({count(f['setups'])}"
                      + ("; not back-tested)" if f["loo_comparisons"] == 0 else ")"), f["measured_by"],
                      f"{figures(f['min_ratio'])} to {figures(f['max_ratio'])}",
                      "yes" if f["exceeds_peak"] else "no"] for f in factors],
        comparison_rows=[[c["phase"], c["accelerator_id"], _precision_shown(c), c["model_id"], count(c["chips"]),
                          num(c["measured"], 1), num(c["estimated"], 1), num(c["loo_estimated"], 1)
                          + ("" if c["loo_measurements"] else " (uncalibrated)"),
                          percent(c["loo_ratio"] - 1), c["unit"],
                          benchmark_label(c)] for c in comparisons[:COMPARISONS_LISTED]])
    return {"estimates.md": page} | ({chart.file_name: chart} if chart else {}), goals


def _factor_precision(factor: dict) -> str:
    """A serving factor's precision class, and the precisions its measurements declared where they are named otherwise
    (fp16 results fit the bf16 class's factor: the comparisons below say fp16); training factors are '*'."""
    measured = factor["measured_precisions"]
    if factor["phase"] == "training" or measured in (None, factor["precision_class"]):
        return factor["precision_class"]
    return f"{factor['precision_class']} ({measured} results)"


def _precision_shown(comparison: dict) -> str:
    """A comparison's precision as the page says it: an MLPerf Training result declares none, and is estimated at the
    precision models.yaml declares its submission trained at (`trained_at`, with the source that says so), else at its
    chip's fastest training precision (sql/intermediate/int_training_backtest.sql), which the page says is assumed
    (the workload pages write the declared precision of the same result, or "not declared")."""
    if comparison["measurement_basis"] != "MLPerf Training":
        return comparison["precision"]
    if comparison["precision_source"]:
        return f"{comparison['precision']} (models.yaml trained_at: {comparison['precision_source']})"
    return f"{comparison['precision']} (assumed: MLPerf declares none)"


# The back-test error of each pick that rests on an estimate, by the kind of estimate it is (as
# sql/intermediate/int_estimate_bands.sql lends its likely range): an estimated pick by the uncalibrated estimates'
# error, a calibrated or scaled one by the leave-one-out calibrated estimates', of its accelerator family in its phase,
# or of every family of the phase where its own has fewer than $min_comparisons such comparisons; where the phase too
# has fewer, the pick has no likely range, and the index says so rather than quote so few. Error is
# |estimate / measured - 1| (the estimates page's); a precision-doubtful comparison counts in none.
PICK_ERRORS_SQL = """
with errors as (
    select phase, family, 'calibrated' as band_kind, loo_abs_error as error
    from marts.estimate_backtest where as_of = $as_of and not precision_doubtful and loo_measurements > 0
    union all
    select phase, family, 'uncalibrated', abs(ratio - 1)
    from marts.estimate_backtest where as_of = $as_of and not precision_doubtful
),
by_family as (
    select phase, family, band_kind, median(error) as median_error, max(error) as worst_error,
           count(*) as comparisons
    from errors group by all
),
by_phase as (
    select phase, band_kind, median(error) as median_error, max(error) as worst_error, count(*) as comparisons
    from errors group by all
),
picks as (
    select decisions.workload_id, accelerators.family,
           case when decisions.workload_kind = 'training' then 'training' else 'serving' end as phase,
           case when decisions.pick_basis = 'estimated' then 'uncalibrated' else 'calibrated' end as band_kind
    from marts.decisions as decisions
    left join catalog.accelerators as accelerators on accelerators.accelerator_id = decisions.pick_accelerator_id
    where decisions.as_of = $as_of and decisions.pick_basis <> 'measured'
)
select picks.workload_id, picks.family, picks.phase, picks.band_kind,
       coalesce(by_family.comparisons, 0) >= $min_comparisons as own_family,
       case when by_family.comparisons >= $min_comparisons then by_family.median_error
            else by_phase.median_error end as median_error,
       case when by_family.comparisons >= $min_comparisons then by_family.worst_error
            else by_phase.worst_error end as worst_error,
       case when by_family.comparisons >= $min_comparisons then by_family.comparisons
            else coalesce(by_phase.comparisons, 0) end as comparisons
from picks
left join by_family using (phase, family, band_kind)
left join by_phase using (phase, band_kind)
order by picks.phase, picks.band_kind, own_family desc, picks.family, picks.workload_id
"""
BAND_MIN_COMPARISONS = 2  # a family with fewer borrows its phase's errors (int_estimate_bands.sql)


def pick_errors(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> list[dict]:
    """The back-test error behind the picks that rest on an estimate, one entry per phase, kind of estimate and
    family (every family of the phase, where a pick's own has too few comparisons), with the workloads it covers."""
    groups: dict[tuple, dict] = {}
    for r in fetch_dicts(con, PICK_ERRORS_SQL, {"as_of": as_of, "min_comparisons": BAND_MIN_COMPARISONS}):
        key = (r["phase"], r["band_kind"], r["family"] if r["own_family"] else None)
        group = groups.setdefault(key, {**r, "family": key[2], "workloads": [], "borrowing": []})
        group["workloads"].append(r["workload_id"])
        if not r["own_family"] and r["family"] not in group["borrowing"]:
            group["borrowing"].append(r["family"])
    return list(groups.values())
