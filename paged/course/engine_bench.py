"""Benchmark script: the learner's engine against the course's on chapter 10's run, timed.

    python -m paged.course.engine_bench [--repeats 3] [--workspace DIR]
    python -m paged.course.engine_bench --device cuda --attention kernel --json OUT.json

Chapter 10's requests (`paged.model.CHAT_PROMPTS`, 48 new tokens, 512 KV slots, blocks of 16)
served by the course's engine alone (`paged.model.generate`), then by the learner's engine in
lock-step with the course's scheduler (`paged.learner.generate`), interleaved, best of
`--repeats` wall times (MEASURED on the device named with them). The pieces: the workspace at
`--workspace`, else every model answer kept in a temporary workspace (a learner who solved every
exercise). Every run's tokens are checked equal to the course's (exit status 1 otherwise). On a
GPU `--attention kernel` (its default there) decodes with the learner's Triton kernel, the
course's run with the course's kernel: `make gpu-check` keeps that run's JSON with the GPU's
evidence; `make gpu-check-dry` runs it under Triton's CPU interpreter on one short request.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ..exercises.engine import workspace
from .sim_bench import cpu_name


def bench(where: Path, repeats: int, device=None, attention=None, prompts=None, new_tokens=48):
    """Best wall seconds of each engine on the run, what the learner's pieces answered, and
    whether the tokens agreed."""
    import torch

    import paged.model as pm
    from paged import learner

    model = pm.load(device=device)
    prompts = pm.CHAT_PROMPTS if prompts is None else prompts
    kv_slots = 512 if len(prompts) > 4 else None  # chapter 10's budget, or room for all
    best, same = {"course": float("inf"), "yours": float("inf")}, True
    for _ in range(repeats):
        t0 = time.perf_counter()
        course = pm.generate(model, prompts, new_tokens, kv_slots=kv_slots)
        best["course"] = min(best["course"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        mine = learner.generate(
            model, prompts, new_tokens, kv_slots=kv_slots, workspace=where, attention=attention
        )
        best["yours"] = min(best["yours"], time.perf_counter() - t0)
        same = same and mine.difference is None and mine.tokens == course.tokens
    if model.device.type == "cuda":
        machine = f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    else:
        machine = f"{cpu_name()}, torch {torch.__version__}, {torch.get_num_threads()} threads"
    return dict(
        label=f"MEASURED on {machine}",
        prompts=len(prompts),
        new_tokens=new_tokens,
        course_seconds=round(best["course"], 3),
        yours_seconds=round(best["yours"], 3),
        course_attention=course.attention,
        yours_attention=mine.attention,
        calls=mine.calls,
        same_tokens=same,
        difference=mine.difference,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workspace", type=Path, help="the pieces' folder (default: model answers)")
    ap.add_argument("--device", help="cuda or cpu (default: CUDA where there is one)")
    ap.add_argument("--attention", choices=("gather", "decode_one_head", "kernel"))
    ap.add_argument("--prompts", type=int, help="the first N of chapter 10's prompts")
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args(argv)
    import paged.model as pm

    prompts = pm.CHAT_PROMPTS[: args.prompts] if args.prompts else None
    with tempfile.TemporaryDirectory() as tmp:
        where = args.workspace or Path(tmp)
        if args.workspace is None:
            workspace.keep_model_answers(where)
        r = bench(where, args.repeats, args.device, args.attention, prompts, args.new_tokens)
    print(
        f"{r['prompts']} of chapter 10's requests, {r['new_tokens']} new tokens, best of "
        f"{args.repeats} ({r['label']})"
    )
    print(f"  the course's engine   {r['course_seconds']:7.2f} s   {r['course_attention']}")
    print(
        f"  yours, in lock-step   {r['yours_seconds']:7.2f} s   {r['yours_attention']}  "
        f"({r['yours_seconds'] / r['course_seconds']:.2f}x)"
    )
    print(f"  your pieces' calls: {r['calls']}; tokens equal to the course's: {r['same_tokens']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=1) + "\n")
    return 0 if r["same_tokens"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
