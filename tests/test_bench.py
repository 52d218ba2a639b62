"""The benchmark's arithmetic and plumbing, with a fake timer (real timings need a GPU).

On a CUDA machine the same plumbing runs there (FlexAttention compiled, the pinned SDPA and
FlashAttention-2 baselines available); here FlexAttention's paged path runs eagerly on the CPU,
which still checks that it computes the same attention as our reference.
"""

import csv

import pytest
import torch

from paged.attention import backend, bench, paged_attention_ref
from paged.attention.baselines import Unavailable, make_fa2_paged, make_flex_paged

DEVICE = "cuda" if backend() == "cuda" else "cpu"


def test_kv_bytes_and_peak_lookup_by_exact_name():
    assert bench.kv_bytes(64, 4096, 8, 128, torch.float16) == 2 * 64 * 4096 * 8 * 128 * 2
    assert bench.peak_bandwidth("NVIDIA H200") == 4.8e12
    assert bench.peak_bandwidth("NVIDIA H100 80GB HBM3") == 3.35e12  # SXM
    assert bench.peak_bandwidth("NVIDIA H100 PCIe") == 2.0e12
    assert bench.peak_bandwidth("NVIDIA L40S") == 864e9  # not the L4's 300 GB/s
    assert bench.peak_bandwidth("NVIDIA L4") == 300e9
    assert bench.peak_bandwidth("NVIDIA A100-SXM4-80GB") == 2.039e12
    assert bench.peak_bandwidth("NVIDIA A10G") == 600e9
    assert bench.peak_bandwidth("Tesla T4") == 320e9
    assert bench.peak_bandwidth("some new chip") is None


def test_identity_layout_is_contiguous_and_shuffled_is_not():
    *_, ident, _ = bench.make_inputs(2, 10, 4, 2, 1, 16, torch.float32, DEVICE, layout="identity")
    *_, shuf, lens = bench.make_inputs(2, 10, 4, 2, 1, 16, torch.float32, DEVICE)
    assert ident.device.type == shuf.device.type == DEVICE  # made on the device, not copied
    assert ident.flatten().tolist() == list(range(6))
    assert sorted(shuf.flatten().tolist()) == list(range(6))
    assert shuf.flatten().tolist() != list(range(6)) and lens.tolist() == [10, 10]


def test_flex_attention_paged_path_equals_the_reference():
    case = bench.make_inputs(3, 37, 16, 4, 2, 32, torch.float32, DEVICE)
    made = make_flex_paged(*case, compile_=False)  # eager: checks the page-table mapping
    torch.testing.assert_close(made.fn(), paged_attention_ref(*case), atol=1e-4, rtol=1e-4)
    with pytest.raises(Unavailable):  # block size 16 (or no GPU, or no such call in this torch)
        make_fa2_paged(*case, max_seq_len=37)


def test_run_writes_rows_csv_and_png(tmp_path):
    calls = []

    def fake_timer(fn):
        calls.append(fn())  # runs each variant once (the kernel under the interpreter)
        return 2.0  # ms

    rows = bench.run(
        batch=2,
        seq_len=20,
        num_q_heads=4,
        num_kv_heads=2,
        head_dim=32,
        block_sizes=(1, 16),
        timer=fake_timer,
        device=DEVICE,
        sweep=dict(tile=(16,), num_warps=(2, 4)),
        compile_flex=False,
    )
    variants = [(r["variant"], r["block_size"]) for r in rows]
    assert variants == [
        ("triton_paged_shuffled", 16),
        ("triton_paged_identity", 16),
        ("triton_paged_shuffled", 1),
        ("triton_paged_identity", 1),
        ("torch_sdpa_contiguous", ""),
        ("triton_paged_split", 16),
        ("triton_paged_split", 16),
        ("flex_paged", 16),
        ("triton_paged_config", 16),
        ("triton_paged_config", 16),
    ]
    expected_gbps = round(bench.kv_bytes(2, 20, 2, 32, torch.float16) / 2e-3 / 1e9, 1)
    timed = [r for r in rows if "time_ms" in r]
    assert all(r["gb_per_s"] == expected_gbps and float(r["max_abs_err"]) < 5e-3 for r in timed)
    if DEVICE == "cpu":  # the pinned flash backend needs a GPU: a reason instead of a time
        sdpa = rows[4]
        assert "time_ms" not in sdpa and "needs a CUDA GPU" in sdpa["note"]
        assert all(r["label"].startswith("not a measurement") for r in rows)
    assert calls[1].shape == (2, 4, 32)
    bench.write_csv(rows, tmp_path / "b.csv")
    bench.plot(rows, tmp_path / "b.png", "test caption")
    assert len(list(csv.DictReader(open(tmp_path / "b.csv")))) == len(rows)
    assert (tmp_path / "b.png").stat().st_size > 10_000


def test_bench_refuses_without_a_gpu_or_bf16_below_sm80(monkeypatch):
    if DEVICE == "cpu":
        with pytest.raises(SystemExit, match="needs a CUDA GPU"):
            bench.main(["--out", "unused"])
    else:
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
        with pytest.raises(SystemExit, match="bfloat16 needs compute capability"):
            bench.main(["--dtype", "bfloat16", "--out", "unused"])
