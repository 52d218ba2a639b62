"""Chapter 8's experiments: block sharing in parallel sampling and beam search.

They drive a `PagedAllocator` directly (fork, append, copy-on-write): blocks held by n samples
of one prompt with and without sharing, and beam search's steps with a stand-in model's
survivors. All results are SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import require_int, require_positive
from ..paging import PagedAllocator, num_blocks_for
from ..workloads import Request


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
