"""Typical slips, named once by concept: a wrong implementation and, where it is one, its hint.

The catalogue: one module per topic, one name per slip, "concept.slip" (`address.no_modulo`,
`gather.pool_front`, `merge.no_max`, `hash_chain.no_parent`, `admission.fcfs_skip`,
`victims.earliest`, `cow.copy_full` ...). A `Spec` picks its slips by name, usually every slip
of its concept (`slips=of("victims")`); `SLIPS[name]` is the (wrong_fn, hint) pair `core.check`
tries, in the catalogue's order (the first slip that explains every wrong answer wins). The
hints are bilingual (`paged.text.msg`) and name the slip, never the fix's code. What a wrong
output got wrong when no slip explains it (a symptom) is the engine's: `verdicts.py`.
"""

from __future__ import annotations

from . import address, attention, blocks, placement, preemption, sharing, sizes
from .address import ADDRESS_RULES
from .attention import GATHERS, LAST_BLOCK_MISSING

__all__ = ["ADDRESS_RULES", "GATHERS", "LAST_BLOCK_MISSING", "SLIPS", "of"]

SLIPS = {
    **sharing.FORK,
    **sharing.COW,
    **preemption.VICTIMS,
    **preemption.SWAP,
    **placement.FIRST_FIT,
    **blocks.WASTED,
    **blocks.APPEND,
    **address.ADDRESS,
    **sizes.KV_BYTES,
    **sizes.POW2,
    **sizes.BREAKDOWN,
    **attention.GATHER,
}


def of(concept: str) -> tuple[str, ...]:
    """The names of every slip of `concept` ("victims": "victims.earliest", ...), in order."""
    names = tuple(n for n in SLIPS if n.startswith(concept + "."))
    assert names, f"no slip of {concept!r}"
    return names
