"""Charts kept between runs: a chart's PNG under a key made of its drawing code, data and title (flows/charts.py),
so that a run whose marts did not change draws nothing. The folder is bounded (CACHE_KEPT files, least recently
used removed first) and lies outside the warehouse and reports folders: a failed run leaves those untouched."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

CACHE_KEPT = 512  # chart files the cache folder keeps (about 40 KB each); the least recently used go first


def cache_dir() -> Path | None:
    """The chart cache folder: HWEVAL_CHART_CACHE (empty: no cache), else $XDG_CACHE_HOME/hweval/charts (default
    ~/.cache/hweval/charts). Outside the warehouse and reports folders, so a failed run leaves those untouched."""
    configured = os.environ.get("HWEVAL_CHART_CACHE")
    if configured is not None:
        return Path(configured).expanduser() if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hweval" / "charts"


def _path(key: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    import matplotlib

    return folder / f"{hashlib.sha256(f'{key}:{matplotlib.__version__}'.encode()).hexdigest()}.png"


def read(key: str) -> bytes | None:
    path = _path(key)
    try:
        image = path.read_bytes() if path else None
    except OSError:  # not cached (or the cache cannot be read): draw it
        return None
    if image is not None and image.startswith(b"\x89PNG"):
        os.utime(path)  # recently used
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
        files = sorted(path.parent.glob("*.png"), key=lambda f: f.stat().st_mtime)
        for old in files[:max(0, len(files) - CACHE_KEPT)]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("chart cache %s not written: %s", path.parent, exc)
