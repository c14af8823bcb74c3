"""Static PNG charts for the workload pages: data from a mart plus a spec, drawn on Matplotlib's Agg canvas.

Each chart is a query of the marts (its `data`, exactly the rows plotted), a pure function that draws a `Figure`
from that frame, and a one-line caption that says what to read from it. Matplotlib is imported on first use, so
importing this module costs nothing to a command that draws no chart. A chart's PNG is drawn once for the same code,
data and title, by a chart worker when one is free (flows/chart_images.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from flows import chart_images, relations
from flows.formatting import num, percent, ratio, usd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TOP_BARS = 10  # candidates in the top-candidates bar chart
HISTORY_RUNS = 90  # runs (as-of dates) the history chart looks back over, ending at the page's as-of
HISTORY_MIN_RUNS = 2  # fewer runs than this draw no history chart: one point is no trend
HISTORY_DATE_TICKS = 6  # up to this many runs, each run's date is a tick; more, and the dates are spaced evenly
LOG_SPAN = 20.0  # an axis turns logarithmic when its largest value is more than this many times its smallest
FIGURE_INCHES = (7.0, 4.0)  # width x height of every chart
DPI = 100  # pixels per inch of the PNG: 700 x 400 pixels
LABEL_POINTS = 8  # font size of tick labels, annotations and bar values
TITLE_POINTS = 10  # font size of a chart's title
BAR_LABEL_CHARS = 56  # a longer bar label is cut with an ellipsis, so the bars keep half the width
# margins as fractions of the figure, fixed: a layout engine would draw each chart twice
LEFT, RIGHT, BOTTOM, TOP = 0.12, 0.97, 0.13, 0.86
SCATTER_RIGHT = 0.74  # the scatter's legend sits right of it
BARS_BOTTOM = 0.2  # the bars' basis legend sits under the axis label
HISTORY_LEFT = 0.14  # the history's outcome label takes two lines
ANNOTATION_OFFSET = 16  # pixels from a marked point to its label
ANNOTATION_STEPS = 4  # label heights a label may move away from its point to clear the others
FRONTIER_LINES = 6  # offers (candidates) the cost-against-interactivity chart draws at most, the cheapest first
FRONTIER_MIN_POINTS = 2  # an offer needs this many load points with a per-user speed for a frontier worth drawing
FRONTIER_LEGEND_MIN_RIGHT = 0.5  # the frontier's legend of offer names takes at most the figure's right half
FRONTIER_LABEL_CHARS = 44  # a longer offer name in the frontier's legend is cut with an ellipsis
LEGEND_HANDLE_WIDTH = 0.1  # share of the figure's width a legend entry's marker and padding take beside its text
# the back-test's goals (issue 13): a calibrated estimate within this share of the measurement, either way
SERVING_ESTIMATE_GOAL = 0.15
TRAINING_ESTIMATE_GOAL = 0.20
BACKTEST_PHASES = {"serving": SERVING_ESTIMATE_GOAL, "training": TRAINING_ESTIMATE_GOAL}  # panel order, left to right
BACKTEST_LEFT, BACKTEST_BOTTOM, BACKTEST_WSPACE = 0.11, 0.27, 0.35  # the family legend sits under the two panels
BACKTEST_TICK_DECADES = 2  # a log axis of a back-test panel spanning more decades than this ticks at powers of ten only
BACKTEST_FILE = "estimate-backtest.png"

OUTCOME_UNITS = {
    "completed_run_usd": "USD per completed run",
    "usd_per_million_tokens": "USD per million output tokens",
    "usd_per_million_successful_requests": "USD per million successful requests",
    # a workload whose objective is energy
    "kwh_per_completed_run": "kWh per completed run",
    "kwh_per_million_tokens": "kWh per million output tokens",
    "kwh_per_million_successful_requests": "kWh per million successful requests",
    # one whose objective is emissions
    "kgco2e_per_completed_run": "kg CO2e per completed run",
    "kgco2e_per_million_tokens": "kg CO2e per million output tokens",
    "kgco2e_per_million_successful_requests": "kg CO2e per million successful requests",
}
# Okabe-Ito colours: told apart with the common colour-vision deficiencies
FAMILY_COLOURS = {"gpu": "#0072B2", "tpu": "#E69F00", "trainium": "#009E73", "inferentia": "#CC79A7",
                  "cpu": "#56B4E9"}
OTHER_FAMILY_COLOUR = "#7F7F7F"
# basis -> (fill colour, hatch), from the most measured to the least: one blue paling towards grey (told apart with
# the common colour-vision deficiencies), and a hatch that tells the bases apart in grey print too
BASIS_STYLES = {"measured": ("#0072B2", ""), "scaled": ("#56B4E9", "//"), "calibrated": ("#B4DBF3", "\\\\"),
                "estimated": ("#D9D9D9", "..")}
OTHER_BASIS_STYLE = ("#FFFFFF", "xx")
MARK_COLOUR = "#D55E00"  # the pick and the cheapest chip-hour
# one colour per offer line of the frontier: Okabe-Ito without the mark colour and the yellow that vanishes on white
LINE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#000000")
FLOOR_BASIS = "scenario p99 TPOT bound (a floor)"  # serving_load_points: a per-user speed that is a lower bound

CANDIDATES_SQL = """
select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, family, basis,
       usd_per_chip_hour, chip_hour_rank, outcome_metric, outcome_value, outcome_rank
from marts.rankings
where as_of = $as_of and workload_id = $workload_id
order by outcome_rank, usd_per_chip_hour, candidate_id
"""

TOP_CANDIDATES_SQL = """
select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, basis,
       outcome_metric, outcome_value, outcome_rank
from marts.rankings
where as_of = $as_of and workload_id = $workload_id
order by outcome_rank, usd_per_chip_hour, candidate_id
limit $limit
"""

HISTORY_SQL = """
with last_runs as (
    -- the runs (as-of dates) the chart looks back over; their first date bounds the scans below, which then read only
    -- the row groups of those runs (marts are appended run after run, a closed month rewritten together: compaction.py):
    -- ~20 ms, not ~200, on five years of runs
    select distinct as_of from ops.runs where as_of <= $as_of order by as_of desc limit $limit
),

picks as (
    select as_of, offer_id, cloud, instance_type, pricing_term, outcome_metric, outcome_value
    from marts.rank_history
    where workload_id = $workload_id and is_pick and as_of <= $as_of
        and as_of >= (select min(as_of) from last_runs)
),

current_pick as (
    select offer_id, cloud, instance_type, pricing_term from picks where as_of = $as_of
),

final as (
    select
        picks.as_of,
        picks.offer_id as pick_offer_id,
        picks.outcome_metric,
        picks.outcome_value,
        current_pick.offer_id as current_offer_id,
        current_pick.cloud as current_cloud,
        current_pick.instance_type as current_instance_type,
        current_pick.pricing_term as current_pricing_term,
        prices.usd_per_hour as current_offer_usd_per_hour,
        (select count(*) from last_runs) as window_runs
    from picks
    cross join current_pick
    left join marts.price_history as prices
        on prices.as_of = picks.as_of and prices.offer_id = current_pick.offer_id
        -- the bound again as a scalar subquery, not a join with it: DuckDB prunes row groups by a scalar's value
        -- (joined, the bound reads every run's prices: ~160 ms warm instead of ~10)
        and prices.as_of >= (select min(as_of) from last_runs)
)

select * from final order by as_of
"""

FRONTIER_SQL = """
with points as (
    select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, precision_class, load_point,
           tokens_per_s_per_user, tokens_per_s_per_user_basis, usd_per_million_tokens, meets_slo, is_selected
    from marts.serving_load_points
    where as_of = $as_of and workload_id = $workload_id and tokens_per_s_per_user > 0
        and usd_per_million_tokens > 0
        -- an offline workload has no user waiting on tokens: its cost alone decides
        and workload_id not in (select workload_id from catalog.workloads where is_offline)
),

lines as (
    select
        candidate_id,
        count(*) as points,
        min(usd_per_million_tokens) filter (where is_selected) as selected_usd,
        min(usd_per_million_tokens) as cheapest_usd
    from points
    group by candidate_id
),

kept as (
    -- the offers with a frontier first, then the cheapest at the point the latency objective selects
    select
        candidate_id,
        row_number() over (
            order by points >= $min_points desc, selected_usd nulls last, cheapest_usd, candidate_id
        ) as line_rank
    from lines
    where (select max(points) from lines) >= $min_points
    qualify line_rank <= $limit
)

select kept.line_rank, points.*
from points
inner join kept using (candidate_id)
order by kept.line_rank, points.tokens_per_s_per_user, points.load_point
"""

BACKTEST_SQL = """
select comparison_id, phase, family, accelerator_id, precision, model_id, chips, measurement_basis, unit, measured,
       estimated, loo_estimated, loo_measurements, loo_ratio, benchmark_label
from marts.estimate_backtest
where as_of = $as_of and measured > 0 and loo_estimated > 0
order by phase, comparison_id
"""


@dataclass(frozen=True)
class Chart:
    file_name: str  # relative to the report folder, e.g. "charts/gpt3-175b-pretrain-outcome-vs-chip-hour.png"
    title: str  # also the image's alt text
    caption: str  # one line of plain text: what to read from the chart
    data: pl.DataFrame  # exactly the rows plotted, as queried from the marts
    drawing: bytes | chart_images.Drawing = field(repr=False)  # the PNG, or a chart worker drawing it

    @property
    def image(self) -> bytes:
        """The PNG (waiting for the chart worker that draws it, if one does)."""
        return self.drawing if isinstance(self.drawing, bytes) else self.drawing.result()


def workload_charts(con: duckdb.DuckDBPyConnection, as_of: dt.date, workload_id: str) -> list[Chart]:
    """The charts of one workload page, in page order; [] when the workload has no ranked candidate."""
    params = {"as_of": as_of, "workload_id": workload_id}
    candidates = relations.fetch_frame(con, CANDIDATES_SQL, params)
    if candidates.is_empty():
        return []
    top = relations.fetch_frame(con, TOP_CANDIDATES_SQL, params | {"limit": TOP_BARS})
    history = relations.fetch_frame(con, HISTORY_SQL, params | {"limit": HISTORY_RUNS})
    charts = [
        _chart(f"{workload_id}-outcome-vs-chip-hour.png", outcome_vs_chip_hour_title(workload_id, candidates),
               outcome_vs_chip_hour_caption(candidates), candidates, outcome_vs_chip_hour_figure),
        _chart(f"{workload_id}-top-candidates.png", top_candidates_title(workload_id, top),
               top_candidates_caption(top, candidates.height), top, top_candidates_figure),
    ]
    if history.height >= HISTORY_MIN_RUNS:
        charts.append(_chart(f"{workload_id}-history.png", history_title(workload_id, history),
                             history_caption(history), history, history_figure))
    if _table_exists(con, "marts", "serving_load_points"):
        frontier = relations.fetch_frame(con, FRONTIER_SQL,
                                         params | {"limit": FRONTIER_LINES, "min_points": FRONTIER_MIN_POINTS})
        if not frontier.is_empty():
            charts.append(_chart(f"{workload_id}-cost-vs-interactivity.png", frontier_title(workload_id, frontier),
                                 frontier_caption(frontier), frontier, frontier_figure))
    return charts


def backtest_chart(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> Chart | None:
    """Estimated against measured for every result marts.estimate_backtest holds at `as_of`; None when it holds none."""
    if not _table_exists(con, "marts", "estimate_backtest"):
        return None
    comparisons = relations.fetch_frame(con, BACKTEST_SQL, {"as_of": as_of})
    if comparisons.is_empty():
        return None
    return _chart(BACKTEST_FILE, backtest_title(comparisons), backtest_caption(comparisons), comparisons,
                  backtest_figure)


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    """Whether the warehouse has this table yet (a warehouse built before the mart existed has not)."""
    return bool(relations.kind(con, schema, name))


def _chart(name: str, title: str, caption: str, data: pl.DataFrame,
           draw: Callable[[pl.DataFrame, str], Figure]) -> Chart:
    """A chart of the page: its PNG drawn once for the same drawing code, data and title (flows/chart_images.py)."""
    return Chart(file_name=f"charts/{name}", title=title, caption=caption, data=data,
                 drawing=chart_images.image(draw, data, title, _DRAWING_CODE))


# the drawing code, part of each chart's key: this file and how it writes values on the charts
_DRAWING_CODE = hashlib.sha256(Path(__file__).read_bytes()
                               + Path(__file__).with_name("formatting.py").read_bytes()).hexdigest()


# Wording shared by the charts.

def offer_label(row: dict, *, prefix: str = "") -> str:
    """`cloud instance_type (pricing_term)`, the way the charts name an offer."""
    return f"{row[prefix + 'cloud']} {row[prefix + 'instance_type']} ({row[prefix + 'pricing_term']})"


def outcome_unit(frame: pl.DataFrame) -> str:
    return OUTCOME_UNITS.get(frame["outcome_metric"][0], "USD per outcome")


def _times(value: float, base: float) -> str:
    """How many times `base` the value is, by the reports' ratio filter: 2.70x, 12x."""
    return ratio(value / base if base else None)


def pick_row(candidates: pl.DataFrame) -> dict:
    """The workload's pick: lowest outcome, then lowest chip-hour price, then candidate id (as rank_history)."""
    return candidates.sort(["outcome_rank", "usd_per_chip_hour", "candidate_id"]).row(0, named=True)


def cheapest_chip_hour_row(candidates: pl.DataFrame) -> dict:
    """The cheapest candidate per chip-hour; of equal chip-hour prices, the one with the best outcome."""
    return candidates.sort(["chip_hour_rank", "outcome_rank", "candidate_id"]).row(0, named=True)


# 1. Outcome cost against USD per chip-hour: one point per candidate, coloured by accelerator family.

def outcome_vs_chip_hour_title(workload_id: str, candidates: pl.DataFrame) -> str:
    return f"{workload_id}: {outcome_unit(candidates)} against USD per chip-hour, {candidates.height} candidates"


def outcome_vs_chip_hour_caption(candidates: pl.DataFrame) -> str:
    pick, cheapest = pick_row(candidates), cheapest_chip_hour_row(candidates)
    text = (f"Lower is better on both axes; the pick, {offer_label(pick)}, sits at "
            f"{usd(pick['usd_per_chip_hour'])} USD per chip-hour")
    if cheapest["candidate_id"] == pick["candidate_id"]:
        return text + " and is also the cheapest chip-hour."
    per_outcome = outcome_unit(candidates).removeprefix("USD ")
    return (text + f"; the cheapest chip-hour, {offer_label(cheapest)}, costs "
            f"{_times(cheapest['outcome_value'], pick['outcome_value'])} as much {per_outcome}.")


def outcome_vs_chip_hour_figure(candidates: pl.DataFrame, title: str) -> Figure:
    """A scatter of outcome cost against USD per chip-hour, one collection per family, pick and cheapest marked."""
    figure, ax = _figure(title, right=SCATTER_RIGHT)
    for family in sorted(candidates["family"].unique().to_list(), key=_family_order):
        points = candidates.filter(pl.col("family").eq_missing(family))
        ax.scatter(points["usd_per_chip_hour"].to_list(), points["outcome_value"].to_list(), s=28, alpha=0.85,
                   color=FAMILY_COLOURS.get(family, OTHER_FAMILY_COLOUR), edgecolors="white", linewidths=0.5,
                   label=family or "other", zorder=2)
    _scale(ax, "x", candidates["usd_per_chip_hour"], "USD per chip-hour")
    _scale(ax, "y", candidates["outcome_value"], outcome_unit(candidates))
    pick, cheapest = pick_row(candidates), cheapest_chip_hour_row(candidates)
    same = cheapest["candidate_id"] == pick["candidate_id"]
    ax.plot([pick["usd_per_chip_hour"]], [pick["outcome_value"]], linestyle="none", marker="*", markersize=13,
            markerfacecolor="none", markeredgecolor=MARK_COLOUR, markeredgewidth=1.4, label="pick", zorder=3)
    if not same:
        ax.plot([cheapest["usd_per_chip_hour"]], [cheapest["outcome_value"]], linestyle="none", marker="D",
                markersize=9, markerfacecolor="none", markeredgecolor=MARK_COLOUR, markeredgewidth=1.2,
                label="cheapest chip-hour", zorder=3)
    ax.autoscale_view()  # limits final before the labels are placed against them
    if same:
        _annotate(ax, [(pick, "pick and cheapest chip-hour: " + offer_label(pick))])
    else:
        _annotate(ax, [(pick, "pick: " + offer_label(pick)),
                       (cheapest, "cheapest chip-hour: " + offer_label(cheapest))])
    figure.legend(*ax.get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(SCATTER_RIGHT + 0.01, TOP),
                  fontsize=LABEL_POINTS, frameon=False)
    return figure


def _family_order(family: str | None) -> tuple[int, str]:
    known = list(FAMILY_COLOURS)
    return (known.index(family), "") if family in known else (len(known), family or "")


def _annotate(ax: Axes, marks: list[tuple[dict, str]], x_key: str = "usd_per_chip_hour",
              y_key: str = "outcome_value") -> None:
    """Label marked points: each label beside its point, inside the axes and clear of the marks and labels so far."""
    height = LABEL_POINTS * 1.5 * DPI / 72
    (axes_left, axes_bottom), (axes_right, axes_top) = ax.transAxes.transform([(0, 0), (1, 1)])
    points = [tuple(ax.transData.transform((row[x_key], row[y_key]))) for row, _ in marks]
    mark = ANNOTATION_OFFSET * 0.75  # half the side of the square a marker keeps clear
    taken = [(x - mark, y - mark, x + mark, y + mark) for x, y in points]  # boxes in pixels: left, bottom, right, top

    def clear(box: tuple[float, float, float, float]) -> bool:
        inside = axes_bottom <= box[1] and box[3] <= axes_top
        return inside and not any(box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3] for o in taken)

    for (row, text), (x, y) in zip(marks, points, strict=True):
        width = _text_width([text]) * FIGURE_INCHES[0] * DPI
        lefts = [x + ANNOTATION_OFFSET, x - ANNOTATION_OFFSET - width]
        if axes_right - x < x - axes_left:
            lefts.reverse()
        ups = [True, False] if axes_top - y > y - axes_bottom else [False, True]
        lefts = [min(max(left, axes_left), axes_right - width) for left in lefts]  # slid into the axes
        boxes = [(left, bottom, left + width, bottom + height)
                 for step in range(ANNOTATION_STEPS) for up in ups for left in lefts
                 for bottom in [y + ANNOTATION_OFFSET + step * height if up
                                else y - ANNOTATION_OFFSET - (step + 1) * height]]
        box = next((b for b in boxes if clear(b)), boxes[0])
        taken.append(box)
        ax.annotate(text, xy=(row[x_key], row[y_key]), xytext=(box[0] - x, box[1] - y),
                    textcoords="offset pixels", ha="left", va="bottom", fontsize=LABEL_POINTS, color=MARK_COLOUR,
                    zorder=4, arrowprops={"arrowstyle": "-", "color": MARK_COLOUR, "linewidth": 0.8, "shrinkA": 0})


# 2. Top candidates: horizontal bars of the outcome cost, styled by basis.

def top_candidates_title(workload_id: str, top: pl.DataFrame) -> str:
    return f"{workload_id}: the {top.height} cheapest candidates by {outcome_unit(top)}"


def top_candidates_caption(top: pl.DataFrame, candidates: int) -> str:
    first, last = top.row(0, named=True), top.row(top.height - 1, named=True)
    text = (f"Shorter is better; of {candidates} candidates the pick, {offer_label(first)}, costs "
            f"{usd(first['outcome_value'])} {outcome_unit(top)}")
    if top.height > 1:
        text += (f" and number {top.height} {usd(last['outcome_value'])}, "
                 f"{_times(last['outcome_value'], first['outcome_value'])} as much")
    if "calibrated" in top["basis"].to_list():
        return text + ("; the fill tells a measured cost from one scaled from a benchmark, calibrated on "
                       "measurements of the chip, or estimated from specs alone.")
    return text + "; the fill tells a measured cost from one scaled from a benchmark or estimated from specs."


def bar_labels(top: pl.DataFrame) -> list[str]:
    """Offer, term and precision per bar, with the region and then the chips where that leaves two bars alike."""
    rows = top.to_dicts()
    labels = [offer_label(r) + (f", {r['precision']}" if r["precision"] else "") for r in rows]
    for extra in (lambda r: r["region"], lambda r: f"{r['chips']} chips"):
        alike = {label for label in labels if labels.count(label) > 1}
        labels = [f"{label}, {extra(r)}" if label in alike else label for label, r in zip(labels, rows, strict=True)]
    return [label if len(label) <= BAR_LABEL_CHARS else label[:BAR_LABEL_CHARS - 1] + "…" for label in labels]


def top_candidates_figure(top: pl.DataFrame, title: str) -> Figure:
    """Horizontal bars of the outcome cost, the pick on top, its value at each bar's end, fill and hatch by basis."""
    from matplotlib.patches import Patch

    labels = bar_labels(top)
    left = _text_width(labels) + 0.035
    figure, ax = _figure(title, left=left, bottom=BARS_BOTTOM)
    values = top["outcome_value"].to_list()
    value_labels = [usd(v) for v in values]
    styles = [BASIS_STYLES.get(basis, OTHER_BASIS_STYLE) for basis in top["basis"].to_list()]
    bars = ax.barh(list(range(top.height)), values, height=0.7, color=[fill for fill, _ in styles],
                   edgecolor="#404040", linewidth=0.6, zorder=2)
    for bar, (_, hatch) in zip(bars, styles, strict=True):  # one by one: barh takes a list of hatches only since 3.10
        bar.set_hatch(hatch)
    ax.bar_label(bars, labels=value_labels, padding=3, fontsize=LABEL_POINTS)
    ax.set_yticks(list(range(top.height)), labels=labels)
    ax.set_ylim(top.height - 0.5, -0.5)  # the pick on top
    room = (_text_width(value_labels) + 0.015) / (RIGHT - left)  # share of the axes the values written need
    ax.set_xlim(0, max(values) / max(1 - room, 0.5))
    ax.xaxis.set_major_locator(_linear_locator())
    ax.xaxis.set_major_formatter(_plain_number_formatter())
    ax.set_xlabel(outcome_unit(top), fontsize=LABEL_POINTS + 1)
    ax.grid(False, axis="y")
    bases = top["basis"].to_list()
    present = [b for b in BASIS_STYLES if b in bases] + sorted({str(b) for b in bases if b not in BASIS_STYLES})
    handles = [Patch(facecolor=fill, hatch=hatch, edgecolor="#404040", label=b)
               for b in present for fill, hatch in [BASIS_STYLES.get(b, OTHER_BASIS_STYLE)]]
    figure.legend(handles=handles, loc="lower right", bbox_to_anchor=(RIGHT, 0.0), ncols=len(present),
                  title="basis:", alignment="left", fontsize=LABEL_POINTS, title_fontsize=LABEL_POINTS, frameon=False)
    return figure


# 3. History: the best outcome per run, and the price of the current pick's offer in those runs.

def history_title(workload_id: str, history: pl.DataFrame) -> str:
    """The picks plotted, out of the runs looked back over (`window_runs`): a run without a pick (the workload had no
    ranked candidate then) is one of those runs, not a point."""
    runs = history["window_runs"][0]
    which = f"each of the last {runs}" if history.height == runs else f"{history.height} of the last {runs}"
    return f"{workload_id}: the best {outcome_unit(history)} in {which} runs"


def history_caption(history: pl.DataFrame) -> str:
    first, last = history.row(0, named=True), history.row(history.height - 1, named=True)
    best, best_then = usd(last["outcome_value"]), usd(first["outcome_value"])
    text = (f"The best {outcome_unit(history)} stayed at {best} from {first['as_of']} to {last['as_of']}"
            if best == best_then else
            f"The best {outcome_unit(history)} went from {best_then} on {first['as_of']} to {best} on "
            f"{last['as_of']} ({_times(last['outcome_value'], first['outcome_value'])})")
    changes = history["pick_offer_id"].ne(history["pick_offer_id"].shift(1)).sum()
    text += {0: ", with the same pick", 1: ", the pick changing once"}.get(changes,
                                                                         f", the pick changing {changes} times")
    price, price_then = usd(last["current_offer_usd_per_hour"]), first["current_offer_usd_per_hour"]
    text += f"; the current pick, {offer_label(last, prefix='current_')}, costs {price} USD per hour"
    if price_then is None:
        return text + f" and was not priced on {first['as_of']}."
    return text + (f", as on {first['as_of']}." if usd(price_then) == price else
                   f" against {usd(price_then)} on {first['as_of']}.")


def history_figure(history: pl.DataFrame, title: str) -> Figure:
    """Two panels over the runs' as-of dates: the best outcome cost, and the current pick offer's USD per hour."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DateFormatter

    figure, (outcome_ax, price_ax) = _figure(title, panels=2, left=HISTORY_LEFT)
    dates = history["as_of"].to_list()
    outcome_ax.plot(dates, history["outcome_value"].to_list(), marker="o", markersize=4, linewidth=1.4,
                    color=FAMILY_COLOURS["gpu"], zorder=2)
    _scale(outcome_ax, "y", history["outcome_value"], _two_lines(outcome_unit(history)))
    outcome_ax.set_title("the best outcome of each run", fontsize=LABEL_POINTS, loc="left")
    prices = [float("nan") if v is None else v for v in history["current_offer_usd_per_hour"].to_list()]
    price_ax.plot(dates, prices, marker="o", markersize=4, linewidth=1.4, color=MARK_COLOUR, zorder=2)
    _scale(price_ax, "y", history["current_offer_usd_per_hour"], "USD per hour")
    current = offer_label(history.row(0, named=True), prefix="current_")
    price_ax.set_title(f"the price of the current pick's offer, {current}, in each run", fontsize=LABEL_POINTS,
                       loc="left")
    if len(dates) <= HISTORY_DATE_TICKS:
        price_ax.set_xticks(dates)
        price_ax.xaxis.set_major_formatter(DateFormatter("%Y-%m-%d"))
    else:
        locator = AutoDateLocator(maxticks=HISTORY_DATE_TICKS + 2)
        price_ax.xaxis.set_major_locator(locator)
        price_ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    price_ax.set_xlabel("as-of date of the run", fontsize=LABEL_POINTS + 1)
    return figure


def _two_lines(label: str) -> str:
    """A long axis label broken at the space that makes its two lines most even."""
    spaces = [i for i, c in enumerate(label) if c == " "]
    if not spaces:
        return label
    cut = min(spaces, key=lambda i: max(i, len(label) - i - 1))
    return label[:cut] + "\n" + label[cut + 1:]


# 4. Cost against interactivity: USD per million output tokens at each load point against the output tokens/s per user.

def frontier_title(workload_id: str, frontier: pl.DataFrame) -> str:
    lines = frontier["candidate_id"].n_unique()
    return (f"{workload_id}: USD per million output tokens against output tokens/s per user, "
            f"{lines} offer{'' if lines == 1 else 's'}")


def frontier_caption(frontier: pl.DataFrame) -> str:
    labels = dict(zip(frontier["candidate_id"].unique(maintain_order=True).to_list(), frontier_line_labels(frontier),
                      strict=True))
    text = ("Each line is one offer at the load points measured; further right is faster for each user, lower is "
            "cheaper per token")
    selected = frontier.filter(pl.col("is_selected"))
    if selected.is_empty():
        text += "; none of the points drawn is the one the workload is priced at"
    else:
        best = selected.row(0, named=True)
        text += (f"; the latency objective selects {labels[best['candidate_id']]} at {best['load_point']}: "
                 f"{usd(best['usd_per_million_tokens'])} USD per million output tokens at "
                 f"{num(best['tokens_per_s_per_user'], 1)} tokens/s per user")
    if frontier["tokens_per_s_per_user_basis"].eq(FLOOR_BASIS).any():
        text += "; an MLPerf scenario's speed (triangle) is a floor, from its p99 TPOT bound"
    if not frontier["meets_slo"].all():
        text += "; hollow points miss the objective"
    return text + "."


def frontier_line_labels(frontier: pl.DataFrame) -> list[str]:
    """One label per line, in line order: the offer, with the precision and then the region where two lines are alike."""
    rows = frontier.unique("candidate_id", keep="first", maintain_order=True).to_dicts()
    labels = [offer_label(r) for r in rows]
    for extra in (lambda r: r["precision_class"], lambda r: r["region"]):
        alike = {label for label in labels if labels.count(label) > 1}
        labels = [f"{label}, {extra(r)}" if label in alike else label for label, r in zip(labels, rows, strict=True)]
    return [label if len(label) <= FRONTIER_LABEL_CHARS else label[:FRONTIER_LABEL_CHARS - 1] + "…"
            for label in labels]


def frontier_figure(frontier: pl.DataFrame, title: str) -> Figure:
    """One line per offer through its load points, hollow where the objective is missed, the selected points ringed."""
    from matplotlib.lines import Line2D

    labels = frontier_line_labels(frontier)
    keys = ["measured per-user speed", "MLPerf bound: at least this fast", "misses the objective",
            "selected by the latency objective"]
    right = max(RIGHT - _text_width(labels + keys) - LEGEND_HANDLE_WIDTH, FRONTIER_LEGEND_MIN_RIGHT)
    figure, ax = _figure(title, right=right)
    floor = pl.col("tokens_per_s_per_user_basis").eq_missing(FLOOR_BASIS)
    for i, (line, label) in enumerate(zip(frontier.partition_by("line_rank", maintain_order=True), labels,
                                          strict=True)):
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        ax.plot(line["tokens_per_s_per_user"].to_list(), line["usd_per_million_tokens"].to_list(), color=colour,
                linewidth=1.3, label=label, zorder=2)
        for is_floor, meets in ((False, True), (False, False), (True, True), (True, False)):
            points = line.filter(floor.eq(is_floor) & pl.col("meets_slo").eq(meets))
            if not points.is_empty():
                ax.plot(points["tokens_per_s_per_user"].to_list(), points["usd_per_million_tokens"].to_list(),
                        linestyle="none", marker=">" if is_floor else "o", markersize=6,
                        markerfacecolor=colour if meets else "white", markeredgecolor=colour, markeredgewidth=1.2,
                        zorder=3)
    selected = frontier.filter(pl.col("is_selected"))
    if not selected.is_empty():
        ax.plot(selected["tokens_per_s_per_user"].to_list(), selected["usd_per_million_tokens"].to_list(),
                linestyle="none", marker="o", markersize=13, markerfacecolor="none", markeredgecolor=MARK_COLOUR,
                markeredgewidth=1.4, zorder=4)
    _scale(ax, "x", frontier["tokens_per_s_per_user"], "output tokens/s per user")
    _scale(ax, "y", frontier["usd_per_million_tokens"], "USD per million output tokens")
    ax.autoscale_view()  # limits final before the label is placed against them
    if not selected.is_empty():
        best = selected.row(0, named=True)
        _annotate(ax, [(best, "selected: " + best["load_point"])], "tokens_per_s_per_user", "usd_per_million_tokens")
    grey = "#404040"
    handles, _ = ax.get_legend_handles_labels()
    if not frontier["tokens_per_s_per_user_basis"].eq_missing(FLOOR_BASIS).all():
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, color=grey,
                              label="measured per-user speed"))
    if frontier["tokens_per_s_per_user_basis"].eq(FLOOR_BASIS).any():
        handles.append(Line2D([], [], linestyle="none", marker=">", markersize=6, color=grey,
                              label="MLPerf bound: at least this fast"))
    if not frontier["meets_slo"].all():
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, markerfacecolor="white",
                              markeredgecolor=grey, markeredgewidth=1.2, label="misses the objective"))
    if not selected.is_empty():
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=13, markerfacecolor="none",
                              markeredgecolor=MARK_COLOUR, markeredgewidth=1.4,
                              label="selected by the latency objective"))
    figure.legend(handles=handles, loc="upper left", bbox_to_anchor=(right + 0.01, TOP), fontsize=LABEL_POINTS,
                  frameon=False)
    return figure


# 5. The back-test: each measured result against the estimate calibrated without it (marts.estimate_backtest).

def backtest_title(comparisons: pl.DataFrame) -> str:
    return f"Estimated against measured: {comparisons.height} results, each estimate calibrated without it"


def backtest_phases(comparisons: pl.DataFrame) -> list[str]:
    """The panels, left to right: serving, training, then any other phase the mart holds."""
    present = set(comparisons["phase"].drop_nulls().to_list())
    return [p for p in BACKTEST_PHASES if p in present] + sorted(present - set(BACKTEST_PHASES))


def median_absolute_error(comparisons: pl.DataFrame) -> float:
    """The median of |leave-one-out estimate / measurement - 1|."""
    return (comparisons["loo_ratio"] - 1).abs().median()


def backtest_caption(comparisons: pl.DataFrame) -> str:
    parts = []
    for phase in backtest_phases(comparisons):
        rows = comparisons.filter(pl.col("phase") == phase)
        goal = BACKTEST_PHASES.get(phase)
        calibrated = rows.filter(pl.col("loo_measurements") > 0)
        notes = ([f"{percent(median_absolute_error(calibrated))} over the {calibrated.height} calibrated"]
                 if 0 < calibrated.height < rows.height else []) + ([f"goal ±{percent(goal)}"] if goal else [])
        parts.append(f"{phase} {percent(median_absolute_error(rows))} over {rows.height}"
                     + (f" ({'; '.join(notes)})" if notes else ""))
    text = (f"{comparisons.height} comparisons, on the line where the estimate is right; leave-one-out median "
            f"absolute error: {', '.join(parts)}")
    if comparisons["loo_measurements"].eq(0).any():
        text += "; hollow points had no other measurement to calibrate them"
    return text + "."


def backtest_figure(comparisons: pl.DataFrame, title: str) -> Figure:
    """A panel per phase: the leave-one-out estimate against the measurement on equal axes, y = x and the goal dashed."""
    from matplotlib.lines import Line2D

    phases = backtest_phases(comparisons)
    figure, axes = _figure(title, panels=len(phases), side_by_side=True, left=BACKTEST_LEFT, bottom=BACKTEST_BOTTOM)
    axes = axes if isinstance(axes, tuple) else (axes,)
    families = sorted(set(comparisons["family"].to_list()), key=_family_order)
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
                some = points.filter(pl.col("loo_measurements").gt(0).eq(calibrated))
                if not some.is_empty():
                    ax.scatter(some["measured"].to_list(), some["loo_estimated"].to_list(), s=30, zorder=3,
                               facecolors=colour if calibrated else "none",
                               edgecolors="white" if calibrated else colour, linewidths=0.5 if calibrated else 1.2)
        _scale(ax, "x", values, "measured")
        _scale(ax, "y", values, "estimated, leave-one-out")
        if wide_span(values) and math.log10(high / low) > BACKTEST_TICK_DECADES:
            from matplotlib.ticker import LogLocator

            for axis in (ax.xaxis, ax.yaxis):  # 1-2-5 ticks of three decades crowd a half-width panel
                axis.set_major_locator(LogLocator())
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_title(f"{phase}: {rows['unit'][0]}", fontsize=LABEL_POINTS, loc="left")
    handles = [Line2D([], [], linestyle="none", marker="o", markersize=6, color=FAMILY_COLOURS.get(f, OTHER_FAMILY_COLOUR),
                      label=f or "other") for f in families]
    if comparisons["loo_measurements"].eq(0).any():
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=6, markerfacecolor="none",
                              markeredgecolor="#404040", label="uncalibrated"))
    handles.append(Line2D([], [], color="#404040", linewidth=0.9, label="estimate = measured"))
    goals = [f"±{percent(BACKTEST_PHASES[p])} {p}" for p in phases if p in BACKTEST_PHASES]
    if goals:
        handles.append(Line2D([], [], color="#808080", linestyle="--", linewidth=0.8,
                              label="goal: " + ", ".join(goals)))
    figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncols=min(len(handles), 4),
                  fontsize=LABEL_POINTS, frameon=False)
    return figure


# Figure plumbing.

def _figure(title: str, *, panels: int = 1, left: float = LEFT, right: float = RIGHT, bottom: float = BOTTOM,
            side_by_side: bool = False):
    """A titled figure of `panels` axes stacked over one x axis (or side by side, each its own axes), with the
    house grid and tick size."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGURE_INCHES, dpi=DPI)
    if side_by_side:
        figure.subplots_adjust(left=left, right=right, bottom=bottom, top=TOP, wspace=BACKTEST_WSPACE)
        axes = figure.subplots(1, panels, squeeze=False)[0, :]
    else:
        figure.subplots_adjust(left=left, right=right, bottom=bottom, top=TOP, hspace=0.35)
        axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(title, fontsize=TITLE_POINTS, y=0.985, va="top", wrap=True)
    for ax in axes:
        ax.grid(True, linewidth=0.4, color="#DDDDDD", zorder=0)
        ax.tick_params(labelsize=LABEL_POINTS)
    return (figure, axes[0]) if panels == 1 else (figure, tuple(axes))


def _text_width(texts: list[str]) -> float:
    """The widest of these labels as a fraction of the figure's width."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer, font = RendererAgg(1, 1, DPI), FontProperties(size=LABEL_POINTS)
    widest = max(renderer.get_text_width_height_descent(text, font, ismath=False)[0] for text in texts)
    return widest / (FIGURE_INCHES[0] * DPI)


def wide_span(values: pl.Series) -> bool:
    """Whether positive values span more than LOG_SPAN times, so that a log scale shows them better."""
    values = values.drop_nulls()
    return values.len() > 0 and values.min() > 0 and values.max() / values.min() > LOG_SPAN


def _scale(ax: Axes, axis: str, values: pl.Series, label: str) -> None:
    """Linear or log scale by the values' span, plain-number ticks (1-2-5 per decade on a log scale), the label."""
    from matplotlib.ticker import LogLocator, NullLocator

    log = wide_span(values)
    which = getattr(ax, f"{axis}axis")
    getattr(ax, f"set_{axis}scale")("log" if log else "linear")
    which.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)) if log else _linear_locator())
    which.set_minor_locator(NullLocator())  # minor ticks cost more to draw than they tell
    which.set_major_formatter(_plain_number_formatter())
    which.set_label_text(label + (" (log scale)" if log else ""), fontsize=LABEL_POINTS + 1)


def _linear_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10])


def _plain_number_formatter():
    """Tick labels as plain numbers: 0.5, 250, 2,500, 25M."""
    from matplotlib.ticker import FuncFormatter

    def plain(value: float, _position: int) -> str:
        if abs(value) >= 1e6:
            return f"{value / 1e6:,g}M"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"

    return FuncFormatter(plain)
