"""The kernel chapter's GQA puzzle, as a `KernelSpec` (exported by `kernels.py`): a group's
scores in one tl.dot.

The cases hold groups of 1 to 4 query heads per KV head, 1 to 3 KV heads, block sizes 1 to 16,
HEAD_DIM 16 or 32 beside TILE 16 or 32 (a tl.dot on a GPU needs 16 at least), scales that are
HEAD_DIM ** -0.5 and others; the tile is padded to BLOCK_G rows (16 or 32), so rows past GROUP
must not be stored; each program stores its own group's rows and nothing else, and its
products come from one tl.dot, in float32.
"""

from __future__ import annotations

import numpy as np
import torch

from .engine.core import checker
from .engine.kernel_cases import draw_scale, output, paged_watch, pool_view, shares
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import device, same
from .engine.verdicts import UNMASKED_LOAD
from .slips.kernels_paged import GQA, HINTS

__all__: list[str] = []  # exported by kernels.py


# ---- step 5 · a group's scores in one tl.dot -------------------------------------------------


def _gqa_case(params, seed):
    from ..attention import gather_kv
    from ..attention.steps import make_case

    bs, lens, num_q, num_kv, head_dim, scale, tile, block_g = params
    args = make_case(list(lens), bs, num_q, num_kv, head_dim, seed=seed, poison=True)
    q, k_cache, table, seq_lens = args[0], args[1], args[3], args[4]
    D, group = q.shape[2], num_q // num_kv
    # a guard of BLOCK_G rows: a program that stores all its rows, not GROUP, stays inside it
    # (past it, the interpreter writes into whatever buffer lies next: q, in one CI run)
    out_flat, out = output((len(lens), num_q, tile), device(), (num_q + block_g) * max(tile, D))
    watch = paged_watch(*args, with_v=False, seq_axis=0)
    ok = np.arange(out_flat.numel()) < out.numel()
    watch.add(
        "scores",
        out_flat,
        load=False,  # program (seq, kv head) stores its group's rows of that sequence
        store=shares(out_flat.numel(), group * tile, lambda pid: pid[0] * num_kv + pid[1]),
        where=lambda i: f"scores[{i // (num_q * tile)}, {i // tile % num_q}, {i % tile}]",
    )
    want, by_mod = (torch.full(out.shape, float("-inf"), dtype=torch.float64) for _ in range(2))
    for i, n in enumerate(lens):
        keys = gather_kv(k_cache, table[i], n).cpu().double()  # (n, kv heads, D)
        for h in range(num_q):
            qh = q[i, h].cpu().double() * scale
            want[i, h, :n] = keys[:, h // group] @ qh
            by_mod[i, h, :n] = keys[:, h % num_kv] @ qh
    return Case(
        where=f"block_size {bs}, seq_lens {list(lens)}, q/kv heads {num_q}/{num_kv}, "
        f"HEAD_DIM {D}, scale {scale:.4g}, TILE {tile}, BLOCK_G {block_g}",
        watch=watch,
        run=lambda k: k[(len(lens), num_kv)](
            q,
            k_cache,
            table,
            seq_lens,
            out_flat,
            scale,
            table.shape[1],
            BLOCK_SIZE=bs,
            KV_HEADS=num_kv,
            GROUP=group,
            HEAD_DIM=D,
            TILE=tile,
            BLOCK_G=block_g,
        ),
        outputs=[("scores", out_flat, ok)],
        got=lambda: out.cpu().double(),
        want=want,
        label="scores",
        views=[
            pool_view("k_cache", k_cache),
            ("scores", "store", 0, len(lens) * num_q, tile, tile, 1),
        ],
        data={
            "by_mod": by_mod,
            "valid": torch.isfinite(want),
            "scale": scale,
            "D": D,
            "rows": (num_q, group, tile, block_g),
            # a group's first query head right, the others' scores 0 (their q rows read as 0)
            "first_only": torch.where(torch.arange(num_q)[:, None] % group == 0, want, 0.0),
        },
    )


def _gqa_draw(rng):
    bs, num_kv, tile = rng.choice((1, 2, 4, 8, 16)), rng.choice((1, 2, 3)), rng.choice((16, 32))
    lens = tuple(
        rng.choice((1, bs, min(bs + 1, tile), tile, rng.randint(1, tile)))
        for _ in range(rng.choice((1, 2)))
    )
    head_dim, scale = draw_scale(rng, dims=(16, 32))  # a tl.dot needs 16 at least
    return bs, lens, num_kv * rng.choice((1, 2, 4)), num_kv, head_dim, scale, tile, 16


def _past_group(f) -> bool:
    """The first store into another program's share lies in the storing program's own padded
    tile, past its GROUP rows."""
    _, elem, pid = f.watch.stray["store"][0]
    num_q, group, tile, block_g = f.rows
    row = elem // tile - (pid[0] * num_q + pid[1] * group)
    return group <= row < block_g


def _on_valid(f, other, tol=1e-2):
    return same(f.got[f.valid], other[f.valid], tol)


GQA_SCORES_SPEC = KernelSpec(
    name="gqa_scores_kernel",
    # (block_size, seq_lens, num_q_heads, num_kv_heads, HEAD_DIM, scale, TILE, BLOCK_G): GROUP
    # 2 with 2 and 3 KV heads, GROUP 4, MQA; every sequence fits in one TILE; HEAD_DIM equal
    # to TILE, above and below it.
    fixed=(
        (4, (5, 16, 1), 4, 2, 32, 0.125, 16, 16),
        (1, (3, 12), 6, 3, 16, 0.3, 16, 16),
        (16, (16, 9), 8, 2, 16, 0.25, 32, 16),
        (8, (8, 32), 4, 1, 32, 32**-0.5, 32, 32),
    ),
    build=_gqa_case,
    draw=_gqa_draw,
    num_random=3,
    tol=1e-5,
    needs_dot=True,
    summary="GROUP 1-4, 1-3 KV heads, block sizes 1-16, HEAD_DIM and TILE 16-32, any scale, "
    "float32 products from one tl.dot per program",
    dots_per_program=1,
    store_hints=((lambda f: True, HINTS["group_rows"]),),
    share_hints=(
        (lambda f: _on_valid(f, f.by_mod), HINTS["head_mod"]),
        (_past_group, HINTS["group_rows"]),
    ),
    value_hints=(
        (lambda f: same(f.got, f.want, 1e-2), GQA["precision"]),
        (lambda f: _on_valid(f, f.want), HINTS["neg_inf"]),
        (lambda f: _on_valid(f, f.by_mod), HINTS["head_mod"]),
        (lambda f: _on_valid(f, f.first_only), GQA["first_only"]),
        (lambda f: _on_valid(f, f.want / f.scale), HINTS["scale"]),
        (lambda f: _on_valid(f, f.want / f.scale * f.D**-0.5), HINTS["own_scale"]),
        (lambda f: bool(f.watch.describe("load")), UNMASKED_LOAD),
    ),
)


check_gqa_scores_kernel = checker(
    GQA_SCORES_SPEC,
    """kernel[(num_seqs, KV_HEADS)](q, k_cache, block_table, seq_lens, scores, scale, max_blocks,
    BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=, BLOCK_G=): scores (num_seqs, num_q_heads,
    TILE), one tl.dot per (sequence, KV head) for its GROUP query heads; -inf past seq_len.
    """,
)
