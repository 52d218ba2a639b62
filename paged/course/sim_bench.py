"""Benchmark script: the four policies on the paper's Fig. 2 setting, timed, beside PAPER.

    python -m paged.course.sim_bench [--n 2000] [--placement buddy|first_fit]
                                     [--admission greedy|hold]
    python -m paged.course.sim_bench --prefix-caching [--n 2000] [--repeats 3]

SIMULATED: 2,000 ShareGPT-like requests (synthetic, all queued at t=0), OPT-13B on an
A100-40GB budget (12 GiB of KV = 15,728 slots), block size 16, max_seq_len 2048.
`--prefix-caching`: what prefix caching's bookkeeping costs (MEASURED on this machine, best of
`--repeats`): the same paged run, its requests given synthetic token ids that share nothing
(`paged.workloads.with_prompt_ids`), with `prefix_caching` off and on, under both rules.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from .. import facts
from ..admission import ADMISSION_RULES
from ..kv import A100_40GB_KV_BUDGET, OPT_13B, kv_slots
from ..scheduler_options import SIM_POLICIES
from ..simulator import simulate
from ..trace import CATEGORIES
from ..workloads import sharegpt_like, with_prompt_ids


def caching_overhead(n: int = 2000, seed: int = 0, repeats: int = 3) -> list[dict]:
    """CPU seconds of the best of `repeats` simulated runs, prefix caching off and on, per rules."""
    slots = kv_slots(OPT_13B, A100_40GB_KV_BUDGET)
    reqs = with_prompt_ids(sharegpt_like(n, seed=seed), seed=seed)  # no two share a block
    rows = []
    for rules in ("course", "vllm-v1"):
        best, row = {False: float("inf"), True: float("inf")}, dict(rules=rules)
        for _ in range(repeats):
            for caching in (False, True):  # interleaved: a busy spell slows both alike
                t0 = time.process_time()  # CPU time: other jobs on the machine do not count
                r = simulate(reqs, "paged", kv_slots=slots, rules=rules, prefix_caching=caching)
                best[caching] = min(best[caching], time.process_time() - t0)
                row[caching] = (best[caching], r.num_steps, r.num_preemptions, r.recomputed_tokens)
        rows.append(row)
    return rows


def cpu_name() -> str:
    """The processor's model name (Linux), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.platform()


def print_caching_overhead(n: int, seed: int, repeats: int) -> None:
    print(
        f"{n} ShareGPT-like requests with ids that share nothing, paged, block size 16; "
        f"MEASURED, best of {repeats}, Python {platform.python_version()} on "
        f"{platform.machine()} ({cpu_name()}, {os.cpu_count()} cores)"
    )
    print("rules    caching  CPU s  ratio  steps  preempt  recomputed")
    for row in caching_overhead(n, seed, repeats):
        base = row[False][0]
        for caching in (False, True):
            secs, steps, preempt, recomputed = row[caching]
            print(
                f"{row['rules']:8s} {'on' if caching else 'off':7s}  {secs:5.2f}  "
                f"{secs / base:5.3f}  {steps:5d}  {preempt:7d}  {recomputed:10d}"
            )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--placement", default="buddy", choices=("buddy", "first_fit"))
    ap.add_argument("--admission", default="greedy", choices=ADMISSION_RULES)
    ap.add_argument("--prefix-caching", action="store_true", help="time caching's bookkeeping")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    if args.prefix_caching:
        return print_caching_overhead(args.n, args.seed, args.repeats)
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
