"""A reusable, blitting matplotlib canvas that renders to PNG bytes, and the widgets' HTML bits.

Widgets show pictures as PNG in an `ipywidgets.Image`, so that tests can compare what is drawn.
"""

from __future__ import annotations

import io

import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..trace import CATEGORIES
from .fonts import use_cjk_font
from .style import COLORS, LABELS

PNG_DPI = 80  # pixels per inch of every widget picture


class Canvas:
    """A figure and its axes kept for a widget's lifetime: a redraw replaces only what is drawn.

    Building a figure, its axes and their ticks is most of a redraw's cost. So the axes are
    reused, and what does not change (frames, ticks, axis labels) is rendered once into a
    background; each redraw pastes it and draws only the artists it added (blitting). Call
    `invalidate()` after changing anything the background shows (limits, ticks, figure size).
    """

    def __init__(self, figsize, nrows=1, ncols=1, adjust=None, **subplot_kw):
        use_cjk_font()  # the Korean edition's captions need Hangul glyphs
        self.fig = Figure(figsize=figsize, dpi=PNG_DPI)
        self._agg = FigureCanvasAgg(self.fig)
        axes = self.fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
        self.axes = [ax for row in axes for ax in row]
        self.fig.subplots_adjust(**(adjust or {}))
        self._background = None

    def invalidate(self) -> None:
        """Render the background again at the next redraw."""
        self._background = None

    def set_size_inches(self, width: float, height: float) -> None:
        if tuple(self.fig.get_size_inches()) != (width, height):
            self.fig.set_size_inches(width, height)
            self.invalidate()

    @staticmethod
    def _drawn(ax) -> list:
        """What a drawing added to `ax`, titles included (they change every redraw)."""
        titles = [ax.title, ax._left_title]  # matplotlib keeps the left title as its own Text
        return [*ax.collections, *ax.patches, *ax.texts, *ax.images, *ax.lines, *titles]

    def fresh(self) -> list:
        """The axes, emptied of everything drawn on them (ticks and frames stay)."""
        for ax in self.axes:
            for artist in [*ax.collections, *ax.patches, *ax.texts, *ax.images, *ax.lines]:
                artist.remove()
            ax.set_title("")
            ax.set_title("", loc="left")
            ax.relim()  # forget the removed artists' extent (a pool may have shrunk)
            ax.autoscale()
        return self.axes

    def png(self, dynamic: list | None = None) -> bytes:
        """The figure as PNG bytes; `dynamic` (default: everything drawn) is drawn on the
        background, the rest comes from it."""
        drawn = dynamic if dynamic is not None else [a for ax in self.axes for a in self._drawn(ax)]
        if self._background is None:  # render everything but the drawn artists, once
            for artist in drawn:
                artist.set_visible(False)
            self._agg.draw()
            self._background = self._agg.copy_from_bbox(self.fig.bbox)
            for artist in drawn:
                artist.set_visible(True)
        self._agg.restore_region(self._background)
        for artist in drawn:
            artist.axes.draw_artist(artist)
        buf = io.BytesIO()  # light compression: a third of the encoding time, larger files
        image = PIL.Image.fromarray(np.asarray(self._agg.buffer_rgba()))
        image.save(buf, format="png", compress_level=1)
        return buf.getvalue()


def legend_html() -> str:
    """The four slot categories as coloured squares, in the drawings' colours."""
    items = "".join(
        f"<span style='margin-right:14px'><span style='display:inline-block;width:12px;"
        f"height:12px;background:{COLORS[c]};border:1px solid #333;vertical-align:middle'>"
        f"</span> {LABELS[c]}</span>"
        for c in CATEGORIES
    )
    return f"<div style='font-size:12px'>{items}</div>"


def counter_table(rows: dict[str, tuple[int, ...]], total: dict[str, int]) -> str:
    head = "".join(f"<th style='padding:0 8px'>{LABELS[c]}</th>" for c in CATEGORIES)
    body = ""
    for name, usage in rows.items():
        cells = "".join(
            f"<td style='padding:0 8px;text-align:right'>{u} ({100 * u / total[name]:.0f}%)</td>"
            for u in usage
        )
        body += f"<tr><td><b>{name}</b></td>{cells}</tr>"
    return f"<table><tr><th></th>{head}</tr>{body}</table>"
