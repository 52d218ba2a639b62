"""Checker for chapter 10: which waiting requests one step admits, under paging.

`admit` is the build exercise: the admission rule of the course's scheduler (the spec's doc), the
rule that sets how many requests run together in one KV budget (chapter 10's peak batch on a real
model). The ground truth is `paged.scheduler.Scheduler`: each case is a pool of exactly
`free_blocks` free blocks with the requests queued at once, and the answer is what the
scheduler's first step admits.
"""

from __future__ import annotations

from ..scheduler import Scheduler
from ..workloads import Request
from .engine.core import NUM_RANDOM, Spec, checker, same_sequence
from .preemption import SCHEDULER, request_ids
from .slips import of

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
            p = min(rng.choice((1, bs, max(1, final - 1), rng.randint(1, final - 1))), final - 1)
            waiting.append((r, p, final - p))
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
    slips=of("admission"),
    same=same_sequence,
    forbid=SCHEDULER,
    doc="""fn(waiting, free_blocks, block_size, watermark_blocks) -> admitted req_ids, in order.

    One step's admission under paging (chapter 10): `waiting` lists (req_id, prompt_len,
    max_new_tokens) in arrival order; each request in turn takes ceil(prompt_len / block_size)
    blocks if that many plus `watermark_blocks` are free, and the first that does not fit stops
    the walk (FCFS); `waiting` stays as it was. The truth: `Scheduler.step` on a pool of
    `free_blocks` free blocks.
    """,
)
check_admit = checker(SPEC)
