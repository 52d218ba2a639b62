"""One scheduler for simulated and real serving: continuous batching over a KV cache.

Time advances in decode steps. In each step: requests that have arrived join the FCFS queue;
every running request gets one more KV slot and the back-end computes (or, simulated, imagines)
that token; finished requests leave; then the queue's head is admitted (its prompt is prefilled
into the cache) for as long as memory allows. The same loop serves two back-ends:
- `Backend` (the default, simulated): lengths are known in advance, nothing is computed;
  `paged.simulator.simulate` runs it over synthetic workloads;
- the real model (`paged.model`): prefill and decode run SmolLM2's forward pass, writing K and V
  into the slots this scheduler hands out; a request ends at EOS or at its token cap.

Memory comes from contiguous reservation or paging; `paged.scheduler_config` settles a run's
options (policy, preemption mode, admission rule, watermark, shared prefix) and says what each
means. With paging, a request that needs a block when none is free preempts the latest-arrived
running request (§4.5). In a step that preempted, nothing is admitted or swapped back in (as in
vLLM's V0 scheduler, which swaps in only after a step without preemption): a victim returns one
step later at the earliest, so both preemption modes make the same schedule and differ only in
what recovery costs. A shared prefix is allocated and computed once, as a sequence of its own;
each admitted request forks it and copies only its partly filled last block on write.

Paged accounting uses the same categories as contiguous reservation: the empty slots of a
sequence's last block are "reservation" when the sequence will still fill them (§4.2: they "are
reserved for future generations") and "internal fragmentation" when it will finish first, so
internal waste is at most block_size - 1 slots per sequence.
"""

from __future__ import annotations

import bisect
from collections import deque

from .backend import Backend
from .contiguous import ContiguousAllocator
from .paging import PagedAllocator, num_blocks_for
from .scheduler_config import SchedulerConfig
from .trace import ContiguousLayout, PagedLayout, StepRecord, Usage, paged_layout
from .workloads import Request

PREFIX = "<shared prefix>"  # the allocator's sequence id for a shared prefix


class Scheduler:
    """One serving run that can be advanced a step at a time (widgets and `paged.model`)."""

    def __init__(
        self,
        requests: list[Request],
        policy: str,
        *,
        record_layout: bool = False,
        backend: Backend | None = None,
        **options,
    ):
        """`options` are `SchedulerConfig.settle`'s: kv_slots (required), block_size, placement,
        watermark, admission, preemption, max_num_seqs, shared_prefix, ..."""
        self.config = c = SchedulerConfig.settle(policy, **options)
        c.check_requests(requests)
        self.policy, self.kv_slots, self.shared_prefix = policy, c.kv_slots, c.shared_prefix
        self.backend = Backend() if backend is None else backend
        self.record_layout = record_layout
        self.cpu = None  # the CPU block allocator, when swapping
        if policy == "paged":
            self.allocator = PagedAllocator(c.num_blocks, c.block_size, seed=c.seed)
            if c.preemption == "swap":
                self.cpu = PagedAllocator(c.cpu_blocks, c.block_size)
        else:
            self.allocator = ContiguousAllocator(c.kv_slots, policy, c.placement, c.max_seq_len)
        self._pending = deque(sorted(requests, key=lambda r: (r.arrival_time, r.req_id)))
        self._arrival_rank = {r.req_id: i for i, r in enumerate(self._pending)}
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []  # in arrival order: the last one is preempted first
        self.swapped: deque[Request] = deque()  # in the CPU pool, oldest arrival first
        self.generated = {r.req_id: 0 for r in requests}  # tokens written after the prompt
        self.num_swapped_blocks = 0
        self.num_recomputed_tokens = 0
        self.step_index = 0
        self._num_tokens = 0  # tokens held by running requests (paged accounting)
        self._preempted: set = set()  # preempted and not finished yet
        self._prefix_held = False  # the shared prefix's blocks are allocated and computed

    # ---- queries -----------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return not (self._pending or self.waiting or self.running or self.swapped)

    def slot_mapping(self, req_id) -> list[int]:
        """Flat slot of every token `req_id` holds now, for either allocator."""
        if self.policy == "paged":
            return self.allocator.slot_mapping(req_id)
        e = self.allocator.extent(req_id)
        return list(range(e.start, e.start + e.num_tokens))

    def usage(self) -> Usage:
        """Slots per category right now."""
        a = self.allocator
        if self.policy != "paged":
            return Usage(**a.usage())
        held = a.num_used_blocks * a.block_size
        # Empty last-block slots the sequence will still fill are reserved, not wasted.
        reserved = 0
        for r in self.running:
            n = a.num_tokens(r.req_id)
            reserved += min(-n % a.block_size, r.final_len - n)
        return Usage(self._num_tokens, reserved, held - self._num_tokens - reserved,
                     self.kv_slots - held)  # fmt: skip

    def layout(self) -> PagedLayout | ContiguousLayout:
        """The current memory map."""
        a = self.allocator
        if self.policy != "paged":
            return ContiguousLayout(a.capacity_tokens, tuple(a.extents()))
        return paged_layout(a)

    # ---- one step ----------------------------------------------------------------------------
    def run(self) -> list[StepRecord]:
        """Step until every request has finished."""
        trace = []
        while not self.done:
            trace.append(self.step())
        return trace

    def step(self) -> StepRecord:
        """Advance one decode step and return what happened."""
        t = self.step_index
        while self._pending and self._pending[0].arrival_time <= t:
            self.waiting.append(self._pending.popleft())
        preempted = self._decode()
        finished = self._finish(list(self.running))
        if preempted:  # memory ran out this step: nothing comes back until the next one
            swapped_in, admitted = (), []
            refused = ((self.waiting[0].req_id, "preempting"),) if self.waiting else ()
        else:
            swapped_in = self._swap_in()
            admitted, refused = self._admit()
            if admitted:
                self.backend.prefill(self, admitted)
                finished += self._finish(admitted)  # a real model may stop at its first token
        self._drop_prefix_when_done()
        record = StepRecord(
            step=t,
            usage=self.usage(),
            num_running=len(self.running),
            num_waiting=len(self.waiting),
            admitted=tuple(r.req_id for r in admitted),
            refused=refused,
            preempted=preempted,
            finished=finished,
            layout=self.layout() if self.record_layout else None,
            rounded_up=0 if self.policy == "paged" else self.allocator.rounded_up,
            swapped_in=swapped_in,
            num_swapped=len(self.swapped),
        )
        self.step_index += 1
        return record

    def _drop_prefix_when_done(self) -> None:
        """Free the shared prefix once no request can need it again."""
        if self._prefix_held and self.done:
            self.allocator.free(PREFIX)
            self._num_tokens -= self.shared_prefix
            self._prefix_held = False

    @property
    def _shared_full(self) -> int:
        """Tokens of the shared prefix that lie in its full blocks (held once, by reference)."""
        return self.shared_prefix // self.allocator.block_size * self.allocator.block_size

    def _decode(self) -> tuple:
        """Give every running request one more slot, preempting when the pool runs dry."""
        preempted = []
        i = 0
        while i < len(self.running):
            r = self.running[i]
            if self.policy == "paged":
                while not self.allocator.can_append(r.req_id):
                    victim = self.running.pop()  # the latest arrival
                    self._preempt(victim)
                    preempted.append(victim.req_id)
                    if victim is r:
                        break
                if r.req_id not in self.allocator:
                    continue  # r preempted itself; everything before it has written
                self._num_tokens += 1
            self.allocator.append(r.req_id, 1)
            self.generated[r.req_id] += 1
            i += 1
        if self.running:  # every request still running got exactly one slot
            self.backend.decode(self, list(self.running))
        return tuple(preempted)

    def _finish(self, candidates: list[Request]) -> tuple:
        done = [r for r in candidates if self.backend.is_finished(self, r)]
        for r in done:
            self._release(r)
            self.running.remove(r)
            self._preempted.discard(r.req_id)
        return tuple(r.req_id for r in done)

    def _preempt(self, victim: Request) -> None:
        """Evict all of `victim`'s GPU blocks: copy them to the CPU pool, or drop them."""
        n = self.allocator.num_tokens(victim.req_id)
        if self.cpu is not None and self.cpu.can_allocate(n):
            self.cpu.allocate(victim.req_id, n)
            self.num_swapped_blocks += num_blocks_for(n, self.allocator.block_size)
            self.swapped.appendleft(victim)  # victims leave newest first: oldest ends in front
        else:
            # prompt + generated so far, prefilled again later (all but a shared prefix)
            self.num_recomputed_tokens += n - self.shared_prefix
            self.waiting.appendleft(victim)
        self._release(victim)
        self._preempted.add(victim.req_id)
        self.backend.preempted(self, victim)

    def _full(self) -> bool:
        cap = self.config.max_num_seqs
        return cap is not None and len(self.running) >= cap

    def _swap_in(self) -> tuple:
        """Copy swapped-out requests back, oldest first, while their blocks fit."""
        back = []
        while self.swapped and not self._full():
            r = self.swapped[0]
            n = self.cpu.num_tokens(r.req_id)
            need = num_blocks_for(n, self.allocator.block_size) + self.config.watermark_blocks
            if need > self.allocator.num_free_blocks:
                break
            self.swapped.popleft()
            self.cpu.free(r.req_id)
            self.allocator.allocate(r.req_id, n)
            self._num_tokens += n
            self._run(r)
            back.append(r.req_id)
        return tuple(back)

    def _run(self, r: Request) -> None:
        """Put `r` among the running requests, keeping them in arrival order."""
        bisect.insort(self.running, r, key=lambda q: self._arrival_rank[q.req_id])

    def _release(self, r: Request) -> None:
        if self.policy == "paged":  # the shared prefix's full blocks stay with the prefix
            self._num_tokens -= self.allocator.num_tokens(r.req_id) - self._shared_full
        self.allocator.free(r.req_id)

    def _blocks_to_admit(self, n: int) -> int:
        """New blocks a request holding n tokens takes (a shared prefix's full blocks are not)."""
        bs = self.allocator.block_size
        prefix = 0 if self._prefix_held else num_blocks_for(self.shared_prefix, bs)
        return prefix + num_blocks_for(n, bs) - self.shared_prefix // bs

    def _allocate(self, r: Request, n: int) -> None:
        """Give `r` its blocks: its own, or a fork of the shared prefix plus its own."""
        a = self.allocator
        if not self.shared_prefix:
            a.allocate(r.req_id, n)
            self._num_tokens += n
            return
        if not self._prefix_held:
            a.allocate(PREFIX, self.shared_prefix)
            self._num_tokens += self.shared_prefix
            self._prefix_held = True
            self.backend.share_prefix(self, PREFIX)
        a.fork(PREFIX, r.req_id)  # the prefix's blocks gain a reference: nothing is copied
        copies = a.append(r.req_id, n - self.shared_prefix)  # its partly filled last block
        if copies:
            self.backend.copy_blocks(self, copies)
        self._num_tokens += n - self._shared_full

    def _admit(self) -> tuple[list[Request], tuple]:
        admitted = []
        while self.waiting:
            r = self.waiting[0]
            if self._full():
                return admitted, ((r.req_id, "max_num_seqs"),)
            n = r.prompt_len + self.generated[r.req_id]  # recomputation re-prefills everything
            if self.policy == "paged":
                if self.swapped:  # §4.5: no new requests while swapped-out ones wait
                    return admitted, ((r.req_id, "swapped_waiting"),)
                held = self.config.admission == "hold" and self._preempted
                if held and r.req_id not in self._preempted:
                    return admitted, ((r.req_id, "held"),)  # §4.5: preempted ones first
                blocks = self._blocks_to_admit(n) + self.config.watermark_blocks
                if blocks > self.allocator.num_free_blocks:
                    return admitted, ((r.req_id, "no_free_blocks"),)
                self._allocate(r, n)
            else:
                lengths = dict(prompt_len=r.prompt_len, output_len=r.output_len)
                reason = self.allocator.why_not(**lengths)
                if reason is not None:
                    return admitted, ((r.req_id, reason),)
                self.allocator.allocate(r.req_id, **lengths, num_tokens=n)
            self.waiting.popleft()
            self._run(r)
            admitted.append(r)
        return admitted, ()
