"""Block sharing in parallel sampling and beam search (§4.4, §6.3), and the survivor rules."""

import math

import numpy as np
import pytest

import paged
from paged import Request
from paged.experiments import (
    SCORE_VOCAB,
    beam_search_sharing,
    beam_search_steps,
    blocks_held_by_samples,
    sampling_sharing,
    stand_in_top_probability,
)
from paged.facts import FIG15B_BEAM_SAVING


@pytest.mark.parametrize("survivors", ["random", "score"])
def test_beam_search_ref_counts_match_tables_and_nothing_leaks(survivors):
    r = Request(0, prompt_len=10, output_len=30)
    for step in beam_search_steps(r, 4, block_size=4, seed=1, survivors=survivors):
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


def test_score_survivors_keep_the_best_cumulative_scores():
    """The "score" rule keeps the top beam_width (candidate, token) pairs by cumulative log-prob."""
    steps = list(beam_search_steps(Request(0, 5, 12), 4, block_size=2, seed=3, survivors="score"))
    assert steps[0].parents == (0, 0, 0, 0)  # step 1: the k best tokens of the one prompt
    previous = None
    for step in steps:
        assert list(step.scores) == sorted(step.scores, reverse=True)  # kept best first
        assert all(s <= 0 for s in step.scores)  # log-probabilities
        if previous is not None:  # a continuation never scores above the candidate it extends
            assert all(
                s <= previous[p] + 1e-12 for s, p in zip(step.scores, step.parents, strict=True)
            )
        previous = step.scores
    assert [s.scores for s in beam_search_steps(Request(0, 5, 4), 2, survivors="random")] == [
        None
    ] * 4
    greedy = beam_search_steps(Request(0, 5, 6), 1, survivors="score")
    assert all(s.parents == (0,) for s in greedy)  # width 1: greedy decoding, one lineage


def test_score_survivors_match_a_brute_force_reading_of_the_rule():
    """Same seeded draws, every (candidate, token) pair ranked by cumulative log-probability."""
    k, seed, scale = 3, 7, 2.0
    steps = beam_search_steps(Request(0, 4, 15), k, seed=seed, survivors="score", logit_scale=scale)
    rng = np.random.default_rng(seed)
    scores = [0.0] * k
    for t, step in enumerate(steps, 1):
        logits = scale * rng.standard_normal((k, SCORE_VOCAB))
        pairs = []
        for beam in range(k if t > 1 else 1):  # step 1: one prompt, so one candidate's tokens
            norm = math.log(sum(math.exp(x) for x in logits[beam]))
            pairs += [(scores[beam] + x - norm, beam) for x in logits[beam]]
        best = sorted(pairs, key=lambda p: -p[0])[:k]
        assert step.parents == tuple(beam for _, beam in best)
        assert step.scores == pytest.approx([score for score, _ in best], abs=1e-9)
        scores = [score for score, _ in best]


def test_the_survivor_rule_changes_the_saving_only_when_the_model_is_peaked():
    """What chapter 9 reports: flat stand-ins share like random survivors; peaked ones less."""
    reqs = paged.alpaca_like(40, seed=5)  # a workload no notebook uses
    rand = beam_search_sharing(reqs, 6).saved
    flat = beam_search_sharing(reqs, 6, survivors="score", logit_scale=1.0).saved
    peaked = beam_search_sharing(reqs, 6, survivors="score", logit_scale=8.0).saved
    assert abs(flat - rand) < 0.02 and peaked < rand - 0.04


def test_fig15b_is_quoted_width_by_width():
    assert FIG15B_BEAM_SAVING == {2: 37.56, 4: 53.13, 6: 55.16}
    assert list(FIG15B_BEAM_SAVING.values()) == sorted(FIG15B_BEAM_SAVING.values())


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(beam_width=0), "beam_width"),
        (dict(block_size=0), "block_size"),
        (dict(seed=-1), "seed"),
        (dict(survivors="best"), "survivors"),
        (dict(logit_scale=0), "logit_scale"),
        (dict(logit_scale=math.nan), "logit_scale"),
        (dict(logit_scale=True), "logit_scale"),
        (dict(beam_width=1.5), "beam_width"),
        (dict(beam_width=SCORE_VOCAB + 1, survivors="score"), "beam_width"),
    ],
)
def test_beam_search_checks_its_arguments_before_the_first_step(kwargs, name):
    args = dict(beam_width=2) | kwargs
    width = args.pop("beam_width")
    with pytest.raises(ValueError, match=name):
        beam_search_steps(Request(0, 5, 5), width, **args)  # raises on the call, not on next()
    with pytest.raises(ValueError, match=name):
        beam_search_sharing([Request(0, 5, 5)], width, **args)


def test_bad_requests_are_named():
    for call in (
        lambda: beam_search_steps((5, 5), 2),
        lambda: beam_search_sharing(Request(0, 5, 5), 2),
        lambda: beam_search_sharing([Request(0, 5, 5), "r"], 2),
        lambda: blocks_held_by_samples([(5, 5)], 2),
    ):
        with pytest.raises(ValueError, match="Request"):
            call()
    with pytest.raises(ValueError, match="empty"):
        beam_search_sharing([], 2)


def test_blocks_held_by_samples_checks_its_arguments():
    reqs = [Request(0, 13, 1)]
    assert blocks_held_by_samples(reqs, 3, block_size=4) == 3 + 3  # 3 full blocks + 3 private
    assert blocks_held_by_samples([], 3) == 0
    for kwargs, name in (
        (dict(num_samples=0), "num_samples"),
        (dict(block_size=0), "block_size"),
        (dict(share="yes"), "share"),
    ):
        args = dict(num_samples=3) | kwargs
        with pytest.raises(ValueError, match=name):
            blocks_held_by_samples(reqs, args.pop("num_samples"), **args)


def test_sampling_sharing_sets_both_counts_side_by_side():
    reqs = paged.alpaca_like(30, seed=4)
    s = sampling_sharing(reqs, 3, block_size=8)
    shared = blocks_held_by_samples(reqs, 3, block_size=8)
    private = blocks_held_by_samples(reqs, 3, block_size=8, share=False)
    assert (s.num_samples, s.blocks_shared, s.blocks_private) == (3, shared, private)
    assert s.saved == 1 - shared / private and 0 < s.saved < 1


def test_the_stand_in_model_is_flat_or_peaked_by_its_scale():
    flat = stand_in_top_probability(1.0, rng=np.random.default_rng(1), samples=2000)
    peaked = stand_in_top_probability(8.0, rng=np.random.default_rng(1), samples=2000)
    assert 1 / SCORE_VOCAB < flat < 0.2 and 0.7 < peaked < 1
    with pytest.raises(ValueError, match="logit_scale"):
        stand_in_top_probability(0, rng=np.random.default_rng(1))
