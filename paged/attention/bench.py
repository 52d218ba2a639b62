"""Benchmark script for the paged-attention kernel (a script, never a timed test).

    python -m paged.attention.bench [--batch 64 --seq-len 4096] [--out figures]

Times, with `triton.testing.do_bench`, decode attention for `batch` sequences of `seq_len`
tokens (32 query / 8 KV heads, head_dim 128, fp16 by default):
  - the Triton kernel through a shuffled block table (block size 16),
  - the same kernel through an identity block table (the contiguous layout),
  - torch.nn.functional.scaled_dot_product_attention on contiguous K/V,
  - a block-size sweep 1...256 of the kernel, shuffled and identity.
Metric: bytes of K and V read / time, in GB/s and % of the device's peak HBM bandwidth. Writes
`kernel_bench_<device>.csv` and `.png` into --out. MEASURED numbers need a CUDA GPU.
"""

from __future__ import annotations

import argparse
import csv
import platform
import re
from pathlib import Path

import torch
import torch.nn.functional as F

from . import backend, paged_attention

# Peak HBM bandwidth in bytes/s from vendor spec pages (DOCS); matched against the device name.
PEAK_BANDWIDTH = {
    "H200": 4.8e12,
    "H100": 3.35e12,
    "A100-SXM4-80GB": 2.039e12,
    "A100 80GB": 1.935e12,
    "A100": 1.555e12,
    "L4": 300e9,
    "T4": 320e9,
}
BLOCK_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def peak_bandwidth(device_name: str) -> float | None:
    """Spec peak bandwidth for a device name, or None when unknown."""
    for key, value in PEAK_BANDWIDTH.items():
        if key in device_name:
            return value
    return None


def kv_bytes(batch: int, seq_len: int, num_kv_heads: int, head_dim: int, dtype) -> int:
    """Bytes of K and V one decode step must read."""
    return (
        2 * batch * seq_len * num_kv_heads * head_dim * torch.tensor([], dtype=dtype).element_size()
    )


def make_inputs(
    batch,
    seq_len,
    block_size,
    num_q_heads,
    num_kv_heads,
    head_dim,
    dtype,
    device,
    layout="shuffled",
    seed=0,
):
    """q, caches, block table and seq_lens; 'identity' lays each sequence out contiguously."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    blocks_per_seq = -(-seq_len // block_size)
    num_blocks = batch * blocks_per_seq
    ids = (
        torch.arange(num_blocks)
        if layout == "identity"
        else torch.randperm(num_blocks, generator=g)
    )
    table = ids.reshape(batch, blocks_per_seq).to(torch.int32)
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k = torch.randn(shape, generator=g).to(dtype)
    v = torch.randn(shape, generator=g).to(dtype)
    q = torch.randn(batch, num_q_heads, head_dim, generator=g).to(dtype)
    seq_lens = torch.full((batch,), seq_len, dtype=torch.int32)
    return [t.to(device) for t in (q, k, v, table, seq_lens)]


def run(
    batch=64,
    seq_len=4096,
    num_q_heads=32,
    num_kv_heads=8,
    head_dim=128,
    dtype=torch.float16,
    block_sizes=BLOCK_SIZES,
    timer=None,
    device=None,
) -> list[dict]:
    """Time every variant; return one row per run (time in ms, GB/s, % of peak)."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if timer is None:
        import triton.testing

        timer = triton.testing.do_bench
    name = torch.cuda.get_device_name() if device == "cuda" else platform.processor() or "cpu"
    peak = peak_bandwidth(name)
    nbytes = kv_bytes(batch, seq_len, num_kv_heads, head_dim, dtype)
    rows = []

    def record(variant, block_size, ms):
        gbps = nbytes / (ms * 1e-3) / 1e9
        rows.append(
            dict(
                device=name,
                variant=variant,
                block_size=block_size,
                batch=batch,
                seq_len=seq_len,
                num_q_heads=num_q_heads,
                num_kv_heads=num_kv_heads,
                head_dim=head_dim,
                dtype=str(dtype).removeprefix("torch."),
                time_ms=round(ms, 5),
                gb_per_s=round(gbps, 1),
                pct_of_peak=round(100 * gbps * 1e9 / peak, 1) if peak else "",
            )
        )

    for block_size in block_sizes:
        for layout in ("shuffled", "identity"):
            q, k, v, table, lens = make_inputs(
                batch,
                seq_len,
                block_size,
                num_q_heads,
                num_kv_heads,
                head_dim,
                dtype,
                device,
                layout,
            )
            ms = timer(
                lambda q=q, k=k, v=v, t=table, n=lens: paged_attention(
                    q, k, v, t, n, check_values=False
                )
            )
            record(f"triton_paged_{layout}", block_size, ms)
            del q, k, v, table, lens
    # SDPA on contiguous (batch, heads, seq_len, head_dim) K/V: the no-paging yardstick.
    g = torch.Generator(device="cpu").manual_seed(0)
    kc = torch.randn(batch, num_kv_heads, seq_len, head_dim, generator=g).to(dtype).to(device)
    vc = torch.randn_like(kc)
    qc = torch.randn(batch, num_q_heads, 1, head_dim, generator=g).to(dtype).to(device)
    ms = timer(lambda: F.scaled_dot_product_attention(qc, kc, vc, enable_gqa=True))
    record("torch_sdpa_contiguous", "", ms)
    return rows


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot(rows: list[dict], path: Path, caption: str) -> None:
    """Block-size sweep (GB/s, shuffled vs identity table) with the SDPA yardstick."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    for variant, style in (("triton_paged_shuffled", "o-"), ("triton_paged_identity", "s--")):
        pts = [(r["block_size"], r["gb_per_s"]) for r in rows if r["variant"] == variant]
        ax.plot(*zip(*pts, strict=True), style, label=variant.replace("_", " "))
    sdpa = [r["gb_per_s"] for r in rows if r["variant"] == "torch_sdpa_contiguous"]
    if sdpa:
        ax.axhline(sdpa[0], color="gray", ls=":", label="torch SDPA, contiguous K/V")
    peak = peak_bandwidth(rows[0]["device"])
    if peak:
        ax.axhline(peak / 1e9, color="black", lw=0.8, label="spec peak bandwidth (DOCS)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (tokens)")
    ax.set_ylabel("K/V bytes read / time (GB/s)")
    ax.set_title("MEASURED: paged decode attention vs block size", fontsize=11)
    ax.legend(fontsize=8, loc="lower right")
    fig.text(0.01, 0.01, caption, fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    ap.add_argument("--out", type=Path, default=Path("figures"))
    args = ap.parse_args(argv)
    if backend() != "cuda":
        raise SystemExit(
            "The benchmark needs a CUDA GPU: the CPU interpreter is thousands of "
            "times slower and its timings mean nothing. Run it on Colab or a GPU box."
        )
    rows = run(args.batch, args.seq_len, dtype=getattr(torch, args.dtype))
    import triton

    device = re.sub(r"[^A-Za-z0-9]+", "_", rows[0]["device"]).strip("_")
    caption = (
        f"{rows[0]['device']}, torch {torch.__version__}, triton {triton.__version__}; "
        f"batch {args.batch} x {args.seq_len} tokens, 32 q / 8 kv heads, d=128, {args.dtype}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out / f"kernel_bench_{device}.csv")
    plot(rows, args.out / f"kernel_bench_{device}.png", caption)
    for r in rows:
        print(
            f"{r['variant']:24s} block {str(r['block_size']):>4s}  {r['time_ms']:8.4f} ms  "
            f"{r['gb_per_s']:8.1f} GB/s  {r['pct_of_peak']}% of peak"
        )


if __name__ == "__main__":
    main()
