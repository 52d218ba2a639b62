"""One scheduler for simulated and real serving: continuous batching over a KV cache.

Time advances in decode steps. In each step: requests that have arrived join the FCFS queue;
every running request gets one more KV slot and the back-end computes (or, simulated, imagines)
that token; finished requests leave; then the queue's head is admitted (its prompt is prefilled
into the cache) for as long as memory allows. The same loop serves two back-ends:
- `Backend` (the default, simulated): lengths are known in advance, nothing is computed;
  `paged.simulator.simulate` runs it over synthetic workloads;
- the real model (`paged.model`): prefill and decode run SmolLM2's forward pass, writing K and V
  into the slots this scheduler hands out; a request ends at EOS or at its token cap.

Memory comes from one of two allocators: contiguous reservation (`ContiguousAllocator`, policies
"max", "pow2", "oracle") or paging (`PagedAllocator`, policy "paged"). With paging, a request
that needs a block when none is free triggers a preemption (§4.5): the latest-arrived running
request ("the latest requests are preempted first") loses all of its GPU blocks ("all-or-nothing
eviction") and is recovered in one of two ways (`PREEMPTION_MODES`):
- "recompute" (default): its blocks are freed and it goes back to the queue's head, to be
  prefilled again (prompt + tokens generated so far) when it is re-admitted;
- "swap": its blocks are copied to a bounded CPU pool (the paper's CPU block allocator, by
  default as large as the GPU pool) and copied back, first come first served, when enough GPU
  blocks are free. While any request is swapped out, no new request is admitted (§4.5, and
  vLLM's V0 scheduler). A victim that does not fit the CPU pool is recomputed instead.
In a step that preempted, nothing is admitted or swapped back in (as in vLLM's V0 scheduler,
which swaps in only after a step without preemption): a victim returns one step later at the
earliest. Both modes therefore make the same schedule; they differ in what recovery costs.

Admission after a preemption follows one of two rules (`ADMISSION_RULES`):
- "greedy" (default): admit the queue's head whenever its blocks (plus the watermark) are free.
  Preempted requests head the queue, so they come back first. This is what vLLM's V0 scheduler
  does for recomputation (DOCS: `vllm/core/scheduler.py`, `_schedule_default`, commit 0054e1fa:
  preempted groups go to the front of `waiting`; new prefills pause only while requests are
  *swapped*).
- "hold": §4.5's rule, stated for swapping: "once it preempts a sequence and evicts its blocks,
  vLLM stops accepting new requests until all preempted sequences are completed". Preempted
  requests are re-admitted; requests that never ran wait until those have finished.

With paging, requests that all start with the same `shared_prefix` tokens (a system prompt) can
hold that prefix once (§4.4's sharing, and the doorway to prefix caching): the first admission
allocates and computes it as a sequence of its own, every admitted request forks it (its full
blocks gain a reference; nothing is copied) and copies only the prefix's partly filled last
block on write. A preempted request keeps nothing but the shared prefix, which stays until the
run is done; recomputation redoes only the request's own tokens.

Paged accounting uses the same categories as contiguous reservation: the empty slots of a
sequence's last block are "reservation" when the sequence will still fill them (§4.2: they "are
reserved for future generations") and "internal fragmentation" when it will finish first, so
internal waste is at most block_size - 1 slots per sequence. Options that do not apply to the
policy (a block size for a contiguous arena, a placement for a paged pool) are refused.
"""

from __future__ import annotations

import bisect
from collections import deque

from .contiguous import PLACEMENTS, POLICIES, ContiguousAllocator
from .errors import require_int
from .paging import PagedAllocator, num_blocks_for
from .trace import ContiguousLayout, PagedLayout, StepRecord, Usage, paged_layout
from .workloads import Request

SIM_POLICIES = (*POLICIES, "paged")
ADMISSION_RULES = ("greedy", "hold")
PREEMPTION_MODES = ("recompute", "swap")
_PAGED_ONLY = ("block_size", "seed", "watermark", "admission", "preemption", "cpu_blocks",
               "shared_prefix")  # fmt: skip
PREFIX = "<shared prefix>"  # the allocator's sequence id for a shared prefix


class Backend:
    """The simulated back-end: every length is known in advance and nothing is computed.

    A real back-end overrides the hooks; the scheduler calls them in this order within a step.
    """

    name = "simulated"

    def decode(self, scheduler: Scheduler, batch: list[Request]) -> None:
        """Every request in `batch` got one more slot (its last position): compute that token."""

    def is_finished(self, scheduler: Scheduler, request: Request) -> bool:
        """Whether `request` is done (checked after decode and right after prefill)."""
        return scheduler.generated[request.req_id] >= request.output_len

    def preempted(self, scheduler: Scheduler, request: Request) -> None:
        """`request` lost its slots; it will be prefilled again, or swapped back in."""

    def prefill(self, scheduler: Scheduler, admitted: list[Request]) -> None:
        """Each admitted request holds prompt_len + generated slots: compute their K and V
        (from position `scheduler.shared_prefix` on: the shared prefix is computed already)."""

    def share_prefix(self, scheduler: Scheduler, seq_id) -> None:
        """The shared prefix got its slots (sequence `seq_id`): compute its K and V, once."""

    def copy_blocks(self, scheduler: Scheduler, copies: list[tuple[int, int]]) -> None:
        """Copy-on-write: copy each (source, destination) physical block's K and V."""


class Scheduler:
    """One serving run that can be advanced a step at a time (widgets and `paged.model`)."""

    def __init__(
        self,
        requests: list[Request],
        policy: str,
        *,
        kv_slots: int,
        block_size: int | None = None,  # paged only, default 16
        max_seq_len: int = 2048,
        placement: str | None = None,  # contiguous only, default "first_fit"
        seed: int | None = None,  # paged only: shuffles the free list, default 0
        watermark: float | None = None,  # paged only, default 0.01 of the blocks
        admission: str | None = None,  # paged only, default "greedy"
        preemption: str | None = None,  # paged only, default "recompute"
        cpu_blocks: int | None = None,  # swap only, default as many as the GPU pool
        record_layout: bool = False,
        backend: Backend | None = None,
        max_num_seqs: int | None = None,  # cap on running requests (a compute limit)
        shared_prefix: int | None = None,  # paged only: leading prompt tokens every request shares
    ):
        if policy not in SIM_POLICIES:
            raise ValueError(f"policy must be one of {SIM_POLICIES}, got {policy!r}")
        given = dict(block_size=block_size, seed=seed, watermark=watermark, admission=admission,
                     preemption=preemption, cpu_blocks=cpu_blocks, placement=placement,
                     shared_prefix=shared_prefix)  # fmt: skip
        wrong = ("placement",) if policy == "paged" else _PAGED_ONLY
        for name in wrong:
            if given[name] is not None:
                kind = "a contiguous policy" if name == "placement" else "policy 'paged'"
                raise ValueError(f"{name}={given[name]!r} applies to {kind} only, not {policy!r}")
        kv_slots = require_int("kv_slots", kv_slots, at_least=1)
        self.policy = policy
        self.backend = Backend() if backend is None else backend
        self.max_num_seqs = None
        if max_num_seqs is not None:
            self.max_num_seqs = require_int("max_num_seqs", max_num_seqs, at_least=1)
        self.admission = "greedy" if admission is None else admission
        self.preemption = "recompute" if preemption is None else preemption
        if self.admission not in ADMISSION_RULES:
            raise ValueError(f"admission must be one of {ADMISSION_RULES}, got {admission!r}")
        if self.preemption not in PREEMPTION_MODES:
            raise ValueError(f"preemption must be one of {PREEMPTION_MODES}, got {preemption!r}")
        if cpu_blocks is not None and self.preemption != "swap":
            raise ValueError(f"cpu_blocks={cpu_blocks!r} applies to preemption='swap' only")
        self.shared_prefix = 0
        if shared_prefix is not None:
            self.shared_prefix = require_int("shared_prefix", shared_prefix, at_least=0)
            if self.shared_prefix and self.preemption == "swap":
                raise ValueError(f"shared_prefix={shared_prefix!r} works with recomputation only:"
                                 " a swapped request would take shared blocks with it")  # fmt: skip
        self.cpu = None  # the CPU block allocator, when swapping
        self.kv_slots = kv_slots
        self.record_layout = record_layout
        if policy == "paged":
            block_size = require_int("block_size", 16 if block_size is None else block_size,
                                     at_least=1)  # fmt: skip
            if block_size > kv_slots:
                raise ValueError(f"block_size {block_size} exceeds kv_slots {kv_slots}")
            watermark = 0.01 if watermark is None else watermark
            if not 0 <= watermark < 1:
                raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
            seed = 0 if seed is None else seed
            self.allocator = PagedAllocator(kv_slots // block_size, block_size, seed=seed)
            # Admission keeps this many blocks free for running requests to grow into (vLLM's
            # watermark); without it a full pool preempts on almost every step.
            self.watermark_blocks = int(watermark * self.allocator.num_blocks)
            if self.preemption == "swap":  # §4.5: swap space bounded by the GPU's KV blocks
                num = self.allocator.num_blocks if cpu_blocks is None else cpu_blocks
                self.cpu = PagedAllocator(require_int("cpu_blocks", num, at_least=1), block_size)
        else:
            placement = "first_fit" if placement is None else placement
            if placement not in PLACEMENTS:
                raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
            self.allocator = ContiguousAllocator(kv_slots, policy, placement, max_seq_len)
        self._check_requests(requests, max_seq_len)
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

    def _check_requests(self, requests, max_seq_len) -> None:
        ids = set()
        if self.policy != "paged":
            empty = ContiguousAllocator(
                self.kv_slots, self.policy, self.allocator.placement, max_seq_len
            )
        for r in requests:
            if r.req_id in ids:
                raise ValueError(f"duplicate req_id {r.req_id!r}")
            ids.add(r.req_id)
            if self.shared_prefix >= r.prompt_len:
                raise ValueError(
                    f"shared_prefix={self.shared_prefix} leaves request {r.req_id!r} (prompt of "
                    f"{r.prompt_len} tokens) no token of its own"
                )
            if r.final_len > max_seq_len:
                raise ValueError(
                    f"request {r.req_id!r} needs {r.final_len} tokens > max_seq_len {max_seq_len}"
                )
            if self.policy == "paged":  # admission keeps the watermark free: it must fit too
                need = num_blocks_for(r.final_len, self.allocator.block_size)
                if need + self.watermark_blocks > self.allocator.num_blocks:
                    raise ValueError(
                        f"request {r.req_id!r} needs {need} blocks (+ {self.watermark_blocks} "
                        f"kept free); the pool has {self.allocator.num_blocks}"
                    )
            elif not empty.can_allocate(prompt_len=r.prompt_len, output_len=r.output_len):
                size = empty.allocation_size(prompt_len=r.prompt_len, output_len=r.output_len)
                raise ValueError(
                    f"request {r.req_id!r} needs {size} contiguous slots; even an empty arena "
                    f"of {self.kv_slots} cannot hold it"
                )

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
        return self.max_num_seqs is not None and len(self.running) >= self.max_num_seqs

    def _swap_in(self) -> tuple:
        """Copy swapped-out requests back, oldest first, while their blocks fit."""
        back = []
        while self.swapped and not self._full():
            r = self.swapped[0]
            n = self.cpu.num_tokens(r.req_id)
            need = num_blocks_for(n, self.allocator.block_size) + self.watermark_blocks
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
        if not self.shared_prefix:
            return num_blocks_for(n, bs)
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
                if self.admission == "hold" and self._preempted and r.req_id not in self._preempted:
                    return admitted, ((r.req_id, "held"),)  # §4.5: preempted ones first
                blocks = self._blocks_to_admit(n) + self.watermark_blocks
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
