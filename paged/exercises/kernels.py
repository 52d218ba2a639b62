"""Checkers for the kernel chapter's Triton puzzles (chapter 7), from the gather to the merge.

Each launches the learner's @triton.jit kernel on small paged cases (shuffled tables padded
with -1, block sizes 1-16, tiles below, equal to and above the block size, lengths that end on
a block boundary) and compares with the library (`gather_kv`, `paged_attention_ref`, torch).
The cases are poisoned (`steps.make_case(..., poison=True)`): NaN in every slot that holds no
token, so an unmasked V load turns the output into NaN on a GPU too; under the interpreter
every address is also checked (`triton_checks.Watch`). A wrong answer is compared with what
the typical mistakes would produce, and the hint names the one that matches.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .kernel_cases import (
    ADDRESS_HINTS,
    ADDRESS_RULES,
    HINTS,
    cache_words,
    output,
    paged_watch,
    read_by_rule,
)
from .kernel_cases import stray_store as _stray
from .kernel_cases import table_as_read as _table_read
from .triton_checks import (
    CORRECT,
    SENTINEL,
    UNMASKED_LOAD,
    Watch,
    device,
    first_difference,
    launch,
    not_a_kernel,
    same,
    whole,
    wrong,
    wrote_nothing,
)  # fmt: skip

__all__ = [
    "check_gather_kernel",
    "check_gqa_scores_kernel",
    "check_merge_kernel",
    "check_online_softmax_kernel",
    "check_tile_scores_kernel",
]

ROW = 8  # the gather's numbers per token (num_kv_heads * head_dim)
TOKEN = msg("token {pos} holds {got}, expected {want}", "토큰 {pos}의 값은 {got}, "
            "기대값은 {want}입니다")  # fmt: skip
READ_FROM = msg("token {pos} was read from slot {slot} (block {block}, offset {offset}); it lives "
                "in slot {want} (block {wblock}, offset {woffset})",
                "토큰 {pos}의 읽은 위치는 슬롯 {slot}(블록 {block}, 오프셋 {offset})이지만, "
                "이 토큰은 슬롯 {want}(블록 {wblock}, 오프셋 {woffset})에 "
                "있습니다")  # fmt: skip




# ---- step 2 · gather through the block table ------------------------------------------------
# (block_size, TILE, seq_len, num_blocks): TILE above, below and equal to the block size,
# block size 1, a length that ends on a block boundary, one token.
GATHER_CASES = ((4, 8, 13, 9), (16, 8, 17, 5), (1, 4, 6, 10), (8, 16, 8, 4), (4, 4, 12, 6),
                (4, 4, 1, 5))  # fmt: skip
GUARD = 4096  # elements around the gather's cache: a stray read stays inside, and says where


def _gather_case(bs, num_blocks, seq_len, seed):
    """A cache whose every number is its own address (guards too), a shuffled table."""
    g = torch.Generator().manual_seed(seed)
    n = num_blocks * bs * ROW
    flat = torch.arange(-GUARD, n + GUARD, dtype=torch.float32).to(device())
    used = -(-seq_len // bs)
    ids = torch.randperm(num_blocks, generator=g)[:used].to(torch.int32)
    t_flat = torch.full((used + 1 + 64,), -1, dtype=torch.int32)
    t_flat[:used] = ids
    t_flat = t_flat.to(device())
    watch = Watch()
    may = np.zeros(flat.numel(), bool)
    slots = [int(ids[p // bs]) * bs + p % bs for p in range(seq_len)]
    may[GUARD + (np.array(slots)[:, None] * ROW + np.arange(ROW)).ravel()] = True
    watch.add("cache", flat, load=may, where=cache_words("cache", GUARD, bs, ROW, n // ROW))
    watch.add("block_table", t_flat, load=np.arange(t_flat.numel()) < used,
              where=lambda i: f"block_table[{i}] (used: {used})")
    return flat, flat[GUARD : GUARD + n].view(num_blocks, bs, ROW), t_flat, watch


def check_gather_kernel(kernel) -> bool:
    """kernel[(cdiv(seq_len, TILE),)](cache, block_table, out, seq_len, BLOCK_SIZE=, ROW=, TILE=).

    Copies one sequence's K rows, TILE positions per program, from the paged cache
    (num_blocks, BLOCK_SIZE, ROW) into out (seq_len, ROW), through its block table.
    """
    from ..attention import gather_kv

    name = "gather_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (bs, tile, seq_len, num_blocks) in enumerate(GATHER_CASES):
        flat, cache, table, watch = _gather_case(bs, num_blocks, seq_len, seed=k)
        out_flat, out = output((seq_len, ROW), device(), GUARD)
        allowed = np.arange(out_flat.numel()) < seq_len * ROW
        watch.add("out", out_flat, load=False, store=allowed,
                  where=lambda i: f"out[{i // ROW}, {i % ROW}]")
        grid = (-(-seq_len // tile),)
        if not launch(name, watch, kernel[grid], cache, table, out_flat, seq_len,
                      BLOCK_SIZE=bs, ROW=ROW, TILE=tile):
            return False
        if bool((out_flat == SENTINEL).all()):
            return wrote_nothing(name)
        used = -(-seq_len // bs)
        where = f"block_size {bs}, TILE {tile}, seq_len {seq_len}, block_table " \
                f"{table[:used].tolist()}"  # fmt: skip
        got, want = out.cpu(), gather_kv(cache, table, seq_len).cpu()
        unwritten = bool((got == SENTINEL).any())
        if stray := _stray(watch, out_flat, allowed):
            return wrong(name, where, stray, HINTS["one_d" if unwritten else "store"])
        if torch.equal(got, want):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        bad = int(torch.nonzero((got != want).any(1))[0])
        read, right = got[bad, 0].item(), int(want[bad, 0].item())
        if read == SENTINEL:
            return wrong(name, where, TOKEN.format(pos=bad, got="-", want=right), HINTS["tile"])
        p, c = torch.arange(seq_len)[:, None], torch.arange(ROW)[None, :]
        tb = _table_read(table, seq_len + 1)
        hint = next((ADDRESS_HINTS[r] for r, rule in ADDRESS_RULES.items() if r != "right" and
                     same(got, read_by_rule(flat, GUARD, rule(tb, p, bs, ROW, c)))),
                    HINTS["address"])  # fmt: skip
        if not float(read).is_integer():
            return wrong(name, where, TOKEN.format(pos=bad, got=read, want=right), hint)
        slot, want_slot = int(read) // ROW, right // ROW
        what = READ_FROM.format(pos=bad, slot=slot, block=slot // bs, offset=slot % bs,
                                want=want_slot, wblock=want_slot // bs, woffset=want_slot % bs)
        return wrong(name, where, what, hint)
    print(CORRECT.format(name=name, what=f"{len(GATHER_CASES)} cases: block sizes 1-16, tiles "
                                           "4-16, shuffled tables"))
    return True


# ---- step 3 · one tile of scores ----------------------------------------------------------------
# (block_size, TILE, seq_len, KV_HEADS, kv_head)
TILE_SCORES_CASES = ((4, 8, 13, 2, 1), (16, 8, 17, 2, 0), (1, 4, 6, 1, 0), (8, 16, 8, 2, 1),
                     (4, 4, 12, 4, 3))  # fmt: skip


def check_tile_scores_kernel(kernel) -> bool:
    """kernel[(cdiv(seq_len, TILE),)](q, k_cache, block_table, scores, seq_len, kv_head, scale,
    BLOCK_SIZE=, KV_HEADS=, HEAD_DIM=, TILE=): scores[pos] = scale * q . K[pos, kv_head] for
    pos < seq_len, -inf for the rest of the last tile.
    """
    from ..attention import gather_kv, steps

    name = "tile_scores_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (bs, tile, seq_len, kvh, h) in enumerate(TILE_SCORES_CASES):
        args = steps.make_case([seq_len], bs, kvh, kvh, seed=20 + k, poison=True)
        q, k_cache, table = args[0][0, h], args[1], args[3][0]
        D, scale = q.shape[0], q.shape[0] ** -0.5
        n_out = -(-seq_len // tile) * tile
        out_flat, out = output((n_out,), device(), 2 * tile)
        watch = paged_watch(*args, with_v=False)
        allowed = np.arange(out_flat.numel()) < n_out
        watch.add("scores", out_flat, load=False, store=allowed)
        grid = (n_out // tile,)
        if not launch(name, watch, kernel[grid], q, k_cache, table, out_flat, seq_len, h, scale,
                      BLOCK_SIZE=bs, KV_HEADS=kvh, HEAD_DIM=D, TILE=tile):
            return False
        if bool((out_flat == SENTINEL).all()):
            return wrote_nothing(name)
        where = f"block_size {bs}, TILE {tile}, seq_len {seq_len}, KV_HEADS {kvh}, kv_head {h}"
        got = out.cpu().double()
        s = gather_kv(k_cache, table, seq_len)[:, h].cpu().double() @ q.cpu().double() * scale
        want = torch.cat([s, s.new_full((n_out - seq_len,), float("-inf"))])
        if stray := _stray(watch, out_flat, allowed):
            return wrong(name, where, stray, HINTS["store"])
        if same(got, want, 1e-4):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        what = first_difference("scores", got, want, 1e-4)
        if same(got[:seq_len], s, 1e-4):
            return wrong(name, where, what, HINTS["neg_inf"])
        p, d = torch.arange(seq_len)[:, None], torch.arange(D)[None, :]
        tb, k_flat = _table_read(table, seq_len + 1), whole(k_cache)
        start = k_cache.storage_offset()
        rules = {**{r: (rule, kvh * D, h * D + d) for r, rule in ADDRESS_RULES.items()
                    if r != "right"},
                 "kv_head": (ADDRESS_RULES["right"], kvh * D, d),
                 "slot_heads": (ADDRESS_RULES["right"], D, h * D + d)}  # fmt: skip
        hint = None
        for r, (rule, row, c) in rules.items():
            keys = read_by_rule(k_flat, start, rule(tb, p, bs, row, c))
            if same(got[:seq_len], keys @ q.cpu().double() * scale, 1e-4):
                hint = HINTS.get(r) or ADDRESS_HINTS[r]
                break
        if hint is None and same(got[:seq_len], s / scale, 1e-4):
            hint = HINTS["scale"]
        if hint is None and torch.isnan(got[:seq_len]).any():
            hint = UNMASKED_LOAD if watch.describe("load") else HINTS["nan_read"]
        return wrong(name, where, what, hint)
    print(CORRECT.format(name=name, what=f"{len(TILE_SCORES_CASES)} cases: block sizes 1-16, "
                                           "tiles 4-16, 1-4 KV heads"))
    return True


from .kernels_attention import (  # noqa: E402  (the attention puzzles, in their own module)
    check_gqa_scores_kernel,
    check_merge_kernel,
    check_online_softmax_kernel,
)
