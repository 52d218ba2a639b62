"""The attention puzzles of the kernel chapter, as `KernelSpec`s: the tile loop with a known
maximum, the online softmax (GQA scores in one tl.dot: `kernels_gqa.py`).

Exported by `kernels.py` (its docstring says how they are checked). The known-max loop gets each
head's largest score in a buffer `m` (guarded by NaN), which each program must load (under the
interpreter); its cases are the online softmax's. Those hold several tiles per sequence, GQA,
scores in the hundreds, heads whose scores are exact and near +1000 or -1000
(`kernel_cases.extreme_scores`): past float64's exp range, so only the running max keeps them
finite, and all negative, so a running max that starts at 0 shows; scores that all lie near
-30000, the low end the puzzles promise, so one that starts at any number above them shows; and
scores that climb by 25 per token (`kernel_cases.rising_scores`), so that a maximum taken from
the first tile overflows. HEAD_DIM is 8 to 32 and the scale any positive number.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import torch

from ..text import msg
from .engine.core import checker
from .engine.guard import SDPA, forbidden
from .engine.kernel_cases import (
    draw_scale,
    element,
    extreme_scores,
    output,
    paged_watch,
    pool_view,
    rising_scores,
    shares,
)
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import SENTINEL, device, same, whole
from .engine.verdicts import UNMASKED_LOAD
from .slips.kernels_paged import HINTS, KNOWN, SOFTMAX
from .slips.tile_loop import known_max_outputs, max_scores, online_softmax_outputs

__all__: list[str] = []  # exported by kernels.py

RISE = 25.0  # per token, in the "rise" cases: 200 per tile of 8
DEEP = -30000.0  # every score of the "deep" case: far below any number a loop might start from

RESCALE = msg(
    "right on sequences of one tile, wrong from the second tile on: what the earlier "
    "tiles added to l_i and acc is still measured against the old running max.",
    "타일 하나짜리 시퀀스에서는 맞고 두 번째 타일부터 틀립니다. 앞 타일들이 l_i와 acc에 더한 값이, 지금까지의 최댓값이 바뀐 뒤에도 옛 최댓값을 기준으로 남아 있습니다.",
)


def _softmax_case(params, seed, known_max=False):
    from ..attention import paged_attention_ref
    from ..attention.steps import launch_attention, make_case

    bs, lens, num_q, num_kv, tile, q_scale, extreme, head_dim, scale = params
    args = make_case(
        list(lens), bs, num_q, num_kv, head_dim, seed=seed, q_scale=q_scale, poison=True
    )
    offsets = torch.zeros(len(lens), num_q)
    if extreme == "rise":  # scores climb RISE per token: the maximum lies in the last tile
        rising_scores(args[0], args[1], args[3], args[4], RISE, scale)
    elif extreme == "deep":  # every score near DEEP: a running max that starts above them shows
        offsets = torch.full((len(lens), num_q), DEEP)
        extreme_scores(args[0], args[1], offsets, scale)
    elif extreme:  # heads alternate between scores near +1000 and near -1000
        offsets = 1000.0 * (1 - 2 * ((torch.arange(len(lens))[:, None] + torch.arange(num_q)) % 2))
        extreme_scores(args[0], args[1], offsets, scale)
    out_flat, out = output(args[0].shape, device(), args[0][0].numel())
    watch = paged_watch(*args, seq_axis=0)
    ok = np.arange(out_flat.numel()) < out.numel()
    # program (seq, head) stores out[seq, head] and nothing else
    mine = shares(out_flat.numel(), head_dim, lambda pid: pid[0] * num_q + pid[1])
    watch.add("out", out_flat, load=False, store=mine, where=lambda i: element("out", out.shape, i))
    negative = (offsets < 0)[..., None].expand(out.shape)
    data = {
        "args": args,
        "tile": tile,
        "scale": scale,
        "big": q_scale > 10 or bool(extreme),
        "negative": negative,
    }
    kwargs, required = {"tile": tile, "out": out, "scale": scale}, {}
    if known_max:  # each head's largest score, in float32, followed by NaN
        m_flat = torch.full((2 * num_q * len(lens),), float("nan"), device=device())
        m = m_flat[: num_q * len(lens)].view(len(lens), num_q)
        m.copy_(max_scores(*args, scale=scale).float().to(m.device))
        watch.add(
            "m",
            whole(m),
            load=np.arange(m_flat.numel()) < m.numel(),
            where=lambda i: element("m", m.shape, i),
        )
        watch.accesses = []  # which program loaded which m: `required`
        data["m"] = m.cpu().double()
        kwargs["inputs"] = (m,)  # m_ptr after seq_lens_ptr
        # program (seq, head) must read m[seq, head] (interpreter)
        required["m"] = lambda pid: np.arange(m_flat.numel()) == pid[0] * num_q + pid[1]

    def run(kernel):
        with forbidden(_library()):  # the library's attention raises while the kernel runs
            launch_attention(kernel, *args, **kwargs)

    scores = {True: ", scores near ±1000", "rise": f", scores rising by {RISE:g} per token"}
    scores["deep"] = f", scores near {DEEP:g}"
    return Case(
        where=f"block_size {bs}, TILE {tile}, seq_lens {list(lens)}, q/kv heads {num_q}/{num_kv}"
        f", HEAD_DIM {head_dim}, scale {scale:.4g}" + scores.get(extreme, ""),
        watch=watch,
        run=run,
        outputs=[("out", out_flat, ok)],
        got=lambda: out.cpu().double(),
        want=paged_attention_ref(*args, scale=scale).cpu().double(),
        data=data,
        required=required,
        views=[
            pool_view("k_cache", args[1]),
            *([("m", "load", 0, len(lens), num_q, num_q, 1)] if known_max else []),
            ("out", "store", 0, len(lens), num_q, out.shape[2] * num_q, out.shape[2]),
        ],
    )


def _library():
    """The library's attention, blocked while a learner's kernel runs (`guard.forbidden`): the
    reference, the kernel and its launcher, (under the interpreter) its tile loop, torch's SDPA."""
    from ..attention import paged_attention, paged_attention_ref

    return (
        (
            "paged.attention.paged_attention_ref",
            paged_attention_ref,
        ),  # the names a learner knows, first
        ("paged.attention.paged_attention", paged_attention),
        "paged.attention.reference",
        "paged.attention.kernel",
        "paged.attention.tiles",
        "paged.attention.balanced",
        "paged.model.attention_backend",
        SDPA,
    )


def _softmax_draw(rng):
    bs, tile = rng.choice((1, 2, 4, 8, 16)), rng.choice((4, 8, 16))
    lens = tuple(
        rng.choice((1, bs, bs + 1, tile, tile + 1, rng.randint(1, 40)))
        for _ in range(rng.choice((1, 2)))
    )
    num_kv = rng.choice((1, 2))
    extreme = rng.choice((False, True, "rise"))
    head_dim, scale = draw_scale(rng, exact=bool(extreme))
    return bs, lens, num_kv * rng.choice((1, 2)), num_kv, tile, 1.0, extreme, head_dim, scale


def _only_negative(f) -> bool:
    bad = ~torch.isclose(f.got, f.want, rtol=1e-4, atol=1e-4, equal_nan=True)
    return bool(bad.any()) and not bool((bad & ~f.negative).any())


def _nan_only_for_one_token(f) -> bool:
    """Non-finite output rows, all of them in sequences of one token."""
    bad = ~torch.isfinite(f.got).all(-1)
    single = (f.args[4].cpu() == 1)[:, None]
    return bool(bad.any()) and not bool((bad & ~single).any())


def _written(f):
    """The stored output, NaN where nothing was stored (a kernel that skips 0 / 0 rows)."""
    return torch.where(f.got == SENTINEL, float("nan"), f.got)


def _is(variant):
    return lambda f: same(
        _written(f), online_softmax_outputs(*f.args, f.tile, variant, scale=f.scale), 1e-4
    )


def _scaled_by(scale):
    """Whether the output is the attention of the case's inputs at another scale (`scale(f)`)."""
    from ..attention import paged_attention_ref

    return lambda f: same(f.got, paged_attention_ref(*f.args, scale=scale(f)).cpu().double(), 1e-4)


_unscaled = _scaled_by(lambda f: 1.0)
_own_scale = _scaled_by(lambda f: f.args[0].shape[-1] ** -0.5)


def _nonfinite(f) -> bool:
    return not bool(torch.isfinite(f.got).all())


# ---- step 4a · the tile loop, the maximum given --------------------------------------------


def _is_known(variant):
    return lambda f: same(
        _written(f), known_max_outputs(*f.args, f.m, f.tile, variant, scale=f.scale), 1e-4
    )


KNOWN_MAX_SPEC = KernelSpec(
    name="known_max_kernel",
    # (block_size, seq_lens, num_q_heads, num_kv_heads, TILE, q_scale, extreme, HEAD_DIM,
    # scale): TILE above, equal to and below the block size, block size 1, lengths on block
    # boundaries; scores in the hundreds, then near ±1000 (extreme True), then climbing by
    # hundreds per tile ("rise": a maximum taken from the first tiles is far too small later),
    # all near -30000 ("deep": the promised range's low end);
    # HEAD_DIM 8 to 32, scales HEAD_DIM ** -0.5 and others. The online softmax runs the same
    # ones: a tile loop with the maximum given must pass them all.
    fixed=(
        (4, (1, 4, 5, 21), 6, 3, 8, 3.0, False, 16, 0.125),
        (16, (16, 17, 40), 4, 1, 16, 3.0, False, 32, 32**-0.5),
        (16, (9, 33), 2, 2, 8, 3.0, False, 8, 0.3),
        (1, (3, 9), 2, 2, 4, 3.0, False, 16, 0.25),
        (4, (6, 19), 2, 1, 8, 60.0, False, 8, 8**-0.5),
        (4, (13, 7), 2, 1, 8, 1.0, True, 32, 0.125),
        (4, (21, 6), 2, 1, 8, 1.0, "rise", 16, 0.5),
        (2, (9, 4), 2, 1, 4, 1.0, "deep", 8, 0.25),
    ),
    build=functools.partial(_softmax_case, known_max=True),
    draw=_softmax_draw,
    num_random=3,
    tol=1e-4,
    summary="block sizes 1-16, several tiles per sequence, GQA, HEAD_DIM 8-32, any scale, "
    "scores in the hundreds, near ±1000, near -30000 and rising by hundreds per tile",
    store_hints=((lambda f: True, HINTS["store"]),),
    value_hints=(
        (lambda f: _nonfinite(f) and bool(f.watch.describe("load")), UNMASKED_LOAD),
        (_is_known("whole_tiles"), HINTS["whole_tiles"]),
        (_nan_only_for_one_token, HINTS["one_token"]),
        (lambda f: _nonfinite(f) and f.big, KNOWN["overflow"]),
        (_is_known("head_mod"), HINTS["head_mod"]),
        (_is_known("head_div"), HINTS["head_div"]),
        (_is_known("no_divide"), KNOWN["no_divide"]),
        (_is_known("no_mask"), KNOWN["no_mask"]),
        (_is("tile_max"), KNOWN["tile_max"]),
        (_unscaled, SOFTMAX["scale"]),
        (_own_scale, HINTS["own_scale"]),
    ),
)


check_known_max_kernel = checker(
    KNOWN_MAX_SPEC,
    """kernel[(num_seqs, num_q_heads)](q, k_cache, v_cache, block_table, seq_lens, m, out, scale,
    max_blocks, BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=): step 4's tile loop, given
    m[seq, head], the largest score of that head (float32).
    """,
)


# ---- step 4b · the online softmax: the running maximum -------------------------------------
ONLINE_SOFTMAX_SPEC = dataclasses.replace(  # the known-max loop's cases, summary and tolerance
    KNOWN_MAX_SPEC,
    name="online_softmax_kernel",
    build=_softmax_case,
    value_hints=(
        (lambda f: _nonfinite(f) and bool(f.watch.describe("load")), UNMASKED_LOAD),
        (_is("whole_tiles"), HINTS["whole_tiles"]),
        (_nan_only_for_one_token, HINTS["one_token"]),
        (_only_negative, SOFTMAX["negative"]),
        (lambda f: _nonfinite(f) and f.big, SOFTMAX["overflow"]),
        (_nonfinite, SOFTMAX["nan"]),
        (_is("head_mod"), HINTS["head_mod"]),
        (_is("head_div"), HINTS["head_div"]),
        *(
            (_is(v), SOFTMAX[v].format(why=RESCALE))
            for v in ("no_rescale", "tile_max", "l_only", "acc_only")
        ),
        (_is("no_mask"), SOFTMAX["no_mask"]),
        (_unscaled, SOFTMAX["scale"]),
        (_own_scale, HINTS["own_scale"]),
    ),
)


check_online_softmax_kernel = checker(
    ONLINE_SOFTMAX_SPEC,
    """kernel[(num_seqs, num_q_heads)](q, k_cache, v_cache, block_table, seq_lens, out, scale,
    max_blocks, BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=): step 4's tile loop.
    """,
)
