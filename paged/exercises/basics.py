"""Checkers for the Triton on-ramp (chapter 6): grids, masks and strides, as `KernelSpec`s.

Each puzzle is data for `kernel_runner.check_kernel` (its docstring says what it observes), on
tiny fixed and random cases compared with PyTorch. Inputs sit in buffers padded with NaN, and
each program may store only its own share (its block, its tile), so that a grid whose program 0
does everyone's work is told so. The 2-D copy is in `basics_2d.py`, the two computing puzzles
(a row softmax and tl.dot) in `basics_compute.py`.
"""

from __future__ import annotations

import numpy as np
import torch

from .engine.core import checker
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import NAN, SENTINEL, Watch, device, same, strays_in
from .slips.kernels_onramp import COPY, STAMP

__all__ = [
    "check_copy_2d_kernel",
    "check_copy_kernel",
    "check_dot_kernel",
    "check_row_softmax_kernel",
    "check_stamp_kernel",
]

BLOCKS = (1, 2, 4, 8, 16)  # the block sizes a random case draws from


# ---- 1 · program ids and grids ----------------------------------------------------------------


def _stamp_case(params, seed):
    programs, block = params
    n, watch = programs * block, Watch()
    flat = torch.full((n + block,), SENTINEL, device=device())
    ok = np.arange(n + block) < n
    watch.add("out", flat, load=False, store=_own_block(n + block, n, block))
    return Case(
        where=f"{programs} programs, BLOCK {block}",
        watch=watch,
        run=lambda k: k[(programs,)](flat, BLOCK=block),
        outputs=[("out", flat, ok)],
        got=lambda: flat[:n].cpu(),
        want=(torch.arange(n) // block).float(),
        views=[("out", "store", 0, 1, n, n, 1)],
        data={"programs": programs, "block": block, "n": n},
    )


def _own_block(numel, n, block):
    """pid -> the elements program pid may store: its BLOCK elements below n (interpreter)."""
    idx = np.arange(numel)
    return lambda pid: (idx // block == pid[0]) & (idx < n)


def _same_block(f) -> bool:
    return f.programs > 1 and bool((f.got[f.block :] == SENTINEL).all())


def _one_apart(f) -> bool:
    """Program pid wrote elements pid .. pid + BLOCK - 1: each written element holds one of the
    programs that reach it, and the elements past the last program's block stay unwritten."""
    i = torch.arange(f.n)
    reach = i < f.programs - 1 + f.block
    low, high = (i - f.block + 1).clamp(min=0), i.clamp(max=f.programs - 1)
    got = f.got[reach]
    return bool(
        ((got >= low[reach]) & (got <= high[reach])).all() and (f.got[~reach] == SENTINEL).all()
    )


STAMP_SPEC = KernelSpec(
    name="stamp_kernel",
    fixed=((3, 4), (2, 16), (5, 1), (1, 8)),  # (programs, BLOCK)
    build=_stamp_case,
    draw=lambda rng: (rng.choice((1, 2, 3, 7)), rng.choice(BLOCKS)),
    summary="grids of 1-7 programs, BLOCK 1-16",
    store_hints=((lambda f: True, STAMP["past"]),),
    share_hints=((_same_block, STAMP["same_block"]), (_one_apart, STAMP["cover"])),
    value_hints=(
        (_same_block, STAMP["same_block"]),
        (
            lambda f: same(f.got, torch.arange(f.n)) or same(f.got, torch.arange(f.n) % f.block),
            STAMP["offsets"],
        ),
        (_one_apart, STAMP["cover"]),
        (lambda f: bool((f.got == SENTINEL).any()), STAMP["gaps"]),
    ),
)


check_stamp_kernel = checker(
    STAMP_SPEC,
    """stamp_kernel[(programs,)](out_ptr, BLOCK=): program pid writes pid into its BLOCK
    elements.""",
)


# ---- 2 · pointers, offsets and masks: the masked copy ------------------------------------------


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
    lanes = -(-n // block) * block
    watch.add("x", x_flat, load=(idx >= 0) & (idx < n), where=lambda i: f"x[{i - guard}]")
    ok = np.arange(n + guard) < n
    watch.add("out", out, load=False, store=_own_block(n + guard, n, block))
    return Case(
        where=f"n {n}, BLOCK {block}",
        watch=watch,
        run=lambda k: k[(-(-n // block),)](x, out, n, BLOCK=block),
        outputs=[("out", out, ok)],
        got=lambda: out[:n].cpu(),
        want=values,
        views=[  # up to the last program's last lane: a lane past n shows
            ("x", "load", guard, 1, lanes, lanes, 1),
            ("out", "store", 0, 1, lanes, lanes, 1),
        ],
        data={"n": n, "block": block, "guard": guard, "out": out, "ok": ok},
    )


def _one_past_store(f) -> bool:
    stray = {e for _, e, _ in f.watch.stray["store"]} | set(strays_in(f.out, f.ok, SENTINEL))
    return stray == {f.n} and f.watch.count["store"] <= 1


def _copied_start(f) -> bool:
    return f.n > f.block and bool((f.got[f.block :] == SENTINEL).all())


def _one_past_load(f) -> bool:
    first = f.watch.stray["load"][0]
    return f.watch.count["load"] == 1 and first[0] is not None and first[1] == f.guard + f.n


COPY_SPEC = KernelSpec(
    name="copy_kernel",
    fixed=((10, 4), (16, 8), (1, 8), (33, 16), (5, 1)),  # (n, BLOCK)
    build=_copy_case,
    draw=_copy_draw,
    summary="n 1-40, BLOCK 1-16, n not a multiple of BLOCK",
    store_hints=((_one_past_store, COPY["off_by_one"]), (lambda f: True, COPY["store"])),
    share_hints=((_copied_start, COPY["start"]),),
    value_hints=((_copied_start, COPY["start"]),),
    load_hints=((_one_past_load, COPY["off_by_one"]),),
)


check_copy_kernel = checker(
    COPY_SPEC,
    """copy_kernel[(cdiv(n, BLOCK),)](x_ptr, out_ptr, n, BLOCK=): out[:n] = x[:n], masked.

    Under the interpreter a load of x[n] or beyond is an unmasked load; on a GPU only what
    reaches out can be seen.
    """,
)


from .basics_2d import check_copy_2d_kernel  # noqa: E402
from .basics_compute import check_dot_kernel, check_row_softmax_kernel  # noqa: E402
