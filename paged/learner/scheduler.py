"""The course's scheduler and pools, with the learner's pieces making their decisions.

`YourScheduler` is `paged.scheduler.Scheduler` with its memory built from the learner's
allocators (`allocators.py`) and two decisions handed to pieces, where the chapter's rule is
the one in force:
- `pick_victims` (chapter 9) chooses a decode step's victims before anyone grows, from what
  each running request needs and what preempting it frees; the scheduler then preempts them in
  that order when a request cannot grow;
- `admit` (chapter 10) chooses which of the waiting requests a step admits.
Each is compared, call by call, with the course's decision for the same step (the referee holds
the course's phase of the step, computed first by the course's own scheduler on the same state).
Where the run's rules decide otherwise than the exercise taught, the course's rule serves: vLLM
V1's (admission by token budget, victims by scheduling order within a budget), prefix caching or
a shared prefix (admission that counts cached blocks), a cap on running requests, swapped-out
requests waiting, and a step where a request's last block is shared and partly filled (its need
would change when another is preempted). `YourPagedPool` names blocks by the learner's
`block_hashes` where every token is a real one and no tenant salts its hashes.
"""

from __future__ import annotations

from collections import deque

from ..admission import why_wait
from ..pool import ContiguousPool, PagedPool
from ..scheduler import Scheduler
from .allocators import YourAllocator, YourCachingAllocator, YourContiguousAllocator


def _names_alike(got, want) -> bool:
    """Block hashes are names: any that are hashable, one per full block, will do (which blocks
    they find is the engine's comparison with the course's)."""
    if not isinstance(got, list | tuple) or len(got) != len(want):
        return False
    try:
        {hash(h) for h in got}
    except TypeError:
        return False
    return True


class YourPagedPool(PagedPool):
    """The paged pool on the learner's allocators; `hash_tokens`: the learner's block hashes."""

    def __init__(self, config, referee, hash_tokens: bool):
        self.referee, self.hash_tokens = referee, hash_tokens
        super().__init__(config)

    def new_allocator(self, c):
        if c.prefix_caching:
            return YourCachingAllocator(self.referee, c.num_blocks, c.block_size, seed=c.seed)
        return YourAllocator(
            self.referee, c.num_blocks, c.block_size, seed=c.seed, free_to_front=c.null_block
        )

    def hashes(self, q) -> list:
        course = super().hashes(q)
        if not self.hash_tokens:
            return course
        tokens = [*q.request.prompt_token_ids, *q.output_ids]
        args = (tokens, self.block_size)
        return list(self.referee.call("block_hashes", args, course, _names_alike, plain=True))


class YourContiguousPool(ContiguousPool):
    """The contiguous arena on the learner's first fit."""

    def __init__(self, config, referee):
        self.referee = referee
        super().__init__(config)

    def new_allocator(self, c):
        return YourContiguousAllocator(
            self.referee, c.kv_slots, c.policy, c.placement, c.max_seq_len
        )


class YourScheduler(Scheduler):
    """The course's scheduler on the learner's pieces (module docstring)."""

    def __init__(self, requests, policy: str, referee, *, hash_tokens: bool = False, **options):
        self.referee, self.hash_tokens = referee, hash_tokens
        self._chosen: deque | None = None
        super().__init__(requests, policy, **options)

    def new_pool(self, config):
        if config.policy == "paged":
            return YourPagedPool(config, self.referee, self.hash_tokens)
        return YourContiguousPool(config, self.referee)

    # ---- preemption: chapter 9's pick_victims ----------------------------------------------
    def _grow(self, s):
        self._chosen = self._pick_victims()
        try:
            return super()._grow(s)
        finally:
            self._chosen = None

    def _victim(self):
        if self._chosen is None:
            return super()._victim()
        req_id = self._chosen.popleft()
        victim = next(q for q in self.running if q.req_id == req_id)
        self.running.remove(victim)
        return victim

    def _pick_victims(self) -> deque | None:
        """The learner's victims for this step, or None where the course's rule serves."""
        if not (self.referee.yours("pick_victims") and self.config.as_taught):
            return None
        a, bs = self.pool.allocator, self.pool.block_size
        tables = {q.req_id: a.block_table(q.req_id) for q in self.running}
        if any(a.num_tokens(r) % bs and a.ref_count(t[-1]) > 1 for r, t in tables.items() if t):
            return None  # a shared, partly filled last block: needs change as others leave
        running = list(tables)
        needed = {r: a.blocks_needed_to_append(r, 1) for r in running}
        held = {r: sum(a.ref_count(b) == 1 for b in t) for r, t in tables.items()}
        args = (running, needed, a.num_free_blocks, held)
        want = list(self.referee.course.preempted)
        return deque(self.referee.call("pick_victims", args, want))

    # ---- admission: chapter 10's admit -------------------------------------------------------
    def _admit(self, s):
        c = self.config
        simple = not (self.pool.caching or self.pool.shared_prefix or c.max_num_seqs)
        simple = simple and c.admission == "greedy" and not self.swapped
        if not (self.referee.yours("admit") and self.config.as_taught and simple):
            return super()._admit(s)
        waiting = [(q.req_id, self._to_prefill(q), q.request.output_len) for q in self.waiting]
        args = (waiting, self.pool.allocator.num_free_blocks, c.block_size, c.watermark_blocks)
        want = [run.req_id for run in self.referee.course.runs]
        copies, admitted = [], []
        for _ in self.referee.call("admit", args, want):
            q = self.waiting[0]
            n = self._to_prefill(q)
            copies += self.pool.admit(q.request, n)
            self.waiting.popleft().admit(n, 0, n)
            self.pool.cache(q)
            self._enter(q)
            admitted.append(q)
        if self.waiting:  # why the next one waits, for the step's record
            q = self.waiting[0]
            reason = why_wait(q, full=self._is_full(), swapped=False, held=False)
            reason = reason or self.pool.why_not(q.request, self._to_prefill(q))
            s.refused = ((q.req_id, reason),) if reason else ()
        s.admitted = tuple(admitted)
        return None, copies
