"""The kernel benchmark's sweep: every row it times, most important first, each checked first.

`run` times decode attention with `triton.testing.do_bench`, in this order, so that a run cut
short by its budget still answers the main questions:
  1. our kernel through a shuffled block table at block size 16, and through an identity table
     (the difference is the cost of paging alone),
  2. every kernel variant (`launch.VARIANTS`) on the three shapes of `kernel_inputs.SHAPES`,
  3. FlexAttention's paged path, SDPA on contiguous K/V (backend pinned), our split path,
  4. our kernel at the other block sizes, FlashAttention-2's paged call,
  5. a sweep of launch options (tile, num_warps, num_stages) for this GPU's path.
Each output is checked against the reference before it is timed (`kernel_inputs.make_case`).
Metric: K and V bytes read / time, GB/s, as % of the spec peak (DOCS) and of a device copy
measured here (`bandwidth.py`), and per variant as speed-up over the baseline and FlexAttention
(`bench_report.py`). A row that cannot run (a baseline missing here, a config too large for this
GPU, the budget spent) records why. The command line is `kernel_bench.py`.
"""

from __future__ import annotations

import contextlib
import platform
import time

import torch

from ..attention import paged_attention
from ..attention.launch import VARIANTS
from ..paging import BLOCK_SIZES
from .bandwidth import copy_bandwidth, peak_bandwidth
from .baselines import (
    FA2_BLOCK_MULTIPLE,
    Baseline,
    make_fa2_paged,
    make_flex_paged,
    make_sdpa_gathered,
)
from .bench_report import add_ratios
from .kernel_inputs import SHAPES, TOLERANCE, make_case, shape_dims

FLEX_BLOCK_SIZES = (16, 128)  # each is a fresh torch.compile; 128 is FlexAttention's default
FLEX_COMPILE_S = 90  # a FlexAttention torch.compile can take this long: not started with less left
SWEEP = dict(tile=(16, 32, 64, 128), num_warps=(2, 4, 8), num_stages=(2, 3, 4, 5))
CUDA_CORE_SWEEP = dict(tile=(4, 8, 16), num_warps=(2, 4, 8), num_stages=(1, 2, 3))


class Skipped(Exception):
    """A row not run on purpose (budget, device limits); not a failure."""


def default_sweep(capability) -> dict:
    """The launch options to sweep on a GPU of this capability (its kernel path's options)."""
    return SWEEP if capability >= (8, 0) else CUDA_CORE_SWEEP


def sweep_configs(sweep: dict) -> list[dict]:
    """Every combination of the swept launch options."""
    combos = [{}]
    for key, values in sweep.items():
        combos = [c | {key: value} for c in combos for value in values]
    return [c for c in combos if c]


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


__all__ = ["CUDA_CORE_SWEEP", "SWEEP", "Skipped", "default_sweep", "run", "sweep_configs"]
