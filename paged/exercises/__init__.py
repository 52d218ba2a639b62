"""Checkers for the chapters' exercises: call with your function; they say "correct" or why not.

A shipped stub raises NotImplementedError (or returns None, or writes nothing): the checker then
prints a friendly "not yet" instead of an error, so a notebook runs top to bottom before you
solve anything. A wrong answer gets the case it failed on and, when it matches a typical
mistake, a hint that names it.
"""

from .attention import check_gather, check_merge_partitions
from .kernels import check_gather_kernel, check_online_softmax_kernel
from .memory import (
    check_blocks_after_fork,
    check_breakdown,
    check_bytes_per_token,
    check_pow2_reservation,
    check_slot,
    check_swap_time,
    check_wasted_slots,
)

__all__ = [
    "check_blocks_after_fork",
    "check_breakdown",
    "check_bytes_per_token",
    "check_gather",
    "check_gather_kernel",
    "check_merge_partitions",
    "check_online_softmax_kernel",
    "check_pow2_reservation",
    "check_slot",
    "check_swap_time",
    "check_wasted_slots",
]
