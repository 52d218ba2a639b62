"""Checkers for chapter 8: blocks shared by forked sequences, and copy-on-write.

The ground truth is `PagedAllocator` itself: each case is a pool built by allocating, forking,
appending and freeing, and the answer is what `append` (with its copy-on-write) does next.
"""

from __future__ import annotations

from ..experiments import blocks_held_by_samples
from ..paging import PagedAllocator
from ..text import msg
from ..workloads import Request
from .blocks import FORBID, block_size_for, free_list, replay
from .contract import integer, optional_integer
from .core import NUM_RANDOM, Spec, checker, draws

__all__ = [
    "check_blocks_after_fork",
    "check_write_slot",
]


def _blocks_after_fork(prompt_len, num_samples, block_size):  # the allocator, one token each
    request = Request(0, prompt_len=prompt_len, output_len=1)
    return blocks_held_by_samples([request], num_samples, block_size=block_size)


def _fork_case(rng):
    bs = block_size_for(rng)
    p = max(1, rng.randint(0, 4) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs))))
    return p, rng.choice((1, 2, 3, rng.randint(1, 9))), bs


BLOCKS_AFTER_FORK = Spec(
    "blocks_after_fork",
    params=("prompt_len", "num_samples", "block_size"),
    cases=[(10, 3, 4), (8, 3, 4), (1, 4, 16), (33, 2, 16), (32, 5, 16), (7, 1, 8), (5, 3, 1)],
    answer=_blocks_after_fork,
    draw=draws(_fork_case, _blocks_after_fork),
    slips=(
        (
            lambda p, n, bs: -(-p // bs) + n,
            msg(
                "you kept the shared, partly filled last block on top of one private block per "
                "sample; but the last sample to write finds it no longer shared and writes into it.",
                "공유된, 일부만 찬 마지막 블록을 샘플마다 생긴 개인 블록과 별도로 셌습니다. "
                "마지막으로 쓰는 샘플에게는 그 블록이 더는 공유되지 않으므로, 그 샘플은 그 블록에 "
                "그대로 씁니다.",
            ),
        ),
        (
            lambda p, n, bs: n * -(-(p + 1) // bs),
            msg(
                "forked samples share the prompt's full blocks: those are stored once, not once per "
                "sample.",
                "fork된 샘플들은 프롬프트의 꽉 찬 블록을 공유합니다. 그 블록은 샘플마다가 아니라 한 "
                "번만 저장됩니다.",
            ),
        ),
        (
            lambda p, n, bs: -(-p // bs) + n - 1,
            msg(
                "when the prompt fills its last block exactly, no sample can write into it: each "
                "sample takes a new block.",
                "프롬프트가 마지막 블록을 꽉 채우면 어느 샘플도 그 블록에 쓸 수 없습니다. 샘플마다 새 "
                "블록을 하나씩 가져옵니다.",
            ),
        ),
        (
            lambda p, n, bs: -(-(p + 1) // bs),
            msg(
                "every sample writes its own token, so each one needs a last block of its own.",
                "샘플마다 자기 토큰을 쓰므로, 샘플마다 자기만의 마지막 블록이 필요합니다.",
            ),
        ),
    ),
    forbid=(
        *FORBID,
        ("paged.experiments.blocks_held_by_samples", blocks_held_by_samples),
        ("PagedAllocator.fork", PagedAllocator.fork),
        "paged.experiments",
        "paged.model.shared_prompt",
    ),
    contract=lambda got, args: integer(got),
    doc="""fn(prompt_len, num_samples, block_size) -> blocks in use once every sample wrote 1 token.

    The prompt is prefilled, forked into num_samples samples and dropped; then each sample
    writes its first token (copy-on-write where it shares a partly filled block).
    """,
)
check_blocks_after_fork = checker(BLOCKS_AFTER_FORK)


# (num_blocks, block_size, seed, ops, seq): `seq` writes one more token.
_WRITE_STATES = (
    (8, 4, 1, [("allocate", "A", 6), ("fork", "A", "B")], "B"),  # shared, partly filled: copy
    (8, 4, 2, [("allocate", "A", 8), ("fork", "A", "B")], "B"),  # shared but full: new block
    (8, 4, 3, [("allocate", "A", 5)], "A"),  # private, room left: write in place
    (8, 4, 4, [("allocate", "A", 4), ("allocate", "C", 3)], "A"),  # private and full
    (8, 4, 5, [("allocate", "A", 6), ("fork", "A", "B"), ("append", "B", 1)], "A"),  # B copied
    (9, 4, 6, [("allocate", "A", 3), ("fork", "A", "B"), ("fork", "A", "C")], "C"),  # 3 holders
    (4, 4, 7, [("allocate", "A", 0)], "A"),  # an empty table
    (8, 1, 8, [("allocate", "A", 3), ("fork", "A", "B")], "B"),  # block size 1: never a copy
    (3, 4, 9, [("allocate", "A", 6), ("fork", "A", "B")], "B"),  # the copy takes the last block
)


def _refs(a) -> dict[int, int]:
    return {b: a.ref_count(b) for b in range(a.num_blocks) if a.ref_count(b)}


def _write_pair(num_blocks, block_size, seed, ops, seq):
    """(case, answer): the answer is what PagedAllocator.append does to the state."""
    a = replay(num_blocks, block_size, ops, seed)
    n = a.num_tokens(seq)
    case = (a.block_table(seq), n, block_size, free_list(a), _refs(a))
    copies = a.append(seq, 1)
    ret = (a.slot(seq, n), copies[0] if copies else None)
    return case, (ret, a.block_table(seq), free_list(a), _refs(a))


def _write_pairs():
    return [_write_pair(*state) for state in _WRITE_STATES]


def _random_writes(rng):
    """States with forks (two or three holders of a block), frees, appends after a fork."""
    pairs = []
    for _ in range(NUM_RANDOM):
        bs = block_size_for(rng)
        n = max(0, rng.randint(0, 3) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs))))
        ops = [("allocate", "A", n)]
        for child in ("B", "C")[: rng.randint(0, 2)]:
            ops.append(("fork", "A", child))
        holders = ["A", *(op[2] for op in ops if op[0] == "fork")]
        if len(holders) > 1 and rng.random() < 0.3:
            ops.append(("append", rng.choice(holders[1:]), 1))
        seq = rng.choice(holders)
        need = len(holders) * (n // bs + 3)
        num_blocks = need + rng.choice((0, 1, 2))
        try:
            a = replay(num_blocks, bs, ops, 0)
        except Exception:  # not enough blocks for this draw: draw again later
            continue
        if a.blocks_needed_to_append(seq) > a.num_free_blocks:
            continue
        pairs.append(_write_pair(num_blocks, bs, rng.randint(0, 10**6), ops, seq))
    return pairs


def observe_write(fn, args):
    """Call fn(table, num_tokens, block_size, free, refs); compare all four afterwards."""
    table, _, _, free, refs = args
    raw = fn(*args)
    ret = raw
    if isinstance(raw, tuple | list) and len(raw) == 2:  # a list [slot, [old, new]] will do
        ret = (raw[0], tuple(raw[1]) if isinstance(raw[1], tuple | list) else raw[1])
    counts = {b: c for b, c in refs.items() if c} if isinstance(refs, dict) else refs
    return raw, (ret, list(table), list(free), counts)


def show_write(value) -> str:
    if not (isinstance(value, tuple) and len(value) == 4):
        return repr(value)
    ret, table, free, refs = value
    refs = dict(sorted(refs.items())) if isinstance(refs, dict) else refs
    return f"{ret!r} (table {table}, free {free}, refs {refs})"


def _write_with(
    copy_full=False,
    decrement=True,
    new_count=1,
    copy_private=False,
    swap_pair=False,
    full_count=1,
    old_count=None,
    leave_full=False,
):
    """A copy-on-write with one slip, as a learner might write it (`old_count`: what the old
    block's count is set to instead of lowered by one; `leave_full`: a full shared last block
    is counted as left behind)."""

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
        if n == len(table) * bs:
            table.append(free.pop())
            if full_count:
                refs[table[-1]] = full_count
        return table[n // bs] * bs + n % bs, pair

    return wrong


_WRITE_MISTAKES = (
    (
        _write_with(copy_full=True),
        msg(
            "the shared last block is full, so the token starts a new block and nothing is written "
            "into the shared one: no copy is needed.",
            "공유된 마지막 블록이 꽉 찼으면 토큰은 새 블록에서 시작하고, 공유 블록에는 아무것도 쓰지 "
            "않습니다. 복사할 필요가 없습니다.",
        ),
    ),
    (
        _write_with(decrement=False),
        msg(
            "after the copy the old block's reference count is unchanged, although this sequence "
            "no longer holds it.",
            "복사한 뒤에도 옛 블록의 참조 카운트가 그대로입니다. 이 시퀀스는 이제 그 블록을 갖고 있지 않은데도요.",
        ),
    ),
    (
        _write_with(old_count=1),
        msg(
            "right when two sequences share the block, wrong when three do: after the copy the "
            "old block counts 1 holder, although two still hold it.",
            "두 시퀀스가 블록을 공유하면 맞고, 세 시퀀스가 공유하면 틀립니다. 복사한 뒤 옛 블록의 "
            "카운트가 1인데, 그 블록을 가진 시퀀스는 아직 둘입니다.",
        ),
    ),
    (
        _write_with(old_count=0),
        msg(
            "after the copy the old block counts 0 holders (or left refs), although the other "
            "sequences still hold it: the next free would hand it out while they read it.",
            "복사한 뒤 옛 블록의 카운트가 0이 되었습니다(또는 refs에서 빠졌습니다). 다른 시퀀스들이 "
            "아직 그 블록을 갖고 있는데도요. 다음 해제 때 그들이 읽는 중인 블록이 다른 곳에 "
            "내주어집니다.",
        ),
    ),
    (
        _write_with(leave_full=True),
        msg(
            "when the shared last block is full, its count went down by one, although this "
            "sequence keeps holding it: the token goes into a new block, and the full one stays "
            "shared.",
            "공유된 마지막 블록이 꽉 찼을 때 그 블록의 카운트가 하나 줄었습니다. 이 시퀀스는 그 "
            "블록을 계속 갖고 있는데도요. 토큰은 새 블록에 들어가고, 꽉 찬 블록은 계속 공유됩니다.",
        ),
    ),
    (
        _write_with(new_count=2),
        msg(
            "the copy belongs to this sequence alone: its reference count starts at 1, not 2.",
            "복사본은 이 시퀀스만 갖습니다. 참조 카운트는 2가 아니라 1에서 시작합니다.",
        ),
    ),
    (
        _write_with(new_count=0),
        msg(
            "the copy is missing from refs (or counts 0), although this sequence holds it.",
            "이 시퀀스가 복사본을 갖고 있는데 refs에 없거나 카운트가 0입니다.",
        ),
    ),
    (
        _write_with(copy_private=True),
        msg(
            "you copied a block that only this sequence holds (count 1).",
            "이 시퀀스만 가진 블록(카운트 1)을 복사했습니다.",
        ),
    ),
    (
        _write_with(swap_pair=True),
        msg(
            "your copy pair is the wrong way round: its first block is the one you copied into.",
            "복사 쌍의 순서가 거꾸로입니다. 쌍의 첫 블록이 복사해 넣은 블록입니다.",
        ),
    ),
    (
        _write_with(full_count=0),
        msg(
            "the block taken for a full last block is missing from refs (or counts 0), although "
            "this sequence holds it.",
            "마지막 블록이 꽉 차서 가져온 블록이 refs에 없거나 카운트가 0입니다. 이 시퀀스가 갖고 있는데도요.",
        ),
    ),
    (
        lambda *args: _write_with()(*args)[0],
        msg(
            "you returned a bare slot; the spec asks for a pair.",
            "슬롯 하나만 반환했습니다. 명세는 쌍을 요구합니다.",
        ),
    ),
)


def _write_types(raw, args):
    slot, copied = raw
    return integer(slot) or (
        None
        if copied is None
        else next((why for b in copied if (why := optional_integer(b))), None)
    )


WRITE_SLOT = Spec(
    "write_slot",
    params=("table", "num_tokens", "block_size", "free", "refs"),
    cases=_write_pairs,
    draw=_random_writes,
    slips=_WRITE_MISTAKES,
    observe=observe_write,
    show=show_write,
    mutable=("table", "free", "refs"),
    contract=_write_types,
    forbid=(*FORBID, ("PagedAllocator.fork", PagedAllocator.fork)),
    doc="""fn(table, num_tokens, block_size, free, refs) -> (slot, None) or (slot, (old, new)).

    Chapter 8's append with copy-on-write: checks the returned pair and what fn did to `table`,
    `free` and `refs`. The truth: `PagedAllocator.append` after allocate/fork/append/free.
    """,
)
check_write_slot = checker(WRITE_SLOT)
