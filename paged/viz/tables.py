"""Block tables: each sequence's logical blocks labelled with their physical blocks (L1→11), the
pool coloured by holder, shared blocks striped in each holder's colour.

Arrows, when asked for, are routed through the gaps between blocks and lanes beside them, never
across a block they do not point at.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path as MplPath

from ..text import msg
from ..trace import PagedLayout
from .pools import block_fill
from .style import COLORS, SEQ_COLORS, _axes, _boxes


@dataclass(frozen=True)
class TableGeometry:
    """Where `draw_block_table` puts things: logical blocks left, the physical pool right."""

    columns: int
    x0: float  # left edge of the pool
    y_top: float
    bus: float  # left edge of the lane between the two, where arrows run vertically

    def physical(self, b: int) -> tuple[float, float]:
        """Lower-left corner of physical block b (a 1 x 1 square)."""
        return self.x0 + (b % self.columns) * 1.1, self.y_top - 1.2 * (b // self.columns) - 1

    def logical(self, k: int, i: int) -> tuple[float, float]:
        """Lower-left corner of logical block i of the k-th sequence."""
        return 1 + i * 1.1, self.y_top - 1.2 * k - 1


def table_geometry(layout: PagedLayout, columns: int) -> TableGeometry:
    longest = max((len(t) for _, t, _ in layout.tables), default=1)
    rows = int(np.ceil(layout.num_blocks / columns))
    bus = 1 + longest * 1.1 + 0.2
    x0 = bus + 0.35 * max(1, len(layout.tables)) + 0.5
    return TableGeometry(columns, x0, max(len(layout.tables), rows) * 1.2, bus)


def arrow_routes(layout: PagedLayout, geo: TableGeometry) -> list[tuple[int, int, list]]:
    """(sequence index, physical block, polyline) of every block-table arrow.

    Each arrow leaves its logical block downwards into the gap below that row, runs right to
    the sequence's own vertical lane between the table and the pool, climbs or falls to the gap
    above the target's row, runs along that gap and drops into the target from above. Gaps and
    lanes hold no blocks, so an arrow never crosses a block it does not point at.
    """
    routes = []
    for k, (_, table, _) in enumerate(layout.tables):
        lane = geo.bus + 0.35 * k + 0.15
        for i, b in enumerate(table):
            lx, ly = geo.logical(k, i)
            px, py = geo.physical(b)
            below = ly - 0.1
            above = py + 1.1 + 0.05 * ((k % 3) - 1)  # a little apart per sequence
            x_in = px + 0.5 + 0.12 * ((k % 5) - 2)
            routes.append(
                (
                    k,
                    b,
                    [
                        (lx + 0.5, ly),
                        (lx + 0.5, below),
                        (lane, below),
                        (lane, above),
                        (x_in, above),
                        (x_in, py + 1),
                    ],
                )
            )
    return routes


def block_holders(layout: PagedLayout) -> list[list[int]]:
    """For each physical block, the indices of the sequences whose tables hold it."""
    holders = [[] for _ in range(layout.num_blocks)]
    for k, (_, table, _) in enumerate(layout.tables):
        for b in table:
            if k not in holders[b]:
                holders[b].append(k)
    return holders


def pool_stripes(layout: PagedLayout, geo: TableGeometry) -> list[tuple]:
    """(x, y, width, height, colour) boxes of the pool: a stripe per holder, grey when free."""
    boxes = []
    for b, holders in enumerate(block_holders(layout)):
        x, y = geo.physical(b)
        if not holders:
            boxes.append((x, y, 1, 1, COLORS["external_fragmentation"]))
        for j, k in enumerate(holders):  # one vertical stripe per holder
            w = 1 / len(holders)
            boxes.append((x + j * w, y, w, 1, SEQ_COLORS[k % len(SEQ_COLORS)]))
    return boxes


LOGICAL = msg("logical blocks (block table)", "논리 블록 (블록 테이블)")
PHYSICAL = msg("physical blocks (pool)", "물리 블록 (풀)")
TOKENS = msg("{n} tok", "토큰 {n}개")


def draw_block_table(layout: PagedLayout, ax=None, title=None, columns=8, arrows=False):
    """Each sequence's logical blocks in order (left), the physical blocks (right).

    Each logical block is labelled with the physical block it maps to ("L1→11"), and a physical
    block takes its holder's colour; a block several sequences share is striped in every holder's
    colour, with its ref count. `arrows=True` also draws an arrow per mapping: readable for one
    short sequence, a tangle for several (they share the lanes between the two sides).
    """
    ax = _axes(ax, (9, 0.9 + 0.8 * max(1, len(layout.tables))))
    _, _, refs = block_fill(layout)
    geo = table_geometry(layout, columns)
    rows = int(np.ceil(layout.num_blocks / columns))
    holders = block_holders(layout)
    _boxes(ax, pool_stripes(layout, geo), lw=0)
    frames = [(*geo.physical(b), 1, 1, "none") for b in range(layout.num_blocks)]
    _boxes(ax, frames, edgecolor="black", lw=0.5)
    for b in range(layout.num_blocks):
        x, y = geo.physical(b)
        label = f"{b}" + (f"\n×{refs[b]}" if refs[b] > 1 else "")
        color = "black" if not holders[b] else "white"
        ax.text(
            x + 0.5,
            y + 0.5,
            label,
            ha="center",
            va="center",
            fontsize=8,
            color=color,
            fontweight="bold" if refs[b] > 1 else None,
        )
    logical = []
    for k, (seq_id, table, num_tokens) in enumerate(layout.tables):
        color = to_rgba(SEQ_COLORS[k % len(SEQ_COLORS)], 0.35)
        _, y = geo.logical(k, 0)
        name = f"{seq_id}\n{TOKENS.format(n=num_tokens)}"
        ax.text(0.9, y + 0.5, name, ha="right", va="center", fontsize=9)
        for i, b in enumerate(table):
            x, y = geo.logical(k, i)
            logical.append((x, y, 1, 1, color))
            ax.text(x + 0.5, y + 0.5, f"L{i}→{b}", ha="center", va="center", fontsize=8)
    _boxes(ax, logical, edgecolor="black", lw=0.5)
    for k, _, points in arrow_routes(layout, geo) if arrows else ():
        ax.add_patch(
            FancyArrowPatch(
                path=MplPath(points),
                arrowstyle="-|>",
                mutation_scale=10,
                color=SEQ_COLORS[k % len(SEQ_COLORS)],
                lw=0.9,
                alpha=0.85,
            )
        )
    ax.text(1, geo.y_top + 0.3, str(LOGICAL), fontsize=10)
    ax.text(geo.x0, geo.y_top + 0.3, str(PHYSICAL), fontsize=10)
    ax.set_xlim(-1.2, geo.x0 + columns * 1.1)
    ax.set_ylim(min(geo.y_top - 1.2 * max(len(layout.tables), rows), 0) - 0.3, geo.y_top + 1)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    return ax
