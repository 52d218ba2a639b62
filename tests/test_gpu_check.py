"""The one-shot GPU check: its refusal without a GPU, and its report plumbing on fake results."""

import csv
import json
import os
import subprocess
import sys

from paged.attention import gpu_check

LABEL = "MEASURED on NVIDIA H100 80GB HBM3"


def test_without_cuda_it_says_so_in_one_line_and_exits_2(tmp_path):
    env = os.environ | {"CUDA_VISIBLE_DEVICES": ""}  # hides a GPU if this machine has one
    done = subprocess.run(
        [sys.executable, "-m", "paged.attention.gpu_check", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2
    assert lines == [gpu_check.NO_GPU]
    assert not (tmp_path / "out").exists()  # nothing was run or written


def test_junit_totals_and_failed_names(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite tests="3" failures="1" errors="0" skipped="1">'
        '<testcase classname="tests.test_attention" name="test_a"/>'
        '<testcase classname="tests.test_attention" name="test_b"><failure message="x"/></testcase>'
        '<testcase classname="tests.test_bench" name="test_c"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    got = gpu_check.parse_junit(xml)
    assert got == dict(
        tests=3, failures=1, errors=0, skipped=1, failed=["tests.test_attention::test_b"]
    )


def fake_result():
    bench_row = dict(label=LABEL, device="NVIDIA H100 80GB HBM3", batch=64, seq_len=4096,
                     num_q_heads=32, num_kv_heads=8, head_dim=128, dtype="float16")  # fmt: skip
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
        ]  # fmt: skip
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
    assert len(gpu_check.failures(result)) == 3
