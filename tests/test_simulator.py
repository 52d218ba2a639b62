import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paged
from paged import Request
from paged.experiments import compare_policies
from paged.facts import FIG2_BREAKDOWN
from paged.kv import A100_40GB_KV_BUDGET
from paged.scheduler_options import SIM_POLICIES
from paged.trace import refused_steps


def test_hand_computed_contiguous_scenario():
    # 8 slots, Max reserves 4. Step 0: A (2+2) and B (2+1) admitted, C (3+1) refused: no space.
    # Step 1: B finishes, C admitted. Step 2: A and C finish.
    reqs = [Request(0, 2, 2), Request(1, 2, 1), Request(2, 3, 1)]
    r = paged.simulate(reqs, "max", kv_slots=8, max_seq_len=4)
    s0, s1, s2 = r.trace
    assert s0.admitted == (0, 1) and s0.refused == ((2, "no_space"),) and s0.num_waiting == 1
    assert refused_steps(r.trace, "no_space") == [0] and refused_steps(r.trace, "no_hole") == []
    assert s0.usage == (4, 3, 1, 0)  # tokens 2+2; still to come 2+1; never used 0+1; free 0
    assert s1.finished == (1,) and s1.admitted == (2,) and s1.usage == (6, 2, 0, 0)
    assert s2.finished == (0, 2) and s2.usage == (0, 0, 0, 8)
    # Only step 0 had someone waiting, so the breakdown is step 0's picture.
    assert r.breakdown == {
        "token_states": 4 / 8,
        "reservation": 3 / 8,
        "internal_fragmentation": 1 / 8,
        "external_fragmentation": 0.0,
    }
    assert r.mean_batch_size == 2 and r.num_steps == 3 and r.num_preemptions == 0


def test_hand_computed_paged_scenario():
    # 4 blocks of 4. A: 3 prompt + 2 out, B: 1 prompt + 1 out. No one ever waits, so the
    # breakdown averages the two busy steps.
    reqs = [Request("A", 3, 2), Request("B", 1, 1)]
    r = paged.simulate(reqs, "paged", kv_slots=16, block_size=4, watermark=0)
    s0, s1, s2 = r.trace
    # A: 3 tokens in a block of 4; its 1 empty slot will be filled (reservation, §4.2).
    # B: 1 token; 1 of its 3 empty slots will be filled, 2 never (internal fragmentation).
    assert s0.usage == (4, 1 + 1, 2, 8)
    assert s1.finished == ("B",) and s1.usage == (4, 0, 0, 12)
    assert s2.finished == ("A",) and s2.usage == (0, 0, 0, 16)
    assert r.breakdown == {
        "token_states": 8 / 32,
        "reservation": 2 / 32,
        "internal_fragmentation": 2 / 32,
        "external_fragmentation": 20 / 32,
    }
    assert r.mean_batch_size == 1.5 and r.rounded_up == 0


def test_paged_internal_waste_is_under_one_block_per_sequence():
    reqs = paged.sharegpt_like(40, seed=9)
    r = paged.simulate(reqs, "paged", kv_slots=3000, block_size=16)
    assert all(s.usage[2] <= 15 * s.num_running for s in r.trace)
    assert all(sum(s.usage) == 3000 for s in r.trace)


def test_buddy_round_up_is_external_fragmentation_and_others():
    # One request, prompt 40 + output 25: Pow2 reserves 72, the buddy allocator takes 128.
    r = paged.simulate([Request(0, 40, 25)], "pow2", kv_slots=256, placement="buddy")
    s0 = r.trace[0]
    assert s0.usage == (40, 25, 7, 256 - 72) and s0.rounded_up == 128 - 72
    oracle = paged.simulate([Request(0, 40, 25)], "oracle", kv_slots=256, placement="buddy")
    assert oracle.trace[0].usage == (40, 25, 0, 256 - 65) and oracle.trace[0].rounded_up == 63


def test_fig2_hold_out_seed_buddy_opt13b():
    """A seed no notebook uses: each Orca policy within 15 points of Fig. 2 (sum over 4 bars)."""
    slots = paged.kv_slots(paged.OPT_13B, A100_40GB_KV_BUDGET)
    reqs = paged.sharegpt_like(600, seed=3)
    res = compare_policies(reqs, kv_slots=slots, placement="buddy", policies=SIM_POLICIES)
    for policy in ("max", "pow2", "oracle"):
        paper = FIG2_BREAKDOWN[policy]
        sim = res[policy].breakdown
        distance = sum(abs(100 * sim[c] - (paper[c] or 0)) for c in paged.CATEGORIES)
        assert distance < 15, (policy, distance)
    ts = [res[p].breakdown["token_states"] for p in ("max", "pow2", "oracle", "paged")]
    assert ts == sorted(ts) and len(set(ts)) == 4
    assert res["oracle"].breakdown["internal_fragmentation"] == 0


def test_hold_admits_no_new_request_until_preempted_ones_finish():
    # 4 blocks of 1 slot. A and B run; A's growth preempts B; C arrives and must wait for B.
    reqs = [Request("A", 2, 2), Request("B", 1, 2), Request("C", 1, 1, arrival_time=2)]
    kw = dict(kv_slots=4, block_size=1, watermark=0)
    held = paged.simulate(reqs, "paged", admission="hold", **kw)
    greedy = paged.simulate(reqs, "paged", admission="greedy", **kw)
    for r in (held, greedy):
        assert sorted(f for s in r.trace for f in s.finished) == ["A", "B", "C"]
        assert r.num_preemptions >= 1
    refusals = [reason for s in held.trace for _, reason in s.refused]
    assert "held" in refusals and "held" not in [x for s in greedy.trace for _, x in s.refused]
    c_start = {
        name: next(s.step for s in r.trace if "C" in s.admitted)
        for name, r in (("hold", held), ("greedy", greedy))
    }
    b_end = next(s.step for s in held.trace if "B" in s.finished)
    assert c_start == {"greedy": 2, "hold": 4} and b_end == 4  # B finishes, then C is admitted


def test_paged_preempts_the_newest_request_and_finishes():
    reqs = [Request("A", 2, 2), Request("B", 1, 2)]
    r = paged.simulate(reqs, "paged", kv_slots=4, block_size=1, watermark=0, record_layout=True)
    assert r.trace[1].preempted == ("B",)  # A's growth took the last block; B must yield
    assert r.num_preemptions >= 1
    finished = [f for s in r.trace for f in s.finished]
    assert sorted(finished) == ["A", "B"]
    assert all(s.usage[0] <= 4 for s in r.trace)


def test_refusal_names_fragmentation_when_total_free_would_fit():
    # Oracle first-fit, 35 slots: three 10-slot requests leave 5 free; the middle one finishes
    # first, then a 15-slot request finds 10 + 5 free but no hole of 15.
    reqs = [Request(0, 5, 5), Request(1, 9, 1), Request(2, 5, 5), Request(3, 10, 5)]
    r = paged.simulate(reqs, "oracle", kv_slots=35, max_seq_len=30)
    assert r.trace[0].refused == ((3, "no_space"),)
    assert r.trace[1].finished == (1,) and r.trace[1].refused == ((3, "no_hole"),)


def test_deterministic_and_breakdown_sums_to_one():
    reqs = paged.sharegpt_like(60, seed=5)
    for policy in ("max", "pow2", "oracle", "paged"):
        options = {} if policy == "paged" else dict(placement="buddy")
        a = paged.simulate(reqs, policy, kv_slots=4000, **options)
        b = paged.simulate(reqs, policy, kv_slots=4000, **options)
        assert a == b
        assert sum(a.breakdown.values()) == pytest.approx(1.0)
        assert all(sum(s.usage) == 4000 for s in a.trace)


def test_paging_beats_every_contiguous_policy_on_token_states():
    reqs = paged.sharegpt_like(150, seed=0)
    res = {p: paged.simulate(reqs, p, kv_slots=8000) for p in ("max", "pow2", "oracle", "paged")}
    ts = {p: r.breakdown["token_states"] for p, r in res.items()}
    assert ts["max"] < ts["pow2"] < ts["oracle"] < ts["paged"]
    assert ts["paged"] > 0.9
    assert res["paged"].mean_batch_size > 1.5 * res["oracle"].mean_batch_size


def test_layout_replays_the_memory_map():
    reqs = paged.alpaca_like(20, seed=1)
    r = paged.simulate(reqs, "paged", kv_slots=256, block_size=8, record_layout=True)
    for s in r.trace:
        held = [b for _, table, _ in s.layout.tables for b in table]
        assert len(held) == len(set(held))  # no sharing in the simulator
        assert sum(n for *_, n in s.layout.tables) == s.usage[0]
    c = paged.simulate(reqs, "pow2", kv_slots=512, record_layout=True)
    assert all(sum(e.num_tokens for e in s.layout.extents) == s.usage[0] for s in c.trace)


@pytest.mark.parametrize(
    "kwargs, text",
    [
        (dict(policy="lru"), "'lru'"),
        (dict(kv_slots=0), "kv_slots"),
        (dict(block_size=0), "block_size"),
        (dict(kv_slots=32), "needs 3 blocks"),
        (dict(watermark=1.5), "watermark"),
        (dict(admission="lazy"), "'lazy'"),
        (dict(max_seq_len=30), "max_seq_len"),
    ],
)
def test_bad_arguments_name_the_value(kwargs, text):
    reqs = [Request(0, 20, 20)]
    args = dict(policy="paged", kv_slots=100) | kwargs
    with pytest.raises(ValueError, match=text):
        paged.simulate(reqs, args.pop("policy"), **args)


def test_duplicate_request_ids_are_rejected():
    with pytest.raises(ValueError, match="duplicate req_id 7"):
        paged.simulate([Request(7, 1, 1), Request(7, 2, 2)], "max", kv_slots=4096)


@settings(max_examples=60, deadline=None)
@given(
    lens=st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30)), min_size=1, max_size=25),
    block_size=st.sampled_from([1, 2, 4, 8, 16]),
    extra=st.integers(0, 40),
    watermark=st.sampled_from([0.0, 0.01, 0.2]),
)
def test_paged_never_deadlocks(lens, block_size, extra, watermark):
    reqs = [Request(i, p, o, arrival_time=i % 3) for i, (p, o) in enumerate(lens)]
    # The pool is just big enough for the longest request and the watermark, plus a little.
    need = paged.num_blocks_for(max(r.final_len for r in reqs), block_size)
    num_blocks = need + extra // block_size
    while need + int(watermark * num_blocks) > num_blocks:
        num_blocks += 1
    slots = num_blocks * block_size
    r = paged.simulate(reqs, "paged", kv_slots=slots, block_size=block_size, watermark=watermark)
    finished = sorted(f for s in r.trace for f in s.finished)
    assert finished == list(range(len(reqs)))
    assert r.num_steps <= sum(r.final_len for r in reqs) * (len(reqs) + 1) + 3


def test_sharing_saves_exactly_the_shared_prompt_blocks():
    from paged.experiments import blocks_held_by_samples

    # Prompt 10 tokens in blocks of 4: 2 full blocks shared, the half-full third copied on write.
    reqs = [Request(0, 10, 3)]
    assert blocks_held_by_samples(reqs, 3, block_size=4, share=False) == 3 * 4  # 13 tokens each
    assert blocks_held_by_samples(reqs, 3, block_size=4) == 2 + 3 * 2
