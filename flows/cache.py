"""What hweval keeps between runs outside the warehouse and reports folders (so a failed run leaves those untouched),
under one folder (`cache_root`), each part bounded (CACHE_KEPT files, DOWNLOADS_KEPT for downloads/, the least recently
used removed first):

- charts/: a chart's PNG under a key made of its drawing code, data and title (flows/chart_images.py), so that a run
  whose marts did not change draws nothing;
- catalog-checks/: an empty file per catalog whose figures passed their expectation suite (flows/checks.py), keyed by
  the figures, the suite and the checking code, so that a run on an unchanged catalog does not validate it again;
- downloads/: the rows a live source kept of a large download, with the validators its server sent (ETag,
  Last-Modified), keyed by the URL and the code that read it (flows/sources/aws_offer_file.py), so that the next fetch
  asks the server whether the file changed and reads these rows when it has not (HTTP 304), downloading nothing.
  DOWNLOADS_KEPT files (a region's rows, a few MB each).

Anything in it can be deleted at any time: it costs a redraw, a re-check or a download."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

CACHE_KEPT = 512  # files each part of the cache keeps (a chart is about 40 KB); the least recently used go first
DOWNLOADS_KEPT = 64  # downloads/ keeps fewer: one a region and endpoint (a few MB each) is all a run asks for


def cache_root() -> Path | None:
    """HWEVAL_CACHE (empty: no cache at all), else $XDG_CACHE_HOME/hweval (default ~/.cache/hweval)."""
    configured = os.environ.get("HWEVAL_CACHE")
    if configured is not None:
        return Path(configured).expanduser() if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hweval"


@lru_cache(maxsize=1)
def _matplotlib_version() -> str:
    """Matplotlib's installed version, read from its metadata: a run whose charts are all cached never imports it."""
    return version("matplotlib")


def _path(key: str) -> Path | None:
    root = cache_root()
    if root is None:
        return None
    return root / "charts" / f"{hashlib.sha256(f'{key}:{_matplotlib_version()}'.encode()).hexdigest()}.png"


def read(key: str) -> bytes | None:
    """A chart's PNG drawn by an earlier run, or None."""
    path = _path(key)
    try:
        image = path.read_bytes() if path else None
    except OSError:  # not cached (or the cache cannot be read): draw it
        return None
    if image is not None and image.startswith(b"\x89PNG"):
        _touch(path)
        return image
    return None


def write(key: str, image: bytes) -> None:
    """Write a drawn chart to the cache (atomically: parallel runs may draw the same one), then prune it to
    CACHE_KEPT files. A cache that cannot be written only costs a redraw next time."""
    path = _path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(image)
        os.replace(partial, path)
        _prune(path.parent, "*.png")
    except OSError as exc:
        log.info("chart cache %s not written: %s", path.parent, exc)


def _touch(path: Path) -> None:
    """Mark a file recently used (pruning keeps the most recent); a cache another user owns, or a file pruned by a
    parallel run meanwhile, only loses that mark."""
    try:
        os.utime(path)
    except OSError:
        pass


def _prune(folder: Path, pattern: str, kept: int | None = None) -> None:
    """Remove the least recently used of `folder`'s `pattern` files past `kept` (CACHE_KEPT, read when called)."""
    kept = CACHE_KEPT if kept is None else kept
    dated = []
    for file in folder.glob(pattern):
        try:
            dated.append((file.stat().st_mtime, file))
        except OSError:  # pruned by a parallel run
            continue
    for _, old in sorted(dated)[:max(0, len(dated) - kept)]:
        old.unlink(missing_ok=True)


def _check_marker(digest: str) -> Path | None:
    root = cache_root()
    return root / "catalog-checks" / f"{digest}.passed" if root else None


def catalog_check_passed(digest: str) -> bool:
    """Whether a catalog with this digest (checks.catalog_check_digest) passed its figure check in an earlier run."""
    marker = _check_marker(digest)
    try:
        if marker is None or not marker.is_file():
            return False
    except OSError:  # a folder another user keeps to themselves (is_file raises on EACCES): check the catalog
        return False
    _touch(marker)
    return True


def record_catalog_check_passed(digest: str) -> None:
    marker = _check_marker(digest)
    if marker is None:
        return
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        _prune(marker.parent, "*.passed")
    except OSError as exc:
        log.info("catalog check cache %s not written: %s", marker.parent, exc)


def _download_path(key: str) -> Path | None:
    root = cache_root()  # the key holds a URL, which may carry a key of its own: only its digest names the file
    return root / "downloads" / f"{hashlib.sha256(key.encode()).hexdigest()}.arrow" if root else None


_ROWS_DIGEST = "hweval-rows-sha256"  # the kept rows' digest (flows/reuse.py arrow_digest), beside the validators
PARTIAL_MAX_AGE_S = 3600  # a half-written entry this old was left by a killed process: removed when the part is pruned


def kept_download(key: str) -> tuple[dict[str, str], pa.Table] | None:
    """The validators and rows `keep_download` kept under `key`, or None (never kept, pruned, or not exactly what was
    kept: the caller then downloads the file again, unconditionally). The rows are checked whole before they are
    used: Arrow's full validation (a flipped byte in an offset would crash DuckDB reading them) and their digest
    against the one kept with them (a flipped byte in a price would change it silently; zstd has no checksum)."""
    import pyarrow as pa

    from flows.reuse import arrow_digest

    path = _download_path(key)
    try:
        if path is None or not path.is_file():
            return None
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        stored = {name.decode(): value.decode() for name, value in (table.schema.metadata or {}).items()}
        table = table.replace_schema_metadata(None)
        table.validate(full=True)
        if stored.pop(_ROWS_DIGEST, None) != arrow_digest(table):
            raise ValueError("its rows are not the rows kept (their digest differs)")
    except (OSError, ValueError) as exc:  # cut short by a full disk, damaged, another user's folder: not used
        log.warning("download cache %s unusable (%s): the file is downloaded again", path, exc)
        return None
    _touch(path)
    return stored, table


def keep_download(key: str, validators: dict[str, str], table: pa.Table) -> None:
    """Keep `table` (a source's rows of the file at `key`) with its server's `validators`, written atomically, then
    prune the part to DOWNLOADS_KEPT files. A cache that cannot be written only costs a download next time."""
    import pyarrow as pa

    from flows.reuse import arrow_digest

    path = _download_path(key)
    if path is None:
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # regions fetch in threads
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(
                sink, table.schema.with_metadata(validators | {_ROWS_DIGEST: arrow_digest(table)}),
                options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
            writer.write_table(table)
        os.replace(partial, path)
        _prune(path.parent, "*.arrow", DOWNLOADS_KEPT)
        _remove_old_partials(path.parent)
    except OSError as exc:
        log.info("download cache %s not written: %s", path.parent, exc)
        partial.unlink(missing_ok=True)


def _remove_old_partials(folder: Path) -> None:
    """Remove the half-written entries (`.<name>.<pid>.<thread>.tmp`) older than PARTIAL_MAX_AGE_S: a process killed
    while writing one left it; a younger one may be another run's, still being written."""
    for partial in folder.glob(".*.tmp"):
        try:
            if time.time() - partial.stat().st_mtime > PARTIAL_MAX_AGE_S:
                partial.unlink()
        except OSError:  # removed by its writer or a parallel prune meanwhile
            continue
