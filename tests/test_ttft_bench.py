"""The time-to-first-token benchmark's plumbing, with a fake vLLM run (real times need the model
and vLLM: `python -m paged.course.ttft_bench`)."""

from types import SimpleNamespace

import pytest

from paged.course import ttft_bench as T


def fake_generate(calls, cached_b=64):
    """A vLLM run where B served from A's blocks takes 0.1 s, and everything else 0.4 s."""

    def generate(prompts, max_new, *, cache_salts, one_at_a_time, **kwargs):
        calls.append(dict(prompts=prompts, salts=cache_salts, one_at_a_time=one_at_a_time) | kwargs)
        shared = [j % 2 == 1 and cache_salts[j] == cache_salts[j - 1] for j in range(len(prompts))]
        return SimpleNamespace(
            version="0.32.0",
            num_cached_tokens=tuple(cached_b if s else 0 for s in shared),
            time_to_first_token=lambda j: 0.1 if shared[j] else 0.4,
        )

    return generate


def test_each_pair_gets_new_salts_and_b_is_timed_in_both_conditions(monkeypatch):
    calls = []
    monkeypatch.setattr(T.V, "generate", fake_generate(calls))
    a, b = [1] * 70, [1] * 64 + [2] * 36
    row = T.vllm_row([a, b], repeats=2)
    (call,) = calls
    assert call["prompts"] == [a, b] * 5 and call["one_at_a_time"] and call["live"]
    salts = call["salts"]
    assert salts[:2] == ["warm-up", "warm-up"]  # a warm-up pair, then per repeat two pairs
    assert len(set(salts[2:])) == 2 * 3  # same-salt pairs share one; two-salt pairs two
    assert call["kv_blocks"] == 2 * (3 + 4) + 1 and call["prefix_caching"]
    assert row == {
        "engine": "vLLM 0.32.0",
        "prompt_len": 100,
        "cached": 64,
        "full_ms": 400.0,
        "cached_ms": 100.0,
        "cut": 4.0,
        "proportional": 2.78,  # 100 / (100 - 64)
    }


def test_a_run_where_b_finds_nothing_of_as_is_refused(monkeypatch):
    monkeypatch.setattr(T.V, "generate", fake_generate([], cached_b=0))
    with pytest.raises(RuntimeError, match=r"same-salt pair .* per prompt: \(0, 0, 0, 0, 0, 0\)"):
        T.vllm_row([[1] * 70, [1] * 100], repeats=1)
