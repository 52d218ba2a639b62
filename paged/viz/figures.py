"""Regenerate every drawn picture in figures/ from the package, deterministically.

    python -m paged.viz.figures [--out figures]

Each picture is drawn twice: in English into figures/ (README.md) and in Korean into
figures/ko/ (README.ko.md), from the same code and numbers (`paged.text`). All
simulated pictures use seeded synthetic workloads (SIMULATED); the kernel benchmark PNG is made
separately on a GPU by `python -m paged.gpu.kernel_bench` (MEASURED) and only read here; the
JupyterLab screenshots `lab_*.png` come from the browser test (`make screenshots`).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .. import viz  # noqa: E402
from ..experiments import block_size_sweep, compare_policies  # noqa: E402
from ..kv import A100_40GB_KV_BUDGET, OPT_13B, kv_slots  # noqa: E402
from ..paging import PagedAllocator  # noqa: E402
from ..preemption_cost import CostModel  # noqa: E402
from ..simulator import simulate  # noqa: E402
from ..text import language, msg, set_language  # noqa: E402
from ..trace import paged_layout  # noqa: E402
from ..workloads import sharegpt_like  # noqa: E402

A100_SLOTS = kv_slots(OPT_13B, A100_40GB_KV_BUDGET)
FIGURES_DIR = Path(__file__).resolve().parents[2] / "figures"  # in a checkout of the course


def _save(fig, path: Path) -> None:
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def kernel_rows(out: Path) -> list[dict] | None:
    """Rows of the first kernel benchmark CSV in `out`, if a GPU run left one."""
    found = sorted(out.glob("kernel_bench_*.csv"))
    return list(csv.DictReader(open(found[0]))) if found else None


ARENA = msg(
    "SIMULATED: contiguous arena over time (Oracle reservation, first-fit, 3,000 slots, "
    "40 ShareGPT-like requests)",
    "SIMULATED: 시간에 따른 아레나 (Oracle 예약, 최초 적합, 슬롯 3,000개, "
    "ShareGPT 비슷한 요청 40개)",
)
POOL = msg(
    "SIMULATED: paged pool at step 300 (block 16, same 3,000 slots)",
    "SIMULATED: 300단계의 페이징 풀 (블록 16, 같은 슬롯 3,000개)",
)
TABLES = msg(
    "Block tables: A' forked from A, then wrote: copy-on-write",
    "블록 테이블: A'는 A에서 fork한 뒤 썼다 (쓰기 시 복사)",
)
BREAKDOWN = msg(
    "KV-cache usage: SIMULATED (2,000 ShareGPT-like, OPT-13B, 15,728 slots, buddy) vs PAPER Fig. 2",
    "KV 캐시 사용: SIMULATED (ShareGPT 비슷한 요청 2,000개, OPT-13B, 슬롯 15,728개, "
    "버디 할당자) vs PAPER Fig. 2",
)
TRADEOFF = msg(
    "Block-size trade-off (SIMULATED, 300 ShareGPT-like)",
    "블록 크기의 절충 (SIMULATED, ShareGPT 비슷한 요청 300개)",
)
COSTS = msg(
    "SIMULATED cost model, the shape of Fig. 19(a): bandwidth fitted to PAPER §7.3 vs a modern "
    "host (ASSUMPTION)",
    "SIMULATED 비용 모델, Fig. 19(a)의 모양: 대역폭을 PAPER §7.3에 맞춘 모델 vs 요즘 호스트 "
    "(ASSUMPTION)",
)


def make_all(out: Path) -> list[Path]:
    """Every picture in the current language into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    made = []

    def save(fig, name):
        _save(fig, out / name)
        made.append(out / name)

    # The theater picture: a contiguous arena over time, refusals marked.
    reqs = sharegpt_like(40, seed=2)
    trace = simulate(reqs, "oracle", kv_slots=3000, record_layout=True).trace
    fig, ax = plt.subplots(figsize=(10, 4))
    viz.draw_arena_timeline(
        trace,
        ax=ax,
        title=str(ARENA),
    )
    save(fig, "arena_timeline.png")

    # The paged pool at one moment of the same workload.
    pool = simulate(reqs, "paged", kv_slots=3000, block_size=16, record_layout=True).trace
    fig, ax = plt.subplots(figsize=(9, 3.6))
    viz.draw_block_pool(
        pool[300].layout,
        ax=ax,
        columns=24,
        title=str(POOL),
    )
    save(fig, "block_pool.png")

    # Block tables with a fork and a copy-on-write.
    a = PagedAllocator(num_blocks=16, block_size=4, seed=3)
    a.allocate("A", 9)
    a.allocate("B", 3)
    a.fork("A", "A'")
    a.append("A'", 1)
    fig, ax = plt.subplots(figsize=(9, 3))
    viz.draw_block_table(
        paged_layout(a),
        ax=ax,
        title=str(TABLES),
    )
    save(fig, "block_table.png")

    # Fig. 2 next to ours, and capacity.
    results = compare_policies(sharegpt_like(2000, seed=0), kv_slots=A100_SLOTS, placement="buddy")
    fig, ax = plt.subplots(figsize=(9, 4.4))
    viz.draw_breakdown(
        results,
        ax=ax,
        title=str(BREAKDOWN),
    )
    save(fig, "breakdown_vs_paper.png")
    fig, ax = plt.subplots(figsize=(7, 3.4))
    viz.draw_capacity(results, ax=ax)
    save(fig, "capacity.png")

    # The block-size trade-off, with the measured kernel side when a GPU run left a CSV.
    points = block_size_sweep(sharegpt_like(300, seed=0), kv_slots=A100_SLOTS)
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    viz.draw_block_size_tradeoff(
        points,
        ax=ax,
        highlight=16,
        kernel_rows=kernel_rows(out),
        title=str(TRADEOFF),
    )
    save(fig, "block_size_tradeoff.png")

    # Preemption's costs: the model fitted to PAPER §7.3 beside a modern host.
    fig, ax = plt.subplots(figsize=(8, 4.6))
    viz.draw_preemption_costs(
        (CostModel.fitted_to_paper(), CostModel.modern_host()),
        ax=ax,
        title=str(COSTS),
    )
    save(fig, "preemption_costs.png")
    return made


def make_both(out: Path) -> list[Path]:
    """English pictures into `out`, Korean ones into `out`/ko; the language is restored."""
    before = language()
    try:
        set_language("en")
        made = make_all(out)
        set_language("ko")
        return made + make_all(out / "ko")
    finally:
        set_language(before)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIGURES_DIR)
    for path in make_both(ap.parse_args(argv).out):
        print(path)


if __name__ == "__main__":
    main()
