"""Experiments the chapters and figures share: policies head to head, the block-size sweep,
and block sharing in parallel sampling and beam search.

Both are thin loops over `simulate`; keeping them here means a notebook and `python -m
paged.viz.figures` can never disagree about how a number was made. All results are SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import require_int
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
    """The same requests served under each policy (`block_size` is paging's, `placement` the
    contiguous arena's)."""
    return {
        p: simulate(requests, p, kv_slots=kv_slots,
                    **(dict(block_size=block_size) if p == "paged" else dict(placement=placement)))
        for p in policies
    }  # fmt: skip


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


@dataclass(frozen=True)
class BeamStep:
    """The pool after one beam-search step: the beams' ids and the copies this step made."""

    allocator: PagedAllocator
    beams: tuple
    parents: tuple[int, ...]  # which old beam each new beam continues
    copies: int  # copy-on-write block copies made by this step's appends


def beam_search_steps(request: Request, beam_width: int, *, block_size: int = 16, seed: int = 0):
    """Yield the block pool after each decode step of a beam search of width `beam_width`.

    Beam search (§4.4, Fig. 9): the prompt is prefilled once and forked into `beam_width`
    candidates. At every step each of the `beam_width` new candidates continues one of the old
    ones; the old ones are then freed, so blocks no survivor holds return to the pool, and each
    survivor writes one token (copy-on-write only where it shares a partly filled last block).
    Which old candidate each new one continues is drawn uniformly at random with `seed`: a
    stand-in for the model's scores, which decide this in a real search. Nothing leaks: after
    the last step every block is free again (checked).
    """
    k = require_int("beam_width", beam_width, at_least=1)
    rng = np.random.default_rng(seed)
    size = (2 * k + 1) * num_blocks_for(request.final_len, block_size)
    a = PagedAllocator(num_blocks=size, block_size=block_size)
    a.allocate("prompt", request.prompt_len)
    beams = tuple(("beam", 0, j) for j in range(k))
    for b in beams:
        a.fork("prompt", b)
    a.free("prompt")
    for t in range(1, request.output_len + 1):
        parents = tuple(int(p) for p in rng.integers(0, k, size=k))
        new = tuple(("beam", t, j) for j in range(k))
        for j, p in enumerate(parents):
            a.fork(beams[p], new[j])
        for b in beams:
            a.free(b)
        beams = new
        copies = sum(len(a.append(b, 1)) for b in beams)
        yield BeamStep(a, beams, parents, copies)
    for b in beams:
        a.free(b)
    if a.num_used_blocks:  # pragma: no cover - a bookkeeping bug, not a user error
        raise AssertionError(f"{a.num_used_blocks} blocks leaked after the search")


@dataclass(frozen=True)
class BeamSharing:
    """Blocks held during beam search, summed over decode steps, with and without sharing."""

    beam_width: int
    blocks_shared: int
    blocks_private: int  # every candidate holding its own copy of everything
    copies: int  # copy-on-write block copies

    @property
    def saved(self) -> float:
        """The paper's metric (§6.3): blocks saved by sharing / blocks without sharing."""
        return 1 - self.blocks_shared / self.blocks_private


def beam_search_sharing(
    requests: list[Request], beam_width: int, *, block_size: int = 16, seed: int = 0
) -> BeamSharing:
    """Beam search of width `beam_width` over each request; blocks held at every step."""
    shared = private = copies = 0
    for i, r in enumerate(requests):
        steps = beam_search_steps(r, beam_width, block_size=block_size, seed=seed + i)
        for t, step in enumerate(steps, 1):
            shared += step.allocator.num_used_blocks
            private += beam_width * num_blocks_for(r.prompt_len + t, block_size)
            copies += step.copies
    return BeamSharing(beam_width, shared, private, copies)
