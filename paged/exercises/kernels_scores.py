"""The kernel chapter's tile-of-scores puzzle, as a `KernelSpec` (exported by `kernels.py`):
one tile of q · K scores, K read through the block table, -inf past seq_len.

A wrong tile is compared with what each wrong address rule (`slips.ADDRESS_RULES`), KV head 0
and a slot read as holding one head would give, and the hint names the rule that matches.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .engine.core import checker
from .engine.kernel_cases import (
    draw_scale,
    extreme_scores,
    output,
    paged_watch,
    pool_view,
    read_by_rule,
    shares,
    table_as_read,
)
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import SENTINEL, device, same, whole
from .slips import ADDRESS_RULES
from .slips.address import KERNEL_HINTS as ADDRESS_HINTS
from .slips.kernels_paged import HINTS

__all__: list[str] = []  # exported by kernels.py


# ---- step 3 · one tile of scores ----------------------------------------------------------------
LAST_TILE = msg("past seq_len, in the last tile", "마지막 타일의 seq_len 너머")


def _scores_case(params, seed):
    from ..attention import gather_kv, steps

    bs, tile, seq_len, kvh, h, D, scale, offset = params
    args = steps.make_case([seq_len], bs, kvh, kvh, D, seed=seed, poison=True)
    if offset:
        extreme_scores(args[0], args[1], offset, scale)
    q, k_cache, table = args[0][0, h], args[1], args[3][0]
    n_out = -(-seq_len // tile) * tile
    out_flat, out = output((n_out,), device(), 2 * tile)
    watch = paged_watch(*args, with_v=False)
    ok = np.arange(out_flat.numel()) < n_out
    watch.add("scores", out_flat, load=False, store=shares(out_flat.numel(), tile, lambda p: p[0]))
    s = gather_kv(k_cache, table, seq_len)[:, h].cpu().double() @ q.cpu().double() * scale
    past = torch.arange(n_out) >= seq_len
    return Case(
        where=f"block_size {bs}, TILE {tile}, seq_len {seq_len}, KV_HEADS {kvh}, kv_head {h}, "
        f"HEAD_DIM {D}, scale {scale:.4g}" + (f", scores around {offset:+g}" if offset else ""),
        watch=watch,
        run=lambda k: k[(n_out // tile,)](
            q,
            k_cache,
            table,
            out_flat,
            seq_len,
            h,
            scale,
            BLOCK_SIZE=bs,
            KV_HEADS=kvh,
            HEAD_DIM=D,
            TILE=tile,
        ),
        outputs=[("scores", out_flat, ok)],
        got=lambda: out.cpu().double(),
        label="scores",
        want=torch.cat([s, s.new_full((n_out - seq_len,), float("-inf"))]),
        views=[pool_view("k_cache", k_cache), ("scores", "store", 0, 1, n_out, n_out, 1)],
        regions={LAST_TILE: past},
        data={
            "s": s,
            "q": q,
            "k_cache": k_cache,
            "table": table,
            "seq_len": seq_len,
            "bs": bs,
            "kvh": kvh,
            "h": h,
            "D": D,
            "scale": scale,
        },
    )


def _scores_draw(rng):
    bs, tile, kvh = rng.choice((1, 2, 4, 8, 16)), rng.choice((4, 8, 16)), rng.choice((1, 2, 4))
    seq_len = rng.choice((1, bs, bs + 1, tile, tile - 1 or 1, rng.randint(1, 33)))
    offset = rng.choice((0, 0, 1000.0, -1000.0))
    return bs, tile, seq_len, kvh, rng.randrange(kvh), *draw_scale(rng, exact=bool(offset)), offset


def _scores_rule(f):
    """The address mistake whose keys give the stored scores, or None."""
    p, d = torch.arange(f.seq_len)[:, None], torch.arange(f.D)[None, :]
    tb, k_flat = table_as_read(f.table, f.seq_len + 1), whole(f.k_cache)
    row, h, D = f.kvh * f.D, f.h, f.D
    rules = {
        **{r: (rule, row, h * D + d) for r, rule in ADDRESS_RULES.items() if r != "right"},
        "kv_head": (ADDRESS_RULES["right"], row, d),
        "slot_heads": (ADDRESS_RULES["right"], D, h * D + d),
    }
    for r, (rule, width, c) in rules.items():
        keys = read_by_rule(k_flat, f.k_cache.storage_offset(), rule(tb, p, f.bs, width, c))
        if same(f.got[: f.seq_len], keys @ f.q.cpu().double() * f.scale, 1e-4):
            return r
    return None


SCORES_KEYS = (*(r for r in ADDRESS_RULES if r != "right"), "kv_head", "slot_heads")
TILE_SCORES_SPEC = KernelSpec(
    name="tile_scores_kernel",
    # (block_size, TILE, seq_len, KV_HEADS, kv_head, HEAD_DIM, scale, score offset): HEAD_DIM
    # above, equal to and below TILE, scales that are HEAD_DIM ** -0.5 and others
    fixed=(
        (4, 8, 13, 2, 1, 16, 0.125, 0),
        (16, 8, 17, 2, 0, 32, 32**-0.5, 0),
        (1, 4, 6, 1, 0, 8, 0.3, 0),
        (8, 16, 8, 2, 1, 16, 0.25, 0),
        (4, 4, 12, 4, 3, 8, 8**-0.5, 0),
        (4, 8, 11, 2, 1, 16, 0.5, -1000.0),
    ),
    build=_scores_case,
    draw=_scores_draw,
    tol=1e-4,
    summary="block sizes 1-16, tiles 4-16, 1-4 KV heads, HEAD_DIM 8-32, any scale, "
    "scores beyond ±1000",
    store_hints=((lambda f: True, HINTS["store"]),),
    value_hints=(
        (
            lambda f: same(f.got[: f.seq_len], f.s, 1e-4) and bool((f.got == SENTINEL).any()),
            HINTS["tail_unwritten"],
        ),
        (lambda f: same(f.got[: f.seq_len], f.s, 1e-4), HINTS["neg_inf"]),
        *(
            (lambda f, r=r: _scores_rule(f) == r, HINTS.get(r) or ADDRESS_HINTS[r])
            for r in SCORES_KEYS
        ),
        (lambda f: same(f.got[: f.seq_len], f.s / f.scale, 1e-4), HINTS["scale"]),
        (lambda f: same(f.got[: f.seq_len], f.s / f.scale * f.D**-0.5, 1e-4), HINTS["own_scale"]),
        (
            lambda f: bool(torch.isnan(f.got[: f.seq_len]).any()) and not f.watch.describe("load"),
            HINTS["nan_read"],
        ),
    ),
)


check_tile_scores_kernel = checker(
    TILE_SCORES_SPEC,
    """kernel[(cdiv(seq_len, TILE),)](q, k_cache, block_table, scores, seq_len, kv_head, scale,
    BLOCK_SIZE=, KV_HEADS=, HEAD_DIM=, TILE=): scores[pos] = scale * q . K[pos, kv_head] for
    pos < seq_len, -inf for the rest of the last tile.
    """,
)
