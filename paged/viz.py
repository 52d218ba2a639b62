"""Drawings: pure functions from layouts, traces and results to matplotlib axes. No state.

Four fixed, colour-blind-safe colours (Okabe-Ito) name the four uses of a KV slot everywhere in
the course, the categories of the paper's Fig. 2: token states, reservation, internal
fragmentation, and external fragmentation & others (free slots and the allocator's round-up).
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PatchCollection
from matplotlib.colors import ListedColormap, to_rgb, to_rgba
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.path import Path as MplPath

from . import facts
from .fonts import use_cjk_font
from .simulator import CATEGORIES, ContiguousLayout, PagedLayout

COLORS = {
    "token_states": "#0072B2",  # blue
    "reservation": "#56B4E9",  # sky blue
    "internal_fragmentation": "#E69F00",  # orange
    "external_fragmentation": "#D9D9D9",  # light grey: free, or taken by the allocator's round-up
}
LABELS = {
    "token_states": "token states",
    "reservation": "reserved for later tokens",
    "internal_fragmentation": "internal fragmentation",
    "external_fragmentation": "external frag. & others",
}
POLICY_NAMES = {"max": "Max", "pow2": "Pow2", "oracle": "Oracle", "paged": "Paged"}
# Owners of physical blocks: none of the four category colours above.
SEQ_COLORS = [
    "#009E73",
    "#CC79A7",
    "#882255",
    "#8C564B",
    "#999933",
    "#6A3D9A",
    "#B2DF8A",
    "#000000",
    "#F0E442",
    "#1F78B4",
    "#FB9A99",
    "#33A02C",
]


def legend_handles(categories=CATEGORIES) -> list[Patch]:
    return [
        Patch(facecolor=COLORS[c], edgecolor="black", lw=0.5, label=LABELS[c]) for c in categories
    ]


def _boxes(ax, boxes, **style) -> None:
    """Add rectangles (x, y, width, height, facecolor) as one collection: fast to add and draw."""
    if boxes:
        rects = [Rectangle((x, y), w, h) for x, y, w, h, _ in boxes]
        ax.add_collection(PatchCollection(rects, facecolors=[b[4] for b in boxes], **style))


def _axes(ax, figsize):
    use_cjk_font()  # Hangul labels (the Korean edition) need a CJK font; cheap when repeated
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, dpi=100)
    return ax


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
            ax.text(
                e.start + e.size / 2,
                0.5,
                f"R{e.req_id}",
                ha="center",
                va="center",
                fontsize=8,
                color="white",
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
    ax.set_xlabel("KV slot address")
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
        "no_space": ("|", "gray", "refused: not enough free in total"),
        "no_hole": ("v", "#D55E00", "refused: enough free in total, no hole big enough"),
    }
    for reason, (marker, color, label) in refusal_marks.items():
        at = [s.step for s in steps if any(r == reason for _, r in s.refused)]
        if at:
            ax.plot(at, [cap * 1.02] * len(at), marker, c=color, ms=6, clip_on=False, label=label)
    ax.set_xlabel("decode step")
    ax.set_ylabel("KV slot address")
    ax.set_title(title or "Contiguous arena over time", fontsize=10, loc="left", pad=12)
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
    most block_size - 1 slots. Free blocks are grey. A "×n" in a block is its ref count.
    Drawn as one raster image, so pools of thousands of blocks stay fast.
    """
    ax = _axes(ax, (6, 3))
    owner, fill, refs = block_fill(layout)
    n = layout.num_blocks
    columns = columns or int(np.ceil(np.sqrt(n * 2)))
    rows = int(np.ceil(n / columns))
    cell, gap = 8, 1  # pixels per block side, and between blocks
    palette = np.array([to_rgb(c) for c in SEQ_COLORS], dtype=np.float32)
    free = owner < 0
    colour = np.where(free[:, None], to_rgb(COLORS["external_fragmentation"]),
                      palette[owner % len(palette)])  # fmt: skip
    filled = np.where(free, cell, np.rint(cell * fill / layout.block_size))  # pixels of tokens
    px = np.arange(cell)
    empty = np.array(to_rgb(COLORS["reservation"]), dtype=np.float32)
    strips = np.where(px[None, :, None] < filled[:, None, None], colour[:, None, :], empty)
    blocks = np.ones((rows * columns, cell + gap, 3), dtype=np.float32)  # white gaps and padding
    blocks[:n, :cell] = strips  # (block, pixel column, rgb)
    image = np.ones((rows, cell + gap, columns * (cell + gap), 3), dtype=np.float32)
    image[:, :cell] = blocks.reshape(rows, 1, columns * (cell + gap), 3)
    image = image.reshape(rows * (cell + gap), columns * (cell + gap), 3)
    ax.imshow(image, interpolation="nearest")
    for b in np.flatnonzero(refs > 1):
        r, c = b // columns, b % columns
        ax.text(
            c * (cell + gap) + cell / 2,
            r * (cell + gap) + cell / 2,
            f"×{refs[b]}",
            ha="center",
            va="center",
            fontsize=8,
            color="white",
            fontweight="bold",
        )
    if n <= 64:
        for b in range(n):
            r, c = b // columns, b % columns
            ax.text(
                c * (cell + gap) + 1,
                r * (cell + gap) + 1,
                str(b),
                fontsize=8,
                va="top",
                color="#333333",
            )
    ax.axis("off")
    ax.set_title(
        title or f"Block pool: {n} physical blocks of {layout.block_size} slots",
        fontsize=10,
        loc="left",
    )
    return ax


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
                (k, b, [(lx + 0.5, ly), (lx + 0.5, below), (lane, below), (lane, above),
                        (x_in, above), (x_in, py + 1)])
            )  # fmt: skip
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


def draw_block_table(layout: PagedLayout, ax=None, title=None, columns=8):
    """Each sequence's logical blocks in order (left), arrows to the physical blocks (right).

    A block several sequences share is striped in every holder's colour, with its ref count.
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
        ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=8, color=color,
                fontweight="bold" if refs[b] > 1 else None)  # fmt: skip
    logical = []
    for k, (seq_id, table, num_tokens) in enumerate(layout.tables):
        color = to_rgba(SEQ_COLORS[k % len(SEQ_COLORS)], 0.35)
        _, y = geo.logical(k, 0)
        ax.text(0.9, y + 0.5, f"{seq_id}\n{num_tokens} tok", ha="right", va="center", fontsize=9)
        for i, b in enumerate(table):
            x, y = geo.logical(k, i)
            logical.append((x, y, 1, 1, color))
            ax.text(x + 0.5, y + 0.5, f"L{i}→{b}", ha="center", va="center", fontsize=8)
    _boxes(ax, logical, edgecolor="black", lw=0.5)
    for k, _, points in arrow_routes(layout, geo):
        ax.add_patch(
            FancyArrowPatch(
                path=MplPath(points), arrowstyle="-|>", mutation_scale=10,
                color=SEQ_COLORS[k % len(SEQ_COLORS)], lw=0.9, alpha=0.85,
            )
        )  # fmt: skip
    ax.text(1, geo.y_top + 0.3, "logical blocks (block table)", fontsize=10)
    ax.text(geo.x0, geo.y_top + 0.3, "physical blocks (pool)", fontsize=10)
    ax.set_xlim(-1.2, geo.x0 + columns * 1.1)
    ax.set_ylim(min(geo.y_top - 1.2 * max(len(layout.tables), rows), 0) - 0.3, geo.y_top + 1)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    return ax


def draw_breakdown(results: dict, ax=None, paper=facts.FIG2_BREAKDOWN, title=None):
    """Stacked bars of the four categories: SIMULATED beside PAPER for each policy."""
    ax = _axes(ax, (9, 4.2))
    bars = []
    for policy, res in results.items():
        bars.append((f"{POLICY_NAMES[policy]}  SIMULATED", res.breakdown, False))
        if paper and policy in paper:
            p = paper[policy]
            pct = {c: (p[c] or 0) / 100 for c in CATEGORIES}
            if policy == "paged":  # the paper does not split vLLM's remaining 3.7 %
                pct["external_fragmentation"] = 1 - pct["token_states"]
            bars.append((f"{facts.FIG2_SYSTEM_NAMES[policy]}  PAPER", pct, True))
    for i, (_, frac, is_paper) in enumerate(bars):
        y = len(bars) - 1 - i
        left = 0.0
        for c in CATEGORIES:
            w = frac[c]
            ax.barh(
                y,
                w,
                left=left,
                color=COLORS[c],
                edgecolor="black",
                lw=0.4,
                hatch="//" if is_paper else None,
            )
            if w >= 0.06:
                ax.text(
                    left + w / 2,
                    y,
                    f"{100 * w:.1f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                )
            left += w
    ax.set_yticks(range(len(bars)), [b[0] for b in reversed(bars)], fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xticks(np.linspace(0, 1, 6), [f"{int(100 * t)}%" for t in np.linspace(0, 1, 6)])
    ax.set_xlabel("share of all KV-cache slots (time average)")
    ax.set_title(
        title or "KV-cache usage by policy: SIMULATED vs PAPER (Fig. 2)", fontsize=10, loc="left"
    )
    ax.legend(
        handles=legend_handles(),
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncol=4,
        frameon=False,
    )
    return ax


def draw_capacity(results: dict, ax=None, title=None):
    """Mean number of requests running at once, per policy, in the same memory."""
    ax = _axes(ax, (6, 3))
    names = [POLICY_NAMES[p] for p in results]
    values = [r.mean_batch_size for r in results.values()]
    colors = ["#999999"] * (len(values) - 1) + ["#0072B2"] if "paged" in results else None
    ax.bar(names, values, color=colors, edgecolor="black", lw=0.5)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.1f}", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("mean running requests")
    ax.set_ylim(0, max(values) * 1.18)
    ax.set_title(
        title or "Concurrent requests in the same KV memory (SIMULATED)", fontsize=10, loc="left"
    )
    return ax


def draw_block_size_tradeoff(points, ax=None, highlight=None, kernel_rows=None, title=None):
    """Empty last-block slots and block-table length vs block size; kernel time if given.

    `kernel_rows`: rows of the kernel benchmark CSV (MEASURED), drawn on a third axis.
    """
    ax = _axes(ax, (8, 3.8))
    bs = [p.block_size for p in points]
    empty = [100 * p.held_empty for p in points]
    ax.plot(bs, empty, "o-", color="#444444", label="empty slots in last blocks (SIMULATED)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(bs, [str(b) for b in bs])
    ax.set_xlabel("block size (tokens)")
    ax.set_ylabel("empty slots in last blocks (% of all)", color="#444444")
    ax2 = ax.twinx()
    ax2.plot(
        bs,
        [p.table_entries_per_seq for p in points],
        "s--",
        color="#0072B2",
        label="block-table entries per request",
    )
    ax2.set_yscale("log")
    ax2.set_ylabel("block-table entries per request", color="#0072B2")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    if kernel_rows:
        ax3 = ax.twinx()
        ax3.spines["right"].set_position(("axes", 1.15))
        pts = sorted(
            (int(r["block_size"]), float(r["time_ms"]))
            for r in kernel_rows
            if r["variant"] == "triton_paged_shuffled"
        )
        ax3.plot(
            *zip(*pts, strict=True),
            "^:",
            color="#009E73",
            label=f"kernel time, ms (MEASURED, {kernel_rows[0]['device']})",
        )
        ax3.set_ylabel("kernel time (ms)", color="#009E73")
        handles += ax3.get_legend_handles_labels()[0]
    if highlight is not None:
        ax.axvline(highlight, color="black", lw=1, alpha=0.6)
    ax.legend(handles=handles, fontsize=8, loc="upper center")
    ax.set_title(title or "The block-size trade-off", fontsize=10, loc="left")
    return ax


def draw_kernel_reads(layout: PagedLayout, reads, ax=None, title=None, columns=8):
    """The block pool with the blocks a kernel read outlined, and how many tokens it read there.

    `reads[b]` is what the kernel itself recorded for physical block b (chapter 6's gather
    kernel adds the number of tokens it loads from a block to a debug buffer): this draws that
    buffer, it does not recompute it. Blocks it skipped are faded and named; free ones are grey.
    """
    reads = np.asarray(reads)
    n = layout.num_blocks
    if reads.shape != (n,):
        raise ValueError(f"reads must have one entry per physical block ({n}), got {reads.shape}")
    rows = -(-n // columns)
    ax = _axes(ax, (1.0 + 0.75 * columns, 1.1 + 0.75 * rows))
    owner, _, _ = block_fill(layout)
    for b in range(n):
        x, y = b % columns, rows - 1 - b // columns
        read = reads[b] > 0
        if owner[b] < 0:
            face, alpha = COLORS["external_fragmentation"], 1.0
        else:
            face, alpha = SEQ_COLORS[owner[b] % len(SEQ_COLORS)], 1.0 if read else 0.25
        ax.add_patch(Rectangle((x + 0.05, y + 0.05), 0.9, 0.9, fc=face, alpha=alpha, lw=0))
        ax.add_patch(
            Rectangle((x + 0.05, y + 0.05), 0.9, 0.9, fill=False,
                      ec="black" if read else "#BBBBBB", lw=3 if read else 0.5)
        )  # fmt: skip
        ax.text(x + 0.1, y + 0.88, str(b), fontsize=10, va="top", color="#333333")
        if read:
            ax.text(x + 0.5, y + 0.4, str(int(reads[b])), fontsize=14, ha="center",
                    va="center", color="white", fontweight="bold")  # fmt: skip
        elif owner[b] >= 0:  # not read: name the owner, so faded colours stay readable
            ax.text(x + 0.5, y + 0.4, str(layout.tables[owner[b]][0]), fontsize=12,
                    ha="center", va="center", color=face, fontweight="bold")  # fmt: skip
    handles = [
        Patch(fc=SEQ_COLORS[k % len(SEQ_COLORS)], label=f"{seq_id} ({num_tokens} tokens)")
        for k, (seq_id, _, num_tokens) in enumerate(layout.tables)
    ]
    handles += [
        Patch(fc="white", ec="black", lw=3, label="read by the kernel\n(number: tokens read)"),
        Patch(fc=COLORS["external_fragmentation"], label="free block"),
    ]
    ax.legend(handles=handles, fontsize=10, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_xlim(0, columns)
    ax.set_ylim(0, rows)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(
        title or f"What the kernel read: {int(reads.sum())} tokens from "
        f"{int((reads > 0).sum())} of {n} physical blocks",
        fontsize=11, loc="left",
    )  # fmt: skip
    return ax


def draw_preemption_costs(
    model, block_sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256), ax=None, title=None
):
    """Swap (out + in) vs recompute time per preempted token, by block size (SIMULATED model).

    The shape of the paper's Fig. 19(a): swapping pays a fixed cost per transfer, so it is
    slow for small blocks; recomputation does not depend on the block size.
    """
    ax = _axes(ax, (7, 3.6))
    swap, recompute = zip(*(model.per_token(bs) for bs in block_sizes), strict=True)
    ax.plot(block_sizes, [1e6 * s for s in swap], "o-", color="#CC79A7", label="swap out + in")
    ax.plot(block_sizes, [1e6 * r for r in recompute], "s--", color="#009E73", label="recompute")
    cross = next((bs for bs, s, r in zip(block_sizes, swap, recompute, strict=True) if s < r), None)
    if cross is not None:
        ax.axvline(cross, color="black", lw=1, alpha=0.5)
        ax.text(cross, ax.get_ylim()[1] * 0.9, f" swap cheaper from {cross}", fontsize=10)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(block_sizes, [str(b) for b in block_sizes])
    ax.set_xlabel("block size (tokens)", fontsize=11)
    ax.set_ylabel("µs per preempted token", fontsize=11)
    ax.legend(fontsize=10, loc="lower left")
    ax.set_title(
        title or "Recovering a preempted token (SIMULATED cost model)", fontsize=11, loc="left"
    )
    return ax
