"""The checking loop every plain-Python checker shares: cases, known mistakes, friendly stubs."""

from __future__ import annotations

import operator


def run_cases(name: str, fn, cases, expected, mistakes=(), same=operator.eq, describe=repr) -> bool:
    """Compare fn with `expected` on every case; `mistakes` are (wrong_rule, hint) pairs.

    When an answer is wrong and a known wrong rule gives the same answer, its hint is printed.
    `same(got, want)` decides equality (exact unless told otherwise); `describe(args)` names a
    case in messages.
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
        if not same(got, want):
            hint = next((h for wrong, h in mistakes if same(got, wrong(*args))), None)
            print(
                f"{name}: not quite: for {describe(args)} you returned {short(got)}, "
                f"expected {short(want)}."
            )
            if hint:
                print(f"  hint: {hint}")
            return False
    print(f"{name}: correct ({len(cases)} cases).")
    return True


def short(value, limit: int = 120) -> str:
    """repr, cut to `limit` characters (tensors can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
