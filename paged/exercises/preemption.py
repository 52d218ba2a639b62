"""Checkers for chapter 9: which requests a decode step preempts, and what a swap costs.

`pick_victims` is the build exercise: the paper's preemption policy (§4.5: "the latest requests
are preempted first", and a victim loses all of its blocks, "all-or-nothing"); what a swap moves
is then only `blocks_held` summed over the victims. Its ground truth is `Scheduler`: each case is
a real pool of running requests, and the answer is what one decode step of the scheduler preempts.
"""

from __future__ import annotations

import math

from ..paging import num_blocks_for
from ..preemption_cost import CostModel
from ..scheduler import Scheduler
from ..workloads import Request
from .engine.contract import real
from .engine.core import NUM_RANDOM, Spec, checker, draws, same_sequence
from .slips import of

__all__ = ["check_pick_victims", "check_swap_time"]
# The scheduler's whole surface, and what drives it: forbidden in its exercises.
SCHEDULER = (
    "paged.scheduler",
    "paged.prefill",
    "paged.admission",
    "paged.pool",
    "paged.paging",
    "paged.simulator",
)


def request_ids(rng, n: int) -> list:
    """n distinct ids in an arrival order that is neither alphabetical nor numeric (n >= 3).

    Ids are strings ("q7", "b12") or ints, so that "the latest" can never be told from the ids.
    """
    while True:
        if rng.random() < 0.3:
            ids = rng.sample(range(1, 60), n)
        else:
            ids = list(
                dict.fromkeys(
                    f"{rng.choice('abcdkmqrtxz')}{rng.randint(1, 40)}" for _ in range(3 * n)
                )
            )[:n]
        if len(ids) < n:
            continue
        numeric = [int(str(x).lstrip("abcdkmqrtxz")) for x in ids]
        orders = (sorted(ids, key=str), [x for _, x in sorted(zip(numeric, ids, strict=True))])
        if n < 3 or all(o != ids and o[::-1] != ids for o in orders):
            return ids


# (block_size, [(req_id, blocks_held, blocks_needed)] in arrival order, free_blocks)
_VICTIM_CASES = (
    (4, [("A", 2, 1), ("B", 3, 0), ("C", 1, 1)], 2),  # enough free: nobody is preempted
    (4, [("A", 2, 1), ("B", 1, 0)], 1),  # A takes the last free block
    (4, [("A", 2, 1), ("B", 1, 1), ("C", 1, 1), ("D", 1, 1)], 1),  # D goes, then C preempts itself
    (4, [("A", 1, 1), ("B", 1, 1), ("C", 1, 1), ("D", 5, 1)], 0),  # D's 5 blocks serve A, B, C
    (4, [("A", 1, 0), ("B", 1, 1), ("C", 1, 0), ("D", 1, 0)], 0),  # only B needs a block
    (4, [("A", 2, 0), ("B", 1, 0), ("C", 1, 1)], 0),  # C, the latest, preempts itself
    (1, [("A", 3, 1), ("B", 2, 1), ("C", 4, 1), ("D", 1, 1), ("E", 2, 1)], 2),  # block size 1
)


def _random_victims(rng):
    pairs = []
    for _ in range(NUM_RANDOM // 2):
        n = rng.choice((1, 2, 3, 4, 6))
        ids = request_ids(rng, n)
        bs = rng.choice((1, 2, 4, 16))
        running = [  # (req_id, blocks_held, blocks_needed): with blocks of 1, a token needs 1
            (r, rng.choice((1, 1, 2, rng.randint(1, 6))), 1 if bs == 1 else rng.choice((0, 1, 1)))
            for r in ids
        ]
        free = rng.choice((0, 0, 1, 2, rng.randint(0, n)))
        try:
            pairs.append(_victims_pair(bs, running, free))
        except (ValueError, AssertionError):  # a request the pool cannot hold: draw another
            continue
    return pairs


def _victims_pair(block_size, running, free_blocks):
    """(case, answer): the answer is what one decode step of the Scheduler preempts."""
    ids = [r for r, _, _ in running]
    requests = []
    for i, (_, held, need) in enumerate(running):  # a prompt that ends exactly where it must
        prompt_len = held * block_size - (0 if need else 1)
        assert num_blocks_for(prompt_len, block_size) == held, (held, need, block_size)
        requests.append(Request(i, prompt_len=prompt_len, output_len=2))
    num_blocks = sum(held for _, held, _ in running) + free_blocks
    s = Scheduler(
        requests, "paged", kv_slots=num_blocks * block_size, block_size=block_size, watermark=0.0
    )
    s.step()  # step 0: every request is admitted and its prompt prefilled
    assert len(s.running) == len(running) and s.allocator.num_free_blocks == free_blocks
    preempted = s.step().preempted  # step 1: one decode step
    case = (ids, {r: n for r, _, n in running}, free_blocks, {r: h for r, h, _ in running})
    return case, [ids[i] for i in preempted]


PICK_VICTIMS = Spec(
    "pick_victims",
    params=("running", "blocks_needed", "free_blocks", "blocks_held"),
    cases=lambda: [_victims_pair(*c) for c in _VICTIM_CASES],
    draw=_random_victims,
    slips=of("victims"),
    same=same_sequence,
    forbid=SCHEDULER,
    doc="""fn(running, blocks_needed, free_blocks, blocks_held) -> preempted req_ids, in order.

    One decode step (chapter 9): `running` lists request ids in arrival order; each, in turn,
    stores one token and needs `blocks_needed[r]` (0 or 1) new blocks for it; when fewer are
    free, the latest-arrived running request is preempted and frees all `blocks_held` of its
    blocks, until the request fits or was itself preempted. The truth: `Scheduler.step`.
    """,
)
check_pick_victims = checker(PICK_VICTIMS)


def _swap_time_truth(nb, bs, bpt, layers, bw, lat):
    model = CostModel(
        bytes_per_token=bpt, num_layers=layers, pcie_bytes_per_s=bw, transfer_latency_s=lat
    )
    return model.swap_time(nb, bs)


_SWAP_TIME_CASES = [
    (10, 16, 819_200, 40, 25e9, 10e-6),
    (1, 1, 1000, 2, 1e6, 1e-3),
    (7, 256, 131_072, 32, 25e9, 5e-6),
    (0, 16, 819_200, 40, 25e9, 10e-6),
]


def _swap_time_same(got, want):  # NumPy float32 and friends will do: float32 holds ~7 digits
    return real(got) is None and math.isclose(float(got), want, rel_tol=2e-6, abs_tol=1e-15)


def _swap_time_case(rng):
    return (
        rng.choice((0, 1, 2, rng.randint(1, 5000))),
        rng.choice((1, 16, 256)),
        rng.choice((1, 2048, 819_200, rng.randint(1, 10**6))),
        rng.choice((1, 2, 80)),
        rng.choice((1e6, 25e9, 64e9, rng.uniform(1e8, 1e11))),
        rng.choice((1e-9, 1e-6, 10e-6, 1e-3, rng.uniform(1e-7, 1e-4))),
    )


SWAP_TIME = Spec(
    "swap_time",
    params=(
        "num_blocks",
        "block_size",
        "bytes_per_token",
        "num_layers",
        "bytes_per_s",
        "latency_s",
    ),
    cases=_SWAP_TIME_CASES,
    answer=_swap_time_truth,
    draw=draws(_swap_time_case, _swap_time_truth),
    slips=of("swap"),
    same=_swap_time_same,
    forbid=["paged.preemption_cost"],
    doc="""fn(num_blocks, block_size, bytes_per_token, num_layers, bytes_per_s, latency_s)
    -> seconds.

    Chapter 9's cost model: one transfer per block, per layer, for K and for V; each costs a
    fixed latency plus its bytes over the bandwidth. The truth: `CostModel.swap_time`.
    """,
)
check_swap_time = checker(SWAP_TIME)
