"""Prefix caching on the real model: `paged.model.generate(..., prefix_caching=, cache_salts=)`
and the tenant experiment (`paged.model.tenants`).

With the real weights (skip without them, fail under PAGED_REQUIRE_MODEL=1): cached runs give
the uncached run's tokens, each request reports the prompt tokens it found cached at its first
admission, salts keep tenants apart; the tenant experiment counts cross-tenant hits (> 0
without salts, 0 with) and times each first token (positive numbers: no test asserts a wall-clock
time). Bad salts are named before anything is allocated.
"""

from __future__ import annotations

import importlib

import pytest

import paged.model as pm
from paged.model.shared_prompt import LIBRARY_SYSTEM

QUESTIONS = [
    "Say hello in French.",
    "What is the capital of Japan? Answer with one word.",
    "Name three primary colours.",
    "How many legs does a spider have?",
]


@pytest.fixture(scope="module")
def uncached(model):
    return pm.generate(model, QUESTIONS, 12, system=LIBRARY_SYSTEM)


def test_the_system_prompt_is_chapter_elevens_recorded_one():
    from paged.engines import vllm_recordings

    assert vllm_recordings.recording("chapter11_prefix_caching")["system"] == LIBRARY_SYSTEM


@pytest.mark.parametrize("rules, block_size", [("course", 16), ("vllm-v1", 32)])
def test_cached_runs_give_the_uncached_tokens(model, uncached, rules, block_size):
    run = pm.generate(
        model,
        QUESTIONS,
        12,
        system=LIBRARY_SYSTEM,
        prefix_caching=True,
        rules=rules,
        block_size=block_size,
    )
    assert run.tokens == uncached.tokens and run.prefix_caching
    assert uncached.cached_tokens == (0, 0, 0, 0) and not uncached.prefix_caching
    # the first computes the system prompt; the others find its full blocks (82 common tokens)
    full = 82 // block_size * block_size
    assert run.cached_tokens == (0, full, full, full)
    assert run.cached_prompt_tokens == 3 * full


def test_salts_keep_tenants_apart_and_change_no_token(model, uncached):
    salts = ["tenant-a", "tenant-b", "tenant-a", None]
    run = pm.generate(
        model, QUESTIONS, 12, system=LIBRARY_SYSTEM, prefix_caching=True, cache_salts=salts
    )
    assert run.tokens == uncached.tokens
    assert run.cached_tokens == (0, 0, 80, 0)  # only tenant a's second request hits a's blocks


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(cache_salts=["a"]), r"cache_salts has 1 salts for 4 prompts, got \['a'\]"),
        (dict(cache_salts=["a", "b", 3, None]), "cache_salts\\[2\\] must be a str or None, got 3"),
        (dict(cache_salts="a"), "cache_salts must be a list .* got 'a'"),
        (dict(prefix_caching="yes"), "prefix_caching must be True or False, got 'yes'"),
        (dict(prefix_caching=True, policy="max_new_tokens"), "needs policy 'paged'"),
        (dict(prefix_caching=True, share_prefix=True), "drop shared_prefix"),
    ],
)
def test_bad_caching_input_is_named_before_anything_is_allocated(model, monkeypatch, kwargs, match):
    gen = importlib.import_module("paged.model.generate")
    built = []
    monkeypatch.setattr(gen, "KVCache", lambda *a, **k: built.append("cache"))
    with pytest.raises(ValueError, match=match):
        pm.generate(model, QUESTIONS, 4, **kwargs)
    assert built == []


# ---- the tenant experiment -------------------------------------------------------------------
def test_cross_tenant_hits_count_blocks_another_tenant_computed():
    from paged.model.tenants import cross_tenant_hits

    steps = [
        ({0: 0, 1: 8}, {0: (1, 2, 3), 1: (1, 2, 4)}),  # 1 (tenant b) hits a's blocks 1 and 2
        ({}, {1: (1, 2, 4)}),  # 0 left; its blocks stay cached
        ({2: 8, 3: 4}, {1: (1, 2, 4), 2: (1, 2, 5), 3: (1, 6)}),  # a's own, then b hits a's 1
    ]
    assert cross_tenant_hits(steps, ["a", "b", "a", "b"], 4) == 3
    assert cross_tenant_hits(steps, ["a", "a", "a", "a"], 4) == 0


def test_tenant_experiment_shares_without_salts_and_not_with_them(model):
    from paged.model.tenants import tenant_experiment

    r = tenant_experiment(model, max_new_tokens=4, repeats=1)
    assert r.same_tokens and r.repeats == 1 and r.block_size == 16
    assert r.cached_tokens == {"uncached": (0, 0), "shared": (0, 80), "salted": (0, 0)}
    assert r.cross_tenant_hits == {"uncached": 0, "shared": 5, "salted": 0}
    for a, b in r.ttft.values():  # MEASURED: only that they are times, never how long
        assert isinstance(a, float) and isinstance(b, float) and a > 0 and b > 0
    assert r.speedup > 0 and r.salted_ratio > 0
    assert " cores, " in r.machine and " threads)" in r.machine  # the machine it ran on
    with pytest.raises(ValueError, match="repeats must be an int >= 1, got 0"):
        tenant_experiment(model, repeats=0)
