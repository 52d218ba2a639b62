"""The one-shot GPU check: its refusal without a GPU, its report plumbing on fake results, and
its dry run (every step, tiny shapes, the CPU interpreter) end to end, and what it leaves on disk
after each step (all that an interrupted run keeps)."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from paged.attention.launch import VARIANTS
from paged.gpu import check as gpu_check
from paged.gpu import pytest_plugin as gpu_tests
from paged.gpu.pytest_plugin import parse_junit

LABEL = "MEASURED on NVIDIA H100 80GB HBM3"
ROOT = Path(__file__).resolve().parents[1]


def test_without_cuda_it_says_so_in_one_line_and_exits_2(tmp_path):
    env = os.environ | {"CUDA_VISIBLE_DEVICES": ""}  # hides a GPU if this machine has one
    done = subprocess.run(
        [sys.executable, "-m", "paged.gpu.check", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2
    assert lines == [gpu_check.NO_GPU]
    assert not (tmp_path / "out").exists()  # nothing was run or written


def test_the_dry_run_is_the_interpreter_whatever_the_shell_holds(tmp_path):
    """TRITON_INTERPRET=0 (or a CUDA GPU) makes this process choose compiled kernels; the dry run
    starts itself again with the interpreter (no time for any step: the report alone)."""
    env = os.environ | {"TRITON_INTERPRET": "0", "CUDA_VISIBLE_DEVICES": ""}
    args = ["-m", "paged.gpu.check", "--dry-run", "--budget-s", "0", "--out", str(tmp_path)]
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stderr[-2000:]  # every step: not run, no time left
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["environment"]["triton_interpret"] is True
    assert report["errors"][0] == "tests: not run, the time budget ran out"


def test_junit_totals_and_failed_names(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite tests="3" failures="1" errors="0" skipped="1">'
        '<testcase classname="tests.test_attention" name="test_a"/>'
        '<testcase classname="tests.test_attention" name="test_b"><failure message="x"/></testcase>'
        '<testcase classname="tests.test_bench" name="test_c"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    got = parse_junit(xml)
    assert got == dict(
        tests=3, failures=1, errors=0, skipped=1, failed=["tests.test_attention::test_b"]
    )
    both = parse_junit([xml, xml])  # one file per pytest shard
    assert both["tests"] == 6 and len(both["failed"]) == 2


def fake_result():
    bench_row = dict(
        label=LABEL,
        device="NVIDIA H100 80GB HBM3",
        batch=64,
        seq_len=4096,
        num_q_heads=32,
        num_kv_heads=8,
        head_dim=128,
        dtype="float16",
        shape="uniform",
    )
    return dict(
        label=LABEL,
        environment=dict(device="NVIDIA H100 80GB HBM3", torch="2.13", triton="3.9"),
        errors=[],
        tests=dict(tests=10, failures=0, errors=0, skipped=0, failed=[]),
        registers=[dict(label=LABEL, kernel="attention", registers=96, spills=0)],
        bench=[
            bench_row
            | dict(
                variant="triton_paged_shuffled",
                block_size=bs,
                time_ms=0.3,
                gb_per_s=g,
                pct_of_peak=10.0,
                pct_of_copy=12.0,
                note="",
            )
            for bs, g in ((1, 500.0), (16, 2500.0))
        ]
        + [bench_row | dict(variant="flex_paged", block_size=1, note="Unavailable: no")],
    )


def test_report_files_are_labelled_measured_and_failures_are_found(tmp_path):
    result = fake_result()
    assert gpu_check.failures(result) == []  # an unavailable baseline is not a failure
    gpu_check.write_report(result, tmp_path)
    assert json.loads((tmp_path / "gpu_check.json").read_text())["label"] == LABEL
    for name in ("registers.csv", "kernel_bench_NVIDIA_H100_80GB_HBM3.csv"):
        assert {row["label"] for row in csv.DictReader(open(tmp_path / name))} == {LABEL}
    assert (tmp_path / "kernel_bench_NVIDIA_H100_80GB_HBM3.png").stat().st_size > 10_000
    result["bench"][0] = result["bench"][0] | dict(note="RuntimeError: boom")
    del result["bench"][0]["time_ms"]
    result["tests"]["failed"] = ["tests.test_attention::test_b"]
    result["registers"].append(dict(error="ValueError: bad"))
    result["bench"][1] |= dict(within_tolerance=False, max_abs_err="3.0e-01")
    found = gpu_check.failures(result)
    assert len(found) == 4 and found[-1].endswith("max_abs_err 3.0e-01 above tolerance")


def test_no_step_can_stop_the_others_and_the_report_follows_every_step(tmp_path):
    on_disk = []

    def read_report():
        return json.loads((tmp_path / "gpu_check.json").read_text())

    def first(ctx, seconds):
        return dict(ok=True)

    def broken(ctx, seconds):
        on_disk.append(read_report())
        raise RuntimeError("a step that crashes")

    def slow(ctx, seconds):
        on_disk.append(read_report())
        ctx.errors.append("c: a note of its own")
        time.sleep(seconds + 0.5)  # runs past its cap, and so past the whole budget
        return [1, 2]

    shares = (("a", 0.2, first), ("b", 0.2, broken), ("c", 0.1, slow), ("late", 0.05, first))
    steps = [gpu_check.Step(*step) for step in shares]  # of 6 s: 1.2, 1.2, 0.6 (+ the rest)
    result = dict(label=LABEL, environment={}, errors=[], seconds={}, failures=[])
    gpu_check.run_steps(steps, gpu_check.Context(tmp_path, LABEL), result, budget_s=6)
    assert on_disk[0]["a"] == dict(ok=True) and "b" not in on_disk[0]
    assert on_disk[1]["errors"] == ["b: RuntimeError: a step that crashes"]
    report = read_report()
    assert report["c"] == [1, 2] and "late" not in report
    assert report["errors"] == [
        "b: RuntimeError: a step that crashes",
        "c: a note of its own",
        "late: not run, the time budget ran out",
    ]
    assert report["failures"] == report["errors"]
    assert set(report["seconds"]) == {"a", "b", "c", "late"}


def test_shards_split_the_tests_left_after_deselection():
    from types import SimpleNamespace

    items, dropped = list("abcdefg"), []
    config = SimpleNamespace(
        getoption=lambda name: "1/3",
        hook=SimpleNamespace(pytest_deselected=lambda items: dropped.extend(items)),
    )
    gpu_tests.pytest_collection_modifyitems(config, items)
    assert items == ["b", "e"] and sorted(dropped) == list("acdfg")


def test_pytest_cut_at_its_time_limit_still_leaves_junit_xml(tmp_path, monkeypatch):
    tests = tmp_path / "test_cut.py"
    tests.write_text(
        "import time\n\ndef test_fast():\n    pass\n\ndef test_slow():\n    time.sleep(120)\n"
    )
    monkeypatch.setattr(gpu_tests, "GRACE_S", 5)
    # 15 s before the interrupt: about 5 times what pytest takes to start and pass test_fast on
    # a loaded 2-core machine (3 s at load 1.5), far short of the 120 s sleep; SIGINT ignored
    # here (a background job's lot) must not reach the child
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        got = gpu_tests.run_tests(tmp_path, timeout=20, paths=(str(tests),))
    finally:
        signal.signal(signal.SIGINT, previous)
    # cut at its limit, not after the 120 s sleep: the report says so, from the partial XML
    assert (tmp_path / "pytest-0.xml").exists() and got["tests"] >= 1 and got["failures"] == 0
    assert got["failed"] == ["pytest did not finish within 20 s (partial results)"]


def make_recipe(target: str) -> list[str]:
    """The command `make <target>` runs, split into words (make itself would rebuild the venv)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    recipe = lines[lines.index(next(x for x in lines if x.startswith(f"{target}:"))) + 1]
    return recipe.strip().lstrip("@").split()


def dry_run(out, **popen):
    """`make gpu-check-dry` as a new user's shell runs it: no TRITON_INTERPRET, nothing imported.

    This process has imported `paged`, which set TRITON_INTERPRET=1 here; a child that inherited it
    would hide a step that imports Triton before `paged` decides (issue 40), so it goes.
    """
    words = make_recipe("gpu-check-dry")
    assert words[:5] == ["$(BIN)/python", "-m", "paged.gpu.check", "--dry-run", "--out"]
    assert len(words) == 6, words
    args = [sys.executable, *words[1:-1], str(out)]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # hides a GPU if this machine has one
    return subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
        **popen,
    )


def test_the_dry_run_runs_every_step_and_reports_after_each(tmp_path):
    """No GPU, a clean shell: every step on tiny shapes, no failure; the report on disk holds each
    step once it is done."""
    proc, done, lines, on_disk = dry_run(tmp_path), [], [], []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("gpu_check: ") and " ... " not in line and "(up to" in line:
            report = json.loads((tmp_path / "gpu_check.json").read_text())
            on_disk.append(report)
            done.append([s for s in ("tests", "registers", "bench", "model") if s in report])
    assert proc.wait(timeout=240) == 0, "".join(lines)[-3000:]
    assert done == [[], ["tests"], ["tests", "registers"], ["tests", "registers", "bench"]]
    # what a kill as the registers step starts (a lease ending: no clean-up at all) would leave
    # is what lay on disk then: the finished tests step, labelled a dry run
    assert on_disk[1]["environment"]["device"] == "CPU interpreter (dry run)"
    assert on_disk[1]["tests"]["tests"] == 2 and "registers" not in on_disk[1]
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["label"].startswith("not a measurement") and report["failures"] == []
    assert report["tests"]["tests"] == 2 and report["tests"]["shards"] == 1
    assert {r.get("variant") for r in report["registers"]} >= set(VARIANTS)
    side_by_side = [r for r in report["bench"] if r["variant"] == "triton_variant"]
    assert {(r["kernel"], r["shape"]) for r in side_by_side if "time_ms" in r} == {
        (v, s) for v in VARIANTS for s in ("uniform", "few_long", "mixed")
    }
    model = report["model"]  # the real model ran (or says why not: no model extra here)
    assert model.get("skipped") or (model["same_tokens"] and len(model["rows"]) == 2)
    assert all("speedup_vs_baseline" in r for r in side_by_side)
    assert any(line.startswith("  best on mixed:") for line in report["variant_summary"])
    names = {p.name for p in tmp_path.iterdir()}
    assert {
        "pytest-0.xml",
        "registers.csv",
        "bench_rows.jsonl",
        "kernel_bench_cpu.csv",
        "kernel_bench_cpu.png",
    } <= names
