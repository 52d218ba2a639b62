"""Experiments the chapters and figures share: policies head to head, and the block-size sweep.

Both are thin loops over `simulate`; keeping them here means a notebook and `python -m
paged.figures` can never disagree about how a number was made. All results are SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

from .paging import PagedAllocator, num_blocks_for
from .simulator import SIM_POLICIES, SimResult, simulate
from .workloads import Request


def compare_policies(
    requests: list[Request],
    *,
    kv_slots: int,
    block_size: int = 16,
    placement: str = "first_fit",
    policies: tuple[str, ...] = SIM_POLICIES,
) -> dict[str, SimResult]:
    """The same requests served under each policy."""
    return {
        p: simulate(requests, p, kv_slots=kv_slots, block_size=block_size, placement=placement)
        for p in policies
    }


@dataclass(frozen=True)
class BlockSizePoint:
    """One block size's side of the trade-off."""

    block_size: int
    held_empty: float  # held by sequences, holding no token: empty last-block slots (SIMULATED)
    token_states: float
    mean_batch_size: float
    table_entries_per_seq: float  # mean block-table length of a finished request


def block_size_sweep(
    requests: list[Request], *, kv_slots: int, block_sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256)
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


def blocks_held_by_samples(
    requests: list[Request], num_samples: int, *, block_size: int = 16, share: bool = True
) -> int:
    """Blocks held when each request's samples finish: forked from the prompt, or private copies.

    Parallel sampling (§4.4): with `share`, samples fork the prompt's sequence and copy-on-write
    splits only the partly filled last block; without, every sample stores the prompt again.
    """
    total = 0
    for r in requests:
        # Room for the prompt's own blocks plus every sample at its full length.
        size = (num_samples + 1) * num_blocks_for(r.final_len, block_size)
        a = PagedAllocator(num_blocks=size, block_size=block_size)
        a.allocate("prompt", r.prompt_len)
        for i in range(num_samples):
            if share:
                a.fork("prompt", i)
            else:
                a.allocate(i, r.prompt_len)
        a.free("prompt")
        for i in range(num_samples):
            a.append(i, r.output_len)
        total += a.num_used_blocks
    return total
