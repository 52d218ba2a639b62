"""Admission, the prefill half of a scheduler step: who leaves the queue for the running batch.

`swap_in` brings swapped-out requests back first, oldest first, while their blocks fit. `admit`
then walks the FCFS queue from its head and stops at the first request that must wait, with the
reason the step's record keeps: "max_num_seqs" (the batch is full), "swapped_waiting" (no new
request while swapped-out ones wait: vLLM V0's rule), "held" (§4.5: "stops accepting new requests
until all preempted sequences are completed", the `hold` admission), the pool's own reason
("no_free_blocks", "no_space", "no_hole") or "token_budget" (vLLM V1's per-step token budget).
Both work on a `paged.scheduler.Scheduler`'s queues and pool.
"""

from __future__ import annotations

import bisect

from .pool import PREFIX
from .step import SeqRun
from .workloads import Request


def is_full(s) -> bool:
    """Whether the running batch is at `max_num_seqs`."""
    cap = s.config.max_num_seqs
    return cap is not None and len(s.running) >= cap


def swap_in(s) -> tuple:
    """Copy swapped-out requests back, oldest first, while their blocks fit."""
    back = []
    while s.swapped and not is_full(s):
        r = s.swapped[0]
        if not s.pool.can_swap_in(r.req_id):
            break
        s.swapped.popleft()
        s.pool.swap_in(r.req_id)
        enter(s, r)
        back.append(r.req_id)
    return tuple(back)


def enter(s, r: Request) -> None:
    """Put `r` among the running requests, in arrival order (vLLM V1: in the order they
    were scheduled, so a request that comes back after a preemption is the next victim)."""
    if s.config.rules == "vllm-v1":
        s.running.append(r)
    else:
        bisect.insort(s.running, r, key=lambda q: s.arrival_rank[q.req_id])


def admit(s) -> tuple:
    """Admit the queue's head while it fits; return (prefix run, copies, admitted, refused)."""
    prefix, copies, admitted = None, [], []
    cap = s.config.max_num_batched_tokens
    budget = float("inf") if cap is None else cap - len(s.running)  # a token per decode
    while s.waiting:
        r = s.waiting[0]
        if is_full(s):
            return prefix, copies, admitted, ((r.req_id, "max_num_seqs"),)
        if s.swapped:  # no new requests while swapped-out ones wait (vLLM V0's rule)
            return prefix, copies, admitted, ((r.req_id, "swapped_waiting"),)
        held = s.config.admission == "hold" and s.preempted_ids
        if held and r.req_id not in s.preempted_ids:
            return prefix, copies, admitted, ((r.req_id, "held"),)  # §4.5: preempted first
        n = s.to_prefill(r)
        reason = s.pool.why_not(r, n)
        budget -= n - s.shared_prefix
        if reason is None and budget < 0:
            reason = "token_budget"  # vLLM would prefill a chunk of it; the course waits
        if reason is not None:
            return prefix, copies, admitted, ((r.req_id, reason),)
        s.generated[r.req_id] = n - r.prompt_len
        if s.shared_prefix and not s.pool.holds_prefix:
            table = tuple(s.pool.hold_prefix())
            ids = r.prompt_token_ids and r.prompt_token_ids[: s.shared_prefix]
            prefix = SeqRun(PREFIX, 0, s.shared_prefix, ids, table, sample=False)
        copies += s.pool.admit(r, n)
        s.waiting.popleft()
        enter(s, r)
        admitted.append(r)
    return prefix, copies, admitted, ()
