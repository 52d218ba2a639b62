"""A step-by-step serving simulator: continuous batching over a contiguous or a paged KV cache.

Time advances in decode steps. In each step: requests that have arrived join the FCFS queue;
every running request writes one more token; finished requests leave; then the queue's head is
admitted (its prompt is prefilled into the cache) for as long as memory allows. With paging,
a request that needs a block when none is free triggers a preemption (§4.5): the latest-arrived
running request ("the latest requests are preempted first") loses all of its GPU blocks
("all-or-nothing eviction") and is recovered in one of two ways (`PREEMPTION_MODES`):
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

Paged accounting uses the same categories as contiguous reservation: the empty slots of a
sequence's last block are "reservation" when the sequence will still fill them (§4.2: they "are
reserved for future generations") and "internal fragmentation" when it will finish first, so
internal waste is at most block_size - 1 slots per sequence.

The result keeps a per-step trace (memory usage, admissions, refusals with their reason,
preemptions, and optionally the full memory map) for drawings and widgets to replay.
Assumptions are the simulator's own, not the paper's testbed: see `simulate`.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass

from .contiguous import POLICIES, ContiguousAllocator, Extent
from .errors import require_int
from .paging import PagedAllocator, num_blocks_for
from .workloads import Request

CATEGORIES = ("token_states", "reservation", "internal_fragmentation", "external_fragmentation")
SIM_POLICIES = (*POLICIES, "paged")
ADMISSION_RULES = ("greedy", "hold")
PREEMPTION_MODES = ("recompute", "swap")


@dataclass(frozen=True)
class PagedLayout:
    """The block pool at one moment: each sequence's block table and token count."""

    num_blocks: int
    block_size: int
    tables: tuple[tuple[object, tuple[int, ...], int], ...]  # (req_id, block_table, num_tokens)


@dataclass(frozen=True)
class ContiguousLayout:
    """The arena at one moment: every live extent in address order."""

    capacity_tokens: int
    extents: tuple[Extent, ...]


@dataclass(frozen=True)
class StepRecord:
    """What happened in one decode step, and the memory picture at its end."""

    step: int
    usage: tuple[int, int, int, int]  # slots per CATEGORIES entry
    num_running: int
    num_waiting: int  # arrived but not admitted (swapped-out requests not included)
    admitted: tuple = ()
    refused: tuple = ()  # ((req_id, reason),): the FCFS head that was not admitted
    preempted: tuple = ()
    finished: tuple = ()
    layout: PagedLayout | ContiguousLayout | None = None
    rounded_up: int = 0  # slots of external_fragmentation taken by the buddy round-up
    swapped_in: tuple = ()  # requests copied back from the CPU pool
    num_swapped: int = 0  # requests waiting in the CPU pool at the end of the step


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


def paged_layout(allocator: PagedAllocator) -> PagedLayout:
    """The drawing input for a PagedAllocator's current state."""
    a = allocator
    tables = tuple((s, tuple(a.block_table(s)), a.num_tokens(s)) for s in a.seq_ids)
    return PagedLayout(a.num_blocks, a.block_size, tables)


class Simulator:
    """One serving run that can be advanced a step at a time (widgets drive this)."""

    def __init__(
        self,
        requests: list[Request],
        policy: str,
        *,
        kv_slots: int,
        block_size: int = 16,
        max_seq_len: int = 2048,
        placement: str = "first_fit",
        seed: int = 0,
        watermark: float = 0.01,
        admission: str = "greedy",
        preemption: str = "recompute",
        cpu_blocks: int | None = None,
        record_layout: bool = False,
    ):
        if policy not in SIM_POLICIES:
            raise ValueError(f"policy must be one of {SIM_POLICIES}, got {policy!r}")
        if admission not in ADMISSION_RULES:
            raise ValueError(f"admission must be one of {ADMISSION_RULES}, got {admission!r}")
        if preemption not in PREEMPTION_MODES:
            raise ValueError(f"preemption must be one of {PREEMPTION_MODES}, got {preemption!r}")
        kv_slots = require_int("kv_slots", kv_slots, at_least=1)
        self.policy = policy
        self.admission = admission
        self.preemption = preemption
        self.cpu = None  # the CPU block allocator, when swapping
        self.kv_slots = kv_slots
        self.record_layout = record_layout
        if policy == "paged":
            block_size = require_int("block_size", block_size, at_least=1)
            if block_size > kv_slots:
                raise ValueError(f"block_size {block_size} exceeds kv_slots {kv_slots}")
            self.allocator = PagedAllocator(kv_slots // block_size, block_size, seed=seed)
            if not 0 <= watermark < 1:
                raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
            # Admission keeps this many blocks free for running requests to grow into (vLLM's
            # watermark); without it a full pool preempts on almost every step.
            self.watermark_blocks = int(watermark * self.allocator.num_blocks)
            if preemption == "swap":  # §4.5: swap space bounded by the GPU's KV blocks
                num = self.allocator.num_blocks if cpu_blocks is None else cpu_blocks
                self.cpu = PagedAllocator(require_int("cpu_blocks", num, at_least=1), block_size)
        else:
            self.allocator = ContiguousAllocator(kv_slots, policy, placement, max_seq_len)
        self._check_requests(requests, max_seq_len)
        self._pending = deque(sorted(requests, key=lambda r: (r.arrival_time, r.req_id)))
        self._arrival_rank = {r.req_id: i for i, r in enumerate(self._pending)}
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []  # in arrival order: the last one is preempted first
        self.swapped: deque[Request] = deque()  # in the CPU pool, oldest arrival first
        self.generated = {r.req_id: 0 for r in requests}
        self.num_swapped_blocks = 0
        self.num_recomputed_tokens = 0
        self.step_index = 0
        self._num_tokens = 0  # tokens held by running requests (paged accounting)
        self._preempted: set = set()  # preempted and not finished yet

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

    @property
    def done(self) -> bool:
        return not (self._pending or self.waiting or self.running or self.swapped)

    def usage(self) -> tuple[int, int, int, int]:
        """Slots per category right now."""
        a = self.allocator
        if self.policy != "paged":
            u = a.usage()
            return tuple(u[c] for c in CATEGORIES)
        held = a.num_used_blocks * a.block_size
        # Empty last-block slots the sequence will still fill are reserved, not wasted.
        reserved = 0
        for r in self.running:
            n = a.num_tokens(r.req_id)
            reserved += min(-n % a.block_size, r.final_len - n)
        return (
            self._num_tokens,
            reserved,
            held - self._num_tokens - reserved,
            self.kv_slots - held,
        )

    def layout(self) -> PagedLayout | ContiguousLayout:
        """The current memory map."""
        a = self.allocator
        if self.policy != "paged":
            return ContiguousLayout(a.capacity_tokens, tuple(a.extents()))
        return paged_layout(a)

    def step(self) -> StepRecord:
        """Advance one decode step and return what happened."""
        t = self.step_index
        while self._pending and self._pending[0].arrival_time <= t:
            self.waiting.append(self._pending.popleft())
        preempted = self._decode()
        finished = self._finish()
        if preempted:  # memory ran out this step: nothing comes back until the next one
            swapped_in, admitted = (), ()
            refused = ((self.waiting[0].req_id, "preempting"),) if self.waiting else ()
        else:
            swapped_in = self._swap_in()
            admitted, refused = self._admit()
        record = StepRecord(
            step=t,
            usage=self.usage(),
            num_running=len(self.running),
            num_waiting=len(self.waiting),
            admitted=admitted,
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

    def _decode(self) -> tuple:
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
        return tuple(preempted)

    def _finish(self) -> tuple:
        done = [r for r in self.running if self.generated[r.req_id] >= r.output_len]
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
            self.num_recomputed_tokens += n  # prompt + generated so far, prefilled again later
            self.waiting.appendleft(victim)
        self._release(victim)
        self._preempted.add(victim.req_id)

    def _swap_in(self) -> tuple:
        """Copy swapped-out requests back, oldest first, while their blocks fit."""
        back = []
        while self.swapped:
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
        if self.policy == "paged":
            self._num_tokens -= self.allocator.num_tokens(r.req_id)
        self.allocator.free(r.req_id)

    def _admit(self) -> tuple[tuple, tuple]:
        admitted = []
        while self.waiting:
            r = self.waiting[0]
            n = r.prompt_len + self.generated[r.req_id]  # recomputation re-prefills everything
            if self.policy == "paged":
                if self.swapped:  # §4.5: no new requests while swapped-out ones wait
                    return tuple(admitted), ((r.req_id, "swapped_waiting"),)
                if self.admission == "hold" and self._preempted and r.req_id not in self._preempted:
                    return tuple(admitted), ((r.req_id, "held"),)  # §4.5: preempted ones first
                blocks = num_blocks_for(n, self.allocator.block_size) + self.watermark_blocks
                if blocks > self.allocator.num_free_blocks:
                    return tuple(admitted), ((r.req_id, "no_free_blocks"),)
                self.allocator.allocate(r.req_id, n)
                self._num_tokens += n
            else:
                lengths = dict(prompt_len=r.prompt_len, output_len=r.output_len)
                reason = self.allocator.why_not(**lengths)
                if reason is not None:
                    return tuple(admitted), ((r.req_id, reason),)
                self.allocator.allocate(r.req_id, **lengths, num_tokens=n)
            self.waiting.popleft()
            self._run(r)
            admitted.append(r.req_id)
        return tuple(admitted), ()


def simulate(requests: list[Request], policy: str, **options) -> SimResult:
    """Serve `requests` to completion under `policy` and summarise memory use.

    `options` are `Simulator`'s keyword arguments (kv_slots is required). `breakdown` and
    `mean_batch_size` average over the steps in which some request was waiting (memory was the
    limit), or over every busy step if none ever waited. Fractions are of all `kv_slots`; for
    "paged" the slots that do not fill a whole block count as external fragmentation & others,
    as every unused slot does. `rounded_up` is the part of external fragmentation & others that
    the buddy round-up took. SIMULATED: one token per running request per step, FCFS, no
    compute limit on batch size.
    """
    sim = Simulator(requests, policy, **options)
    trace = []
    while not sim.done:
        trace.append(sim.step())
    loaded = (
        [s for s in trace if s.num_waiting or s.num_swapped]
        or [s for s in trace if s.num_running]
        or trace
    )
    totals = [sum(s.usage[k] for s in loaded) for k in range(len(CATEGORIES))]
    denom = max(1, len(loaded)) * sim.kv_slots
    paged = policy == "paged"
    return SimResult(
        policy=policy,
        placement=None if paged else sim.allocator.placement,
        kv_slots=sim.kv_slots,
        block_size=sim.allocator.block_size if paged else None,
        breakdown={c: v / denom for c, v in zip(CATEGORIES, totals, strict=True)},
        rounded_up=sum(s.rounded_up for s in loaded) / denom,
        mean_batch_size=sum(s.num_running for s in loaded) / max(1, len(loaded)),
        max_batch_size=max((s.num_running for s in trace), default=0),
        num_preemptions=sum(len(s.preempted) for s in trace),
        swapped_blocks=sim.num_swapped_blocks,
        recomputed_tokens=sim.num_recomputed_tokens,
        num_steps=len(trace),
        trace=tuple(trace),
    )
