"""Slips of a token's address: its slot (chapter 3), its K row in the cache (chapter 6's kernels).

`ADDRESS_RULES` computes an address by the right rule and by each typical mistake, for one
number per slot (`slot`) or a row of numbers per slot (a kernel's K row). The slips of `slot` are
named here (`address.*`), and so are the kernels' hints for the same wrong rules (`KERNEL_HINTS`,
which `kernels.py` pairs with what a kernel stored).
"""

from __future__ import annotations

from ...text import msg
from .base import slip

# A token's K row address, in elements from the cache's start (row=1, c=0: its slot): tb = the
# table row as the kernel would read it, p = positions (a column), bs = block size, row = numbers
# per slot, c = the column(s) inside a slot.
ADDRESS_RULES = {
    "right": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p % bs) * row + c,
    "table_by_position": lambda tb, p, bs, row, c: (tb[p] * bs + p % bs) * row + c,
    "no_modulo": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p) * row + c,
    "no_table": lambda tb, p, bs, row, c: p * row + c,
    "slot_not_times_row": lambda tb, p, bs, row, c: tb[p // bs] * bs + p % bs + c,
    "block_plus_offset": lambda tb, p, bs, row, c: (tb[p // bs] + p % bs) * row + c,
    "div_mod_swapped": lambda tb, p, bs, row, c: (tb[p % bs] * bs + p // bs) * row + c,
}


PAST_BLOCK_END = msg(
    "your slot lies past the end of its block: the offset is larger than a block holds.",
    "슬롯이 블록 끝을 넘어갔습니다. 오프셋이 블록 하나에 들어가는 크기보다 큽니다.",
)


SWAPPED = msg(
    "the logical block and the offset inside it swapped places: the table was looked up by the "
    "offset, and the block number went where the offset belongs.",
    "논리 블록과 블록 안의 오프셋이 자리를 바꿨습니다. 테이블을 오프셋으로 찾았고, 오프셋 자리에는 "
    "논리 블록 번호가 들어갔습니다.",
)


def _slot_rule(name):
    """A slot by one of the address slips (`slips.ADDRESS_RULES`): one number per slot."""
    rule = ADDRESS_RULES[name]
    return lambda t, bs, p: rule(t, p, bs, 1, 0)


ADDRESS = {
    "address.no_table": slip(
        _slot_rule("no_table"),
        "you returned the token's logical position; the slot lies in the physical block "
        "that the block table names for it.",
        "토큰의 논리 위치를 그대로 반환했습니다. 슬롯은 블록 테이블이 가리키는 물리 블록 "
        "안에 있습니다.",
    ),
    "address.block_plus_offset": slip(
        _slot_rule("block_plus_offset"),
        "your slots of neighbouring blocks overlap: a block id counts blocks, not slots.",
        "이웃한 블록의 슬롯이 겹칩니다. 블록 id는 슬롯이 아니라 블록을 셉니다.",
    ),
    "address.no_modulo": (_slot_rule("no_modulo"), PAST_BLOCK_END),
    "address.div_mod_swapped": (_slot_rule("div_mod_swapped"), SWAPPED),
    "address.table_by_position": slip(
        _slot_rule("table_by_position"),
        "you looked the block table up by the token's position; it has one entry per logical "
        "block, not per token.",
        "블록 테이블을 토큰의 위치로 찾았습니다. 테이블에는 토큰마다가 아니라 논리 블록마다 항목이 하나 있습니다.",
    ),
}


# The kernels' hints for the same slips, by ADDRESS_RULES key: a K row read from a wrong address.
KERNEL_HINTS = {
    "table_by_position": msg(
        "you looked the block table up by token position; it holds one entry per logical "
        "block, not per token.",
        "블록 테이블을 토큰 위치로 찾았습니다. 테이블에는 토큰마다가 아니라 논리 블록마다 항목이 하나 있습니다.",
    ),
    "no_modulo": msg(
        "you read past the end of a block, into another block's slots: the offset inside a "
        "block came out larger than a block holds.",
        "블록 끝을 지나 다른 블록의 슬롯까지 읽었습니다. 블록 안의 오프셋이 블록 크기보다 커졌습니다.",
    ),
    "no_table": msg(
        "you read token pos from slot pos, as if the cache were contiguous: the block table "
        "was never consulted.",
        "캐시가 연속인 것처럼 토큰 pos를 슬롯 pos에서 읽었습니다. 블록 테이블을 한 번도 보지 않았습니다.",
    ),
    "slot_not_times_row": msg(
        "rows of different tokens overlap: a slot numbers tokens, and each token's row holds "
        "ROW numbers.",
        "서로 다른 토큰의 행이 겹칩니다. 슬롯은 토큰을 세고, 토큰마다 행에 숫자가 ROW개 있습니다.",
    ),
    "block_plus_offset": msg(
        "slots of neighbouring blocks overlap: a block id counts blocks, and each block holds "
        "BLOCK_SIZE rows.",
        "이웃한 블록의 슬롯이 겹칩니다. 블록 id는 블록을 세고, 블록마다 행이 BLOCK_SIZE개 있습니다.",
    ),
    "div_mod_swapped": SWAPPED,
}
