"""The journal a publish writes before it moves anything, reports/latest.json that commits it, and the recovery that
finishes or undoes a publish a killed run left half done (flows/publishing.py publishes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

MANIFEST_NAME = "latest.json"  # in the reports folder: the run a publish committed, written last
# publishes latest.json remembers besides the one it names (`recent_publish_ids`): a killed publish's warehouse half,
# recovered by a run on that warehouse after other runs published to the same reports folder, is still known to have
# been committed (each id 32 characters: 3 KB)
MANIFEST_RECENT_PUBLISHES = 100


def warehouse_note_of(warehouse_file: Path, pid: int | str) -> Path:
    """The journal's copy beside the warehouse, `.<name>.publish-<pid>.json`: a run on this warehouse with another
    reports folder finds there which folder's latest.json says whether the publish was committed."""
    return warehouse_file.with_name(f".{warehouse_file.name}.publish-{pid}.json")


def write_publish_journal(reports_root: Path, publish_id: str, run_id: str, warehouse_file: Path,
                          placing: list[Path]) -> tuple[Path, Path]:
    """Write the journal before a publish moves anything: what it is about to replace, for recovery. One copy in the
    reports folder (`.publish-<pid>.json`), one beside the warehouse (warehouse_note_of): each half of the publish is
    recovered by a run that holds its lock, and both read the commit in this reports folder's latest.json."""
    reports_root.mkdir(parents=True, exist_ok=True)
    text = json.dumps({
        "publish_id": publish_id, "run_id": run_id, "warehouse": str(warehouse_file.resolve()),
        "reports": str(reports_root.resolve()), "warehouse_existed": warehouse_file.exists(),
        "placing": {folder.name: folder.exists() for folder in placing},
    })
    note = warehouse_note_of(warehouse_file, os.getpid())
    note.write_text(text, encoding="utf-8")
    journal = reports_root / f".publish-{os.getpid()}.json"
    journal.write_text(text, encoding="utf-8")
    return journal, note


def write_manifest(reports_root: Path, manifest: dict) -> None:
    """Write reports/latest.json by one rename: the step that commits a publish."""
    path = reports_root / MANIFEST_NAME
    new = reports_root / f".{MANIFEST_NAME}.new-{os.getpid()}"
    new.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    try:
        os.replace(new, path)
    except BaseException:
        new.unlink(missing_ok=True)
        raise


def read_manifest(reports_root: Path) -> dict:
    """reports/latest.json: the last committed publish (empty before the first)."""
    path = reports_root / MANIFEST_NAME
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def is_committed(reports_root: Path, publish_id: str | None) -> bool:
    """Whether reports/latest.json names the publish `publish_id`: then it is committed, whatever fails after the
    rename (a signal, an error cleaning up), and nothing of it may be undone. Asked of the file, not of a flag the
    code sets after the rename: a SIGTERM or Ctrl-C can land between the two. A manifest that cannot be read names
    no publish."""
    if publish_id is None:
        return False
    try:
        manifest = read_manifest(reports_root)
    except (OSError, ValueError):
        return False
    recent = manifest.get("recent_publish_ids")
    return manifest.get("publish_id") == publish_id or (isinstance(recent, list) and publish_id in recent)


def recent_publish_ids(reports_root: Path) -> list[str]:
    """The publishes the current latest.json names or remembers, newest last, for the next one to remember."""
    try:
        manifest = read_manifest(reports_root)
    except (OSError, ValueError):
        return []
    recent = manifest.get("recent_publish_ids")
    ids = [i for i in recent if isinstance(i, str)] if isinstance(recent, list) else []
    if isinstance(manifest.get("publish_id"), str):
        ids.append(manifest["publish_id"])
    return ids[-MANIFEST_RECENT_PUBLISHES:]


def _read_journal(journal: Path | None) -> dict:
    """A killed publish's journal; one cut short by the kill (nothing had moved yet) or missing reads as empty."""
    try:
        data = json.loads(journal.read_text(encoding="utf-8")) if journal else {}
    except (OSError, ValueError):
        data = {}
    if "placing" not in data and "run_id" not in data:  # written by an earlier hweval: {folder name: existed}
        data = {"placing": data}
    return {"publish_id": None, "warehouse": None, "reports": None, "warehouse_existed": True, "placing": {}} | data


def recover_killed_publish(path: Path, reports_root: Path) -> list[str]:
    """Finish or undo a publish that a killed run left half done, so the warehouse and the reports agree again.

    A publish writes its journal first (`.publish-<pid>.json` in the reports folder, and a copy beside the
    warehouse: warehouse_note_of), then renames the new warehouse in (keeping the old one as
    `.<warehouse>.previous-<pid>`) and the report folders (moving the old ones aside as `.<name>.old-<pid>`), then
    reports/latest.json (the commit). If the latest.json of the publish's own reports folder names it, it was
    committed: what it moved aside goes. If not, the old warehouse and the old report folders go back, and what it
    had newly placed goes.

    Each half is recovered here only if it is this run's: the warehouse half by the note beside this warehouse, the
    reports half by the journal in this reports folder, wherever the paths written in them point (a folder moved).
    The other half is left to a run that holds its lock (two runs may share a warehouse with two reports folders, or
    the reverse), and both halves read the commit in the same file, which remembers recent publishes
    (MANIFEST_RECENT_PUBLISHES) for a run that recovers after another one published there.
    Recovery assumes the caller holds `runlock.exclusive`: no other run is publishing here, so whatever a publish
    left is a dead run's, whether or not its pid has since been given to another process (or to this one). That
    run's previous warehouse is the last committed one: every earlier run finished or was recovered before it.
    """
    actions = []
    journal_re = re.compile(r"\.publish-(?P<pid>\d+)\.json")
    previous_re = re.compile(rf"\.{re.escape(path.name)}\.previous-(?P<pid>\d+)")
    note_re = re.compile(rf"\.{re.escape(path.name)}\.publish-(?P<pid>\d+)\.json")
    journals = {m.group("pid"): p for p in _entries(reports_root) if (m := journal_re.fullmatch(p.name))}
    previous = {m.group("pid"): p for p in _entries(path.parent) if (m := previous_re.fullmatch(p.name))}
    notes = {m.group("pid"): p for p in _entries(path.parent) if (m := note_re.fullmatch(p.name))}
    left: set[str] = set()
    for pid in sorted(journals.keys() | previous.keys() | notes.keys(), key=int):
        # each half by where its journal lies, not by the paths written in it (a folder moved, or reached by another
        # path): the journal in this reports folder is of its reports half, committed by this folder's latest.json;
        # the note beside this warehouse is of its warehouse half, committed by the reports folder it names, unless
        # the journal here is of the same publish. Two of one pid but of two publishes (a pid used again) are two.
        journal = _read_journal(journals.get(pid)) if pid in journals else None
        note = _read_journal(notes.get(pid)) if pid in notes else None
        if journal is not None and journal["publish_id"] is None and note is not None:
            journal = note | {"reports": str(reports_root)}  # cut short by the kill (nothing had moved): the copy's
        if journal is not None and journal["reports"] is None and journal["warehouse"] is not None and not _same_path(
                Path(journal["warehouse"]), path):
            # written by an hweval before the note, of a publish to another warehouse sharing this reports folder:
            # its warehouse half only this journal describes, so a run on that warehouse recovers both
            left.add(pid)
            actions.append(f"left a killed publish (pid {pid}) to {journal['warehouse']} for a run on that warehouse")
            continue
        same_publish = journal is not None and note is not None and journal["publish_id"] == note["publish_id"]
        if note is not None and note["publish_id"] is not None:
            of_warehouse = note
            warehouse_committed = (is_committed(reports_root, note["publish_id"]) if same_publish
                                   else is_committed(Path(note["reports"]), note["publish_id"]))
        elif journal is not None and journal["reports"] is None or pid in previous:
            # a journal of an hweval before the note (or none: a previous warehouse alone): this folder's publish
            of_warehouse = journal or _read_journal(None)
            warehouse_committed = is_committed(reports_root, of_warehouse["publish_id"])
        else:
            of_warehouse = None  # its warehouse half was recovered already (or nothing of it had moved)
        if of_warehouse is not None:
            if warehouse_committed:
                if pid in previous:
                    previous[pid].unlink()
            else:
                actions += _undo_warehouse_half(path, previous.get(pid), of_warehouse, pid)
            if pid in notes:
                notes[pid].unlink()
        reports_committed = journal is not None and is_committed(reports_root, journal["publish_id"])
        if journal is not None:
            if not reports_committed:
                actions += _undo_reports_half(reports_root, journal, pid)
            journals[pid].unlink()
        finished = of_warehouse if of_warehouse is not None and warehouse_committed else (
            journal if reports_committed else None)
        if finished is not None:
            actions.append(f"finished the publish of run {finished['run_id']}, committed before it was killed "
                           f"(pid {pid})")
    finished_re = re.compile(rf"\.(?:.+\.old-(?P<old>\d+)|publish-(?P<journal>\d+)\.json|"
                             rf"{re.escape(MANIFEST_NAME)}\.new-(?P<manifest>\d+))")
    for leftover in _entries(reports_root):
        match = finished_re.fullmatch(leftover.name)
        if match and not {match.group("old"), match.group("journal"), match.group("manifest")} & left:
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink(missing_ok=True)
            actions.append(f"removed {leftover.name}, left by a publish that finished")
    return actions


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.exists() else []


def _same_path(one: Path, other: Path) -> bool:
    return one.resolve() == other.resolve()


def _undo_warehouse_half(path: Path, previous: Path | None, journal: dict, pid: str) -> list[str]:
    """Put back the warehouse a killed, uncommitted publish replaced (or remove the first one it placed)."""
    if previous is not None:
        if path.exists() and os.path.samefile(previous, path):  # killed before its rename: a rename of one name
            previous.unlink()  # of a file onto another does nothing, so the link goes instead
        else:
            os.replace(previous, path)
        return [f"restored the warehouse a killed run (pid {pid}) was replacing"]
    if not journal["warehouse_existed"] and path.exists():  # the first warehouse, placed by the killed run
        path.unlink()
        return [f"removed the warehouse a killed run (pid {pid}) had just placed (there was none before)"]
    return []


def _undo_reports_half(reports_root: Path, journal: dict, pid: str) -> list[str]:
    """Put back each report folder a killed, uncommitted publish was placing (or remove a new one it placed)."""
    actions = []
    for name, existed in journal["placing"].items():
        target, old = reports_root / name, reports_root / f".{name}.old-{pid}"
        if old.exists():
            if target.exists():
                shutil.rmtree(target)
            os.replace(old, target)
            actions.append(f"restored reports/{name}")
        elif not existed and target.exists():  # a new folder (a new date) the killed run had placed
            shutil.rmtree(target)
            actions.append(f"removed reports/{name}, which the killed run had just placed")
    return actions
