"""Slips of chapter 8's sharing: the blocks a fork holds, copy-on-write when a token is written."""

from __future__ import annotations

from .base import slip

FORK = {
    "fork.last_sample_writes": slip(
        lambda p, n, bs: -(-p // bs) + n,
        "you kept the shared, partly filled last block on top of one private block per "
        "sample; but the last sample to write finds it no longer shared and writes into it.",
        "공유된, 일부만 찬 마지막 블록을 샘플마다 생긴 개인 블록과 별도로 셌습니다. "
        "마지막으로 쓰는 샘플에게는 그 블록이 더는 공유되지 않으므로, 그 샘플은 그 블록에 "
        "그대로 씁니다.",
    ),
    "fork.stored_per_sample": slip(
        lambda p, n, bs: n * -(-(p + 1) // bs),
        "forked samples share the prompt's full blocks: those are stored once, not once per "
        "sample.",
        "fork된 샘플들은 프롬프트의 꽉 찬 블록을 공유합니다. 그 블록은 샘플마다가 아니라 한 "
        "번만 저장됩니다.",
    ),
    "fork.new_block_each": slip(
        lambda p, n, bs: -(-p // bs) + n - 1,
        "when the prompt fills its last block exactly, no sample can write into it: each "
        "sample takes a new block.",
        "프롬프트가 마지막 블록을 꽉 채우면 어느 샘플도 그 블록에 쓸 수 없습니다. 샘플마다 새 "
        "블록을 하나씩 가져옵니다.",
    ),
    "fork.own_last_block": slip(
        lambda p, n, bs: -(-(p + 1) // bs),
        "every sample writes its own token, so each one needs a last block of its own.",
        "샘플마다 자기 토큰을 쓰므로, 샘플마다 자기만의 마지막 블록이 필요합니다.",
    ),
}


def _write_with(
    copy_full=False,
    decrement=True,
    new_count=1,
    copy_private=False,
    swap_pair=False,
    full_count=1,
    old_count=None,
    leave_full=False,
    slot_in_old=False,
):
    """A copy-on-write with one slip, as a learner might write it (`old_count`: what the old
    block's count is set to instead of lowered by one; `leave_full`: a full shared last block
    is counted as left behind; `slot_in_old`: the slot is the shared block's, after the copy)."""

    def wrong(table, n, bs, free, refs):
        pair = None
        shared = bool(table) and (refs[table[-1]] > 1 or copy_private)
        if shared and leave_full and not n % bs:
            refs[table[-1]] -= 1
        if shared and (n % bs or copy_full):
            old, new = table[-1], free.pop()
            table[-1] = new
            refs[old] -= decrement
            if old_count is not None:
                refs[old] = old_count
            if new_count:
                refs[new] = new_count
            pair = (new, old) if swap_pair else (old, new)
            if slot_in_old:
                return old * bs + n % bs, pair
        if n == len(table) * bs:
            table.append(free.pop())
            if full_count:
                refs[table[-1]] = full_count
        return table[n // bs] * bs + n % bs, pair

    return wrong


COW = {
    "cow.slot_in_shared": slip(
        _write_with(slot_in_old=True),
        "after the copy, your slot still points into the shared block: the token would be "
        "written where the other sequences read.",
        "복사한 뒤에도 슬롯이 공유 블록을 가리킵니다. 토큰이 다른 시퀀스들이 읽는 블록에 "
        "쓰이게 됩니다.",
    ),
    "cow.copy_full": slip(
        _write_with(copy_full=True),
        "the shared last block is full, so the token starts a new block and nothing is written "
        "into the shared one: no copy is needed.",
        "공유된 마지막 블록이 꽉 찼으면 토큰은 새 블록에서 시작하고, 공유 블록에는 아무것도 쓰지 "
        "않습니다. 복사할 필요가 없습니다.",
    ),
    "cow.old_count_kept": slip(
        _write_with(decrement=False),
        "after the copy the old block's reference count is unchanged, although this sequence "
        "no longer holds it.",
        "복사한 뒤에도 옛 블록의 참조 카운트가 그대로입니다. 이 시퀀스는 이제 그 블록을 갖고 있지 않은데도요.",
    ),
    "cow.three_holders": slip(
        _write_with(old_count=1),
        "right when two sequences share the block, wrong when three do: after the copy the "
        "old block counts 1 holder, although two still hold it.",
        "두 시퀀스가 블록을 공유하면 맞고, 세 시퀀스가 공유하면 틀립니다. 복사한 뒤 옛 블록의 "
        "카운트가 1인데, 그 블록을 가진 시퀀스는 아직 둘입니다.",
    ),
    "cow.old_count_zero": slip(
        _write_with(old_count=0),
        "after the copy the old block counts 0 holders (or left refs), although the other "
        "sequences still hold it: the next free would hand it out while they read it.",
        "복사한 뒤 옛 블록의 카운트가 0이 되었습니다(또는 refs에서 빠졌습니다). 다른 시퀀스들이 "
        "아직 그 블록을 갖고 있는데도요. 다음 해제 때 그들이 읽는 중인 블록이 다른 곳에 "
        "내주어집니다.",
    ),
    "cow.full_count_dropped": slip(
        _write_with(leave_full=True),
        "when the shared last block is full, its count went down by one, although this "
        "sequence keeps holding it: the token goes into a new block, and the full one stays "
        "shared.",
        "공유된 마지막 블록이 꽉 찼을 때 그 블록의 카운트가 하나 줄었습니다. 이 시퀀스는 그 "
        "블록을 계속 갖고 있는데도요. 토큰은 새 블록에 들어가고, 꽉 찬 블록은 계속 공유됩니다.",
    ),
    "cow.copy_count_two": slip(
        _write_with(new_count=2),
        "the copy belongs to this sequence alone: its reference count starts at 1, not 2.",
        "복사본은 이 시퀀스만 갖습니다. 참조 카운트는 2가 아니라 1에서 시작합니다.",
    ),
    "cow.copy_missing": slip(
        _write_with(new_count=0),
        "the copy is missing from refs (or counts 0), although this sequence holds it.",
        "이 시퀀스가 복사본을 갖고 있는데 refs에 없거나 카운트가 0입니다.",
    ),
    "cow.copy_private": slip(
        _write_with(copy_private=True),
        "you copied a block that only this sequence holds (count 1).",
        "이 시퀀스만 가진 블록(카운트 1)을 복사했습니다.",
    ),
    "cow.pair_swapped": slip(
        _write_with(swap_pair=True),
        "your copy pair is the wrong way round: its first block is the one you copied into.",
        "복사 쌍의 순서가 거꾸로입니다. 쌍의 첫 블록이 복사해 넣은 블록입니다.",
    ),
    "cow.full_missing": slip(
        _write_with(full_count=0),
        "the block taken for a full last block is missing from refs (or counts 0), although "
        "this sequence holds it.",
        "마지막 블록이 꽉 차서 가져온 블록이 refs에 없거나 카운트가 0입니다. 이 시퀀스가 갖고 있는데도요.",
    ),
    "cow.bare_slot": slip(
        lambda *args: _write_with()(*args)[0],
        "you returned a bare slot; the spec asks for a pair.",
        "슬롯 하나만 반환했습니다. 명세는 쌍을 요구합니다.",
    ),
}
