"""Checkers for chapter 3: the slot mapping, wasted slots, and appending one token.

The ground truth is `PagedAllocator` itself: each case is a pool built with its public methods
(allocate, fork, append, free), and the expected answer is what the allocator does next. A
learner's `free` list is the allocator's free list read back to front, so that `free.pop()`
takes the block the allocator would take.
"""

from __future__ import annotations

from ..paging import PagedAllocator, num_blocks_for
from ..text import msg
from .contract import integer
from .core import NUM_RANDOM, Spec, checker, draws
from .slips import ADDRESS_RULES

# While the learner's function runs, the allocator's own answers raise (guard.forbidden).
FORBID = ["paged.paging", "paged.pool", "paged.model.cache"]  # slots, blocks, appends


def block_size_for(rng) -> int:
    """Block sizes biased to the edges: 1, small, a power of two, large."""
    return rng.choice((1, 1, 2, 3, 4, 16, 32, 256))


def random_state(rng, seq="s", others=True):
    """(num_blocks, block_size, seed, ops): `seq` and a few other sequences, some freed.

    Biased to block boundaries (a length on, just below and above a multiple of the block
    size, 0 tokens) and to the last free block (a pool with exactly one left, or none).
    """
    bs = block_size_for(rng)
    k = rng.randint(0, 4)
    n = max(0, k * bs + rng.choice((-1, 0, 0, 1, rng.randint(0, bs))))
    ops, held = [], num_blocks_for(n, bs)
    for i in range(rng.randint(0, 3) if others else 0):
        m = rng.randint(0, 3 * bs)
        ops.append(("allocate", f"x{i}", m))
        held += num_blocks_for(m, bs)
    ops.insert(rng.randint(0, len(ops)), ("allocate", seq, n))
    frees = [op[1] for op in ops if op[1] != seq and rng.random() < 0.5]
    ops += [("free", x) for x in frees]
    num_blocks = held + rng.choice((0, 1, 1, 2, 5))  # the last free block, or none
    return max(1, num_blocks), bs, rng.randint(0, 10**6), ops


__all__ = [
    "check_append_slot",
    "check_slot",
    "check_wasted_slots",
]


def replay(num_blocks: int, block_size: int, ops, seed: int | None = None) -> PagedAllocator:
    """A PagedAllocator after `ops`, each (method, *args): ("allocate", "s", 5), ("free", "s")."""
    a = PagedAllocator(num_blocks, block_size, seed=seed)
    for op, *args in ops:
        getattr(a, op)(*args)
    return a


def free_list(a: PagedAllocator) -> list[int]:
    """The learner's view of the free list: `free.pop()` takes the block the allocator takes."""
    return list(reversed(a.free_block_ids))


def _slot_pairs(rng):
    pairs = []
    for _ in range(NUM_RANDOM // 4):
        num_blocks, bs, seed, ops = random_state(rng)
        a = replay(num_blocks, bs, ops, seed)
        n = a.num_tokens("s")
        for p in {0, n - 1, rng.randint(0, max(0, n - 1)), min(bs, n - 1)} if n else ():
            pairs.append(((a.block_table("s"), bs, p), a.slot("s", p)))
    return pairs


def _slot_cases():
    pairs = []
    for num_blocks, block_size, seed, num_tokens, positions in (
        (40, 4, 7, 37, (0, 3, 4, 17, 36)),
        (12, 1, 3, 2, (1,)),
        (6, 16, 5, 16, (15,)),
    ):
        a = replay(num_blocks, block_size, [("allocate", "s", num_tokens)], seed)
        pairs += [((a.block_table("s"), block_size, p), a.slot("s", p)) for p in positions]
    return pairs


def _slot_rule(name):
    """A slot by one of the address slips (`slips.ADDRESS_RULES`): one number per slot."""
    rule = ADDRESS_RULES[name]
    return lambda t, bs, p: rule(t, p, bs, 1, 0)


SLOT = Spec(
    "slot",
    params=("block_table", "block_size", "position"),
    cases=_slot_cases,
    draw=_slot_pairs,
    slips=(
        (
            _slot_rule("no_table"),
            msg(
                "you returned the token's logical position; the slot lies in the physical block "
                "that the block table names for it.",
                "토큰의 논리 위치를 그대로 반환했습니다. 슬롯은 블록 테이블이 가리키는 물리 블록 "
                "안에 있습니다.",
            ),
        ),
        (
            _slot_rule("block_plus_offset"),
            msg(
                "your slots of neighbouring blocks overlap: a block id counts blocks, not slots.",
                "이웃한 블록의 슬롯이 겹칩니다. 블록 id는 슬롯이 아니라 블록을 셉니다.",
            ),
        ),
        (
            _slot_rule("no_modulo"),
            msg(
                "your slot lies past the end of its block: the offset is larger than a block holds.",
                "슬롯이 블록 끝을 넘어갔습니다. 오프셋이 블록 하나에 들어가는 크기보다 큽니다.",
            ),
        ),
        (
            _slot_rule("table_by_position"),
            msg(
                "you looked the block table up by the token's position; it has one entry per logical "
                "block, not per token.",
                "블록 테이블을 토큰의 위치로 찾았습니다. 테이블에는 토큰마다가 아니라 논리 블록마다 항목이 하나 있습니다.",
            ),
        ),
    ),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(block_table, block_size, position) -> flat slot index of that token (chapter 3).""",
)
check_slot = checker(SLOT)


def _wasted(num_tokens, block_size):  # the allocator's blocks for that many tokens
    a = PagedAllocator(num_blocks=num_tokens // block_size + 1, block_size=block_size)
    a.allocate("s", num_tokens)
    return a.num_used_blocks * block_size - num_tokens


def _wasted_case(rng):
    bs = block_size_for(rng)
    return max(0, rng.randint(0, 5) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs)))), bs


WASTED_SLOTS = Spec(
    "wasted_slots",
    params=("num_tokens", "block_size"),
    cases=[(0, 16), (1, 16), (15, 16), (16, 16), (17, 16), (100, 1), (33, 32)],
    answer=_wasted,
    draw=draws(_wasted_case, _wasted),
    slips=(
        (
            lambda n, bs: bs - n % bs,
            msg(
                "a full last block (or no block at all) wastes nothing; you counted a whole block "
                "of waste there.",
                "꽉 찬 마지막 블록(또는 블록이 하나도 없는 경우)은 낭비가 없습니다. 그 경우에 블록 "
                "하나만큼을 낭비로 셌습니다.",
            ),
        ),
        (
            lambda n, bs: n % bs,
            msg(
                "you counted the filled slots of the last block; count its empty ones.",
                "마지막 블록의 채워진 슬롯을 셌습니다. 빈 슬롯을 세세요.",
            ),
        ),
        (
            lambda n, bs: -(-n // bs) * bs,
            msg(
                "you returned every slot the sequence holds; only the empty ones in its last block "
                "are wasted.",
                "시퀀스가 가진 슬롯 전체를 반환했습니다. 낭비는 마지막 블록의 빈 슬롯뿐입니다.",
            ),
        ),
    ),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(num_tokens, block_size) -> empty slots in the sequence's last block (chapter 3).""",
)
check_wasted_slots = checker(WASTED_SLOTS)


# (num_blocks, block_size, seed, ops): the sequence "s" gets one more token.
_APPEND_STATES = (
    (6, 4, 2, [("allocate", "s", 0)]),  # an empty table
    (8, 4, 1, [("allocate", "s", 8)]),  # the last block is exactly full
    (8, 4, 4, [("allocate", "s", 9)]),  # room in the last block
    (5, 1, 6, [("allocate", "s", 3)]),  # block size 1: every token takes a block
    (3, 4, 0, [("allocate", "s", 8)]),  # the last free block
    (2, 4, 0, [("allocate", "s", 7)]),  # no free block, none needed
    (12, 4, 3, [("allocate", "x", 5), ("allocate", "s", 12), ("free", "x")]),  # scattered ids
    (4, 16, 8, [("allocate", "s", 31)]),  # the token fills the last slot of its block
)


def _append_pair(num_blocks, block_size, seed, ops):
    """(case, answer): the answer is what PagedAllocator.append does to the state."""
    a = replay(num_blocks, block_size, ops, seed)
    n = a.num_tokens("s")
    case = (a.block_table("s"), n, block_size, free_list(a))
    a.append("s", 1)
    return case, (a.slot("s", n), a.block_table("s"), free_list(a))


def _append_pairs():
    return [_append_pair(*state) for state in _APPEND_STATES]


def _random_appends(rng):
    pairs = []
    for _ in range(NUM_RANDOM):
        state = random_state(rng)
        a = replay(*state[:2], state[3], state[2])
        if a.blocks_needed_to_append("s") <= a.num_free_blocks:
            pairs.append(_append_pair(*state))
    return pairs


def observe_append(fn, args):
    """Call fn(table, num_tokens, block_size, free); compare (returned, table, free) afterwards."""
    table, _, _, free = args
    raw = fn(*args)
    return raw, (raw, list(table), list(free))


def show_append(value) -> str:
    if not (isinstance(value, tuple) and len(value) == 3):
        return repr(value)
    slot, table, free = value
    return f"{slot!r} (table {table}, free {free})"


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
_APPEND_MISTAKES = (
    (
        _not_empty,
        msg(
            "for a sequence with no block yet (0 tokens, an empty table) your function found no "
            "last block.",
            "아직 블록이 없는 시퀀스(토큰 0개, 빈 테이블)에서 함수가 마지막 블록을 찾지 못했습니다.",
        ),
    ),
    (
        _late,
        msg(
            "when num_tokens is a multiple of block_size your token went into the last block, "
            "which is already full.",
            "num_tokens가 block_size의 배수일 때 토큰이 이미 꽉 찬 마지막 블록에 들어갔습니다.",
        ),
    ),
    (_early, _EARLY),
    (lambda *args: _early(*args, into_new=True), _EARLY),
    (
        _append_with(offset="n"),
        msg(
            "your slot lies past the end of its block: the offset is larger than a block holds.",
            "슬롯이 블록 끝을 넘어갔습니다. 오프셋이 블록 하나에 들어가는 크기보다 큽니다.",
        ),
    ),
    (
        _append_with(take_front=True),
        msg(
            "the block you took is not the one free.pop() gives (the list's last).",
            "가져온 블록이 free.pop()이 주는 블록(리스트의 마지막)이 아닙니다.",
        ),
    ),
    (
        _append_with(keep=False),
        msg(
            "a block is gone from free, but table came back without it.",
            "free에서 블록 하나가 빠졌는데 table에는 그 블록이 없습니다.",
        ),
    ),
    (
        _append_with(logical=True),
        msg(
            "you returned the token's logical position; the slot is in the physical block the "
            "table names.",
            "토큰의 논리 위치를 반환했습니다. 슬롯은 table이 가리키는 물리 블록 안에 있습니다.",
        ),
    ),
)


APPEND_SLOT = Spec(
    "append_slot",
    params=("table", "num_tokens", "block_size", "free"),
    cases=_append_pairs,
    draw=_random_appends,
    slips=_APPEND_MISTAKES,
    observe=observe_append,
    show=show_append,
    mutable=("table", "free"),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(table, num_tokens, block_size, free) -> slot of one more token (chapter 3).

    Checks the returned slot and what fn did to `table` and `free`: a block is taken with
    `free.pop()` and appended to `table` only when the last block is full or there is none.
    The truth: `PagedAllocator.append` on the same state.
    """,
)
check_append_slot = checker(APPEND_SLOT)
