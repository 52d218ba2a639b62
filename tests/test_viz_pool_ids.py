"""The block pool's ids and ref counts read on every colour; the null block has its own colour."""

from collections import Counter

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

import paged
from paged import viz
from paged.engines import vllm, vllm_recordings
from paged.pool import make_pool
from paged.scheduler_options import settle
from paged.text import set_language
from paged.trace import paged_layout
from paged.viz import pools, style

WCAG_AA = 4.5  # the contrast ratio WCAG 2 asks of normal text


def every_colour_pool() -> paged.PagedAllocator:
    """Block 0 null, a sequence in every owner colour (full and part-filled blocks), a fork
    (a ref count drawn), free blocks left over."""
    a = paged.PagedAllocator(num_blocks=48, block_size=4, seed=1)
    a.reserve(0)
    for k in range(len(style.SEQ_COLORS) + 1):
        a.allocate(k, 1 + 3 * k % 9)  # 1 to 9 tokens: a last block 1/4 to 4/4 full
    a.fork(3, "fork")
    return a


@pytest.mark.parametrize(
    "fill",
    [*style.SEQ_COLORS, *style.COLORS.values(), style.NULL_BLOCK_COLOR],
)
def test_ink_contrasts_with_every_fill(fill):
    assert style.contrast_ratio(style.ink_on(fill), fill) >= WCAG_AA


def test_contrast_ratio_is_wcag():
    assert style.contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21)
    assert style.contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    assert style.ink_on("#000000") == "#FFFFFF" and style.ink_on("#F0E442") == "#000000"


def test_null_block_has_its_own_colour():
    colours = {to_hex(c) for c in [*style.SEQ_COLORS, *style.COLORS.values()]}
    assert to_hex(style.NULL_BLOCK_COLOR) not in colours


def drawn(layout):
    fig, ax = plt.subplots(figsize=(9, 4))
    viz.draw_block_pool(layout, ax=ax, columns=12)
    fig.canvas.draw()
    return fig, ax


def test_every_id_and_count_reads_on_what_lies_under_it():
    fig, ax = drawn(paged_layout(every_colour_pool(), null_block_ids=(0,)))
    image = ax.images[0].get_array()  # (rows, columns, rgb), one pixel per data unit
    to_data = ax.transData.inverted()
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) == 48 + 1  # every id, and the fork's ×2
    under_colours = set()
    for text in labels:
        (x0, y0), (x1, y1) = to_data.transform(text.get_window_extent().get_points())
        cols = range(int(np.floor(min(x0, x1) + 0.5)), int(np.floor(max(x0, x1) + 0.5)) + 1)
        rows = range(int(np.floor(min(y0, y1) + 0.5)), int(np.floor(max(y0, y1) + 0.5)) + 1)
        under = Counter(to_hex(image[r, c]) for r in rows for c in cols)
        fill, _ = under.most_common(1)[0]
        under_colours.add(fill)
        ratio = style.contrast_ratio(text.get_color(), fill)
        assert ratio >= WCAG_AA, (text.get_text(), text.get_color(), fill, ratio)
    plt.close(fig)
    # The pool really put text on the dark and the light colours, the null block's among them.
    assert {to_hex(style.NULL_BLOCK_COLOR), "#000000", "#f0e442"} <= under_colours


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_null_block_is_drawn_and_named(lang):
    set_language(lang)
    try:
        pool = every_colour_pool()
        fig, ax = drawn(paged_layout(pool, null_block_ids=(0,)))
        image = ax.images[0].get_array()
        assert to_hex(image[0, 0]) == to_hex(style.NULL_BLOCK_COLOR)
        free = pool.free_block_ids[0]
        free_pixel = image[free // 12 * 9, free % 12 * 9]  # 12 columns of 8 + 1 pixels
        assert to_hex(free_pixel) == to_hex(style.COLORS["external_fragmentation"])
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend[0] == str(pools.NULL_BLOCK) and ("널 블록" in legend[0]) == (lang == "ko")
        plt.close(fig)
        fig, ax = drawn(paged_layout(every_colour_pool()))  # no null block: no legend
        assert ax.get_legend() is None and to_hex(ax.images[0].get_array()[0, 0]) != to_hex(
            style.NULL_BLOCK_COLOR
        )
        plt.close(fig)
    finally:
        set_language("en")


def test_both_null_blocks_reach_the_drawing():
    """vLLM's run and the course under vLLM V1's rules both mark block 0 as the null block."""
    rec = vllm_recordings.recording("chapter11_24x48_32x32")["request"]
    engine = vllm.generate(rec["prompt_token_ids"], 48, kv_blocks=32, block_size=32, live=False)
    assert all(s.layout.null_block_ids == (0,) for s in engine.trace)
    for rules, null in (("vllm-v1", (0,)), ("course", ())):
        config = settle("paged", kv_slots=32 * 32, block_size=32, rules=rules)
        assert make_pool(config).layout().null_block_ids == null
