"""Great Expectations Data Docs for a run: GX builds its own site (index and one page per validated batch) from
the run's validation results, published with the reports under reports/<date>/data-docs/."""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import html
import os
import re
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future
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
    Static files no page refers to (GX ships fonts and tutorial images, ~4 MB) are left out of each run's copy, and
    the links into static/ that GX writes one folder too shallow are pointed at the file (`_repoint_static`).
    Results that Great Expectations' process keeps (flows/gx_process.py) are built there, as is a site of no results
    when GX runs in that process: this one does not import GX.
    """
    kept = [batch for batch in batches if isinstance(batch.result, gx_process.Kept)]
    if kept or (not batches and gx_process.enabled()):
        if len(kept) != len(batches):
            raise ValueError("build_site: results kept by Great Expectations' process and results held here, mixed")
        return gx_process.build_site(batches, site_dir, run_id, run_time)
    from flows.validate import import_gx

    gx = import_gx()
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
    for page in site_dir.rglob("*.html"):
        _repoint_static(page, site_dir)
    _prune_static(site_dir)
    return site_dir / "index.html"


# The site `begin_site` asked Great Expectations' process to build and nobody has taken yet: (the pending build, what
# is written beside it once it is built)
_building: tuple[Any, Callable[[], object] | None] | None = None


def begin_site(batches: list[ValidatedBatch], site_dir: Path, run_id: str,
               then: Callable[[], object] | None = None) -> None:
    """`build_site`, then `then()`; where GX's process builds the site (the default), not waited for: the run builds
    its models meanwhile (a cold run's site took ~0.7 s of that process), and `finish_site` takes it before the
    reports are rendered beside it. Else built here and now."""
    global _building
    abandon_site()  # one at a time: an earlier run's in this process, never taken
    kept = [batch for batch in batches if isinstance(batch.result, gx_process.Kept)]
    if kept or (not batches and gx_process.enabled()):
        if len(kept) != len(batches):
            raise ValueError("build_site: results kept by Great Expectations' process and results held here, mixed")
        _building = (gx_process.build_site_later(batches, site_dir, run_id), then)
        return
    build_site(batches, site_dir, run_id)
    if then is not None:
        then()


def begin_reused_index(site_dir: Path, run_id: str, reused: list[tuple[str, str]], reports_root: Path) -> None:
    """`write_reused_index` in a thread of its own, not waited for: its ~50 ms of copying the kept pages (a re-run
    whose every source was unchanged) overlap the build, and `finish_site` takes it before the reports are rendered
    beside it, as it takes a site GX's process builds."""
    global _building
    abandon_site()
    written: Future = Future()

    def write() -> None:
        try:
            written.set_result(write_reused_index(site_dir, run_id, reused, reports_root))
        except BaseException as exc:  # noqa: BLE001 - raised where it is taken (finish_site)
            written.set_exception(exc)

    _building = (written, None)  # before the thread starts: whatever stops the run after this waits for it
    threading.Thread(target=write, name="hweval-reused-data-docs", daemon=True).start()


def finish_site() -> Path | None:
    """Wait for the site `begin_site` left to GX's process (or `begin_reused_index` to its thread) and write what goes
    beside it; its index.html (None when none is under way). Its errors are raised here."""
    global _building
    if _building is None:
        return None
    pending, then = _building
    try:
        index = pending.result()
    except Exception:
        _building = None
        raise
    # taken only once it is done: a Ctrl-C while waiting leaves it for abandon_site, which waits for it before the run
    # removes the folder it writes into
    _building = None
    if then is not None:
        then()
    return index


def abandon_site() -> None:
    """Wait for a site still being built that the run will not take (it failed, or was cancelled, before its reports
    were rendered), its errors dropped: nothing then writes into a folder the run is about to remove."""
    global _building
    building, _building = _building, None
    if building is not None:
        with contextlib.suppress(Exception):
            building[0].result()


REUSED_PAGE = "reused.html"  # a site's list of the sources it did not validate, linking the pages it kept of them


def write_reused_index(site_dir: Path, run_id: str, reused: list[tuple[str, str]], reports_root: Path) -> Path:
    """The site of a run that validated nothing: every source's input was unchanged since the run that validated it
    (`reused`: source id, that run's id). No GX is needed: its index lists them, with the pages kept of them
    (`keep_reused_pages`)."""
    if site_dir.exists():
        shutil.rmtree(site_dir)
    site_dir.mkdir(parents=True)
    index = site_dir / "index.html"
    index.write_text(_reused_list(f"Run {run_id} validated no batch", keep_reused_pages(site_dir, reused, reports_root)),
                     encoding="utf-8")
    shutil.copyfile(index, site_dir / REUSED_PAGE)
    return index


def write_reused_page(site_dir: Path, run_id: str, reused: list[tuple[str, str]], reports_root: Path) -> Path:
    """Beside a site GX built of the batches a run validated: `reused.html`, the sources it did not validate again,
    with the pages kept of them (`keep_reused_pages`)."""
    page = site_dir / REUSED_PAGE
    page.write_text(_reused_list(f"Sources run {run_id} did not validate again",
                                 keep_reused_pages(site_dir, reused, reports_root)), encoding="utf-8")
    return page


def _reused_list(title: str, kept: list[tuple[str, str, str | None]]) -> str:
    items = "".join(
        f"<li>{html.escape(source_id)}: validated by run {html.escape(by)}: "
        + (f'<a href="{html.escape(page)}">its validation page</a>' if page else
           "its validation page is no longer published (that run's reports were replaced or removed)") + "</li>"
        for source_id, by, page in kept)
    return (f"<!doctype html><meta charset=utf-8><title>Data Docs: {html.escape(title)}</title>"
            f"<h1>{html.escape(title)}</h1><p>Each source's input was unchanged since the run that validated and "
            f"landed it; this run reused those rows. Their validation pages, as that run's Data Docs published them, "
            f"are kept here.</p><ul>{items}</ul>\n")


def keep_reused_pages(site_dir: Path, reused: list[tuple[str, str]],
                      reports_root: Path) -> list[tuple[str, str, str | None]]:
    """Copy into `site_dir` the validation page of each reused source (source id, the run that validated it) from
    the Data Docs published under `reports_root/<date>/`, at the same place in the site, with what it links to there
    (its suite's page, the static files: `_keep_linked`), so that a re-run that replaces that date's reports keeps
    them and every link of the page resolves in `site_dir`. (source id, run, the page's path in the site or None
    when no published site has it any more.)"""
    kept = []
    for source_id, by in reused:
        found = sorted(reports_root.glob(f"[0-9]*/data-docs/validations/*/{glob.escape(by)}/*/"
                                         f"{glob.escape(source_id)}.html"))
        if not found:
            kept.append((source_id, by, None))
            continue
        page = found[-1]
        site = page.parents[4]  # <date>/data-docs: the page is validations/<suite>/<run>/<time>/<source>.html
        relative = page.relative_to(site)
        (site_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, site_dir / relative)
        # the sites that publish this page, newest first: a page a site kept from another (by an older hweval, which
        # kept no suite page) finds its suite's page in the site of the run that validated it
        _keep_linked(site_dir / relative, site_dir, [site] + [other.parents[4] for other in reversed(found[:-1])])
        kept.append((source_id, by, relative.as_posix()))
    return kept


def _keep_linked(page: Path, site_dir: Path, sites: list[Path]) -> None:
    """Copy into `site_dir` what the page kept there links to and the site lacks, from the first of `sites` that has it
    at the same place, and what those pages link to in turn: the suite's page, the favicon. The site's index.html is
    its own (it lists what this site holds), never copied."""
    site_dir = Path(os.path.normpath(site_dir))
    _repoint_static(page, site_dir)
    for link in _relative_links(page.read_text(encoding="utf-8")):
        target = Path(os.path.normpath(page.parent / link))
        if not target.is_relative_to(site_dir) or target.exists() or target == site_dir / "index.html":
            continue
        relative = target.relative_to(site_dir)
        source = next((site / relative for site in sites if (site / relative).is_file()), None)
        if source is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            if target.suffix == ".html":
                _keep_linked(target, site_dir, sites)


_LINK = re.compile(r"""(\b(?:href|src)=)(["'])(.*?)\2""")
_NOT_RELATIVE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|[#/?]|$")  # a scheme (https:, data:), a fragment, a root


def _relative_links(text: str) -> set[str]:
    """The relative paths an HTML page's href and src attributes point at (their #fragment and ?query left off)."""
    urls = (html.unescape(url) for _, _, url in _LINK.findall(text))
    return {re.split(r"[?#]", url, maxsplit=1)[0] for url in urls if not _NOT_RELATIVE.match(url)}


def _repoint_static(page: Path, site_dir: Path) -> None:
    """Point the page's links into the site's static/ folder at that folder from where the page is. GX's validation
    pages point their favicon one folder too shallow (its favicon.j2 climbs 3 folders from
    validations/<suite>/<run>/<time>/, where its navbar climbs 4), at a file that is not there."""
    site_dir = Path(os.path.normpath(site_dir))
    page = Path(os.path.normpath(page))
    depth = len(page.relative_to(site_dir).parts) - 1

    def repointed(match: re.Match) -> str:
        attribute, quote, url = match.groups()
        found = re.fullmatch(r"((?:\./|\.\./)*)(static/[^?#]+)(.*)", url)
        if found is None:
            return match[0]
        climb, path, rest = found.groups()
        if Path(os.path.normpath(page.parent / climb / path)) == site_dir / path:
            return match[0]
        return f"{attribute}{quote}{'../' * depth}{path}{rest}{quote}"

    text = page.read_text(encoding="utf-8")
    repointed_text = _LINK.sub(repointed, text)
    if repointed_text != text:
        page.write_text(repointed_text, encoding="utf-8")


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
