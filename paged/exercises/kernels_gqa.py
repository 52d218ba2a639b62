"""The kernel chapter's GQA puzzle, as a `KernelSpec` (exported by `kernels.py`): a group's
scores in one tl.dot.

The cases hold groups of 1 to 4 query heads per KV head, 1 to 3 KV heads, block sizes 1 to 16;
the tile is padded to 16 rows (BLOCK_G), so rows past GROUP must not be stored, and the products
must come from one tl.dot, in float32.
"""

from __future__ import annotations

import numpy as np
import torch

from .core import checker
from .kernel_cases import output, paged_watch, pool_view
from .kernel_runner import Case, KernelSpec
from .slips.kernels_paged import GQA, HINTS
from .triton_checks import device, same
from .verdicts import UNMASKED_LOAD

__all__: list[str] = []  # exported by kernels.py


# ---- step 5 · a group's scores in one tl.dot -------------------------------------------------


def _gqa_case(params, seed):
    from ..attention import gather_kv
    from ..attention.steps import make_case

    bs, lens, num_q, num_kv = params
    tile = block_g = 16
    args = make_case(list(lens), bs, num_q, num_kv, seed=seed, poison=True)
    q, k_cache, table, seq_lens = args[0], args[1], args[3], args[4]
    D, group = q.shape[2], num_q // num_kv
    # a guard of BLOCK_G rows: a program that stores all its rows, not GROUP, stays inside it
    # (past it, the interpreter writes into whatever buffer lies next: q, in one CI run)
    out_flat, out = output((len(lens), num_q, tile), device(), (num_q + block_g) * tile)
    watch = paged_watch(*args, with_v=False, seq_axis=0)
    ok = np.arange(out_flat.numel()) < out.numel()
    watch.add(
        "scores",
        out_flat,
        load=False,
        store=ok,
        where=lambda i: f"scores[{i // (num_q * tile)}, {i // tile % num_q}, {i % tile}]",
    )
    want, by_mod = (torch.full(out.shape, float("-inf"), dtype=torch.float64) for _ in range(2))
    for i, n in enumerate(lens):
        keys = gather_kv(k_cache, table[i], n).cpu().double()  # (n, kv heads, D)
        for h in range(num_q):
            qh = q[i, h].cpu().double() * D**-0.5
            want[i, h, :n] = keys[:, h // group] @ qh
            by_mod[i, h, :n] = keys[:, h % num_kv] @ qh
    return Case(
        where=f"block_size {bs}, seq_lens {list(lens)}, q/kv heads {num_q}/{num_kv}",
        watch=watch,
        run=lambda k: k[(len(lens), num_kv)](
            q,
            k_cache,
            table,
            seq_lens,
            out_flat,
            D**-0.5,
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
            "scale": D**-0.5,
            # a group's first query head right, the others' scores 0 (their q rows read as 0)
            "first_only": torch.where(torch.arange(num_q)[:, None] % group == 0, want, 0.0),
        },
    )


def _gqa_draw(rng):
    bs, num_kv = rng.choice((1, 2, 4, 8, 16)), rng.choice((1, 2, 3))
    lens = tuple(
        rng.choice((1, bs, min(bs + 1, 16), 16, rng.randint(1, 16)))
        for _ in range(rng.choice((1, 2)))
    )
    return bs, lens, num_kv * rng.choice((1, 2, 4)), num_kv


def _on_valid(f, other, tol=1e-2):
    return same(f.got[f.valid], other[f.valid], tol)


GQA_SCORES_SPEC = KernelSpec(
    name="gqa_scores_kernel",
    # (block_size, seq_lens, num_q_heads, num_kv_heads): GROUP 2 with 2 and 3 KV heads,
    # GROUP 4, MQA; every sequence fits in one TILE = 16; BLOCK_G = 16 rows.
    fixed=((4, (5, 16, 1), 4, 2), (1, (3, 12), 6, 3), (16, (16, 9), 8, 2), (8, (8,), 4, 1)),
    build=_gqa_case,
    draw=_gqa_draw,
    num_random=3,
    tol=1e-5,
    needs_dot=True,
    summary="GROUP 1-4, 1-3 KV heads, block sizes 1-16, float32 products from one tl.dot",
    store_hints=((lambda f: True, HINTS["group_rows"]),),
    value_hints=(
        (lambda f: same(f.got, f.want, 1e-2), GQA["precision"]),
        (lambda f: _on_valid(f, f.want), HINTS["neg_inf"]),
        (lambda f: _on_valid(f, f.by_mod), HINTS["head_mod"]),
        (lambda f: _on_valid(f, f.first_only), GQA["first_only"]),
        (lambda f: _on_valid(f, f.want / f.scale), HINTS["scale"]),
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
