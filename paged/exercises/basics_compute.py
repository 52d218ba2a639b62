"""The on-ramp's two computing puzzles (chapter 6), as `KernelSpec`s: a row softmax and tl.dot.

Exported by `basics.py` (its docstring says how they are checked). The softmax's cases hold rows
in the hundreds and beyond 1000 (past float64's exp range, so only the max subtraction keeps
them finite), rows that are all negative, non-integer values and BLOCK_N far above N; the dot's
hold integer (and quarter) data a float32 sum gets exactly, with sums past float16's 2048.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..text import msg
from .engine.core import checker
from .engine.guard import forbidden
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import NAN, SENTINEL, Watch, device, grid_mask, same
from .engine.triton_checks import cell_namer as _cell
from .engine.verdicts import UNMASKED_LOAD
from .slips.kernels_onramp import DOT, ROW_SOFTMAX

__all__: list[str] = []  # exported by basics.py


# ---- 4 · tl.constexpr tiles, masked lanes and a reduction: row softmax -------------------------
POISON = 3.0e4  # after every row of x: a load that reaches it wins the max
NEGATIVE = msg("in row 0, whose values are all negative", "값이 모두 음수인 0행")


def _softmax_case(params, seed):
    M, N, block, scale = params
    sx = N + 3
    x = torch.randn(M, N, generator=torch.Generator().manual_seed(seed)) * scale
    x[0] = -x[0].abs() - scale  # an all-negative row: padding read as 0.0 would win its max
    x_flat = torch.full((M * sx + block,), POISON)
    x_flat[: M * sx].view(M, sx)[:, :N] = x
    out = torch.full((M * N + block,), SENTINEL, device=device())
    x_flat = x_flat.to(device())
    watch = Watch()
    watch.add("x", x_flat, load=grid_mask(x_flat.numel(), sx, M, N), where=_cell("x", sx, M, N))
    idx = np.arange(out.numel())

    def own_row(pid):  # program r writes row r of out only
        return (idx >= pid[0] * N) & (idx < (pid[0] + 1) * N)

    watch.add("out", out, load=False, store=own_row, where=_cell("out", N, M, N))
    size = {1: "", 30: ", values in the tens", 100: ", values in the hundreds"}
    return Case(
        where=f"M {M}, N {N}, BLOCK_N {block}" + size.get(scale, f", values around ±{scale:g}"),
        watch=watch,
        run=lambda k: _without_tl_softmax(k[(M,)], x_flat, out, N, sx, BLOCK_N=block),
        outputs=[("out", out, idx < M * N)],
        got=lambda: out[: M * N].cpu().view(M, N),
        want=torch.softmax(x.double(), 1),
        views=[("x", "load", 0, M, N, sx, 1), ("out", "store", 0, M, N, N, 1)],
        regions={NEGATIVE: torch.arange(M * N).view(M, N) < N},  # row 0
        data={"x": x, "x_flat": x_flat, "sx": sx, "block": block, "scale": scale},
    )


def _without_tl_softmax(launch, *args, **kwargs):
    """The puzzle is to write the softmax: Triton's own (tl.softmax, a tensor's .softmax())
    raises while the learner's kernel runs."""
    import triton.language as tl

    with forbidden([("tl.softmax", tl.softmax)]):
        launch(*args, **kwargs)


def _softmax_draw(rng):
    N = rng.choice((1, 3, 8, 9, 16))
    block = max(1, 1 << (N - 1).bit_length()) * rng.choice((1, 1, 2))
    return rng.choice((1, 2, 3)), N, block, rng.choice((1, 30, 1000, 2500))


def _padded(f):
    M, N = f.x.shape
    xd = f.x.double()
    return torch.softmax(torch.cat([xd, xd.new_zeros(M, f.block - N)], 1), 1)[:, :N]


def _unmasked(f):
    M, N = f.x.shape
    flat = f.x_flat.cpu()
    rows = torch.stack([flat[r * f.sx : r * f.sx + f.block] for r in range(M)]).double()
    return torch.softmax(rows, 1)[:, :N]


def _past_n(f) -> bool:
    """The first stray store is a lane past N of its program's row (in the next row)."""
    _, elem, pid = f.watch.stray["store"][0]
    N = f.x.shape[1]
    return N <= elem - pid[0] * N < f.block


def _nonfinite_max(f) -> float:
    """The largest value of the rows whose output holds NaN or inf (NaN when there are none)."""
    rows = ~torch.isfinite(f.got).all(1)
    return float(f.x.cpu()[rows].max()) if bool(rows.any()) else math.nan


def _no_sum(f):
    xd = f.x.double()
    return torch.exp(xd - xd.max(1, keepdim=True).values)


ROW_SOFTMAX_SPEC = KernelSpec(
    name="row_softmax_kernel",
    # (M, N, BLOCK_N, scale): BLOCK_N equal to N, above it, far above it, 1; values in the
    # hundreds, and past 1000 (exp overflows float64 there too).
    fixed=(
        (3, 5, 8, 1.0),
        (2, 16, 16, 1.0),
        (2, 10, 32, 1.0),
        (2, 1, 1, 1.0),
        (2, 7, 8, 100.0),
        (3, 6, 8, 1000.0),
    ),
    build=_softmax_case,
    draw=_softmax_draw,
    tol=1e-5,
    summary="BLOCK_N 1-32, N 1-16, all-negative rows, values in the hundreds and thousands",
    store_hints=((lambda f: True, ROW_SOFTMAX["store"]),),
    share_hints=((_past_n, ROW_SOFTMAX["store"]),),
    value_hints=(
        (lambda f: _nonfinite_max(f) > 88, ROW_SOFTMAX["overflow"]),
        (lambda f: _nonfinite_max(f) <= 88, ROW_SOFTMAX["underflow"]),
        (lambda f: same(f.got, _padded(f), 1e-5), ROW_SOFTMAX["pad_zero"]),
        (lambda f: same(f.got, _unmasked(f), 1e-5), UNMASKED_LOAD),
        (lambda f: same(f.got, _no_sum(f), 1e-5), ROW_SOFTMAX["no_sum"]),
    ),
)


check_row_softmax_kernel = checker(
    ROW_SOFTMAX_SPEC,
    """row_softmax_kernel[(M,)](x_ptr, out_ptr, N, stride_x, BLOCK_N=): out (M, N) = softmax of
    each row of x; rows of x are stride_x apart, out is contiguous; BLOCK_N >= N, a power of two.
    """,
)


# ---- 5 · tl.dot's shape rule: pad to 16, accumulate in fp32 -----------------------------------


def _matrix(rows, cols, stride, g, top, quarters):
    """(flat, values): NaN-padded rows of integers in [-top, top] (or quarters of them): exact
    in float16, and in a float32 sum; a large `top` gives same-sign values whose sums pass 2048."""
    values = torch.randint(-top, top + 1, (rows, cols), generator=g).double()
    if top > 3:  # same signs: the sums grow past float16's 2048
        values = values.abs().clamp(min=top // 2)
    if quarters:
        values = values / 4
    flat = torch.full(((rows + 16) * stride + 16,), NAN, dtype=torch.float16)
    flat[: rows * stride].view(rows, stride)[:, :cols] = values.half()
    return flat.to(device()), values, grid_mask(flat.numel(), stride, rows, cols)


def _dot_case(params, seed):
    M, N, K, top, quarters, BM, BN, BK = params
    g = torch.Generator().manual_seed(seed)
    sa, sb, so = K + 3, N + 2, N + 1
    a_flat, a, may_a = _matrix(M, K, sa, g, top, quarters)
    b_flat, b, may_b = _matrix(K, N, sb, g, top, quarters)
    out = torch.full(((M + 16) * so + 16,), SENTINEL, device=device())
    may_out = grid_mask(out.numel(), so, M, N)
    watch = Watch()
    watch.add("a", a_flat, load=may_a, where=_cell("a", sa, M, K))
    watch.add("b", b_flat, load=may_b, where=_cell("b", sb, K, N))
    watch.add("out", out, load=False, store=may_out, where=_cell("out", so, M, N))
    return Case(
        where=f"M {M}, N {N}, K {K}, BM {BM}, BN {BN}, BK {BK}"
        + (", quarters" if quarters else ""),
        watch=watch,
        run=lambda k: k[(1,)](a_flat, b_flat, out, M, N, K, sa, sb, so, BM=BM, BN=BN, BK=BK),
        outputs=[("out", out, may_out)],
        got=lambda: out.cpu()[: M * so].view(M, so)[:, :N],
        want=a @ b,
        views=[
            ("a", "load", 0, M, K, sa, 1),
            ("b", "load", 0, K, N, sb, 1),
            ("out", "store", 0, M, N, so, 1),
        ],
        data={"a": a, "b": b, "a_flat": a_flat, "b_flat": b_flat, "K": K, "BK": BK},
    )


def _strided(f):  # rows read K and N apart
    M, K = f.a.shape
    N = f.b.shape[1]
    a_w = f.a_flat.cpu().double()[: M * K].view(M, K)
    b_w = f.b_flat.cpu().double()[: K * N].view(K, N)
    return any(
        same(f.got, x @ y, 1e-3) and not (x @ y).isnan().all()
        for x, y in ((a_w, f.b), (f.a, b_w), (a_w, b_w))
    )


def _whole_chunks(f) -> bool:
    """Only the whole BK chunks of K were summed: the partial last one left out."""
    k = f.K - f.K % f.BK
    return f.K % f.BK > 0 and same(f.got, f.a[:, :k] @ f.b[:k], 1e-3)


DOT_SPEC = KernelSpec(
    name="dot_kernel",
    # (M, N, K, largest |value|, quarters, BM, BN, BK): blocks of 16 or 32 (a tl.dot on a GPU
    # needs 16 at least). The last cases' sums pass 2048, beyond which a float16 sum can no
    # longer hold every integer.
    fixed=(
        (4, 8, 5, 3, False, 16, 16, 16),
        (16, 16, 16, 3, False, 16, 32, 16),
        (3, 5, 40, 3, False, 16, 16, 32),
        (1, 1, 1, 3, False, 32, 16, 16),
        (2, 3, 48, 30, False, 16, 16, 16),
        (3, 4, 33, 12, True, 16, 16, 32),
    ),
    build=_dot_case,
    draw=lambda rng: (
        rng.choice((1, 5, 16)),
        rng.choice((1, 7, 16)),
        rng.choice((1, 15, 17, 32)),
        rng.choice((3, 30)),
        rng.random() < 0.5,
        *(rng.choice((16, 32)) for _ in range(3)),
    ),
    summary="M, N, K from 1 to 48, blocks of 16 and 32, sums past 2048",
    needs_dot=True,
    store_hints=((lambda f: True, DOT["store"]),),
    value_hints=(
        (lambda f: same(f.got, f.want, 2e-3) and f.want.abs().max() > 128, DOT["rounded"]),
        (_strided, DOT["stride"]),
        (lambda f: bool(torch.isnan(f.got).any()), DOT["nan"]),
        (lambda f: f.K > f.BK and same(f.got, f.a[:, : f.BK] @ f.b[: f.BK], 1e-3), DOT["loop"]),
        (_whole_chunks, DOT["partial"]),
    ),
)


check_dot_kernel = checker(
    DOT_SPEC,
    """dot_kernel[(1,)](a_ptr, b_ptr, out_ptr, M, N, K, stride_a, stride_b, stride_out, BM=16,
    BN=16, BK=16): out (M, N) float32 = a (M, K) @ b (K, N), float16, rows strided.
    """,
)
