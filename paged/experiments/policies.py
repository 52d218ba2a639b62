"""Chapter 4's experiments: the allocation policies head to head, and the block-size sweep.

Loops over `simulate`, kept here so that a notebook and `python -m paged.viz.figures` can never
disagree about how a number was made. All results are SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..paging import BLOCK_SIZES, num_blocks_for
from ..progress import progress
from ..scheduler_options import SIM_POLICIES
from ..simulator import SimResult, simulate
from ..text import msg
from ..workloads import Request

SWEEPING = msg("{n} requests, policy by policy", "요청 {n}개, 정책마다")


def compare_policies(
    requests: list[Request],
    *,
    kv_slots: int,
    block_size: int = 16,
    placement: str = "first_fit",
    policies: tuple[str, ...] = SIM_POLICIES,
) -> dict[str, SimResult]:
    """The same requests served under each policy (`block_size` is paging's, `placement` the
    contiguous arena's); in a notebook, a bar counts the policies done."""
    results = {}
    with progress(len(policies), SWEEPING.format(n=len(requests))) as bar:
        for p in policies:
            options = dict(block_size=block_size) if p == "paged" else dict(placement=placement)
            results[p] = simulate(requests, p, kv_slots=kv_slots, **options)
            bar.update(1)
    return results


@dataclass(frozen=True)
class BlockSizePoint:
    """One block size's side of the trade-off."""

    block_size: int
    held_empty: float  # held by sequences, holding no token: empty last-block slots (SIMULATED)
    token_states: float
    mean_batch_size: float
    table_entries_per_seq: float  # mean block-table length of a finished request


def block_size_sweep(
    requests: list[Request], *, kv_slots: int, block_sizes=BLOCK_SIZES
) -> list[BlockSizePoint]:
    """Paged serving at each block size: smaller blocks hold fewer empty slots, longer tables.

    `held_empty` is the time-averaged share of slots in sequences' last blocks that hold no
    token yet: reserved for the next tokens, or internal fragmentation if the sequence ends first.
    """
    out = []
    for bs in block_sizes:
        r = simulate(requests, "paged", kv_slots=kv_slots, block_size=bs)
        entries = sum(num_blocks_for(q.final_len, bs) for q in requests) / max(1, len(requests))
        out.append(
            BlockSizePoint(
                bs,
                r.breakdown["reservation"] + r.breakdown["internal_fragmentation"],
                r.breakdown["token_states"],
                r.mean_batch_size,
                entries,
            )
        )
    return out
