"""Benchmark script for the paged-attention kernel (a script, never a timed test).

    python -m paged.attention.bench [--batch 64 --seq-len 4096 --dtype float16] [--out figures]

Times, with `triton.testing.do_bench`, decode attention for `batch` sequences of `seq_len`
tokens (32 query / 8 KV heads, head_dim 128, fp16 by default), all at the same shapes:
  - our kernel through a shuffled block table, block sizes 1...256,
  - the same kernel through an identity table: the difference is the cost of paging alone,
  - FlexAttention's paged path and FlashAttention-2's paged call (see `baselines.py`),
  - SDPA on contiguous K/V with its backend pinned and recorded,
  - a sweep of our launch options (tile, num_warps, num_stages; split or not) at block size 16.
Inputs are generated on the device. Every output is checked against SDPA on the gathered K/V
before it is timed (`max_abs_err`). Metric: bytes of K and V read / time, in GB/s, as % of the
spec peak bandwidth (DOCS, by exact device name) and % of a device-to-device copy measured here
(the realistic ceiling). Writes `kernel_bench_<device>.csv` and `.png` into --out. MEASURED
numbers need a CUDA GPU; on the interpreter `run` only checks the plumbing.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import platform
import re
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from . import backend, paged_attention
from .baselines import (
    FA2_BLOCK_MULTIPLE,
    Baseline,
    Unavailable,
    make_fa2_paged,
    make_flex_paged,
    make_sdpa_contiguous,
)

# Spec peak memory bandwidth, bytes/s (DOCS: vendor data sheets), matched as whole words against
# torch.cuda.get_device_name(); the first match wins, so specific names come first.
PEAK_BANDWIDTH = (
    (r"GH200", 4.0e12), (r"H200", 4.8e12), (r"H100 PCIe", 2.0e12), (r"H100 NVL", 3.9e12),
    (r"H100( 80GB HBM3| SXM)", 3.35e12), (r"A100-SXM4-80GB", 2.039e12),
    (r"A100 80GB PCIe", 1.935e12), (r"A100-(SXM4|PCIE)-40GB", 1.555e12), (r"L40S?", 864e9),
    (r"L4", 300e9), (r"A10G?", 600e9), (r"T4", 320e9), (r"V100", 900e9),
    (r"RTX 4090", 1008e9), (r"RTX 3090", 936e9), (r"RTX A6000", 768e9), (r"B200", 8.0e12),
)  # fmt: skip
BLOCK_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
FLEX_BLOCK_SIZES = (16, 128)  # each is a fresh torch.compile; 128 is FlexAttention's default
SWEEP = dict(tile=(16, 32, 64, 128), num_warps=(2, 4, 8), num_stages=(2, 3, 4, 5))


def peak_bandwidth(device_name: str) -> float | None:
    """Spec peak bandwidth for an exact device name, or None when unknown."""
    for pattern, value in PEAK_BANDWIDTH:
        if re.search(rf"\b{pattern}\b", device_name):
            return value
    return None


def kv_bytes(batch: int, seq_len: int, num_kv_heads: int, head_dim: int, dtype) -> int:
    """Bytes of K and V one decode step must read."""
    itemsize = torch.empty(0, dtype=dtype).element_size()
    return 2 * batch * seq_len * num_kv_heads * head_dim * itemsize


def copy_bandwidth(device, timer, nbytes: int = 1 << 30) -> float:
    """Bytes/s of a device-to-device copy (read + write), the realistic ceiling."""
    src = torch.empty(nbytes // 2, dtype=torch.float16, device=device)
    dst = torch.empty_like(src)
    ms = timer(lambda: dst.copy_(src))
    return 2 * nbytes / (ms * 1e-3)


def make_inputs(
    batch, seq_len, block_size, num_q_heads, num_kv_heads, head_dim, dtype, device,
    layout="shuffled", seed=0,
):  # fmt: skip
    """q, caches, block table, seq_lens made on `device`; 'identity' keeps blocks in order."""
    g = torch.Generator(device=device).manual_seed(seed)
    blocks_per_seq = -(-seq_len // block_size)
    num_blocks = batch * blocks_per_seq
    if layout == "identity":
        ids = torch.arange(num_blocks, device=device)
    else:
        ids = torch.randperm(num_blocks, generator=g, device=device)
    table = ids.reshape(batch, blocks_per_seq).to(torch.int32)
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k = torch.randn(shape, generator=g, device=device, dtype=dtype)
    v = torch.randn(shape, generator=g, device=device, dtype=dtype)
    q = torch.randn(batch, num_q_heads, head_dim, generator=g, device=device, dtype=dtype)
    seq_lens = torch.full((batch,), seq_len, dtype=torch.int32, device=device)
    return q, k, v, table, seq_lens


def contiguous_kv(cache, table, seq_len):
    """Gathered (num_seqs, num_kv_heads, seq_len, head_dim) K or V: what SDPA reads."""
    return cache[table.long()].flatten(1, 2)[:, :seq_len].transpose(1, 2).contiguous()


def run(
    batch=64, seq_len=4096, num_q_heads=32, num_kv_heads=8, head_dim=128, dtype=torch.float16,
    block_sizes=BLOCK_SIZES, timer=None, device=None, flex_block_sizes=FLEX_BLOCK_SIZES,
    sweep=None, budget_s: float | None = None, compile_flex: bool | None = None,
) -> list[dict]:  # fmt: skip
    """Time every variant; return one row per variant (time in ms, GB/s, % of peak and copy).

    Order: our kernel at every block size (16, the paper's default, first), then the baselines,
    then the launch-option sweep; once `budget_s` is spent the rest is recorded as skipped.
    """
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = device.type == "cuda"
    if on_gpu and dtype == torch.bfloat16 and torch.cuda.get_device_capability(device) < (8, 0):
        raise ValueError("bfloat16 needs compute capability >= 8.0: use --dtype float16 here")
    if timer is None:
        import triton.testing

        timer = triton.testing.do_bench
    sweep = (SWEEP if on_gpu else {}) if sweep is None else sweep
    deadline = time.monotonic() + budget_s if budget_s else float("inf")
    name = torch.cuda.get_device_name(device) if on_gpu else platform.processor() or "cpu"
    label = f"MEASURED on {name}" if on_gpu else "not a measurement (CPU interpreter)"
    peak = peak_bandwidth(name)
    copy_bw = copy_bandwidth(device, timer, 1 << 30 if on_gpu else 1 << 20)
    nbytes = kv_bytes(batch, seq_len, num_kv_heads, head_dim, dtype)
    common = dict(label=label, device=name, batch=batch, seq_len=seq_len, num_q_heads=num_q_heads,
                  num_kv_heads=num_kv_heads, head_dim=head_dim,
                  dtype=str(dtype).removeprefix("torch."))  # fmt: skip
    rows = []

    def record(variant, block_size, made, expected, **launch):
        """Check `made` against `expected`, time it, add a row (or why it did not run)."""
        row = dict(variant=variant, block_size=block_size, **common, **launch)
        fn, note, context = made, "", contextlib.nullcontext
        if isinstance(made, Baseline):
            fn, note, context = made.fn, made.note, made.context
        try:
            if isinstance(made, Unavailable):
                raise made
            if time.monotonic() > deadline:
                raise Unavailable("skipped: the time budget ran out")
            with context():
                err = (fn().float() - expected.float()).abs().max().item()
                ms = timer(fn)
        except Exception as exc:  # a baseline that cannot run is a result, not a crash
            rows.append(row | dict(note=f"{type(exc).__name__}: {exc}"[:300]))
            return
        gbps = nbytes / (ms * 1e-3) / 1e9
        rows.append(row | dict(
            time_ms=round(ms, 5), gb_per_s=round(gbps, 1),
            pct_of_peak=round(100 * gbps * 1e9 / peak, 1) if peak else "",
            pct_of_copy=round(100 * gbps * 1e9 / copy_bw, 1), max_abs_err=f"{err:.1e}", note=note,
        ))  # fmt: skip

    def inputs(block_size, layout):
        q, k, v, table, lens = make_inputs(
            batch, seq_len, block_size, num_q_heads, num_kv_heads, head_dim, dtype, device, layout
        )
        kc, vc = contiguous_kv(k, table, seq_len), contiguous_kv(v, table, seq_len)
        expected = F.scaled_dot_product_attention(q[:, :, None], kc, vc, enable_gqa=True)[:, :, 0]

        def ours(**opts):
            return lambda: paged_attention(q, k, v, table, lens, check_values=False, **opts)

        return (q, k, v, table, lens), (kc, vc), expected, ours

    headline_first = sorted(block_sizes, key=lambda b: b != 16)
    for block_size in headline_first:  # our kernel over every block size before anything else
        for layout in ("shuffled", "identity"):
            _, _, expected, ours = inputs(block_size, layout)
            record(f"triton_paged_{layout}", block_size, ours(), expected)
    for block_size in headline_first:
        flex = block_size in flex_block_sizes
        fa2 = block_size % FA2_BLOCK_MULTIPLE == 0
        if not (flex or fa2 or block_size == 16):
            continue
        case, (kc, vc), expected, ours = inputs(block_size, "shuffled")
        if block_size == 16:
            made = _try(make_sdpa_contiguous, case[0], kc, vc)
            record("torch_sdpa_contiguous", "", made, expected)
            for split in (False, True):
                record("triton_paged_split", 16, ours(split=split), expected, split=split)
        if flex:
            made = _try(make_flex_paged, *case, compile_=compile_flex)
            record("flex_paged", block_size, made, expected)
        if fa2:
            made = _try(make_fa2_paged, *case, max_seq_len=seq_len)
            record("fa2_paged_varlen", block_size, made, expected)
        del case, kc, vc, expected
    if sweep:
        case, _, expected, ours = inputs(16, "shuffled")
        for opts in sweep_configs(sweep):
            record("triton_paged_config", 16, ours(**opts), expected, **opts)
    return rows


def _try(make, *args, **kwargs):
    """A Baseline, or the Unavailable exception that says why not."""
    try:
        return make(*args, **kwargs)
    except Unavailable as exc:
        return exc


def sweep_configs(sweep: dict) -> list[dict]:
    """Every combination of the swept launch options."""
    combos = [{}]
    for key, values in sweep.items():
        combos = [c | {key: value} for c in combos for value in values]
    return [c for c in combos if c]


def write_csv(rows: list[dict], path: Path) -> None:
    """All rows, with the union of their columns (a skipped variant has no time)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def plot(rows: list[dict], path: Path, caption: str) -> None:
    """Block-size sweep (GB/s) with the baselines and the two ceilings; the launch sweep beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in rows if r.get("gb_per_s") not in (None, "")]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=120, width_ratios=(3, 2))
    for variant, style in (("triton_paged_shuffled", "o-"), ("triton_paged_identity", "s--"),
                           ("flex_paged", "D"), ("fa2_paged_varlen", "*")):  # fmt: skip
        pts = sorted((r["block_size"], r["gb_per_s"]) for r in timed if r["variant"] == variant)
        if pts:
            ax.plot(*zip(*pts, strict=True), style, label=variant.replace("_", " "))
    for r in timed:
        if r["variant"] == "torch_sdpa_contiguous":
            ax.axhline(r["gb_per_s"], color="gray", ls=":", label="SDPA (flash), contiguous K/V")
    peak = peak_bandwidth(rows[0]["device"])
    if peak:
        ax.axhline(peak / 1e9, color="black", lw=0.8, label="spec peak bandwidth (DOCS)")
    copies = [r for r in rows if r["variant"] == "triton_paged_shuffled" and r.get("pct_of_copy")]
    if copies:
        r = copies[0]
        copy_gbps = r["gb_per_s"] * 100 / r["pct_of_copy"]
        ax.axhline(copy_gbps, color="black", ls="--", lw=0.8, label="device copy (MEASURED)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (tokens)")
    ax.set_ylabel("K/V bytes read / time (GB/s)")
    ax.set_title(f"{rows[0]['label']}: paged decode attention", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    configs = sorted((r["gb_per_s"], _config_name(r)) for r in timed if "config" in r["variant"])
    if configs:
        ax2.barh([n for _, n in configs], [g for g, _ in configs], color="#0072B2")
        ax2.tick_params(axis="y", labelsize=5)
    ax2.set_xlabel("GB/s at block size 16")
    ax2.set_title("launch options (tile / warps / stages)", fontsize=10)
    fig.text(0.01, 0.01, caption, fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def _config_name(row: dict) -> str:
    return f"t{row.get('tile', '-')} w{row.get('num_warps', '-')} s{row.get('num_stages', '-')}"


def caption_for(rows: list[dict], dtype: str) -> str:
    """Device, versions and shape: what a MEASURED figure must name."""
    import triton

    r = rows[0]
    return (
        f"{r['label']}; torch {torch.__version__}, triton {triton.__version__}; batch "
        f"{r['batch']} x {r['seq_len']} tokens, {r['num_q_heads']} q / {r['num_kv_heads']} kv "
        f"heads, d={r['head_dim']}, {dtype}"
    )


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    ap.add_argument("--budget-s", type=float, default=None, help="stop timing after this long")
    ap.add_argument("--no-sweep", action="store_true", help="skip the launch-option sweep")
    ap.add_argument("--out", type=Path, default=Path("figures"))
    args = ap.parse_args(argv)
    if backend() != "cuda":
        raise SystemExit(
            "The benchmark needs a CUDA GPU: the CPU interpreter is thousands of "
            "times slower and its timings mean nothing. Run it on Colab or a GPU box."
        )
    if args.dtype == "bfloat16" and torch.cuda.get_device_capability() < (8, 0):
        raise SystemExit("bfloat16 needs compute capability >= 8.0: use --dtype float16 here")
    rows = run(
        args.batch, args.seq_len, dtype=getattr(torch, args.dtype),
        sweep={} if args.no_sweep else None, budget_s=args.budget_s,
    )  # fmt: skip
    device = re.sub(r"[^A-Za-z0-9]+", "_", rows[0]["device"]).strip("_")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out / f"kernel_bench_{device}.csv")
    plot(rows, args.out / f"kernel_bench_{device}.png", caption_for(rows, args.dtype))
    for r in rows:
        result = (
            f"{r['time_ms']:8.4f} ms {r['gb_per_s']:8.1f} GB/s {r['pct_of_peak']}% of peak, "
            f"{r['pct_of_copy']}% of copy"
            if "time_ms" in r
            else r["note"]
        )
        print(f"{r['variant']:22s} block {str(r['block_size']):>4s}  {result}")
    return rows


if __name__ == "__main__":
    main()
