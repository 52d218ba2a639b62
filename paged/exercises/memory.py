"""Checkers for the memory chapters: KV sizes, reservations, slots, Fig. 2, sharing, swapping."""

from __future__ import annotations

import math

from ..experiments import blocks_held_by_samples
from ..kv import PRESETS
from ..paging import PagedAllocator
from ..workloads import Request
from .core import run_cases

__all__ = [
    "check_blocks_after_fork",
    "check_breakdown",
    "check_bytes_per_token",
    "check_pow2_reservation",
    "check_slot",
    "check_swap_time",
    "check_wasted_slots",
]


def check_bytes_per_token(fn) -> bool:
    """fn(num_layers, num_kv_heads, head_dim, dtype_bytes) -> KV bytes per token."""
    cases = [(s.num_layers, s.num_kv_heads, s.head_dim, s.dtype_bytes) for s in PRESETS.values()]
    return run_cases(
        "bytes_per_token", fn, cases + [(1, 1, 1, 1)], lambda n, h, d, b: 2 * n * h * d * b
    )


def check_pow2_reservation(fn) -> bool:
    """fn(prompt_len, output_len, max_seq_len) -> slots Orca (Pow2) reserves (PAPER §6.1)."""

    def pow2(n):
        return 1 << (n - 1).bit_length()

    cases = [(40, 25, 2048), (1, 1, 2048), (10, 64, 2048), (10, 65, 2048), (300, 1500, 2048),
             (100, 700, 1000), (3, 5, 16), (7, 9, 2048)]  # fmt: skip
    mistakes = [
        (lambda p, o, m: min(pow2(p + o), m),
         "you rounded prompt + output; the paper rounds the OUTPUT only: a true output of 25 "
         "reserves 32 positions for outputs, on top of the prompt."),
        (lambda p, o, m: p + pow2(o),
         "the reservation never exceeds max_seq_len: cap it with min(..., max_seq_len)."),
        (lambda p, o, m: min(pow2(o), m),
         "the prompt's slots are reserved too: prompt + (output rounded up)."),
        (lambda p, o, m: min(p + 2 * o, m),
         "'at most 2x' is a bound, not the rule: round the output up to the next power of two."),
    ]  # fmt: skip
    return run_cases("pow2_reservation", fn, cases, lambda p, o, m: min(p + pow2(o), m), mistakes)


def check_slot(fn) -> bool:
    """fn(block_table, block_size, position) -> flat slot index of that token."""
    a = PagedAllocator(num_blocks=40, block_size=4, seed=7)
    a.allocate("s", 37)
    table = a.block_table("s")
    cases = [(table, 4, p) for p in (0, 3, 4, 17, 36)] + [([9, 2], 1, 1), ([5], 16, 15)]
    return run_cases("slot", fn, cases, lambda t, bs, p: t[p // bs] * bs + p % bs)


def check_wasted_slots(fn) -> bool:
    """fn(num_tokens, block_size) -> empty slots in the sequence's last block."""
    cases = [(0, 16), (1, 16), (15, 16), (16, 16), (17, 16), (100, 1), (33, 32)]
    return run_cases("wasted_slots", fn, cases, lambda n, bs: math.ceil(n / bs) * bs - n)


def _fig2_breakdown(steps, kv_slots):
    """The simulator's rule: average over steps where someone waits, else over busy steps."""
    loaded = [u for u, waiting, _ in steps if waiting] or [u for u, _, running in steps if running]
    return tuple(sum(u[c] for u in loaded) / (len(loaded) * kv_slots) for c in range(4))


def check_breakdown(fn) -> bool:
    """fn(steps, kv_slots) -> 4 fractions; steps = [(usage 4-tuple, num_waiting, num_running)].

    Chapter 4's averaging: Fig. 2 describes memory while requests wait for it.
    """
    u = ((30, 10, 20, 40), (50, 20, 10, 20), (60, 0, 0, 40), (0, 0, 0, 100))
    cases = [
        ([(u[0], 2, 3), (u[1], 1, 4), (u[2], 0, 2), (u[3], 0, 0)], 100),
        ([(u[2], 0, 1), (u[1], 0, 2), (u[3], 0, 0)], 100),  # nobody waits: the busy steps
        ([(u[1], 5, 4), (u[0], 0, 3)], 100),
    ]

    def all_steps(steps, kv):
        return tuple(sum(x[0][c] for x in steps) / (len(steps) * kv) for c in range(4))

    def busy(steps, kv):
        used = [x for x in steps if x[2]]
        return tuple(sum(x[0][c] for x in used) / (len(used) * kv) for c in range(4))

    mistakes = [
        (all_steps, "average only over the steps in which some request waits (memory is the "
                    "limit then), not over every step."),
        (busy, "the steps that count are those in which a request waits; use every busy step "
               "only when nobody ever waits."),
        (lambda steps, kv: tuple(kv * f for f in _fig2_breakdown(steps, kv)),
         "return fractions of kv_slots, not slot counts."),
    ]  # fmt: skip

    def same(got, want):
        return got is not None and len(got) == 4 and all(
            math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want, strict=True)
        )

    return run_cases("breakdown", lambda *a: _tuple_or_none(fn(*a)), cases, _fig2_breakdown,
                mistakes, same=same)  # fmt: skip


def _tuple_or_none(x):
    """A learner's 4 fractions as a tuple of floats (a list, tuple or dict will do)."""
    if x is None:
        return None
    return tuple(float(v) for v in (x.values() if isinstance(x, dict) else x))


def check_blocks_after_fork(fn) -> bool:
    """fn(prompt_len, num_samples, block_size) -> blocks in use once every sample wrote 1 token.

    Chapter 8: the prompt is prefilled, forked into num_samples samples and dropped; then each
    sample writes its first token (copy-on-write where it shares a partly filled block).
    """

    def truth(prompt_len, num_samples, block_size):  # the allocator itself, one token each
        request = Request(0, prompt_len=prompt_len, output_len=1)
        return blocks_held_by_samples([request], num_samples, block_size=block_size)

    cases = [(10, 3, 4), (8, 3, 4), (1, 4, 16), (33, 2, 16), (32, 5, 16), (7, 1, 8)]
    mistakes = [
        (lambda p, n, bs: -(-p // bs) + n,
         "a shared, partly filled last block is copied by all but one sample, so it is not kept "
         "in addition to the n private last blocks: full prompt blocks + n."),
        (lambda p, n, bs: n * (-(-(p + 1) // bs)),
         "forked samples share the prompt's full blocks: they are stored once, not once per "
         "sample."),
        (lambda p, n, bs: -(-p // bs) + n - 1,
         "count one private block per sample: the last writer keeps the original block."),
    ]  # fmt: skip
    return run_cases("blocks_after_fork", fn, cases, truth, mistakes)


def check_swap_time(fn) -> bool:
    """fn(num_blocks, block_size, bytes_per_token, num_layers, bytes_per_s, latency_s) -> seconds.

    Chapter 9's cost model: one transfer per block, per layer, for K and for V; each costs a
    fixed latency plus its bytes over the bandwidth.
    """

    def right(nb, bs, bpt, layers, bw, lat):
        return nb * 2 * layers * lat + nb * bs * bpt / bw

    cases = [(10, 16, 819_200, 40, 25e9, 10e-6), (1, 1, 1000, 2, 1e6, 1e-3),
             (7, 256, 131_072, 32, 25e9, 5e-6), (0, 16, 819_200, 40, 25e9, 10e-6)]  # fmt: skip
    mistakes = [
        (lambda nb, bs, bpt, layers, bw, lat: nb * lat + nb * bs * bpt / bw,
         "each block moves as 2 x num_layers transfers (K and V of every layer), not one."),
        (lambda nb, bs, bpt, layers, bw, lat: nb * bs * bpt / bw,
         "every transfer also pays a fixed latency: add transfers x latency_s."),
        (lambda nb, bs, bpt, layers, bw, lat: nb * 2 * layers * lat,
         "the bytes still have to cross PCIe: add num_blocks x block_size x bytes_per_token / "
         "bytes_per_s."),
        (lambda nb, bs, bpt, layers, bw, lat: nb * layers * lat + nb * bs * bpt / bw,
         "K and V are separate transfers: 2 per block and layer."),
    ]  # fmt: skip
    return run_cases("swap_time", fn, cases, right, mistakes,
                same=lambda a, b: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15))  # fmt: skip
