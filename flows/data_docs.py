"""Great Expectations Data Docs for a run: GX builds its own site (index and one page per validated batch) from
the run's validation results, published with the reports under reports/<date>/data-docs/."""

from __future__ import annotations

import datetime as dt
import html
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows import gx_process

SITE_NAME = "hweval_run"


@dataclass(frozen=True)
class ValidatedBatch:
    source_id: str
    result: Any  # great_expectations ExpectationSuiteValidationResult, or the gx_process.Kept that stands for it
    suite: Any = None  # the ExpectationSuite it was validated against (the site gets a page for it)


def build_site(batches: list[ValidatedBatch], site_dir: Path, run_id: str,
               run_time: dt.datetime | None = None) -> Path:
    """Build the GX Data Docs site of these validations into `site_dir` (replaced); return its index.html.

    A fresh in-memory GX context holds only this run's results, so the site shows this run and nothing else.
    Static files no page refers to (GX ships fonts and tutorial images, ~4 MB) are left out of each run's copy.
    Results that Great Expectations' process keeps (flows/gx_process.py) are built there, as is a site of no results
    when GX runs in that process: this one does not import GX.
    """
    kept = [batch for batch in batches if isinstance(batch.result, gx_process.Kept)]
    if kept or (not batches and gx_process.enabled()):
        if len(kept) != len(batches):
            raise ValueError("build_site: results kept by Great Expectations' process and results held here, mixed")
        return gx_process.build_site(batches, site_dir, run_id, run_time)
    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    if site_dir.exists():
        shutil.rmtree(site_dir)
    site_dir.mkdir(parents=True)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    context.add_data_docs_site(SITE_NAME, {
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(site_dir)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })
    run = RunIdentifier(run_name=run_id, run_time=run_time or dt.datetime.now(dt.UTC))
    for suite in {batch.suite.name: batch.suite for batch in batches if batch.suite is not None}.values():
        context.suites.add(suite)
    for batch in batches:
        key = ValidationResultIdentifier(
            expectation_suite_identifier=ExpectationSuiteIdentifier(name=batch.result.suite_name),
            run_id=run, batch_identifier=batch.source_id)
        context.validation_results_store.set(key, batch.result)
    context.build_data_docs(site_names=[SITE_NAME])
    _prune_static(site_dir)
    return site_dir / "index.html"


def write_reused_index(site_dir: Path, run_id: str, reused: list[tuple[str, str]],
                       same_date_docs: Path | None = None) -> Path:
    """The site of a run that validated nothing: every source's input was unchanged since the run that validated it
    (`reused`: source id, that run's id), whose Data Docs were published with that run's reports. No GX is needed.

    A same-date re-run replaces that date's reports: the Data Docs published for the date (`same_date_docs`, the
    validations this run's rows come from, or a page like this one) are kept, copied, rather than lost."""
    if site_dir.exists():
        shutil.rmtree(site_dir)
    if same_date_docs is not None and (same_date_docs / "index.html").is_file():
        shutil.copytree(same_date_docs, site_dir)
        return site_dir / "index.html"
    site_dir.mkdir(parents=True)
    items = "".join(f"<li>{html.escape(source_id)}: validated by run {html.escape(by)}</li>" for source_id, by in reused)
    (site_dir / "index.html").write_text(
        f"<!doctype html><meta charset=utf-8><title>Data Docs: run {html.escape(run_id)}</title>"
        f"<h1>Run {html.escape(run_id)} validated no batch</h1><p>Each source's input was unchanged since the run "
        f"that validated and landed it; this run reused those rows. Their validation results are in the Data Docs "
        f"published with that run's reports.</p><ul>{items}</ul>\n", encoding="utf-8")
    return site_dir / "index.html"


def page_of(site_dir: Path, source_id: str) -> Path:
    """The validation page of one source's batch in a built site."""
    [page] = site_dir.glob(f"validations/*/*/*/{source_id}.html")
    return page


def _prune_static(site_dir: Path) -> None:
    """Keep only the static files that the site's pages refer to."""
    static = site_dir / "static"
    if not static.exists():
        return
    used = set()
    for page in site_dir.rglob("*.html"):
        for ref in re.findall(r"(?:\.\./|\./)*static/[\w./-]+", page.read_text(encoding="utf-8")):
            used.add(ref[ref.index("static/"):])
    for path in sorted(static.rglob("*"), reverse=True):
        relative = path.relative_to(site_dir).as_posix()
        if path.is_file() and relative not in used:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
