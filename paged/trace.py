"""What a serving run leaves behind: per-step records and memory maps, for drawings to replay.

The scheduler (`paged.scheduler`) returns these; the drawing package only reads them (data flows
one way). Memory is counted in the four categories of the paper's Fig. 2 (§3.1): token states,
reservation, internal fragmentation, external fragmentation & others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .contiguous import Extent
from .text import msg

CATEGORIES = ("token_states", "reservation", "internal_fragmentation", "external_fragmentation")
HEADERS = {  # the categories' short names (a table's column, a checker's hint)
    "token_states": msg("token states", "토큰 상태"),
    "reservation": msg("reservation", "예약"),
    "internal_fragmentation": msg("internal frag", "내부 단편화"),
    "external_fragmentation": msg("external frag", "외부 단편화"),
}


class Usage(NamedTuple):
    """Slots per category at one moment; a tuple in CATEGORIES order, with named fields."""

    token_states: int
    reservation: int
    internal_fragmentation: int
    external_fragmentation: int


@dataclass(frozen=True)
class PagedLayout:
    """The block pool at one moment: each sequence's block table and token count."""

    num_blocks: int
    block_size: int
    tables: tuple[tuple[object, tuple[int, ...], int], ...]  # (req_id, block_table, num_tokens)
    null_block_ids: tuple[int, ...] = ()  # held by no sequence, never free (vLLM's block 0)


@dataclass(frozen=True)
class ContiguousLayout:
    """The arena at one moment: every live extent in address order."""

    capacity_tokens: int
    extents: tuple[Extent, ...]


class StepRecord(NamedTuple):
    """What happened in one decode step, and the memory picture at its end (a named tuple: a
    simulated run keeps one per step, tens of thousands)."""

    step: int
    usage: Usage
    num_running: int
    num_waiting: int  # arrived but not admitted (swapped-out requests not included)
    admitted: tuple = ()
    refused: tuple = ()  # ((req_id, reason),): the FCFS head that was not admitted
    preempted: tuple = ()
    finished: tuple = ()
    layout: PagedLayout | ContiguousLayout | None = None
    rounded_up: int = 0  # slots of external_fragmentation taken by the buddy round-up
    swapped_in: tuple = ()  # requests copied back from the CPU pool
    num_swapped: int = 0  # requests waiting in the CPU pool at the end of the step


def refused_steps(trace, reason: str) -> list[int]:
    """The steps in which admission refused the queue's head for `reason` (e.g. "no_hole")."""
    return [s.step for s in trace if any(r == reason for _, r in s.refused)]


def paged_layout(allocator, null_block_ids: tuple[int, ...] = ()) -> PagedLayout:
    """The drawing input for a `PagedAllocator`'s current state."""
    a = allocator
    tables = tuple((s, tuple(a.block_table(s)), a.num_tokens(s)) for s in a.seq_ids)
    return PagedLayout(a.num_blocks, a.block_size, tables, null_block_ids)
