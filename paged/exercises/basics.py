"""Checkers for the Triton on-ramp (chapter 6): five small puzzles before the paged kernel.

Each launches the learner's @triton.jit kernel on tiny hidden cases (under the interpreter here,
on the GPU where there is one) and compares with PyTorch. Outputs start as SENTINEL, inputs sit in
guarded buffers whose padding is NaN (or, for softmax, a huge number), and under the interpreter
every loaded and stored address is checked (`triton_checks.Watch`), so a kernel that masks its
store but not its load is told so.
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

__all__ = [
    "check_copy_2d_kernel",
    "check_copy_kernel",
    "check_dot_kernel",
    "check_row_softmax_kernel",
    "check_stamp_kernel",
]



# ---- 1 · program ids and grids ----------------------------------------------------------------
STAMP_CASES = ((3, 4), (2, 16), (5, 1), (1, 8))  # (programs, BLOCK)
STAMP = {
    "same_block": msg(
        "every program wrote the same first BLOCK elements: program pid owns elements "
        "pid * BLOCK ... pid * BLOCK + BLOCK - 1, so its offsets start at pid * BLOCK.",
        "모든 프로그램이 같은 처음 BLOCK개 원소에 썼습니다. 프로그램 pid의 몫은 pid * BLOCK부터 "
        "pid * BLOCK + BLOCK - 1까지이므로, 오프셋은 pid * BLOCK에서 시작합니다."),
    "offsets": msg(
        "you stored the offsets (each element's own index); store the program id, "
        "tl.program_id(0), into every element of the block.",
        "오프셋(각 원소의 인덱스)을 저장했습니다. 블록의 모든 원소에 프로그램 id, "
        "tl.program_id(0)를 저장하세요."),
    "cover": msg(
        "does each program cover all BLOCK of its elements? Program pid starts at pid * BLOCK, "
        "not at pid.",
        "각 프로그램이 자기 원소 BLOCK개를 모두 덮나요? 프로그램 pid는 pid가 아니라 "
        "pid * BLOCK에서 시작합니다."),
    "past": msg(
        "nothing lies past programs * BLOCK elements: check the offsets of your store.",
        "programs * BLOCK개 원소 뒤에는 아무것도 없습니다. 저장의 오프셋을 확인하세요."),
}  # fmt: skip


def check_stamp_kernel(kernel) -> bool:
    """stamp_kernel[(programs,)](out_ptr, BLOCK=): program pid writes pid into its BLOCK
    elements."""
    name = "stamp_kernel"
    if not_a_kernel(name, kernel):
        return False
    for programs, block in STAMP_CASES:
        n, watch = programs * block, Watch()
        flat = torch.full((n + block,), SENTINEL, device=device())
        allowed = np.arange(n + block) < n
        watch.add("out", flat, load=False, store=allowed)
        if not launch(name, watch, kernel[(programs,)], flat, BLOCK=block):
            return False
        got, want = flat[:n].cpu(), torch.arange(n) // block
        where = f"{programs} programs, BLOCK {block}"
        if bool((flat == SENTINEL).all()):
            return wrote_nothing(name)
        if watch.describe("store") or len(strays_in(flat, allowed, SENTINEL)):
            return wrong(name, where, watch.describe("store") or PAST_END, STAMP["past"])
        if same(got, want):
            continue
        if programs > 1 and bool((got[block:] == SENTINEL).all()):
            hint = STAMP["same_block"]
        elif same(got, torch.arange(n)) or same(got, torch.arange(n) % block):
            hint = STAMP["offsets"]
        else:
            hint = STAMP["cover"] if bool((got == SENTINEL).any()) else None
        return wrong(name, where, first_difference("out", got, want), hint)
    print(CORRECT.format(name=name, what=f"{len(STAMP_CASES)} grids"))
    return True


# ---- 2 · pointers, offsets and masks: the masked copy ------------------------------------------
COPY_CASES = ((10, 4), (16, 8), (1, 8), (33, 16), (5, 1))  # (n, BLOCK)
COPY = {
    "store": msg(
        "the last program's lanes past n stored too: mask the store with offs < n.",
        "마지막 프로그램의 n 이후 레인도 저장했습니다. 저장을 offs < n으로 마스크하세요."),
    "off_by_one": msg(
        "offs <= n lets one lane too many through: the last element is x[n - 1], so the mask is "
        "offs < n.",
        "offs <= n은 레인 하나를 더 통과시킵니다. 마지막 원소는 x[n - 1]이므로 마스크는 "
        "offs < n입니다."),
    "start": msg(
        "only the first BLOCK elements were copied: program pid starts at pid * BLOCK.",
        "처음 BLOCK개 원소만 복사되었습니다. 프로그램 pid는 pid * BLOCK에서 시작합니다."),
}  # fmt: skip


def check_copy_kernel(kernel) -> bool:
    """copy_kernel[(cdiv(n, BLOCK),)](x_ptr, out_ptr, n, BLOCK=): out[:n] = x[:n], masked.

    x sits between NaN guards; out is followed by SENTINEL. Under the interpreter a load of x[n]
    or beyond is an unmasked load; on a GPU only what reaches out can be seen.
    """
    name = "copy_kernel"
    if not_a_kernel(name, kernel):
        return False
    for n, block in COPY_CASES:
        guard, watch = 2 * block, Watch()
        x_flat = _guarded_range(n, guard).to(device())
        x = x_flat[guard : guard + n]
        out = torch.full((n + guard,), SENTINEL, device=device())
        idx = np.arange(n + 2 * guard) - guard  # x_flat element -> index into x
        watch.add("x", x_flat, load=(idx >= 0) & (idx < n), where=lambda i, g=guard: f"x[{i - g}]")
        allowed = np.arange(n + guard) < n
        watch.add("out", out, load=False, store=allowed)
        if not launch(name, watch, kernel[(-(-n // block),)], x, out, n, BLOCK=block):
            return False
        where, got = f"n {n}, BLOCK {block}", out[:n].cpu()
        if bool((out == SENTINEL).all()):
            return wrote_nothing(name)
        stray = {e for _, e, _ in watch.stray["store"]} | set(strays_in(out, allowed, SENTINEL))
        if stray:
            one_more = stray == {n} and watch.count["store"] <= 1
            hint = COPY["off_by_one"] if one_more else COPY["store"]
            return wrong(name, where, watch.describe("store") or PAST_END, hint)
        if not same(got, x.cpu()):
            unwritten = bool((got[block:] == SENTINEL).all()) and n > block
            hint = COPY["start"] if unwritten else None
            return wrong(name, where, first_difference("out", got, x.cpu()), hint)
        if watch.describe("load"):
            first = watch.stray["load"][0]
            one_more = watch.count["load"] == 1 and first[0] is not None and first[1] == guard + n
            hint = COPY["off_by_one"] if one_more else UNMASKED_LOAD
            return wrong(name, where, watch.describe("load"), hint)
    print(CORRECT.format(name=name, what=f"{len(COPY_CASES)} cases: n 1-33, BLOCK 1-16"))
    return True


def _guarded_range(n, guard):
    """1..n between NaN guards."""
    flat = torch.full((n + 2 * guard,), NAN)
    flat[guard : guard + n] = torch.arange(1, n + 1, dtype=torch.float32)
    return flat


# ---- 3 · broadcasting: a 2-D tile with row strides ----------------------------------------------
# (M, N, stride_x, stride_out, BM, BN): BM == BN first, so a 1-D mask is silently wrong there.
COPY_2D_CASES = ((5, 6, 9, 8, 8, 8), (8, 16, 16, 16, 4, 8),
                 (3, 40, 43, 41, 2, 16), (1, 1, 3, 2, 2, 4))  # fmt: skip
COPY_2D = {
    "one_d": msg(
        "a 1-D mask on a 2-D tile: a mask of shape (BM,) next to a (BM, BN) tile is lined up with "
        "the LAST dimension, the columns, so it switched columns on and off by a row test. Give "
        "each dimension its own axis: (rows < M)[:, None] & (cols < N)[None, :].",
        "2차원 타일에 1차원 마스크를 썼습니다. (BM,) 모양의 마스크를 (BM, BN) 타일 옆에 두면 "
        "마지막 차원인 열과 맞춰지므로, 행 조건으로 열을 켜고 끈 셈입니다. 차원마다 자기 축을 "
        "주세요: (rows < M)[:, None] & (cols < N)[None, :]."),
    "cols": msg(
        "columns c >= N got through your mask: each row holds only N numbers, so the mask needs "
        "(cols < N)[None, :] as well as the row test.",
        "열 c >= N이 마스크를 통과했습니다. 각 행에는 숫자가 N개뿐이므로 행 조건과 함께 "
        "(cols < N)[None, :]도 필요합니다."),
    "rows": msg(
        "rows r >= M got through your mask: the mask needs (rows < M)[:, None] as well as the "
        "column test.",
        "행 r >= M이 마스크를 통과했습니다. 열 조건과 함께 (rows < M)[:, None]도 필요합니다."),
    "stride_x": msg(
        "rows of x are stride_x elements apart (x is a view of a wider buffer), not N: row r "
        "starts at x_ptr + r * stride_x.",
        "x의 행 간격은 N이 아니라 stride_x입니다(x는 더 넓은 버퍼의 뷰입니다). 행 r은 "
        "x_ptr + r * stride_x에서 시작합니다."),
    "stride_out": msg(
        "rows of out are stride_out elements apart: row r of out starts at "
        "out_ptr + r * stride_out.",
        "out의 행 간격은 stride_out입니다. out의 행 r은 out_ptr + r * stride_out에서 시작합니다."),
    "axes": msg(
        "some tiles were never written: program_id(0) numbers the row tiles (BM rows each) and "
        "program_id(1) the column tiles (BN columns each).",
        "쓰이지 않은 타일이 있습니다. program_id(0)는 행 타일(각 BM행), program_id(1)은 열 "
        "타일(각 BN열)의 번호입니다."),
}  # fmt: skip




def check_copy_2d_kernel(kernel) -> bool:
    """copy_2d_kernel[(cdiv(M, BM), cdiv(N, BN))](x_ptr, out_ptr, M, N, stride_x, stride_out,
    BM=, BN=): copy an (M, N) matrix whose rows are stride_x apart into out (rows stride_out apart).
    """
    name = "copy_2d_kernel"
    if not_a_kernel(name, kernel):
        return False
    for M, N, sx, so, bm, bn in COPY_2D_CASES:
        rows, cols = np.arange(M)[:, None], np.arange(N)[None, :]
        x_flat = torch.full(((M + bm) * sx,), NAN)
        values = torch.tensor(1000 * rows + cols + 1, dtype=torch.float32)
        x_flat.view(-1, sx)[:M, :N] = values
        out = torch.full(((M + bm) * so,), SENTINEL, device=device())
        x_flat = x_flat.to(device())
        may_x, may_out = grid_mask(x_flat.numel(), sx, M, N), grid_mask(out.numel(), so, M, N)
        watch = Watch()
        watch.add("x", x_flat, load=may_x, where=_cell("x", sx, M, N))
        watch.add("out", out, load=False, store=may_out, where=_cell("out", so, M, N))
        grid = (-(-M // bm), -(-N // bn))
        if not launch(name, watch, kernel[grid], x_flat, out, M, N, sx, so, BM=bm, BN=bn):
            return False
        where = f"M {M}, N {N}, stride_x {sx}, stride_out {so}, BM {bm}, BN {bn}"
        if bool((out == SENTINEL).all()):
            return wrote_nothing(name)
        got_flat = out.cpu()
        got = got_flat.view(-1, so)[:M, :N]
        if same(got, values) and not strays_in(out, may_out, SENTINEL).size:
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        hint = _copy_2d_mistake(got_flat, x_flat.cpu(), values, M, N, sx, so, bm, bn, may_out)
        what = watch.describe("store") or first_difference("out", got, values)
        return wrong(name, where, what, hint)
    print(CORRECT.format(name=name, what=f"{len(COPY_2D_CASES)} cases: ragged edges, strided rows"))
    return True


def _copy_2d_mistake(got_flat, x_flat, values, M, N, sx, so, bm, bn, may_out):
    """Name the typical mistake that produces got_flat, or None."""
    r, c = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")

    def stored(src, out_stride):  # out as the kernel with these strides would leave it
        sim = torch.full_like(got_flat, SENTINEL)
        sim[torch.tensor((r * out_stride + c).ravel())] = src.ravel()
        return sim

    if same(got_flat, stored(x_flat[torch.tensor(r * N + c)], so)):
        return COPY_2D["stride_x"]
    if same(got_flat, stored(values, sx)) or same(got_flat, stored(values, N)):
        return COPY_2D["stride_out"]
    stray = strays_in(got_flat, may_out, SENTINEL)
    unwritten = bool((got_flat.view(-1, so)[:M, :N] == SENTINEL).any())
    if len(stray) and unwritten:
        return COPY_2D["one_d"]
    if len(stray):
        return COPY_2D["cols"] if (stray % so >= N).any() else COPY_2D["rows"]
    return COPY_2D["axes"] if unwritten else None


from .basics_compute import check_dot_kernel, check_row_softmax_kernel  # noqa: E402
