"""What every chart of the reports shares: the `Chart` a page holds and its PNG's key (the drawing code), the house
look (size, fonts, margins, colours), the wording that names an offer and a unit, and the figure plumbing on
Matplotlib's Agg canvas.

The charts themselves: flows/charts.py (a workload page's), flows/frontier_chart.py (cost against interactivity, on a
serving workload's page) and flows/backtest_chart.py (the estimates page's). Each chart is a query of the marts (its
`data`, exactly the rows plotted), a pure function that draws a `Figure` from that frame, and a one-line caption that
says what to read from it. Matplotlib is imported on first use, so importing these modules costs nothing to a command
that draws no chart. A chart's PNG is drawn once for the same code, data and title, by a chart worker when one is free
(flows/chart_images.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from flows import chart_images, relations
from flows.formatting import ratio

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LOG_SPAN = 20.0  # an axis turns logarithmic when its largest value is more than this many times its smallest
FIGURE_INCHES = (7.0, 4.0)  # width x height of every chart
DPI = 100  # pixels per inch of the PNG: 700 x 400 pixels
LABEL_POINTS = 8  # font size of tick labels, annotations and bar values
TITLE_POINTS = 10  # font size of a chart's title
# margins as fractions of the figure, fixed: a layout engine would draw each chart twice
LEFT, RIGHT, BOTTOM, TOP = 0.12, 0.97, 0.13, 0.86
PANEL_SPACE = 0.35  # between two panels, as a share of a panel's height (stacked) or width (side by side)
ANNOTATION_OFFSET = 16  # pixels from a marked point to its label
ANNOTATION_STEPS = 4  # label heights a label may move away from its point to clear the others
DOT_CLEARANCE = 4  # pixels: half the side of the square a plotted point (a scatter dot) keeps clear of a label
LEADER_SAMPLES = 40  # points along a label's leader line checked against the other labels
LEGEND_HANDLE_WIDTH = 0.1  # share of the figure's width a legend entry's marker and padding take beside its text

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
MARK_COLOUR = "#D55E00"  # the pick and the cheapest chip-hour

# the chart modules and how they write values on the charts: each chart's key holds them, so that a change to any of
# them draws every chart again
DRAWING_MODULES = ("chart_kit.py", "charts.py", "frontier_chart.py", "backtest_chart.py", "formatting.py")
DRAWING_CODE = hashlib.sha256(b"".join(Path(__file__).with_name(name).read_bytes()
                                       for name in DRAWING_MODULES)).hexdigest()


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


def table_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    """Whether the warehouse has this table yet (a warehouse built before the mart existed has not)."""
    return bool(relations.kind(con, schema, name))


def make_chart(name: str, title: str, caption: str, data: pl.DataFrame,
               draw: Callable[[pl.DataFrame, str], Figure]) -> Chart:
    """A chart of the page: its PNG drawn once for the same drawing code, data and title (flows/chart_images.py)."""
    return Chart(file_name=f"charts/{name}", title=title, caption=caption, data=data,
                 drawing=chart_images.image(draw, data, title, DRAWING_CODE))


# Wording shared by the charts.

def offer_label(row: dict, *, prefix: str = "") -> str:
    """`cloud instance_type (pricing_term)`, the way the charts name an offer."""
    return f"{row[prefix + 'cloud']} {row[prefix + 'instance_type']} ({row[prefix + 'pricing_term']})"


def regional_offer_label(row: dict) -> str:
    """The offer as offer_label names it, or `cloud instance_type (region, pricing_term)` where the workload has
    offers of that instance type on that term in more than one region (the row's `offer_regions`)."""
    if row["offer_regions"] > 1:
        return f"{row['cloud']} {row['instance_type']} ({row['region']}, {row['pricing_term']})"
    return offer_label(row)


def outcome_unit(frame: pl.DataFrame) -> str:
    return OUTCOME_UNITS.get(frame["outcome_metric"][0], "USD per outcome")


def as_times(value: float, base: float) -> str:
    """How many times `base` the value is, by the reports' ratio filter: 2.70x, 12x."""
    return ratio(value / base if base else None)


def family_order(family: str | None) -> tuple[int, str]:
    known = list(FAMILY_COLOURS)
    return (known.index(family), "") if family in known else (len(known), family or "")


def annotate(ax: Axes, marks: list[tuple[dict, str]], x_key: str = "usd_per_chip_hour",
             y_key: str = "outcome_value", others: list[tuple[float, float]] = ()) -> None:
    """Label marked points: each label beside its point, at the first of its places (up to ANNOTATION_STEPS label
    heights above or below, right or left) with the fewest faults, by weight: outside the axes; over the marks or the
    labels so far; over the `others` (the other points plotted, in data coordinates) or with a leader line through a
    label."""
    height = LABEL_POINTS * 1.5 * DPI / 72
    (axes_left, axes_bottom), (axes_right, axes_top) = ax.transAxes.transform([(0, 0), (1, 1)])
    points = [tuple(ax.transData.transform((row[x_key], row[y_key]))) for row, _ in marks]
    mark = ANNOTATION_OFFSET * 0.75  # half the side of the square a marker keeps clear
    taken = [(x - mark, y - mark, x + mark, y + mark) for x, y in points]  # boxes in pixels: left, bottom, right, top
    dots = [(x - DOT_CLEARANCE, y - DOT_CLEARANCE, x + DOT_CLEARANCE, y + DOT_CLEARANCE)
            for x, y in (ax.transData.transform(other) for other in others)]

    def meets(box: tuple[float, float, float, float], other: tuple[float, float, float, float]) -> bool:
        return box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]

    labels: list[tuple[float, float, float, float]] = []
    leaders: list[list[tuple[float, float]]] = []

    def leader(x: float, y: float, box: tuple[float, float, float, float]) -> list[tuple[float, float]]:
        # the line Matplotlib draws from the point toward the label's centre, as points along it
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return [(x + (cx - x) * i / LEADER_SAMPLES, y + (cy - y) * i / LEADER_SAMPLES) for i in range(LEADER_SAMPLES)]

    def within(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
        return box[0] < point[0] < box[2] and box[1] < point[1] < box[3]

    def faults(box: tuple[float, float, float, float], x: float, y: float) -> tuple[bool, int, int]:
        # in order of weight: outside the axes; over a mark or label; then the plotted points it covers, a leader line
        # through a label counting as one
        own = [p for p in leader(x, y, box) if not within(p, box)]
        return (not (axes_bottom <= box[1] and box[3] <= axes_top), sum(meets(box, o) for o in taken),
                sum(meets(box, dot) for dot in dots) + any(within(p, label) for p in own for label in labels)
                + any(within(p, box) for line in leaders for p in line))

    for (row, text), (x, y) in zip(marks, points, strict=True):
        width = text_width([text]) * FIGURE_INCHES[0] * DPI
        lefts = [x + ANNOTATION_OFFSET, x - ANNOTATION_OFFSET - width]
        if axes_right - x < x - axes_left:
            lefts.reverse()
        ups = [True, False] if axes_top - y > y - axes_bottom else [False, True]
        lefts = [min(max(left, axes_left), axes_right - width) for left in lefts]  # slid into the axes
        boxes = [(left, bottom, left + width, bottom + height)
                 for step in range(ANNOTATION_STEPS) for up in ups for left in lefts
                 for bottom in [y + ANNOTATION_OFFSET + step * height if up
                                else y - ANNOTATION_OFFSET - (step + 1) * height]]
        box = min(boxes, key=lambda b: faults(b, x, y))  # the first place of the fewest faults
        taken.append(box)
        labels.append(box)
        leaders.append(leader(x, y, box))
        ax.annotate(text, xy=(row[x_key], row[y_key]), xytext=(box[0] - x, box[1] - y),
                    textcoords="offset pixels", ha="left", va="bottom", fontsize=LABEL_POINTS, color=MARK_COLOUR,
                    zorder=4, arrowprops={"arrowstyle": "-", "color": MARK_COLOUR, "linewidth": 0.8, "shrinkA": 0})


def two_lines(label: str) -> str:
    """A long axis label broken at the space that makes its two lines most even."""
    spaces = [i for i, c in enumerate(label) if c == " "]
    if not spaces:
        return label
    cut = min(spaces, key=lambda i: max(i, len(label) - i - 1))
    return label[:cut] + "\n" + label[cut + 1:]


# Figure plumbing.

def titled_figure(title: str, *, panels: int = 1, left: float = LEFT, right: float = RIGHT, bottom: float = BOTTOM,
                  side_by_side: bool = False, space: float = PANEL_SPACE):
    """A titled figure of `panels` axes stacked over one x axis (or side by side, each its own axes), with the
    house grid and tick size.

    Every text is drawn as written. Labels come from data (an instance type, a price sheet's name), and Matplotlib
    reads a pair of `$` as math: it draws `$x^2$` as a formula and fails the run on one it cannot parse. Math is off
    for every text made from here on (in this process or a chart worker). The title alone keeps it on, with each `$`
    escaped: Matplotlib measures a wrapped text's lines as math wherever it has a pair of `$`, even with math off."""
    import matplotlib
    from matplotlib.figure import Figure

    matplotlib.rcParams["text.parse_math"] = False
    figure = Figure(figsize=FIGURE_INCHES, dpi=DPI)
    if side_by_side:
        figure.subplots_adjust(left=left, right=right, bottom=bottom, top=TOP, wspace=space)
        axes = figure.subplots(1, panels, squeeze=False)[0, :]
    else:
        figure.subplots_adjust(left=left, right=right, bottom=bottom, top=TOP, hspace=space)
        axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(title.replace("$", r"\$"), fontsize=TITLE_POINTS, y=0.985, va="top", wrap=True, parse_math=True)
    for ax in axes:
        ax.grid(True, linewidth=0.4, color="#DDDDDD", zorder=0)
        ax.tick_params(labelsize=LABEL_POINTS)
    return (figure, axes[0]) if panels == 1 else (figure, tuple(axes))


def text_width(texts: list[str]) -> float:
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


def set_scale(ax: Axes, axis: str, values: pl.Series, label: str) -> None:
    """Linear or log scale by the values' span, plain-number ticks (1-2-5 per decade on a log scale), the label."""
    from matplotlib.ticker import LogLocator, NullLocator

    log = wide_span(values)
    which = getattr(ax, f"{axis}axis")
    getattr(ax, f"set_{axis}scale")("log" if log else "linear")
    which.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)) if log else linear_locator())
    which.set_minor_locator(NullLocator())  # minor ticks cost more to draw than they tell
    which.set_major_formatter(plain_number_formatter())
    which.set_label_text(label + (" (log scale)" if log else ""), fontsize=LABEL_POINTS + 1)


def linear_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10])


def plain_number_formatter():
    """Tick labels as plain numbers: 0.5, 250, 2,500, 25M."""
    from matplotlib.ticker import FuncFormatter

    def plain(value: float, _position: int) -> str:
        if abs(value) >= 1e6:
            return f"{value / 1e6:,g}M"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"

    return FuncFormatter(plain)
