"""The charts of a workload page: cost of the outcome against USD per chip-hour, the top candidates, the history of
the pick and, on a serving workload's page, cost against interactivity (flows/frontier_chart.py). What every chart
shares (the `Chart`, the house look, the figure plumbing) is flows/chart_kit.py's.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from flows import frontier_chart, relations
from flows.chart_kit import (
    FAMILY_COLOURS,
    LABEL_POINTS,
    MARK_COLOUR,
    OTHER_FAMILY_COLOUR,
    RIGHT,
    TOP,
    Chart,
    annotate,
    as_times,
    family_order,
    linear_locator,
    make_chart,
    offer_label,
    outcome_unit,
    plain_number_formatter,
    regional_offer_label,
    set_scale,
    text_width,
    titled_figure,
    two_lines,
)
from flows.formatting import plural, usd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TOP_BARS = 10  # candidates in the top-candidates bar chart
HISTORY_RUNS = 90  # runs (as-of dates) the history chart looks back over, ending at the page's as-of
HISTORY_MIN_RUNS = 2  # fewer runs than this draw no history chart: one point is no trend
HISTORY_DATE_TICKS = 6  # up to this many runs, each run's date is a tick; more, and the dates are spaced evenly
BAR_LABEL_CHARS = 56  # a longer bar label is cut with an ellipsis, so the bars keep half the width
SCATTER_RIGHT = 0.74  # the scatter's legend sits right of it
BARS_BOTTOM = 0.2  # the bars' basis legend sits under the axis label
HISTORY_LEFT = 0.14  # the history's outcome label takes two lines
# basis -> (fill colour, hatch), from the most measured to the least: one blue paling towards grey (told apart with
# the common colour-vision deficiencies), and a hatch that tells the bases apart in grey print too
BASIS_STYLES = {"measured": ("#0072B2", ""), "scaled": ("#56B4E9", "//"), "calibrated": ("#B4DBF3", "\\\\"),
                "estimated": ("#D9D9D9", "..")}
OTHER_BASIS_STYLE = ("#FFFFFF", "xx")

# offer_regions: the regions the workload ranks that instance type on that term in; a caption names the region of an
# offer sold in more than one (chart_kit.regional_offer_label)
CANDIDATES_SQL = """
select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, family, basis,
       usd_per_chip_hour, chip_hour_rank, outcome_metric, outcome_value, outcome_rank,
       count(distinct region) over (partition by cloud, instance_type, pricing_term) as offer_regions
from marts.rankings
where as_of = $as_of and workload_id = $workload_id
order by outcome_rank, usd_per_chip_hour, candidate_id
"""

TOP_CANDIDATES_SQL = """
select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, basis,
       outcome_metric, outcome_value, outcome_rank,
       count(distinct region) over (partition by cloud, instance_type, pricing_term) as offer_regions
from marts.rankings
where as_of = $as_of and workload_id = $workload_id
order by outcome_rank, usd_per_chip_hour, candidate_id
limit $limit
"""

# the excluded offers cheaper per chip-hour than any ranked candidate: the cheapest chip-hour the scatter marks is then
# the cheapest of those ranked, as the Decision says it (marts.decisions); and whether its error band overlaps the
# pick's, so that it may be the cheaper one (the Decision says that too)
CHEAPER_EXCLUDED_SQL = """
select cheaper_excluded_offers, chip_hour_pick_may_cost_less
from marts.decisions where as_of = $as_of and workload_id = $workload_id
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
    select offer_id, cloud, instance_type, pricing_term, outcome_metric from picks where as_of = $as_of
),

-- the current pick's price source, when this run could not refresh it: its price is its last good load's
current_price_stale as (
    select prices.price_source_id, loads.stale_since
    from current_pick
    inner join marts.price_history as prices on prices.as_of = $as_of and prices.offer_id = current_pick.offer_id
    inner join ops.source_loads as loads
        on loads.as_of = $as_of and loads.source_id = prices.price_source_id and loads.status = 'stale'
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
        (select count(*) from last_runs) as window_runs,
        (select price_source_id from current_price_stale) as current_price_stale_source,
        (select stale_since from current_price_stale) as current_price_stale_since
    from picks
    -- the picks in the current pick's unit only: a workload whose objective changed (USD to kWh) starts again there
    inner join current_pick on current_pick.outcome_metric = picks.outcome_metric
    left join marts.price_history as prices
        on prices.as_of = picks.as_of and prices.offer_id = current_pick.offer_id
        -- the bound again as a scalar subquery, not a join with it: DuckDB prunes row groups by a scalar's value
        -- (joined, the bound reads every run's prices: ~160 ms warm instead of ~10)
        and prices.as_of >= (select min(as_of) from last_runs)
)

select * from final order by as_of
"""


def workload_charts(con: duckdb.DuckDBPyConnection, as_of: dt.date, workload_id: str) -> list[Chart]:
    """The charts of one workload page, in page order; [] when the workload has no ranked candidate."""
    params = {"as_of": as_of, "workload_id": workload_id}
    candidates = relations.fetch_frame(con, CANDIDATES_SQL, params)
    if candidates.is_empty():
        return []
    top = relations.fetch_frame(con, TOP_CANDIDATES_SQL, params | {"limit": TOP_BARS})
    history = relations.fetch_frame(con, HISTORY_SQL, params | {"limit": HISTORY_RUNS})
    decision = relations.fetch_frame(con, CHEAPER_EXCLUDED_SQL, params)
    cheaper_excluded = decision["cheaper_excluded_offers"].sum()
    may_cost_less = bool(decision["chip_hour_pick_may_cost_less"].any())
    charts = [
        make_chart(f"{workload_id}-outcome-vs-chip-hour.png", outcome_vs_chip_hour_title(workload_id, candidates),
                   outcome_vs_chip_hour_caption(candidates, cheaper_excluded, may_cost_less), candidates,
                   outcome_vs_chip_hour_figure),
        make_chart(f"{workload_id}-top-candidates.png", top_candidates_title(workload_id, top),
                   top_candidates_caption(top, candidates.height), top, top_candidates_figure),
    ]
    if history.height >= HISTORY_MIN_RUNS:
        charts.append(make_chart(f"{workload_id}-history.png", history_title(workload_id, history),
                                 history_caption(history), history, history_figure))
    frontier = frontier_chart.frontier_chart(con, as_of, workload_id)
    if frontier is not None:
        charts.append(frontier)
    return charts


def pick_row(candidates: pl.DataFrame) -> dict:
    """The workload's pick: lowest outcome, then lowest chip-hour price, then candidate id (as rank_history)."""
    return candidates.sort(["outcome_rank", "usd_per_chip_hour", "candidate_id"]).row(0, named=True)


def cheapest_chip_hour_row(candidates: pl.DataFrame) -> dict:
    """The cheapest candidate per chip-hour; of equal chip-hour prices, the one with the best outcome."""
    return candidates.sort(["chip_hour_rank", "outcome_rank", "candidate_id"]).row(0, named=True)


# 1. Outcome cost against USD per chip-hour: one point per candidate, coloured by accelerator family.

def outcome_vs_chip_hour_title(workload_id: str, candidates: pl.DataFrame) -> str:
    return f"{workload_id}: {outcome_unit(candidates)} against USD per chip-hour, {candidates.height} candidates"


def outcome_vs_chip_hour_caption(candidates: pl.DataFrame, cheaper_excluded: int = 0,
                                 may_cost_less: bool = False) -> str:
    """`cheaper_excluded`: the offers cheaper per chip-hour that the workload excludes; the cheapest chip-hour is then
    said to be of the ranked candidates, as the Decision says it. `may_cost_less`: the cheapest chip-hour's error band
    overlaps the pick's (marts.decisions chip_hour_pick_may_cost_less): its multiple is not settled, and said so."""
    pick, cheapest = pick_row(candidates), cheapest_chip_hour_row(candidates)
    among = " among the ranked candidates" if cheaper_excluded else ""
    excluded = (f"; {plural(cheaper_excluded, 'offer')} cheaper per chip-hour "
                f"{'is' if cheaper_excluded == 1 else 'are'} excluded" if cheaper_excluded else "")
    text = (f"Lower is better on both axes; the pick, {regional_offer_label(pick)}, sits at "
            f"{usd(pick['usd_per_chip_hour'])} USD per chip-hour")
    if cheapest["candidate_id"] == pick["candidate_id"]:
        return text + f" and is also the cheapest chip-hour{among}{excluded}."
    per_outcome = outcome_unit(candidates).removeprefix("USD ")
    unsettled = " (too close to call: it may be cheaper)" if may_cost_less else ""
    return (text + f"; the cheapest chip-hour{among}, {regional_offer_label(cheapest)}, costs "
            f"{as_times(cheapest['outcome_value'], pick['outcome_value'])} as much {per_outcome}{unsettled}{excluded}.")


def outcome_vs_chip_hour_figure(candidates: pl.DataFrame, title: str) -> Figure:
    """A scatter of outcome cost against USD per chip-hour, one collection per family, pick and cheapest marked."""
    figure, ax = titled_figure(title, right=SCATTER_RIGHT)
    for family in sorted(candidates["family"].unique().to_list(), key=family_order):
        points = candidates.filter(pl.col("family").eq_missing(family))
        ax.scatter(points["usd_per_chip_hour"].to_list(), points["outcome_value"].to_list(), s=28, alpha=0.85,
                   color=FAMILY_COLOURS.get(family, OTHER_FAMILY_COLOUR), edgecolors="white", linewidths=0.5,
                   label=family or "other", zorder=2)
    set_scale(ax, "x", candidates["usd_per_chip_hour"], "USD per chip-hour")
    set_scale(ax, "y", candidates["outcome_value"], outcome_unit(candidates))
    pick, cheapest = pick_row(candidates), cheapest_chip_hour_row(candidates)
    same = cheapest["candidate_id"] == pick["candidate_id"]
    ax.plot([pick["usd_per_chip_hour"]], [pick["outcome_value"]], linestyle="none", marker="*", markersize=13,
            markerfacecolor="none", markeredgecolor=MARK_COLOUR, markeredgewidth=1.4, label="pick", zorder=3)
    if not same:
        ax.plot([cheapest["usd_per_chip_hour"]], [cheapest["outcome_value"]], linestyle="none", marker="D",
                markersize=9, markerfacecolor="none", markeredgecolor=MARK_COLOUR, markeredgewidth=1.2,
                label="cheapest chip-hour", zorder=3)
    ax.autoscale_view()  # limits final before the labels are placed against them
    dots = list(zip(candidates["usd_per_chip_hour"].to_list(), candidates["outcome_value"].to_list(), strict=True))
    if same:
        annotate(ax, [(pick, "pick and cheapest chip-hour: " + offer_label(pick))], others=dots)
    else:
        annotate(ax, [(pick, "pick: " + offer_label(pick)),
                      (cheapest, "cheapest chip-hour: " + offer_label(cheapest))], others=dots)
    figure.legend(*ax.get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(SCATTER_RIGHT + 0.01, TOP),
                  fontsize=LABEL_POINTS, frameon=False)
    return figure


# 2. Top candidates: horizontal bars of the outcome cost, styled by basis.

def top_candidates_title(workload_id: str, top: pl.DataFrame) -> str:
    return f"{workload_id}: the {top.height} cheapest candidates by {outcome_unit(top)}"


def top_candidates_caption(top: pl.DataFrame, candidates: int) -> str:
    first, last = top.row(0, named=True), top.row(top.height - 1, named=True)
    text = (f"Shorter is better; of {candidates} candidates the pick, {regional_offer_label(first)}, costs "
            f"{usd(first['outcome_value'])} {outcome_unit(top)}")
    if top.height > 1:
        text += (f" and number {top.height} {usd(last['outcome_value'])}, "
                 f"{as_times(last['outcome_value'], first['outcome_value'])} as much")
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
    left = text_width(labels) + 0.035
    figure, ax = titled_figure(title, left=left, bottom=BARS_BOTTOM)
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
    room = (text_width(value_labels) + 0.015) / (RIGHT - left)  # share of the axes the values written need
    ax.set_xlim(0, max(values) / max(1 - room, 0.5))
    ax.xaxis.set_major_locator(linear_locator())
    ax.xaxis.set_major_formatter(plain_number_formatter())
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
            f"{last['as_of']} ({as_times(last['outcome_value'], first['outcome_value'])})")
    changes = history["pick_offer_id"].ne(history["pick_offer_id"].shift(1)).sum()
    text += {0: ", with the same pick", 1: ", the pick changing once"}.get(changes,
                                                                         f", the pick changing {changes} times")
    price, price_then = usd(last["current_offer_usd_per_hour"]), first["current_offer_usd_per_hour"]
    text += f"; the current pick, {offer_label(last, prefix='current_')}, costs {price} USD per hour"
    if price_then is None:
        text += f" and was not priced on {first['as_of']}."
    else:
        text += (f", as on {first['as_of']}." if usd(price_then) == price else
                 f" against {usd(price_then)} on {first['as_of']}.")
    if last["current_price_stale_source"] is not None:  # the price the run used is not of its date: say so
        since = last["current_price_stale_since"]  # as the page's pick sentence says it
        text += (f" That price is not fresh: this run could not refresh {last['current_price_stale_source']}, so it is"
                 + (f" from its last good load, by the run of {since}." if since else " one no run has refreshed."))
    return text


def history_figure(history: pl.DataFrame, title: str) -> Figure:
    """Two panels over the runs' as-of dates: the best outcome cost, and the current pick offer's USD per hour."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DateFormatter

    figure, (outcome_ax, price_ax) = titled_figure(title, panels=2, left=HISTORY_LEFT)
    dates = history["as_of"].to_list()
    outcome_ax.plot(dates, history["outcome_value"].to_list(), marker="o", markersize=4, linewidth=1.4,
                    color=FAMILY_COLOURS["gpu"], zorder=2)
    set_scale(outcome_ax, "y", history["outcome_value"], two_lines(outcome_unit(history)))
    outcome_ax.set_title("the best outcome of each run", fontsize=LABEL_POINTS, loc="left")
    prices = [float("nan") if v is None else v for v in history["current_offer_usd_per_hour"].to_list()]
    price_ax.plot(dates, prices, marker="o", markersize=4, linewidth=1.4, color=MARK_COLOUR, zorder=2)
    set_scale(price_ax, "y", history["current_offer_usd_per_hour"], "USD per hour")
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
