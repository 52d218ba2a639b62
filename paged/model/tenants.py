"""Two tenants, one system prompt: what prefix caching shares between them, and what a salt stops.

Tenant A sends a question under chapter 10's system prompt (`LIBRARY_SYSTEM`); when A's answer
is done, tenant B sends another question under the same system prompt. With prefix caching
(vLLM V1's, `paged.block_pool`) A's full blocks keep their hash after A leaves, so B takes the
system prompt's blocks instead of computing them: its prefill computes only its own question,
and its first token comes sooner. That is also a side channel: B's speed tells B what A sent. A
per-tenant `cache_salt` enters each request's first block's hash (vLLM's `cache_salt`), so B's
hashes never meet A's: no cross-tenant hit, and B's first token takes as long as uncached.

`tenant_experiment` runs the pair three ways (no caching, caching, caching with salts) through
the course's scheduler (`rules="vllm-v1"`) on the real model, and returns `TenantResult`:
- time to first token per request (MEASURED: `time.perf_counter` around the model's step that
  samples the request's first token, i.e. the prefill of its uncached part, whose last position
  gives the token; median over `repeats` runs after one warm-up run), with the machine;
- cached prompt tokens per request, and cross-tenant hits: blocks a request took from the cache
  that a request of another tenant had computed (`cross_tenant_hits`, which reads vLLM's
  recorded runs the same way). Block counts do not depend on the machine; the times do.

The constants below are chapter 12's requests, sent to vLLM too (`paged/engines/recordings/
chapter12_*.json`): the questions, the tenants' salts, a second system prompt, and the order of
the tight run's (system prompt, question) pairs, whose last four repeat earlier ones.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..progress import progress
from ..scheduler import Scheduler
from ..text import msg
from ..workloads import Request
from .attention_backend import select_attention
from .cache import KVCache
from .generate import checked_prompt_ids
from .llama import Llama
from .model_runner import ModelRunner
from .shared_prompt import LIBRARY_SYSTEM

CHAPTER12_QUESTIONS = (
    "Say hello in French.",
    "What is the capital of Japan? Answer with one word.",
    "Name three primary colours.",
    "How many legs does a spider have?",
    "Is a tomato a fruit or a vegetable? Answer in one short sentence.",
    "What is photosynthesis?",
)
TENANT_SALTS = ("tenant-a", "tenant-b")
MUSEUM_SYSTEM = (
    "You are the front desk assistant of a small science museum. Answer visitors in short, "
    "friendly sentences. The museum opens at ten in the morning and closes at five in the "
    "afternoon, and it is closed on Mondays. Children under twelve enter for free. If you do "
    "not know an answer, say so and point the visitor to the information desk by the entrance."
)
# chapter12_tight: (system prompt: 0 library, 1 museum; question index); the last four repeat
# the first four, by then partly evicted from the tight pool's cache
TIGHT_ORDER = (
    *((0, 1), (1, 1), (0, 4), (1, 4), (0, 0), (1, 2), (0, 3), (1, 5)),
    *((0, 2), (1, 3), (0, 5), (1, 0), (0, 1), (1, 1), (0, 4), (1, 4)),
)
CONDITIONS = ("uncached", "shared", "salted")
SERVED = msg(
    "runs of both tenants (a warm-up, then each way in turn)",
    "두 테넌트의 실행 (예열 한 번, 그다음 세 방식을 차례로)",
)


def cross_tenant_hits(steps: Iterable[tuple[dict, dict]], tenant_of: list, block_size: int) -> int:
    """Cached blocks a request took that a request of another tenant had computed.

    `steps`: per step, ({admitted request: tokens it found cached}, in admission order;
    {running request: its block table} at the step's end). A block's owner is the tenant of the
    request that got it new (not as a hit); a hit is the first cached_tokens // block_size blocks
    of an admitted request's table."""
    owner: dict[int, object] = {}
    seen: dict[object, int] = {}  # request -> blocks of its table already owned or counted
    cross = 0
    for admitted, tables in steps:
        for r, cached in admitted.items():  # in order: a later one may hit an earlier one's
            table, hits = tables.get(r, ()), cached // block_size
            cross += sum(owner.get(b, tenant_of[r]) != tenant_of[r] for b in table[:hits])
            for b in table[hits:]:
                owner[b] = tenant_of[r]
            seen[r] = len(table)  # a resumed request starts a new table
        for r, table in tables.items():
            for b in table[seen.get(r, 0) :]:
                owner[b] = tenant_of[r]
            seen[r] = len(table)
    return cross


def engine_cross_tenant_hits(engine, tenant_of: list) -> int:
    """`cross_tenant_hits` of a vLLM run (`paged.engines.vllm.generate`'s result): its cached
    tokens per admitted request and its block tables, step by step."""
    steps = [
        (cached, {r: table for r, table, _ in step.layout.tables})
        for cached, step in zip(engine.cached_tokens, engine.trace, strict=True)
    ]
    return cross_tenant_hits(steps, tenant_of, engine.block_size)


@dataclass(frozen=True)
class TenantResult:
    """Tenant A's request, then tenant B's, served three ways (`CONDITIONS`)."""

    questions: tuple[str, str]  # A's, B's
    prompt_lens: tuple[int, int]
    block_size: int
    max_new_tokens: int
    repeats: int
    ttft: dict  # condition -> (A's, B's) median seconds to first token (MEASURED)
    cached_tokens: dict  # condition -> (A's, B's) prompt tokens found cached
    cross_tenant_hits: dict  # condition -> blocks B took that A computed
    same_tokens: bool  # every condition answered alike
    machine: str  # `paged.model.timing.machine()`: CPU, cores, OS, versions, torch threads

    @property
    def speedup(self) -> float:
        """B's uncached time to first token over B's, served from A's cached system prompt."""
        return self.ttft["uncached"][1] / self.ttft["shared"][1]

    @property
    def salted_ratio(self) -> float:
        """B's time to first token with salts over uncached (about 1: nothing shared)."""
        return self.ttft["salted"][1] / self.ttft["uncached"][1]


def _serve_timed(model: Llama, attention, requests, block_size: int, caching: bool):
    """One run: ({req_id: seconds of the step that sampled its first token}, scheduler, steps)."""
    final = sum(-(-r.final_len // block_size) for r in requests)
    s = Scheduler(
        requests,
        "paged",
        kv_slots=(final + 1) * block_size,  # every block, and vLLM's null block
        block_size=block_size,
        rules="vllm-v1",
        prefix_caching=caching,
        eos_token_id=model.config.eos_token_id,
        record_layout=True,
    )
    runner = ModelRunner(model, KVCache(model, s.pool.num_slots, block_size), attention)
    first, steps = {}, []
    while not s.done:
        step = s.schedule()
        start = time.perf_counter()
        tokens = runner.run(step)
        seconds = time.perf_counter() - start
        for r in step.runs:
            if r.sample and not s.sequences[r.req_id].output_ids:
                first[r.req_id] = seconds
        record = s.postprocess(step, tokens)
        admitted = {q: s.sequences[q].num_cached_tokens for q in record.admitted}
        steps.append((admitted, {r: t for r, t, _ in record.layout.tables}))
    return first, s, steps


def tenant_experiment(
    model: Llama,
    questions: tuple[str, str] = CHAPTER12_QUESTIONS[:2],
    *,
    system: str = LIBRARY_SYSTEM,
    max_new_tokens: int = 8,
    block_size: int = 16,
    repeats: int = 5,
    salts: tuple[str, str] = TENANT_SALTS,
) -> TenantResult:
    """Tenant A asks `questions[0]`, then (once A is answered) tenant B asks `questions[1]`,
    both under `system`: without caching, with caching, with caching and per-tenant `salts`."""
    from .timing import machine

    if len(questions) != 2 or len(salts) != 2:
        raise ValueError(
            f"one question and one salt per tenant (two each), got {questions!r} and {salts!r}"
        )
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    ids = checked_prompt_ids(model, list(questions), max_new_tokens, system)
    attention = select_attention(model.device)

    def requests(salted: bool) -> list[Request]:
        # B arrives once A has had every step it may need
        return [
            Request(
                i,
                len(p),
                max_new_tokens,
                i * max_new_tokens,
                tuple(p),
                salts[i] if salted else None,
            )
            for i, p in enumerate(ids)
        ]

    times = {c: ([], []) for c in CONDITIONS}
    cached, cross, tokens = {}, {}, {}
    with progress(1 + repeats * len(CONDITIONS), SERVED.format()) as bar:
        _serve_timed(model, attention, requests(False), block_size, False)  # warm-up
        bar.update()
        for _ in range(repeats):
            for c in CONDITIONS:
                first, s, steps = _serve_timed(
                    model, attention, requests(c == "salted"), block_size, c != "uncached"
                )
                for i in (0, 1):
                    times[c][i].append(first[i])
                cached[c] = tuple(q.num_prompt_cached_tokens for q in s.sequences)
                cross[c] = cross_tenant_hits(steps, [0, 1], block_size)
                tokens[c] = [q.output_ids for q in s.sequences]
                bar.update()
    return TenantResult(
        questions=tuple(questions),
        prompt_lens=tuple(len(p) for p in ids),
        block_size=block_size,
        max_new_tokens=max_new_tokens,
        repeats=repeats,
        ttft={c: tuple(statistics.median(t) for t in times[c]) for c in CONDITIONS},
        cached_tokens=cached,
        cross_tenant_hits=cross,
        same_tokens=tokens["uncached"] == tokens["shared"] == tokens["salted"],
        machine=machine(),
    )
