"""The one scheduler: the simulator's numbers pinned, the back-end hooks, options that apply."""

import hashlib

import pytest

import paged
from paged.errors import KVBudgetTooSmall
from paged.scheduler import Scheduler
from paged.scheduler_config import ContiguousConfig, PagedConfig
from paged.scheduler_options import settle
from paged.workloads import Request

# Pinned before the loop moved from the simulator into paged.scheduler (commit 02fab9d):
# (policy, options) -> steps, preemptions, peak batch, swapped blocks, recomputed tokens,
# breakdown (4 decimals) and a digest of the whole step trace.
PINNED = [
    (
        "max",
        dict(placement="buddy"),
        48380,
        0,
        2,
        0,
        0,
        (0.1373, 0.0864, 0.4590, 0.3173),
        "20cb8e8116b2db63",
    ),
    (
        "pow2",
        dict(placement="buddy"),
        27503,
        0,
        8,
        0,
        0,
        (0.2436, 0.1534, 0.1274, 0.4756),
        "7e583839b5383f2a",
    ),
    (
        "oracle",
        dict(placement="first_fit"),
        13527,
        0,
        13,
        0,
        0,
        (0.5000, 0.3176, 0.0, 0.1823),
        "254c76fd339ce724",
    ),
    (
        "paged",
        dict(block_size=16),
        7334,
        434,
        48,
        0,
        84904,
        (0.9570, 0.0173, 0.0002, 0.0254),
        "ea942dddff4d5f32",
    ),
    (
        "paged",
        dict(block_size=16, preemption="swap"),
        7334,
        434,
        48,
        5504,
        0,
        (0.9570, 0.0173, 0.0002, 0.0254),
        "56fa083ae64b61a2",
    ),
    (
        "paged",
        dict(block_size=8, admission="hold", watermark=0.0),
        9917,
        340,
        50,
        0,
        70070,
        (0.6739, 0.0057, 0.0, 0.3204),
        "5022b2f7510643b1",
    ),
]


def outputs(s) -> dict:
    return {q.req_id: q.output_ids for q in s.sequences}


def generated(s) -> dict:
    return {q.req_id: q.num_generated for q in s.sequences}


def trace_digest(result) -> str:
    h = hashlib.sha256()
    for s in result.trace:
        fields = (
            s.step,
            tuple(s.usage),
            s.num_running,
            s.num_waiting,
            s.admitted,
            s.refused,
            s.preempted,
            s.finished,
            s.rounded_up,
            s.swapped_in,
            s.num_swapped,
        )
        h.update(repr(fields).encode())
    return h.hexdigest()[:16]


@pytest.fixture(scope="module")
def workload():
    return paged.sharegpt_like(300, seed=5)


@pytest.mark.parametrize("pin", PINNED, ids=lambda p: f"{p[0]}-{len(p[1])}-{p[-1][:4]}")
def test_simulator_numbers_are_pinned(workload, pin):
    policy, options, *want = pin
    r = paged.simulate(workload, policy, kv_slots=6000, **options)
    steps, preemptions, peak, swapped, recomputed, breakdown, digest = want
    got = (r.num_steps, r.num_preemptions, r.max_batch_size, r.swapped_blocks, r.recomputed_tokens)
    assert got == (steps, preemptions, peak, swapped, recomputed)
    assert tuple(round(v, 4) for v in r.breakdown.values()) == pytest.approx(breakdown, abs=1e-4)
    assert trace_digest(r) == digest


EOS = 0


def serve(s: Scheduler, stop_after: dict) -> list:
    """Drive `s` as a real model would, one phase at a time: request r samples EOS as its
    `stop_after[r]`-th token (counting the prefill's), token 1 otherwise. Logs every phase."""
    calls = []
    while not s.done:
        record = None
        while record is None:
            step = s.schedule()
            for run in step.runs:  # each run's slots are the positions it computes, in its table
                held = s.pool.slot_mapping(run.req_id)
                assert len(held) == run.start + run.num_tokens == len(set(held))
            if step.runs:
                calls.append((step.phase, tuple(run.req_id for run in step.runs)))
            calls += [("preempted", q) for q in step.preempted]
            tokens = {
                q: EOS if len(outputs(s)[q]) + 1 >= stop_after[q] else 1 for q in step.sampling
            }
            record = s.postprocess(step, tokens)
    return calls


@pytest.mark.parametrize("policy", ["paged", "oracle"])
def test_the_tokens_handed_back_decide_when_requests_finish(policy):
    reqs = [Request(i, 5 + i, 20) for i in range(4)]
    stop = {0: 3, 1: 1, 2: 20, 3: 7}  # request 1 samples EOS from its prefill
    s = Scheduler(reqs, policy, kv_slots=400, eos_token_id=EOS, prefill_samples=True)
    calls = serve(s, stop)
    assert calls[0] == ("prefill", (0, 1, 2, 3))
    assert calls[1] == ("decode", (0, 2, 3))  # request 1 never decodes
    assert {r: len(outputs(s)[r]) for r in stop} == stop  # EOS kept in the output
    assert {r: generated(s)[r] for r in stop} == {r: n - 1 for r, n in stop.items()}
    assert s.step_index == 20  # the admission step, then 19 decode steps for request 2


def test_a_simulated_request_decodes_output_len_times():
    s = Scheduler([Request(0, 3, 4)], "paged", kv_slots=64, block_size=4)
    first = s.schedule()
    assert (first.phase, first.runs) == ("decode", ())  # nothing runs before admission
    assert s.postprocess(first) is None
    prefill = s.schedule()
    (run,) = prefill.runs
    assert (run.start, run.num_tokens, run.sample, run.token_ids) == (0, 3, False, None)
    assert s.postprocess(prefill).admitted == (0,)
    steps = s.run()
    assert len(steps) == 4 and steps[-1].finished == (0,) and generated(s)[0] == 4


def test_phases_come_in_order_and_refuse_a_stale_step():
    s = Scheduler([Request(0, 3, 2)], "paged", kv_slots=64, block_size=4, prefill_samples=True)
    decode = s.schedule()
    with pytest.raises(RuntimeError, match="postprocess its decode phase first"):
        s.schedule()
    s.postprocess(decode)
    with pytest.raises(ValueError, match="not the phase being computed"):
        s.postprocess(decode)
    prefill = s.schedule()
    with pytest.raises(RuntimeError, match="postprocess its prefill phase first"):
        s.schedule()
    with pytest.raises(ValueError, match=r"no token for \[0\]"):
        s.postprocess(prefill, {})
    assert s.postprocess(prefill, {0: 5}).admitted == (0,) and outputs(s)[0] == [5]


def test_real_runs_carry_token_ids_and_a_re_prefill_keeps_its_sampled_token():
    prompt = (7, 8, 9, 10)
    reqs = [Request(i, 4, 12, prompt_token_ids=prompt) for i in range(3)]
    s = Scheduler(
        reqs,
        "paged",
        kv_slots=32,
        block_size=4,
        watermark=0.0,
        eos_token_id=EOS,
        prefill_samples=True,
    )
    seen = []
    while not s.done:
        record = None
        while record is None:
            step = s.schedule()
            for run in step.runs:
                ids = prompt + tuple(outputs(s)[run.req_id])
                assert run.token_ids == ids[run.start : run.start + run.num_tokens]
                seen.append((step.phase, run.req_id, run.sample))
            record = s.postprocess(step, {q: 1 for q in step.sampling})
    # request 2 was preempted and prefilled again, without sampling a second first token
    reprefills = [x for x in seen if x[0] == "prefill" and x[1] == 2]
    assert len(reprefills) >= 2 and reprefills[0][2] and not any(x[2] for x in reprefills[1:])
    assert all(len(outputs(s)[i]) == 12 for i in range(3))


def test_preemption_recomputes_by_re_prefilling():
    reqs = [Request(i, 4, 12) for i in range(3)]
    s = Scheduler(reqs, "paged", kv_slots=32, block_size=4, watermark=0.0)
    calls = serve(s, {i: 99 for i in range(3)})
    assert ("preempted", 2) in calls
    after = calls[calls.index(("preempted", 2)) :]
    assert any(c[0] == "prefill" and 2 in c[1] for c in after)  # it came back by recomputation
    assert s.num_recomputed_tokens > 0 and all(generated(s)[i] == 12 for i in range(3))


def test_max_num_seqs_caps_the_batch():
    reqs = [Request(i, 2, 3) for i in range(5)]
    s = Scheduler(reqs, "paged", kv_slots=400, max_num_seqs=2)
    trace = s.run()
    assert max(t.num_running for t in trace) == 2
    assert "max_num_seqs" in {why for t in trace for _, why in t.refused}


@pytest.mark.parametrize(
    "policy, options, named",
    [
        ("max", dict(block_size=16), "block_size=16"),
        ("pow2", dict(preemption="swap"), "preemption='swap'"),
        ("oracle", dict(watermark=0.1), "watermark=0.1"),
        ("max", dict(seed=3), "seed=3"),
        ("oracle", dict(admission="hold"), "admission='hold'"),
        ("paged", dict(placement="buddy"), "placement='buddy'"),
        ("paged", dict(cpu_blocks=8), "cpu_blocks=8"),
        ("paged", dict(max_num_seqs=0), "max_num_seqs"),
    ],
)
def test_options_that_do_not_apply_are_refused(policy, options, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        paged.simulate([Request(0, 1, 1)], policy, kv_slots=4096, **options)


def test_usage_has_named_fields():
    r = paged.simulate([Request(0, 5, 3)], "paged", kv_slots=64, block_size=4)
    u = r.trace[0].usage
    assert u.token_states == u[0] == 5 and u.reservation == 3  # the prompt, then 3 to come
    assert sum(u) == 64


def test_a_shared_prefix_is_held_once_and_copied_on_write():
    """10 shared tokens in blocks of 4: two full blocks held once, the third copied per request."""
    reqs = [Request(i, 20, 6) for i in range(3)]
    s = Scheduler(
        reqs,
        "paged",
        kv_slots=400,
        block_size=4,
        watermark=0.0,
        shared_prefix=10,
        record_layout=True,
    )
    s.postprocess(s.schedule())
    prefill = s.schedule()
    prefix = prefill.prefix
    assert (prefix.start, prefix.num_tokens, prefix.sample) == (0, 10, False)
    assert prefill.prefix.block_table == tuple(s.allocator.block_table("<shared prefix>"))
    assert len(prefill.copies) == 3 and len(set(prefill.copies)) == 3  # one per request
    assert all(run.start == 10 for run in prefill.runs)  # each computes only its own tokens
    first = s.postprocess(prefill)
    shared = s.allocator.block_table("<shared prefix>")
    for r in reqs:  # each request: the two full prefix blocks, then blocks of its own
        table = s.allocator.block_table(r.req_id)
        assert table[:2] == shared[:2] and table[2] != shared[2] and len(table) == 5
    assert s.allocator.num_used_blocks == 3 + 3 * 3  # vs 3 * 5 without sharing
    assert first.usage.token_states == 10 + 3 * (20 - 8)  # physical slots holding a token
    assert sum(first.usage) == 400
    s.run()
    assert s.allocator.num_used_blocks == 0  # the prefix goes when the run is done


def test_preemption_keeps_the_shared_prefix_and_recomputes_only_the_rest():
    reqs = [Request(i, 12, 12) for i in range(3)]
    s = Scheduler(reqs, "paged", kv_slots=48, block_size=4, watermark=0.0, shared_prefix=8)
    trace = s.run()
    preempted = sum(len(t.preempted) for t in trace)
    assert preempted > 0
    # each recomputation re-prefills prompt + generated minus the 8 shared tokens
    assert s.num_recomputed_tokens >= preempted * (12 - 8)
    assert all(generated(s)[r.req_id] == 12 for r in reqs)
    assert s.allocator.num_used_blocks == 0 and all(sum(t.usage) == 48 for t in trace)
    assert all(min(t.usage) >= 0 for t in trace)  # shared slots are counted once


def test_no_shared_prefix_changes_nothing(workload):
    a = paged.simulate(workload[:80], "paged", kv_slots=4000, block_size=16)
    b = paged.simulate(workload[:80], "paged", kv_slots=4000, block_size=16, shared_prefix=0)
    assert trace_digest(a) == trace_digest(b)


@pytest.mark.parametrize(
    "policy, options, named",
    [
        ("oracle", dict(shared_prefix=4), "shared_prefix=4 applies to policy 'paged'"),
        ("paged", dict(shared_prefix=4, preemption="swap"), "recomputation only"),
        ("paged", dict(shared_prefix=5), "no token of its own"),
        ("paged", dict(shared_prefix=-1), "shared_prefix must be an int >= 0"),
    ],
)
def test_a_shared_prefix_is_refused_where_it_cannot_work(policy, options, named):
    with pytest.raises(ValueError, match=named):
        Scheduler([Request(0, 5, 2)], policy, kv_slots=64, **options)


def test_settled_options_fill_the_defaults_and_only_the_policys_own():
    run = settle("paged", kv_slots=1000, preemption="swap")
    assert (run.block_size, run.seed, run.watermark) == (16, 0, 0.01)
    assert isinstance(run, PagedConfig) and (run.admission, run.shared_prefix) == ("greedy", 0)
    assert (run.num_blocks, run.watermark_blocks, run.cpu_blocks) == (62, 0, 62)
    contiguous = settle("pow2", kv_slots=1000)
    assert isinstance(contiguous, ContiguousConfig) and contiguous.placement == "first_fit"
    assert not any(hasattr(contiguous, f) for f in ("block_size", "preemption", "cpu_blocks"))
    assert not hasattr(run, "placement")
    with pytest.raises(TypeError, match="blok_size"):  # a misspelt option is never ignored
        Scheduler([Request(0, 5, 2)], "paged", kv_slots=64, blok_size=4)


def _check_sequences(s: Scheduler) -> None:
    """Each record agrees with the queue that holds it, and with the pool while it runs."""
    where = {"waiting": s.waiting, "running": s.running, "swapped": s.swapped}
    for status, queue in where.items():
        assert all(q.status == status for q in queue), status
    for q in s.running:  # the cache holds what the record says, its cached tokens among them
        assert q.num_computed_tokens == s.pool.num_tokens(q.req_id) == q.num_tokens
        assert q.num_cached_tokens == s.pool.shared_prefix
    for q in (*s.waiting, *s.swapped):
        assert q.num_computed_tokens == q.num_cached_tokens == 0


@pytest.mark.parametrize(
    "options",
    [
        dict(preemption="recompute"),
        dict(preemption="swap"),
        dict(preemption="recompute", admission="hold"),
        dict(shared_prefix=24),
        dict(rules="vllm-v1", max_num_batched_tokens=2100),
    ],
    ids=lambda o: "-".join(map(str, o.values())),
)
def test_each_request_carries_its_own_state_through_preemptions(options):
    reqs = [
        Request(r.req_id, r.prompt_len + 24, r.output_len, r.arrival_time)
        for r in paged.sharegpt_like(40, seed=3, rate=4.0)
    ]
    s = Scheduler(reqs, "paged", kv_slots=2400, block_size=16, watermark=0.0, **options)
    trace = []
    while not s.done:
        trace.append(s.step())
        _check_sequences(s)
    assert len(s.sequences) == 40 and all(q.status == "finished" for q in s.sequences)
    for q in s.sequences:  # a real model's last token is sampled, never written
        assert len(q.output_ids) == q.request.output_len
        assert q.num_generated == q.request.output_len - s.config.prefill_samples
    preempted = [q for step in trace for q in step.preempted]
    assert sum(q.num_preemptions for q in s.sequences) == len(preempted) > 0
    for q in s.sequences:
        assert q.num_preemptions == preempted.count(q.req_id)
    assert s.num_recomputed_tokens == sum(q.num_recomputed_tokens for q in s.sequences)


def test_a_scheduler_holds_queues_and_a_pool_not_dicts_by_request():
    s = Scheduler(paged.sharegpt_like(20, seed=1), "paged", kv_slots=4000)
    s.step()
    state = vars(s)
    assert len(state) <= 10, sorted(state)
    assert not [k for k, v in state.items() if isinstance(v, dict)]


def test_phases_are_named_for_what_they_hold():
    reqs = [Request(i, 20, 3) for i in range(3)]
    s = Scheduler(reqs, "paged", kv_slots=400, block_size=4)
    phases = []
    while not s.done:
        step = s.schedule()
        phases.append(step.phase)
        s.postprocess(step)
    assert phases[:4] == ["decode", "prefill", "decode", "prefill"]
    v1 = Scheduler(reqs, "paged", kv_slots=400, block_size=4, rules="vllm-v1")
    first = v1.schedule()  # one batch: the prefills of step 0
    assert first.phase == "mixed" and [r.req_id for r in first.runs] == [0, 1, 2]
    v1.postprocess(first, {0: 1, 1: 1, 2: 1})
    second = v1.schedule()  # then the decodes, in the same kind of phase
    assert second.phase == "mixed" and all(r.num_tokens == 1 for r in second.runs)


@pytest.mark.parametrize(
    ("policy", "options", "named"),
    [
        ("paged", dict(block_size=4), "needs 7 blocks"),
        ("paged", dict(block_size=4, rules="vllm-v1"), "null block"),
        ("pow2", dict(), "contiguous slots"),
        ("oracle", dict(placement="buddy"), "contiguous slots"),
    ],
)
def test_each_pool_says_whether_a_request_could_ever_fit(policy, options, named):
    big = Request(0, 20, 8)  # 28 tokens: 7 blocks of 4
    s = Scheduler([Request(1, 4, 2)], policy, kv_slots=24, **options)
    assert s.pool.fits_alone(Request(1, 4, 2)) is None
    assert named in s.pool.fits_alone(big)
    with pytest.raises(KVBudgetTooSmall, match=named):
        Scheduler([big], policy, kv_slots=24, **options)
