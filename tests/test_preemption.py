"""Preemption by swapping and by recomputation (§4.5), and its cost model fitted to §7.3."""

import pytest

import paged
from paged import Request
from paged.preemption_cost import CostModel, bandwidth_window, preemption_time, section_7_3


def generated(sim) -> dict:
    return {q.req_id: q.num_generated for q in sim.sequences}


def serve(reqs, mode, **kw):
    """Run to completion, checking the CPU pool's bound and admissions at every step."""
    sim = paged.Scheduler(reqs, "paged", preemption=mode, **kw)
    trace = []
    while not sim.done:
        s = sim.step()
        trace.append(s)
        if sim.pool.cpu is not None:
            assert sim.pool.cpu.num_used_blocks <= sim.pool.cpu.num_blocks
        if s.num_swapped:  # §4.5: no new request while swapped-out ones wait
            assert s.admitted == ()
    return sim, trace


def test_hand_computed_swap():
    # 4 blocks of 1 slot. Step 1: A (2 + 2) grows to 3 and takes B's turn... B (1 + 2) cannot
    # write, so B, the latest arrival, is swapped out (1 block) and comes back when A finishes.
    reqs = [Request("A", 2, 2), Request("B", 1, 2)]
    sim, trace = serve(reqs, "swap", kv_slots=4, block_size=1, watermark=0)
    assert trace[1].preempted == ("B",) and trace[1].num_swapped == 1
    assert sim.num_swapped_blocks == 1 and sim.num_recomputed_tokens == 0
    back = next(s.step for s in trace if "B" in s.swapped_in)
    assert back == next(s.step for s in trace if "A" in s.finished)
    assert generated(sim) == {"A": 2, "B": 2}


@pytest.mark.parametrize("block_size", [1, 4, 16])
def test_swap_and_recompute_serve_every_token(block_size):
    reqs = paged.sharegpt_like(25, seed=13)  # a workload no notebook uses
    runs = {m: serve(reqs, m, kv_slots=1536, block_size=block_size) for m in ("recompute", "swap")}
    for sim, _ in runs.values():
        assert generated(sim) == {r.req_id: r.output_len for r in reqs}
    swap, recompute = runs["swap"][0], runs["recompute"][0]
    assert swap.num_swapped_blocks > 0 and swap.num_recomputed_tokens == 0
    assert recompute.num_recomputed_tokens > 0 and recompute.num_swapped_blocks == 0
    swapped_out = sum(len(s.preempted) for s in runs["swap"][1])
    swapped_in = sum(len(s.swapped_in) for s in runs["swap"][1])
    assert swapped_out == swapped_in > 0  # every swapped request came back


def test_a_small_cpu_pool_is_never_exceeded_and_falls_back_to_recompute():
    reqs = paged.sharegpt_like(25, seed=13)
    sim, _ = serve(reqs, "swap", kv_slots=1536, block_size=16, cpu_blocks=8)
    assert sim.pool.cpu.num_blocks == 8 and sim.pool.cpu.num_used_blocks == 0
    assert sim.num_swapped_blocks > 0 and sim.num_recomputed_tokens > 0
    assert generated(sim) == {r.req_id: r.output_len for r in reqs}


def test_simulate_reports_the_counters():
    reqs = paged.sharegpt_like(25, seed=13)
    r = paged.simulate(reqs, "paged", kv_slots=1536, preemption="swap")
    assert r.swapped_blocks > 0 and r.recomputed_tokens == 0 and r.num_preemptions > 0
    with pytest.raises(ValueError, match="'disk'"):
        paged.simulate(reqs, "paged", kv_slots=1536, preemption="disk")
    with pytest.raises(ValueError, match="cpu_blocks"):
        paged.simulate(reqs, "paged", kv_slots=1536, preemption="swap", cpu_blocks=0)


def test_cost_model_swap_time_falls_with_block_size_recompute_does_not():
    m = CostModel()
    tokens = 4096
    swap = [m.swap_time(tokens // bs, bs) for bs in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
    assert swap == sorted(swap, reverse=True) and len(set(swap)) == len(swap)
    per_token = [m.per_token(bs) for bs in (1, 16, 256)]
    assert len({round(r, 12) for _, r in per_token}) == 1  # recompute: same at every size
    assert per_token[0][0] > per_token[0][1] and per_token[-1][0] < per_token[-1][1]


def test_cost_model_by_hand_and_errors():
    m = CostModel(
        bytes_per_token=1000,
        num_layers=2,
        pcie_bytes_per_s=1e6,
        transfer_latency_s=1e-3,
        prefill_tokens_per_s=100.0,
    )
    # 3 blocks of 4 tokens: 3 x 2 layers x (K, V) = 12 transfers, 12,000 bytes.
    assert m.transfers(3) == 12
    assert m.swap_time(3, 4) == pytest.approx(12e-3 + 12_000 / 1e6)
    assert m.recompute_time(50) == pytest.approx(0.5)
    # per token, blocks of 4, out and in: 2 x (2 x 2 x 1 ms / 4 + 1000 B / 1 MB/s) = 4 ms
    assert m.per_token(4) == (pytest.approx(4e-3), pytest.approx(1e-2))
    result = paged.simulate(
        paged.sharegpt_like(25, seed=13), "paged", kv_slots=1536, block_size=16, preemption="swap"
    )
    assert preemption_time(result, m) == pytest.approx(2 * m.swap_time(result.swapped_blocks, 16))
    assert preemption_time(result) == preemption_time(result, CostModel.fitted_to_paper())
    with pytest.raises(ValueError, match="paged"):
        preemption_time(paged.simulate([Request(0, 1, 1)], "max", kv_slots=4096))
    with pytest.raises(TypeError, match="CostModel"):
        preemption_time(result, "fast")


@pytest.mark.parametrize(
    "field, value",
    [
        ("pcie_bytes_per_s", 0),
        ("pcie_bytes_per_s", True),
        ("transfer_latency_s", -1e-6),
        ("prefill_tokens_per_s", float("nan")),
        ("prefill_tokens_per_s", float("inf")),
        ("transfer_latency_s", "5us"),
        ("bytes_per_token", 0),
        ("num_layers", 2.5),
    ],
)
def test_cost_model_refuses_bad_fields_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        CostModel(**{field: value})


def test_cost_model_methods_refuse_bad_values_by_name():
    m = CostModel()
    for call, name in (
        (lambda: m.transfers(-1), "num_blocks"),
        (lambda: m.swap_time(1, 0), "block_size"),
        (lambda: m.swap_time(1.5, 16), "num_blocks"),
        (lambda: m.recompute_time(-1), "num_tokens"),
        (lambda: m.per_token(0), "block_size"),
        (lambda: section_7_3(m, (16,)), "at least two"),
        (lambda: section_7_3(m, (16, 8)), "increasing"),
        (lambda: section_7_3(m, (0, 8)), "block size"),
        (lambda: bandwidth_window(0, 5000), "transfer_latency_s"),
        (lambda: bandwidth_window(5e-6, -1), "prefill_tokens_per_s"),
    ):
        with pytest.raises(ValueError, match=name):
            call()
    with pytest.raises(TypeError, match="CostModel"):
        section_7_3("fitted")


# PAPER §7.3 about Fig. 19(a), in the course's reading (recompute at most 1.2 x swap):
# 1. "swapping incurs excessive overhead with small block sizes";
# 2. "the overhead of recomputation remains constant across different block sizes";
# 3. "recomputation is more efficient when the block size is small, while swapping is more
#    efficient when the block size is large, though recomputation overhead is never higher than
#    20% of swapping's latency".


def test_the_fitted_model_meets_the_three_statements_of_section_7_3():
    fit = CostModel.fitted_to_paper()
    assert fit == CostModel()  # the default is the fit
    s = section_7_3(fit)
    assert s.block_sizes == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert all(a > b for a, b in zip(s.swap, s.swap[1:], strict=False))  # 1: falls ...
    assert s.swap[0] > 4 * s.recompute[0]  # ... and is excessive at block size 1
    assert len({round(r, 15) for r in s.recompute}) == 1  # 2: constant
    assert s.recompute[0] < s.swap[0] and s.swap[-1] < s.recompute[-1]  # 3: each wins its side
    ratios = [r / w for w, r in zip(s.swap, s.recompute, strict=True)]
    assert max(ratios) <= 1.2 and max(ratios) == pytest.approx(s.max_ratio)  # 3: never > 1.2x
    assert s.swap_excessive_when_small and s.recompute_constant and s.each_wins_where_said
    assert s.holds and s.crossover == 32
    low, high = bandwidth_window(fit.transfer_latency_s, fit.prefill_tokens_per_s)
    assert low < fit.pcie_bytes_per_s <= high
    assert (low, high) == (pytest.approx(8.32e9, rel=1e-3), pytest.approx(10.02e9, rel=1e-3))


def test_the_bandwidth_window_is_exactly_where_the_statements_hold():
    lat, rate = 5e-6, 5_000.0
    low, high = bandwidth_window(lat, rate)
    for bw, holds in (
        (low * 0.99, False),
        (low * 1.01, True),
        ((low + high) / 2, True),
        (high * 0.99, True),
        (high * 1.01, False),
        (25e9, False),
    ):
        model = CostModel(pcie_bytes_per_s=bw, transfer_latency_s=lat, prefill_tokens_per_s=rate)
        assert section_7_3(model).holds is holds, bw
    # A latency so small that it cannot make block size 1 dear: the bytes must, which caps bw.
    low, high = bandwidth_window(1e-8, 5_000.0)
    m = CostModel(pcie_bytes_per_s=high * 1.01, transfer_latency_s=1e-8)
    assert not section_7_3(m).swap_excessive_when_small
    assert bandwidth_window(5e-6, 1e6)[0] == float("inf")  # recompute too cheap: no window


def test_25_gbps_would_need_an_impossible_prefill():
    """The old default (25 GB/s, 10 us): statement 3 needs ~11,600 tokens/s, ~97 % of an A100."""
    old = CostModel(pcie_bytes_per_s=25e9, transfer_latency_s=10e-6)
    assert not section_7_3(old).holds
    needed = 1 / (1.2 * old.per_token(256)[0])  # tokens/s at which recompute = 1.2 x swap at 256
    assert needed == pytest.approx(11_600, rel=0.01)
    assert 2 * 13e9 * needed / 312e12 == pytest.approx(0.97, abs=0.01)  # of the fp16 dense peak
    assert not bandwidth_window(10e-6, 5_000)[0] < 25e9 <= bandwidth_window(10e-6, 5_000)[1]


def test_the_modern_host_moves_the_crossover_to_smaller_blocks():
    fit, modern = section_7_3(CostModel.fitted_to_paper()), section_7_3(CostModel.modern_host())
    assert modern.crossover == 16 < fit.crossover == 32
    assert modern.swap_excessive_when_small and modern.recompute_constant
    assert not modern.each_wins_where_said and modern.max_ratio > 2  # recompute 2x swap at 256
    assert CostModel.modern_host().pcie_bytes_per_s == 25e9


def test_describe_names_the_parameter_set_in_the_learners_language(monkeypatch):
    assert CostModel().describe().startswith("bandwidth fitted to PAPER §7.3: 9.5 GB/s, 5 µs")
    assert CostModel.modern_host().describe().startswith("modern host (ASSUMPTION): 25.0 GB/s")
    assert CostModel(num_layers=2).describe().startswith("custom")
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert "초당 5,000 토큰" in CostModel().describe()


def test_draw_preemption_costs_marks_each_models_crossover():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paged import viz

    fig, ax = plt.subplots()
    viz.draw_preemption_costs((CostModel.fitted_to_paper(), CostModel.modern_host()), ax=ax)
    assert len(ax.get_lines()) == 4 + 2  # swap and recompute per model, one crossover line each
    texts = [t.get_text() for t in ax.texts]
    assert any("from 32" in t for t in texts) and any("from 16" in t for t in texts)
    fig2, ax2 = plt.subplots()
    viz.draw_preemption_costs(CostModel(prefill_tokens_per_s=1e6), ax=ax2)  # recompute wins all
    assert any("never" in t.get_text() for t in ax2.texts)
    with pytest.raises(TypeError, match="CostModel"):
        viz.draw_preemption_costs(["fast"])
    with pytest.raises(ValueError, match="1 to 4"):
        viz.draw_preemption_costs(())
    plt.close(fig)
    plt.close(fig2)
