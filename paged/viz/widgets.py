"""Widgets: thin ipywidgets wiring over the allocators, the simulator and the drawings.

Core widgets only (works on ipywidgets 7.7, as on Colab, and 8.x). Each explorer is a VBox, so
displaying it shows it; tests drive them headless by setting `.value` and calling `.click()`.
Figures are rendered to PNG bytes in an `Image` widget, so what is drawn can be compared.

    python -m paged.course.widget_bench   # the median redraw time of each explorer (MEASURED)
"""

from __future__ import annotations

import string

import ipywidgets as W

from .. import viz
from ..errors import AllocationError
from ..experiments import block_size_sweep
from ..paging import BLOCK_SIZES, PagedAllocator
from ..scheduler import Scheduler
from ..trace import paged_layout
from ..workloads import sharegpt_like
from . import widget_text as T
from .canvas import Canvas, counter_table, legend_html


class AllocatorExplorer(W.VBox):
    """The same workload through a contiguous arena and a paged pool, side by side."""

    def __init__(
        self,
        num_requests=40,
        kv_slots=8192,
        policy="max",
        placement="first_fit",
        block_size=16,
        seed=0,
    ):
        self.policy = W.Dropdown(
            options=["max", "pow2", "oracle"], value=policy, description=str(T.RESERVE)
        )
        self.placement = W.Dropdown(
            options=["first_fit", "buddy"], value=placement, description=str(T.PLACEMENT)
        )
        self.block_size = W.Dropdown(
            options=BLOCK_SIZES, value=block_size, description=str(T.BLOCK_SIZE)
        )
        self.kv_slots = W.IntSlider(
            value=kv_slots,
            min=2048,
            max=16384,
            step=512,
            description=str(T.KV_SLOTS),
            continuous_update=False,
        )
        self.seed = W.IntSlider(
            value=seed, min=0, max=9, description=str(T.SEED), continuous_update=False
        )
        self.steps_per_click = W.IntSlider(
            value=20, min=1, max=200, description=str(T.STEPS_PER_CLICK)
        )
        self.step_button = W.Button(description=str(T.STEP), icon="step-forward")
        self.reset_button = W.Button(description=str(T.RESET), icon="undo")
        self.play = W.Play(value=0, min=0, max=100_000, interval=300, description=str(T.PLAY))
        self.image = W.Image(format="png")
        self.counters = W.HTML()
        self.events = W.HTML()
        self.num_requests = num_requests
        for w in (self.policy, self.placement, self.block_size, self.kv_slots, self.seed):
            w.observe(lambda _: self.reset(), names="value")
        self.step_button.on_click(lambda _: self.step())
        self.reset_button.on_click(lambda _: self.reset())
        self.play.observe(lambda _: self.step(), names="value")
        controls = W.HBox(
            [
                W.VBox([self.policy, self.placement, self.block_size]),
                W.VBox([self.kv_slots, self.seed, self.steps_per_click]),
            ]
        )
        buttons = W.HBox([self.step_button, self.play, self.reset_button])
        legend = W.HTML(legend_html())  # HTML, drawn once: cheaper than a legend in every frame
        margins = dict(left=0.03, right=0.98, top=0.93, bottom=0.04, hspace=0.45)
        self._canvas = Canvas((9, 4.3), 2, 1, height_ratios=[1, 2.4], adjust=margins)
        super().__init__([controls, buttons, self.counters, self.events, legend, self.image])
        self.reset()

    def reset(self) -> None:
        """Start both runs again from step 0 with the current settings."""
        self._canvas.invalidate()  # new limits, ticks and pool shape
        reqs = sharegpt_like(self.num_requests, seed=self.seed.value)
        common = dict(kv_slots=self.kv_slots.value, record_layout=False)
        self.contiguous = Scheduler(
            reqs, self.policy.value, placement=self.placement.value, **common
        )
        self.paged = Scheduler(
            reqs, "paged", block_size=self.block_size.value, seed=self.seed.value, **common
        )
        self.num_refusals = {"contiguous": 0, "no_hole": 0, "paged": 0}
        self.num_preemptions = 0
        self.last_refusal = ""
        self.redraw()

    def step(self, n: int | None = None) -> None:
        """Advance both runs by `n` decode steps (default: the steps/click slider)."""
        for _ in range(self.steps_per_click.value if n is None else n):
            for name, sim in (("contiguous", self.contiguous), ("paged", self.paged)):
                if sim.done:
                    continue
                rec = sim.step()
                self.num_preemptions += len(rec.preempted)
                for req_id, reason in rec.refused:
                    self.num_refusals[name] += 1
                    if reason == "no_hole":
                        self.num_refusals["no_hole"] += 1
                        self.last_refusal = T.REFUSED_NO_HOLE.format(
                            step=rec.step,
                            req=req_id,
                            free=sim.allocator.total_free,
                            hole=sim.allocator.largest_hole,
                        )
        self.redraw()

    def redraw(self) -> None:
        c, p = self.contiguous, self.paged
        ax1, ax2 = self._canvas.fresh()
        title = T.CONTIGUOUS_TITLE.format(
            policy=self.policy.value,
            placement=self.placement.value,
            running=len(c.running),
            waiting=len(c.waiting),
        )
        viz.draw_arena(
            c.layout(),
            ax=ax1,
            title=title,
            refused=str(T.HEAD_REFUSED) if self._head_blocked() else None,
        )
        viz.draw_block_pool(
            p.layout(),
            ax=ax2,
            columns=32,
            title=T.PAGED_TITLE.format(
                block=self.block_size.value, running=len(p.running), waiting=len(p.waiting)
            ),
        )
        self.image.value = self._canvas.png()
        rows = {str(T.CONTIGUOUS): c.usage(), str(T.PAGED): p.usage()}
        counts = T.ALLOCATOR_COUNTERS.format(
            step_n=T.STEP_N.format(step=c.step_index),
            preemptions=self.num_preemptions,
            refusals=self.num_refusals["contiguous"],
            no_hole=self.num_refusals["no_hole"],
        )
        table = counter_table(rows, {k: c.config.kv_slots for k in rows})
        self.counters.value = f"{table}<p>{counts}</p>"
        self.events.value = (
            f"<p style='color:#D55E00'><b>{self.last_refusal}</b></p>" if self.last_refusal else ""
        )

    def _head_blocked(self) -> bool:
        c = self.contiguous
        if not c.waiting:
            return False
        head = c.waiting[0].request
        reason = c.allocator.why_not(prompt_len=head.prompt_len, output_len=head.output_len)
        return reason == "no_hole"


class BlockTableExplorer(W.VBox):
    """Allocate, append, fork and free; watch block tables, ref counts and copy-on-write."""

    def __init__(self, num_blocks=24, block_size=4, seed=0):
        self.allocator = PagedAllocator(num_blocks, block_size, seed=seed)
        self.allocator.allocate("A", 6)
        self.seq = W.Dropdown(options=["A"], value="A", description=str(T.SEQUENCE))
        self.name = W.Text(value="B", description=str(T.NEW_ID))
        self.tokens = W.BoundedIntText(value=5, min=0, max=10_000, description=str(T.TOKENS))
        self.allocate_button = W.Button(description=str(T.ALLOCATE))
        self.append_button = W.Button(description=str(T.APPEND))
        self.fork_button = W.Button(description=str(T.FORK))
        self.free_button = W.Button(description=str(T.FREE))
        self.message = W.HTML()
        self.image = W.Image(format="png")
        self.allocate_button.on_click(lambda _: self._do(self._allocate))
        self.append_button.on_click(lambda _: self._do(self._append))
        self.fork_button.on_click(lambda _: self._do(self._fork))
        self.free_button.on_click(lambda _: self._do(self._free))
        rows = [
            W.HBox([self.name, self.tokens, self.allocate_button]),
            W.HBox([self.seq, self.append_button, self.fork_button, self.free_button]),
        ]
        self._canvas = Canvas((9, 3.6), adjust=dict(left=0.02, right=0.99, top=0.97, bottom=0.02))
        super().__init__([*rows, self.message, self.image])
        self.redraw(str(T.START))

    def _allocate(self):
        table = self.allocator.allocate(self.name.value, self.tokens.value)
        return T.ALLOCATED.format(seq=repr(self.name.value), tokens=self.tokens.value, table=table)

    def _append(self):
        copies = self.allocator.append(self.seq.value, 1)
        table = self.allocator.block_table(self.seq.value)
        cow = T.COPIED.format(old=copies[0][0], new=copies[0][1]) if copies else ""
        return T.APPENDED.format(seq=repr(self.seq.value), table=table) + cow

    def _fork(self):
        self.allocator.fork(self.seq.value, self.name.value)
        return T.FORKED.format(seq=repr(self.seq.value), new=repr(self.name.value))

    def _free(self):
        self.allocator.free(self.seq.value)
        return T.FREED.format(seq=repr(self.seq.value))

    def _do(self, action) -> None:
        try:
            message = action()
        except (AllocationError, ValueError, KeyError) as exc:  # the allocator is unchanged
            self.redraw(error=f"{type(exc).__name__}: {exc}")
            return
        self.redraw(message)

    def redraw(self, message: str = "", error: str = "") -> None:
        ids = self.allocator.seq_ids
        self.seq.options = ids
        if ids and self.seq.value not in ids:
            self.seq.value = ids[0]
        self.name.value = next((c for c in string.ascii_uppercase if c not in ids), "")
        a = self.allocator
        status = T.BLOCKS_FREE.format(free=a.num_free_blocks, n=a.num_blocks)
        text = f"<span style='color:#D55E00'><b>{error}</b></span>" if error else message
        self.message.value = f"<p>{text}<br><small>{status}</small></p>"
        (ax,) = self._canvas.fresh()
        self._canvas.set_size_inches(9, 1.2 + 0.8 * max(3, len(ids)))
        viz.draw_block_table(paged_layout(a), ax=ax, columns=8)
        self.image.value = self._canvas.png()


class BlockSizeExplorer(W.VBox):
    """A block-size slider that redraws the trade-off (SIMULATED; MEASURED kernel rows if given)."""

    def __init__(self, requests=None, kv_slots=15_728, kernel_rows=None, block_size=16):
        self.points = block_size_sweep(requests or sharegpt_like(150, seed=0), kv_slots=kv_slots)
        self.kernel_rows = kernel_rows
        self.slider = W.SelectionSlider(
            options=BLOCK_SIZES,
            value=block_size,
            description=str(T.BLOCK_SIZE),
            continuous_update=False,
        )
        self.readout = W.HTML()
        self.image = W.Image(format="png")
        # The chart is drawn once; a move only blits the marker line onto it, and each block
        # size is encoded once (a slider revisits its stops).
        margins = dict(left=0.09, right=0.8 if kernel_rows else 0.88, top=0.9, bottom=0.14)
        self._canvas = Canvas((8, 3.6), adjust=margins)
        (ax,) = self._canvas.axes
        viz.draw_block_size_tradeoff(self.points, ax=ax, kernel_rows=kernel_rows)
        self._marker = ax.axvline(block_size, color="black", lw=1, alpha=0.6)
        self._png: dict[int, bytes] = {}
        self.slider.observe(lambda _: self.redraw(), names="value")
        super().__init__([self.slider, self.readout, self.image])
        self.redraw()

    def redraw(self) -> None:
        p = next(p for p in self.points if p.block_size == self.slider.value)
        readout = T.BLOCK_SIZE_READOUT.format(
            block=p.block_size,
            empty=100 * p.held_empty,
            entries=p.table_entries_per_seq,
            batch=p.mean_batch_size,
        )
        self.readout.value = f"<p>{readout}</p>"
        if p.block_size not in self._png:
            self._marker.set_xdata([p.block_size, p.block_size])
            self._png[p.block_size] = self._canvas.png(dynamic=[self._marker])
        self.image.value = self._png[p.block_size]


__all__ = ["AllocatorExplorer", "BlockSizeExplorer", "BlockTableExplorer"]
