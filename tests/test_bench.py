"""The benchmark's arithmetic and plumbing, with a fake timer (real timings need a GPU).

On a CUDA machine the same plumbing runs there (FlexAttention compiled, the pinned SDPA and
FlashAttention-2 baselines available); here FlexAttention's paged path runs eagerly on the CPU,
which still checks that it computes the same attention as our reference. Whatever fails in one
row (a baseline on an older torch, a config too large for the GPU, the time budget) must become
that row's note, never stop the benchmark.
"""

import csv

import pytest
import torch

from paged.attention import backend, paged_attention, paged_attention_ref
from paged.gpu import bandwidth, kernel_bench, kernel_inputs, kernel_sweep
from paged.gpu.baselines import Unavailable, make_fa2_paged, make_flex_paged
from paged.gpu.bench_report import plot, row_lines, summary_lines, write_csv

DEVICE = "cuda" if backend() == "cuda" else "cpu"


def test_kv_bytes_and_peak_lookup_by_exact_name():
    assert bandwidth.kv_bytes(64, 4096, 8, 128, torch.float16) == 2 * 64 * 4096 * 8 * 128 * 2
    assert bandwidth.peak_bandwidth("NVIDIA H200") == 4.8e12
    assert bandwidth.peak_bandwidth("NVIDIA H100 80GB HBM3") == 3.35e12  # SXM
    assert bandwidth.peak_bandwidth("NVIDIA H100 PCIe") == 2.0e12
    assert bandwidth.peak_bandwidth("NVIDIA L40S") == 864e9  # not the L4's 300 GB/s
    assert bandwidth.peak_bandwidth("NVIDIA L4") == 300e9
    assert bandwidth.peak_bandwidth("NVIDIA A100-SXM4-80GB") == 2.039e12
    assert bandwidth.peak_bandwidth("NVIDIA A10G") == 600e9
    assert bandwidth.peak_bandwidth("Tesla T4") == 320e9
    assert bandwidth.peak_bandwidth("some new chip") is None


def test_identity_layout_is_contiguous_and_shuffled_is_not():
    *_, ident, _ = kernel_inputs.make_inputs(
        2, 10, 4, 2, 1, 16, torch.float32, DEVICE, layout="identity"
    )
    *_, shuf, lens = kernel_inputs.make_inputs(2, 10, 4, 2, 1, 16, torch.float32, DEVICE)
    assert ident.device.type == shuf.device.type == DEVICE  # made on the device, not copied
    assert ident.flatten().tolist() == list(range(6))
    assert sorted(shuf.flatten().tolist()) == list(range(6))
    assert shuf.flatten().tolist() != list(range(6)) and lens.tolist() == [10, 10]


def test_flex_attention_paged_path_equals_the_reference():
    case = kernel_inputs.make_inputs(3, 37, 16, 4, 2, 32, torch.float32, DEVICE)
    made = make_flex_paged(*case, compile_=False)  # eager: checks the page-table mapping
    torch.testing.assert_close(made.fn(), paged_attention_ref(*case), atol=1e-4, rtol=1e-4)
    with pytest.raises(Unavailable):  # block size 16 (or no GPU, or no such call in this torch)
        make_fa2_paged(*case, max_seq_len=37)


def fake_timer(fn):
    fn()  # runs each variant once (the kernel under the interpreter)
    return 2.0  # ms


TINY = dict(
    batch=2,
    seq_len=20,
    num_q_heads=4,
    num_kv_heads=2,
    head_dim=32,
    timer=fake_timer,
    device=DEVICE,
    compile_flex=False,
)


def test_run_writes_rows_csv_and_png(tmp_path, monkeypatch):
    seen = []
    rows = kernel_sweep.run(
        **TINY,
        block_sizes=(1, 16),
        sweep=dict(tile=(16,), num_warps=(2, 4)),
        variants=("baseline", "balanced"),
        shapes=("uniform", "mixed"),
        on_row=seen.append,
    )
    variants = [(r["variant"], r.get("kernel"), r["shape"], r["block_size"]) for r in rows]
    assert variants == [
        ("triton_paged_shuffled", None, "uniform", 16),  # the headline first
        ("triton_paged_identity", None, "uniform", 16),
        ("triton_variant", "baseline", "uniform", 16),  # then the variants, side by side
        ("triton_variant", "balanced", "uniform", 16),
        ("flex_paged", None, "uniform", 16),
        ("triton_variant", "baseline", "mixed", 16),
        ("triton_variant", "balanced", "mixed", 16),
        ("torch_sdpa_contiguous", None, "uniform", ""),
        ("triton_paged_split", None, "uniform", 16),
        ("triton_paged_split", None, "uniform", 16),
        ("triton_paged_shuffled", None, "uniform", 1),
        ("triton_paged_identity", None, "uniform", 1),
        ("triton_paged_config", None, "uniform", 16),
        ("triton_paged_config", None, "uniform", 16),
    ]
    assert seen == rows  # each row was handed on as soon as it was measured
    expected_gbps = round(bandwidth.kv_bytes(2, 20, 2, 32, torch.float16) / 2e-3 / 1e9, 1)
    timed = [r for r in rows if "time_ms" in r]
    assert all(float(r["max_abs_err"]) < 5e-3 and r["within_tolerance"] for r in timed)
    assert {r["gb_per_s"] for r in timed if r["shape"] == "uniform"} == {expected_gbps}
    mixed = [r["kv_bytes"] for r in timed if r["shape"] == "mixed"]
    assert mixed and max(mixed) < bandwidth.kv_bytes(2, 20, 2, 32, torch.float16)  # shorter ones
    # Same fake time everywhere: every variant is 1.0x the baseline and 1.0x FlexAttention.
    assert {r["speedup_vs_baseline"] for r in rows if r["variant"] == "triton_variant"} == {1.0}
    assert {
        r.get("speedup_vs_flex")
        for r in timed
        if r["shape"] == "uniform" and r["variant"] == "triton_variant"
    } == {1.0}
    if DEVICE == "cpu":  # the pinned flash backend needs a GPU: a reason instead of a time
        sdpa = rows[7]
        assert "time_ms" not in sdpa and "needs a CUDA GPU" in sdpa["note"]
        assert all(r["label"].startswith("not a measurement") for r in rows)
    lines = summary_lines(rows)
    assert "best on uniform:" in lines[-2] and "balanced" in "\n".join(lines)
    monkeypatch.setenv("PAGED_LANG", "ko")  # the Korean chapter 7 prints the same table in Korean
    assert "uniform에서 가장 빠른 변형:" in summary_lines(rows)[-2]
    assert all(" 블록 " in line for line in row_lines(rows))
    write_csv(rows, tmp_path / "b.csv")
    plot(rows, tmp_path / "b.png", "test caption")
    assert len(list(csv.DictReader(open(tmp_path / "b.csv")))) == len(rows)
    assert (tmp_path / "b.png").stat().st_size > 10_000


def test_no_failure_of_a_row_stops_the_benchmark(monkeypatch):
    """An old torch's TypeError, an expectation that runs out of memory, a config too big for
    the GPU's shared memory, the budget: each becomes a row with its reason."""
    from triton.runtime.errors import OutOfResources

    from paged.gpu import check as gpu_check

    def old_torch(*args, **kwargs):
        raise TypeError("convert_logical_block_mask() got an unexpected keyword argument 'kv_len'")

    def too_big(*args, tile=None, **kwargs):
        if tile == 128:
            raise OutOfResources(140288, 101376, "shared memory")
        return paged_attention(*args, tile=tile, **kwargs)

    monkeypatch.setattr(kernel_sweep, "make_flex_paged", old_torch)
    monkeypatch.setattr(kernel_sweep, "paged_attention", too_big)
    options = dict(block_sizes=(16,), variants=("baseline",), shapes=("uniform",))
    rows = kernel_sweep.run(**TINY, **options, sweep=dict(tile=(16, 128)))
    flex = next(r for r in rows if r["variant"] == "flex_paged")
    assert flex["note"].startswith("TypeError: convert_logical_block_mask")
    small, big = [r for r in rows if r["variant"] == "triton_paged_config"]
    assert big["note"].startswith("skipped: does not fit this GPU: out of resource: shared")
    assert "time_ms" in small
    assert gpu_check.failures(dict(bench=rows)) == []  # none of these is the kernel failing

    def out_of_memory(*args):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(kernel_inputs, "paged_attention_ref", out_of_memory)
    rows = kernel_sweep.run(**TINY, **options, sweep={})
    ours = [r for r in rows if r["variant"].startswith("triton")]
    assert len(ours) == 5 and {r["note"] for r in ours} == {"RuntimeError: CUDA out of memory"}
    assert len(gpu_check.failures(dict(bench=rows))) == 5  # our kernel unchecked: a failure
    rows = kernel_sweep.run(**TINY, **options, sweep={}, budget_s=1e-9)
    assert {r["note"] for r in rows} == {"skipped: the time budget ran out"}


def test_bench_refuses_without_a_gpu_or_bf16_below_sm80(monkeypatch):
    if DEVICE == "cpu":
        with pytest.raises(SystemExit, match="needs a CUDA GPU"):
            kernel_bench.main(["--out", "unused"])
    else:
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
        with pytest.raises(SystemExit, match="bfloat16 needs compute capability"):
            kernel_bench.main(["--dtype", "bfloat16", "--out", "unused"])
