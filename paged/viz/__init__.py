"""Drawings: pure functions from layouts, traces and results to matplotlib axes. No state.

By what they draw: `pools` (a contiguous arena, a block pool), `tables` (block tables: each
logical block labelled with its physical block), `charts` (breakdowns and trade-offs),
`caching_chart` (what prefix caching saves), `kernel_reads` (what a kernel read), `schedule`
(what each request did in each step of a run). `style` holds the colours every drawing shares;
`widgets` (ipywidgets, imported on its own) replays the scheduler step by step; `figures`
regenerates the repository's `figures/` (`python -m paged.viz.figures`).
"""

from ..trace import HEADERS
from .caching_chart import draw_caching_savings
from .charts import draw_block_size_tradeoff, draw_breakdown, draw_capacity, draw_preemption_costs
from .fonts import use_cjk_font
from .kernel_reads import draw_kernel_reads
from .pools import arena_row, block_fill, draw_arena, draw_arena_timeline, draw_block_pool
from .schedule import draw_schedule
from .style import COLORS, LABELS, POLICY_NAMES, SEQ_COLORS, legend_handles
from .tables import (
    TableGeometry,
    arrow_routes,
    block_holders,
    draw_block_table,
    pool_stripes,
    table_geometry,
)

# Before any figure exists: axes a chapter makes with plt.subplots() take the font family that
# is current when they are made, and the Korean edition's titles need Hangul glyphs.
use_cjk_font()

__all__ = [
    "COLORS",
    "HEADERS",
    "LABELS",
    "POLICY_NAMES",
    "SEQ_COLORS",
    "TableGeometry",
    "arena_row",
    "arrow_routes",
    "block_fill",
    "block_holders",
    "draw_arena",
    "draw_arena_timeline",
    "draw_block_pool",
    "draw_block_size_tradeoff",
    "draw_block_table",
    "draw_breakdown",
    "draw_caching_savings",
    "draw_capacity",
    "draw_kernel_reads",
    "draw_preemption_costs",
    "draw_schedule",
    "legend_handles",
    "pool_stripes",
    "table_geometry",
]
