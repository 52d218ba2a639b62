"""What the scheduler asks of a back-end, and the simulated back-end that computes nothing.

`paged.scheduler.Scheduler` hands out KV slots; a back-end fills them. Within one step the
scheduler calls the hooks in this order:
1. `preempted`, for each request evicted while the running ones get their next slot;
2. `decode`: every running request got one more slot (its newest position): compute that token;
3. `is_finished`, for each running request; a finished one leaves and its slots are freed;
4. while admitting: `share_prefix`, once, when the shared prefix (`shared_prefix=`) gets its
   slots, and `copy_blocks` when a request's partly filled prefix block is copied on write;
5. `prefill`, for the requests admitted this step, then `is_finished` for each of them.

`Backend` itself is the simulator's: every length is known in advance (a request finishes after
its `output_len` tokens), and nothing is computed. The real model's back-end,
`paged.model.backend.ModelBackend`, overrides every hook with SmolLM2's forward pass. Each hook
receives the calling scheduler, whose `allocator` says where each token's K and V belong.
"""

from __future__ import annotations

from .workloads import Request


class Backend:
    """The simulated back-end; a real one overrides the hooks (see the module's docstring)."""

    name = "simulated"

    def decode(self, scheduler, batch: list[Request]) -> None:
        """Every request in `batch` got one more slot (its last position): compute that token."""

    def is_finished(self, scheduler, request: Request) -> bool:
        """Whether `request` is done (checked after decode and right after prefill)."""
        return scheduler.generated[request.req_id] >= request.output_len

    def preempted(self, scheduler, request: Request) -> None:
        """`request` lost its slots; it will be prefilled again, or swapped back in."""

    def prefill(self, scheduler, admitted: list[Request]) -> None:
        """Each admitted request holds prompt_len + generated slots: compute their K and V
        (from position `scheduler.shared_prefix` on: the shared prefix is computed already)."""

    def share_prefix(self, scheduler, seq_id) -> None:
        """The shared prefix got its slots (sequence `seq_id`): compute its K and V, once."""

    def copy_blocks(self, scheduler, copies: list[tuple[int, int]]) -> None:
        """Copy-on-write: copy each (source, destination) physical block's K and V."""
