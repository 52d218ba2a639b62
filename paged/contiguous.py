"""Contiguous KV allocation: one unbroken range of slots per request, reserved up front.

This is how serving systems before vLLM kept the KV cache (the paper's Orca baselines, §6.1):
because a request's output length is unknown, each one reserves a contiguous range when it is
admitted. The paper (§3.1) names three wastes, and `usage()` counts slots by exactly these:
- reservation: "reserved slots for future tokens" (filled later by the same request);
- internal fragmentation: "over-provisioning for potential maximum sequence lengths" (slots the
  policy reserved that the request never fills);
- external fragmentation "from the memory allocator like the buddy allocator": here, the
  allocator's round-up beyond the policy's reservation plus free slots (Fig. 2's legend calls it
  "external fragmentation & others"). An OS textbook would file a buddy round-up under internal
  fragmentation; the paper files it under external, and so do we. `unusable_free(size)` is the
  narrower diagnostic of chapter 2: free slots in holes too small for a request of that size.

Reservation policies (§6.1): "max" reserves `max_seq_len`; "pow2" the prompt plus the output
length rounded up to a power of two (output 25 -> 32), capped at `max_seq_len`; "oracle" the
prompt plus the true output length. Placement: "first_fit" takes the lowest hole that fits;
"buddy" rounds each reservation up to a power of two and splits/merges buddy blocks, the
allocator the paper assumes for Orca.

Lengths are keyword-only (`prompt_len=`, `output_len=`), so a call written for another
signature fails loudly instead of meaning something else.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from .errors import NoContiguousSpace, UnknownSequence, require_int

POLICIES = ("max", "pow2", "oracle")
PLACEMENTS = ("first_fit", "buddy")


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (n >= 1)."""
    return 1 << (require_int("n", n, at_least=1) - 1).bit_length()


@dataclass(frozen=True)
class Extent:
    """One request's range in the arena, and how it is used right now."""

    req_id: object
    start: int
    size: int  # slots taken from the arena (buddy placement rounds `reserved` up)
    reserved: int  # slots the policy reserved: final_len <= reserved <= size
    final_len: int  # tokens the request will hold when it finishes (prompt + output)
    num_tokens: int  # tokens it holds now

    @property
    def end(self) -> int:
        return self.start + self.size


class ContiguousAllocator:
    """An arena of `capacity_tokens` KV slots handed out as contiguous ranges."""

    def __init__(
        self,
        capacity_tokens: int,
        policy: str = "max",
        placement: str = "first_fit",
        max_seq_len: int = 2048,
    ):
        capacity_tokens = require_int("capacity_tokens", capacity_tokens, at_least=1)
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
        max_seq_len = require_int("max_seq_len", max_seq_len, at_least=1)
        self.capacity_tokens = capacity_tokens
        self.policy = policy
        self.placement = placement
        self.max_seq_len = max_seq_len
        self._extents: dict[object, Extent] = {}  # as allocated; tokens written are in _tokens
        self._tokens: dict[object, int] = {}
        self._starts: list[int] = []  # sorted starts of live extents (first-fit scan)
        self._by_start: dict[int, object] = {}
        if placement == "buddy":
            self._init_buddy()

    # ---- sizing --------------------------------------------------------------------------
    def reservation(self, *, prompt_len: int, output_len: int) -> int:
        """Slots the policy reserves for a request of `prompt_len` + `output_len` tokens."""
        prompt_len = require_int("prompt_len", prompt_len, at_least=1)
        output_len = require_int("output_len", output_len, at_least=1)
        if prompt_len + output_len > self.max_seq_len:
            raise ValueError(
                f"prompt_len + output_len = {prompt_len + output_len} exceeds max_seq_len "
                f"{self.max_seq_len}"
            )
        if self.policy == "max":
            return self.max_seq_len
        if self.policy == "pow2":  # §6.1: "if the true output length is 25, it reserves 32"
            return min(prompt_len + next_pow2(output_len), self.max_seq_len)
        return prompt_len + output_len

    def allocation_size(self, *, prompt_len: int, output_len: int) -> int:
        """Slots actually taken: the reservation, rounded up to a power of two under buddy."""
        r = self.reservation(prompt_len=prompt_len, output_len=output_len)
        return next_pow2(r) if self.placement == "buddy" else r

    # ---- queries -------------------------------------------------------------------------
    def extents(self) -> list[Extent]:
        """Live allocations, in address order."""
        return [self.extent(self._by_start[s]) for s in self._starts]

    def __contains__(self, req_id) -> bool:
        return req_id in self._extents

    def extent(self, req_id) -> Extent:
        try:
            return replace(self._extents[req_id], num_tokens=self._tokens[req_id])
        except KeyError:
            raise UnknownSequence(f"unknown req_id {req_id!r}") from None

    def holes(self) -> list[tuple[int, int]]:
        """Maximal free ranges as `(start, size)`, in address order."""
        out, cursor = [], 0
        for e in (self._extents[self._by_start[s]] for s in self._starts):
            if e.start > cursor:
                out.append((cursor, e.start - cursor))
            cursor = e.end
        if cursor < self.capacity_tokens:
            out.append((cursor, self.capacity_tokens - cursor))
        return out

    def _free_pieces(self) -> list[int]:
        """Sizes of the pieces one allocation could take (under buddy: the free buddy blocks)."""
        if self.placement == "buddy":
            return [size for size, addrs in self._free.items() for _ in addrs]
        return [size for _, size in self.holes()]

    @property
    def total_free(self) -> int:
        return self.capacity_tokens - sum(e.size for e in self._extents.values())

    @property
    def largest_hole(self) -> int:
        """The largest range one allocation could take (under buddy: the largest free block)."""
        return max(self._free_pieces(), default=0)

    def unusable_free(self, size: int) -> int:
        """Free slots lying in holes too small for an allocation of `size` slots."""
        size = require_int("size", size, at_least=1)
        return sum(p for p in self._free_pieces() if p < size)

    def why_not(self, *, prompt_len: int, output_len: int) -> str | None:
        """None if it fits; "no_space" if too little is free; "no_hole" if free space is split."""
        need = self.allocation_size(prompt_len=prompt_len, output_len=output_len)
        if need <= self.largest_hole:
            return None
        return "no_space" if need > self.total_free else "no_hole"

    def can_allocate(self, *, prompt_len: int, output_len: int) -> bool:
        return self.why_not(prompt_len=prompt_len, output_len=output_len) is None

    def usage(self) -> dict[str, int]:
        """Slots by the paper's Fig. 2 categories; they add up to `capacity_tokens`."""
        final_lens = reserved = 0
        for e in self._extents.values():
            final_lens += e.final_len
            reserved += e.reserved
        tokens = sum(self._tokens.values())
        return {
            "token_states": tokens,
            "reservation": final_lens - tokens,
            "internal_fragmentation": reserved - final_lens,
            # External fragmentation & others: the allocator's round-up, plus every free slot.
            "external_fragmentation": self.capacity_tokens - reserved,
        }

    @property
    def rounded_up(self) -> int:
        """Slots the placement added beyond the policies' reservations (buddy round-up)."""
        return sum(e.size - e.reserved for e in self._extents.values())

    # ---- actions -------------------------------------------------------------------------
    def allocate(
        self, req_id, *, prompt_len: int, output_len: int, num_tokens: int | None = None
    ) -> Extent:
        """Reserve a contiguous range for `req_id` and write its first `num_tokens` tokens.

        `num_tokens` defaults to `prompt_len`: admission prefills the prompt.
        """
        if req_id in self._extents:
            raise ValueError(f"req_id {req_id!r} already allocated")
        reserved = self.reservation(prompt_len=prompt_len, output_len=output_len)
        final_len = prompt_len + output_len
        num_tokens = prompt_len if num_tokens is None else num_tokens
        if isinstance(num_tokens, bool) or not isinstance(num_tokens, int):
            raise ValueError(f"num_tokens must be an int in [0, {final_len}], got {num_tokens!r}")
        if not 0 <= num_tokens <= final_len:
            raise ValueError(f"num_tokens must be an int in [0, {final_len}], got {num_tokens!r}")
        size = self.allocation_size(prompt_len=prompt_len, output_len=output_len)
        reason = self.why_not(prompt_len=prompt_len, output_len=output_len)
        if reason is not None:
            raise NoContiguousSpace(
                f"cannot place {req_id!r} ({size} slots): {reason}; "
                f"{self.total_free} free in total, largest hole {self.largest_hole}"
            )
        start = self._take_buddy(size) if self.placement == "buddy" else self._first_fit(size)
        extent = Extent(req_id, start, size, reserved, final_len, num_tokens)
        self._extents[req_id] = extent
        self._tokens[req_id] = num_tokens
        bisect.insort(self._starts, start)
        self._by_start[start] = req_id
        return extent

    def append(self, req_id, num_tokens: int = 1) -> None:
        """Write `num_tokens` more tokens into `req_id`'s range (never past its final length)."""
        if req_id not in self._extents:
            self.extent(req_id)  # raises UnknownSequence
        num_tokens = require_int("num_tokens", num_tokens, at_least=0)
        final_len, held = self._extents[req_id].final_len, self._tokens[req_id]
        if held + num_tokens > final_len:
            raise ValueError(
                f"appending {num_tokens} to {req_id!r} passes its final length {final_len}"
            )
        self._tokens[req_id] = held + num_tokens

    def free(self, req_id) -> None:
        e = self.extent(req_id)
        del self._extents[req_id], self._tokens[req_id], self._by_start[e.start]
        self._starts.remove(e.start)
        if self.placement == "buddy":
            self._give_back_buddy(e.start, e.size)

    # ---- first fit -----------------------------------------------------------------------
    def _first_fit(self, size: int) -> int:
        for start, hole in self.holes():
            if hole >= size:
                return start
        raise AssertionError("why_not() said it fits")  # pragma: no cover

    # ---- buddy ---------------------------------------------------------------------------
    def _init_buddy(self) -> None:
        # Cut the arena into power-of-two chunks no larger than the biggest allocation.
        top = next_pow2(self.max_seq_len)
        self._chunk_bases: list[int] = []
        self._chunk_sizes: list[int] = []
        self._free: dict[int, set[int]] = {}
        base, left = 0, self.capacity_tokens
        while left:
            size = min(top, 1 << (left.bit_length() - 1))
            self._chunk_bases.append(base)
            self._chunk_sizes.append(size)
            self._free.setdefault(size, set()).add(base)
            base, left = base + size, left - size

    def _take_buddy(self, size: int) -> int:
        s = min(k for k, addrs in self._free.items() if addrs and k >= size)
        addr = min(self._free[s])
        self._free[s].remove(addr)
        while s > size:  # split, keeping the lower half
            s //= 2
            self._free.setdefault(s, set()).add(addr + s)
        return addr

    def _give_back_buddy(self, addr: int, size: int) -> None:
        i = bisect.bisect_right(self._chunk_bases, addr) - 1
        base, chunk = self._chunk_bases[i], self._chunk_sizes[i]
        while size < chunk:
            buddy = base + ((addr - base) ^ size)
            if buddy not in self._free.get(size, ()):
                break
            self._free[size].remove(buddy)
            addr, size = min(addr, buddy), size * 2
        self._free.setdefault(size, set()).add(addr)
