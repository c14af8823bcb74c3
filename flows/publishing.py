"""Publishing a run: the warehouse built aside and swapped in, the reports renamed into place, and reports/latest.json,
renamed in last, that commits. The journal a publish writes first, and the recovery that finishes or undoes a publish
a killed run left half done, are flows/publish_journal.py's.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from flows import data_docs, publish_journal, reports, warehouse

log = logging.getLogger(__name__)


def remove_leftovers_of_killed_runs(folder: Path, pattern: str) -> list[Path]:
    """Remove the private files and folders a run killed mid-way left in `folder`: names matching the regular
    expression `pattern` (group `pid`: the run's process id).

    The caller holds runlock.exclusive, so no other run is writing: every match is a killed run's, even when its
    pid has since been given to another process. They never were the published state. Only exact patterns of
    hweval's own private names are given here.
    """
    removed = []
    for leftover in sorted(folder.iterdir()) if folder.exists() else []:
        if not re.fullmatch(pattern, leftover.name):
            continue
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


@contextmanager
def building_copy(path: Path, copy: bool = True) -> Iterator[Path]:
    """Yield a private copy of the warehouse to build in; the caller swaps it in with `swapped_in`.

    Nothing touches `path` until then, so a run that fails leaves the last good warehouse, and an analyst's
    open read-only handle neither blocks the build nor sees it half done. `copy=False`: the caller fills the file
    (the DuckLake mode pulls the lake's newest snapshot into it).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers_of_killed_runs(path.parent, rf"\.{re.escape(path.name)}\.building-(?P<pid>\d+)(\.wal)?")
    building = path.with_name(f".{path.name}.building-{os.getpid()}")
    for leftover in (building, building.with_name(building.name + ".wal")):
        leftover.unlink(missing_ok=True)
    if copy and path.exists():
        shutil.copy2(path, building)
    try:
        yield building
    finally:
        warehouse.close_handed_on(building)  # a step that failed after the landing left it
        for leftover in (building, building.with_name(building.name + ".wal")):
            leftover.unlink(missing_ok=True)


@contextmanager
def swapped_in(building: Path, path: Path, committed: Callable[[], bool] = lambda: False) -> Iterator[Path | None]:
    """Replace the warehouse with the finished copy (a rename); put the previous one back if the block fails before
    `committed()` says the publish was committed (a failure after the commit undoes nothing).

    Yields `.<name>.previous-<pid>`, a second name for the previous file (None if there was none), for the caller to
    remove once the publish is committed: until then recovery puts it back.
    """
    previous = path.with_name(f".{path.name}.previous-{os.getpid()}")
    previous.unlink(missing_ok=True)
    had_previous = path.exists()
    if had_previous:
        os.link(path, previous)  # a second name for the old file: the swap below never leaves `path` missing
    os.replace(building, path)
    try:
        yield previous if had_previous else None
    except BaseException:
        if committed():
            raise
        if had_previous:
            os.replace(previous, path)
        else:
            path.unlink(missing_ok=True)
        raise


def docs_dir_for(staging_dir: Path) -> Path:
    """Where the land step writes this run's Data Docs before the reports are rendered beside them."""
    return staging_dir.with_name(staging_dir.name + "-docs")


def render_reports_to(con: duckdb.DuckDBPyConnection, as_of: dt.date, staging_dir: Path) -> list[Path]:
    """Write this run's report pages (and its Data Docs, if built) into a fresh folder beside the published ones. Data
    Docs that Great Expectations' process is still building (data_docs.begin_site, in the land step) are waited for."""
    if staging_dir.exists():
        shutil.rmtree(staging_dir)
    staging_dir.mkdir(parents=True)
    data_docs.finish_site()
    if docs_dir_for(staging_dir).exists():
        os.replace(docs_dir_for(staging_dir), staging_dir / "data-docs")
    written = []
    for name, content in reports.render(con, as_of).items():
        path = staging_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def _swap_in(new: Path, target: Path) -> Path | None:
    """Put `new` at `target` by renames; return where the previous `target` was moved (None if there was none)."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if not new.exists() and target.exists():  # the rename went through (a signal as it returned): undone too
            shutil.rmtree(target)
        if old.exists():
            os.replace(old, target)
        raise
    return old if old.exists() else None


def _swap_back(target: Path, old: Path | None) -> None:
    """Undo `_swap_in`: the previous folder goes back to `target` (or `target` goes, if there was none)."""
    if target.exists():
        shutil.rmtree(target)
    if old is not None:
        os.replace(old, target)


def discard_rendering(staging_dir: Path) -> None:
    """Remove what a failed run rendered but never published."""
    for leftover in (staging_dir, staging_dir.with_name(staging_dir.name + "-latest"), docs_dir_for(staging_dir)):
        if leftover.exists():
            shutil.rmtree(leftover)


def stage_latest(staging_dir: Path, update_latest: bool) -> Path | None:
    """Copy the rendered folder for reports/latest/ beforehand, so that publishing is renames only."""
    latest_staging = staging_dir.with_name(staging_dir.name + "-latest")
    if latest_staging.exists():
        shutil.rmtree(latest_staging)
    if not update_latest:
        return None
    shutil.copytree(staging_dir, latest_staging)
    return latest_staging


def publish_run(building: Path, warehouse_file: Path, staging_dir: Path, reports_root: Path, as_of: dt.date,
                run_id: str, latest_run: tuple[str, dt.date]) -> tuple[Path, bool]:
    """Publish a run by renames: the warehouse, reports/<as-of>/ and (unless it is a backfill) reports/latest/, then
    reports/latest.json, written last: that rename commits the publish. Returns the dated folder and whether
    reports/latest/ was replaced.

    `latest_run` (run id, as-of) is the newest run in the new warehouse: this one unless it is a backfill. A failure
    before the commit puts everything back. A kill leaves the journal `.publish-<pid>.json`, written before anything
    moves, from which the next run's recovery (recover_killed_publish) finishes a committed publish or undoes one
    that was not. So does a failure after the commit (a SIGTERM or Ctrl-C as latest.json is renamed in): nothing
    committed is undone, and the journal stays for the next run to finish the clean-up.
    """
    update_latest = latest_run[0] == run_id
    stage_latest(staging_dir, update_latest)
    dated = reports_root / as_of.isoformat()
    publish_id = uuid.uuid4().hex
    placing = [dated] + ([reports_root / "latest"] if update_latest else [])
    journal, note = publish_journal.write_publish_journal(reports_root, publish_id, run_id, warehouse_file, placing)
    manifest = {"run_id": run_id, "as_of": as_of.isoformat(), "latest_run_id": latest_run[0],
                "latest_as_of": latest_run[1].isoformat(), "warehouse": str(warehouse_file),
                "committed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "publish_id": publish_id,
                "recent_publish_ids": publish_journal.recent_publish_ids(reports_root)}
    def committed() -> bool:
        return publish_journal.is_committed(reports_root, publish_id)

    try:
        with swapped_in(building, warehouse_file, committed) as previous_warehouse:
            replaced = publish_reports(staging_dir, reports_root, as_of, update_latest, manifest)
    except BaseException:
        if not committed():  # put back above; what a signal between two steps kept them from putting back, the
            _recover_now(warehouse_file, reports_root)  # journal's recovery puts back now
        raise
    # committed: reports/latest.json names this run
    remove_replaced([path for path in (previous_warehouse, *replaced) if path is not None] + [note, journal])
    return dated, update_latest


def _recover_now(warehouse_file: Path, reports_root: Path) -> None:
    """Recovery from this run's own journal after its publish failed uncommitted (it removes the journal). If that
    fails too, the journal stays and the next run's recovery does it."""
    try:
        for action in publish_journal.recover_killed_publish(warehouse_file, reports_root):
            log.info("after the failed publish: %s", action)
    except Exception as exc:  # noqa: BLE001  (the publish's own failure is the one raised)
        log.warning("could not finish putting back the failed publish (the next run will): %s", exc)


def publish_reports(staging_dir: Path, reports_root: Path, as_of: dt.date, update_latest: bool,
                    manifest: dict) -> list[Path]:
    """Rename the rendered folder to reports/<as-of>/ and, unless this is a backfill, its copy to reports/latest/,
    then write `manifest` as reports/latest.json (the commit).

    If a step fails, the renames before it are undone, so the published folders change together. Returns the
    previous folders moved aside (`.<name>.old-<pid>`), to remove once the publish is committed.
    """
    latest_staging = staging_dir.with_name(staging_dir.name + "-latest")
    if update_latest and not latest_staging.exists():
        latest_staging = stage_latest(staging_dir, True)
    moves = [(staging_dir, reports_root / as_of.isoformat())]
    if update_latest:
        moves.append((latest_staging, reports_root / "latest"))
    placed: list[tuple[Path, Path | None]] = []
    try:
        for new, target in moves:
            placed.append((target, _swap_in(new, target)))
        publish_journal.write_manifest(reports_root, manifest)
    except BaseException:
        if publish_journal.is_committed(reports_root, manifest["publish_id"]):  # the rename went through: nothing
            raise  # is undone
        for target, previous in reversed(placed):
            _swap_back(target, previous)
        raise
    return [previous for _, previous in placed if previous is not None]


def remove_replaced(leftovers: list[Path]) -> None:
    """Best effort, in order, after the publish is committed: at the first failure the rest (the journal, last) is
    left for the next run's recovery, which finishes the committed publish."""
    for leftover in leftovers:
        try:
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s (the next run will): %s", leftover, exc)
            return
