"""The course's visual vocabulary: one colour per use of a KV slot, owner colours, axes.

Four fixed, colour-blind-safe colours (Okabe-Ito) name the four uses of a KV slot everywhere in
the course, the categories of the paper's Fig. 2: token states, reservation, internal
fragmentation, and external fragmentation & others (free slots and the allocator's round-up).
Hatching means one thing: slots the buddy allocator's round-up took (`pools.draw_arena`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.collections import PatchCollection
from matplotlib.patches import Patch, Rectangle

from ..text import msg
from ..trace import CATEGORIES
from .fonts import use_cjk_font

COLORS = {
    "token_states": "#0072B2",  # blue
    "reservation": "#56B4E9",  # sky blue
    "internal_fragmentation": "#E69F00",  # orange
    "external_fragmentation": "#D9D9D9",  # light grey: free, or taken by the allocator's round-up
}
LABELS = {  # Messages: each prints in the edition's language (paged.text)
    "token_states": msg("token states", "토큰 상태"),
    "reservation": msg("reserved for later tokens", "이후 토큰을 위한 예약"),
    "internal_fragmentation": msg("internal fragmentation", "내부 단편화"),
    "external_fragmentation": msg("external frag. & others", "외부 단편화 및 기타"),
}
HEADERS = {  # the same categories, short enough for a table's column
    "token_states": msg("token states", "토큰 상태"),
    "reservation": msg("reservation", "예약"),
    "internal_fragmentation": msg("internal frag", "내부 단편화"),
    "external_fragmentation": msg("external frag", "외부 단편화"),
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
        Patch(facecolor=COLORS[c], edgecolor="black", lw=0.5, label=str(LABELS[c]))
        for c in categories
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
