"""Preemption by swapping and by recomputation (§4.5), its cost model, and beam search sharing."""

import pytest

import paged
from paged import Request
from paged.experiments import beam_search_sharing, beam_search_steps
from paged.preemption_cost import CostModel, preemption_time


def serve(reqs, mode, **kw):
    """Run to completion, checking the CPU pool's bound and admissions at every step."""
    sim = paged.Simulator(reqs, "paged", preemption=mode, **kw)
    trace = []
    while not sim.done:
        s = sim.step()
        trace.append(s)
        if sim.cpu is not None:
            assert sim.cpu.num_used_blocks <= sim.cpu.num_blocks
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
    assert sim.generated == {"A": 2, "B": 2}


@pytest.mark.parametrize("block_size", [1, 4, 16])
def test_swap_and_recompute_serve_every_token(block_size):
    reqs = paged.sharegpt_like(25, seed=13)  # a workload no notebook uses
    runs = {m: serve(reqs, m, kv_slots=1536, block_size=block_size) for m in ("recompute", "swap")}
    for sim, _ in runs.values():
        assert sim.generated == {r.req_id: r.output_len for r in reqs}
    swap, recompute = runs["swap"][0], runs["recompute"][0]
    assert swap.num_swapped_blocks > 0 and swap.num_recomputed_tokens == 0
    assert recompute.num_recomputed_tokens > 0 and recompute.num_swapped_blocks == 0
    swapped_out = sum(len(s.preempted) for s in runs["swap"][1])
    swapped_in = sum(len(s.swapped_in) for s in runs["swap"][1])
    assert swapped_out == swapped_in > 0  # every swapped request came back


def test_a_small_cpu_pool_is_never_exceeded_and_falls_back_to_recompute():
    reqs = paged.sharegpt_like(25, seed=13)
    sim, _ = serve(reqs, "swap", kv_slots=1536, block_size=16, cpu_blocks=8)
    assert sim.cpu.num_blocks == 8 and sim.cpu.num_used_blocks == 0
    assert sim.num_swapped_blocks > 0 and sim.num_recomputed_tokens > 0
    assert sim.generated == {r.req_id: r.output_len for r in reqs}


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
    m = CostModel(bytes_per_token=1000, num_layers=2, pcie_bytes_per_s=1e6,
                  transfer_latency_s=1e-3, prefill_tokens_per_s=100.0)  # fmt: skip
    # 3 blocks of 4 tokens: 3 x 2 layers x (K, V) = 12 transfers, 12,000 bytes.
    assert m.transfers(3) == 12
    assert m.swap_time(3, 4) == pytest.approx(12e-3 + 12_000 / 1e6)
    assert m.recompute_time(50) == pytest.approx(0.5)
    result = paged.simulate(paged.sharegpt_like(25, seed=13), "paged", kv_slots=1536,
                            block_size=16, preemption="swap")  # fmt: skip
    assert preemption_time(result, m) == pytest.approx(2 * m.swap_time(result.swapped_blocks, 16))
    with pytest.raises(ValueError, match="pcie_bytes_per_s"):
        CostModel(pcie_bytes_per_s=0)
    with pytest.raises(ValueError, match="paged"):
        preemption_time(paged.simulate([Request(0, 1, 1)], "max", kv_slots=4096))


def test_beam_search_ref_counts_match_tables_and_nothing_leaks():
    r = Request(0, prompt_len=10, output_len=30)
    for step in beam_search_steps(r, 4, block_size=4, seed=1):
        a = step.allocator
        held = [b for seq in a.seq_ids for b in a.block_table(seq)]
        for block in set(held):
            assert a.ref_count(block) == held.count(block)
        assert a.num_used_blocks == len(set(held))
        assert step.copies <= len(step.beams)  # at most one copied block per candidate
        assert all(a.num_tokens(b) == 10 + int(b[1]) for b in step.beams)
    assert a.num_used_blocks == 0  # freed after the last step


def test_beam_search_sharing_metric():
    reqs = [Request(0, 8, 8), Request(1, 3, 20)]
    one = beam_search_sharing(reqs, 1, block_size=4)
    assert one.saved == 0 and one.copies == 0  # a single beam shares nothing
    for k in (2, 4, 6):
        s = beam_search_sharing(reqs, k, block_size=4)
        lengths = [r.prompt_len + t for r in reqs for t in range(1, r.output_len + 1)]
        private = k * sum(-(-n // 4) for n in lengths)
        assert s.blocks_private == private and 0 < s.saved < 1 - 1 / (k + 1)
