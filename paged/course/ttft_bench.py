"""Benchmark: how far a cached prefix cuts the time to first token, the course beside vLLM.

    python -m paged.course.ttft_bench [--lengths 1 4 8] [--repeats 3] [--out FILE.csv]

Chapter 12's tenants: A asks, and when A is answered B asks under the same system prompt (the
chapter's, repeated 1, 4, 8 times for longer prompts). B's time to first token is the model run
of the step that samples it (MEASURED: the course's `paged.model.tenants`, and vLLM's engine
core timed between `schedule` and `update_from_output`), the median of `--repeats`, in two
conditions on both engines: "full" (B's salt differs from A's, so B computes its whole prompt
with the caching machinery on) and "cached" (same salt: B takes A's system-prompt blocks and
computes only the rest). Block size 32 on both (vLLM's CPU build needs a multiple of 32).

"proportional" is the cut the cached fraction f alone would give, 1 / (1 - f). Every model run
also reads all of the model's weights once, however few tokens it computes, so a short prefill
costs about one decode step at least: the cut approaches 1 / (1 - f) only when the uncached part
is long enough for its arithmetic to outweigh that fixed cost.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

from ..engines import vllm as V
from ..model import load, prompt_ids
from ..model.shared_prompt import LIBRARY_SYSTEM
from ..model.tenants import CHAPTER12_QUESTIONS, tenant_experiment
from ..model.timing import machine

BLOCK_SIZE = 32
MAX_NEW_TOKENS = 4
FIELDS = (
    "engine",
    "system_times",
    "prompt_len",
    "cached",
    "full_ms",
    "cached_ms",
    "cut",
    "proportional",
)


def course_row(model, system: str, repeats: int) -> dict:
    """B's median time to first token on the course's model: full (salted) and cached."""
    r = tenant_experiment(
        model,
        system=system,
        block_size=BLOCK_SIZE,
        max_new_tokens=MAX_NEW_TOKENS,
        repeats=repeats,
    )
    full, cached = r.ttft["salted"][1], r.ttft["shared"][1]
    return _row("course", r.prompt_lens[1], r.cached_tokens["shared"][1], full, cached)


def vllm_row(ids: list[list[int]], repeats: int) -> dict:
    """The same pair on vLLM (live), one engine: a warm-up pair, then per repeat a pair with one
    salt (B served from A's blocks) and a pair with two (B computes everything). Every pair's
    salts are new, so A always computes its prompt and B finds only what A left."""
    pairs = ["warm-up", *(f"{kind}{k}" for k in range(repeats) for kind in ("same", "two"))]
    prompts = ids * len(pairs)
    salts = [s for p in pairs for s in ((f"{p}a", f"{p}b") if p.startswith("two") else (p, p))]
    need = sum(-(-(len(p) + MAX_NEW_TOKENS) // BLOCK_SIZE) for p in ids)
    run = V.generate(
        prompts,
        MAX_NEW_TOKENS,
        kv_blocks=2 * need + 1,
        block_size=BLOCK_SIZE,
        prefix_caching=True,
        cache_salts=salts,
        one_at_a_time=True,
        live=True,
    )
    b = {
        kind: [2 * k + 1 for k, p in enumerate(pairs) if p.startswith(kind)]
        for kind in ("same", "two")
    }
    full = statistics.median(run.time_to_first_token(j) for j in b["two"])
    cached = statistics.median(run.time_to_first_token(j) for j in b["same"])
    hits = {run.num_cached_tokens[j] for j in b["same"]}
    if len(hits) != 1 or 0 in hits or any(run.num_cached_tokens[j] for j in b["two"]):
        raise RuntimeError(
            "B should find the same blocks of A's in every same-salt pair and none with two "
            f"salts; vLLM's cached tokens per prompt: {run.num_cached_tokens}"
        )
    return _row("vLLM " + run.version, len(ids[1]), hits.pop(), full, cached)


def _row(engine: str, prompt_len: int, cached: int, full: float, cached_s: float) -> dict:
    return {
        "engine": engine,
        "prompt_len": prompt_len,
        "cached": cached,
        "full_ms": round(full * 1000, 1),
        "cached_ms": round(cached_s * 1000, 1),
        "cut": round(full / cached_s, 2),
        "proportional": round(prompt_len / (prompt_len - cached), 2),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("test-output/ttft_bench.csv"))
    ap.add_argument("--no-vllm", action="store_true", help="the course's side only")
    args = ap.parse_args(argv)
    model = load("cpu")
    rows = []
    print(f"B's time to first token, median of {args.repeats} (MEASURED; {machine()})")
    print("engine        B's tokens  cached   full ms  cached ms   cut  proportional")
    for k in args.lengths:
        system = " ".join([LIBRARY_SYSTEM] * k)
        ids = prompt_ids(model, list(CHAPTER12_QUESTIONS[:2]), system)
        pair = [course_row(model, system, args.repeats)]
        if not args.no_vllm:
            pair.append(vllm_row(ids, args.repeats))
        for row in pair:
            rows.append(row | {"system_times": k})
            print(
                f"{row['engine']:12s}  {row['prompt_len']:10d}  {row['cached']:6d}  "
                f"{row['full_ms']:8.1f}  {row['cached_ms']:9.1f}  {row['cut']:4.2f}  "
                f"{row['proportional']:12.2f}"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
