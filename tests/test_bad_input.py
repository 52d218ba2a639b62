"""One way of checking arguments across the public API: eagerly, naming the bad value.

Each call below gets a value a new user might pass by mistake. It must raise at once (not on
first use, not deep inside as a ZeroDivisionError or AttributeError), say which argument was
wrong with the value it got, and leave any object it was called on as it was.
"""

import copy

import pytest

import paged
from paged import experiments, preemption_cost
from paged.errors import UnknownSequence
from paged.scheduler import Scheduler
from paged.workloads import Request

ONE = [Request(0, 1, 1)]

BAD_CALLS = [
    # (what, call, words the message must contain)
    ("next_pow2(0)", lambda: paged.next_pow2(0), "n must be an int >= 1, got 0"),
    ("next_pow2(2.5)", lambda: paged.next_pow2(2.5), "got 2.5"),
    (
        "num_blocks_for(5, 0)",
        lambda: paged.num_blocks_for(5, 0),
        "block_size must be an int >= 1, got 0",
    ),
    (
        "num_blocks_for(-1, 4)",
        lambda: paged.num_blocks_for(-1, 4),
        "num_tokens must be an int >= 0, got -1",
    ),
    ("bytes_per_token('opt')", lambda: paged.bytes_per_token("opt"), "spec must be a ModelSpec"),
    (
        "kv_slots(.., 'a')",
        lambda: paged.kv_slots(paged.OPT_13B, "a"),
        "budget_bytes must be a number",
    ),
    ("kv_slots(.., -5)", lambda: paged.kv_slots(paged.OPT_13B, -5), "got -5"),
    ("sharegpt_like(-1)", lambda: paged.sharegpt_like(-1), "n must be a non-negative int, got -1"),
    ("alpaca_like(rate=0)", lambda: paged.alpaca_like(3, rate=0), "rate must be > 0"),
    ("alpaca_like(output_sigma=0)", lambda: paged.alpaca_like(3, output_sigma=0), "output_sigma"),
    ("Request(prompt_len=0)", lambda: Request(0, 0, 1), "prompt_len must be an int >= 1, got 0"),
    ("Request(prompt_len=1.5)", lambda: Request(0, 1.5, 1), "got 1.5"),
    ("Request(arrival_time=-1)", lambda: Request(0, 1, 1, -1.0), "arrival_time"),
    ("simulate(policy='lru')", lambda: paged.simulate(ONE, "lru", kv_slots=10), "got 'lru'"),
    (
        "simulate(kv_slots=0)",
        lambda: paged.simulate(ONE, "paged", kv_slots=0),
        "kv_slots must be an int >= 1, got 0",
    ),
    (
        "simulate(max, preemption)",
        lambda: paged.simulate(ONE, "max", kv_slots=4096, preemption="swap"),
        "preemption='swap' applies to policy 'paged'",
    ),
    (
        "simulate(paged, placement)",
        lambda: paged.simulate(ONE, "paged", kv_slots=64, placement="buddy"),
        "placement='buddy' applies to a contiguous policy",
    ),
    (
        "simulate(watermark=1)",
        lambda: paged.simulate(ONE, "paged", kv_slots=64, watermark=1.0),
        "watermark must be in [0, 1), got 1.0",
    ),
    (
        "Scheduler(max_num_seqs=0)",
        lambda: Scheduler(ONE, "paged", kv_slots=64, max_num_seqs=0),
        "max_num_seqs must be an int >= 1, got 0",
    ),
    (
        "Scheduler(shared_prefix=1)",
        lambda: Scheduler(ONE, "paged", kv_slots=64, shared_prefix=1),
        "no token of its own",
    ),
    (
        "PagedAllocator(0, 4)",
        lambda: paged.PagedAllocator(0, 4),
        "num_blocks must be an int >= 1, got 0",
    ),
    (
        "ContiguousAllocator(policy='lru')",
        lambda: paged.ContiguousAllocator(10, "lru"),
        "got 'lru'",
    ),
    (
        "compare_policies(policies=('lru',))",
        lambda: experiments.compare_policies(ONE, kv_slots=10, policies=("lru",)),
        "got 'lru'",
    ),
    (
        "block_size_sweep(block_sizes=(0,))",
        lambda: experiments.block_size_sweep(ONE, kv_slots=100, block_sizes=(0,)),
        "block_size must be an int >= 1, got 0",
    ),
    (
        "blocks_held_by_samples(0 samples)",
        lambda: experiments.blocks_held_by_samples(ONE, 0, block_size=4),
        "num_samples must be an int >= 1, got 0",
    ),
    (
        "beam_search_steps(block_size=0)",
        lambda: experiments.beam_search_steps(Request(0, 5, 5), 2, block_size=0),
        "block_size must be an int >= 1, got 0",
    ),
    (
        "beam_search_sharing(width 0)",
        lambda: experiments.beam_search_sharing([Request(0, 5, 5)], 0),
        "beam_width must be an int >= 1, got 0",
    ),
    (
        "CostModel(pcie_bytes_per_s=0)",
        lambda: preemption_cost.CostModel(pcie_bytes_per_s=0),
        "pcie_bytes_per_s",
    ),
    (
        "CostModel.swap_time(block_size=0)",
        lambda: preemption_cost.CostModel().swap_time(1, 0),
        "block_size must be an int >= 1, got 0",
    ),
]


@pytest.mark.parametrize("what, call, words", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_values_are_named_at_once(what, call, words):
    with pytest.raises(ValueError) as error:
        call()  # a generator is not iterated: beam_search_steps must check before its first step
    assert words in str(error.value), (what, str(error.value))


def test_an_unknown_option_is_named_with_the_ones_there_are():
    reqs = [Request(0, 40, 4, 0.0, tuple(range(40)))]
    with pytest.raises(TypeError, match=r"unknown option 'bogus'; the options are .*kv_slots"):
        Scheduler(reqs, "paged", kv_slots=1024, bogus=True)
    # chunked prefill comes with vLLM V1's rules, not with a switch
    with pytest.raises(TypeError, match=r"'chunked_prefill': chunked prefill has no switch; .*"):
        Scheduler(reqs, "paged", kv_slots=1024, chunked_prefill=True)


def _paged():
    a = paged.PagedAllocator(8, 4, seed=1)
    a.allocate("a", 6)
    a.fork("a", "b")
    return a


def _contiguous():
    a = paged.ContiguousAllocator(64, "oracle")
    a.allocate("a", prompt_len=10, output_len=5)
    return a


STATEFUL = [
    ("allocate(-1)", _paged, lambda a: a.allocate("c", -1), ValueError, "-1"),
    ("allocate(existing id)", _paged, lambda a: a.allocate("a", 1), ValueError, "'a'"),
    ("allocate(too many)", _paged, lambda a: a.allocate("c", 999), paged.OutOfBlocks, "999"),
    ("append(unknown)", _paged, lambda a: a.append("zz", 1), UnknownSequence, "'zz'"),
    ("append(-2)", _paged, lambda a: a.append("a", -2), ValueError, "-2"),
    ("fork(unknown)", _paged, lambda a: a.fork("zz", "c"), UnknownSequence, "'zz'"),
    ("fork(onto existing)", _paged, lambda a: a.fork("a", "b"), ValueError, "'b'"),
    ("free(unknown)", _paged, lambda a: a.free("zz"), UnknownSequence, "'zz'"),
    ("slot(out of range)", _paged, lambda a: a.slot("a", 6), ValueError, "position 6"),
    (
        "contiguous allocate(prompt 0)",
        _contiguous,
        lambda a: a.allocate("b", prompt_len=0, output_len=1),
        ValueError,
        "prompt_len",
    ),
    ("contiguous append past the end", _contiguous, lambda a: a.append("a", 50), ValueError, "50"),
    ("contiguous free(unknown)", _contiguous, lambda a: a.free("zz"), UnknownSequence, "'zz'"),
]


@pytest.mark.parametrize("what, make, call, kind, words", STATEFUL, ids=[c[0] for c in STATEFUL])
def test_a_refused_call_leaves_the_allocator_as_it_was(what, make, call, kind, words):
    allocator = make()
    before = copy.deepcopy(allocator.__dict__)
    with pytest.raises(kind) as error:
        call(allocator)
    assert words in str(error.value), (what, str(error.value))
    assert allocator.__dict__ == before, what


def test_a_prompt_over_the_token_budget_is_refused_not_left_waiting_forever():
    with pytest.raises(ValueError, match="max_num_batched_tokens=64"):
        Scheduler([Request(0, 65, 2)], "paged", kv_slots=4096, max_num_batched_tokens=64)
