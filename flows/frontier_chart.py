"""A serving workload's cost against interactivity: USD per million output tokens at each load point against the
output tokens/s per user, one line per offer (marts.serving_load_points). Drawn on the workload's page
(flows/charts.py); what every chart shares is flows/chart_kit.py's.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from flows import relations
from flows.chart_kit import (
    LABEL_POINTS,
    LEGEND_HANDLE_WIDTH,
    MARK_COLOUR,
    RIGHT,
    TOP,
    Chart,
    annotate,
    make_chart,
    regional_offer_label,
    set_scale,
    table_exists,
    text_width,
    titled_figure,
)
from flows.formatting import num, plural, usd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FRONTIER_LINES = 6  # offers (candidates) the cost-against-interactivity chart draws at most, the cheapest first
# an offer needs load points at this many different per-user speeds for a frontier worth drawing: two MLPerf Server
# results of one offer (two rounds, two submitters) are both at the scenario's floor (5 tokens/s per user), and a line
# through them, straight up at one speed, was drawn as if it were a trade-off
FRONTIER_MIN_POINTS = 2
FRONTIER_LEGEND_MIN_RIGHT = 0.5  # the frontier's legend of offer names takes at most the figure's right half
FRONTIER_LABEL_CHARS = 44  # a longer offer name in the frontier's legend is cut with an ellipsis
# one colour per offer line of the frontier: Okabe-Ito without the mark colour and the yellow that vanishes on white
LINE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#000000")
FLOOR_BASIS = "scenario p99 TPOT bound (a floor)"  # serving_load_points: a per-user speed that is a lower bound

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

regions as (
    -- an instance type the workload has offers of in more than one region: its lines name their region
    select cloud, instance_type, pricing_term, count(distinct region) as offer_regions
    from marts.serving_load_points
    where as_of = $as_of and workload_id = $workload_id
    group by all
),

lines as (
    select
        candidate_id,
        count(distinct tokens_per_s_per_user) as points,  -- speeds, not points: see FRONTIER_MIN_POINTS
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

select kept.line_rank, points.*, regions.offer_regions
from points
inner join kept using (candidate_id)
inner join regions using (cloud, instance_type, pricing_term)
order by kept.line_rank, points.tokens_per_s_per_user, points.load_point
"""


def frontier_chart(con: duckdb.DuckDBPyConnection, as_of: dt.date, workload_id: str) -> Chart | None:
    """The workload's cost against interactivity; None when no offer has a load point to draw (or the warehouse
    has no marts.serving_load_points yet)."""
    if not table_exists(con, "marts", "serving_load_points"):
        return None
    frontier = relations.fetch_frame(con, FRONTIER_SQL, {"as_of": as_of, "workload_id": workload_id,
                                                         "limit": FRONTIER_LINES, "min_points": FRONTIER_MIN_POINTS})
    if frontier.is_empty():
        return None
    return make_chart(f"{workload_id}-cost-vs-interactivity.png", frontier_title(workload_id, frontier),
                      frontier_caption(frontier), frontier, frontier_figure)


def frontier_title(workload_id: str, frontier: pl.DataFrame) -> str:
    """Counts offers, not lines: an offer drawn at two precisions is two lines of one offer."""
    lines, offers = frontier["candidate_id"].n_unique(), frontier["offer_id"].n_unique()
    drawn = plural(offers, "offer") if lines == offers else f"{plural(lines, 'line')} of {plural(offers, 'offer')}"
    return f"{workload_id}: USD per million output tokens against output tokens/s per user, {drawn}"


def frontier_caption(frontier: pl.DataFrame) -> str:
    labels = dict(zip(frontier["candidate_id"].unique(maintain_order=True).to_list(), frontier_line_labels(frontier),
                      strict=True))
    one_precision = frontier["candidate_id"].n_unique() > frontier["offer_id"].n_unique()
    text = (f"Each line is one offer{' at one precision' if one_precision else ''} at the load points measured; "
            "further right is faster for each user, lower is cheaper per token")
    best = cheapest_selected(frontier)
    if best is None:
        text += "; none of the points drawn is the one the workload is priced at"
    else:
        text += (f"; the cheapest of the points the latency objective selects is {labels[best['candidate_id']]} at "
                 f"{best['load_point']}: {usd(best['usd_per_million_tokens'])} USD per million output tokens at "
                 f"{num(best['tokens_per_s_per_user'], 1)} tokens/s per user")
    if frontier["tokens_per_s_per_user_basis"].eq(FLOOR_BASIS).any():
        text += "; an MLPerf scenario's speed (triangle) is a floor, from its p99 TPOT bound"
    if not frontier["meets_slo"].all():
        text += "; hollow points miss the objective"
    return text + "."


def cheapest_selected(frontier: pl.DataFrame) -> dict | None:
    """Of the points the latency objective selects (one an offer), the cheapest per token: the one the workload's
    pick is priced at when its line is drawn. Not the first line's: lines come offers with the most points first."""
    selected = frontier.filter(pl.col("is_selected"))
    if selected.is_empty():
        return None
    return selected.sort("usd_per_million_tokens", "candidate_id", "load_point").row(0, named=True)


def frontier_line_labels(frontier: pl.DataFrame) -> list[str]:
    """One label per line, in line order: the offer, with its region where the workload has offers of that instance
    type in several regions, then the precision and the region where two lines are alike."""
    rows = frontier.unique("candidate_id", keep="first", maintain_order=True).to_dicts()
    labels = [regional_offer_label(r) for r in rows]
    # the precision as the page's ranking gives it (fp16, not its class bf16)
    for extra in (lambda r: r["precision"], lambda r: r["region"]):
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
    right = max(RIGHT - text_width(labels + keys) - LEGEND_HANDLE_WIDTH, FRONTIER_LEGEND_MIN_RIGHT)
    figure, ax = titled_figure(title, right=right)
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
    set_scale(ax, "x", frontier["tokens_per_s_per_user"], "output tokens/s per user")
    set_scale(ax, "y", frontier["usd_per_million_tokens"], "USD per million output tokens")
    ax.autoscale_view()  # limits final before the label is placed against them
    best = cheapest_selected(frontier)
    if best is not None:
        annotate(ax, [(best, "selected: " + best["load_point"])], "tokens_per_s_per_user", "usd_per_million_tokens")
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
