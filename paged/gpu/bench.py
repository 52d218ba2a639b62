"""Benchmark script for the paged-attention kernel (a script, never a timed test).

    python -m paged.gpu.bench [--batch 64 --seq-len 4096 --dtype float16] [--out figures]
                                    [--budget-s 240] [--jsonl rows.jsonl] [--dry-run]

Times, with `triton.testing.do_bench`, decode attention for `batch` sequences of `seq_len`
tokens (32 query / 8 KV heads, head_dim 128, fp16 by default), most important first, so that a
run cut short by `--budget-s` still answers the main questions:
  - our kernel through a shuffled block table at block size 16, and through an identity table
    (the difference is the cost of paging alone),
  - every kernel variant (`launch.VARIANTS`) on three shapes: `uniform` (batch x seq_len),
    `few_long` (batch / 16 sequences, 4 x longer) and `mixed` (seeded lengths 1...seq_len),
  - FlexAttention's paged path, SDPA on contiguous K/V (backend pinned), our split path,
  - our kernel at the other block sizes, FlashAttention-2's paged call,
  - a sweep of launch options (tile, num_warps, num_stages) for this GPU's path.
Each output is checked before it is timed against `paged_attention_ref` on a few sequences
(first, middle, last, shortest, longest: cheap on any GPU). Metric: K and V bytes read / time,
GB/s, as % of the spec peak (DOCS) and of a device copy measured here (`bandwidth.py`), and per
variant as speed-up over the baseline and FlexAttention (`bench_report.py`). A row that cannot
run (a baseline missing here, a config too large for this GPU, the budget spent) records why.
Writes `kernel_bench_<device>.csv` and `.png` into --out, and with --jsonl one JSON line per row
as soon as it is measured. MEASURED numbers need a CUDA GPU; `--dry-run` runs every step on
tiny shapes under the CPU interpreter (plumbing only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import time
from pathlib import Path

import torch

from ..attention import backend, paged_attention, paged_attention_ref
from ..attention.launch import VARIANTS
from ..paging import BLOCK_SIZES
from .bandwidth import PEAK_BANDWIDTH, copy_bandwidth, kv_bytes, peak_bandwidth
from .baselines import (
    FA2_BLOCK_MULTIPLE,
    Baseline,
    make_fa2_paged,
    make_flex_paged,
    make_sdpa_gathered,
)
from .bench_report import (
    add_ratios,
    caption_for,
    device_slug,
    plot,
    row_lines,
    summary_lines,
    write_csv,
)

# The yardsticks live in bandwidth.py; the notebooks import them from here.
__all__ = [
    "PEAK_BANDWIDTH",
    "copy_bandwidth",
    "kv_bytes",
    "peak_bandwidth",
    "make_inputs",
    "make_case",
    "run",
    "sweep_configs",
    "write_csv",
    "plot",
    "main",
]
FLEX_BLOCK_SIZES = (16, 128)  # each is a fresh torch.compile; 128 is FlexAttention's default
FLEX_COMPILE_S = 90  # a FlexAttention torch.compile can take this long: not started with less left
SWEEP = dict(tile=(16, 32, 64, 128), num_warps=(2, 4, 8), num_stages=(2, 3, 4, 5))
CUDA_CORE_SWEEP = dict(tile=(4, 8, 16), num_warps=(2, 4, 8), num_stages=(1, 2, 3))
SHAPES = ("uniform", "few_long", "mixed")
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}
DEFAULT_BUDGET_S = 240


class Skipped(Exception):
    """A row not run on purpose (budget, device limits); not a failure."""


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


def shape_dims(shape: str, batch: int, seq_len: int) -> tuple[int, int]:
    """(sequences, longest length) of a named benchmark shape."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    return (max(1, batch // 16), 4 * seq_len) if shape == "few_long" else (batch, seq_len)


def make_case(shape, batch, seq_len, block_size, heads, dtype, device, layout="shuffled"):
    """(inputs, K/V bytes read, a checker of outputs) for one shape and block size."""
    num_seqs, longest = shape_dims(shape, batch, seq_len)
    q, k, v, table, lens = make_inputs(num_seqs, longest, block_size, *heads, dtype, device, layout)
    if shape == "mixed":  # unequal lengths: what work balancing is for
        g = torch.Generator().manual_seed(1)
        lens = torch.randint(1, longest + 1, (num_seqs,), generator=g, dtype=torch.int32).to(device)
    nbytes = kv_bytes(1, int(lens.sum()), heads[1], heads[2], dtype)
    order = lens.argsort().tolist()  # the shortest and longest, and three in between
    idx = torch.tensor(sorted({0, num_seqs // 2, num_seqs - 1, order[0], order[-1]}), device=device)

    def check(out: torch.Tensor) -> float:
        """Largest |out - reference| over the picked sequences (fp32 reference, a few MB)."""
        want = paged_attention_ref(q[idx], k, v, table[idx], lens[idx])
        return (out[idx].float() - want.float()).abs().max().item()

    return (q, k, v, table, lens), nbytes, check


def default_sweep(capability) -> dict:
    """The launch options to sweep on a GPU of this capability (its kernel path's options)."""
    return SWEEP if capability >= (8, 0) else CUDA_CORE_SWEEP


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
    flex_block_sizes=FLEX_BLOCK_SIZES,
    sweep=None,
    budget_s: float | None = None,
    compile_flex: bool | None = None,
    variants=tuple(VARIANTS),
    shapes=SHAPES,
    on_row=None,
) -> list[dict]:
    """Time every variant; return one row per variant (time in ms, GB/s, % of peak and copy).

    Order: see the module docstring. Once `budget_s` is spent the rest is recorded as skipped;
    `on_row(row)` sees each row as soon as it is measured.
    """
    from triton.runtime.errors import OutOfResources

    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = device.type == "cuda"
    capability = torch.cuda.get_device_capability(device) if on_gpu else None
    if on_gpu and dtype == torch.bfloat16 and capability < (8, 0):
        raise ValueError("bfloat16 needs compute capability >= 8.0: use --dtype float16 here")
    if timer is None:
        import triton.testing

        timer = triton.testing.do_bench
    sweep = (default_sweep(capability) if on_gpu else {}) if sweep is None else sweep
    deadline = time.monotonic() + budget_s if budget_s else float("inf")
    name = torch.cuda.get_device_name(device) if on_gpu else platform.processor() or "cpu"
    label = f"MEASURED on {name}" if on_gpu else "not a measurement (CPU interpreter)"
    peak = peak_bandwidth(name)
    copy_bw = copy_bandwidth(device, timer, 1 << 30 if on_gpu else 1 << 20)
    heads = (num_q_heads, num_kv_heads, head_dim)
    common = dict(
        label=label,
        device=name,
        num_q_heads=num_q_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        dtype=str(dtype).removeprefix("torch."),
    )
    rows = []

    def record(variant, block_size, made, case, shape="uniform", **launch):
        """Check `made` on `case`, time it, add a row (or the reason it did not run)."""
        num_seqs, longest = shape_dims(shape, batch, seq_len)
        _, nbytes, check = case
        row = dict(
            variant=variant,
            shape=shape,
            block_size=block_size,
            batch=num_seqs,
            seq_len=longest,
            kv_bytes=nbytes,
            **common,
            **launch,
        )
        try:  # everything that can fail on some GPU or torch happens in here
            if time.monotonic() > deadline:
                raise Skipped("skipped: the time budget ran out")
            made = made() if callable(made) else made
            fn, note, context = made, "", contextlib.nullcontext
            if isinstance(made, Baseline):
                fn, note, context = made.fn, made.note, made.context
            with context():
                err = check(fn())
                ms = timer(fn)
        except OutOfResources as exc:  # a config larger than this GPU: filtered, not failed
            row["note"] = f"skipped: does not fit this GPU: {exc}"[:300]
        except Exception as exc:  # a baseline that cannot run is a result, not a crash
            row["note"] = str(exc) if isinstance(exc, Skipped) else f"{type(exc).__name__}: {exc}"
            row["note"] = row["note"][:300]
        else:
            gbps = nbytes / (ms * 1e-3) / 1e9
            row |= dict(
                time_ms=round(ms, 5),
                gb_per_s=round(gbps, 1),
                pct_of_peak=round(100 * gbps * 1e9 / peak, 1) if peak else "",
                pct_of_copy=round(100 * gbps * 1e9 / copy_bw, 1),
                max_abs_err=f"{err:.1e}",
                within_tolerance=err <= TOLERANCE[dtype],
                note=note,
            )
        rows.append(row)
        if on_row:
            on_row(row)

    def cases(shape, block_size, layout="shuffled"):
        return make_case(shape, batch, seq_len, block_size, heads, dtype, device, layout)

    def ours(case, **opts):
        return lambda: lambda: paged_attention(*case[0], check_values=False, **opts)

    def flex(case, block_size):
        if compile_flex is not False and on_gpu and deadline - time.monotonic() < FLEX_COMPILE_S:
            raise Skipped(f"skipped: a FlexAttention compile needs ~{FLEX_COMPILE_S} s")
        return make_flex_paged(*case[0], compile_=compile_flex)

    first, rest = [b for b in block_sizes if b == 16], [b for b in block_sizes if b != 16]
    for block_size in first:  # 1. the headline: block size 16, paged and contiguous table
        for layout in ("shuffled", "identity"):
            case = cases("uniform", block_size, layout)
            record(f"triton_paged_{layout}", block_size, ours(case), case)
    for shape in shapes:  # 2. the variants, side by side on the same inputs
        case = cases(shape, 16)
        for name in variants:
            record("triton_variant", 16, ours(case, variant=name), case, shape, kernel=name)
        if shape == "uniform" and 16 in flex_block_sizes:  # 3. the yardsticks
            record("flex_paged", 16, lambda case=case: flex(case, 16), case)
        del case
    if 16 in block_sizes:
        case = cases("uniform", 16)
        q, k, v, table, _ = case[0]
        sdpa = lambda: make_sdpa_gathered(q, k, v, table, seq_len)  # noqa: E731
        record("torch_sdpa_contiguous", "", sdpa, case)
        for split in (False, True):
            record("triton_paged_split", 16, ours(case, split=split), case, split=split)
        del case, q, k, v, table
    for block_size in rest:  # 4. the other block sizes, then the baselines that need them
        for layout in ("shuffled", "identity"):
            case = cases("uniform", block_size, layout)
            record(f"triton_paged_{layout}", block_size, ours(case), case)
    for block_size in rest:
        case = cases("uniform", block_size)
        if block_size in flex_block_sizes:
            record("flex_paged", block_size, lambda case=case, b=block_size: flex(case, b), case)
        if block_size % FA2_BLOCK_MULTIPLE == 0:
            fa2 = lambda case=case: make_fa2_paged(*case[0], max_seq_len=seq_len)  # noqa: E731
            record("fa2_paged_varlen", block_size, fa2, case)
        del case
    if sweep:  # 5. launch options for this GPU's path
        case = cases("uniform", 16)
        for opts in sweep_configs(sweep):
            record("triton_paged_config", 16, ours(case, **opts), case, **opts)
    return add_ratios(rows)


def sweep_configs(sweep: dict) -> list[dict]:
    """Every combination of the swept launch options."""
    combos = [{}]
    for key, values in sweep.items():
        combos = [c | {key: value} for c in combos for value in values]
    return [c for c in combos if c]


def _wall_timer(fn) -> float:
    """One call's wall time in ms: the dry run's stand-in for do_bench (not a measurement)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    ap.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S, help="0: no limit")
    ap.add_argument("--no-sweep", action="store_true", help="skip the launch-option sweep")
    ap.add_argument("--out", type=Path, default=None, help="CSV and PNG here (default figures)")
    ap.add_argument("--jsonl", type=Path, default=None, help="append each row here as measured")
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU interpreter")
    args = ap.parse_args(argv)
    if not args.dry_run and backend() != "cuda":
        raise SystemExit(
            "The benchmark needs a CUDA GPU: the CPU interpreter is thousands of "
            "times slower and its timings mean nothing. Run it on Colab or a GPU box."
        )
    on_gpu = not args.dry_run
    if args.dtype == "bfloat16" and on_gpu and torch.cuda.get_device_capability() < (8, 0):
        raise SystemExit("bfloat16 needs compute capability >= 8.0: use --dtype float16 here")
    jsonl = open(args.jsonl, "a") if args.jsonl else None  # noqa: SIM115 (closed below)

    def on_row(row):
        if jsonl:
            jsonl.write(json.dumps(row, default=str) + "\n")
            jsonl.flush()  # on disk now: a run killed later keeps every row measured so far

    sweep = {} if args.no_sweep else None if on_gpu else dict(tile=(16,), num_warps=(2,))
    options = dict(
        dtype=getattr(torch, args.dtype),
        budget_s=args.budget_s,
        on_row=on_row,
        sweep=sweep,
        batch=args.batch,
        seq_len=args.seq_len,
    )
    if args.dry_run:  # every step, tiny: proves the plumbing on the interpreter
        options |= dict(
            batch=2,
            seq_len=24,
            num_q_heads=4,
            num_kv_heads=2,
            head_dim=16,
            block_sizes=(16, 1),
            flex_block_sizes=(16,),
            timer=_wall_timer,
            device="cpu",
            compile_flex=False,
            dtype=torch.float16,
        )
    try:
        rows = run(**options)
    finally:
        if jsonl:
            jsonl.close()
    out = args.out or (None if args.jsonl else Path("figures"))
    if out:
        device = device_slug(rows[0]["device"])
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / f"kernel_bench_{device}.csv")
        plot(rows, out / f"kernel_bench_{device}.png", caption_for(rows, args.dtype))
    print("\n".join(row_lines(rows) + summary_lines(rows)))
    return rows


if __name__ == "__main__":
    main()
