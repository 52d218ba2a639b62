"""One scheduler for simulated and real serving: continuous batching over a KV cache.

Time advances in steps, and each step has two phases; the scheduler never sees a model:
    step = scheduler.schedule()            # what to compute (a `paged.step.Step`)
    token_ids = run(step)                  # the caller computes it (or, simulated, imagines it)
    record = scheduler.postprocess(step, token_ids)   # a `StepRecord` once the step is complete
1. "decode": requests that have arrived join the FCFS queue; every running request gets one
   more KV slot, the position of its newest token, and samples the next one; finished requests
   leave (at their `output_len`-th token, or at `eos_token_id`).
2. "prefill": unless this step preempted, swapped-out requests come back and the queue's head
   is admitted (its prompt prefilled into the cache) for as long as memory allows.
The simulator (`paged.simulator.simulate`, and `step()` here) knows every length in advance and
computes nothing; the real model (`paged.model.generate`) runs SmolLM2's forward pass over the
same steps, writing K and V into the slots the step names.

Memory comes through one pool interface (`paged.pool`); `paged.scheduler_config` settles a
run's options (policy, preemption, admission, watermark, shared prefix, vLLM V1's rules) and says
what each means. `generated[r]` counts r's tokens past the prompt that hold a KV slot: a
simulated request decodes `output_len` times; a real model also samples from the prefill.
"""

from __future__ import annotations

from collections import deque

from . import admission
from .pool import make_pool
from .scheduler_config import SchedulerConfig
from .step import SeqRun, Step
from .trace import ContiguousLayout, PagedLayout, StepRecord, Usage
from .workloads import Request


class Scheduler:
    """One serving run, advanced a phase at a time (`schedule` / `postprocess`) or a step at a
    time when simulated (`step`, `run`)."""

    def __init__(
        self, requests: list[Request], policy: str, *, record_layout: bool = False, **options
    ):
        """`options` are `SchedulerConfig.settle`'s: kv_slots (required), block_size, placement,
        watermark, admission, preemption, max_num_seqs, shared_prefix, eos_token_id, ..."""
        self.config = c = SchedulerConfig.settle(policy, **options)
        c.check_requests(requests)
        self.kv_slots, self.shared_prefix = c.kv_slots, c.shared_prefix
        self.pool = make_pool(c)
        self.record_layout = record_layout
        self._pending = deque(sorted(requests, key=lambda r: (r.arrival_time, r.req_id)))
        self.arrival_rank = {r.req_id: i for i, r in enumerate(self._pending)}
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []  # in arrival order: the last one is preempted first
        self.swapped: deque[Request] = deque()  # in the CPU pool, oldest arrival first
        self.generated = {r.req_id: 0 for r in requests}  # tokens past the prompt with a slot
        self.output_ids = {r.req_id: [] for r in requests}  # sampled (None when simulated)
        self.num_swapped_blocks = 0
        self.num_recomputed_tokens = 0
        self.step_index = 0
        self.preempted_ids: set = set()  # preempted and not finished yet
        # This step's phases while it runs: decode, the requests it finished, then prefill.
        self._decoded: Step | None = None
        self._decode_finished: tuple | None = None
        self._prefill: Step | None = None
        self._refused: tuple = ()
        self._admitted: tuple = ()

    # ---- queries -----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Every request finished, and no step is half computed."""
        return not self._requests_left() and self._decoded is None

    @property
    def allocator(self):
        """The GPU pool's allocator (a `PagedAllocator` or a `ContiguousAllocator`)."""
        return self.pool.allocator

    def slot_mapping(self, req_id) -> list[int]:
        """Flat slot of every token `req_id` holds now."""
        return self.pool.slot_mapping(req_id)

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
        """Both phases of one step, simulated."""
        record = None
        while record is None:
            record = self.postprocess(self.schedule())
        return record

    # ---- one phase at a time -----------------------------------------------------------------
    def schedule(self) -> Step:
        """The next phase to compute: this step's decode phase, or after it its prefill phase
        (under vLLM V1's rules, one "mixed" phase: the decodes, then the admitted prefills)."""
        if self._decoded is None:
            decode = self._schedule_decode()
            if self.config.rules != "vllm-v1":
                return decode
            prefill = self._schedule_prefill()
            self._decoded = self._prefill = prefill._replace(
                phase="mixed",
                runs=decode.runs + prefill.runs,
                preempted=decode.preempted,
                copies=decode.copies + prefill.copies,
            )
            return self._prefill
        if self._decode_finished is None:
            raise RuntimeError(f"step {self.step_index}: postprocess its decode phase first")
        if self._prefill is not None:
            raise RuntimeError(f"step {self.step_index}: postprocess its prefill phase first")
        return self._schedule_prefill()

    def postprocess(self, step: Step, token_ids: dict | None = None) -> StepRecord | None:
        """Take back the tokens `step` sampled ({req_id: token id}; None when simulated) and
        retire finished requests. Returns the step's record after its prefill phase, else None."""
        if step is not (self._prefill or self._decoded) or (
            step.phase == "decode" and self._decode_finished is not None
        ):
            raise ValueError(f"step {step.index} ({step.phase}) is not the phase being computed")
        sampling = step.sampling  # a property that builds its tuple: read it once
        missing = [q for q in sampling if token_ids is not None and q not in token_ids]
        if missing:
            raise ValueError(f"token_ids has no token for {missing} (step {step.index})")
        for req_id in sampling:
            self.output_ids[req_id].append(None if token_ids is None else token_ids[req_id])
        if step.phase == "decode":
            self._decode_finished = self._finish(self.running)
            return None
        if step.phase == "mixed":  # every running request ran: any of them may be done
            self._decode_finished = ()
            return self._record(step, self._finish(self.running))
        admitted = [r for r in self.running if r.req_id in self._admitted]
        return self._record(step, self._finish(admitted))

    def _schedule_decode(self) -> Step:
        t = self.step_index
        while self._pending and self._pending[0].arrival_time <= t:
            self.waiting.append(self._pending.popleft())
        preempted, copies = self._grow()
        runs = tuple([self._run_of(r, self._held(r) - 1, True) for r in self.running])
        self._decoded = Step(t, "decode", runs, len(self.running), preempted, tuple(copies))
        return self._decoded

    def _schedule_prefill(self) -> Step:
        decoded = self._decoded
        prefix, copies, swapped_in, admitted = None, [], (), []
        if decoded.preempted:  # memory ran out this step: nothing comes back until the next one
            self._refused = ((self.waiting[0].req_id, "preempting"),) if self.waiting else ()
        else:
            swapped_in = admission.swap_in(self)
            prefix, copies, admitted, self._refused = admission.admit(self)
        sample = self.config.prefill_samples
        self._admitted = tuple(r.req_id for r in admitted)
        runs = tuple(self._run_of(r, self.shared_prefix, sample) for r in admitted)
        self._prefill = Step(
            decoded.index,
            "prefill",
            runs,
            len(self.running),
            copies=tuple(copies),
            prefix=prefix,
            swapped_in=swapped_in,
        )
        return self._prefill

    def _record(self, step: Step, finished: tuple) -> StepRecord:
        decoded = self._decoded
        if self.shared_prefix and self.pool.holds_prefix and not self._requests_left():
            self.pool.release_prefix()  # no request can need it again
        record = StepRecord(
            step=step.index,
            usage=self.usage(),
            num_running=len(self.running),
            num_waiting=len(self.waiting),
            admitted=self._admitted,
            refused=self._refused,
            preempted=decoded.preempted,
            finished=self._decode_finished + finished,
            layout=self.layout() if self.record_layout else None,
            rounded_up=self.pool.rounded_up,
            swapped_in=step.swapped_in,
            num_swapped=len(self.swapped),
        )
        self._decoded = self._decode_finished = self._prefill = None
        self.step_index += 1
        return record

    def _requests_left(self) -> bool:
        return bool(self._pending or self.waiting or self.running or self.swapped)

    # ---- what a phase computes ---------------------------------------------------------------
    def _held(self, r: Request) -> int:
        return r.prompt_len + self.generated[r.req_id]

    def to_prefill(self, r: Request) -> int:
        """Tokens `r` holds once admitted: what it held before a preemption (recomputed), or
        under vLLM V1's rules every token it has, the one it sampled last included."""
        if self.config.rules == "vllm-v1":
            return r.prompt_len + len(self.output_ids[r.req_id])
        return self._held(r)

    def _run_of(self, r: Request, start: int, sample: bool) -> SeqRun:
        """Positions start .. held - 1 of `r`. A request re-prefilled after a preemption keeps
        the token it sampled last (it has no slot yet) and samples nothing new."""
        held, out = self._held(r), self.output_ids[r.req_id]
        sample = sample and len(out) <= self.generated[r.req_id]
        if r.prompt_token_ids is None:  # simulated: no model reads the run's table
            return SeqRun(r.req_id, start, held - start, None, (), sample)
        ids = (r.prompt_token_ids + tuple(out))[start:held]
        table = tuple(self.pool.block_table(r.req_id))
        return SeqRun(r.req_id, start, held - start, ids, table, sample)

    # ---- decode: grow, preempting when the pool runs dry -------------------------------------
    def _grow(self) -> tuple[tuple, list]:
        """Give every running request one more slot; return the preempted and the copies."""
        preempted, copies = [], []
        i = 0
        while i < len(self.running):
            r = self.running[i]
            evicted = False
            while not self.pool.can_grow(r.req_id):
                victim = self.running.pop()  # the latest arrival
                self._preempt(victim)
                preempted.append(victim.req_id)
                if victim is r:
                    evicted = True
                    break
            if evicted:
                continue  # r preempted itself; everything before it has its slot
            copies += self.pool.grow(r.req_id)
            self.generated[r.req_id] += 1
            i += 1
        return tuple(preempted), copies

    def _finish(self, candidates: list[Request]) -> tuple:
        done = [r for r in candidates if self._is_finished(r)]  # the whole list before any leaves
        for r in done:
            self.pool.release(r.req_id)
            self.running.remove(r)
            self.preempted_ids.discard(r.req_id)
        return tuple(r.req_id for r in done)

    def _is_finished(self, r: Request) -> bool:
        """At the `output_len`-th token (simulated: decode), or at the end-of-sequence token."""
        out, eos = self.output_ids[r.req_id], self.config.eos_token_id
        return len(out) >= r.output_len or (eos is not None and bool(out) and out[-1] == eos)

    def _preempt(self, victim: Request) -> None:
        """Evict all of `victim`'s GPU blocks: copy them to the CPU pool, or drop them."""
        blocks = self.pool.swap_out(victim.req_id)
        if blocks:
            self.num_swapped_blocks += blocks
            self.swapped.appendleft(victim)  # victims leave newest first: oldest ends in front
        else:
            # prompt + generated so far, prefilled again later (all but a shared prefix)
            self.num_recomputed_tokens += self.pool.num_tokens(victim.req_id) - self.shared_prefix
            self.waiting.appendleft(victim)
        self.pool.release(victim.req_id)
        self.preempted_ids.add(victim.req_id)
