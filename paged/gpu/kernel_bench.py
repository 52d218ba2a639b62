"""The kernel benchmark's command line (a script, never a timed test).

    python -m paged.gpu.kernel_bench [--batch 64 --seq-len 4096 --dtype float16] [--out figures]
                                     [--budget-s 240] [--jsonl rows.jsonl] [--dry-run]

Runs `kernel_sweep.run` (32 query / 8 KV heads, head_dim 128, fp16 by default) within
`--budget-s`, then writes `kernel_bench_<device>.csv` and `.png` into --out, and with --jsonl
one JSON line per row as soon as it is measured (so a run killed later keeps every row so far).
MEASURED numbers need a CUDA GPU; `--dry-run` runs every step on tiny shapes under the CPU
interpreter (plumbing only).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from ..attention import backend
from .bench_report import caption_for, device_slug, plot, row_lines, summary_lines, write_csv
from .kernel_sweep import run

DEFAULT_BUDGET_S = 240


def _wall_timer(fn) -> float:
    """One call's wall time in ms: the dry run's stand-in for do_bench (not a measurement)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    ap.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S, help="0: no limit")
    ap.add_argument("--no-sweep", action="store_true", help="skip the launch-option sweep")
    ap.add_argument("--out", type=Path, default=None, help="CSV and PNG here (default figures)")
    ap.add_argument("--jsonl", type=Path, default=None, help="append each row here as measured")
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU interpreter")
    args = ap.parse_args(argv)
    if not args.dry_run and backend() != "cuda":
        raise SystemExit(
            "The benchmark needs a CUDA GPU: the CPU interpreter is thousands of "
            "times slower and its timings mean nothing. Run it on Colab or a GPU box."
        )
    on_gpu = not args.dry_run
    if args.dtype == "bfloat16" and on_gpu and torch.cuda.get_device_capability() < (8, 0):
        raise SystemExit("bfloat16 needs compute capability >= 8.0: use --dtype float16 here")
    jsonl = open(args.jsonl, "a") if args.jsonl else None  # noqa: SIM115 (closed below)

    def on_row(row):
        if jsonl:
            jsonl.write(json.dumps(row, default=str) + "\n")
            jsonl.flush()  # on disk now: a run killed later keeps every row measured so far

    sweep = {} if args.no_sweep else None if on_gpu else dict(tile=(16,), num_warps=(2,))
    options = dict(
        dtype=getattr(torch, args.dtype),
        budget_s=args.budget_s,
        on_row=on_row,
        sweep=sweep,
        batch=args.batch,
        seq_len=args.seq_len,
    )
    if args.dry_run:  # every step, tiny: proves the plumbing on the interpreter
        options |= dict(
            batch=2,
            seq_len=24,
            num_q_heads=4,
            num_kv_heads=2,
            head_dim=16,
            block_sizes=(16, 1),
            flex_block_sizes=(16,),
            timer=_wall_timer,
            device="cpu",
            compile_flex=False,
            dtype=torch.float16,
        )
    try:
        rows = run(**options)
    finally:
        if jsonl:
            jsonl.close()
    out = args.out or (None if args.jsonl else Path("figures"))
    if out:
        device = device_slug(rows[0]["device"])
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / f"kernel_bench_{device}.csv")
        plot(rows, out / f"kernel_bench_{device}.png", caption_for(rows, args.dtype))
    print("\n".join(row_lines(rows) + summary_lines(rows)))
    return rows


if __name__ == "__main__":
    main()
