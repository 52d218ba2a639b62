"""Typical slips, named once by concept: a wrong implementation and, where it is one, its hint.

The catalogue: one module per topic, one name per slip, "concept.slip": kv_bytes, pow2,
first_fit, address (a token's slot; `ADDRESS_RULES` also serve the kernels' K row addresses),
wasted, append, breakdown, gather (`GATHERS`, also read inside decode), decode (the softmax, the
scale), merge, fork, cow (copy-on-write), victims, swap, admission (the admission walk),
hash_chain, and prefix caching's free_queue (freeing), eviction (taking) and cache_hit (the
longest cached run) (`address.no_modulo`, `gather.pool_front`, `merge.no_max`, `cow.copy_full` ...).
A `Spec` picks its slips by name, usually every slip of its concept (`slips=of("victims")`);
`SLIPS[name]` is the (wrong_fn, hint) pair `core.check` tries, in the catalogue's order (the
first slip that explains every wrong answer wins); an entry is written `slip(wrong_fn, en, ko)`
(`base.py`), or (wrong_fn, HINT) where several slips share one hint. The hints are bilingual
(`paged.text.msg`) and name the slip, never the fix's code. What a wrong output got wrong when no slip explains it
(a symptom) is the engine's: `verdicts.py`.

The Triton puzzles' hints are here too, by puzzle, keyed by the mistake that the puzzle's
predicate recognises in what a kernel stored: `kernels_onramp.py` (chapter 6's on-ramp),
`kernels_paged.py` (the paged kernel's puzzles) and `address.KERNEL_HINTS`; `tile_loop.py`
computes what a tile loop with a typical mistake stores.
"""

from __future__ import annotations

from . import (
    address,
    attention,
    blocks,
    decode,
    placement,
    preemption,
    prefix_cache,
    serving,
    sharing,
    sizes,
)
from .address import ADDRESS_RULES
from .attention import GATHERS, LAST_BLOCK_MISSING

__all__ = ["ADDRESS_RULES", "GATHERS", "LAST_BLOCK_MISSING", "SLIPS", "of"]

SLIPS = {  # by chapter: 1-4 sizes and blocks, 5 and 7 attention, 8 sharing, 9 preemption, 10-12
    **sizes.KV_BYTES,
    **sizes.POW2,
    **placement.FIRST_FIT,
    **address.ADDRESS,
    **blocks.WASTED,
    **blocks.APPEND,
    **sizes.BREAKDOWN,
    **attention.GATHER,
    **decode.DECODE,
    **attention.MERGE,
    **sharing.FORK,
    **sharing.COW,
    **preemption.VICTIMS,
    **preemption.SWAP,
    **serving.ADMISSION,
    **serving.HASH_CHAIN,
    **prefix_cache.FREE_QUEUE,
    **prefix_cache.EVICTION,
    **prefix_cache.CACHE_HIT,
}


def of(concept: str) -> tuple[str, ...]:
    """The names of every slip of `concept` ("victims": "victims.earliest", ...), in order."""
    names = tuple(n for n in SLIPS if n.startswith(concept + "."))
    if not names:
        raise KeyError(f"no slip of {concept!r}")
    return names
