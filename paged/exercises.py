"""Checkers for the chapters' exercises: call with your function; they say "correct" or why not.

A shipped stub raises NotImplementedError (or returns None): the checker then prints a friendly
"not yet" instead of an error, so a notebook runs top to bottom before you solve anything.
"""

from __future__ import annotations

import math

from .kv import PRESETS
from .paging import PagedAllocator


def _run(name: str, fn, cases, expected, mistakes=()) -> bool:
    """Compare fn with `expected` on every case; `mistakes` are (wrong_rule, hint) pairs.

    When an answer is wrong and a known wrong rule gives the same answer, its hint is printed.
    """
    for args in cases:
        try:
            got = fn(*args)
        except NotImplementedError:
            got = None
        if got is None:
            print(f"{name}: not yet: replace the stub's `raise NotImplementedError` and run again.")
            return False
        want = expected(*args)
        if got != want:
            hint = next((h for wrong, h in mistakes if wrong(*args) == got), None)
            print(f"{name}: not quite: for {args!r} you returned {got!r}, expected {want!r}.")
            if hint:
                print(f"  hint: {hint}")
            return False
    print(f"{name}: correct ({len(cases)} cases).")
    return True


def check_bytes_per_token(fn) -> bool:
    """fn(num_layers, num_kv_heads, head_dim, dtype_bytes) -> KV bytes per token."""
    cases = [(s.num_layers, s.num_kv_heads, s.head_dim, s.dtype_bytes) for s in PRESETS.values()]
    return _run("bytes_per_token", fn, cases + [(1, 1, 1, 1)], lambda n, h, d, b: 2 * n * h * d * b)


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
    return _run("pow2_reservation", fn, cases, lambda p, o, m: min(p + pow2(o), m), mistakes)


def check_slot(fn) -> bool:
    """fn(block_table, block_size, position) -> flat slot index of that token."""
    a = PagedAllocator(num_blocks=40, block_size=4, seed=7)
    a.allocate("s", 37)
    table = a.block_table("s")
    cases = [(table, 4, p) for p in (0, 3, 4, 17, 36)] + [([9, 2], 1, 1), ([5], 16, 15)]
    return _run("slot", fn, cases, lambda t, bs, p: t[p // bs] * bs + p % bs)


def check_wasted_slots(fn) -> bool:
    """fn(num_tokens, block_size) -> empty slots in the sequence's last block."""
    cases = [(0, 16), (1, 16), (15, 16), (16, 16), (17, 16), (100, 1), (33, 32)]
    return _run("wasted_slots", fn, cases, lambda n, bs: math.ceil(n / bs) * bs - n)


def check_merge_partitions(fn) -> bool:
    """fn(list of (partial_out, lse)) -> merged softmax output (floats, split-K merge)."""
    import torch

    g = torch.Generator().manual_seed(0)
    scores, values = torch.randn(24, generator=g), torch.randn(24, 3, generator=g)
    full = torch.softmax(scores, 0) @ values
    for cuts in ([0, 8, 24], [0, 1, 12, 24], [0, 24]):
        parts = []
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            s = scores[lo:hi]
            parts.append((torch.softmax(s, 0) @ values[lo:hi], torch.logsumexp(s, 0)))
        try:
            got = fn(parts)
        except NotImplementedError:
            got = None
        if got is None:
            print("merge_partitions: not yet: replace the stub and run again.")
            return False
        if not torch.allclose(torch.as_tensor(got, dtype=full.dtype), full, atol=1e-5):
            print(f"merge_partitions: not quite for cuts {cuts}: got {got}, expected {full}.")
            return False
    print("merge_partitions: correct (3 ways of cutting 24 scores).")
    return True
