"""Checkers for the sizing chapters: KV bytes per token (1), Pow2 reservation (2), Fig. 2 (4).

The ground truth is the library: `ModelSpec.bytes_per_token`, `ContiguousAllocator.reservation`
and the breakdown that `simulate` reports for a run, given that run's own trace.
"""

from __future__ import annotations

import math

from ..contiguous import POLICIES, ContiguousAllocator, next_pow2
from ..kv import PRESETS, ModelSpec, bytes_per_token
from ..simulator import simulate
from ..trace import CATEGORIES, HEADERS
from ..workloads import Request, sharegpt_like
from .engine.contract import each, integer, real
from .engine.core import Spec, checker, draws
from .slips import of

__all__ = ["check_breakdown", "check_bytes_per_token", "check_pow2_reservation"]


def _edge(rng, values, lo, hi):
    """One of the edge `values` half of the time, else uniform in [lo, hi]."""
    return rng.choice(values) if rng.random() < 0.5 else rng.randint(lo, hi)


_BYTES_PER_TOKEN_CASES = [
    *((s.num_layers, s.num_kv_heads, s.head_dim, s.dtype_bytes) for s in PRESETS.values()),
    (1, 1, 1, 1),
    (3, 5, 7, 1),
    (256, 256, 1024, 8),  # the promised range's far end: 2^30 bytes a token
]


def _bytes_per_token_truth(n, h, d, b):
    return bytes_per_token(
        ModelSpec("case", num_layers=n, num_kv_heads=h, head_dim=d, dtype_bytes=b)
    )


def _bytes_per_token_case(rng):
    return (
        _edge(rng, (1, 2, 80, 128), 1, 96),
        _edge(rng, (1, 3, 96), 1, 64),
        _edge(rng, (1, 64, 128, 256), 1, 300),
        rng.choice((1, 2, 4, 8)),
    )


BYTES_PER_TOKEN = Spec(
    "bytes_per_token",
    params=("num_layers", "num_kv_heads", "head_dim", "dtype_bytes"),
    cases=_BYTES_PER_TOKEN_CASES,
    answer=_bytes_per_token_truth,
    draw=draws(_bytes_per_token_case, _bytes_per_token_truth),
    slips=of("kv_bytes"),
    # the model and the benchmark's yardsticks have their own KV bytes per token
    forbid=["paged.kv", "paged.model.llama", "paged.gpu.bandwidth"],
    contract=lambda got, args: integer(got),
    doc="""fn(num_layers, num_kv_heads, head_dim, dtype_bytes) -> KV bytes per token (chapter 1).

    Promised: each from 1, at most 256 layers, 256 KV heads, head_dim 1024 and 8 bytes.""",
)
check_bytes_per_token = checker(BYTES_PER_TOKEN)


_POW2_RESERVATION_CASES = [
    (40, 25, 2048),
    (1, 1, 2048),
    (10, 64, 2048),
    (10, 65, 2048),
    (100, 700, 1000),
    (300, 1500, 2048),
    (3, 5, 16),
    (7, 9, 2048),
    # the ends of the promised range: 2^29, where math.log(o, 2) comes out above 29, and 2^31
    (1, 2**29, 2**30),
    (5, 2**29 + 1, 2**31),
    (3, 2**31 - 8, 2**31),
]


def _pow2_reservation_truth(p, o, m):
    return ContiguousAllocator(m, "pow2", max_seq_len=m).reservation(prompt_len=p, output_len=o)


def _pow2_reservation_case(rng):
    k = rng.randint(0, 11)  # outputs at, just below and just above a power of two
    o = max(1, (1 << k) + rng.choice((-1, 0, 0, 1)))
    p = _edge(rng, (1, 2, 1000), 1, 1500)
    r = next_pow2(o)
    m = rng.choice((p + o, p + r, p + r - 1, 2048, 4096, p + o + rng.randint(0, 3000)))
    return p, o, max(m, p + o)


POW2_RESERVATION = Spec(
    "pow2_reservation",
    params=("prompt_len", "output_len", "max_seq_len"),
    cases=_POW2_RESERVATION_CASES,
    answer=_pow2_reservation_truth,
    draw=draws(_pow2_reservation_case, _pow2_reservation_truth),
    slips=of("pow2"),
    forbid=["paged.contiguous", "paged.pool", "paged.attention.launch"],  # a pow2 of its own
    contract=lambda got, args: integer(got),
    doc="""fn(prompt_len, output_len, max_seq_len) -> slots Orca (Pow2) reserves (PAPER §6.1).

    Promised: lengths of 1 or more, max_seq_len at least their sum and at most 2^31 slots.""",
)
check_pow2_reservation = checker(POW2_RESERVATION)


# Runs whose traces are the cases: (requests, policy, options[, end]); seeded, 7 to ~900 steps.
_WAIT = (  # a handful of steps; request 2 waits
    [Request(0, 6, 3), Request(1, 9, 2), Request(2, 4, 4, arrival_time=1)],
    "max",
    dict(kv_slots=40, max_seq_len=20),
)
_RUNS = (
    _WAIT,
    (sharegpt_like(12, seed=1), "paged", dict(kv_slots=2048, block_size=16)),  # many wait
    (
        [Request(0, 5, 3), Request(1, 7, 2, arrival_time=6)],
        "paged",
        dict(kv_slots=64, block_size=4),
    ),  # nobody waits, and some steps are idle
    (sharegpt_like(8, seed=2), "pow2", dict(kv_slots=4096)),
    (*_WAIT, "waiting"),  # the first run, ending with the step in which request 2 waits
    (
        [Request(0, 6, 8), Request(1, 5, 9), Request(2, 3, 6, arrival_time=2)],
        "paged",
        dict(kv_slots=24, block_size=4),
        "preempted",
    ),  # two preemptions; it ends with the step of the last one
    (
        [Request(0, 1, 3, 1), Request(1, 12, 5, 5), Request(2, 5, 7), Request(3, 4, 4, 5)],
        "paged",
        dict(kv_slots=24, block_size=1),
    ),  # steps 7 and 12: requests wait and none runs (the running ones were all preempted)
)


def _breakdown_pair(requests, policy, options, end=None):
    """(case, answer) of a run: the case is its trace, the answer `simulate`'s breakdown.

    A run ends with an idle step; `end` ("waiting", "preempted") rotates its steps so that they
    end with the last one in which a request waits, or is preempted, instead: an average does
    not depend on the order of its steps, so the answer stays the same.
    """
    result = simulate(requests, policy, **options)
    steps = [(s.usage, s.num_waiting, s.num_running) for s in result.trace]
    marked = [
        i
        for i, s in enumerate(result.trace)
        if (end == "waiting" and s.num_waiting > 0) or (end == "preempted" and s.preempted)
    ]
    if marked:
        steps = steps[marked[-1] + 1 :] + steps[: marked[-1] + 1]
    return (steps, result.kv_slots), tuple(result.breakdown[c] for c in CATEGORIES)


def _random_runs(rng, n: int = 6):
    """Small random runs: few or many requests, late arrivals, tight or roomy pools, steps that
    end with a waiting or preempted request."""
    pairs = []
    for _ in range(n):
        requests = [
            Request(
                i, rng.randint(1, 12), rng.randint(1, 9), rng.choice((0, 0, rng.randint(0, 15)))
            )
            for i in range(rng.randint(1, 6))
        ]
        policy = rng.choice(("max", "pow2", "paged", "oracle"))
        options = dict(kv_slots=rng.choice((24, 30, 48, 200)), max_seq_len=24)
        if policy not in POLICIES:  # paging: blocks, not one range per request
            options = dict(kv_slots=rng.choice((24, 32, 64, 256)), block_size=rng.choice((1, 4, 8)))
        end = rng.choice((None, "waiting", "preempted"))
        pairs.append(_breakdown_pair(requests, policy, options, end))
    return pairs


def _fractions(fn, args):
    """Call fn; compare its 4 numbers as a tuple of floats (a list, tuple or dict will do)."""
    raw = fn(*args)
    try:
        values = raw.values() if isinstance(raw, dict) else raw
        return raw, tuple(float(v) for v in values)
    except (TypeError, ValueError):
        return raw, raw


def _four_numbers(raw, args):
    return each(real)(list(raw.values()) if isinstance(raw, dict) else list(raw))


def _same_fractions(got, want) -> bool:
    return (
        isinstance(got, tuple)
        and len(got) == 4
        and all(
            math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-9) or (math.isnan(g) and math.isnan(w))
            for g, w in zip(got, want, strict=True)
        )
    )


def _describe_run(args) -> str:
    steps, kv_slots = args
    if len(steps) <= 10:
        rows = [(tuple(u), w, r) for u, w, r in steps]
        return f"steps={rows}, kv_slots={kv_slots}"
    return f"a run of {len(steps)} steps, kv_slots={kv_slots}"


def _show_fractions(value) -> str:
    if isinstance(value, tuple) and len(value) == 4 and all(isinstance(x, float) for x in value):
        return repr(tuple(round(x, 4) for x in value))
    return repr(value)


BREAKDOWN = Spec(
    "breakdown",
    params=("steps", "kv_slots"),
    cases=lambda: [_breakdown_pair(*run) for run in _RUNS],
    draw=_random_runs,
    slips=of("breakdown"),
    same=_same_fractions,
    describe=_describe_run,
    observe=_fractions,
    show=_show_fractions,
    parts=tuple(HEADERS[c] for c in CATEGORIES),
    forbid=["paged.simulator", "paged.scheduler"],
    contract=_four_numbers,
    doc="""fn(steps, kv_slots) -> 4 fractions; steps = [(usage, num_waiting, num_running)].

    Chapter 4's averaging behind every Fig. 2 bar: over the steps in which some request waits,
    or over the busy steps if nobody ever waits. The cases are the traces of real runs, some
    rotated to end with a step in which a request waits (the order of the steps does not change
    an average), and the truth is the breakdown `simulate` reported for each.
    """,
)
check_breakdown = checker(BREAKDOWN)
