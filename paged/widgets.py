"""Widgets: thin ipywidgets wiring over the allocators, the simulator and the drawings.

Core widgets only (works on ipywidgets 7.7, as on Colab, and 8.x). Each explorer is a VBox, so
displaying it shows it; tests drive them headless by setting `.value` and calling `.click()`.
Figures are rendered to PNG bytes in an `Image` widget, so what is drawn can be compared.

    python -m paged.widgets     # prints the median redraw time of each explorer (MEASURED)
"""

from __future__ import annotations

import io
import statistics
import string
import time

import ipywidgets as W
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import viz
from .errors import AllocationError
from .experiments import block_size_sweep
from .paging import PagedAllocator
from .simulator import CATEGORIES, Simulator, paged_layout
from .workloads import sharegpt_like

BLOCK_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256]


PNG_DPI = 80  # pixels per inch of every widget picture


class Canvas:
    """A figure and its axes kept for a widget's lifetime: a redraw replaces only what is drawn.

    Building a figure, its axes and their ticks is most of a redraw's cost. So the axes are
    reused, and what does not change (frames, ticks, axis labels) is rendered once into a
    background; each redraw pastes it and draws only the artists it added (blitting). Call
    `invalidate()` after changing anything the background shows (limits, ticks, figure size).
    """

    def __init__(self, figsize, nrows=1, ncols=1, adjust=None, **subplot_kw):
        self.fig = Figure(figsize=figsize, dpi=PNG_DPI)
        self._agg = FigureCanvasAgg(self.fig)
        axes = self.fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
        self.axes = [ax for row in axes for ax in row]
        self.fig.subplots_adjust(**(adjust or {}))
        self._background = None

    def invalidate(self) -> None:
        """Render the background again at the next redraw."""
        self._background = None

    def set_size_inches(self, width: float, height: float) -> None:
        if tuple(self.fig.get_size_inches()) != (width, height):
            self.fig.set_size_inches(width, height)
            self.invalidate()

    @staticmethod
    def _drawn(ax) -> list:
        """What a drawing added to `ax`, titles included (they change every redraw)."""
        titles = [ax.title, ax._left_title]  # matplotlib keeps the left title as its own Text
        return [*ax.collections, *ax.patches, *ax.texts, *ax.images, *ax.lines, *titles]

    def fresh(self) -> list:
        """The axes, emptied of everything drawn on them (ticks and frames stay)."""
        for ax in self.axes:
            for artist in [*ax.collections, *ax.patches, *ax.texts, *ax.images, *ax.lines]:
                artist.remove()
            ax.set_title("")
            ax.set_title("", loc="left")
            ax.relim()  # forget the removed artists' extent (a pool may have shrunk)
            ax.autoscale()
        return self.axes

    def png(self, dynamic: list | None = None) -> bytes:
        """The figure as PNG bytes; `dynamic` (default: everything drawn) is drawn on the
        background, the rest comes from it."""
        drawn = dynamic if dynamic is not None else [a for ax in self.axes for a in self._drawn(ax)]
        if self._background is None:  # render everything but the drawn artists, once
            for artist in drawn:
                artist.set_visible(False)
            self._agg.draw()
            self._background = self._agg.copy_from_bbox(self.fig.bbox)
            for artist in drawn:
                artist.set_visible(True)
        self._agg.restore_region(self._background)
        for artist in drawn:
            artist.axes.draw_artist(artist)
        buf = io.BytesIO()  # light compression: a third of the encoding time, larger files
        image = PIL.Image.fromarray(np.asarray(self._agg.buffer_rgba()))
        image.save(buf, format="png", compress_level=1)
        return buf.getvalue()


def legend_html() -> str:
    """The four slot categories as coloured squares, in the drawings' colours."""
    items = "".join(
        f"<span style='margin-right:14px'><span style='display:inline-block;width:12px;"
        f"height:12px;background:{viz.COLORS[c]};border:1px solid #333;vertical-align:middle'>"
        f"</span> {viz.LABELS[c]}</span>"
        for c in CATEGORIES
    )
    return f"<div style='font-size:12px'>{items}</div>"


def _counter_table(rows: dict[str, tuple[int, ...]], total: dict[str, int]) -> str:
    head = "".join(f"<th style='padding:0 8px'>{viz.LABELS[c]}</th>" for c in CATEGORIES)
    body = ""
    for name, usage in rows.items():
        cells = "".join(
            f"<td style='padding:0 8px;text-align:right'>{u} ({100 * u / total[name]:.0f}%)</td>"
            for u in usage
        )
        body += f"<tr><td><b>{name}</b></td>{cells}</tr>"
    return f"<table><tr><th></th>{head}</tr>{body}</table>"


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
            options=["max", "pow2", "oracle"], value=policy, description="reserve"
        )
        self.placement = W.Dropdown(
            options=["first_fit", "buddy"], value=placement, description="placement"
        )
        self.block_size = W.Dropdown(
            options=BLOCK_SIZES, value=block_size, description="block size"
        )
        self.kv_slots = W.IntSlider(
            value=kv_slots,
            min=2048,
            max=16384,
            step=512,
            description="KV slots",
            continuous_update=False,
        )
        self.seed = W.IntSlider(
            value=seed, min=0, max=9, description="seed", continuous_update=False
        )
        self.steps_per_click = W.IntSlider(value=20, min=1, max=200, description="steps/click")
        self.step_button = W.Button(description="step", icon="step-forward")
        self.reset_button = W.Button(description="reset", icon="undo")
        self.play = W.Play(value=0, min=0, max=100_000, interval=300, description="play")
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
        self.contiguous = Simulator(
            reqs, self.policy.value, placement=self.placement.value, **common
        )
        self.paged = Simulator(
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
                        self.last_refusal = (
                            f"step {rec.step}: R{req_id} refused although "
                            f"{sim.allocator.total_free} slots are free in total "
                            f"(largest hole {sim.allocator.largest_hole})"
                        )
        self.redraw()

    def redraw(self) -> None:
        c, p = self.contiguous, self.paged
        ax1, ax2 = self._canvas.fresh()
        title = (
            f"contiguous ({self.policy.value}, {self.placement.value}): "
            f"{len(c.running)} running, {len(c.waiting)} waiting"
        )
        viz.draw_arena(
            c.layout(),
            ax=ax1,
            title=title,
            refused="refused: no hole big enough" if self._head_blocked() else None,
        )
        viz.draw_block_pool(
            p.layout(),
            ax=ax2,
            columns=32,
            title=f"paged (block {self.block_size.value}): {len(p.running)} running, "
            f"{len(p.waiting)} waiting; one colour per request",
        )
        self.image.value = self._canvas.png()
        rows = {"contiguous": c.usage(), "paged": p.usage()}
        self.counters.value = _counter_table(rows, {k: c.kv_slots for k in rows}) + (
            f"<p>step {c.step_index} · preemptions (paged): {self.num_preemptions} · "
            f"contiguous refusals: {self.num_refusals['contiguous']} "
            f"(of which enough free in total: {self.num_refusals['no_hole']})</p>"
        )
        self.events.value = (
            f"<p style='color:#D55E00'><b>{self.last_refusal}</b></p>" if self.last_refusal else ""
        )

    def _head_blocked(self) -> bool:
        c = self.contiguous
        if not c.waiting:
            return False
        head = c.waiting[0]
        reason = c.allocator.why_not(prompt_len=head.prompt_len, output_len=head.output_len)
        return reason == "no_hole"


class BlockTableExplorer(W.VBox):
    """Allocate, append, fork and free; watch block tables, ref counts and copy-on-write."""

    def __init__(self, num_blocks=24, block_size=4, seed=0):
        self.allocator = PagedAllocator(num_blocks, block_size, seed=seed)
        self.allocator.allocate("A", 6)
        self.seq = W.Dropdown(options=["A"], value="A", description="sequence")
        self.name = W.Text(value="B", description="new id")
        self.tokens = W.BoundedIntText(value=5, min=0, max=10_000, description="tokens")
        self.allocate_button = W.Button(description="allocate new id")
        self.append_button = W.Button(description="append 1 token")
        self.fork_button = W.Button(description="fork into new id")
        self.free_button = W.Button(description="free")
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
        self.redraw("A holds 6 tokens in 2 blocks of 4.")

    def _allocate(self):
        table = self.allocator.allocate(self.name.value, self.tokens.value)
        return f"allocated {self.name.value!r}: {self.tokens.value} tokens → blocks {table}"

    def _append(self):
        copies = self.allocator.append(self.seq.value, 1)
        table = self.allocator.block_table(self.seq.value)
        cow = f" copy-on-write: copy block {copies[0][0]} → {copies[0][1]}" if copies else ""
        return f"appended 1 token to {self.seq.value!r}: table {table}.{cow}"

    def _fork(self):
        self.allocator.fork(self.seq.value, self.name.value)
        return f"forked {self.seq.value!r} → {self.name.value!r}: every block now shared"

    def _free(self):
        self.allocator.free(self.seq.value)
        return f"freed {self.seq.value!r}"

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
        status = f"{a.num_free_blocks} of {a.num_blocks} blocks free"
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
            options=BLOCK_SIZES, value=block_size, description="block size", continuous_update=False
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
        self.readout.value = (
            f"<p>block size <b>{p.block_size}</b>: empty slots in last blocks "
            f"<b>{100 * p.held_empty:.1f}%</b> of all slots, "
            f"<b>{p.table_entries_per_seq:.1f}</b> block-table entries per request, "
            f"{p.mean_batch_size:.1f} requests running on average (SIMULATED)</p>"
        )
        if p.block_size not in self._png:
            self._marker.set_xdata([p.block_size, p.block_size])
            self._png[p.block_size] = self._canvas.png(dynamic=[self._marker])
        self.image.value = self._png[p.block_size]


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


def median_redraw_ms(action, repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        action()
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


def main() -> None:
    explorer = AllocatorExplorer()
    explorer.steps_per_click.value = 1
    table = BlockTableExplorer()
    size = BlockSizeExplorer()
    preemption = PreemptionExplorer()
    preemption.steps_per_click.value = 1
    options = iter(BLOCK_SIZES * 4)
    print(f"allocator explorer step: {median_redraw_ms(explorer.step_button.click):.0f} ms median")
    print(f"block-table explorer append: {median_redraw_ms(table.append_button.click):.0f} ms")
    print(
        f"block-size slider move: "
        f"{median_redraw_ms(lambda: setattr(size.slider, 'value', next(options))):.0f} ms"
    )
    print(f"preemption explorer step: {median_redraw_ms(preemption.step_button.click):.0f} ms")


if __name__ == "__main__":
    main()
