"""The preemption explorer (chapter 9): a paged pool running dry, victims swapped or recomputed.

Thin ipywidgets wiring over `paged.simulator.Simulator` and the pool drawing, like `widgets.py`.
"""

from __future__ import annotations

import ipywidgets as W

from .. import viz
from ..simulator import Simulator
from ..trace import paged_layout
from ..workloads import sharegpt_like
from .canvas import Canvas


class PreemptionExplorer(W.VBox):
    """Shrink the pool and watch preemptions: blocks swapped to the CPU pool, or recomputed."""

    def __init__(self, num_requests=30, kv_slots=2560, preemption="swap", block_size=16, seed=0):
        self.kv_slots = W.IntSlider(  # from just above the longest request (2,048 tokens)
            value=kv_slots, min=2304, max=8192, step=256, description="GPU slots",
            continuous_update=False,
        )  # fmt: skip
        self.preemption = W.Dropdown(
            options=["recompute", "swap"], value=preemption, description="preemption"
        )
        self.block_size = W.Dropdown(options=[4, 8, 16, 32, 64], value=block_size,
                                     description="block size")  # fmt: skip
        self.steps_per_click = W.IntSlider(value=10, min=1, max=100, description="steps/click")
        self.step_button = W.Button(description="step", icon="step-forward")
        self.reset_button = W.Button(description="reset", icon="undo")
        self.play = W.Play(value=0, min=0, max=100_000, interval=300, description="play")
        self.counters = W.HTML()
        self.image = W.Image(format="png")
        self.requests = sharegpt_like(num_requests, seed=seed)
        for w in (self.kv_slots, self.preemption, self.block_size):
            w.observe(lambda _: self.reset(), names="value")
        self.step_button.on_click(lambda _: self.step())
        self.reset_button.on_click(lambda _: self.reset())
        self.play.observe(lambda _: self.step(), names="value")
        controls = W.HBox([W.VBox([self.kv_slots, self.steps_per_click]),
                           W.VBox([self.preemption, self.block_size])])  # fmt: skip
        buttons = W.HBox([self.step_button, self.play, self.reset_button])
        self._canvas = Canvas((9, 3.2), 1, 2,
                              adjust=dict(left=0.01, right=0.99, top=0.9, bottom=0.02, wspace=0.08))
        super().__init__([controls, buttons, self.counters, self.image])
        self.reset()

    def reset(self) -> None:
        """Start again from step 0 with the current settings."""
        self._canvas.invalidate()  # a new pool shape
        self.sim = Simulator(
            self.requests, "paged", kv_slots=self.kv_slots.value,
            block_size=self.block_size.value, preemption=self.preemption.value,
        )  # fmt: skip
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
            where = "swapped out" if self.sim.preemption == "swap" else "freed, to recompute"
            self.events += [f"step {rec.step}: R{r} preempted ({where})" for r in rec.preempted]
            self.events += [f"step {rec.step}: R{r} swapped back in" for r in rec.swapped_in]
        self.redraw()

    def redraw(self) -> None:
        sim = self.sim
        ax1, ax2 = self._canvas.fresh()
        viz.draw_block_pool(sim.layout(), ax=ax1, columns=16,
                            title=f"GPU pool: {len(sim.running)} running")  # fmt: skip
        if sim.cpu is not None:
            viz.draw_block_pool(paged_layout(sim.cpu), ax=ax2, columns=16,
                                title=f"CPU pool: {len(sim.swapped)} swapped out")  # fmt: skip
        else:
            ax2.axis("off")
            ax2.set(xlim=(0, 1), ylim=(0, 1), aspect="auto")
            ax2.text(0, 0.5, "no CPU pool:\npreempted requests\nare recomputed", fontsize=11)
        self.image.value = self._canvas.png()
        recent = "<br>".join(self.events[-3:]) or "no preemption yet"
        self.counters.value = (
            f"<p>step {sim.step_index} · waiting {len(sim.waiting)} · preemptions "
            f"<b>{self.num_preemptions}</b> · blocks swapped out <b>{sim.num_swapped_blocks}</b> · "
            f"tokens to recompute <b>{sim.num_recomputed_tokens}</b> (SIMULATED)<br>"
            f"<small>{recent}</small></p>"
        )
