"""Slips of chapter 3's blocks: the waste in a sequence's last block, appending one token."""

from __future__ import annotations

from ...text import msg
from .address import PAST_BLOCK_END
from .base import slip

WASTED = {
    "wasted.full_block_wasted": slip(
        lambda n, bs: bs - n % bs,
        "a full last block (or no block at all) wastes nothing; you counted a whole block "
        "of waste there.",
        "꽉 찬 마지막 블록(또는 블록이 하나도 없는 경우)은 낭비가 없습니다. 그 경우에 블록 "
        "하나만큼을 낭비로 셌습니다.",
    ),
    "wasted.filled_slots": slip(
        lambda n, bs: n % bs,
        "you counted the filled slots of the last block; count its empty ones.",
        "마지막 블록의 채워진 슬롯을 셌습니다. 빈 슬롯을 세세요.",
    ),
    "wasted.every_slot": slip(
        lambda n, bs: -(-n // bs) * bs,
        "you returned every slot the sequence holds; only the empty ones in its last block "
        "are wasted.",
        "시퀀스가 가진 슬롯 전체를 반환했습니다. 낭비는 마지막 블록의 빈 슬롯뿐입니다.",
    ),
}


def _late(table, n, bs, free):
    if n > len(table) * bs:
        table.append(free.pop())
    return table[-1] * bs + n % bs


def _early(table, n, bs, free, into_new=False):
    if n + 1 >= len(table) * bs:
        table.append(free.pop())
    return (table[-1] if into_new else table[n // bs]) * bs + n % bs


def _not_empty(table, n, bs, free):
    if n % bs == 0 and n > 0:
        table.append(free.pop())
    return table[-1] * bs + n % bs


def _append_with(take_front=False, keep=True, offset=None, logical=False):
    def wrong(table, n, bs, free):
        block = None
        if n == len(table) * bs:
            block = free.pop(0) if take_front else free.pop()
            if keep:
                table.append(block)
        if logical:
            return n
        block = table[-1] if block is None else block
        return block * bs + (n if offset == "n" else n % bs)

    return wrong


_EARLY = msg(
    "you took a new block one token early: the token that fills the last slot still goes into "
    "the current block.",
    "한 토큰 일찍 새 블록을 가져왔습니다. 마지막 빈 슬롯을 채우는 토큰은 아직 지금 블록에 "
    "들어갑니다.",
)
APPEND = {
    "append.no_last_block": slip(
        _not_empty,
        "for a sequence with no block yet (0 tokens, an empty table) your function found no "
        "last block.",
        "아직 블록이 없는 시퀀스(토큰 0개, 빈 테이블)에서 함수가 마지막 블록을 찾지 못했습니다.",
    ),
    "append.late": slip(
        _late,
        "when num_tokens is a multiple of block_size your token went into the last block, "
        "which is already full.",
        "num_tokens가 block_size의 배수일 때 토큰이 이미 꽉 찬 마지막 블록에 들어갔습니다.",
    ),
    "append.early": (_early, _EARLY),
    "append.early_into_new": (lambda *args: _early(*args, into_new=True), _EARLY),
    "append.past_block_end": (_append_with(offset="n"), PAST_BLOCK_END),
    "append.take_front": slip(
        _append_with(take_front=True),
        "the block you took is not the one free.pop() gives (the list's last).",
        "가져온 블록이 free.pop()이 주는 블록(리스트의 마지막)이 아닙니다.",
    ),
    "append.table_not_kept": slip(
        _append_with(keep=False),
        "a block is gone from free, but table came back without it.",
        "free에서 블록 하나가 빠졌는데 table에는 그 블록이 없습니다.",
    ),
    "append.logical": slip(
        _append_with(logical=True),
        "you returned the token's logical position; the slot is in the physical block the "
        "table names.",
        "토큰의 논리 위치를 반환했습니다. 슬롯은 table이 가리키는 물리 블록 안에 있습니다.",
    ),
}
