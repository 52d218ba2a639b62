"""Synthetic, seeded request workloads shaped like the paper's two traces.

These are NOT the ShareGPT or Alpaca data sets: they are log-normal length samples whose means
match the paper's §6.1 numbers (ShareGPT input 161.31 / output 337.99 tokens; Alpaca 19.31 /
58.45), clipped so that prompt + output <= 2048. ShareGPT-like requests are long and widely
spread; Alpaca-like ones are short. Arrivals are a Poisson process when a rate is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import require_int
from .facts import ALPACA_MEANS, SHAREGPT_MEANS
from .text import msg

MAX_TOTAL_LEN = 2048
# The two workloads by name, for a table row or a legend, in the edition's language.
SHAREGPT_LIKE = msg("ShareGPT-like", "ShareGPT 비슷한")
ALPACA_LIKE = msg("Alpaca-like", "Alpaca 비슷한")


@dataclass(frozen=True)
class Request:
    """One generation request: a prompt to prefill, then `output_len` decode steps.

    A real model's request carries its prompt's token ids; a simulated one only its lengths.
    """

    req_id: int
    prompt_len: int
    output_len: int
    arrival_time: float = 0.0  # in decode steps
    prompt_token_ids: tuple[int, ...] | None = None
    cache_salt: str | None = None  # a tenant's: enters its first block's hash (prefix caching)

    def __post_init__(self) -> None:
        salt = self.cache_salt
        if salt is not None and not isinstance(salt, str):
            raise ValueError(
                f"cache_salt must be a str or None, got {salt!r}: pass str(...) of the tenant's id"
            )
        require_int("prompt_len", self.prompt_len, at_least=1)
        require_int("output_len", self.output_len, at_least=1)
        ids = self.prompt_token_ids
        if ids is not None and (not isinstance(ids, tuple) or len(ids) != self.prompt_len):
            raise ValueError(
                f"prompt_token_ids must be a tuple of prompt_len={self.prompt_len} ids, "
                f"got {ids!r:.80}"
            )
        t = self.arrival_time
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not t >= 0:
            raise ValueError(f"arrival_time must be a number >= 0, got {t!r}")

    @property
    def final_len(self) -> int:
        """Tokens in the KV cache when the request finishes."""
        return self.prompt_len + self.output_len


def _lognormal_lengths(rng, mean: float, sigma: float, n: int, low: int, high: int) -> np.ndarray:
    mu = math.log(mean) - sigma**2 / 2  # E[lognormal] = exp(mu + sigma^2 / 2)
    return np.clip(np.rint(rng.lognormal(mu, sigma, n)), low, high).astype(int)


def _make(n, seed, rate, prompt_mean, output_mean, sigma_p, sigma_o) -> list[Request]:
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if rate is not None and not rate > 0:
        raise ValueError(f"rate must be > 0 requests per step (or None), got {rate!r}")
    rng = np.random.default_rng(seed)
    prompts = _lognormal_lengths(rng, prompt_mean, sigma_p, n, 1, MAX_TOTAL_LEN // 2)
    outputs = _lognormal_lengths(rng, output_mean, sigma_o, n, 1, MAX_TOTAL_LEN)
    outputs = np.minimum(outputs, MAX_TOTAL_LEN - prompts)
    if rate is None:
        arrivals = np.zeros(n)
    else:  # Poisson process: exponential gaps with mean 1 / rate
        arrivals = np.cumsum(rng.exponential(1.0 / rate, n))
    return [
        Request(i, int(p), int(o), float(t))
        for i, (p, o, t) in enumerate(zip(prompts, outputs, arrivals, strict=True))
    ]


def _sigma(output_sigma) -> float:
    if isinstance(output_sigma, bool) or not isinstance(output_sigma, (int, float)):
        raise ValueError(f"output_sigma must be a number > 0, got {output_sigma!r}")
    if not 0 < output_sigma <= 3:
        raise ValueError(f"output_sigma must be in (0, 3], got {output_sigma!r}")
    return float(output_sigma)


def sharegpt_like(
    n: int, seed: int = 0, rate: float | None = None, *, output_sigma: float = 0.8
) -> list[Request]:
    """`n` long conversational requests (means near 161 in / 338 out); all at t=0 if no rate.

    `output_sigma` is the spread of the log-normal output lengths (the mean stays 337.99): the
    assumption the simulated Fig. 2 bars rest on most (the paper's traces are not ours).
    """
    return _make(n, seed, rate, *SHAREGPT_MEANS, sigma_p=0.8, sigma_o=_sigma(output_sigma))


def alpaca_like(
    n: int, seed: int = 0, rate: float | None = None, *, output_sigma: float = 0.8
) -> list[Request]:
    """`n` short instruction requests (means near 19 in / 58 out); all at t=0 if no rate.

    `output_sigma`: the spread of the output lengths, as in `sharegpt_like`.
    """
    return _make(n, seed, rate, *ALPACA_MEANS, sigma_p=0.7, sigma_o=_sigma(output_sigma))


def with_prompt_ids(
    requests: list[Request],
    *,
    num_system_prompts: int = 0,
    system_len: int = 0,
    seed: int = 0,
    vocab_size: int = 32000,
) -> list[Request]:
    """The same requests with synthetic prompt token ids, so that prefix caching can hash them:
    request i opens with system prompt i % num_system_prompts (its first `system_len` tokens, at
    most all but its last token), then tokens of its own. Seeded; no two requests' own tokens
    are alike (ASSUMPTION: user turns never repeat). SIMULATED workloads only: ids mean nothing.
    """
    num_system_prompts = require_int("num_system_prompts", num_system_prompts, at_least=0)
    system_len = require_int("system_len", system_len, at_least=0)
    vocab_size = require_int("vocab_size", vocab_size, at_least=2)
    if system_len and not num_system_prompts:
        raise ValueError(f"system_len={system_len} needs num_system_prompts >= 1, got 0")
    rng = np.random.default_rng(seed)
    systems = rng.integers(0, vocab_size, (num_system_prompts, system_len)).tolist()
    out = []
    for i, r in enumerate(requests):
        n = min(system_len, r.prompt_len - 1)
        head = systems[i % num_system_prompts][:n] if n > 0 else []
        own = rng.integers(0, vocab_size, r.prompt_len - len(head)).tolist()
        ids = tuple(head + own)
        out.append(Request(r.req_id, r.prompt_len, r.output_len, r.arrival_time, ids, r.cache_salt))
    return out
