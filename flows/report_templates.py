"""What every report page shares: the Jinja2 environments of flows/templates/ (Markdown for the pages, plain text for
notifications), the outcome labels the templates name, and the short forms of a link, a benchmark, a price source and
a CSV. The pages themselves: flows/reports.py (the index and the workload pages), flows/offers_page.py,
flows/estimates_page.py."""

from __future__ import annotations

import io
from pathlib import Path

import jinja2
import polars as pl
from markupsafe import Markup

from flows.chart_kit import OUTCOME_UNITS
from flows.formatting import FILTERS, md_escape
from flows.safe_yaml import cut

TEMPLATES_DIR = Path(__file__).parent / "templates"
# A service's energy per successful request is the work alone, at full load, while its USD pays for whole instances
# sized for the peak, idle or not (that month's energy: inference_costs.provisioned_kwh_per_month). The pages say so
# wherever they name the unit; the charts' axes keep the unit alone (a longer axis title does not fit the figure).
SERVING_WORK_BASIS = " at full load, idle not counted"
PAGE_UNITS = {metric: unit + (SERVING_WORK_BASIS if metric.startswith(("kwh_", "kgco2e_"))
                              and metric.endswith("_successful_requests") else "")
              for metric, unit in OUTCOME_UNITS.items()}
OUTCOME_LABELS = {
    "completed_run_usd": "completed-run USD",
    "usd_per_million_tokens": "USD per million output tokens",
    "usd_per_million_successful_requests": "USD per million successful requests",
    # a workload whose objective is energy or emissions: its unit ("kWh per completed run")
    **{metric: unit for metric, unit in PAGE_UNITS.items() if metric.startswith(("kwh_", "kgco2e_"))},
}
# the units ("kWh per completed run") split into what an outcome is counted in and what it is per
OUTCOME_CURRENCY = {metric: unit.split(" per ", 1)[0] for metric, unit in PAGE_UNITS.items()}
PER_OUTCOME = {metric: "per " + unit.split(" per ", 1)[1] for metric, unit in PAGE_UNITS.items()}
# beside the likely range of a calibrated row whose factor no leave-one-out comparison tested (marts.rankings
# band_untested: the factor comes from one setup, so the band is the family's spread, never checked on this chip)
UNTESTED_BAND = "not back-tested: factor from one setup"


def _environment(markdown: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters.update(FILTERS)
    env.globals.update(OUTCOME_LABELS=OUTCOME_LABELS, PER_OUTCOME=PER_OUTCOME, OUTCOME_CURRENCY=OUTCOME_CURRENCY,
                       UNTESTED_BAND=UNTESTED_BAND)
    if not markdown:  # notifications are plain text: nothing to escape
        for name in ("md", "md_line", "code"):
            env.filters[name] = lambda text: "—" if text is None else str(text)
    return env


MARKDOWN = _environment(markdown=True)
PLAIN_TEXT = _environment(markdown=False)


def compile_templates() -> None:
    """Compile every page template now (Jinja keeps them): a run does it while its Prefect server starts."""
    for name in MARKDOWN.list_templates():
        MARKDOWN.get_template(name)


def link(text: str, target: str) -> Markup:
    """A Markdown link whose text comes from data (escaped) to a file of the report."""
    return Markup(f"[{md_escape(text)}]({target})")


def benchmark_label(r: dict) -> str:
    """A row's benchmark and, where it has one, its date; a label of any length (an MLPerf system name is the
    submitter's text) cut to BENCHMARK_LABEL_CHARS, saying how long it was. A calibrated row's label names its date
    itself ("fitted from ... as of <date> (newest)"): it is not written twice."""
    dated = r["benchmark_as_of"] and r.get("basis") != "calibrated"
    return cut(r["benchmark_label"], BENCHMARK_LABEL_CHARS) + (f" ({r['benchmark_as_of']})" if dated else "")


# A benchmark label's bound on the pages: hweval's own notes in a label (a precision cross-check, a scale) run to
# ~300 characters; a submitter's system name of 200,000 made a workload page of 1.8 MB
BENCHMARK_LABEL_CHARS = 1_000


def price_source(r: dict) -> str:
    """A row's price source and as-of date, UNVERIFIED where sources.yaml marks the file so, and STALE where the source
    could not be refreshed by this run (`price_stale`, set by flows/reports.py: the price is its last good load's)."""
    return (f"{r['price_source_id']} ({r['price_as_of']})" + (", UNVERIFIED" if r.get("price_unverified") else "")
            + (STALE_MARK if r.get("price_stale") else ""))


# what a page says at its top when no run is named (a page rendered on its own): no run line, no stale banner
NO_HEAD = {"run_id": None, "stale_past_limit": None, "stale_sources": ()}
# beside a price whose source this run could not refresh (the price is its last good load's)
STALE_MARK = ", STALE: not refreshed this run"

# what a spreadsheet runs as a formula when a cell starts with it (OWASP's list for CSV injection)
FORMULA_START = r"^([=+\-@\t\r])"


def csv_text(frame: pl.DataFrame) -> str:
    """A frame as the CSV file beside a page (every column, a header line), for spreadsheets: a text cell that one
    would run as a formula (it starts with =, +, -, @, a tab or a carriage return: a price sheet's name, say) is
    written after an apostrophe, which spreadsheets take as "this is text" and do not show."""
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    buffer = io.StringIO()
    frame.with_columns(pl.col(text).str.replace(FORMULA_START, "'$1")).write_csv(buffer)
    return buffer.getvalue()
