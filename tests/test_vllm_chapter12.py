"""Chapter 12 against vLLM: tenants with and without salts, and a tight pool that evicts and preempts.

From the recordings (no vLLM needed): the course's scheduler (`rules="vllm-v1"`,
`prefix_caching=True`) fed vLLM's own requests and sampled tokens holds vLLM's block tables, free
blocks, admissions and victims at every step, finds the same cached tokens per request (resumed
ones included), and counts the same cross-tenant hits: > 0 without salts, 0 with them. With the
model: the course's own run of the tenants' prompts gives vLLM's tokens, step for step
(`compare`). Live runs equal their recordings in tests/test_vllm.py.
"""

from __future__ import annotations

import pytest
from vllm_replay import as_result, options, replay, run_recorded

import paged.model as pm
from paged.engines import compare, vllm_recordings, vllm_request
from paged.engines import vllm as V
from paged.model.shared_prompt import LIBRARY_SYSTEM
from paged.model.tenants import (
    CHAPTER12_QUESTIONS,
    MUSEUM_SYSTEM,
    TENANT_SALTS,
    TIGHT_ORDER,
    cross_tenant_hits,
    engine_cross_tenant_hits,
)
from paged.scheduler import Scheduler
from paged.workloads import Request

NOSALT, SALTED, TIGHT = "chapter12_tenants_nosalt", "chapter12_tenants_salted", "chapter12_tight"


def tenants_of(name: str) -> list:
    """Tenant of each prompt: chapter 12's tenants alternate A, B (the tight run: by system)."""
    if name == TIGHT:
        return [s for s, _ in TIGHT_ORDER]
    n = len(vllm_recordings.recording(name)["request"]["prompt_token_ids"])
    return [i % 2 for i in range(n)]


# ---- the recordings: what vLLM did ---------------------------------------------------------
def test_the_recordings_hold_chapter_twelves_requests():
    nosalt, salted, tight = (vllm_recordings.recording(n) for n in (NOSALT, SALTED, TIGHT))
    assert nosalt["prompts"] == salted["prompts"] == list(CHAPTER12_QUESTIONS)
    assert nosalt["system"] == salted["system"] == LIBRARY_SYSTEM
    assert "cache_salts" not in nosalt["request"]
    assert salted["request"]["cache_salts"] == [TENANT_SALTS[i % 2] for i in range(6)]
    assert {k: v for k, v in nosalt["request"].items()} == {
        k: v for k, v in salted["request"].items() if k != "cache_salts"
    }
    systems = (LIBRARY_SYSTEM, MUSEUM_SYSTEM)
    assert tight["system"] == [systems[s] for s, _ in TIGHT_ORDER]
    assert tight["prompts"] == [CHAPTER12_QUESTIONS[q] for _, q in TIGHT_ORDER]
    for rec in (nosalt, salted, tight):
        assert rec["request"]["prefix_caching"] and rec["request"]["block_size"] == 32


def test_vllm_shares_the_system_prompt_across_tenants_unless_salted():
    nosalt, salted = run_recorded(NOSALT), run_recorded(SALTED)
    assert nosalt.tokens == salted.tokens  # a salt changes what is shared, never an answer
    assert nosalt.num_cached_tokens == (0, 64, 64, 64, 64, 64)  # 82 common tokens: 2 blocks
    assert salted.num_cached_tokens == (0, 0, 64, 64, 64, 64)  # B's first computes B's own
    assert salted.cache_salts == tuple(TENANT_SALTS[i % 2] for i in range(6))
    for run in (nosalt, salted):
        assert run.cached_prompt_tokens == run.metrics["vllm:prefix_cache_hits"]
        assert run.preemptions == 0
    tenants = tenants_of(NOSALT)
    steps = [
        (cached, {r: t for r, t, _ in s.layout.tables})
        for cached, s in zip(nosalt.cached_tokens, nosalt.trace, strict=True)
    ]
    assert cross_tenant_hits(steps, tenants, 32) == 2 * 3  # B's three requests, 2 blocks each
    steps = [
        (cached, {r: t for r, t, _ in s.layout.tables})
        for cached, s in zip(salted.cached_tokens, salted.trace, strict=True)
    ]
    assert cross_tenant_hits(steps, tenants, 32) == 0


def test_the_tight_run_evicts_and_preempts_and_resumed_requests_re_hit():
    run = run_recorded(TIGHT)
    assert run.kv_blocks == 16 and run.preemptions > 0 and run.resumed_cached_tokens > 0
    assert run.metrics["vllm:num_preemptions"] == run.preemptions
    # the last four repeat the first four; prompts 0 and 1 hold 3 full blocks before their
    # last token, found whole in a roomy pool, but here their question's block was evicted
    # before the repeats came: only the system prompt's 2 blocks are found
    q = vllm_recordings.recording(TIGHT)["request"]
    assert [len(p) for p in q["prompt_token_ids"][:2]] == [100, 99]
    assert run.num_cached_tokens[12:14] == (64, 64)
    reqs = [
        Request(i, len(ids), q["max_new_tokens"], 0.0, tuple(ids))
        for i, ids in enumerate(q["prompt_token_ids"])
    ]
    roomy = Scheduler(
        reqs,
        "paged",
        kv_slots=64 * 32,
        block_size=32,
        rules="vllm-v1",
        prefix_caching=True,
        eos_token_id=run.eos_token_id,
    )
    while not roomy.done:
        step = roomy.schedule()
        made = {r.req_id: len(roomy.sequences[r.req_id].output_ids) for r in step.runs if r.sample}
        roomy.postprocess(step, {i: run.tokens[i][k] for i, k in made.items()})
    assert [roomy.sequences[i].num_prompt_cached_tokens for i in (12, 13)] == [96, 96]


# ---- the course's scheduler, fed the same requests: step for step -----------------------------
@pytest.mark.parametrize("name", [NOSALT, SALTED, TIGHT])
def test_the_course_scheduler_holds_vllms_blocks_at_every_step(name):
    s, steps, engine = replay(name)
    assert len(steps) == len(engine.trace)
    for (ours, free, cached), theirs, their_free, their_cached in zip(
        steps, engine.trace, engine.num_free_blocks, engine.cached_tokens, strict=True
    ):
        tables = sorted((r, t) for r, t, _ in ours.layout.tables)
        assert tables == sorted((r, t) for r, t, _ in theirs.layout.tables), ours.step
        assert (free, ours.admitted, tuple(sorted(ours.preempted))) == (
            their_free,
            theirs.admitted,
            tuple(sorted(theirs.preempted)),
        ), ours.step
        assert cached == their_cached, ours.step  # resumed requests' re-hits included
    side = compare.compare(as_result(s, steps, engine), engine)
    assert side.first_difference is None and side.agreeing_steps == len(engine.trace)
    assert side.same_tokens
    assert tuple(q.num_prompt_cached_tokens for q in s.sequences) == engine.num_cached_tokens
    resumed = sum(c[r] for (rec, _, c), res in zip(steps, engine.resumed, strict=True) for r in res)
    assert resumed == engine.resumed_cached_tokens


@pytest.mark.parametrize(("name", "cross"), [(NOSALT, 6), (SALTED, 0)])
def test_both_engines_count_the_same_cross_tenant_hits(name, cross):
    s, steps, engine = replay(name)
    ours = [(c, {r: t for r, t, _ in rec.layout.tables}) for rec, _, c in steps]
    tenants = tenants_of(name)
    assert (
        cross_tenant_hits(ours, tenants, 32) == engine_cross_tenant_hits(engine, tenants) == cross
    )


# ---- the request: salts are part of it, checked by name -------------------------------------
def test_salts_are_part_of_the_request_and_bad_ones_are_named():
    ids = [[1, 2, 3] * 12, [1, 2, 3] * 12]
    plain = vllm_request.make_request(ids, 4, kv_blocks=8)
    assert "cache_salts" not in plain
    assert vllm_request.make_request(ids, 4, kv_blocks=8, cache_salts=[None, None]) == plain
    assert vllm_request.make_request(ids, 4, kv_blocks=8, cache_salts=["a", None])[
        "cache_salts"
    ] == [
        "a",
        None,
    ]
    with pytest.raises(ValueError, match=r"cache_salts has 1 salts for 2 prompts, got \['a'\]"):
        V.generate(ids, 4, kv_blocks=8, cache_salts=["a"])
    with pytest.raises(ValueError, match=r"cache_salts\[1\] must be a str or None, got 5"):
        V.generate(ids, 4, kv_blocks=8, cache_salts=["a", 5])
    with pytest.raises(
        vllm_recordings.RecordingNotFound
    ):  # other salts: another request, not recorded
        q = vllm_recordings.recording(SALTED)["request"]
        V.generate(
            q["prompt_token_ids"],
            q["max_new_tokens"],
            live=False,
            **(options(q) | {"cache_salts": ["x"] * 6}),
        )


# ---- with the model: the course's own run gives vLLM's tokens, step for step ----------------
@pytest.mark.parametrize("name", [NOSALT, SALTED])
def test_the_course_model_with_caching_gives_vllms_tokens_step_for_step(model, name):
    rec, engine = vllm_recordings.recording(name), run_recorded(name)
    q = rec["request"]
    assert pm.prompt_ids(model, rec["prompts"], rec["system"]) == q["prompt_token_ids"]
    ours = pm.generate(
        model,
        rec["prompts"],
        q["max_new_tokens"],
        system=rec["system"],
        block_size=32,
        kv_slots=q["kv_blocks"] * 32,
        rules="vllm-v1",
        prefix_caching=True,
        cache_salts=q.get("cache_salts"),
        record_layout=True,
    )
    assert ours.tokens == engine.tokens
    assert ours.cached_tokens == engine.num_cached_tokens
    side = compare.compare(ours, engine)
    assert side.first_difference is None and side.agreeing_steps == engine.steps
