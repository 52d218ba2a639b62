"""Experiments the chapters and figures share: policies head to head, the block-size sweep,
and block sharing in parallel sampling and beam search.

The first two are loops over `simulate`; the sharing experiments drive a `PagedAllocator`
directly (fork, append, copy-on-write). Keeping them here means a notebook and `python -m
paged.viz.figures` can never disagree about how a number was made. All results are SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import require_int, require_positive
from .paging import BLOCK_SIZES, PagedAllocator, num_blocks_for
from .progress import progress
from .scheduler_config import SIM_POLICIES
from .simulator import SimResult, simulate
from .text import msg
from .workloads import Request, sharegpt_like, with_prompt_ids

SWEEPING = msg("{n} requests, policy by policy", "요청 {n}개, 정책마다")


def compare_policies(
    requests: list[Request],
    *,
    kv_slots: int,
    block_size: int = 16,
    placement: str = "first_fit",
    policies: tuple[str, ...] = SIM_POLICIES,
) -> dict[str, SimResult]:
    """The same requests served under each policy (`block_size` is paging's, `placement` the
    contiguous arena's); in a notebook, a bar counts the policies done."""
    results = {}
    with progress(len(policies), SWEEPING.format(n=len(requests))) as bar:
        for p in policies:
            options = dict(block_size=block_size) if p == "paged" else dict(placement=placement)
            results[p] = simulate(requests, p, kv_slots=kv_slots, **options)
            bar.update(1)
    return results


@dataclass(frozen=True)
class BlockSizePoint:
    """One block size's side of the trade-off."""

    block_size: int
    held_empty: float  # held by sequences, holding no token: empty last-block slots (SIMULATED)
    token_states: float
    mean_batch_size: float
    table_entries_per_seq: float  # mean block-table length of a finished request


def block_size_sweep(
    requests: list[Request], *, kv_slots: int, block_sizes=BLOCK_SIZES
) -> list[BlockSizePoint]:
    """Paged serving at each block size: smaller blocks hold fewer empty slots, longer tables.

    `held_empty` is the time-averaged share of slots in sequences' last blocks that hold no
    token yet: reserved for the next tokens, or internal fragmentation if the sequence ends first.
    """
    out = []
    for bs in block_sizes:
        r = simulate(requests, "paged", kv_slots=kv_slots, block_size=bs)
        entries = sum(num_blocks_for(q.final_len, bs) for q in requests) / max(1, len(requests))
        out.append(
            BlockSizePoint(
                bs,
                r.breakdown["reservation"] + r.breakdown["internal_fragmentation"],
                r.breakdown["token_states"],
                r.mean_batch_size,
                entries,
            )
        )
    return out


def _requests(requests) -> list[Request]:
    """`requests` as a list of Request, or a ValueError naming what is not one."""
    if isinstance(requests, Request) or not hasattr(requests, "__iter__"):
        raise ValueError(f"requests must be a list of Request, got {requests!r:.80}")
    out = list(requests)
    for r in out:
        if not isinstance(r, Request):
            raise ValueError(f"requests must hold Request objects, got {r!r:.80}")
    return out


def blocks_held_by_samples(
    requests: list[Request], num_samples: int, *, block_size: int = 16, share: bool = True
) -> int:
    """Blocks held when each request's samples finish: forked from the prompt, or private copies.

    Parallel sampling (§4.4): with `share`, samples fork the prompt's sequence and copy-on-write
    splits only the partly filled last block; without, every sample stores the prompt again.
    """
    requests = _requests(requests)
    num_samples = require_int("num_samples", num_samples, at_least=1)
    block_size = require_int("block_size", block_size, at_least=1)
    if not isinstance(share, bool):
        raise ValueError(f"share must be True or False, got {share!r}")
    total = 0
    for r in requests:
        # Room for the prompt's own blocks plus every sample at its full length.
        size = (num_samples + 1) * num_blocks_for(r.final_len, block_size)
        a = PagedAllocator(num_blocks=size, block_size=block_size)
        a.allocate("prompt", r.prompt_len)
        for i in range(num_samples):
            if share:
                a.fork("prompt", i)
            else:
                a.allocate(i, r.prompt_len)
        a.free("prompt")
        for i in range(num_samples):
            a.append(i, r.output_len)
        total += a.num_used_blocks
    return total


@dataclass(frozen=True)
class SamplingSharing:
    """Blocks held when parallel samples finish, with and without sharing the prompt (§4.4)."""

    num_samples: int
    blocks_shared: int
    blocks_private: int  # every sample storing the prompt again

    @property
    def saved(self) -> float:
        """The paper's metric (§6.3): blocks saved by sharing / blocks without sharing."""
        return 1 - self.blocks_shared / self.blocks_private


def sampling_sharing(
    requests: list[Request], num_samples: int, *, block_size: int = 16
) -> SamplingSharing:
    """`blocks_held_by_samples` with and without sharing, side by side."""
    held = [
        blocks_held_by_samples(requests, num_samples, block_size=block_size, share=share)
        for share in (True, False)
    ]
    return SamplingSharing(num_samples, *held)


SURVIVOR_RULES = ("random", "score")
SCORE_VOCAB = 64  # candidate tokens per beam in the "score" rule's stand-in model


def _stand_in_logits(rng: np.random.Generator, logit_scale: float, rows: int) -> np.ndarray:
    """The "score" rule's stand-in model: i.i.d. normal logits over SCORE_VOCAB tokens, scaled."""
    return logit_scale * rng.standard_normal((rows, SCORE_VOCAB))


def stand_in_top_probability(
    logit_scale: float, *, rng: np.random.Generator, samples: int = 10_000
) -> float:
    """How peaked the stand-in model is: its likeliest token's probability, on average."""
    z = _stand_in_logits(rng, require_positive("logit_scale", logit_scale), samples)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return float((p.max(axis=1) / p.sum(axis=1)).mean())


@dataclass(frozen=True)
class BeamStep:
    """The pool after one beam-search step: the beams' ids and the copies this step made."""

    allocator: PagedAllocator
    beams: tuple
    parents: tuple[int, ...]  # which old beam each new beam continues
    copies: int  # copy-on-write block copies made by this step's appends
    scores: tuple[float, ...] | None = None  # cumulative log-probabilities ("score" rule only)


def _beam_args(beam_width, block_size, seed, survivors, logit_scale):
    """Check beam search's arguments before any step runs."""
    k = require_int("beam_width", beam_width, at_least=1)
    block_size = require_int("block_size", block_size, at_least=1)
    seed = require_int("seed", seed, at_least=0)
    if survivors not in SURVIVOR_RULES:
        raise ValueError(f"survivors must be one of {SURVIVOR_RULES}, got {survivors!r}")
    if survivors == "score" and k > SCORE_VOCAB:
        raise ValueError(f"beam_width {k} exceeds the {SCORE_VOCAB} tokens the 'score' rule draws")
    require_positive("logit_scale", logit_scale)
    return k, block_size, seed


def beam_search_steps(
    request: Request,
    beam_width: int,
    *,
    block_size: int = 16,
    seed: int = 0,
    survivors: str = "random",
    logit_scale: float = 3.0,
):
    """Steps of a beam search of width `beam_width`: an iterator over the pool after each one.

    Beam search (§4.4, Fig. 9): the prompt is prefilled once and forked into `beam_width`
    candidates. At every step each of the `beam_width` new candidates continues one of the old
    ones; the old ones are then freed, so blocks no survivor holds return to the pool, and each
    survivor writes one token (copy-on-write only where it shares a partly filled last block).
    No model runs here, so which old candidate each new one continues is a stand-in, seeded
    with `seed` (`survivors`):
    - "random": drawn uniformly at random;
    - "score": as vLLM's early beam search did, every candidate keeps a cumulative log-probability;
      each step scores every (candidate, next token) pair by it plus the token's log-probability
      and keeps the `beam_width` best. The stand-in model gives each candidate `SCORE_VOCAB` next
      tokens with standard-normal logits times `logit_scale` (larger: more peaked).
    Arguments are checked when this is called, before the first step. Nothing leaks: after the
    last step every block is free again (checked).
    """
    if not isinstance(request, Request):
        raise ValueError(f"request must be a Request, got {request!r:.80}")
    k, block_size, seed = _beam_args(beam_width, block_size, seed, survivors, logit_scale)
    return _beam_steps(request, k, block_size, seed, survivors, float(logit_scale))


def _beam_steps(request, k, block_size, seed, survivors, logit_scale):
    rng = np.random.default_rng(seed)
    size = (2 * k + 1) * num_blocks_for(request.final_len, block_size)
    a = PagedAllocator(num_blocks=size, block_size=block_size)
    a.allocate("prompt", request.prompt_len)
    beams = tuple(("beam", 0, j) for j in range(k))
    for b in beams:
        a.fork("prompt", b)
    a.free("prompt")
    score = np.zeros(k)  # cumulative log-probability of each candidate ("score" rule)
    for t in range(1, request.output_len + 1):
        if survivors == "random":
            parents, kept = tuple(int(p) for p in rng.integers(0, k, size=k)), None
        else:
            logits = _stand_in_logits(rng, logit_scale, k)
            logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
            if t == 1:  # the candidates are still one prompt: its k best tokens start them
                logp[1:] = -np.inf
            total = (score[:, None] + logp).ravel()
            best = np.argsort(-total, kind="stable")[:k]
            parents, score = tuple(int(i) // SCORE_VOCAB for i in best), total[best]
            kept = tuple(float(x) for x in score)
        new = tuple(("beam", t, j) for j in range(k))
        for j, p in enumerate(parents):
            a.fork(beams[p], new[j])
        for b in beams:
            a.free(b)
        beams = new
        copies = sum(len(a.append(b, 1)) for b in beams)
        yield BeamStep(a, beams, parents, copies, kept)
    for b in beams:
        a.free(b)
    if a.num_used_blocks:  # pragma: no cover - a bookkeeping bug, not a user error
        raise AssertionError(f"{a.num_used_blocks} blocks leaked after the search")


@dataclass(frozen=True)
class BeamSharing:
    """Blocks held during beam search, summed over decode steps, with and without sharing."""

    beam_width: int
    blocks_shared: int
    blocks_private: int  # every candidate holding its own copy of everything
    copies: int  # copy-on-write block copies

    @property
    def saved(self) -> float:
        """The paper's metric (§6.3): blocks saved by sharing / blocks without sharing."""
        return 1 - self.blocks_shared / self.blocks_private


def beam_search_sharing(
    requests: list[Request],
    beam_width: int,
    *,
    block_size: int = 16,
    seed: int = 0,
    survivors: str = "random",
    logit_scale: float = 3.0,
) -> BeamSharing:
    """Beam search of width `beam_width` over each request; blocks held at every step.

    `survivors` and `logit_scale` as in `beam_search_steps`; request i uses seed `seed + i`.
    """
    requests = _requests(requests)
    if not requests:
        raise ValueError("requests is empty: beam_search_sharing needs at least one Request")
    k, block_size, seed = _beam_args(beam_width, block_size, seed, survivors, logit_scale)
    shared = private = copies = 0
    for i, r in enumerate(requests):
        steps = _beam_steps(r, k, block_size, seed + i, survivors, float(logit_scale))
        for t, step in enumerate(steps, 1):
            shared += step.allocator.num_used_blocks
            private += k * num_blocks_for(r.prompt_len + t, block_size)
            copies += step.copies
    return BeamSharing(k, shared, private, copies)


# ---- prefix caching: what it saves ----------------------------------------------------------
CACHING_ASSUMPTIONS = msg(
    "{n} ShareGPT-like requests (seed {seed}, {rate} per step), each opening with one of "
    "{systems} system prompts of {system_len} tokens; paged, {kv_slots} KV slots in blocks of "
    "{block_size}, recomputation, the course's rules",
    "ShareGPT 비슷한 요청 {n}개 (시드 {seed}, 단계당 {rate}개), 각각 시스템 프롬프트 {systems}개 "
    "중 하나({system_len} 토큰)로 시작; 페이징, KV 슬롯 {kv_slots}개, 블록 크기 {block_size}, "
    "재계산, 코스의 규칙",
)


@dataclass(frozen=True)
class CachingRun:
    """One side of `caching_savings`: the same workload served with or without prefix caching
    (SIMULATED)."""

    prefix_caching: bool
    prompt_tokens: int  # every request's prompt, once
    cached_prompt_tokens: int  # found in the cache at each request's first admission
    computed_prompt_tokens: int  # prefill work: first prefills and recomputations after preemption
    computed_tokens: int  # every token whose K and V were computed, decodes included
    max_batch_size: int
    num_steps: int
    num_preemptions: int
    recached_tokens: int  # found in the cache again by requests resumed after a preemption

    @property
    def first_prefill_tokens(self) -> int:
        """Prompt tokens computed at first admission: the prompt less what the cache held."""
        return self.prompt_tokens - self.cached_prompt_tokens


@dataclass(frozen=True)
class CachingSavings:
    """Prefix caching off and on, same requests, same pool (SIMULATED; `assumptions` says how)."""

    without: CachingRun
    cached: CachingRun
    assumptions: str

    @property
    def runs(self) -> tuple[CachingRun, CachingRun]:
        return (self.without, self.cached)


def caching_savings(
    num_requests: int = 150,
    *,
    num_system_prompts: int = 4,
    system_len: int = 128,
    kv_slots: int = 6144,
    block_size: int = 16,
    rate: float = 2.0,
    seed: int = 0,
) -> CachingSavings:
    """Serve one ShareGPT-like workload twice under the same paged pool, without and with
    automatic prefix caching (`prefix_caching=True`, `paged.block_pool`): prompt tokens computed
    and cached, peak running batch, steps and preemptions of each. Request i opens with system
    prompt i % `num_system_prompts` (its first `system_len` tokens; `with_prompt_ids`), then
    tokens of its own that no other request shares. SIMULATED: lengths drawn, nothing run; the
    course's rules (decodes sample, so a request decodes `output_len` tokens)."""
    num_requests = require_int("num_requests", num_requests, at_least=1)
    num_system_prompts = require_int("num_system_prompts", num_system_prompts, at_least=1)
    system_len = require_int("system_len", system_len, at_least=0)
    requests = with_prompt_ids(
        sharegpt_like(num_requests, seed=seed, rate=rate),
        num_system_prompts=num_system_prompts,
        system_len=system_len,
        seed=seed,
    )
    prompt = sum(r.prompt_len for r in requests)
    decoded = sum(r.output_len for r in requests)  # one token per decode step, course's rules
    runs = []
    for caching in (False, True):
        r = simulate(
            requests, "paged", kv_slots=kv_slots, block_size=block_size, prefix_caching=caching
        )
        runs.append(
            CachingRun(
                caching,
                prompt,
                r.cached_prompt_tokens,
                r.computed_tokens - decoded,
                r.computed_tokens,
                r.max_batch_size,
                r.num_steps,
                r.num_preemptions,
                r.recached_tokens,
            )
        )
    assumptions = CACHING_ASSUMPTIONS.format(
        n=num_requests,
        seed=seed,
        rate=rate,
        systems=num_system_prompts,
        system_len=system_len,
        kv_slots=kv_slots,
        block_size=block_size,
    )
    return CachingSavings(*runs, assumptions)
