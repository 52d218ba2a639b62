"""Greedy generation for a list of chat prompts, served by the course's scheduler and allocators.

`generate` formats each prompt with the model's chat template, turns it into a
`paged.Request`, and serves it with `paged.scheduler.Scheduler`, whose steps the model computes
(`paged.model.model_runner`): the same admission, decode and preemption loop the simulator runs,
now computing real tokens. The KV cache (`KVCache`) is sized by `kv_slots`; the policy
decides how it is handed out:
- "paged": blocks of `block_size` slots, taken one at a time as sequences grow (§4.1-4.3),
  whole sequences preempted and later recomputed when blocks run out (§4.5);
- "max_new_tokens": a contiguous range per request reserved at admission for prompt +
  max_new_tokens slots, the most it can ever hold (the scheduler's contiguous "oracle" rule
  applied to the token cap; the paper's Orca (Max) reserves the model's whole context, even more).
With `share_prefix=True` (paged only), the prompts' common first tokens (a system prompt) are
held once: the scheduler's `shared_prefix` (fork, copy-on-write; `paged.model.shared_prompt` counts
what it saves). With `prefix_caching=True` (paged only) full blocks keep their hash after their
request leaves, and a later request whose prompt starts alike takes them instead of computing
them (`paged.block_pool`, vLLM V1's automatic prefix caching); `cache_salts` gives each request
a tenant's salt, which enters its first block's hash, so tenants never share. Every input is
checked before any memory is taken: the scheduler's own options and refusals
(`paged.scheduler_options`, `KVBudgetTooSmall`) and the model's (`paged.model.errors`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import require_int
from ..scheduler import Scheduler
from ..trace import StepRecord
from ..workloads import Request
from .attention_backend import AttentionBackend, select_attention
from .cache import KVCache
from .errors import PromptTooLong, check_salts
from .llama import Llama
from .memories import MEMORIES, POLICIES
from .model_runner import ModelRunner, serve
from .weights import check_tokenizer


@dataclass(frozen=True)
class GenerateResult:
    """New tokens per prompt, and how the run used its KV budget."""

    tokens: list[list[int]]  # new token ids per prompt, EOS included when it came
    texts: list[str]  # the new tokens decoded, special tokens left out
    prompt_lens: list[int]
    policy: str
    kv_slots: int
    block_size: int | None  # None for "max_new_tokens"
    peak_batch: int  # most requests running at once (holding KV cache while computed)
    steps: int  # scheduler steps
    preemptions: int
    recomputed_tokens: int  # tokens prefilled again after preemptions
    seconds: float  # wall time of the whole run (prefills and decode steps)
    decode_seconds: tuple[tuple[int, float], ...]  # (batch size, seconds) of each decode step
    attention: str  # which attention read the cache
    device: str
    trace: tuple[StepRecord, ...]  # with the memory map of every step if record_layout=True
    shared_prefix: int = 0  # prompt tokens held once by every request (share_prefix=True)
    copies: int = 0  # blocks copied on write
    rules: str = "course"  # or "vllm-v1" (paged.scheduler_config)
    # blocks a request can be given ("paged" only; vLLM V1's null block is not one): the config's
    num_usable_blocks: int | None = None
    prefix_caching: bool = False
    # per prompt: prompt tokens found cached at its first admission (vLLM's
    # `RequestOutput.num_cached_tokens`; a request resumed after a preemption re-hits more)
    cached_tokens: tuple[int, ...] = ()

    @property
    def cached_prompt_tokens(self) -> int:
        """Prompt tokens found cached at first admission, all requests (vLLM's prefix hits)."""
        return sum(self.cached_tokens)

    @property
    def tokens_per_s(self) -> float:
        """New tokens per second of wall time (MEASURED on the machine that ran it)."""
        return sum(map(len, self.tokens)) / self.seconds if self.seconds else 0.0


def prompt_ids(
    model: Llama, prompts: list[str], system: str | list[str | None] | None = None
) -> list[list[int]]:
    """Each prompt as a user message in the chat template, ready for the assistant's answer;
    `system`: one system prompt for all, or one per prompt (None: the template's default)."""
    if isinstance(prompts, str) or not isinstance(prompts, (list, tuple)) or not prompts:
        raise ValueError(f"prompts must be a non-empty list of strings, got {prompts!r:.80}")
    systems = system if isinstance(system, (list, tuple)) else [system] * len(prompts)
    if len(systems) != len(prompts):
        raise ValueError(
            f"system: one system prompt for all, or one per prompt ({len(prompts)}), got "
            f"{len(systems)}"
        )
    tok = model.tokenizer
    out = []
    for i, (text, system) in enumerate(zip(prompts, systems, strict=True)):
        if not isinstance(text, str):
            raise ValueError(f"prompts[{i}] must be a string, got {type(text).__name__}")
        messages = [{"role": "user", "content": text}]
        if system is not None:
            messages.insert(0, {"role": "system", "content": system})
        chat = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        out.append(tok(chat, add_special_tokens=False)["input_ids"])
    return out


def common_prefix_len(ids: list[list[int]]) -> int:
    """Tokens every prompt starts with, keeping at least one token of each prompt its own."""
    n = min(len(p) for p in ids) - 1
    for i in range(n):
        if any(p[i] != ids[0][i] for p in ids):
            return i
    return n


def checked_prompt_ids(
    model: Llama,
    prompts: list[str],
    max_new_tokens: int,
    system: str | list[str | None] | None = None,
) -> list[list[int]]:
    """`prompt_ids`, after checking the tokenizer, and that each request fits the context."""
    max_new_tokens = require_int("max_new_tokens", max_new_tokens, at_least=1)
    check_tokenizer(model.tokenizer, model.config)
    ids = prompt_ids(model, prompts, system)
    context = model.config.context_length
    for i, p in enumerate(ids):
        if len(p) + max_new_tokens > context:
            raise PromptTooLong(
                f"prompt {i} has {len(p)} tokens; with max_new_tokens={max_new_tokens} that is "
                f"{len(p) + max_new_tokens} > the model's context of {context}"
            )
    return ids


def scheduler_options(
    policy: str, block_size: int, shared_prefix: int = 0, rules: str = "course"
) -> tuple[str, dict]:
    """The scheduler's policy and options for generate's `policy`."""
    memory = MEMORIES[policy]
    return memory.scheduler_policy, memory.options(block_size, shared_prefix, rules)


@dataclass(frozen=True)
class Plan:
    """What a run serves, checked before any KV memory exists: the prompts' token ids, the
    requests, the scheduler's policy and options, and the attention that will read the cache."""

    ids: list[list[int]]
    requests: list[Request]
    policy: str
    scheduler_policy: str
    options: dict
    attention: AttentionBackend
    kv_slots: int


def plan(
    model: Llama,
    prompts: list[str],
    max_new_tokens: int,
    *,
    kv_slots: int | None = None,
    block_size: int = 16,
    policy: str = "paged",
    system: str | list[str | None] | None = None,
    max_num_seqs: int | None = None,
    preemption: str = "recompute",
    share_prefix: bool = False,
    rules: str = "course",
    max_num_batched_tokens: int | None = None,
    prefix_caching: bool = False,
    cache_salts: list[str | None] | None = None,
) -> Plan:
    """`generate`'s arguments checked and turned into requests and scheduler options."""
    if policy not in MEMORIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    memory = MEMORIES[policy]
    attention = select_attention(model.device)
    block_size = memory.check(block_size, share_prefix, attention)
    memory.check_caching(prefix_caching)
    if preemption != "recompute":
        raise ValueError(
            f"preemption={preemption!r}: the model back-end preempts by recomputation only "
            "(swapping is simulated in paged.simulate)"
        )
    ids = checked_prompt_ids(model, prompts, max_new_tokens, system)
    salts = check_salts(cache_salts, len(ids))
    max_new_tokens = int(max_new_tokens)
    final_lens = [len(p) + max_new_tokens for p in ids]
    if kv_slots is None:
        kv_slots = memory.slots_for_all(final_lens, block_size, rules)

    kv_slots = require_int("kv_slots", kv_slots, at_least=1)
    requests = [
        Request(i, len(p), max_new_tokens, prompt_token_ids=tuple(p), cache_salt=salt)
        for i, (p, salt) in enumerate(zip(ids, salts, strict=True))
    ]
    shared = common_prefix_len(ids) if share_prefix else 0
    sched_policy, options = scheduler_options(policy, block_size, shared, rules)
    options |= dict(
        kv_slots=kv_slots,
        max_seq_len=model.config.context_length,
        max_num_seqs=max_num_seqs,
        eos_token_id=model.config.eos_token_id,
        prefill_samples=True,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    if prefix_caching is not False:  # settle refuses a non-bool, or a shared_prefix with it
        options["prefix_caching"] = prefix_caching
    return Plan(ids, requests, policy, sched_policy, options, attention, kv_slots)


def result(model: Llama, p: Plan, scheduler: Scheduler, served, attention: str) -> GenerateResult:
    """What a served run (`model_runner.Served`) of plan `p` answered and how it used memory."""
    ids, trace = p.ids, served.trace
    by_id = {q.req_id: q for q in scheduler.sequences}
    tokens = [by_id[i].output_ids for i in range(len(ids))]
    return GenerateResult(
        tokens=tokens,
        texts=[model.tokenizer.decode(t, skip_special_tokens=True) for t in tokens],
        prompt_lens=[len(q) for q in ids],
        policy=p.policy,
        kv_slots=p.kv_slots,
        block_size=getattr(scheduler.config, "block_size", None),
        peak_batch=served.peak_batch,
        steps=len(trace),
        preemptions=sum(len(s.preempted) for s in trace),
        recomputed_tokens=scheduler.num_recomputed_tokens,
        seconds=served.seconds,
        decode_seconds=served.decode_seconds,
        attention=attention,
        device=str(model.device),
        trace=trace,
        shared_prefix=scheduler.pool.shared_prefix,
        copies=served.copies,
        rules=scheduler.config.rules,
        num_usable_blocks=getattr(scheduler.config, "usable_blocks", None),
        prefix_caching=bool(p.options.get("prefix_caching", False)),
        cached_tokens=tuple(by_id[i].num_prompt_cached_tokens for i in range(len(ids))),
    )


def generate(
    model: Llama,
    prompts: list[str],
    max_new_tokens: int,
    *,
    kv_slots: int | None = None,
    block_size: int = 16,
    policy: str = "paged",
    system: str | list[str | None] | None = None,
    max_num_seqs: int | None = None,
    preemption: str = "recompute",
    share_prefix: bool = False,
    record_layout: bool = False,
    rules: str = "course",
    max_num_batched_tokens: int | None = None,
    prefix_caching: bool = False,
    cache_salts: list[str | None] | None = None,
) -> GenerateResult:
    """Greedy answers to `prompts` (user messages), served through a KV cache of `kv_slots`.

    kv_slots: the KV budget in token slots; None means enough for every request at once.
    block_size: slots per block under "paged". policy: "paged" or "max_new_tokens" (contiguous,
    prompt + max_new_tokens reserved per request: see the module docstring). system: a system prompt
    instead of the template's default one (or one per prompt). max_num_seqs: a cap on requests running together.
    preemption: "recompute" only (swapping is a simulator feature here). share_prefix: hold the
    prompts' common first tokens once ("paged" only). record_layout: keep every step's memory
    map in `.trace` (for drawings). rules: "course", or "vllm-v1" to schedule by vLLM V1's rules
    (`paged.scheduler_config`), with `max_num_batched_tokens` its per-step token budget.
    prefix_caching: full blocks stay findable by later requests ("paged" only; `.cached_tokens`
    says what each request found). cache_salts: one salt (str or None) per prompt, entering
    its first block's hash: requests with different salts never share a cached block.
    """
    p = plan(
        model,
        prompts,
        max_new_tokens,
        kv_slots=kv_slots,
        block_size=block_size,
        policy=policy,
        system=system,
        max_num_seqs=max_num_seqs,
        preemption=preemption,
        share_prefix=share_prefix,
        rules=rules,
        max_num_batched_tokens=max_num_batched_tokens,
        prefix_caching=prefix_caching,
        cache_salts=cache_salts,
    )
    # The scheduler checks every option and request (KVBudgetTooSmall) before KV memory exists.
    scheduler = Scheduler(p.requests, p.scheduler_policy, record_layout=record_layout, **p.options)
    cache = KVCache(model, scheduler.pool.num_slots, scheduler.pool.block_size)
    served = serve(scheduler, ModelRunner(model, cache, p.attention), policy)
    return result(model, p, scheduler, served, p.attention.name)
