"""Typical slips, named once by concept: a wrong implementation and, where it is one, its hint.

A `Spec` picks its slips by name (`slips=("gather.pool_front", ...)`); `SLIPS[name]` is the
(wrong_fn, hint) pair `core.check` tries. Where two exercises make the same slip in a larger
function (the gather inside `decode_one_head`), `GATHERS[concept]` is the wrong reading itself,
(cache, block_table_row, seq_len) -> (tokens, num_kv_heads, head_dim), and the larger exercise
wraps it. The hints are bilingual (`paged.text.msg`) and name the slip, never the fix's code.
"""

from __future__ import annotations

from ..text import msg

__all__: list[str] = []  # used by the checkers


def _used(row, n, bs):
    """The block ids that hold a sequence of n tokens: the first ceil(n / bs) of its row."""
    return row[: -(-n // bs)].long()


def _stack_each(c, row, n):
    import torch

    return torch.stack([c[int(row[p // c.shape[1]]), p % c.shape[1]] for p in range(n)])


# ---- a token's slot (chapter 3) and its K row's address (chapter 6's kernels) ----
# A token's K row address (in elements from the cache's start; row=1, c=0: its slot) by the
# right rule and by the typical mistakes: tb = the table row as the kernel would read it, p = positions (column),
# bs = block size, row = numbers per slot, c = the column(s) inside a slot.
ADDRESS_RULES = {
    "right": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p % bs) * row + c,
    "table_by_position": lambda tb, p, bs, row, c: (tb[p] * bs + p % bs) * row + c,
    "no_modulo": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p) * row + c,
    "no_table": lambda tb, p, bs, row, c: p * row + c,
    "slot_not_times_row": lambda tb, p, bs, row, c: tb[p // bs] * bs + p % bs + c,
    "block_plus_offset": lambda tb, p, bs, row, c: (tb[p // bs] + p % bs) * row + c,
}

# ---- reading a sequence's K or V through its block table (chapters 5 and 7) ----
GATHERS = {
    "pool_front": lambda c, row, n: c.flatten(0, 1)[:n],
    "whole_last_block": lambda c, row, n: c[_used(row, n, c.shape[1])].flatten(0, 1),
    "last_block_missing": lambda c, row, n: c[row[: n // c.shape[1]].long()].flatten(0, 1)[:n],
    "sorted_ids": lambda c, row, n: c[_used(row, n, c.shape[1]).sort().values].flatten(0, 1)[:n],
    "stack_each": _stack_each,
}
LAST_BLOCK_MISSING = msg(
    "the tokens of the partly filled last block are missing.",
    "일부만 찬 마지막 블록의 토큰이 빠졌습니다.",
)

SLIPS = {
    "gather.pool_front": (
        GATHERS["pool_front"],
        msg(
            "the tokens come from the pool's first blocks, not from the sequence's: the block "
            "table was never consulted.",
            "토큰을 시퀀스의 블록이 아니라 풀의 앞쪽 블록에서 가져왔습니다. 블록 테이블을 한 번도 보지 않았습니다.",
        ),
    ),
    "gather.whole_last_block": (
        GATHERS["whole_last_block"],
        msg(
            "you returned more than seq_len rows: the padding of the partly filled last block "
            "came along.",
            "seq_len개보다 많은 행을 반환했습니다. 일부만 찬 마지막 블록의 빈 자리가 딸려 왔습니다.",
        ),
    ),
    "gather.last_block_missing": (GATHERS["last_block_missing"], LAST_BLOCK_MISSING),
    "gather.sorted_ids": (
        GATHERS["sorted_ids"],
        msg(
            "read the blocks in the table's order, not sorted by id: logical block i is "
            "block_table[i], whatever its id.",
            "블록을 id 순서가 아니라 테이블 순서대로 읽으세요. 논리 블록 i는 id와 상관없이 "
            "block_table[i]입니다.",
        ),
    ),
    "gather.stack_empty": (
        GATHERS["stack_each"],
        msg(
            "seq_len can be 0 (an empty sequence): return an empty (0, num_kv_heads, head_dim) "
            "tensor; torch.stack of an empty list raises.",
            "seq_len은 0일 수 있습니다(빈 시퀀스). 빈 (0, num_kv_heads, head_dim) 텐서를 반환하세요. "
            "빈 리스트에 torch.stack을 쓰면 예외가 납니다.",
        ),
    ),
}
