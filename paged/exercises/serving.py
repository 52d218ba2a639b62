"""Checker for chapter 10: which waiting requests one step admits, under paging.

`admit` is the build exercise: the admission rule of the course's scheduler, the rule that sets
how many requests run together in one KV budget (the peak batch chapter 10 measures on a real
model). Under paging a new request takes blocks for the tokens it holds now, its prompt, and not
for the `max_new_tokens` it may write later (the contiguous `max_new_tokens` reservation takes those too); the
queue is served first come, first served, and admission keeps a watermark of blocks free for the
running requests to grow into. The ground truth is `paged.scheduler.Scheduler`: each case is a
pool of exactly `free_blocks` free blocks with the requests queued at once, and the answer is
what the scheduler's first step admits.
"""

from __future__ import annotations

from ..scheduler import Scheduler
from ..text import msg
from ..workloads import Request
from .core import NUM_RANDOM, Spec, checker, same_sequence
from .preemption import request_ids

__all__ = ["check_admit"]

# (block_size, free_blocks, watermark_blocks, [(req_id, prompt_len, max_new_tokens)] in FCFS
# order). Every request fits the empty pool at its final length (the scheduler refuses others).
_ADMIT_CASES = (
    (4, 10, 1, [("A", 10, 16), ("B", 7, 20), ("C", 12, 4), ("D", 5, 8)]),  # D finds 2 free
    (4, 8, 1, [("A", 12, 4), ("B", 17, 4), ("C", 3, 4)]),  # B does not fit; C would
    (4, 6, 1, [("A", 8, 4), ("B", 12, 4)]),  # B leaves exactly the watermark free
    (4, 7, 0, [("A", 8, 4), ("B", 8, 4), ("C", 4, 4)]),  # prompts that fill whole blocks
    (1, 40, 2, [("A", 10, 5), ("B", 20, 5), ("C", 9, 5)]),  # block size 1
    (16, 20, 0, [("A", 40, 200), ("B", 35, 200), ("C", 70, 200), ("D", 38, 200)]),  # long caps
    (16, 5, 0, []),  # nobody waits
)


def _admit_pair(block_size, free_blocks, watermark_blocks, waiting):
    """(case, answer): the answer is what the Scheduler's first step admits from an empty pool."""
    requests = [Request(i, prompt_len=p, output_len=n) for i, (_, p, n) in enumerate(waiting)]
    s = Scheduler(
        requests,
        "paged",
        kv_slots=free_blocks * block_size,
        block_size=block_size,
        watermark=(watermark_blocks + 0.5) / free_blocks,
    )
    assert s.config.watermark_blocks == watermark_blocks
    assert s.allocator.num_free_blocks == free_blocks
    admitted = s.step().admitted
    return (waiting, free_blocks, block_size, watermark_blocks), [waiting[i][0] for i in admitted]


def _rule(
    blocks=lambda p, n, bs: -(-p // bs),
    skip=False,
    watermark=True,
    take=True,
    strict=False,
    per_request=False,
):
    """The admission walk with one slip, as a learner might write it."""

    def wrong(waiting, free_blocks, block_size, watermark_blocks):
        wm = watermark_blocks if watermark else 0
        free, admitted = free_blocks, []
        for req_id, prompt_len, max_new_tokens in waiting:
            need = blocks(prompt_len, max_new_tokens, block_size)
            if need + wm > free or (strict and need + wm == free):
                if skip:
                    continue
                break
            admitted.append(req_id)
            if take:
                free -= need + (wm if per_request else 0)
        return admitted

    return wrong


_ADMIT_MISTAKES = (
    (
        _rule(blocks=lambda p, n, bs: -(-(p + n) // bs)),
        msg(
            "you reserved prompt + max_new_tokens, as the contiguous max_new_tokens reservation "
            "does; paging takes blocks only for the tokens a request holds now, its prompt.",
            "프롬프트 + max_new_tokens만큼 예약했습니다. 연속 할당의 max_new_tokens 예약이 "
            "그렇게 합니다. 페이징은 요청이 지금 가진 토큰, 곧 프롬프트만큼만 블록을 가져갑니다.",
        ),
    ),
    (
        _rule(skip=True),
        msg(
            "admission is first come, first served: when the request at the head of the queue does "
            "not fit, the ones behind it wait too, even those that would fit.",
            "수락은 선착순입니다. 대기열 맨 앞의 요청이 들어가지 못하면, 그 뒤의 요청은 들어갈 수 "
            "있더라도 함께 기다립니다.",
        ),
    ),
    (
        _rule(watermark=False),
        msg(
            "you admitted a request that leaves fewer than watermark_blocks free.",
            "요청을 수락한 뒤 빈 블록이 watermark_blocks보다 적게 남았습니다.",
        ),
    ),
    (
        _rule(blocks=lambda p, n, bs: p // bs),
        msg(
            "a prompt that ends partway into a block got one block too few.",
            "블록 중간에서 끝나는 프롬프트가 블록을 하나 덜 받았습니다.",
        ),
    ),
    (
        _rule(take=False),
        msg(
            "each admitted request takes its blocks: the requests after it find fewer free blocks.",
            "수락된 요청은 블록을 가져갑니다. 그 뒤의 요청에게는 빈 블록이 그만큼 줄어듭니다.",
        ),
    ),
    (
        _rule(strict=True),
        msg(
            "a request whose blocks plus the watermark equal the free blocks exactly still fits.",
            "요청의 블록에 워터마크를 더한 값이 빈 블록 수와 정확히 같아도 들어갑니다.",
        ),
    ),
    (
        _rule(per_request=True),
        msg(
            "the watermark is kept free once for the whole pool, not once per admitted request.",
            "워터마크는 수락한 요청마다가 아니라 풀 전체에 한 번만 비워 둡니다.",
        ),
    ),
    (
        _rule(blocks=lambda p, n, bs: -(-(p + 1) // bs)),
        msg(
            "the first new token is sampled from the prompt's last position and stored in the next "
            "step: admission takes blocks for the prompt alone.",
            "첫 새 토큰은 프롬프트의 마지막 위치에서 샘플링되고 다음 단계에 저장됩니다. 수락할 때는 "
            "프롬프트만큼의 블록만 가져갑니다.",
        ),
    ),
)


def _random_admits(rng):
    pairs = []
    for _ in range(NUM_RANDOM // 2):
        bs = rng.choice((1, 2, 4, 16))
        free = rng.choice((1, 2, 5, 12, 40))
        n = rng.choice((0, 1, 3, 4, 6))
        ids = request_ids(rng, n) if n else []
        waiting = []
        for r in ids:  # each fits the empty pool at its final length
            final = rng.randint(2, max(2, free * bs))
            p = rng.choice((1, bs, max(1, final - 1), rng.randint(1, final - 1)))
            waiting.append((r, min(p, final - 1), final - min(p, final - 1)))
        wm = rng.choice((0, 0, 1, 2)) if free > 4 else 0
        try:
            pairs.append(_admit_pair(bs, free, wm, waiting))
        except (ValueError, AssertionError):  # a pool the scheduler refuses: draw another
            continue
    return pairs


SPEC = Spec(
    "admit",
    params=("waiting", "free_blocks", "block_size", "watermark_blocks"),
    cases=lambda: [_admit_pair(*c) for c in _ADMIT_CASES],
    draw=_random_admits,
    slips=_ADMIT_MISTAKES,
    same=same_sequence,
    forbid=(  # the scheduler's whole surface, and what drives it
        "paged.scheduler",
        "paged.admission",
        "paged.pool",
        "paged.paging",
        "paged.simulator",
    ),
    doc="""fn(waiting, free_blocks, block_size, watermark_blocks) -> admitted req_ids, in order.

    One step's admission under paging (chapter 10): `waiting` lists (req_id, prompt_len,
    max_new_tokens) in arrival order; each request in turn takes ceil(prompt_len / block_size)
    blocks if that many plus `watermark_blocks` are free, and the first that does not fit stops
    the walk (FCFS). The truth: `Scheduler.step` on a pool of `free_blocks` free blocks.
    """,
)
check_admit = checker(SPEC)
