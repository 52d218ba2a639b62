"""One command that checks the kernel on a CUDA GPU and keeps the evidence (all MEASURED).

    python -m paged.attention.gpu_check --out DIR        (or: make gpu-check)

On a CUDA machine, within about 7 minutes (`--budget-s`): records the device and versions; runs
the kernel and benchmark tests on this GPU (pytest, `gpu`-marked tests included: fp16 and bf16,
GQA 1-8, head_dim 64-256, block sizes 1-256, split and unsplit, seq_len 0, NaN in unused
slots, a non-contiguous q, a very wide table); records registers, spills and shared memory of
the compiled kernels per launch configuration; runs the benchmark with its sweep. Writes to DIR:
`gpu_check.json` (everything), `pytest.xml`, `pytest.log`, `registers.csv`,
`kernel_bench_<device>.csv` and `.png`; every number is labelled MEASURED with its device.

Exit status: 0 all passed; 1 something failed (listed in the JSON and on the last line);
2 no CUDA GPU here (one line, nothing run).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

NO_GPU = "gpu_check: no CUDA GPU here (torch.cuda.is_available() is False); nothing was run."
TESTS = ("tests/test_attention.py", "tests/test_bench.py")
SHARES = dict(tests=0.55, registers=0.1, bench=0.28)  # of --budget-s; the rest is slack


def environment() -> dict:
    """Device and versions: what every MEASURED number must name."""
    import torch
    import triton

    props = torch.cuda.get_device_properties(0)
    return dict(
        device=torch.cuda.get_device_name(0),
        capability="sm_{}{}".format(*torch.cuda.get_device_capability(0)),
        num_sms=props.multi_processor_count,
        memory_gib=round(props.total_memory / 2**30, 1),
        torch=torch.__version__,
        cuda=torch.version.cuda,
        triton=triton.__version__,
        python=platform.python_version(),
        platform=platform.platform(),
    )


def parse_junit(path: Path) -> dict:
    """Totals and the names of failed tests from a pytest JUnit XML file."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    totals = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors")}
    totals["skipped"] = sum(int(s.get("skipped", 0)) for s in suites)
    failed = [
        f"{case.get('classname')}::{case.get('name')}"
        for case in root.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
    return totals | dict(failed=failed)


def run_tests(out: Path, timeout: float) -> dict:
    """pytest on this GPU in a child process; its JUnit XML and log go into `out`."""
    root = Path(__file__).resolve().parents[2]
    paths = [root / t for t in TESTS]
    if not all(p.exists() for p in paths):
        return dict(failed=[f"tests not found under {root} (run from a source checkout)"])
    xml = out / "pytest.xml"
    args = [sys.executable, "-m", "pytest", *map(str, paths), "-q", "-rs", "-p", "no:cacheprovider"]
    try:
        done = subprocess.run(
            [*args, f"--junitxml={xml}"], cwd=root, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout or b""
        (out / "pytest.log").write_text(partial.decode() if isinstance(partial, bytes) else partial)
        return dict(failed=[f"pytest did not finish within {timeout:.0f} s"])
    (out / "pytest.log").write_text(done.stdout + done.stderr)
    if not xml.exists():
        return dict(failed=[f"pytest exited {done.returncode} without a report"])
    result = parse_junit(xml)
    if done.returncode and not result["failed"]:
        result["failed"] = [f"pytest exited {done.returncode}"]
    return result


def register_rows(deadline: float, label: str, device="cuda", shape=(4, 1000)) -> list[dict]:
    """Registers, spills and shared memory of each compiled kernel, per launch configuration."""
    import torch

    from . import bench
    from .kernel import launch

    cc = torch.cuda.get_device_capability(0) if device == "cuda" else (8, 0)
    dtypes = [torch.float16] + ([torch.bfloat16] if cc >= (8, 0) else [])
    configs = [
        dict(head_dim=d, dtype=t, path=p, split=s)
        for d in (64, 128, 256)
        for t in dtypes
        for p in (None, "cuda_core")
        for s in (False, True)
    ]
    sweep = bench.sweep_configs(bench.SWEEP)
    configs += [dict(head_dim=128, dtype=torch.float16, split=False, **c) for c in sweep]
    rows = []
    for config in configs:
        config = dict(config)
        head_dim, dtype = config.pop("head_dim"), config.pop("dtype")
        row = dict(
            label=label, head_dim=head_dim, dtype=str(dtype).removeprefix("torch."), **config
        )
        if time.monotonic() > deadline:
            rows.append(row | dict(note="skipped: the time budget ran out"))
            continue
        case = bench.make_inputs(*shape, 16, 32, 8, head_dim, dtype, device)
        try:
            ran = launch(*case, **config)
        except Exception as exc:
            rows.append(row | dict(error=f"{type(exc).__name__}: {exc}"[:300]))
            continue
        for name, compiled in zip(("attention", "merge"), ran.compiled, strict=False):
            rows.append(
                row
                | dict(kernel=name, path=ran.config.path, tile=ran.config.tile,
                       num_warps=ran.config.num_warps, num_stages=ran.config.num_stages,
                       registers=getattr(compiled, "n_regs", ""),
                       spills=getattr(compiled, "n_spills", ""),
                       shared_bytes=getattr(compiled.metadata, "shared", ""))
            )  # fmt: skip
    return rows


def write_report(result: dict, out: Path) -> None:
    """gpu_check.json, registers.csv, and the benchmark's CSV and PNG, all labelled."""
    from . import bench

    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.json").write_text(json.dumps(result, indent=1, default=str))
    label = result["label"]
    if result.get("registers"):
        bench.write_csv(result["registers"], out / "registers.csv")
    rows = result.get("bench") or []
    if rows:
        device = re.sub(r"[^A-Za-z0-9]+", "_", rows[0]["device"]).strip("_")
        bench.write_csv(rows, out / f"kernel_bench_{device}.csv")
        env = result["environment"]
        caption = (
            f"{label}; torch {env['torch']}, triton {env['triton']}; batch {rows[0]['batch']} x "
            f"{rows[0]['seq_len']} tokens, {rows[0]['num_q_heads']} q / "
            f"{rows[0]['num_kv_heads']} kv heads, d={rows[0]['head_dim']}, {rows[0]['dtype']}"
        )
        bench.plot(rows, out / f"kernel_bench_{device}.png", caption)


def failures(result: dict) -> list[str]:
    """Everything that failed: tests, launches, our kernel in the benchmark, crashed steps."""
    found = list(result.get("errors", [])) + list(result.get("tests", {}).get("failed", []))
    found += [f"launch {r}" for r in result.get("registers", []) if "error" in r]
    found += [
        f"bench {r['variant']} block {r['block_size']}: {r['note']}"
        for r in result.get("bench", [])
        if r["variant"].startswith("triton") and "time_ms" not in r and "budget" not in r["note"]
    ]
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the evidence")
    ap.add_argument("--budget-s", type=float, default=420, help="total time, seconds")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(NO_GPU)
        return 2
    start = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    env = environment()
    result = dict(label=f"MEASURED on {env['device']}", environment=env, errors=[])
    from . import bench

    steps = (
        ("tests", lambda budget: run_tests(args.out, budget)),
        ("registers", lambda budget: register_rows(time.monotonic() + budget, result["label"])),
        ("bench", lambda budget: bench.run(budget_s=budget)),
    )
    for name, step in steps:
        print(f"gpu_check: {name} ...", flush=True)
        try:
            result[name] = step(SHARES[name] * args.budget_s)
        except Exception as exc:  # record and go on: one broken step must not hide the others
            result["errors"].append(f"{name}: {type(exc).__name__}: {exc}"[:500])
    result["elapsed_s"] = round(time.monotonic() - start, 1)
    result["failures"] = failures(result)
    write_report(result, args.out)
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
