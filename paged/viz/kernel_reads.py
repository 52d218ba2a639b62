"""What a kernel touched: the blocks of the pool it read (`draw_kernel_reads`, the course's
kernel) and, program by program, the elements a learner's kernel loaded and stored
(`draw_program_accesses`; `try_kernel` runs a Triton puzzle's kernel once and draws it)."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch, Rectangle

from ..text import msg
from ..trace import PagedLayout
from .pools import block_fill
from .style import COLORS, SEQ_COLORS, _axes, ink_on

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


# ---- a learner's kernel, program by program (try_kernel, below) ---------------------------------
KINDS = {
    "load": msg("loaded", "읽은 원소"),
    "store": msg("stored", "쓴 원소"),
    "atomic": msg("touched by an atomic", "원자적 연산이 건드린 원소"),
}
PANEL = msg("{name}: {kind}, by program", "{name}: 프로그램별 {kind}")
UNTOUCHED = msg("not touched", "건드리지 않음")
SEVERAL = msg("several programs (+)", "여러 프로그램(+)")
STRAY = msg("not this program's to touch", "이 프로그램이 건드리면 안 되는 곳")
OUTSIDE_VIEW = msg(
    "{name}: {count} more lanes outside the drawn elements",
    "{name}: 그린 원소 밖의 레인 {count}개 더",
)
UNTOUCHED_COLOR, SEVERAL_COLOR, STRAY_COLOR = "#EEEEEE", "#555555", "#D55E00"


def draw_program_accesses(panels, title=None, cell=0.42):
    """Which program touched which element of a kernel's tensors: one panel per (tensor, kind).

    `panels` holds (name, kind, owners, stray, names, outside[, note]): `owners` a (rows, cols)
    int array of the program index that touched each cell (-1 none, -2 several), `stray` a bool
    array of the cells touched by a program that may not touch them, `names[i]` program i as
    launched ("2", "1,0"), `outside` how many lanes fell outside the drawn cells, `note` what the
    rows are (numbered on the left when there are several). This draws what a launch recorded
    (`triton_checks.Watch(record=True)`); it computes nothing. Returns the figure.
    """
    import matplotlib.pyplot as plt

    from .fonts import use_cjk_font

    use_cjk_font()
    if not panels:
        raise ValueError("draw_program_accesses needs at least one panel, got none")
    widest = max(p[2].shape[1] for p in panels)
    heights = [p[2].shape[0] + 1.3 for p in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(max(7.5, 1.0 + cell * widest), cell * sum(heights) + 0.9),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, (name, kind, owners, stray, names, outside, *note) in zip(
        axes[:, 0], panels, strict=True
    ):
        rows, cols = owners.shape
        for r in range(rows if rows > 1 else 0):
            ax.text(-0.15, rows - 0.5 - r, str(r), ha="right", va="center", fontsize=8)
        for (r, c), who in np.ndenumerate(owners):
            y = rows - 1 - r
            face = (
                UNTOUCHED_COLOR
                if who == -1
                else SEVERAL_COLOR
                if who == -2
                else SEQ_COLORS[who % len(SEQ_COLORS)]
            )
            ax.add_patch(Rectangle((c + 0.05, y + 0.05), 0.9, 0.9, fc=face, lw=0))
            if stray[r, c]:
                ax.add_patch(
                    Rectangle((c + 0.08, y + 0.08), 0.84, 0.84, fill=False, ec=STRAY_COLOR, lw=2.5)
                )
            if who != -1:
                text = "+" if who == -2 else names[who]
                size = 9 if len(text) <= 2 else 7
                ax.text(
                    c + 0.5,
                    y + 0.5,
                    text,
                    ha="center",
                    va="center",
                    fontsize=size,
                    color=ink_on(face),
                    fontweight="bold",
                )
        label = PANEL.format(name=name, kind=KINDS[kind]) + "".join(f" ({n})" for n in note)
        if outside:
            label += "\n" + OUTSIDE_VIEW.format(name=name, count=outside)
        ax.set_title(label, fontsize=10, loc="left")
        ax.set_xlim(0, max(cols, widest))
        ax.set_ylim(0, rows)
        ax.set_aspect("equal")
        ax.axis("off")
    handles = [
        Patch(fc=UNTOUCHED_COLOR, label=str(UNTOUCHED)),
        Patch(fc=SEVERAL_COLOR, label=str(SEVERAL)),
        Patch(fc="white", ec=STRAY_COLOR, lw=2.5, label=str(STRAY)),
    ]
    fig.legend(handles=handles, fontsize=9, loc="lower left", ncol=3, frameon=False)
    if title:
        fig.suptitle(title, fontsize=11, x=0.02, ha="left", wrap=True)
    return fig


TITLE = msg(
    "{name} on {where}: what each program touched",
    "{where}에서 실행한 {name}: 프로그램마다 건드린 곳",
)


def try_kernel(kernel, puzzle: str | None = None, show: bool = True):
    """Run a Triton puzzle's kernel once on its first teaching case, before asking for a
    verdict: print its output beside the answer and draw what each of its programs loaded and
    stored (traced under the interpreter; on a CUDA GPU in a child process) (`paged.exercises.engine.kernel_try`). `puzzle` defaults to the
    kernel's name ("copy_kernel"). The figure is shown, or with show=False returned."""
    from ..exercises.engine.kernel_try import trial

    ran = trial(kernel, puzzle)
    if ran is None or not ran.panels:
        return None
    fig = draw_program_accesses(ran.panels, title=TITLE.format(name=ran.name, where=ran.where))
    if not show:
        return fig
    import matplotlib.pyplot as plt

    plt.show()
    return None
