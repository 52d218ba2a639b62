"""Benchmark of the real model on the paged cache: load times, decode step, memory (MEASURED).

    python -m paged.model.timing            # about a minute on 2 CPU cores
    python -m paged.model.timing --serve cuda --json   # one JSON line (make gpu-check runs it)

Prints, with the machine and library versions:
- first load: a fresh process with an empty cache directory (import, read and dequantize the
  GGUF file, convert the tokenizer, write both caches); cached load: a fresh process again;
- the model call of one decode step at batch 1 and batch 8 (median over the steps in which
  the whole batch ran), and new tokens per second of the whole run, prefill included;
- peak resident memory (the largest of this process and its children);
- paged against contiguous ("max_new_tokens") reservation in the same KV budget: peak batch, steps,
  preemptions, tokens per second.
The issue's targets (2 cores): first load <= 30 s, cached load <= 5 s, decode step at batch 8
<= 150 ms, peak memory <= 2 GiB. Timings are of this machine at this moment: other processes
sharing its cores slow them down, and with two torch threads on two busy cores far more than
with one (each of the hundreds of small operations in a step waits for a descheduled thread):
`--threads 1` measures a shared machine fairly. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from ..text import msg

PROMPTS = [
    "Write a short story about a robot who learns to paint.",
    "Explain how a bicycle works.",
    "Describe the water cycle in detail.",
    "Write a poem about autumn leaves.",
    "What are the benefits of regular exercise?",
    "Tell me about the history of the printing press.",
    "How do airplanes stay in the air?",
    "Give me tips for learning a new language.",
]


MACHINE = msg(
    "{cpu}, {cores} cores, {os}; Python {python}, torch {torch} ({threads} threads), "
    "transformers {transformers}, gguf {gguf}",
    "{cpu}, 코어 {cores}개, {os}; Python {python}, torch {torch}(스레드 {threads}개), "
    "transformers {transformers}, gguf {gguf}",
)


def machine() -> str:
    """CPU model, cores this process may use, OS and the library versions that matter."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from importlib.metadata import version

    import gguf  # noqa: F401  (the version below)
    import torch
    import transformers

    return MACHINE.format(
        cpu=cpu,
        cores=len(os.sched_getaffinity(0)),
        os=f"{platform.system()} {platform.release()}",
        python=platform.python_version(),
        torch=torch.__version__,
        threads=torch.get_num_threads(),
        transformers=transformers.__version__,
        gguf=version("gguf"),
    )


def peak_rss_mib(children: bool = False) -> float:
    """Peak resident memory of this process (or of its finished children), MiB; NaN where the
    platform cannot tell (Windows has no `resource` module)."""
    try:
        import resource
    except ImportError:
        return float("nan")
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def _child_load(cache: str) -> None:
    """In a fresh process: time `import paged.model` + `load()`; print JSON."""
    start = time.perf_counter()
    import paged.model as pm

    pm.load(device="cpu", cache=cache)
    print(json.dumps({"seconds": time.perf_counter() - start, "rss_mib": peak_rss_mib()}))


def timed_load(cache: str) -> dict:
    cmd = [sys.executable, "-m", "paged.model.timing", "--child-load", cache]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def decode_step(model, batch: int, new_tokens: int) -> tuple[float, float, int]:
    """(median ms of the decode steps run at full `batch`, tokens per second, such steps)."""
    from . import generate

    result = generate(model, PROMPTS[:batch], new_tokens)
    full = [s for b, s in result.decode_seconds if b == batch]
    return 1000 * statistics.median(full), result.tokens_per_s, len(full)


def serve(device: str, new_tokens: int = 32, prompts=PROMPTS) -> dict:
    """Paged (the Triton kernel on CUDA) and contiguous "max_new_tokens" on the same prompts and
    budget: tokens equal, peak batch, steps, preemptions, tokens per second (MEASURED on
    `device`)."""
    import torch

    import paged.model as pm

    model = pm.load(device=device)
    pm.generate(model, prompts[:1], 2)  # warm-up: compiles the kernels on a GPU
    ids = pm.prompt_ids(model, prompts)
    budget = 3 * (max(map(len, ids)) + new_tokens)  # contiguous "max_new_tokens" fits three at once
    runs = {
        p: pm.generate(model, prompts, new_tokens, kv_slots=budget, policy=p)
        for p in ("max_new_tokens", "paged")
    }
    rows = [
        dict(
            policy=p,
            peak_batch=r.peak_batch,
            steps=r.steps,
            preemptions=r.preemptions,
            tokens_per_s=round(r.tokens_per_s, 1),
            attention=r.attention,
        )
        for p, r in runs.items()
    ]
    name = torch.cuda.get_device_name(0) if device == "cuda" else machine()
    return dict(
        label=f"MEASURED on {name}",
        kv_slots=budget,
        new_tokens=new_tokens,
        prompts=len(prompts),
        same_tokens=runs["max_new_tokens"].tokens == runs["paged"].tokens,
        rows=rows,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child-load", metavar="CACHE_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--new-tokens", type=int, default=17, help="tokens per prompt")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument("--serve", metavar="DEVICE", help="only paged vs max on DEVICE")
    parser.add_argument("--json", action="store_true", help="with --serve: one JSON line")
    args = parser.parse_args(argv)
    if args.threads:  # children inherit it: OpenMP reads the variable when torch starts
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
        import torch

        torch.set_num_threads(args.threads)
    if args.child_load:
        return _child_load(args.child_load)
    if args.serve:
        result = serve(args.serve, args.new_tokens, PROMPTS)
        print(json.dumps(result) if args.json else result)
        return None

    import paged.model as pm

    print(f"MEASURED on {machine()}")
    print(f"weights: {pm.weights_path()}")
    with tempfile.TemporaryDirectory(prefix="paged-bench-cache-") as cache:
        first, cached = timed_load(cache), timed_load(cache)
    print(
        f"first load, empty cache (dequantize, cache): {first['seconds']:5.1f} s (target <= 30 s)"
    )
    print(
        f"cached load, a fresh process:                {cached['seconds']:5.1f} s (target <= 5 s)"
    )

    model = pm.load(device="cpu")
    pm.generate(model, PROMPTS[:1], 2)  # warm-up: first calls into torch's kernels
    for batch in (1, 8):
        ms, tps, n = decode_step(model, batch, args.new_tokens)
        target = "   (target <= 150 ms)" if batch == 8 else ""
        print(
            f"decode step, batch {batch}: {ms:6.1f} ms (median of {n}), whole run "
            f"{tps:5.1f} new tokens/s{target}"
        )

    ids = pm.prompt_ids(model, PROMPTS)
    budget = 3 * (max(map(len, ids)) + 32)  # contiguous max_new_tokens fits three requests
    print(f"\n8 prompts, max_new_tokens 32, the same KV budget of {budget} slots:")
    print(f"{'policy':>14} {'peak batch':>10} {'steps':>6} {'preemptions':>11} {'tokens/s':>9}")
    runs = (("max_new_tokens", 16, "max_new_tokens"), ("paged", 16, "paged, bs 16"))
    for policy, block_size, name in (*runs, ("paged", 4, "paged, bs 4")):
        r = pm.generate(model, PROMPTS, 32, kv_slots=budget, policy=policy, block_size=block_size)
        print(
            f"{name:>14} {r.peak_batch:>10} {r.steps:>6} {r.preemptions:>11} {r.tokens_per_s:>9.1f}"
        )
    print(f"attention: {r.attention}")

    print(f"KV cache: {model.kv_bytes_per_token} bytes per token ({model.dtype})")
    rss = max(peak_rss_mib(), peak_rss_mib(children=True))
    print(f"peak resident memory: {rss / 1024:.2f} GiB (target <= 2 GiB)")


if __name__ == "__main__":
    main()
