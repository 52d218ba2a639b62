"""Memory as the allocators leave it: a contiguous arena (now and over time) and a block pool."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.patches import Patch

from ..text import msg
from ..trace import CATEGORIES, ContiguousLayout, PagedLayout, refused_steps
from .style import (
    COLORS,
    LABELS,
    NULL_BLOCK_COLOR,
    SEQ_COLORS,
    _axes,
    _boxes,
    ink_on,
    legend_handles,
)


def _extent_parts(e) -> tuple[tuple[int, int, int], ...]:
    """(start, length, category index) of an extent's tokens, reservation, waste and round-up."""
    return (
        (e.start, e.num_tokens, 0),
        (e.start + e.num_tokens, e.final_len - e.num_tokens, 1),
        (e.start + e.final_len, e.reserved - e.final_len, 2),
        (e.start + e.reserved, e.size - e.reserved, 3),  # buddy round-up: external & others
    )


def arena_row(layout: ContiguousLayout) -> np.ndarray:
    """Category index (into CATEGORIES) of every slot of the arena."""
    row = np.full(layout.capacity_tokens, 3, dtype=np.int8)
    for e in layout.extents:
        for x, w, c in _extent_parts(e):
            row[x : x + w] = c
    return row


SLOT_ADDRESS = msg("KV slot address", "KV 슬롯 주소")
NOT_ENOUGH = msg("refused: not enough free in total", "거절: 남은 공간이 전체로도 부족")
NO_HOLE = msg(
    "refused: enough free in total, no hole big enough",
    "거절: 전체로는 충분하지만 그만큼 큰 빈 구멍이 없음",
)
ARENA_OVER_TIME = msg("Contiguous arena over time", "시간에 따른 아레나")
DECODE_STEP = msg("decode step", "디코드 단계")
NULL_BLOCK = msg(
    "null block (vLLM's block 0: given to no request, never free)",
    "널 블록 (vLLM의 블록 0: 어느 요청에도 주지 않으며 빈 블록도 아님)",
)
FREE_BLOCK = msg("free block", "빈 블록")
POOL_TITLE = msg(
    "Block pool: {n} physical blocks of {size} slots", "블록 풀: 슬롯 {size}개짜리 물리 블록 {n}개"
)


def draw_arena(layout: ContiguousLayout, ax=None, title=None, refused=None):
    """One moment of a contiguous arena as a strip: each request's range and the holes."""
    ax = _axes(ax, (9, 1.6))
    cap = layout.capacity_tokens
    parts = [(x, w, c) for e in layout.extents for x, w, c in _extent_parts(e) if w]
    _boxes(ax, [(x, 0, w, 1, COLORS[CATEGORIES[c]]) for x, w, c in parts if c != 3], lw=0)
    # The round-up is hatched, to tell it from a free hole.
    round_up = [(x, 0, w, 1, COLORS["external_fragmentation"]) for x, w, c in parts if c == 3]
    _boxes(ax, round_up, hatch="////", edgecolor="#8C8C8C", lw=0)
    outlines = [(e.start, 0, e.size, 1, "none") for e in layout.extents]
    _boxes(ax, outlines, edgecolor="black", lw=0.8)
    for e in layout.extents:
        if e.size > cap * 0.04:
            mid = e.start + e.size / 2
            under = [c for x, w, c in _extent_parts(e) if w and x <= mid < x + w]
            fill = COLORS[CATEGORIES[under[0]]] if under else "white"
            ax.text(
                mid,
                0.5,
                f"R{e.req_id}",
                ha="center",
                va="center",
                fontsize=8,
                color=ink_on(fill),  # readable on whichever part lies under the label
                fontweight="bold",
            )
    holes, cursor = [], 0
    for e in layout.extents:
        if e.start > cursor:
            holes.append((cursor, 0, e.start - cursor, 1, COLORS["external_fragmentation"]))
        cursor = e.end
    holes.append((cursor, 0, cap - cursor, 1, COLORS["external_fragmentation"]))
    _boxes(ax, holes, lw=0)
    ax.set_xlim(0, cap)
    ax.set_ylim(0, 1)
    ax.set_xticks([0, cap // 2, cap])  # few labels: cheaper to redraw, as readable
    ax.set_yticks([])
    ax.set_xlabel(str(SLOT_ADDRESS))
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    if refused:
        ax.text(
            1.0,
            1.04,
            refused,
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=9,
            color="#D55E00",
            fontweight="bold",
        )
    return ax


def draw_arena_timeline(trace, ax=None, title=None, max_columns=600):
    """The arena over time (x: step, y: address), with refusals marked.

    Needs a trace recorded with `record_layout=True`. A red triangle marks a step where the
    queue's head was refused although the total free space would have held it ("no_hole").
    """
    ax = _axes(ax, (9, 4))
    steps = [s for s in trace if s.layout is not None]
    if not steps:
        raise ValueError("trace has no layouts: simulate(..., record_layout=True)")
    stride = max(1, len(steps) // max_columns)
    shown = steps[::stride]
    image = np.stack([arena_row(s.layout) for s in shown], axis=1)  # (capacity, steps)
    cmap = ListedColormap([COLORS[c] for c in CATEGORIES])
    ax.imshow(
        image,
        aspect="auto",
        origin="lower",
        cmap=cmap,
        vmin=-0.5,
        vmax=3.5,
        interpolation="nearest",
        extent=(shown[0].step, shown[-1].step + stride, 0, image.shape[0]),
    )
    cap = image.shape[0]
    refusal_marks = {
        "no_space": ("|", "gray", str(NOT_ENOUGH)),
        "no_hole": ("v", "#D55E00", str(NO_HOLE)),
    }
    for reason, (marker, color, label) in refusal_marks.items():
        at = refused_steps(steps, reason)
        if at:
            ax.plot(at, [cap * 1.02] * len(at), marker, c=color, ms=6, clip_on=False, label=label)
    ax.set_xlabel(str(DECODE_STEP))
    ax.set_ylabel(str(SLOT_ADDRESS))
    ax.set_title(title or str(ARENA_OVER_TIME), fontsize=10, loc="left", pad=12)
    handles = legend_handles() + ax.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def block_fill(layout: PagedLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per physical block: owner index (-1 free), filled slots, and ref count."""
    owner = np.full(layout.num_blocks, -1)
    fill = np.zeros(layout.num_blocks, dtype=int)
    refs = np.zeros(layout.num_blocks, dtype=int)
    for k, (_, table, n) in enumerate(layout.tables):
        for i, b in enumerate(table):
            if owner[b] < 0:
                owner[b] = k
            refs[b] += 1
            fill[b] = max(fill[b], min(layout.block_size, n - i * layout.block_size))
    return owner, fill, refs


def draw_block_pool(layout: PagedLayout, ax=None, title=None, columns=None):
    """Physical blocks as a grid, coloured by owning sequence, filled as far as they hold tokens.

    The empty part of a partly filled (last) block is reserved for the sequence's next tokens
    (sky blue; §4.2); only if the sequence ends first does it become internal fragmentation, at
    most block_size - 1 slots. Free blocks are grey; a null block (vLLM's block 0) is dark grey,
    named in a legend below. A "×n" in a block is its ref count. Ids and counts are black or
    white, whichever reads better on the colour under them (`style.ink_on`).
    Drawn as one raster image, so pools of thousands of blocks stay fast.
    """
    ax = _axes(ax, (6, 3))
    owner, fill, refs = block_fill(layout)
    n = layout.num_blocks
    columns = columns or int(np.ceil(np.sqrt(n * 2)))
    rows = int(np.ceil(n / columns))
    cell, gap = 8, 1  # pixels per block side, and between blocks
    palette = np.array([to_rgb(c) for c in SEQ_COLORS], dtype=np.float32)
    null = np.zeros(n, dtype=bool)
    null[list(layout.null_block_ids)] = True
    colour = palette[owner % len(palette)]  # (block, rgb)
    colour[owner < 0] = to_rgb(COLORS["external_fragmentation"])
    colour[null] = to_rgb(NULL_BLOCK_COLOR)
    empty = np.array(to_rgb(COLORS["reservation"]), dtype=np.float32)
    filled = np.where(owner < 0, cell, np.rint(cell * fill / layout.block_size))  # token pixels
    px = np.arange(cell)
    strips = np.where(px[None, :, None] < filled[:, None, None], colour[:, None, :], empty)
    blocks = np.ones((rows * columns, cell + gap, 3), dtype=np.float32)  # white gaps and padding
    blocks[:n, :cell] = strips  # (block, pixel column, rgb)
    image = np.ones((rows, cell + gap, columns * (cell + gap), 3), dtype=np.float32)
    image[:, :cell] = blocks.reshape(rows, 1, columns * (cell + gap), 3)
    image = image.reshape(rows * (cell + gap), columns * (cell + gap), 3)
    ax.imshow(image, interpolation="nearest")

    def label(b: int, x: float, text: str, **style) -> None:
        """`text` at pixel (x, x) of block b, in the ink for the colour under most of it."""
        r, c = b // columns, b % columns
        ink = ink_on(tuple(strips[b, min(int(x) + 1, cell - 1)]))
        ax.text(c * (cell + gap) + x, r * (cell + gap) + x, text, fontsize=8, color=ink, **style)

    for b in np.flatnonzero(refs > 1):
        label(b, cell / 2, f"×{refs[b]}", ha="center", va="center", fontweight="bold")
    if n <= 64:
        for b in range(n):
            label(b, 1, str(b), va="top")
    ax.axis("off")
    ax.set_title(
        title or POOL_TITLE.format(n=n, size=layout.block_size),
        fontsize=10,
        loc="left",
    )
    if null.any():
        handles = [
            Patch(facecolor=NULL_BLOCK_COLOR, label=str(NULL_BLOCK)),
            Patch(facecolor=COLORS["external_fragmentation"], label=str(FREE_BLOCK)),
            Patch(facecolor=COLORS["reservation"], label=str(LABELS["reservation"])),
        ]
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(0, 0),
            ncol=3,
            fontsize=8,
            frameon=False,
        )
    return ax
