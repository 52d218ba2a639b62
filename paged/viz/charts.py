"""Charts of results: the Fig. 2 breakdown beside the paper, capacity, block-size and
preemption-cost trade-offs (prefix caching's: `caching_chart`). Each takes what `paged.experiments` or `paged.preemption_cost`
returned; none computes it."""

from __future__ import annotations

import numpy as np

from .. import facts
from ..paging import BLOCK_SIZES
from ..preemption_cost import CostModel, section_7_3
from ..text import msg
from ..trace import CATEGORIES
from .style import COLORS, POLICY_NAMES, _axes, legend_handles

SHARE_AXIS = msg(
    "share of all KV-cache slots (time average)", "전체 KV 캐시 슬롯 중 비율 (시간 평균)"
)
BREAKDOWN_TITLE = msg(
    "KV-cache usage by policy: SIMULATED vs PAPER (Fig. 2)",
    "정책별 KV 캐시 사용: SIMULATED vs PAPER (Fig. 2)",
)
RUNNING_AXIS = msg("mean running requests", "평균 실행 중 요청 수")
CAPACITY_TITLE = msg(
    "Concurrent requests in the same KV memory (SIMULATED)",
    "같은 KV 메모리에서 동시에 실행되는 요청 (SIMULATED)",
)
EMPTY_LABEL = msg("empty slots in last blocks (SIMULATED)", "마지막 블록의 빈 슬롯 (SIMULATED)")
EMPTY_AXIS = msg("empty slots in last blocks (% of all)", "마지막 블록의 빈 슬롯 (전체 대비 %)")
ENTRIES = msg("block-table entries per request", "요청당 블록 테이블 항목 수")
KERNEL_LABEL = msg("kernel time, ms (MEASURED, {device})", "커널 시간, ms (MEASURED, {device})")
KERNEL_AXIS = msg("kernel time (ms)", "커널 시간 (ms)")
TRADEOFF_TITLE = msg("The block-size trade-off", "블록 크기의 절충")
SWAP_LABEL = msg("swap out + in: {model}", "스왑 아웃 + 인: {model}")
RECOMPUTE_LABEL = msg("recompute: {model}", "재계산: {model}")
SWAP_CHEAPER = msg("swap cheaper from {size}", "{size}부터 스왑이 더 쌉니다")
SWAP_NEVER_CHEAPER = msg("swap never cheaper", "스왑이 더 싼 블록 크기가 없습니다")
BLOCK_SIZE_AXIS = msg("block size (tokens)", "블록 크기 (토큰)")
PER_TOKEN_AXIS = msg("µs per preempted token", "선점된 토큰당 µs")
PREEMPTION_TITLE = msg(
    "Recovering a preempted token: SIMULATED cost model, the shape of Fig. 19(a)",
    "선점된 토큰 하나를 되살리는 비용: SIMULATED 비용 모델, Fig. 19(a)의 모양",
)
MODEL_COLORS = ("#CC79A7", "#009E73", "#0072B2", "#E69F00")


def draw_breakdown(results: dict, ax=None, paper=facts.FIG2_BREAKDOWN, title=None):
    """Stacked bars of the four categories: SIMULATED beside PAPER for each policy."""
    ax = _axes(ax, (9, 4.2))
    bars = []
    for policy, res in results.items():
        bars.append((f"{POLICY_NAMES[policy]}  SIMULATED", res.breakdown, False))
        if paper and policy in paper:
            p = paper[policy]
            pct = {c: (p[c] or 0) / 100 for c in CATEGORIES}
            if all(p[c] is None for c in CATEGORIES[1:]):  # vLLM's 3.7 %: not split in Fig. 2
                pct["external_fragmentation"] = 1 - pct["token_states"]
            bars.append((f"{facts.FIG2_SYSTEM_NAMES[policy]}  PAPER", pct, True))
    for i, (_, frac, is_paper) in enumerate(bars):
        y = len(bars) - 1 - i
        left = 0.0
        for c in CATEGORIES:
            w = frac[c]
            # PAPER bars are thinner and paler (hatching means the buddy round-up, nothing else)
            ax.barh(
                y,
                w,
                left=left,
                color=COLORS[c],
                edgecolor="black",
                lw=0.4,
                height=0.55 if is_paper else 0.8,
                alpha=0.7 if is_paper else 1.0,
            )
            if w >= 0.06:
                ax.text(
                    left + w / 2,
                    y,
                    f"{100 * w:.1f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                )
            left += w
    ax.set_yticks(range(len(bars)), [b[0] for b in reversed(bars)], fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xticks(np.linspace(0, 1, 6), [f"{int(100 * t)}%" for t in np.linspace(0, 1, 6)])
    ax.set_xlabel(str(SHARE_AXIS))
    ax.set_title(title or str(BREAKDOWN_TITLE), fontsize=10, loc="left")
    ax.legend(
        handles=legend_handles(),
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncol=4,
        frameon=False,
    )
    return ax


def draw_capacity(results: dict, ax=None, title=None):
    """Mean number of requests running at once, per policy, in the same memory."""
    ax = _axes(ax, (6, 3))
    names = [POLICY_NAMES[p] for p in results]
    values = [r.mean_batch_size for r in results.values()]
    colors = ["#999999"] * (len(values) - 1) + ["#0072B2"] if "paged" in results else None
    ax.bar(names, values, color=colors, edgecolor="black", lw=0.5)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.1f}", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel(str(RUNNING_AXIS))
    ax.set_ylim(0, max(values) * 1.18)
    ax.set_title(title or str(CAPACITY_TITLE), fontsize=10, loc="left")
    return ax


def draw_block_size_tradeoff(points, ax=None, highlight=None, kernel_rows=None, title=None):
    """Empty last-block slots and block-table length vs block size; kernel time if given.

    `kernel_rows`: rows of the kernel benchmark CSV (MEASURED), drawn on a third axis.
    """
    ax = _axes(ax, (8, 3.8))
    bs = [p.block_size for p in points]
    empty = [100 * p.held_empty for p in points]
    ax.plot(bs, empty, "o-", color="#444444", label=str(EMPTY_LABEL))
    ax.set_xscale("log", base=2)
    ax.set_xticks(bs, [str(b) for b in bs])
    ax.set_xlabel(str(BLOCK_SIZE_AXIS))
    ax.set_ylabel(str(EMPTY_AXIS), color="#444444")
    ax2 = ax.twinx()
    ax2.plot(
        bs,
        [p.table_entries_per_seq for p in points],
        "s--",
        color="#0072B2",
        label=str(ENTRIES),
    )
    ax2.set_yscale("log")
    ax2.set_ylabel(str(ENTRIES), color="#0072B2")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    if kernel_rows:
        ax3 = ax.twinx()
        ax3.spines["right"].set_position(("axes", 1.15))
        pts = sorted(
            (int(r["block_size"]), float(r["time_ms"]))
            for r in kernel_rows
            if r["variant"] == "triton_paged_shuffled"
        )
        ax3.plot(
            *zip(*pts, strict=True),
            "^:",
            color="#009E73",
            label=KERNEL_LABEL.format(device=kernel_rows[0]["device"]),
        )
        ax3.set_ylabel(str(KERNEL_AXIS), color="#009E73")
        handles += ax3.get_legend_handles_labels()[0]
    if highlight is not None:
        ax.axvline(highlight, color="black", lw=1, alpha=0.6)
    ax.legend(handles=handles, fontsize=8, loc="upper center")
    ax.set_title(title or str(TRADEOFF_TITLE), fontsize=10, loc="left")
    return ax


def draw_preemption_costs(models, block_sizes=BLOCK_SIZES, ax=None, title=None):
    """Swap (out + in) vs recompute time per preempted token, by block size (SIMULATED model).

    `models`: one `CostModel` or several (e.g. the fit to PAPER §7.3 and the modern host), one
    colour each: swapping solid, recomputation dashed, and a mark where swapping becomes the
    cheaper way back. The shape of the paper's Fig. 19(a): swapping pays a fixed cost per
    transfer, so it is slow for small blocks; recomputation does not depend on the block size.
    """
    models = (models,) if isinstance(models, CostModel) else tuple(models)
    if not models or len(models) > len(MODEL_COLORS):
        raise ValueError(f"models: give 1 to {len(MODEL_COLORS)} CostModels, got {len(models)}")
    curves = [section_7_3(m, block_sizes) for m in models]  # checks each model and the sizes
    ax = _axes(ax, (8, 4.2))
    for i, (model, c) in enumerate(zip(models, curves, strict=True)):
        color, name = MODEL_COLORS[i], model.describe()
        ax.plot(
            c.block_sizes,
            [1e6 * s for s in c.swap],
            "o-",
            color=color,
            label=SWAP_LABEL.format(model=name),
        )
        ax.plot(
            c.block_sizes,
            [1e6 * r for r in c.recompute],
            "s--",
            color=color,
            alpha=0.8,
            label=RECOMPUTE_LABEL.format(model=name),
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    top = ax.get_ylim()[1]
    for i, c in enumerate(curves):
        if c.crossover is None:
            text, x = str(SWAP_NEVER_CHEAPER), c.block_sizes[0]
        else:
            text, x = SWAP_CHEAPER.format(size=c.crossover), c.crossover
            ax.axvline(x, color=MODEL_COLORS[i], lw=1.2, ls=":")
        ax.text(x, top / (1.45 ** (i + 1)), f" {text}", color=MODEL_COLORS[i], fontsize=10)
    sizes = curves[0].block_sizes
    ax.set_xticks(sizes, [str(b) for b in sizes])
    ax.set_xlabel(str(BLOCK_SIZE_AXIS), fontsize=11)
    ax.set_ylabel(str(PER_TOKEN_AXIS), fontsize=11)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=1, frameon=False)
    ax.set_title(title or str(PREEMPTION_TITLE), fontsize=11, loc="left")
    return ax
