"""Admission's rules: why the FCFS queue's head must wait, as a pure decision.

The scheduler (`paged.scheduler`) walks the queue from its head each step and stops at the first
request that must wait, keeping the reason in the step's record:
- "max_num_seqs": the running batch is full (a compute limit);
- "swapped_waiting": a swapped-out request waits for its blocks, and no new request goes first
  (vLLM V0's rule: DOCS, `vllm/core/scheduler.py`, `_schedule_default`, commit 0054e1fa);
- "held": the "hold" admission, §4.5's rule: vLLM "stops accepting new requests until all
  preempted sequences are completed"; preempted requests are re-admitted, requests that never
  ran wait (the paper states it for swapping; here it applies to either preemption mode);
- the pool's own reason ("no_free_blocks", "no_space", "no_hole": `paged.pool`), or
  "token_budget" (vLLM V1's per-step token budget, `max_num_batched_tokens`).
Under the default "greedy" admission, preempted requests head the queue and so come back first
(vLLM V0's recomputation: preempted groups go to the front of `waiting`, same commit).
"""

from __future__ import annotations

from .sequence import Sequence

ADMISSION_RULES = ("greedy", "hold")


def why_wait(head: Sequence, *, full: bool, swapped: bool, held: bool) -> str | None:
    """The queue's own reason for `head` to wait (None: ask the pool), given whether the batch
    is full, whether a request is swapped out, and whether admission holds for preempted ones."""
    if full:
        return "max_num_seqs"
    if swapped:
        return "swapped_waiting"
    if held and not head.num_preemptions:
        return "held"
    return None
