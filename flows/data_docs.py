"""Great Expectations Data Docs for a run: one page per validated batch (GX's own validation-results renderer)
and an index, published with the reports under reports/<date>/data-docs/."""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ValidatedBatch:
    source_id: str
    table: str
    rows_in: int
    rows_quarantined: int
    result: Any  # great_expectations ExpectationSuiteValidationResult


def page_name(source_id: str) -> str:
    return f"{source_id}.html"


def build_site(batches: list[ValidatedBatch], site_dir: Path, title: str) -> Path:
    """Write the Data Docs pages and their index into `site_dir` (replaced); return the index path."""
    from great_expectations.render.renderer import ValidationResultsPageRenderer
    from great_expectations.render.view import DefaultJinjaPageView

    if site_dir.exists():
        shutil.rmtree(site_dir)
    site_dir.mkdir(parents=True)
    renderer, view = ValidationResultsPageRenderer(), DefaultJinjaPageView()
    rows = []
    for batch in batches:
        (site_dir / page_name(batch.source_id)).write_text(view.render(renderer.render(batch.result)), encoding="utf-8")
        stats = batch.result.statistics
        rows.append(
            f"<tr><td><a href=\"{html.escape(page_name(batch.source_id))}\">{html.escape(batch.source_id)}</a></td>"
            f"<td>raw.{html.escape(batch.table)}</td><td>{batch.rows_in}</td><td>{batch.rows_quarantined}</td>"
            f"<td>{stats['successful_expectations']} of {stats['evaluated_expectations']}</td>"
            f"<td>{'passed' if batch.result.success else 'rows quarantined'}</td></tr>")
    index = site_dir / "index.html"
    index.write_text(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + html.escape(title) + "</title></head><body>"
        f"<h1>{html.escape(title)}</h1><p>One Great Expectations validation per source batch, run before it landed. "
        "A failed expectation quarantines the rows that failed it (ops.quarantine); the others land.</p>"
        "<table border=\"1\" cellpadding=\"4\"><tr><th>source</th><th>table</th><th>rows in</th><th>quarantined</th>"
        "<th>expectations met</th><th>result</th></tr>" + "".join(rows) + "</table></body></html>\n",
        encoding="utf-8")
    return index
