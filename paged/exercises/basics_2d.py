"""The on-ramp's 2-D puzzle (chapter 6), as a `KernelSpec`: a tile copy with row strides.

Exported by `basics.py` (its docstring says how it is checked). The cases have ragged edges
(M, N not multiples of BM, BN; BM == BN first, where a 1-D mask is silently wrong) and rows
further apart than N, in x and in out, by different amounts.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .core import checker
from .kernel_runner import Case, KernelSpec
from .triton_checks import NAN, SENTINEL, Watch, device, grid_mask, same, strays_in
from .triton_checks import cell_namer as _cell

__all__: list[str] = []  # exported by basics.py


# ---- 3 · broadcasting: a 2-D tile with row strides ----------------------------------------------
COPY_2D = {
    "one_d": msg(
        "a 1-D mask on a 2-D tile: a mask of shape (BM,) next to a (BM, BN) tile is lined up "
        "with the LAST dimension, the columns, so a test on rows switched columns on and off.",
        "2차원 타일에 1차원 마스크를 썼습니다. (BM, BN) 타일 옆의 (BM,) 마스크는 마지막 차원인 열에 맞춰지므로, 행에 대한 검사가 열을 켜고 "
        "껐습니다.",
    ),
    "cols": msg(
        "columns c >= N got through your mask: each row holds only N numbers.",
        "c >= N인 열이 마스크를 통과했습니다. 행마다 숫자는 N개뿐입니다.",
    ),
    "rows": msg(
        "rows r >= M got through your mask: the matrix has only M rows.",
        "r >= M인 행이 마스크를 통과했습니다. 행렬에는 행이 M개뿐입니다.",
    ),
    "stride_x": msg(
        "rows were read from the wrong places: x is a view of a wider buffer, so its rows are "
        "not N elements apart.",
        "행을 엉뚱한 곳에서 읽었습니다. x는 더 넓은 버퍼의 뷰라서 행 사이가 N개 원소가 아닙니다.",
    ),
    "stride_out": msg(
        "rows of out landed in the wrong places: out's rows are not as far apart as x's.",
        "out의 행이 엉뚱한 곳에 들어갔습니다. out의 행 간격은 x의 행 간격과 다릅니다.",
    ),
    "axes": msg(
        "some tiles were never written: program_id(0) numbers the row tiles (BM rows each) and "
        "program_id(1) the column tiles (BN columns each).",
        "쓰이지 않은 타일이 있습니다. program_id(0)는 행 타일(각 BM행), program_id(1)은 열 "
        "타일(각 BN열)의 번호입니다.",
    ),
}


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


def _copy_2d_mistake(f):
    """The key of the typical mistake that leaves out as the kernel left it, or None."""
    M, N, sx, so, bm, bn = f.params
    got_flat, x_flat, values = f.out.cpu(), f.x_flat.cpu(), f.want
    r, c = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")

    def stored(src, out_stride):  # out as the kernel with these strides would leave it
        sim = torch.full_like(got_flat, SENTINEL)
        sim[torch.tensor((r * out_stride + c).ravel())] = src.ravel()
        return sim

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
