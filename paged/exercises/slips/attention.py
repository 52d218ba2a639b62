"""Slips of attention through a block table: the gather (chapters 5 and 7), the split-K merge.

`GATHERS[concept]` is a wrong reading itself, (cache, block_table_row, seq_len) -> (tokens,
num_kv_heads, head_dim): `gather`'s slips are those readings, and `decode_one_head`'s gather
slips wrap them (`decode.py`).
"""

from __future__ import annotations

import math

from ...text import msg
from .base import slip


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
    "gather.pool_front": slip(
        GATHERS["pool_front"],
        "the tokens come from the pool's first blocks, not from the sequence's: the block "
        "table was never consulted.",
        "토큰을 시퀀스의 블록이 아니라 풀의 앞쪽 블록에서 가져왔습니다. 블록 테이블을 한 번도 보지 않았습니다.",
    ),
    "gather.whole_last_block": slip(
        GATHERS["whole_last_block"],
        "you returned more than seq_len rows: the padding of the partly filled last block "
        "came along.",
        "seq_len개보다 많은 행을 반환했습니다. 일부만 찬 마지막 블록의 빈 자리가 딸려 왔습니다.",
    ),
    "gather.last_block_missing": (GATHERS["last_block_missing"], LAST_BLOCK_MISSING),
    "gather.sorted_ids": slip(
        GATHERS["sorted_ids"],
        "read the blocks in the table's order, not sorted by id: logical block i is "
        "block_table[i], whatever its id.",
        "블록을 id 순서가 아니라 테이블 순서대로 읽으세요. 논리 블록 i는 id와 상관없이 "
        "block_table[i]입니다.",
    ),
    "gather.stack_empty": slip(
        GATHERS["stack_each"],
        "seq_len can be 0 (an empty sequence): return an empty (0, num_kv_heads, head_dim) "
        "tensor; torch.stack of an empty list raises.",
        "seq_len은 0일 수 있습니다(빈 시퀀스). 빈 (0, num_kv_heads, head_dim) 텐서를 반환하세요. "
        "빈 리스트에 torch.stack을 쓰면 예외가 납니다.",
    ),
}


# ---- the split-K merge (chapter 7) ----
def _weighted(parts, weights, normalise=True):
    total = sum(w * o for w, (o, _) in zip(weights, parts, strict=True))
    return total / sum(weights) if normalise else total


def _log_mass(parts):
    """log of the summed exp(lse), computed in the lse's own dtype (no max taken first)."""
    import torch

    return torch.stack([x for _, x in parts]).exp().sum().log()


def _top(parts):
    return max(float(lse) for _, lse in parts)


MERGE_NO_MAX = msg(
    "NaN once the log-sum-exps are far from 0: exp(850) is inf (even in float64, which "
    "ends near exp(709)), exp(-1000) is 0, and inf / inf or 0 / 0 is NaN.",
    "log-sum-exp가 0에서 멀어지면 NaN이 나옵니다. exp(850)은 inf이고(float64도 exp(709) "
    "근처가 끝입니다), exp(-1000)은 0이며, inf / inf나 0 / 0은 NaN입니다.",
)
MERGE_NOT_LARGEST = msg(
    "NaN or inf when the partitions' log-sum-exps lie hundreds apart: what you subtract "
    "before exp() still leaves some exponent above what a float holds.",
    "파티션들의 log-sum-exp가 수백씩 떨어져 있으면 NaN이나 inf가 나옵니다. exp() 전에 빼는 "
    "값을 빼고도 어떤 지수는 여전히 부동소수점이 담을 수 있는 범위를 넘습니다.",
)


def _minus(parts, c):
    return _weighted(
        parts,
        [math.exp(float(lse) - c) if float(lse) - c < 709 else math.inf for _, lse in parts],
    )


def _finite_mean(parts):
    lses = [float(lse) for _, lse in parts if math.isfinite(float(lse))]
    return sum(lses) / len(lses)


MERGE = {
    "merge.equal_average": slip(
        lambda parts: sum(o for o, _ in parts) / len(parts),
        "you averaged the partitions equally; each one counts by its share of the softmax "
        "mass, which its lse tells.",
        "파티션들을 똑같이 평균했습니다. 각 파티션은 lse가 알려 주는 softmax 질량의 몫만큼 "
        "반영됩니다.",
    ),
    "merge.lse_weights": slip(
        lambda parts: _weighted(parts, [lse for _, lse in parts]),
        "you weighted by lse itself, but lse is a logarithm: the logarithm of the "
        "partition's softmax mass, not the mass.",
        "lse 자체로 가중했습니다. 그런데 lse는 로그입니다. 파티션의 softmax 질량이 아니라 "
        "그 질량의 로그입니다.",
    ),
    "merge.no_max": (lambda parts: _weighted(parts, [lse.exp() for _, lse in parts]), MERGE_NO_MAX),
    "merge.no_max_floats": (
        lambda parts: _weighted(parts, [math.exp(lse) for _, lse in parts]),
        MERGE_NO_MAX,
    ),
    "merge.no_max_normalised": (
        lambda parts: _weighted(
            parts,
            [(lse - _log_mass(parts)).exp() for _, lse in parts],
            False,
        ),
        MERGE_NO_MAX,
    ),
    "merge.minus_first": (lambda parts: _minus(parts, float(parts[0][1])), MERGE_NOT_LARGEST),
    "merge.minus_mean": (lambda parts: _minus(parts, _finite_mean(parts)), MERGE_NOT_LARGEST),
    "merge.unnormalised": slip(
        lambda parts: _weighted(parts, [math.exp(lse - _top(parts)) for _, lse in parts], False),
        "your output is the answer times a constant: the weights do not add up to 1.",
        "출력이 정답에 상수를 곱한 값입니다. 가중치의 합이 1이 아닙니다.",
    ),
    "merge.largest_only": slip(
        lambda parts: max(parts, key=lambda p: float(p[1]))[0],
        "you kept only the partition with the largest lse; every partition contributes.",
        "lse가 가장 큰 파티션만 남겼습니다. 모든 파티션이 결과에 기여합니다.",
    ),
}
