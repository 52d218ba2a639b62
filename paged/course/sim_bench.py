"""Benchmark script: the four policies on the paper's Fig. 2 setting, timed, beside PAPER.

    python -m paged.course.sim_bench [--n 2000] [--placement buddy|first_fit]
                                     [--admission greedy|hold]

SIMULATED: 2,000 ShareGPT-like requests (synthetic, all queued at t=0), OPT-13B on an
A100-40GB budget (12 GiB of KV = 15,728 slots), block size 16, max_seq_len 2048.
"""

from __future__ import annotations

import argparse
import platform
import time

from .. import facts
from ..kv import A100_40GB_KV_BUDGET, OPT_13B, kv_slots
from ..scheduler_config import ADMISSION_RULES, SIM_POLICIES
from ..simulator import simulate
from ..trace import CATEGORIES
from ..workloads import sharegpt_like


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--placement", default="buddy", choices=("buddy", "first_fit"))
    ap.add_argument("--admission", default="greedy", choices=ADMISSION_RULES)
    args = ap.parse_args(argv)
    slots = kv_slots(OPT_13B, A100_40GB_KV_BUDGET)
    reqs = sharegpt_like(args.n, seed=args.seed)
    print(
        f"{args.n} ShareGPT-like requests, {slots} KV slots, placement={args.placement}, "
        f"admission={args.admission}, "
        f"Python {platform.python_version()} on {platform.machine()}"
    )
    head = (
        "policy  label      "
        + " ".join(f"{c[:12]:>12}" for c in CATEGORIES)
        + "  round-up  batch  preempt  secs"
    )
    print(head)
    paged_options = dict(seed=args.seed, admission=args.admission)
    for policy in SIM_POLICIES:
        t0 = time.perf_counter()
        options = {"paged": paged_options}.get(policy, dict(placement=args.placement))
        r = simulate(reqs, policy, kv_slots=slots, **options)
        secs = time.perf_counter() - t0
        sim = " ".join(f"{100 * r.breakdown[c]:12.1f}" for c in CATEGORIES)
        print(
            f"{policy:7s} SIMULATED  {sim}  {100 * r.rounded_up:8.1f}  {r.mean_batch_size:5.1f}"
            f"  {r.num_preemptions:7d}"
            f"  {secs:4.2f}"
        )
        paper = facts.FIG2_BREAKDOWN[policy]
        cells = " ".join(
            "           -" if paper[c] is None else f"{paper[c]:12.1f}" for c in CATEGORIES
        )
        print(f"{'':7s} PAPER      {cells}")


if __name__ == "__main__":
    main()
