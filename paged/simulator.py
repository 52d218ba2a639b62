"""The serving simulator: the scheduler's steps with every length known, and a summary of the run.

`simulate` runs `paged.scheduler.Scheduler` (admission, decode, preemption; read its docstring
for the rules) over a synthetic workload: each step is scheduled and post-processed with nothing
computed, since a simulated request's length is known in advance. It averages the memory picture
the way the paper's Fig. 2 does. The widgets step the same scheduler by hand. All results are
SIMULATED: one token per running request per step, FCFS, no compute limit on batch size.
"""

from __future__ import annotations

from dataclasses import dataclass

from .scheduler import Scheduler
from .trace import CATEGORIES, StepRecord
from .workloads import Request


@dataclass(frozen=True)
class SimResult:
    """Time-averaged memory breakdown and batch size, plus the step trace."""

    policy: str
    placement: str | None
    kv_slots: int
    block_size: int | None
    breakdown: dict[str, float]
    rounded_up: float  # share of all slots the buddy round-up took (inside external frag.)
    mean_batch_size: float
    max_batch_size: int
    num_preemptions: int
    swapped_blocks: int  # blocks copied out to the CPU pool (each comes back once): 0 if recompute
    recomputed_tokens: int  # tokens whose KV had to be computed again: 0 under pure swapping
    num_steps: int
    trace: tuple[StepRecord, ...]
    # prompt tokens found in the cache at each request's first admission (prefix caching, or
    # a shared prefix), and tokens whose K and V were computed for the requests (prefill chunks,
    # decodes, recomputation; a shared prefix's own run not included)
    cached_prompt_tokens: int = 0
    computed_tokens: int = 0
    recached_tokens: int = 0  # found in the cache again by requests resumed after a preemption


def simulate(requests: list[Request], policy: str, **options) -> SimResult:
    """Serve `requests` to completion under `policy` and summarise memory use.

    `options` are `Scheduler`'s keyword arguments (kv_slots is required). `breakdown` and
    `mean_batch_size` average over the steps in which some request was waiting (memory was the
    limit), or over every busy step if none ever waited. Fractions are of all `kv_slots`; for
    "paged" the slots that do not fill a whole block count as external fragmentation & others,
    as every unused slot does. `rounded_up` is the part of external fragmentation & others that
    the buddy round-up took. SIMULATED: one token per running request per step, FCFS, no
    compute limit on batch size.
    """
    sim = Scheduler(requests, policy, **options)
    trace = sim.run()  # every phase scheduled, then post-processed with no tokens
    loaded = (
        [s for s in trace if s.num_waiting or s.num_swapped]
        or [s for s in trace if s.num_running]
        or trace
    )
    totals = [sum(s.usage[k] for s in loaded) for k in range(len(CATEGORIES))]
    denom = max(1, len(loaded)) * sim.config.kv_slots
    return SimResult(
        policy=policy,
        placement=getattr(sim.config, "placement", None),
        kv_slots=sim.config.kv_slots,
        block_size=getattr(sim.config, "block_size", None),
        breakdown={c: v / denom for c, v in zip(CATEGORIES, totals, strict=True)},
        rounded_up=sum(s.rounded_up for s in loaded) / denom,
        mean_batch_size=sum(s.num_running for s in loaded) / max(1, len(loaded)),
        max_batch_size=max((s.num_running for s in trace), default=0),
        num_preemptions=sum(len(s.preempted) for s in trace),
        swapped_blocks=sim.num_swapped_blocks,
        recomputed_tokens=sim.num_recomputed_tokens,
        num_steps=len(trace),
        trace=tuple(trace),
        cached_prompt_tokens=sum(max(q.num_prompt_cached_tokens, 0) for q in sim.sequences),
        computed_tokens=sum(q.num_tokens_run for q in sim.sequences),
        recached_tokens=sum(q.num_recached_tokens for q in sim.sequences),
    )
