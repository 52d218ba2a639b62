"""The preemption explorer (chapter 9): a paged pool running dry, victims swapped or recomputed.

Thin ipywidgets wiring over `paged.scheduler.Scheduler` and the pool drawing, like `widgets.py`.
"""

from __future__ import annotations

import ipywidgets as W

from .. import viz
from ..scheduler import Scheduler
from ..trace import paged_layout
from ..workloads import sharegpt_like
from . import widget_text as T
from .canvas import Canvas


class PreemptionExplorer(W.VBox):
    """Shrink the pool and watch preemptions: blocks swapped to the CPU pool, or recomputed."""

    def __init__(self, num_requests=30, kv_slots=2560, preemption="swap", block_size=16, seed=0):
        self.kv_slots = W.IntSlider(  # from just above the longest request (2,048 tokens)
            value=kv_slots,
            min=2304,
            max=8192,
            step=256,
            description=str(T.GPU_SLOTS),
            continuous_update=False,
        )
        self.preemption = W.Dropdown(
            options=["recompute", "swap"], value=preemption, description=str(T.PREEMPTION)
        )
        self.block_size = W.Dropdown(
            options=[4, 8, 16, 32, 64], value=block_size, description=str(T.BLOCK_SIZE)
        )
        self.steps_per_click = W.IntSlider(
            value=10, min=1, max=100, description=str(T.STEPS_PER_CLICK)
        )
        self.step_button = W.Button(description=str(T.STEP), icon="step-forward")
        self.reset_button = W.Button(description=str(T.RESET), icon="undo")
        self.play = W.Play(value=0, min=0, max=100_000, interval=300, description=str(T.PLAY))
        self.counters = W.HTML()
        self.image = W.Image(format="png")
        self.requests = sharegpt_like(num_requests, seed=seed)
        for w in (self.kv_slots, self.preemption, self.block_size):
            w.observe(lambda _: self.reset(), names="value")
        self.step_button.on_click(lambda _: self.step())
        self.reset_button.on_click(lambda _: self.reset())
        self.play.observe(lambda _: self.step(), names="value")
        controls = W.HBox(
            [
                W.VBox([self.kv_slots, self.steps_per_click]),
                W.VBox([self.preemption, self.block_size]),
            ]
        )
        buttons = W.HBox([self.step_button, self.play, self.reset_button])
        self._canvas = Canvas(
            (9, 3.2), 1, 2, adjust=dict(left=0.01, right=0.99, top=0.9, bottom=0.02, wspace=0.08)
        )
        super().__init__([controls, buttons, self.counters, self.image])
        self.reset()

    def reset(self) -> None:
        """Start again from step 0 with the current settings."""
        self._canvas.invalidate()  # a new pool shape
        self.sim = Scheduler(
            self.requests,
            "paged",
            kv_slots=self.kv_slots.value,
            block_size=self.block_size.value,
            preemption=self.preemption.value,
        )
        self.num_preemptions = 0
        self.events: list[str] = []
        self.redraw()

    def step(self, n: int | None = None) -> None:
        """Advance by `n` decode steps (default: the steps/click slider)."""
        for _ in range(self.steps_per_click.value if n is None else n):
            if self.sim.done:
                break
            rec = self.sim.step()
            self.num_preemptions += len(rec.preempted)
            where = T.SWAPPED_OUT if self.sim.config.preemption == "swap" else T.FREED_TO_RECOMPUTE
            self.events += [
                T.PREEMPTED.format(step=rec.step, req=r, where=where) for r in rec.preempted
            ]
            self.events += [T.SWAPPED_IN.format(step=rec.step, req=r) for r in rec.swapped_in]
        self.redraw()

    def redraw(self) -> None:
        sim = self.sim
        ax1, ax2 = self._canvas.fresh()
        viz.draw_block_pool(
            sim.layout(), ax=ax1, columns=16, title=T.GPU_POOL.format(running=len(sim.running))
        )
        if sim.pool.cpu is not None:
            viz.draw_block_pool(
                paged_layout(sim.pool.cpu),
                ax=ax2,
                columns=16,
                title=T.CPU_POOL.format(swapped=len(sim.swapped)),
            )
        else:
            ax2.axis("off")
            ax2.set(xlim=(0, 1), ylim=(0, 1), aspect="auto")
            ax2.text(0, 0.5, str(T.NO_CPU_POOL), fontsize=11)
        self.image.value = self._canvas.png()
        recent = "<br>".join(self.events[-3:]) or str(T.NO_PREEMPTION_YET)
        counts = T.PREEMPTION_COUNTERS.format(
            step_n=T.STEP_N.format(step=sim.step_index),
            waiting=len(sim.waiting),
            preemptions=self.num_preemptions,
            swapped_words=T.SWAPPED_OUT_BLOCKS,
            swapped=sim.num_swapped_blocks,
            recompute=sim.num_recomputed_tokens,
        )
        self.counters.value = f"<p>{counts}<br><small>{recent}</small></p>"
