"""The estimates page's back-test chart: each measured result against the estimate calibrated without it
(marts.estimate_backtest), a panel per phase. What every chart shares is flows/chart_kit.py's.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from flows import relations
from flows.chart_kit import (
    FAMILY_COLOURS,
    LABEL_POINTS,
    OTHER_FAMILY_COLOUR,
    Chart,
    family_order,
    make_chart,
    set_scale,
    table_exists,
    titled_figure,
    wide_span,
)
from flows.formatting import percent

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# the back-test's goals (issue 13): a calibrated estimate within this share of the measurement, either way
SERVING_ESTIMATE_GOAL = 0.15
TRAINING_ESTIMATE_GOAL = 0.20
BACKTEST_PHASES = {"serving": SERVING_ESTIMATE_GOAL, "training": TRAINING_ESTIMATE_GOAL}  # panel order, left to right
BACKTEST_LEFT, BACKTEST_BOTTOM, BACKTEST_WSPACE = 0.11, 0.27, 0.35  # the family legend sits under the two panels
BACKTEST_TICK_DECADES = 2  # a log axis of a back-test panel spanning more decades than this ticks at powers of ten only
BACKTEST_FILE = "estimate-backtest.png"

BACKTEST_SQL = """
select comparison_id, phase, family, accelerator_id, precision, model_id, chips, measurement_basis, unit, measured,
       estimated, loo_estimated, loo_measurements, loo_ratio, precision_doubtful, benchmark_label
from marts.estimate_backtest
where as_of = $as_of and measured > 0 and loo_estimated > 0
order by phase, comparison_id
"""


def backtest_chart(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> Chart | None:
    """Estimated against measured for every result marts.estimate_backtest holds at `as_of`; None when it holds none."""
    if not table_exists(con, "marts", "estimate_backtest"):
        return None
    comparisons = relations.fetch_frame(con, BACKTEST_SQL, {"as_of": as_of})
    if comparisons.is_empty():
        return None
    return make_chart(BACKTEST_FILE, backtest_title(comparisons), backtest_caption(comparisons), comparisons,
                      backtest_figure)


def backtest_title(comparisons: pl.DataFrame) -> str:
    return f"Estimated against measured: {comparisons.height} results, each estimate calibrated without it"


def backtest_phases(comparisons: pl.DataFrame) -> list[str]:
    """The panels, left to right: serving, training, then any other phase the mart holds."""
    present = set(comparisons["phase"].drop_nulls().to_list())
    return [p for p in BACKTEST_PHASES if p in present] + sorted(present - set(BACKTEST_PHASES))


def median_absolute_error(comparisons: pl.DataFrame) -> float:
    """The median of |leave-one-out estimate / measurement - 1|."""
    return (comparisons["loo_ratio"] - 1).abs().median()


# a result whose declared precision the MLPerf cross-check doubts: drawn, in no median (as on the estimates page)
DOUBTFUL = pl.col("precision_doubtful").fill_null(False)
CALIBRATED = pl.col("loo_measurements") > 0
DOUBTFUL_LABEL = "precision doubtful"


def backtest_caption(comparisons: pl.DataFrame) -> str:
    """What to read: per phase the calibrated results' median error against the goal (the estimates page's figure),
    then the uncalibrated ones'; the precision-doubtful results count in neither."""
    parts = []
    for phase in backtest_phases(comparisons):
        rows = comparisons.filter(pl.col("phase") == phase, ~DOUBTFUL)
        goal = BACKTEST_PHASES.get(phase)
        calibrated, uncalibrated = rows.filter(CALIBRATED), rows.filter(~CALIBRATED)
        figures = [f"{percent(median_absolute_error(calibrated))} over the {calibrated.height} calibrated"
                   + (f" (goal ±{percent(goal)})" if goal else "")] if calibrated.height else ["none calibrated"]
        if uncalibrated.height:  # not the estimates page's uncalibrated column: every comparison's estimate there
            figures.append(f"{percent(median_absolute_error(uncalibrated))} over the {uncalibrated.height} with no "
                           f"other measurement to calibrate {'it' if uncalibrated.height == 1 else 'them'}")
        parts.append(f"{phase} {', '.join(figures)}")
    text = (f"{comparisons.height} comparisons, on the line where the estimate is right; leave-one-out median "
            f"absolute error: {'; '.join(parts)}")
    if comparisons.filter(~CALIBRATED, ~DOUBTFUL).height:
        text += "; hollow points had no other measurement to calibrate them"
    doubtful = comparisons.filter(DOUBTFUL).height
    if doubtful:
        text += (f"; {'a cross marks the result' if doubtful == 1 else f'crosses mark the {doubtful} results'} whose "
                 f"declared precision the MLPerf cross-check doubts, in no median")
    return text + "."


def panel_units(rows: pl.DataFrame) -> str:
    """What a panel's points are counted in, every unit of its rows in their order, the words they start with said
    once: an MLPerf Training result is minutes to train a whole run, a published throughput minutes to train 1e9
    tokens ("minutes to train 1e9 tokens or a whole run")."""
    units = [unit.split() for unit in rows["unit"].drop_nulls().unique(maintain_order=True).to_list()]
    if len(units) < 2:
        return " ".join(units[0]) if units else ""
    shared = 0
    while all(len(unit) > shared and unit[shared] == units[0][shared] for unit in units):
        shared += 1
    rests = [" ".join(unit[shared:]) or "a whole run" for unit in units]
    return " ".join([*units[0][:shared], " or ".join(rests)])


def backtest_figure(comparisons: pl.DataFrame, title: str) -> Figure:
    """A panel per phase: the leave-one-out estimate against the measurement on equal axes, y = x and the goal dashed."""
    from matplotlib.lines import Line2D

    phases = backtest_phases(comparisons)
    figure, axes = titled_figure(title, panels=len(phases), side_by_side=True, left=BACKTEST_LEFT,
                                 bottom=BACKTEST_BOTTOM, space=BACKTEST_WSPACE)
    axes = axes if isinstance(axes, tuple) else (axes,)
    families = sorted(set(comparisons["family"].to_list()), key=family_order)
    for ax, phase in zip(axes, phases, strict=True):
        rows = comparisons.filter(pl.col("phase") == phase)
        values = pl.concat([rows["measured"], rows["loo_estimated"]])
        low, high = values.min(), values.max()
        if wide_span(values):
            low, high = low / 1.3, high * 1.3
        else:
            pad = (high - low) * 0.08 or high * 0.1
            low, high = max(low - pad, 0.0), high + pad
        ax.plot([low, high], [low, high], color="#404040", linewidth=0.9, zorder=1)
        goal = BACKTEST_PHASES.get(phase)
        if goal:
            for factor in (1 - goal, 1 + goal):
                ax.plot([low, high], [low * factor, high * factor], color="#808080", linestyle="--", linewidth=0.8,
                        zorder=1)
        for family in families:
            colour = FAMILY_COLOURS.get(family, OTHER_FAMILY_COLOUR)
            points = rows.filter(pl.col("family").eq_missing(family))
            for calibrated in (True, False):
                some = points.filter(CALIBRATED.eq(calibrated), ~DOUBTFUL)
                if not some.is_empty():
                    ax.scatter(some["measured"].to_list(), some["loo_estimated"].to_list(), s=30, zorder=3,
                               facecolors=colour if calibrated else "none",
                               edgecolors="white" if calibrated else colour, linewidths=0.5 if calibrated else 1.2)
            doubtful = points.filter(DOUBTFUL)
            if not doubtful.is_empty():
                ax.scatter(doubtful["measured"].to_list(), doubtful["loo_estimated"].to_list(), s=30, zorder=3,
                           marker="x", color=colour, linewidths=1.2, label=DOUBTFUL_LABEL)
        set_scale(ax, "x", values, "measured")
        set_scale(ax, "y", values, "estimated, leave-one-out")
        if wide_span(values) and math.log10(high / low) > BACKTEST_TICK_DECADES:
            from matplotlib.ticker import LogLocator

            for axis in (ax.xaxis, ax.yaxis):  # 1-2-5 ticks of three decades crowd a half-width panel
                axis.set_major_locator(LogLocator())
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_title(f"{phase}: {panel_units(rows)}", fontsize=LABEL_POINTS, loc="left", wrap=True)
    handles = [Line2D([], [], linestyle="none", marker="o", markersize=6, color=FAMILY_COLOURS.get(f, OTHER_FAMILY_COLOUR),
                      label=f or "other") for f in families]
    if comparisons.filter(~CALIBRATED, ~DOUBTFUL).height:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, markerfacecolor="none",
                              markeredgecolor="#404040", label="uncalibrated"))
    if comparisons.filter(DOUBTFUL).height:
        handles.append(Line2D([], [], linestyle="none", marker="x", markersize=6, markeredgewidth=1.2,
                              color="#404040", label=DOUBTFUL_LABEL))
    handles.append(Line2D([], [], color="#404040", linewidth=0.9, label="estimate = measured"))
    goals = [f"±{percent(BACKTEST_PHASES[p])} {p}" for p in phases if p in BACKTEST_PHASES]
    if goals:
        handles.append(Line2D([], [], color="#808080", linestyle="--", linewidth=0.8,
                              label="goal: " + ", ".join(goals)))
    figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncols=min(len(handles), 4),
                  fontsize=LABEL_POINTS, frameon=False)
    return figure
