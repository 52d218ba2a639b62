"""The on-ramp's 2-D puzzle (chapter 6), as a `KernelSpec`: a tile copy with row strides.

Exported by `basics.py` (its docstring says how it is checked). The cases have ragged edges
(M, N not multiples of BM, BN; BM == BN first, where a 1-D mask is silently wrong) and rows
further apart than N, in x and in out, by different amounts.
"""

from __future__ import annotations

import numpy as np
import torch

from .engine.core import checker
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import NAN, SENTINEL, Watch, device, grid_mask, same, strays_in
from .engine.triton_checks import cell_namer as _cell
from .slips.kernels_onramp import COPY_2D

__all__: list[str] = []  # exported by basics.py


# ---- 3 · broadcasting: a 2-D tile with row strides ----------------------------------------------


def _copy_2d_case(params, seed):
    M, N, sx, so, bm, bn = params
    rows, cols = np.arange(M)[:, None], np.arange(N)[None, :]
    x_flat = torch.full(((M + bm) * sx,), NAN)
    values = torch.tensor(1000 * rows + cols + 1, dtype=torch.float32) + 0.25
    x_flat.view(-1, sx)[:M, :N] = values
    out = torch.full(((M + bm) * so,), SENTINEL, device=device())
    x_flat = x_flat.to(device())
    may_x, may_out = grid_mask(x_flat.numel(), sx, M, N), grid_mask(out.numel(), so, M, N)
    watch = Watch()
    watch.add("x", x_flat, load=may_x, where=_cell("x", sx, M, N))
    r, c = np.divmod(np.arange(out.numel()), so)

    def own_tile(pid):  # program (i, j) stores tile (i, j) of out only (interpreter)
        return may_out & (r // bm == pid[0]) & (c // bn == pid[1])

    watch.add("out", out, load=False, store=own_tile, where=_cell("out", so, M, N))
    grid = (-(-M // bm), -(-N // bn))
    return Case(
        where=f"M {M}, N {N}, stride_x {sx}, stride_out {so}, BM {bm}, BN {bn}",
        watch=watch,
        run=lambda k: k[grid](x_flat, out, M, N, sx, so, BM=bm, BN=bn),
        outputs=[("out", out, may_out)],
        got=lambda: out.cpu().view(-1, so)[:M, :N],
        want=values,
        views=[("x", "load", 0, M, N, sx, 1), ("out", "store", 0, M, N, so, 1)],
        data={"params": params, "out": out, "x_flat": x_flat, "may_out": may_out},
    )


def _copy_2d_draw(rng):
    bm, bn = rng.choice((2, 4, 8)), rng.choice((2, 4, 8, 16))
    M, N = rng.choice((1, bm, bm + 1, 2 * bm + 1)), rng.choice((1, bn - 1 or 1, bn + 1, 2 * bn))
    return M, N, N + rng.randint(1, 4), N + rng.randint(0, 3), bm, bn


def _swapped(f) -> bool:
    """The first stray store: program (i, j) wrote into tile (j, i)."""
    M, N, sx, so, bm, bn = f.params
    _, elem, pid = f.watch.stray["store"][0]
    r, c = divmod(elem, so)
    return (r // bm, c // bn) == (pid[1], pid[0])


def _2d(key):
    return lambda f: _copy_2d_mistake(f) == key


COPY_2D_SPEC = KernelSpec(
    name="copy_2d_kernel",
    # (M, N, stride_x, stride_out, BM, BN): BM == BN first, so a 1-D mask is silently wrong there.
    fixed=((5, 6, 9, 8, 8, 8), (8, 16, 16, 16, 4, 8), (3, 40, 43, 41, 2, 16), (1, 1, 3, 2, 2, 4)),
    build=_copy_2d_case,
    draw=_copy_2d_draw,
    summary="ragged edges, strided rows",
    store_hints=tuple((_2d(k), COPY_2D[k]) for k in COPY_2D),
    share_hints=((_swapped, COPY_2D["axes"]), *((_2d(k), COPY_2D[k]) for k in COPY_2D)),
    value_hints=tuple((_2d(k), COPY_2D[k]) for k in COPY_2D),
)


check_copy_2d_kernel = checker(
    COPY_2D_SPEC,
    """copy_2d_kernel[(cdiv(M, BM), cdiv(N, BN))](x_ptr, out_ptr, M, N, stride_x, stride_out,
    BM=, BN=): copy an (M, N) matrix whose rows are stride_x apart into out (rows stride_out apart).
    """,
)


def _bounds_swapped(params, got_flat) -> bool:
    """The elements written are those of a grid's cells with row < N and column < M."""
    M, N, sx, so, bm, bn = params
    r, c = np.meshgrid(np.arange(-(-M // bm) * bm), np.arange(-(-N // bn) * bn), indexing="ij")
    cells = (r * so + c)[(r < N) & (c < M)]
    due = np.zeros(got_flat.numel(), bool)
    due[cells[cells < got_flat.numel()]] = True
    return bool((due == (got_flat.numpy() != SENTINEL)).all())


def _copy_2d_mistake(f):
    """The key of the typical mistake that leaves out as the kernel left it, or None."""
    M, N, sx, so, bm, bn = f.params
    got_flat, x_flat, values = f.out.cpu(), f.x_flat.cpu(), f.want
    r, c = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")

    def stored(src, out_stride):  # out as the kernel with these strides would leave it
        sim = torch.full_like(got_flat, SENTINEL)
        sim[torch.tensor((r * out_stride + c).ravel())] = src.ravel()
        return sim

    if M != N and _bounds_swapped(f.params, got_flat):
        return "bounds_swapped"
    if same(got_flat, stored(x_flat[torch.tensor(r * N + c)], so)):
        return "stride_x"
    if same(got_flat, stored(values, sx)) or same(got_flat, stored(values, N)):
        return "stride_out"
    stray = strays_in(got_flat, f.may_out, SENTINEL)
    unwritten = bool((got_flat.view(-1, so)[:M, :N] == SENTINEL).any())
    if len(stray) and unwritten:
        return "one_d"
    if len(stray):
        return "cols" if (stray % so >= N).any() else "rows"
    return "axes" if unwritten else None
