import statistics

import pytest

import paged
from paged.kv import A100_40GB_KV_BUDGET


def test_opt13b_bytes_per_token_matches_paper():
    assert paged.bytes_per_token(paged.OPT_13B) == 819_200 == 800 * 1024


def test_opt13b_a100_budget_is_about_15_7k_slots():
    assert paged.kv_slots(paged.OPT_13B, A100_40GB_KV_BUDGET) == 15_728


def test_gqa_preset_is_smaller_per_token():
    llama = paged.LLAMA_3_8B
    assert llama.num_q_heads // llama.num_kv_heads == 4
    assert paged.bytes_per_token(llama) == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, None])
def test_model_spec_rejects_bad_fields(bad):
    with pytest.raises(ValueError, match="num_layers"):
        paged.ModelSpec("x", num_layers=bad, num_kv_heads=1, head_dim=8)


def test_kv_slots_rejects_negative_budget():
    with pytest.raises(ValueError, match="-5"):
        paged.kv_slots(paged.TINY, -5)


@pytest.mark.parametrize(
    "make, prompt_mean, output_mean",
    [(paged.sharegpt_like, 161.31, 337.99), (paged.alpaca_like, 19.31, 58.45)],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_workload_means_within_10_percent_of_paper(make, prompt_mean, output_mean, seed):
    reqs = make(2000, seed=seed)
    assert abs(statistics.mean(r.prompt_len for r in reqs) / prompt_mean - 1) < 0.10
    assert abs(statistics.mean(r.output_len for r in reqs) / output_mean - 1) < 0.10
    assert all(1 <= r.prompt_len and 1 <= r.output_len and r.final_len <= 2048 for r in reqs)


def test_workloads_are_seeded_and_poisson_arrivals_increase():
    assert paged.sharegpt_like(50, seed=3) == paged.sharegpt_like(50, seed=3)
    assert paged.sharegpt_like(50, seed=3) != paged.sharegpt_like(50, seed=4)
    times = [r.arrival_time for r in paged.alpaca_like(500, seed=1, rate=2.0)]
    assert times == sorted(times) and times[0] > 0
    assert 200 < times[-1] < 300  # 500 arrivals at 2 per step
    assert all(r.arrival_time == 0 for r in paged.alpaca_like(10))


@pytest.mark.parametrize("kwargs", [{"n": -1}, {"n": 3, "rate": 0}, {"n": 2.5}])
def test_workloads_reject_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        paged.sharegpt_like(**kwargs)


def test_request_validates():
    with pytest.raises(ValueError, match="prompt_len"):
        paged.Request(0, 0, 5)
    assert paged.Request(0, 3, 5).final_len == 8


def test_output_sigma_widens_the_spread_and_keeps_the_seeded_default():
    narrow = [r.output_len for r in paged.sharegpt_like(3000, seed=1, output_sigma=0.5)]
    wide = [r.output_len for r in paged.sharegpt_like(3000, seed=1, output_sigma=1.1)]
    assert statistics.pstdev(narrow) < statistics.pstdev(wide)
    assert paged.sharegpt_like(50, seed=4) == paged.sharegpt_like(50, seed=4, output_sigma=0.8)
    for bad in (0, -1, "0.8", True, 5):
        with pytest.raises(ValueError, match="output_sigma"):
            paged.alpaca_like(3, output_sigma=bad)
