"""Chapter 12's chart: what prefix caching saves, prompt tokens computed vs found cached, one
stacked bar per run. Takes what `paged.experiments.caching.caching_savings` returned; computes
nothing."""

from __future__ import annotations

from textwrap import fill

from matplotlib.patches import Patch

from ..text import msg
from .style import _axes, ink_on

CACHING_TITLE = msg(
    "What prefix caching saves: prompt tokens computed vs cached (SIMULATED)",
    "접두사 캐싱이 아끼는 것: 계산한 프롬프트 토큰과 캐시에서 찾은 토큰 (SIMULATED)",
)
CACHING_PARTS = (  # (field, colour, hatch, label): colour-blind safe, none of the slot colours
    (
        "first_prefill_tokens",
        "#CC79A7",
        "",
        msg("computed at first prefill", "첫 prefill에서 계산"),
    ),
    (
        "recomputed",
        "#D55E00",
        "//",
        msg("computed again after preemption", "선점 뒤 다시 계산"),
    ),
    ("cached_prompt_tokens", "#009E73", "", msg("found cached", "캐시에서 찾음")),
    (
        "recached_tokens",
        "#009E73",
        "..",
        msg("found cached again after preemption", "선점 뒤 캐시에서 다시 찾음"),
    ),
)
CACHING_RUN = {
    False: msg("no caching", "캐싱 없음"),
    True: msg("prefix caching", "접두사 캐싱"),
}
CACHING_RUN_STATS = msg(
    "peak batch {batch} · {steps:,} steps · {preemptions} preemptions",
    "최대 배치 {batch} · {steps:,}단계 · 선점 {preemptions}회",
)
PROMPT_TOKENS_AXIS = msg(
    "prompt tokens (all requests, recomputation included)",
    "프롬프트 토큰 (모든 요청, 재계산 포함)",
)


def draw_caching_savings(savings, ax=None, title=None):
    """Prompt tokens each run computed (first prefill, again after preemption) and found cached
    (at first admission, again when resumed after a preemption), one stacked bar per run, its
    peak batch, steps and preemptions beside its name; the workload and pool
    (`savings.assumptions`) below. Takes `experiments.caching_savings`'s
    result."""
    ax = _axes(ax, (9, 3.4))
    runs, widest = savings.runs, 1
    for y, run in zip((1, 0), runs, strict=True):
        parts = {
            "first_prefill_tokens": run.first_prefill_tokens,
            "recomputed": run.computed_prompt_tokens - run.first_prefill_tokens,
            "cached_prompt_tokens": run.cached_prompt_tokens,
            "recached_tokens": run.recached_tokens,
        }
        left = 0
        for key, color, hatch, _ in CACHING_PARTS:
            w = parts[key]
            ax.barh(y, w, left=left, color=color, hatch=hatch, edgecolor="black", lw=0.5)
            if w:
                ax.text(
                    left + w / 2,
                    y,
                    f"{w:,}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color=ink_on(color),
                    fontweight="bold",
                    bbox=dict(boxstyle="round,pad=0.3", fc=color, ec="none"),
                )
            left += w
        widest = max(widest, left)
    ax.set_xlim(0, widest * 1.03)
    names = [
        f"{CACHING_RUN[r.prefix_caching]}\n"
        + CACHING_RUN_STATS.format(
            batch=r.max_batch_size, steps=r.num_steps, preemptions=r.num_preemptions
        )
        for r in runs
    ]
    ax.set_yticks([1, 0], names, fontsize=9)
    ax.set_xlabel(str(PROMPT_TOKENS_AXIS))
    ax.xaxis.set_major_formatter(lambda x, _: f"{int(x):,}")
    ax.set_title(title or str(CACHING_TITLE), fontsize=10, loc="left")
    handles = [
        Patch(facecolor=c, hatch=h, edgecolor="black", lw=0.5, label=str(label))
        for _, c, h, label in CACHING_PARTS
    ]
    ax.legend(
        handles=handles,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=4,
        frameon=False,
    )
    ax.annotate(
        fill(savings.assumptions, 120),
        xy=(0, -0.36),
        xycoords="axes fraction",
        fontsize=7.5,
        color="#333333",
        va="top",
    )
    return ax
