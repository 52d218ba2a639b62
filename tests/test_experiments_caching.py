"""What prefix caching saves (`paged.experiments.caching_savings`) and its chart."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from paged.experiments import caching_savings
from paged.viz import draw_caching_savings

SMALL = dict(num_requests=40, kv_slots=4096, rate=2.0)


@pytest.fixture(scope="module")
def default():
    return caching_savings()


def test_caching_computes_fewer_prompt_tokens(default):
    off, on = default.runs
    assert not off.prefix_caching and on.prefix_caching
    assert off.cached_prompt_tokens == 0 < on.cached_prompt_tokens
    assert on.first_prefill_tokens < off.first_prefill_tokens == off.prompt_tokens
    assert on.computed_prompt_tokens < off.computed_prompt_tokens
    assert on.computed_tokens < off.computed_tokens
    # the same prompts on both sides: what caching found is what it did not compute first
    assert on.prompt_tokens == off.prompt_tokens
    assert on.first_prefill_tokens + on.cached_prompt_tokens == on.prompt_tokens
    # resumed requests find their own blocks again (counted apart from first admissions)
    assert off.recached_tokens == 0 < on.recached_tokens and on.recached_tokens % 16 == 0
    assert "SIMULATED" not in default.assumptions and "6144" in default.assumptions


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("systems,system_len", [(1, 64), (3, 32), (2, 0)])
def test_caching_never_computes_more_prompt_tokens_at_first_prefill(seed, systems, system_len):
    off, on = caching_savings(
        **SMALL, seed=seed, num_system_prompts=systems, system_len=system_len
    ).runs
    assert on.first_prefill_tokens <= off.first_prefill_tokens
    assert on.cached_prompt_tokens % 16 == 0  # whole blocks only
    if system_len == 0:  # nothing shared: nothing found
        assert on.cached_prompt_tokens == 0


def test_caching_savings_is_deterministic_for_a_seed():
    assert caching_savings(**SMALL, seed=3) == caching_savings(**SMALL, seed=3)
    assert caching_savings(**SMALL, seed=3) != caching_savings(**SMALL, seed=4)


def test_caching_savings_refuses_bad_arguments():
    with pytest.raises(ValueError, match="num_system_prompts"):
        caching_savings(num_system_prompts=0)
    with pytest.raises(ValueError, match="num_requests"):
        caching_savings(num_requests=0)


def test_the_chart_draws_both_runs_in_both_languages(default, monkeypatch):
    ax = draw_caching_savings(default)
    labels = {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()}
    assert labels[1].startswith("no caching") and labels[0].startswith("prefix caching")
    assert "SIMULATED" in ax.get_title(loc="left")
    texts = [t.get_text() for t in ax.texts]
    assert f"{default.cached.cached_prompt_tokens:,}" in texts
    assert f"{default.cached.recached_tokens:,}" in texts
    plt.close(ax.figure)
    monkeypatch.setenv("PAGED_LANG", "ko")
    ax = draw_caching_savings(default)
    assert "접두사 캐싱" in ax.get_title(loc="left") and "SIMULATED" in ax.get_title(loc="left")
    plt.close(ax.figure)
