"""Slips of attention through a block table: the gather (chapters 5 and 7), the split-K merge,
and decode's softmax over one head.

`GATHERS[concept]` is a wrong reading itself, (cache, block_table_row, seq_len) -> (tokens,
num_kv_heads, head_dim): `gather`'s slips are those readings, and `decode_one_head`'s gather
slips wrap them.
"""

from __future__ import annotations

from ...text import msg


def _used(row, n, bs):
    """The block ids that hold a sequence of n tokens: the first ceil(n / bs) of its row."""
    return row[: -(-n // bs)].long()


def _stack_each(c, row, n):
    import torch

    return torch.stack([c[int(row[p // c.shape[1]]), p % c.shape[1]] for p in range(n)])


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

GATHER = {
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
