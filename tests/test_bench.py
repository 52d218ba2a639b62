"""The benchmark's arithmetic and plumbing, with a fake timer (real timings need a GPU)."""

import csv

import torch

from paged.attention import bench


def test_kv_bytes_and_peak_lookup():
    assert bench.kv_bytes(64, 4096, 8, 128, torch.float16) == 2 * 64 * 4096 * 8 * 128 * 2
    assert bench.peak_bandwidth("NVIDIA H200") == 4.8e12
    assert bench.peak_bandwidth("NVIDIA H100 80GB HBM3") == 3.35e12
    assert bench.peak_bandwidth("Tesla T4") == 320e9
    assert bench.peak_bandwidth("some new chip") is None


def test_identity_layout_is_contiguous_and_shuffled_is_not():
    *_, ident, _ = bench.make_inputs(2, 10, 4, 2, 1, 16, torch.float32, "cpu", layout="identity")
    *_, shuf, _ = bench.make_inputs(2, 10, 4, 2, 1, 16, torch.float32, "cpu")
    assert ident.flatten().tolist() == list(range(6))
    assert sorted(shuf.flatten().tolist()) == list(range(6)) and shuf.flatten().tolist() != list(
        range(6)
    )


def test_run_writes_rows_csv_and_png(tmp_path):
    calls = []

    def fake_timer(fn):
        calls.append(fn())  # runs the kernel once under the interpreter
        return 2.0  # ms

    rows = bench.run(
        batch=2,
        seq_len=20,
        num_q_heads=4,
        num_kv_heads=2,
        head_dim=32,
        block_sizes=(1, 16),
        timer=fake_timer,
        device="cpu",
    )
    assert [r["variant"] for r in rows] == [
        "triton_paged_shuffled",
        "triton_paged_identity",
    ] * 2 + ["torch_sdpa_contiguous"]
    expected_gbps = bench.kv_bytes(2, 20, 2, 32, torch.float16) / 2e-3 / 1e9
    assert all(abs(r["gb_per_s"] - round(expected_gbps, 1)) < 1e-9 for r in rows)
    assert calls[0].shape == (2, 4, 32)
    bench.write_csv(rows, tmp_path / "b.csv")
    bench.plot(rows, tmp_path / "b.png", "test caption")
    assert len(list(csv.DictReader(open(tmp_path / "b.csv")))) == 5
    assert (tmp_path / "b.png").stat().st_size > 10_000
