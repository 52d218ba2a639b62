"""Benchmark script: the learner's engine against the course's on chapter 10's run, timed.

    python -m paged.course.engine_bench [--repeats 3] [--workspace DIR]

Chapter 10's 24 requests (`paged.model.CHAT_PROMPTS`, 48 new tokens, 512 KV slots, blocks of
16) served by the course's engine alone (`paged.model.generate`), then by the learner's engine in
lock-step with the course's scheduler (`paged.learner.generate`), interleaved, best of
`--repeats` wall times (MEASURED on this machine, named with it). The pieces: the workspace at
`--workspace`, else every model answer kept in a temporary workspace (a learner who solved every
exercise). The tokens of every run are checked equal.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ..exercises import workspace
from .sim_bench import cpu_name


def bench(where: Path, repeats: int) -> dict:
    """Best wall seconds of each engine on chapter 10's run, and what ran."""
    import torch

    import paged.model as pm
    from paged import learner

    model = pm.load()
    best = {"course": float("inf"), "yours": float("inf")}
    calls = {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        course = pm.generate(model, pm.CHAT_PROMPTS, 48, kv_slots=512)
        best["course"] = min(best["course"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        mine = learner.generate(model, pm.CHAT_PROMPTS, 48, kv_slots=512, workspace=where)
        best["yours"] = min(best["yours"], time.perf_counter() - t0)
        if mine.difference is not None or mine.tokens != course.tokens:
            raise SystemExit(f"the engines differ: {mine.difference}")
        calls = mine.calls
    machine = f"{cpu_name()}, torch {torch.__version__}, {torch.get_num_threads()} threads"
    return dict(best, calls=calls, device=str(model.device), machine=machine)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workspace", type=Path, help="the pieces' folder (default: model answers)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.workspace or Path(tmp)
        if args.workspace is None:
            workspace.keep_model_answers(where)
        r = bench(where, args.repeats)
    print(f"chapter 10's run, best of {args.repeats} (MEASURED on {r['device']}: {r['machine']})")
    print(f"  the course's engine        {r['course']:6.1f} s")
    print(f"  yours, in lock-step        {r['yours']:6.1f} s  ({r['yours'] / r['course']:.2f}x)")
    print(f"  your pieces' calls: {r['calls']}")


if __name__ == "__main__":
    main()
