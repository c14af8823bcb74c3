"""A run's file: every run of a warehouse holds one for as long as it runs, so that one killed outright is found.

A run killed outright (SIGKILL, out of memory, the machine lost) runs no hook and leaves no word. So each run, from
its first step on a warehouse (before its fetch) to its last (its notifications), holds a file of its own in
`.<warehouse name>.runs/` beside the warehouse: an exclusive `fcntl.flock` on it, its holder (pid, host, start, run id,
as-of date, flow run id and attempt) and the step it is at written in it. It removes the file as it ends, however it
ends short of being killed; the kernel releases a dead process's flock. So a run file found unlocked was left by a run
killed outright, at the step written in it (`left_by_killed`); one found locked belongs to a run under way.

A run file is named after its machine first (`<host>--<run id>-<pid>-<random>.run.json`): a run looks only at its own
machine's files. `flock` is not reliable across a network file system, and another machine's pid means nothing here:
another machine's files are left for that machine's next run, and never count against the files a run looks at.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import os
import re
import secrets
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

MAX_HOLDER_BYTES = 4096  # of a run file read back (a run writes about 300 bytes)
MAX_LOOKED_AT = 100  # run files a run looks at as it starts (each one open and flock); the rest wait for the next run
SUFFIX = ".run.json"
MAX_MAKE_TRIES = 5  # to make a run file in a folder that other runs remove as they end (each when it is empty)
MAKING_S = 60.0  # a file a run was making this long ago, unlocked, was left by a run killed as it made it


@dataclass
class _Held:
    fd: int
    holder: dict


_held: ContextVar[_Held | None] = ContextVar("hweval_run_file", default=None)


def folder(warehouse_path: Path) -> Path:
    """Where the runs of `warehouse_path` keep their files: `.hweval.duckdb.runs/` beside `hweval.duckdb`."""
    return warehouse_path.with_name(f".{warehouse_path.name}.runs")


@contextmanager
def held(warehouse_path: Path, holder: dict[str, str | None], step: str) -> Iterator[Path | None]:
    """Hold this run's file for the block, with `holder` (killed_runs.holder_of: run id, flow run, ...) and this
    process's pid and host written in (and its start, when `holder` gives none: `_written`), at `step`; the file is
    removed as the block ends, however it ends.

    A run file that cannot be made (a file where its folder goes, a folder this user cannot write, no space) is
    logged, and the run goes on without one (None): only a kill of it outright would go unfound."""
    runs = folder(warehouse_path)
    name = _name(holder)
    mine = _Held(-1, _written(holder, step))
    try:
        mine.fd = _made(runs, name, mine.holder)
    except OSError as exc:
        logger.warning("this run's run file could not be made in %s (%s): if this run is killed outright, no run "
                       "will find it", runs, exc.strerror or exc)
        yield None
        return
    path = runs / name
    token = _held.set(mine)
    try:
        yield path
    finally:
        _held.reset(token)
        try:
            path.unlink(missing_ok=True)  # while still locked: a run that looks now finds it gone
        finally:
            os.close(mine.fd)
            with contextlib.suppress(OSError):  # the folder, when no other run's file is in it: no litter beside
                runs.rmdir()  # the warehouse


def leave(warehouse_path: Path, holder: dict[str, str | None], step: str) -> Path | None:
    """A run file left unlocked at once, with `holder` and this process's pid and host written in (and its start, when
    `holder` gives none), at `step`, for the next run on the warehouse to find (`left_by_killed`) as it finds one a run
    killed outright left: a run that ended but could not record its end in Prefect leaves one (flows/killed_runs.py,
    `leave_unrecorded`). None, logged, when it cannot be made."""
    runs = folder(warehouse_path)
    name = _name(holder)
    info = _written(holder, step)
    size = len(_encoded(info))
    if size > MAX_HOLDER_BYTES:  # the next run would take it for a cut-short one
        logger.warning("a run file was not left in %s for the next run: its %d bytes are more than a run reads back "
                       "(%d)", runs, size, MAX_HOLDER_BYTES)
        return None
    try:
        os.close(_made(runs, name, info))  # closed: its lock released, the file is found as one no run holds
    except OSError as exc:
        logger.warning("a run file could not be left in %s for the next run (%s)", runs, exc.strerror or exc)
        return None
    return runs / name


def _written(holder: dict, step: str) -> dict:
    """What a run file holds (`held`, `leave`): `holder` with this process's pid and host, its start (the holder's
    own, when it gives one: a run's, flows/nightly.py) and `step`."""
    return {"started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **holder, "pid": os.getpid(),
            "host": socket.gethostname(), "step": step}


def written_bytes(holder: dict, step: str) -> int:
    """The size of the run file `leave` would write of `holder` at `step` (MAX_HOLDER_BYTES at most is read back)."""
    return len(_encoded(_written(holder, step)))


def _encoded(holder: dict) -> bytes:
    """A run file's bytes (`_write`), as `leave` and `written_bytes` measure them."""
    return json.dumps(holder).encode()


def _name(holder: dict) -> str:
    """A new run file's name: this machine's, the run id, this process's pid and a random part."""
    return f"{_host_tag()}--{holder.get('run_id') or 'run'}-{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"


def _made(runs: Path, name: str, holder: dict) -> int:
    """This run's file in `runs`, locked, its holder written in, named `name` only then (a run that looks finds no
    file, or one locked with a whole holder in it): made under a name no run looks for, then renamed. Its descriptor.
    """
    for tries_left in range(MAX_MAKE_TRIES - 1, -1, -1):
        runs.mkdir(parents=True, exist_ok=True)
        try:
            fd, making = tempfile.mkstemp(dir=runs, prefix=f".{_host_tag()}--making-", suffix=".tmp")
            break
        except FileNotFoundError:  # the folder removed meanwhile by a run that ended (held's last step): again
            if not tries_left:
                raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file under a new name: no other process has it open
        _write(fd, holder)
        os.chmod(making, 0o644)
        os.rename(making, runs / name)
    except BaseException:
        os.close(fd)
        Path(making).unlink(missing_ok=True)
        raise
    return fd


def at(step: str) -> None:
    """This run is now at `step` ("its landing"): written in its file, for the message of the run that finds it
    killed. Nothing when the run holds no file (a flow called outside `held`)."""
    mine = _held.get()
    if mine is not None:
        mine.holder["step"] = step
        _write(mine.fd, mine.holder)


def left_by_killed(warehouse_path: Path) -> tuple[dict, ...]:
    """The holders of the run files of `warehouse_path` that no process holds (left by runs killed outright, on this
    machine), oldest file first; each file is removed as it is read, so that one killed run is found once.

    A file locked by another process (a run under way; another run reading it this moment) is left; so is one of
    another machine. One without a whole holder in it (its run killed between creating and writing it) is removed,
    with a warning. At most MAX_LOOKED_AT files are looked at a run (the oldest first); more are logged and left."""
    runs = folder(warehouse_path)
    mine = f"{_host_tag()}--"
    try:
        names = [p.name for p in runs.iterdir()]
    except FileNotFoundError:
        return ()
    for making in [n for n in names if n.startswith(f".{mine}making-")]:
        _removed_if_left(runs / making)
    paths = sorted((runs / n for n in names if n.startswith(mine) and n.endswith(SUFFIX)), key=_age)
    if len(paths) > MAX_LOOKED_AT:
        logger.warning("%d run files of this machine's runs in %s: the oldest %d looked at, the rest left for the "
                       "next run", len(paths), runs, MAX_LOOKED_AT)
    found = []
    for path in paths[:MAX_LOOKED_AT]:
        info = _taken_if_left(path)
        if info is not None:
            found.append(info)
    return tuple(found)


def _taken_if_left(path: Path) -> dict | None:
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:  # removed since the listing: its run ended, or another run took it
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a run under way holds it
            return None
        if not _same_file(fd, path):  # removed while this run waited for it
            return None
        info = holder_in(fd)
        if info is None:
            logger.warning("run file %s holds no whole run description (its run was killed as it wrote it): removed",
                           path)
        elif info["host"] != socket.gethostname():
            return None  # another machine's run: for its machine's next run (see the module's docstring)
        path.unlink(missing_ok=True)
        return info
    finally:
        os.close(fd)


def _removed_if_left(making: Path) -> None:
    """A file a run was making (`_made`) when it was killed outright: removed once MAKING_S old and no process has
    it locked (a run makes its file in microseconds: one younger is a run making it now)."""
    try:
        if time.time() - making.stat().st_mtime < MAKING_S:
            return
        fd = os.open(making, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _same_file(fd, making):
            making.unlink(missing_ok=True)
    except BlockingIOError:
        pass
    finally:
        os.close(fd)


def holder_in(fd: int) -> dict | None:
    """The holder written in a run file, or None when what is there is not a whole one: JSON with a pid, a host and
    an ISO start. Reads at most MAX_HOLDER_BYTES; what follows the JSON is the end of a longer step the run wrote
    before (killed between its write and its truncate: `_write`)."""
    try:
        info, _ = json.JSONDecoder().raw_decode(os.pread(fd, MAX_HOLDER_BYTES, 0).decode())
        int(info["pid"]), str(info["host"]), dt.datetime.fromisoformat(info["started_at"])
    except (ValueError, KeyError, TypeError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    return info


def _write(fd: int, holder: dict) -> None:
    data = _encoded(holder)
    os.pwrite(fd, data, 0)
    # written over, then cut to its length: a run killed between the two leaves a whole holder, then the tail of the
    # longer one before it (holder_in reads the first); truncated first, it would leave an empty file
    os.ftruncate(fd, len(data))


def _host_tag() -> str:
    """This machine's name as run files start with it: a run looks only at its own machine's files."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64] or "host"


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _age(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, path.name
    except FileNotFoundError:
        return float("inf"), path.name
