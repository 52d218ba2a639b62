"""One command that checks the kernel on a CUDA GPU and keeps the evidence (all MEASURED).

    python -m paged.gpu.check --out DIR             (or: make gpu-check)
    python -m paged.gpu.check --out DIR --dry-run   (no GPU: every step, tiny shapes)

A GPU may be lent for a few minutes once, so the check is built to come back with numbers
whatever happens. It is a list of named steps (`STEPS`); each gets a share of `--budget-s`
(default 420 s; time a step leaves unused goes to the next ones) and is never given more than
the time left. Each runs inside its own try/except, and `gpu_check.json` is rewritten after
every step, so a run cut short (a lease ending, Ctrl-C, a hung compile) keeps every finished
step. Adding a step is one entry: `Step(name, share, function(ctx, seconds) -> result)`.

- tests: the kernel and benchmark tests on this GPU (`gpu`-marked ones included: fp16 and
  bf16, GQA 1-8, head_dim 64-256, block sizes 1-256, split and unsplit, seq_len 0, NaN in
  unused slots, every kernel variant) and the puzzles' checkers judging from a GPU process, in parallel pytest shards, stopped at the cap with
  their JUnit XML kept (`pytest_plugin.py`).
- registers: registers, spills and shared memory of the compiled kernels per launch
  configuration and variant (`registers.launch_rows`); a configuration larger than this GPU's
  shared memory is recorded as not fitting, not as a failure.
- bench: `kernel_bench.py` in a child process that appends each row to `bench_rows.jsonl` as
  soon as it is measured and is killed at the cap: block sizes, the variants side by side (GB/s,
  % of the measured copy bandwidth, speed-up over the baseline and FlexAttention), baselines,
  sweep.
- model: chapter 10's real model on this GPU (`paged.model.timing.serve`): paged through the
  Triton kernel against contiguous "max_new_tokens" in one KV budget, tokens compared, peak batch and
  tokens/s; recorded as skipped where the `model` extra or the weights are not installed.

Writes to DIR: `gpu_check.json` (all, with `failures`), `pytest-<i>.xml`/`.log`, `registers.csv`,
`bench_rows.jsonl`, `bench.log`, `kernel_bench_<device>.csv`/`.png`, every number labelled
MEASURED with its device. Exit status: 0 all passed; 1 something failed (listed in the JSON and
on the last lines); 2 no CUDA GPU here and no --dry-run (one line, nothing run). The dry run is
the CPU interpreter whatever the shell holds: where this process chose compiled kernels (a CUDA
GPU here, or TRITON_INTERPRET=0), it runs itself again with TRITON_INTERPRET=1 (issue 40).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..attention import triton_mode
from .pytest_plugin import TESTS, default_shards, run_tests

NO_GPU = "gpu_check: no CUDA GPU here (torch.cuda.is_available() is False); nothing was run."
DRY_TESTS = "test_gather_kv_follows_the_block_table or test_launch_config_per_gpu"
__all__ = ["NO_GPU", "STEPS", "Step", "failures", "main", "run_steps"]


@dataclass
class Context:
    """What every step may use: where to write, the label, and a place for its error notes."""

    out: Path
    label: str
    dry_run: bool = False
    errors: list = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """One step of the check: a name (its key in the report), a budget share, a function."""

    name: str
    share: float  # of --budget-s
    run: Callable[[Context, float], object]


def environment(dry_run: bool = False) -> dict:
    """Device and versions: what every MEASURED number must name."""
    import torch
    import triton

    versions = dict(
        torch=torch.__version__,
        cuda=torch.version.cuda,
        triton=triton.__version__,
        python=platform.python_version(),
        platform=platform.platform(),
        triton_interpret=triton_mode.INTERPRETED,
    )
    if dry_run:
        return dict(device="CPU interpreter (dry run)", capability="", num_sms=0) | versions
    props = torch.cuda.get_device_properties(0)
    return (
        dict(
            device=torch.cuda.get_device_name(0),
            capability="sm_{}{}".format(*torch.cuda.get_device_capability(0)),
            num_sms=props.multi_processor_count,
            memory_gib=round(props.total_memory / 2**30, 1),
            shared_per_block_optin=getattr(props, "shared_memory_per_block_optin", ""),
        )
        | versions
    )


def step_tests(ctx: Context, seconds: float) -> dict:
    """The kernel and benchmark tests (dry run: two quick ones)."""
    if ctx.dry_run:
        return run_tests(ctx.out, seconds, TESTS[:1], select=DRY_TESTS)
    return run_tests(ctx.out, seconds, shards=default_shards())


def step_registers(ctx: Context, seconds: float) -> list[dict]:
    """Registers, spills and shared memory of the kernels this GPU compiled (launch_rows)."""
    from .registers import launch_rows

    return launch_rows(time.monotonic() + seconds, ctx.label, ctx.dry_run)


def step_bench(ctx: Context, seconds: float) -> list[dict]:
    """kernel_bench.py in a child process, killed at `seconds`; its rows as far as it got."""
    from .bench_report import add_ratios

    rows_path = ctx.out / "bench_rows.jsonl"
    rows_path.unlink(missing_ok=True)
    own_budget = max(1.0, 0.85 * seconds - 5)  # it stops starting rows; the kill is the backstop
    cmd = [
        sys.executable,
        "-m",
        "paged.gpu.kernel_bench",
        "--jsonl",
        str(rows_path),
        "--budget-s",
        f"{own_budget:.0f}",
    ] + (["--dry-run"] if ctx.dry_run else [])
    with open(ctx.out / "bench.log", "w") as log:
        try:
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=seconds)
            if done.returncode:
                ctx.errors.append(f"bench: exited {done.returncode} (see bench.log)")
        except subprocess.TimeoutExpired:
            ctx.errors.append(f"bench: killed at its {seconds:.0f} s cap (rows so far kept)")
    lines = rows_path.read_text().splitlines() if rows_path.exists() else []
    return add_ratios([json.loads(line) for line in lines])


def step_model(ctx: Context, seconds: float) -> dict:
    """The real model (chapter 10) on this GPU, in a child: paged through the Triton kernel vs
    contiguous "max_new_tokens" in one budget (dry run: on the CPU, 2 prompts, 2 tokens)."""
    device, tokens, prompts = ("cpu", 2, 2) if ctx.dry_run else ("cuda", 32, 8)
    code = (
        "import json, paged.model.timing as b; "
        f"print(json.dumps(b.serve({device!r}, {tokens}, b.PROMPTS[:{prompts}])))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds
        )
    except subprocess.TimeoutExpired:
        return dict(skipped=f"killed at its {seconds:.0f} s cap")
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        if "ModelExtraMissing" in tail[0] or "WeightsNotFound" in tail[0]:
            return dict(skipped=tail[0][:300])  # no model here: said, not a failure
        ctx.errors.append(f"model: exited {done.returncode}: {tail[0][:300]}")
        return {}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if ctx.dry_run:
        result["label"] = ctx.label  # the CPU, two tokens: not a measurement
    if not result["same_tokens"]:
        ctx.errors.append("model: paged and max_new_tokens gave different tokens")
    return result


STEPS = (
    Step("tests", 0.38, step_tests),
    Step("registers", 0.08, step_registers),
    Step("bench", 0.40, step_bench),
    Step("model", 0.08, step_model),
)  # shares sum to 0.94: the rest is slack for writing the report


def write_report(result: dict, out: Path, figure: bool = True) -> None:
    """gpu_check.json, registers.csv, and the benchmark's CSV and PNG, all labelled."""
    from .bench_report import device_slug, plot, write_csv

    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "gpu_check.json.tmp"
    tmp.write_text(json.dumps(result, indent=1, default=str))
    tmp.replace(out / "gpu_check.json")  # whole or not at all, even if killed while writing
    label = result["label"]
    if result.get("registers"):
        write_csv(result["registers"], out / "registers.csv")
    rows = result.get("bench") or []
    if rows:
        device = device_slug(rows[0]["device"])
        write_csv(rows, out / f"kernel_bench_{device}.csv")
        env = result["environment"]
        caption = (
            f"{label}; torch {env['torch']}, triton {env['triton']}; batch {rows[0]['batch']} x "
            f"{rows[0]['seq_len']} tokens, {rows[0]['num_q_heads']} q / "
            f"{rows[0]['num_kv_heads']} kv heads, d={rows[0]['head_dim']}, {rows[0]['dtype']}"
        )
        if figure:
            plot(rows, out / f"kernel_bench_{device}.png", caption)


def failures(result: dict) -> list[str]:
    """Everything that failed: tests, launches, our kernel in the benchmark, crashed steps."""
    found = list(result.get("errors", [])) + list(result.get("tests", {}).get("failed", []))
    found += [f"launch {r}" for r in result.get("registers", []) if "error" in r]
    for r in result.get("bench", []):
        if not r["variant"].startswith("triton"):
            continue  # a baseline that cannot run here is a result, not a failure
        what = f"bench {r['variant']} {r.get('kernel', '')} {r.get('shape', '')} block " + str(
            r["block_size"]
        )
        note = r.get("note", "")
        if "time_ms" not in r and not note.startswith("skipped") and "budget" not in note:
            found.append(f"{what}: {note}")
        elif r.get("within_tolerance") is False:
            found.append(f"{what}: max_abs_err {r['max_abs_err']} above tolerance")
    return found


def run_steps(steps, ctx: Context, result: dict, budget_s: float) -> dict:
    """Run each step within its share of the budget; write the report after every one."""
    start, share = time.monotonic(), 0.0
    for step in steps:
        share += step.share
        seconds = min(start + share * budget_s, start + budget_s) - time.monotonic()
        began = time.monotonic()
        if seconds < 1:
            result["errors"].append(f"{step.name}: not run, the time budget ran out")
        else:
            print(f"gpu_check: {step.name} (up to {seconds:.0f} s) ...", flush=True)
            try:
                result[step.name] = step.run(ctx, seconds)
            except Exception as exc:  # record and go on: one broken step must not hide the others
                result["errors"].append(f"{step.name}: {type(exc).__name__}: {exc}"[:500])
        result["errors"] += ctx.errors
        ctx.errors.clear()
        result["seconds"][step.name] = round(time.monotonic() - began, 1)
        result["failures"] = failures(result)
        write_report(result, ctx.out)
    return result


def main(argv=None, steps=STEPS) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the evidence")
    ap.add_argument("--budget-s", type=float, default=420, help="total time, seconds")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the CPU interpreter, tiny")
    args = ap.parse_args(argv)
    if args.dry_run and not triton_mode.INTERPRETED:  # Triton's mode is fixed at its import
        again = [sys.executable, "-m", "paged.gpu.check", *(sys.argv[1:] if argv is None else argv)]
        return subprocess.call(again, env=os.environ | {"TRITON_INTERPRET": "1"})
    import torch

    if not args.dry_run and not torch.cuda.is_available():
        print(NO_GPU)
        return 2
    start = time.monotonic()
    env = environment(args.dry_run)
    what = "not a measurement (dry run, CPU interpreter)" if args.dry_run else "MEASURED on"
    label = what if args.dry_run else f"{what} {env['device']}"
    result = dict(label=label, environment=env, errors=[], seconds={}, failures=[])
    write_report(result, args.out)  # the device and versions are on disk before anything runs
    run_steps(steps, Context(args.out, label, args.dry_run), result, args.budget_s)
    from .bench_report import summary_lines

    result["variant_summary"] = summary_lines(result.get("bench") or [])
    result["elapsed_s"] = round(time.monotonic() - start, 1)
    write_report(result, args.out, figure=False)  # the figure is drawn after the bench step
    for line in result["variant_summary"]:
        print(line)
    tests = result.get("tests", {})
    print(
        f"gpu_check: {env['device']} ({env['capability']}): {tests.get('tests', 0)} tests, "
        f"{len(result['failures'])} failures, {result['elapsed_s']} s; evidence in {args.out}"
    )
    for line in result["failures"]:
        print(f"  FAILED {line}")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
