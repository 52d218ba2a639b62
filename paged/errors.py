"""Exceptions and argument checks shared by the allocators.

Every allocator checks before it acts: when one of these is raised, nothing has changed.
"""

import math
import numbers


def require_int(name: str, value, *, at_least: int) -> int:
    """`value` as an int if it is a whole number (not a bool) >= `at_least`, else ValueError."""
    if type(value) is int and value >= at_least:  # the common case, without the ABC check
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < at_least:
        raise ValueError(f"{name} must be an int >= {at_least}, got {value!r}")
    return int(value)


def require_positive(name: str, value) -> float:
    """`value` as a float if it is a finite number > 0 (not a bool), else ValueError."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


class AllocationError(Exception):
    """Memory for a request could not be handed out."""


class OutOfBlocks(AllocationError):
    """The paged pool has fewer free physical blocks than the operation needs."""


class NoContiguousSpace(AllocationError):
    """A contiguous arena has no hole large enough (maybe enough free space in total)."""


class UnknownSequence(KeyError):
    """A `seq_id` that the allocator does not hold."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class KVBudgetTooSmall(ValueError):
    """A request could never run, even alone: the KV budget cannot hold it (with the watermark)."""


class PrefixMismatch(ValueError):
    """Requests said to share their first `shared_prefix` tokens do not."""
