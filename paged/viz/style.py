"""The course's visual vocabulary: one colour per use of a KV slot, owner colours, axes.

Four fixed, colour-blind-safe colours (Okabe-Ito) name the four uses of a KV slot everywhere in
the course, the categories of the paper's Fig. 2: token states, reservation, internal
fragmentation, and external fragmentation & others (free slots and the allocator's round-up).
Hatching means one thing: slots the buddy allocator's round-up took (`pools.draw_arena`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgb
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
# vLLM's null block (block 0): held by no sequence and never free, so neither grey nor an owner.
NULL_BLOCK_COLOR = "#4D4D4D"  # dark grey
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


def relative_luminance(colour) -> float:
    """WCAG 2's relative luminance of a matplotlib colour: 0 for black, 1 for white."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a, b) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21 (text wants at least 4.5)."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ink_on(fill) -> str:
    """Black or white, whichever contrasts more with `fill`: the colour of text drawn on it."""
    black, white = "#000000", "#FFFFFF"
    return black if contrast_ratio(black, fill) >= contrast_ratio(white, fill) else white


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
