"""What the scheduler hands its caller to compute: one phase of a step, as plain data.

`Scheduler.schedule()` returns a `Step`; whoever runs it (the simulator imagines it, the real
model runs a forward pass, `paged.model.model_runner`) computes, in this order:
1. `prefix`: the shared prefix's K and V, once, into its own blocks (the run that admits the
   first request that shares it);
2. `copies`: copy-on-write, the K and V of each (source, destination) physical block;
3. `runs`: each sequence's new positions, writing their K and V into its blocks; a run with
   `sample=True` samples the next token from its last position.
and hands the sampled tokens back with `Scheduler.postprocess(step, token_ids)`. The scheduler
never sees the model: this data is all that passes between them (nano-vllm's shape).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class SeqRun(NamedTuple):
    """One sequence's work in a step: positions start .. start + num_tokens - 1 (a named tuple:
    a run of thousands of steps builds millions of them)."""

    req_id: object
    start: int  # first position computed (the ones before it are in the cache already)
    num_tokens: int
    token_ids: tuple[int, ...] | None  # the tokens at those positions; None when simulated
    # physical blocks in the pool's block size (contiguous: slots); () when simulated, where
    # nothing computes the run (the trace's layouts hold the memory map when it is wanted)
    block_table: tuple[int, ...]
    sample: bool  # sample the next token from the last position


class Step(NamedTuple):
    """One phase of step `index`, by its `phase`:
    - "decode": every running request, one position each (its newest token);
    - "prefill": the requests admitted in this step, each from its first uncached position, and
      the shared prefix if it is new (the course's rules: a step is a decode, then a prefill);
    - "mixed": both in one batch, the decodes first (vLLM V1's rules: a step is one phase)."""

    index: int
    phase: str  # "decode", "prefill" or "mixed"
    runs: tuple[SeqRun, ...]
    num_running: int  # requests holding KV cache while this phase computes
    preempted: tuple = ()  # requests that lost their blocks growing (decode and mixed only)
    copies: tuple[tuple[int, int], ...] = ()  # blocks to copy before the runs
    prefix: SeqRun | None = None  # the shared prefix to compute first, once
    swapped_in: tuple = ()  # requests whose blocks came back from the CPU pool (not decode)

    @property
    def sampling(self) -> tuple:
        """The requests that will sample a token in this phase."""
        return tuple([r.req_id for r in self.runs if r.sample])


@dataclass(slots=True)
class StepSoFar:
    """The scheduler's own note of the step being computed (never handed out): the phase
    handed out and what the step did so far."""

    handed: Step | None = None  # scheduled, not yet post-processed
    runs_of: tuple = ()  # the Sequence of each of `handed.runs`
    preempted: tuple = ()
    finished: list = field(default_factory=list)
    admitted: tuple = ()  # Sequences
    refused: tuple = ()
    swapped_in: tuple = ()
    budget: float = float("inf")  # vLLM V1: tokens the step may still compute
