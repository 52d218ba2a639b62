"""Checkers for the memory chapters, by topic; this module gathers them under one name.

- `sizes`: KV bytes per token (chapter 1), Pow2 reservation (2), the Fig. 2 breakdown (4);
- `placement`: first fit in a contiguous arena (2);
- `blocks`: the slot mapping, wasted slots and appending a token to a block table (3);
- `sharing`: blocks after a fork, and appending with copy-on-write (8);
- `preemption`: picking the victims of a decode step, and what a swap costs (9).
"""

from __future__ import annotations

from . import blocks, placement, preemption, sharing, sizes
from .blocks import *  # noqa: F403
from .placement import *  # noqa: F403
from .preemption import *  # noqa: F403
from .sharing import *  # noqa: F403
from .sizes import *  # noqa: F403

__all__ = [
    *sizes.__all__,
    *placement.__all__,
    *blocks.__all__,
    *sharing.__all__,
    *preemption.__all__,
]
