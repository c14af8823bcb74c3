"""A chart's PNG, drawn once: the same drawing code, data and title give the same bytes (png_bytes writes no version or
date), so a chart is looked for first among the last DRAWN_KEPT this process made, then in the chart cache folder
(flows/cache.py, kept between runs: a run whose marts did not change draws nothing), and only then drawn: by a chart
worker when one has room (flows/chart_workers.py), else in this process.

What to chart (the queries, titles and captions) and how to draw it (the figures) are the chart modules'
(flows/chart_kit.py names them); this module knows only a drawing function, its data and its title.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import pickle
import sys
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from flows import cache, chart_workers

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    Draw = Callable[[pl.DataFrame, str], Figure]

DRAWN_KEPT = 128  # charts (about 40 KB each) this process keeps to reuse when the same data comes again
# this file's part of a chart's key: how a figure becomes PNG bytes
CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


class Drawing:
    """A chart a chart worker is drawing: its PNG once asked for, then written to the chart cache."""

    def __init__(self, key: str, future: Future, draw: Draw, data: pl.DataFrame, title: str) -> None:
        self.key, self.future, self.draw, self.data, self.title = key, future, draw, data, title
        self.image: bytes | None = None

    def result(self) -> bytes:
        if self.image is None:
            self.image = chart_workers.result(self.future, lambda: _png_here(self.draw, self.data, self.title))
            cache.write(self.key, self.image)
        return self.image


_drawn: OrderedDict[str, bytes | Drawing] = OrderedDict()


def image(draw: Draw, data: pl.DataFrame, title: str, code: str) -> bytes | Drawing:
    """The PNG of `draw(data, title)`, or the chart worker drawing it; `code` is a digest of the drawing code (the
    module of `draw` and what it calls), part of the key with this file's, `draw`'s name, the title and the data."""
    key = hashlib.sha256(pickle.dumps((code, CODE, draw.__name__, title, data.columns, data.rows()))).hexdigest()
    found = _drawn.get(key)
    if found is None:
        found = cache.read(key)
    if found is None:
        found = _draw(key, draw, data, title)
    _drawn[key] = found
    _drawn.move_to_end(key)
    while len(_drawn) > DRAWN_KEPT:
        _drawn.popitem(last=False)
    return found


def _draw(key: str, draw: Draw, data: pl.DataFrame, title: str) -> bytes | Drawing:
    """A chart not drawn before: handed to a chart worker with room when `draw` is a module-level function of hweval's
    (a worker imports it by its module and name), else drawn here and cached."""
    if draw.__module__.startswith("flows.") and getattr(sys.modules.get(draw.__module__), draw.__name__, None) is draw:
        future = chart_workers.submit(_worker_png, draw.__module__, draw.__name__, data, title)
        if future is not None:
            return Drawing(key, future, draw, data, title)
    png = _png_here(draw, data, title)
    cache.write(key, png)
    return png


def _png_here(draw: Draw, data: pl.DataFrame, title: str) -> bytes:
    figure = draw(data, title)
    png = png_bytes(figure)
    figure.clear()  # free the artists now rather than at the next garbage collection
    return png


def _worker_png(module: str, draw_name: str, data: pl.DataFrame, title: str) -> bytes:
    """In a chart worker: the PNG of the drawing function `draw_name` of `module`."""
    return _png_here(getattr(importlib.import_module(module), draw_name), data, title)


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, at the figure's own resolution, without the Software entry: the same chart gives the same
    bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=figure.dpi, metadata={"Software": None})
    return buffer.getvalue()
