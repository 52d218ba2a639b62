"""Checkers for the Triton on-ramp (chapter 6): grids, masks and strides, as `KernelSpec`s.

Each puzzle is data for `kernel_runner.check_kernel`, which launches the learner's @triton.jit
kernel on tiny fixed and random cases (under the interpreter here, on the GPU where there is
one) and compares with PyTorch. Outputs start as SENTINEL, inputs sit in guarded buffers whose
padding is NaN, and under the interpreter every loaded and stored address is checked
(`triton_checks.Watch`), so a kernel that masks its store but not its load is told so. The two
computing puzzles (a row softmax and tl.dot) are in `basics_compute.py`.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .kernel_runner import Case, KernelSpec, check_kernel
from .triton_checks import NAN, SENTINEL, Watch, device, grid_mask, same, strays_in
from .triton_checks import cell_namer as _cell

__all__ = [
    "check_copy_2d_kernel",
    "check_copy_kernel",
    "check_dot_kernel",
    "check_row_softmax_kernel",
    "check_stamp_kernel",
]

BLOCKS = (1, 2, 4, 8, 16)  # the block sizes a random case draws from


# ---- 1 · program ids and grids ----------------------------------------------------------------
STAMP = {
    "same_block": msg(
        "every program wrote the same first BLOCK elements: program pid owns elements "
        "pid * BLOCK ... pid * BLOCK + BLOCK - 1, so its offsets start at pid * BLOCK.",
        "모든 프로그램이 같은 처음 BLOCK개 원소에 썼습니다. 프로그램 pid의 몫은 pid * BLOCK부터 "
        "pid * BLOCK + BLOCK - 1까지이므로, 오프셋은 pid * BLOCK에서 시작합니다.",
    ),
    "offsets": msg(
        "you stored the offsets (each element's own index); store the program id, "
        "tl.program_id(0), into every element of the block.",
        "오프셋(각 원소의 인덱스)을 저장했습니다. 블록의 모든 원소에 프로그램 id, "
        "tl.program_id(0)를 저장하세요.",
    ),
    "cover": msg(
        "does each program cover all BLOCK of its elements? Program pid starts at pid * BLOCK, "
        "not at pid.",
        "각 프로그램이 자기 원소 BLOCK개를 모두 덮나요? 프로그램 pid는 pid가 아니라 "
        "pid * BLOCK에서 시작합니다.",
    ),
    "past": msg(
        "nothing lies past programs * BLOCK elements: check the offsets of your store.",
        "programs * BLOCK개 원소 뒤에는 아무것도 없습니다. 저장의 오프셋을 확인하세요.",
    ),
}


def _stamp_case(params, seed):
    programs, block = params
    n, watch = programs * block, Watch()
    flat = torch.full((n + block,), SENTINEL, device=device())
    ok = np.arange(n + block) < n
    watch.add("out", flat, load=False, store=ok)
    return Case(
        where=f"{programs} programs, BLOCK {block}",
        watch=watch,
        run=lambda k: k[(programs,)](flat, BLOCK=block),
        outputs=[("out", flat, ok)],
        got=lambda: flat[:n].cpu(),
        want=(torch.arange(n) // block).float(),
        data={"programs": programs, "block": block, "n": n},
    )


STAMP_SPEC = KernelSpec(
    name="stamp_kernel",
    fixed=((3, 4), (2, 16), (5, 1), (1, 8)),  # (programs, BLOCK)
    build=_stamp_case,
    draw=lambda rng: (rng.choice((1, 2, 3, 7)), rng.choice(BLOCKS)),
    summary="grids of 1-7 programs, BLOCK 1-16",
    store_hints=((lambda f: True, STAMP["past"]),),
    value_hints=(
        (
            lambda f: f.programs > 1 and bool((f.got[f.block :] == SENTINEL).all()),
            STAMP["same_block"],
        ),
        (
            lambda f: same(f.got, torch.arange(f.n)) or same(f.got, torch.arange(f.n) % f.block),
            STAMP["offsets"],
        ),
        (lambda f: bool((f.got == SENTINEL).any()), STAMP["cover"]),
    ),
)


def check_stamp_kernel(kernel, seed=None) -> bool:
    """stamp_kernel[(programs,)](out_ptr, BLOCK=): program pid writes pid into its BLOCK
    elements."""
    return check_kernel(STAMP_SPEC, kernel, seed)


# ---- 2 · pointers, offsets and masks: the masked copy ------------------------------------------
COPY = {
    "store": msg(
        "the last program's lanes past n stored too: mask the store with offs < n.",
        "마지막 프로그램의 n 이후 레인도 저장했습니다. 저장을 offs < n으로 마스크하세요.",
    ),
    "off_by_one": msg(
        "offs <= n lets one lane too many through: the last element is x[n - 1], so the mask is "
        "offs < n.",
        "offs <= n은 레인 하나를 더 통과시킵니다. 마지막 원소는 x[n - 1]이므로 마스크는 "
        "offs < n입니다.",
    ),
    "start": msg(
        "only the first BLOCK elements were copied: program pid starts at pid * BLOCK.",
        "처음 BLOCK개 원소만 복사되었습니다. 프로그램 pid는 pid * BLOCK에서 시작합니다.",
    ),
}


def _copy_draw(rng) -> tuple[int, int]:
    """(n, BLOCK) with n not a multiple of BLOCK (where BLOCK > 1): the last program's lanes
    past n exist, so a mask that lets one more through shows."""
    b = rng.choice(BLOCKS)
    n = rng.choice((1, b + 1, 2 * b - 1, rng.randint(1, 40)))
    return (n + 1 if b > 1 and n % b == 0 else n), b


def _copy_case(params, seed):
    """x (non-integer values) between NaN guards; out followed by SENTINEL."""
    n, block = params
    guard, watch = 2 * block, Watch()
    values = torch.randn(n, generator=torch.Generator().manual_seed(seed)) * 10
    x_flat = torch.full((n + 2 * guard,), NAN)
    x_flat[guard : guard + n] = values
    x_flat = x_flat.to(device())
    x = x_flat[guard : guard + n]
    out = torch.full((n + guard,), SENTINEL, device=device())
    idx = np.arange(n + 2 * guard) - guard  # x_flat element -> index into x
    watch.add("x", x_flat, load=(idx >= 0) & (idx < n), where=lambda i: f"x[{i - guard}]")
    ok = np.arange(n + guard) < n
    watch.add("out", out, load=False, store=ok)
    return Case(
        where=f"n {n}, BLOCK {block}",
        watch=watch,
        run=lambda k: k[(-(-n // block),)](x, out, n, BLOCK=block),
        outputs=[("out", out, ok)],
        got=lambda: out[:n].cpu(),
        want=values,
        data={"n": n, "block": block, "guard": guard, "out": out, "ok": ok},
    )


def _one_past_store(f) -> bool:
    stray = {e for _, e, _ in f.watch.stray["store"]} | set(strays_in(f.out, f.ok, SENTINEL))
    return stray == {f.n} and f.watch.count["store"] <= 1


def _one_past_load(f) -> bool:
    first = f.watch.stray["load"][0]
    return f.watch.count["load"] == 1 and first[0] is not None and first[1] == f.guard + f.n


COPY_SPEC = KernelSpec(
    name="copy_kernel",
    fixed=((10, 4), (16, 8), (1, 8), (33, 16), (5, 1)),  # (n, BLOCK)
    build=_copy_case,
    draw=lambda rng: _copy_draw(rng),
    summary="n 1-40, BLOCK 1-16, n not a multiple of BLOCK",
    store_hints=((_one_past_store, COPY["off_by_one"]), (lambda f: True, COPY["store"])),
    value_hints=(
        (lambda f: f.n > f.block and bool((f.got[f.block :] == SENTINEL).all()), COPY["start"]),
    ),
    load_hints=((_one_past_load, COPY["off_by_one"]),),
)


def check_copy_kernel(kernel, seed=None) -> bool:
    """copy_kernel[(cdiv(n, BLOCK),)](x_ptr, out_ptr, n, BLOCK=): out[:n] = x[:n], masked.

    Under the interpreter a load of x[n] or beyond is an unmasked load; on a GPU only what
    reaches out can be seen.
    """
    return check_kernel(COPY_SPEC, kernel, seed)


# ---- 3 · broadcasting: a 2-D tile with row strides ----------------------------------------------
COPY_2D = {
    "one_d": msg(
        "a 1-D mask on a 2-D tile: a mask of shape (BM,) next to a (BM, BN) tile is lined up with "
        "the LAST dimension, the columns, so it switched columns on and off by a row test. Give "
        "each dimension its own axis: (rows < M)[:, None] & (cols < N)[None, :].",
        "2차원 타일에 1차원 마스크를 썼습니다. (BM,) 모양의 마스크를 (BM, BN) 타일 옆에 두면 "
        "마지막 차원인 열과 맞춰지므로, 행 조건으로 열을 켜고 끈 셈입니다. 차원마다 자기 축을 "
        "주세요: (rows < M)[:, None] & (cols < N)[None, :].",
    ),
    "cols": msg(
        "columns c >= N got through your mask: each row holds only N numbers, so the mask needs "
        "(cols < N)[None, :] as well as the row test.",
        "열 c >= N이 마스크를 통과했습니다. 각 행에는 숫자가 N개뿐이므로 행 조건과 함께 "
        "(cols < N)[None, :]도 필요합니다.",
    ),
    "rows": msg(
        "rows r >= M got through your mask: the mask needs (rows < M)[:, None] as well as the "
        "column test.",
        "행 r >= M이 마스크를 통과했습니다. 열 조건과 함께 (rows < M)[:, None]도 필요합니다.",
    ),
    "stride_x": msg(
        "rows of x are stride_x elements apart (x is a view of a wider buffer), not N: row r "
        "starts at x_ptr + r * stride_x.",
        "x의 행 간격은 N이 아니라 stride_x입니다(x는 더 넓은 버퍼의 뷰입니다). 행 r은 "
        "x_ptr + r * stride_x에서 시작합니다.",
    ),
    "stride_out": msg(
        "rows of out are stride_out elements apart: row r of out starts at "
        "out_ptr + r * stride_out.",
        "out의 행 간격은 stride_out입니다. out의 행 r은 out_ptr + r * stride_out에서 시작합니다.",
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
    watch.add("out", out, load=False, store=may_out, where=_cell("out", so, M, N))
    grid = (-(-M // bm), -(-N // bn))
    return Case(
        where=f"M {M}, N {N}, stride_x {sx}, stride_out {so}, BM {bm}, BN {bn}",
        watch=watch,
        run=lambda k: k[grid](x_flat, out, M, N, sx, so, BM=bm, BN=bn),
        outputs=[("out", out, may_out)],
        got=lambda: out.cpu().view(-1, so)[:M, :N],
        want=values,
        data={"params": params, "out": out, "x_flat": x_flat, "may_out": may_out},
    )


def _copy_2d_draw(rng):
    bm, bn = rng.choice((2, 4, 8)), rng.choice((2, 4, 8, 16))
    M, N = rng.choice((1, bm, bm + 1, 2 * bm + 1)), rng.choice((1, bn - 1 or 1, bn + 1, 2 * bn))
    return M, N, N + rng.randint(1, 4), N + rng.randint(0, 3), bm, bn


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
    value_hints=tuple((_2d(k), COPY_2D[k]) for k in COPY_2D),
)


def check_copy_2d_kernel(kernel, seed=None) -> bool:
    """copy_2d_kernel[(cdiv(M, BM), cdiv(N, BN))](x_ptr, out_ptr, M, N, stride_x, stride_out,
    BM=, BN=): copy an (M, N) matrix whose rows are stride_x apart into out (rows stride_out apart).
    """
    return check_kernel(COPY_2D_SPEC, kernel, seed)


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


from .basics_compute import check_dot_kernel, check_row_softmax_kernel  # noqa: E402
