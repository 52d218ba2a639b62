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


# ---- symptoms: what a wrong output got wrong, for a hint when no slip explains it ----
# A Triton puzzle's (`kernel_runner.symptom` picks one, element by element and row by row):
KERNEL_SYMPTOMS = {
    "nonfinite": msg(
        "the output holds NaN or inf where the answer is finite.",
        "답이 유한한 자리에 출력이 NaN이나 inf를 담고 있습니다.",
    ),
    "factor": msg(
        "every wrong row is off by a constant factor: each row has the right shape, scaled by "
        "one number.",
        "틀린 행마다 일정한 배수만큼 어긋났습니다. 행의 모양은 맞지만 수 하나가 곱해져 있습니다.",
    ),
    "precision": msg(
        "close, but only to about three significant digits (float16's precision): somewhere the "
        "numbers lost bits that float32 keeps.",
        "가깝지만 유효숫자 세 자리 정도(float16의 정밀도)까지만 맞습니다. 어딘가에서 float32라면 "
        "남았을 비트를 잃었습니다.",
    ),
    "only": msg(
        "the output is wrong only {region}; everywhere else it is right.",
        "출력은 {region}에서만 틀렸고, 나머지는 모두 맞습니다.",
    ),
}


# A plain-Python exercise's, case by case (`Spec.symptoms` pairs them with the exercise's words):
def on_every(test):
    """A `Spec.symptoms` predicate: test(got, want) holds on every case the learner got wrong."""
    return lambda triples: all(test(g, w) for g, w, _ in triples)


def nan_where_finite(got, want) -> bool:
    """NaN or inf (or an overflow raised) where the answer is finite."""
    import torch

    if hasattr(got, "error"):  # core.Raised: the call raised
        overflowed = isinstance(got.error, OverflowError | ZeroDivisionError)
    else:
        overflowed = isinstance(got, torch.Tensor) and not bool(torch.isfinite(got).all())
    return overflowed and bool(torch.isfinite(want).all())


def constant_factor(got, want) -> bool:
    """Every number of got is the same number times want's."""
    import torch

    if not isinstance(got, torch.Tensor) or got.shape != want.shape or not got.numel():
        return False
    ratio = got.double() / want.double()
    return bool(torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-3))


def constant_factor_by_row(got, want, bad) -> bool:
    """A kernel's output: every wrong row of got is one number times the same row of want (that
    number not 1)."""
    import torch

    rows_g, rows_w = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    rows_bad = bad.reshape(-1, bad.shape[-1]).any(1)
    if not bool(rows_bad.any()):
        return False
    for g, w in zip(rows_g[rows_bad], rows_w[rows_bad], strict=True):
        ok = torch.isfinite(w) & (w.abs() > 1e-9)
        if not bool(ok.any()) or not bool(torch.isfinite(g[ok]).all()):
            return False
        ratio = g[ok] / w[ok]
        if not bool(torch.isclose(ratio, ratio[0].expand_as(ratio), rtol=1e-4).all()):
            return False
        if abs(float(ratio[0]) - 1) < 1e-3 or not bool(
            torch.isclose(g[~ok], w[~ok] * ratio[0], equal_nan=True).all()
        ):
            return False
    return True
