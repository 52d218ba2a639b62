"""The on-ramp's two computing puzzles (chapter 6): a row softmax and a padded tl.dot.

Helpers of `basics.py`, which exports these checkers; see its docstring for how they check.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .triton_checks import (
    CORRECT,
    NAN,
    PAST_END,
    SENTINEL,
    UNMASKED_LOAD,
    Watch,
    device,
    first_difference,
    grid_mask,
    launch,
    not_a_kernel,
    same,
    strays_in,
    wrong,
    wrote_nothing,
)  # fmt: skip
from .triton_checks import cell_namer as _cell

__all__: list[str] = []  # exported by basics.py


# ---- 4 · tl.constexpr tiles, masked lanes and a reduction: row softmax -------------------------
# (M, N, BLOCK_N, scale): BLOCK_N equal to N, above it, far above it, 1; scores in the hundreds.
ROW_SOFTMAX_CASES = ((3, 5, 8, 1.0), (2, 16, 16, 1.0), (2, 10, 32, 1.0), (2, 1, 1, 1.0),
                     (2, 7, 8, 100.0))  # fmt: skip
POISON = 1000.0  # after every row of x: a load that reaches it wins the max
ROW_SOFTMAX = {
    "store": msg(
        "lanes past N stored too (into the next row, or past the end): mask the store with "
        "cols < N.",
        "N 이후의 레인도 저장했습니다(다음 행이나 끝 너머에). 저장을 cols < N으로 마스크하세요."),
    "overflow": msg(
        "inf or NaN with values in the hundreds: exp(x) overflows float32 above about 88. "
        "Subtract the row's maximum first: exp(x - max(x)) gives the same softmax.",
        "값이 수백일 때 inf나 NaN이 나왔습니다. float32에서 exp(x)는 약 88을 넘으면 "
        "넘칩니다. 먼저 행의 최댓값을 빼세요. exp(x - max(x))도 같은 소프트맥스를 줍니다."),
    "pad_zero": msg(
        "the masked lanes came back as 0.0 (tl.load's default) and took part in the max and the "
        "sum: exp(0 - max) is not 0. Load them with other=float('-inf'), whose exp is exactly 0.",
        "마스크된 레인이 0.0(tl.load의 기본값)으로 돌아와 최댓값과 합에 끼어들었습니다. "
        "exp(0 - max)는 0이 아닙니다. other=float('-inf')로 읽으세요. 그 exp는 정확히 0입니다."),
    "no_sum": msg(
        "the weights do not add up to 1: divide exp(x - max) by its sum over the row.",
        "가중치의 합이 1이 아닙니다. exp(x - max)를 행 전체의 합으로 나누세요."),
}  # fmt: skip


def check_row_softmax_kernel(kernel) -> bool:
    """row_softmax_kernel[(M,)](x_ptr, out_ptr, N, stride_x, BLOCK_N=): out (M, N) = softmax of
    each row of x; rows of x are stride_x apart, out is contiguous; BLOCK_N >= N, a power of two.
    """
    name = "row_softmax_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (M, N, block, scale) in enumerate(ROW_SOFTMAX_CASES):
        sx = N + 3
        x = torch.randn(M, N, generator=torch.Generator().manual_seed(k)) * scale
        x[0] = -x[0].abs() - 1  # an all-negative row: padding read as 0.0 would win its max
        x_flat = torch.full((M * sx + block,), POISON)
        x_flat[: M * sx].view(M, sx)[:, :N] = x
        out = torch.full((M * N + block,), SENTINEL, device=device())
        x_flat = x_flat.to(device())
        may_x = grid_mask(x_flat.numel(), sx, M, N)
        watch = Watch()
        watch.add("x", x_flat, load=may_x, where=_cell("x", sx, M, N))
        idx = np.arange(out.numel())

        def own_row(pid, idx=idx, N=N):  # program r writes row r of out only
            return (idx >= pid[0] * N) & (idx < (pid[0] + 1) * N)

        watch.add("out", out, load=False, store=own_row, where=_cell("out", N, M, N))
        if not launch(name, watch, kernel[(M,)], x_flat, out, N, sx, BLOCK_N=block):
            return False
        where = f"M {M}, N {N}, BLOCK_N {block}" + (", x in the hundreds" if scale > 10 else "")
        if bool((out == SENTINEL).all()):
            return wrote_nothing(name)
        got, want = out[: M * N].cpu().view(M, N), torch.softmax(x.double(), 1)
        if watch.describe("store") or strays_in(out, idx < M * N, SENTINEL).size:
            return wrong(name, where, watch.describe("store") or PAST_END, ROW_SOFTMAX["store"])
        if same(got, want, 1e-5):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        return wrong(name, where, first_difference("out", got, want, 1e-5),
                     _softmax_mistake(got, x, x_flat.cpu(), sx, block, scale))
    print(CORRECT.format(name=name, what=f"{len(ROW_SOFTMAX_CASES)} cases: BLOCK_N 1-32, N 1-16, "
                                           "values in the hundreds"))
    return True


def _softmax_mistake(got, x, x_flat, sx, block, scale):
    M, N = x.shape
    xd = x.double()
    padded = torch.cat([xd, xd.new_zeros(M, block - N)], 1)
    unmasked = torch.stack([x_flat[r * sx : r * sx + block] for r in range(M)]).double()
    if not torch.isfinite(got).all() and scale > 10:
        return ROW_SOFTMAX["overflow"]
    if same(got, torch.softmax(padded, 1)[:, :N], 1e-5):
        return ROW_SOFTMAX["pad_zero"]
    if same(got, torch.softmax(unmasked, 1)[:, :N], 1e-5):
        return UNMASKED_LOAD
    if same(got, torch.exp(xd - xd.max(1, keepdim=True).values), 1e-5):
        return ROW_SOFTMAX["no_sum"]
    return None


# ---- 5 · tl.dot's shape rule: pad to 16, accumulate in fp32 -----------------------------------
# (M, N, K, largest |value|); BM = BN = BK = 16. Integers, exact in float16 and in a float32 sum;
# the last case's sums pass 2048, beyond which a float16 sum can no longer hold every integer.
DOT_CASES = ((4, 8, 5, 3), (16, 16, 16, 3), (3, 5, 40, 3), (1, 1, 1, 3), (2, 3, 48, 30))
DOT = {
    "nan": msg(
        "NaN in out: a tile read past the edge of a or b, where the checker keeps NaN (and "
        "0 × NaN is NaN, so zeros on the other side do not help). Mask the a tile with "
        "(rows < M)[:, None] & (k < K)[None, :] and the b tile with (k < K)[:, None] & "
        "(cols < N)[None, :], other=0.0: an unmasked load.",
        "out에 NaN이 있습니다. 타일이 a나 b의 가장자리 너머를 읽었는데, 채점기는 그곳을 NaN으로 "
        "채워 둡니다(0 × NaN은 NaN이라 반대쪽의 0도 소용없습니다). a 타일은 "
        "(rows < M)[:, None] & (k < K)[None, :], b 타일은 (k < K)[:, None] & "
        "(cols < N)[None, :]로 마스크하고 other=0.0을 주세요. "
        "마스크 없는 로드(unmasked load)입니다."),
    "loop": msg(
        "only the first BK columns of a (rows of b) were used: K is longer than BK, so loop "
        "k0 over range(0, K, BK) and add every tile's tl.dot into one float32 accumulator.",
        "a의 처음 BK열(b의 처음 BK행)만 쓰였습니다. K가 BK보다 기니, k0를 range(0, K, BK)로 "
        "돌며 타일마다 tl.dot 결과를 float32 누산기 하나에 더하세요."),
    "stride": msg(
        "rows of a, b and out are stride_a, stride_b and stride_out elements apart, not K or N.",
        "a, b, out의 행 간격은 K나 N이 아니라 각각 stride_a, stride_b, stride_out입니다."),
    "rounded": msg(
        "close but not exact once the sums pass 2048, on integer data a float32 sum holds "
        "exactly: the sum was rounded to fewer bits somewhere along the way.",
        "합이 2048을 넘자 값이 근사치가 되었습니다. 이 정수 데이터는 float32 합이라면 정확히 "
        "담깁니다. 합산 도중 어딘가에서 더 적은 비트로 반올림되었습니다."),
    "store": msg(
        "you wrote outside out's M rows and N columns: mask the store with "
        "(rows < M)[:, None] & (cols < N)[None, :].",
        "out의 M행 N열 밖에 썼습니다. 저장을 (rows < M)[:, None] & (cols < N)[None, :]로 "
        "마스크하세요."),
}  # fmt: skip


def _matrix(rows, cols, stride, seed, top=3, pad_rows=16):
    """(flat, values): integers in [-top, top] (exact in fp16, tf32 and fp32), NaN-padded rows."""
    g = torch.Generator().manual_seed(seed)
    values = torch.randint(-top, top + 1, (rows, cols), generator=g)
    if top > 3:  # same signs: the sums grow past float16's 2048
        values = values.abs().clamp(min=top // 2)
    flat = torch.full(((rows + pad_rows) * stride + 16,), NAN, dtype=torch.float16)
    flat[: rows * stride].view(rows, stride)[:, :cols] = values.half()
    return flat, values.double(), grid_mask(flat.numel(), stride, rows, cols)


def check_dot_kernel(kernel) -> bool:
    """dot_kernel[(1,)](a_ptr, b_ptr, out_ptr, M, N, K, stride_a, stride_b, stride_out, BM=16,
    BN=16, BK=16): out (M, N) float32 = a (M, K) @ b (K, N), float16, rows strided.
    """
    name = "dot_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (M, N, K, top) in enumerate(DOT_CASES):
        sa, sb, so = K + 3, N + 2, N + 1
        a_flat, a, may_a = _matrix(M, K, sa, seed=2 * k, top=top)
        b_flat, b, may_b = _matrix(K, N, sb, seed=2 * k + 1, top=top)
        out = torch.full(((M + 16) * so + 16,), SENTINEL, device=device())
        may_out = grid_mask(out.numel(), so, M, N)
        a_flat, b_flat = a_flat.to(device()), b_flat.to(device())
        watch = Watch()
        watch.add("a", a_flat, load=may_a, where=_cell("a", sa, M, K))
        watch.add("b", b_flat, load=may_b, where=_cell("b", sb, K, N))
        watch.add("out", out, load=False, store=may_out, where=_cell("out", so, M, N))
        if not launch(name, watch, kernel[(1,)], a_flat, b_flat, out, M, N, K, sa, sb, so,
                       BM=16, BN=16, BK=16):
            return False
        where = f"M {M}, N {N}, K {K}"
        if bool((out == SENTINEL).all()):
            return wrote_nothing(name)
        got, want = out.cpu()[: M * so].view(M, so)[:, :N], a @ b
        if watch.describe("store") or strays_in(out, may_out, SENTINEL).size:
            return wrong(name, where, watch.describe("store") or PAST_END, DOT["store"])
        if same(got, want):  # integer data: a float32 sum is exact
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        if same(got, want, 2e-3) and want.abs().max() > 2048:
            return wrong(name, where, first_difference("out", got, want), DOT["rounded"])
        a_w = a_flat.cpu().double()[: M * K].view(M, K)  # rows read K and N apart
        b_w = b_flat.cpu().double()[: K * N].view(K, N)
        guesses = [x @ y for x, y in ((a_w, b), (a, b_w), (a_w, b_w))]
        if any(same(got, g, 1e-3) and not g.isnan().all() for g in guesses):
            hint = DOT["stride"]
        elif torch.isnan(got).any():
            hint = DOT["nan"]
        else:
            hint = DOT["loop"] if K > 16 and same(got, a[:, :16] @ b[:16], 1e-3) else None
        return wrong(name, where, first_difference("out", got, want, 1e-3), hint)
    print(CORRECT.format(name=name, what=f"{len(DOT_CASES)} cases: M, N, K from 1 to 48, "
                                           "padded to 16, sums past 2048"))
    return True
