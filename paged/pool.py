"""One pool interface, two memories: contiguous reservation and paging, seen alike by the scheduler.

The scheduler (`paged.scheduler`) asks its KV memory the same questions whatever the policy:
could this request ever fit, alone (`fits_alone`), may it be admitted now (`why_not`), give it
its slots (`admit`), may a running request grow by one token (`can_grow`, `grow`), take its
slots back (`release`), what does memory hold now (`usage`, `layout`) and where does each token
live (`block_table`, `slot_mapping`). `make_pool` builds the pool a settled config
(`paged.scheduler_config`) asks for; it is the one place that tells the two memories apart.

- `ContiguousPool`: one range per request, reserved at admission by the policy's rule ("max",
  "pow2", "oracle"; `paged.contiguous`), so a running request always has room to grow and is
  never preempted. Its "blocks" are single slots: the block table of a range is its slots.
- `PagedPool`: blocks taken one at a time (`paged.paging`). A request that cannot grow is the
  scheduler's cue to preempt (§4.5); with swapping, the victim's blocks go to a CPU pool of
  their own. A shared prefix (a system prompt) is held once, as a sequence of its own, and
  forked into every admitted request (§4.4); its full blocks are counted once. With
  `prefix_caching`, full blocks keep their hash and later requests find them
  (`paged.block_pool`): `find_hits` at admission, `cache` when a sequence's blocks fill.
"""

from __future__ import annotations

from .block_pool import CachingAllocator
from .contiguous import ContiguousAllocator
from .paging import PagedAllocator, num_blocks_for
from .step import SeqRun
from .trace import ContiguousLayout, PagedLayout, Usage, paged_layout
from .workloads import Request

PREFIX = "<shared prefix>"  # the allocator's sequence id for a shared prefix


class ContiguousPool:
    """Contiguous reservation: the whole of a request's reservation is taken at admission."""

    block_size = 1  # a range of slots is a block table of one-slot blocks
    shared_prefix, holds_prefix, caching = 0, False, False  # nothing is shared

    def __init__(self, config):
        c = config
        self.allocator = self.new_allocator(c)
        self._empty = ContiguousAllocator(c.kv_slots, c.policy, c.placement, c.max_seq_len)
        self.num_slots = config.kv_slots

    def new_allocator(self, c) -> ContiguousAllocator:
        """The arena's allocator (a learner's engine hands in its own: `paged.learner`)."""
        return ContiguousAllocator(c.kv_slots, c.policy, c.placement, c.max_seq_len)

    def fits_alone(self, r: Request) -> str | None:
        """None if `r`'s reservation fits the empty arena, else why it never can."""
        lens = dict(prompt_len=r.prompt_len, output_len=r.output_len)
        if self._empty.can_allocate(**lens):
            return None
        return (
            f"request {r.req_id!r} needs {self._empty.allocation_size(**lens)} contiguous slots "
            f"(policy {self.allocator.policy!r} reserves them at admission); even an empty arena "
            f"of kv_slots={self.num_slots} cannot hold it"
        )

    def find_hits(self, q, num_tokens: int, running: bool = True) -> list:
        return []  # no prefix caching

    def cache(self, q) -> None:
        pass

    def why_not(self, r: Request, num_tokens: int, hits=(), running: bool = True) -> str | None:
        """None if `r` can be admitted now, else the reason ("no_space", "no_hole")."""
        return self.allocator.why_not(prompt_len=r.prompt_len, output_len=r.output_len)

    def admit(self, r: Request, num_tokens: int, hits=()) -> list[tuple[int, int]]:
        """Reserve `r`'s range with its first `num_tokens` tokens written; nothing to copy."""
        self.allocator.allocate(
            r.req_id, prompt_len=r.prompt_len, output_len=r.output_len, num_tokens=num_tokens
        )
        return []

    def can_grow(self, req_id, num_tokens: int = 1) -> bool:
        return True  # reserved at admission

    def grow(self, req_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        self.allocator.append(req_id, num_tokens)
        return []

    def release(self, req_id) -> None:
        self.allocator.free(req_id)

    def swap_out(self, req_id) -> int:
        return 0  # never preempted: nothing to swap

    def num_tokens(self, req_id) -> int:
        return self.allocator.extent(req_id).num_tokens

    def slot_mapping(self, req_id) -> list[int]:
        e = self.allocator.extent(req_id)
        return list(range(e.start, e.start + e.num_tokens))

    block_table = slot_mapping  # blocks of one slot

    def usage(self, running: list) -> Usage:
        return Usage(**self.allocator.usage())

    def layout(self) -> ContiguousLayout:
        return ContiguousLayout(self.allocator.capacity_tokens, tuple(self.allocator.extents()))

    @property
    def rounded_up(self) -> int:
        return self.allocator.rounded_up


class PagedPool:
    """Paging: blocks on demand, preemption when none is free, an optional CPU pool for swapping."""

    def __init__(self, config):
        self.config = c = config
        self.allocator = self.new_allocator(c)
        if c.null_block:  # vLLM's block 0: held by no sequence, never handed out
            self.allocator.reserve(0)
        self.cpu = PagedAllocator(c.cpu_blocks, c.block_size) if c.preemption == "swap" else None
        self.holds_prefix = False  # the shared prefix's blocks are allocated (and computed)

    # What the settled config says, read from it (the pools' common interface).
    caching = property(lambda self: self.config.prefix_caching)
    null_block = property(lambda self: self.config.null_block)
    block_size = property(lambda self: self.config.block_size)
    kv_slots = property(lambda self: self.config.kv_slots)
    watermark_blocks = property(lambda self: self.config.watermark_blocks)
    shared_prefix = property(lambda self: self.config.shared_prefix)
    num_slots = property(lambda self: self.config.num_blocks * self.config.block_size)  # blocks

    def new_allocator(self, c) -> PagedAllocator:
        """The GPU pool's allocator (a learner's engine hands in its own: `paged.learner`)."""
        if c.prefix_caching:  # vLLM V1's free queue, with cached blocks at its tail
            return CachingAllocator(c.num_blocks, c.block_size, seed=c.seed)
        # vLLM V1's free queue takes freed blocks back at its front
        return PagedAllocator(c.num_blocks, c.block_size, seed=c.seed, free_to_front=c.null_block)

    @property
    def _shared_full(self) -> int:
        """Tokens of the shared prefix that lie in its full blocks (held once, by reference)."""
        return self.shared_prefix // self.block_size * self.block_size

    # ---- admission -----------------------------------------------------------------------
    def kept_free(self, running: bool = True) -> int:
        """The blocks admission keeps free: the watermark, but none while nothing runs under
        vLLM V1's rules (`PagedConfig.watermark_while_running`)."""
        if running or not self.config.watermark_while_running:
            return self.watermark_blocks
        return 0

    def fits_alone(self, r: Request) -> str | None:
        """None if `r` fits an empty pool with the watermark kept free (admission keeps it free:
        it must fit too; vLLM V1 keeps none while nothing runs), else why it never can."""
        c = self.config
        need, kept = num_blocks_for(r.final_len, self.block_size), self.kept_free(running=False)
        if need + kept <= c.usable_blocks:
            return None
        null = " (one of them vLLM's null block)" if self.null_block else ""
        return (
            f"request {r.req_id!r} needs {need} blocks (+ {kept} kept free); "
            f"kv_slots={self.kv_slots} hold {c.num_blocks} blocks of {self.block_size}{null}"
        )

    def find_hits(self, q, num_tokens: int, running: bool = True) -> list[int]:
        """The cached blocks `q` (a `Sequence` that will hold `num_tokens`) can take: its longest
        chain of hits, never its last token's (none without prefix caching). `running`: whether
        some request runs (`kept_free`)."""
        if not self.caching:
            return []
        a, bs = self.allocator, self.block_size
        fewest = -(-num_tokens // bs) - (num_tokens - 1) // bs  # every full block a hit, held
        if fewest + self.kept_free(running) > a.num_free_blocks:
            return []  # it cannot be admitted whatever it finds: skip the look-up
        return a.find_cached(self.hashes(q), num_tokens)

    def cache(self, q) -> None:
        """Record the hashes of `q`'s blocks that are full now (prefix caching only)."""
        if self.caching:
            self.allocator.cache_full_blocks(q.req_id, self.hashes(q))

    def hashes(self, q) -> list:
        """The hash chain of `q`'s full blocks whose tokens are known (`Sequence.hashes`)."""
        return q.hashes(self.block_size)

    def why_not(self, r: Request, num_tokens: int, hits=(), running: bool = True) -> str | None:
        """None if `num_tokens` of `r` fit with the blocks `kept_free(running)` left free, else
        "no_free_blocks"; `hits`: cached blocks it takes (a free one counts as taken: vLLM's
        `get_num_blocks_to_allocate`)."""
        if self.caching:
            new = self.allocator.num_blocks_to_allocate(num_tokens, hits)
        else:
            new = num_blocks_for(num_tokens - self._shared_full, self.block_size)
            if self.shared_prefix and not self.holds_prefix:  # the first one brings the prefix
                new += num_blocks_for(self.shared_prefix, self.block_size)
        if new + self.kept_free(running) > self.allocator.num_free_blocks:
            return "no_free_blocks"
        return None

    def hold_prefix(self, prompt_token_ids: tuple | None) -> SeqRun:
        """Allocate the shared prefix once; return the run that computes it (the first
        `shared_prefix` of `prompt_token_ids`, None when simulated) into its blocks."""
        n = self.shared_prefix
        self.allocator.allocate(PREFIX, n)
        self.holds_prefix = True
        table = tuple(self.allocator.block_table(PREFIX))
        ids = prompt_token_ids and prompt_token_ids[:n]
        return SeqRun(PREFIX, 0, n, ids, table, sample=False)

    def admit(self, r: Request, num_tokens: int, hits=()) -> list[tuple[int, int]]:
        """Give `r` its blocks: its own (after the cached `hits`), or a fork of the shared prefix
        plus its own; return the (source, destination) blocks to copy on write (a partly filled
        prefix block)."""
        if self.caching:
            self.allocator.allocate_cached(r.req_id, num_tokens, hits)
            return []
        if not self.shared_prefix:
            self.allocator.allocate(r.req_id, num_tokens)
            return []
        self.allocator.fork(PREFIX, r.req_id)  # the prefix's blocks gain a reference
        return self.allocator.append(r.req_id, num_tokens - self.shared_prefix)

    def release_prefix(self) -> None:
        self.allocator.free(PREFIX)
        self.holds_prefix = False

    # ---- growth and preemption -----------------------------------------------------------
    def can_grow(self, req_id, num_tokens: int = 1) -> bool:
        return self.allocator.can_append(req_id, num_tokens)

    def grow(self, req_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        """`num_tokens` more slots: a decode's one, or a chunk of a prefill (vLLM V1)."""
        return self.allocator.append(req_id, num_tokens)

    def release(self, req_id) -> None:
        self.allocator.free(req_id)

    def swap_out(self, req_id) -> int:
        """Copy `req_id`'s blocks to the CPU pool if they fit there; return how many (0: not)."""
        n = self.allocator.num_tokens(req_id)
        if self.cpu is None or not self.cpu.can_allocate(n):
            return 0
        self.cpu.allocate(req_id, n)
        return num_blocks_for(n, self.block_size)

    def can_swap_in(self, req_id) -> bool:
        need = num_blocks_for(self.cpu.num_tokens(req_id), self.block_size)
        return need + self.watermark_blocks <= self.allocator.num_free_blocks

    def swap_in(self, req_id) -> None:
        n = self.cpu.num_tokens(req_id)
        self.cpu.free(req_id)
        self.allocator.allocate(req_id, n)

    # ---- what memory holds ---------------------------------------------------------------
    def num_tokens(self, req_id) -> int:
        return self.allocator.num_tokens(req_id)

    def block_table(self, req_id) -> list[int]:
        return self.allocator.block_table(req_id)

    def slot_mapping(self, req_id) -> list[int]:
        return self.allocator.slot_mapping(req_id)

    def usage(self, running: list) -> Usage:
        """Slots per category (`running`: the running `Sequence`s). The empty slots of a last
        block are "reservation" when the sequence will still fill them (§4.2: they "are reserved
        for future generations") and internal fragmentation when it finishes first: at most
        block_size - 1 per sequence."""
        a, bs = self.allocator, self.block_size
        held = (a.num_used_blocks - self.null_block) * bs  # the null block counts as "others"
        tokens = self.shared_prefix if self.holds_prefix else 0
        reserved, shared_full = 0, self._shared_full
        for q in running:
            n = a.num_tokens(q.req_id)
            tokens += n - shared_full  # the prefix's full blocks are counted once
            reserved += min(-n % bs, q.request.final_len - n)
        if self.caching:  # a cached block shared by k running requests is counted once
            tokens -= a.num_shared_refs * bs
        return Usage(tokens, reserved, held - tokens - reserved, self.kv_slots - held)

    def layout(self) -> PagedLayout:
        return paged_layout(self.allocator, (0,) if self.null_block else ())

    rounded_up = 0  # blocks are never rounded up


def make_pool(config) -> ContiguousPool | PagedPool:
    """The memory a settled config asks for."""
    return PagedPool(config) if config.policy == "paged" else ContiguousPool(config)
