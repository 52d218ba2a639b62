"""A kernel's reads drawn on the pool: which physical blocks it touched, and how many tokens."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch, Rectangle

from ..text import msg
from ..trace import PagedLayout
from .pools import block_fill
from .style import COLORS, SEQ_COLORS, _axes

SEQ_TOKENS = msg("{seq} ({n} tokens)", "{seq} (토큰 {n}개)")
READ = msg("read by the kernel\n(number: tokens read)", "커널이 읽은 블록\n(숫자: 읽은 토큰 수)")
FREE = msg("free block", "빈 블록")
WHAT_READ = msg(
    "What the kernel read: {tokens} tokens from {blocks} of {n} physical blocks",
    "커널이 읽은 것: 물리 블록 {n}개 중 {blocks}개에서 토큰 {tokens}개",
)


def draw_kernel_reads(layout: PagedLayout, reads, ax=None, title=None, columns=8):
    """The block pool with the blocks a kernel read outlined, and how many tokens it read there.

    `reads[b]` is what the kernel itself recorded for physical block b (chapter 7's gather
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
            Rectangle(
                (x + 0.05, y + 0.05),
                0.9,
                0.9,
                fill=False,
                ec="black" if read else "#BBBBBB",
                lw=3 if read else 0.5,
            )
        )
        ax.text(x + 0.1, y + 0.88, str(b), fontsize=10, va="top", color="#333333")
        if read:
            ax.text(
                x + 0.5,
                y + 0.4,
                str(int(reads[b])),
                fontsize=14,
                ha="center",
                va="center",
                color="white",
                fontweight="bold",
            )
        elif owner[b] >= 0:  # not read: name the owner, so faded colours stay readable
            ax.text(
                x + 0.5,
                y + 0.4,
                str(layout.tables[owner[b]][0]),
                fontsize=12,
                ha="center",
                va="center",
                color=face,
                fontweight="bold",
            )
    handles = [
        Patch(fc=SEQ_COLORS[k % len(SEQ_COLORS)], label=SEQ_TOKENS.format(seq=seq_id, n=num_tokens))
        for k, (seq_id, _, num_tokens) in enumerate(layout.tables)
    ]
    handles += [
        Patch(fc="white", ec="black", lw=3, label=str(READ)),
        Patch(fc=COLORS["external_fragmentation"], label=str(FREE)),
    ]
    ax.legend(handles=handles, fontsize=10, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_xlim(0, columns)
    ax.set_ylim(0, rows)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(
        title or WHAT_READ.format(tokens=int(reads.sum()), blocks=int((reads > 0).sum()), n=n),
        fontsize=11,
        loc="left",
    )
    return ax
