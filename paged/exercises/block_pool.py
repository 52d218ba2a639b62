"""Checkers for chapter 12, prefix caching in the block pool; this module gathers them.

- `free_queue`: freeing a request's blocks into the free queue, taking new blocks (evicting
  hashes);
- `cache_hits`: the cached blocks a newly admitted request takes.
"""

from __future__ import annotations

from . import cache_hits, free_queue
from .cache_hits import *  # noqa: F403
from .free_queue import *  # noqa: F403

__all__ = [*free_queue.__all__, *cache_hits.__all__]
