"""The plain-Python and PyTorch exercise checkers (memory chapters 1-4, 8, 9; attention 5, 7).

For every checker: the package's model answer and an answer written here independently are
accepted; each typical mistake, written here as a learner would, is rejected with the hint that
names it; the stub gets "not yet", a function that returns None "you returned nothing" (first_fit,
where None is an answer, gets a hint instead), and an exception is reported, not raised.
"""

import math
import time

import pytest
import torch

from paged import exercises as ex
from paged.exercises import answers, core
from paged.exercises import memory as memory_checkers
from paged.text import msg


def stub(*args):
    raise NotImplementedError  # your code here


def nothing(*args):
    pass


def pow2(n):
    return 1 << (n - 1).bit_length()


# ---- chapter 2 ---------------------------------------------------------------------------------
def first_fit(holes, size):
    return next((start for start, length in holes if not length < size), None)


FIRST_FIT_WRONG = {
    "(best fit)": lambda holes, size: min(
        ((n, s) for s, n in holes if n >= size), default=(0, None))[1],
    "returned the last hole": lambda holes, size: max(
        (s for s, n in holes if n >= size), default=None),
    "an exact fit fits too": lambda holes, size: next((s for s, n in holes if n > size), None),
    "position in the list": lambda holes, size: next(
        (i for i, (s, n) in enumerate(holes) if n >= size), None),
    "whole (start, length) pair": lambda holes, size: next(
        ((s, n) for s, n in holes if n >= size), None),
    "gave up at the first hole": lambda holes, size: (
        holes[0][0] if holes and holes[0][1] >= size else None),
    "0 is a real address": lambda holes, size: next((s for s, n in holes if n >= size), 0),
}  # fmt: skip


# ---- chapter 3 ---------------------------------------------------------------------------------
def slot(block_table, block_size, position):
    logical, offset = divmod(position, block_size)
    return block_table[logical] * block_size + offset


def append_slot(table, num_tokens, block_size, free):
    logical, offset = divmod(num_tokens, block_size)
    if logical == len(table):
        table.append(free.pop())
    return table[logical] * block_size + offset


def _append(table, n, bs, free, *, when=None, take=lambda free: free.pop(), keep=True,
            offset=None, logical=False):  # fmt: skip
    """append_slot with one slip, as a learner would write it."""
    needs = (n == len(table) * bs) if when is None else when(table, n, bs)
    new = None
    if needs:
        new = take(free)
        if keep:
            table.append(new)
    if logical:
        return n
    block = new if new is not None else table[-1]
    return block * bs + (n % bs if offset is None else offset(n, bs))


APPEND_WRONG = {
    "a sequence with 0 tokens needs a block": lambda t, n, bs, f: _append(
        t, n, bs, f, when=lambda t, n, bs: n % bs == 0 and n > 0),
    "you wrote it into the full one": lambda t, n, bs, f: _append(
        t, n, bs, f, when=lambda t, n, bs: n > len(t) * bs),
    "one token early": lambda t, n, bs, f: _append(
        t, n, bs, f, when=lambda t, n, bs: n + 1 >= len(t) * bs),
    "num_tokens % block_size": lambda t, n, bs, f: _append(t, n, bs, f, offset=lambda n, bs: n),
    "free.pop(0) takes another": lambda t, n, bs, f: _append(
        t, n, bs, f, take=lambda free: free.pop(0)),
    "append it to table": lambda t, n, bs, f: _append(t, n, bs, f, keep=False),
    "logical position": lambda t, n, bs, f: _append(t, n, bs, f, logical=True),
}  # fmt: skip


def append_touching_free(table, n, bs, free):
    """Right slot and table, but it reorders `free` even when no block is needed."""
    free.insert(0, free.pop()) if free else None
    return append_slot(table, n, bs, free)


# ---- chapter 4 ---------------------------------------------------------------------------------
def breakdown(steps, kv_slots):
    waited = [i for i, (_, w, _) in enumerate(steps) if w > 0]
    chosen = waited or [i for i, (_, _, r) in enumerate(steps) if r > 0]
    names = ("token_states", "reservation", "internal_fragmentation", "external_fragmentation")
    return {k: sum(steps[i][0][c] for i in chosen) / len(chosen) / kv_slots
            for c, k in enumerate(names)}  # fmt: skip


def _mean(rows, kv, divide=None):
    return [sum(u[c] for u, _, _ in rows) / (divide or len(rows)) / kv for c in range(4)]


BREAKDOWN_WRONG = {
    "not over every step": lambda steps, kv: _mean(steps, kv),
    "averaged over every busy step": lambda steps, kv: _mean([s for s in steps if s[2]], kv),
    "idle ones included": lambda steps, kv: _mean([s for s in steps if s[1]] or steps, kv),
    "no waiting step to average": lambda steps, kv: _mean([s for s in steps if s[1]], kv),
    "not slot counts": lambda steps, kv: [kv * x for x in breakdown(steps, kv).values()],
    "divide by the number of steps you averaged": lambda steps, kv: _mean(
        [s for s in steps if s[1]] or [s for s in steps if s[2]], kv, divide=len(steps)),
}  # fmt: skip


# ---- chapter 8 ---------------------------------------------------------------------------------
def write_slot(table, num_tokens, block_size, free, refs):
    logical, offset = divmod(num_tokens, block_size)
    if logical == len(table):
        block = free.pop()
        table.append(block)
        refs[block] = 1
        return block * block_size + offset, None
    last = table[logical]
    if refs[last] == 1:
        return last * block_size + offset, None
    new = free.pop()
    refs[last], refs[new], table[logical] = refs[last] - 1, 1, new
    return new * block_size + offset, (last, new)


def _cow(table, n, bs, free, refs, *, copy_full=False, drop_old=1, new_count=1,
         copy_private=False, swap=False, full_count=1, pair=True):  # fmt: skip
    """write_slot with one slip, as a learner would write it."""
    copied = None
    if table and (refs[table[-1]] > 1 or copy_private) and (n % bs or copy_full):
        old = table[-1]
        table[-1] = free.pop()
        refs[old] -= drop_old
        if new_count:
            refs[table[-1]] = new_count
        copied = (table[-1], old) if swap else (old, table[-1])
    if n == len(table) * bs:
        table.append(free.pop())
        if full_count:
            refs[table[-1]] = full_count
    result = table[-1] * bs + n % bs
    return (result, copied) if pair else result


WRITE_WRONG = {
    "no copy is needed": lambda *a: _cow(*a, copy_full=True),
    "lower its reference count": lambda *a: _cow(*a, drop_old=0),
    "starts at 1, not 2": lambda *a: _cow(*a, new_count=2),
    "give it reference count 1": lambda *a: _cow(*a, new_count=0),
    "copy only when another sequence": lambda *a: _cow(*a, copy_private=True),
    "as (old, new)": lambda *a: _cow(*a, swap=True),
    "taken because the last one is full": lambda *a: _cow(*a, full_count=0),
    "return a pair": lambda *a: _cow(*a, pair=False),
}


def blocks_after_fork(prompt_len, num_samples, block_size):
    return (prompt_len - prompt_len % block_size) // block_size + num_samples


FORK_WRONG = {
    "last sample to write": lambda p, n, bs: math.ceil(p / bs) + n,
    "stored once": lambda p, n, bs: n * math.ceil((p + 1) / bs),
    "each sample takes a new block": lambda p, n, bs: math.ceil(p / bs) + n - 1,
    "a last block of its own": lambda p, n, bs: math.ceil((p + 1) / bs),
}


# ---- chapter 9 ---------------------------------------------------------------------------------
def pick_victims(running, blocks_needed, free_blocks, blocks_held):
    alive, victims, free = list(running), [], free_blocks
    for r in running:
        if r not in alive:  # preempted by an earlier request of this step
            continue
        while blocks_needed[r] > free and r in alive:
            victims.append(alive.pop())
            free += blocks_held[victims[-1]]
        if r in alive:
            free -= blocks_needed[r]
    return victims


def _victims(running, need, free, held, *, pick=lambda alive, r: alive[-1], freed=None,
             consume=True, trigger=None, skip=True):  # fmt: skip
    """pick_victims with one slip, as a learner would write it."""
    alive, out = list(running), []
    for r in running:
        if skip and r not in alive:
            continue
        while alive and (need[r] > free if trigger is None else trigger(need[r], free)):
            v = pick(alive, r)
            alive.remove(v)
            out.append(v)
            free += held[v] if freed is None else freed
            if v == r:
                break
        else:
            free -= need[r] if consume else 0
    return out


VICTIMS_WRONG = {
    "preempted the earliest arrival": lambda *a: _victims(*a, pick=lambda alive, r: alive[0]),
    "need not be the one": lambda *a: _victims(*a, pick=lambda alive, r: r),
    "(all-or-nothing)": lambda *a: _victims(*a, freed=1),
    "one fewer free block": lambda *a: _victims(*a, consume=False),
    "never causes a preemption": lambda *a: _victims(*a, trigger=lambda need, free: free == 0),
    "not preempted twice": lambda *a: _victims(*a, skip=False),
}


SWAP_WRONG = {
    "2 x num_layers transfers": lambda nb, bs, bpt, layers, bw, lat: nb * lat + nb * bs * bpt / bw,
    "fixed latency that every": lambda nb, bs, bpt, layers, bw, lat: nb * bs * bpt / bw,
    "cross PCIe": lambda nb, bs, bpt, layers, bw, lat: nb * 2 * layers * lat,
    "K and V are separate": lambda nb, bs, bpt, layers, bw, lat: nb * layers * lat
    + nb * bs * bpt / bw,
    "bytes cross PCIe once": lambda nb, bs, bpt, layers, bw, lat: 2 * nb * layers
    * (lat + bs * bpt / bw),
}  # fmt: skip


# ---- chapters 5 and 7 (PyTorch) ----------------------------------------------------------------
def gather(cache, block_table_row, seq_len):
    bs = cache.shape[1]
    pos = torch.arange(seq_len)
    slots = block_table_row.long()[pos // bs] * bs + pos % bs
    return cache.flatten(0, 1)[slots]


def _blocks(row, n, bs):
    return row[: math.ceil(n / bs)].long()


GATHER_WRONG = {
    "not in block i": lambda c, row, n: c.flatten(0, 1)[:n],
    "keep the first seq_len": lambda c, row, n: c[_blocks(row, n, c.shape[1])].flatten(0, 1),
    "dropped the partly filled": lambda c, row, n: c[row[: n // c.shape[1]].long()]
    .flatten(0, 1)[:n],
    "not sorted by id": lambda c, row, n: c[_blocks(row, n, c.shape[1]).sort().values]
    .flatten(0, 1)[:n],
    "seq_len can be 0": lambda c, row, n: torch.stack(
        [c[int(row[p // c.shape[1]])][p % c.shape[1]] for p in range(n)]),
}  # fmt: skip


def merge_partitions(parts):
    weights = torch.softmax(torch.stack([lse for _, lse in parts]), dim=0)
    return (weights[:, None] * torch.stack([o for o, _ in parts])).sum(0)


def _weighted(parts, weights, normalise=True):
    total = sum(w * o for w, (o, _) in zip(weights, parts, strict=True))
    return total / sum(weights) if normalise else total


MERGE_WRONG = {
    "averaged the partitions equally": lambda parts: torch.stack([o for o, _ in parts]).mean(0),
    "weighted by lse itself": lambda parts: _weighted(parts, [lse for _, lse in parts]),
    "subtract the largest lse": lambda parts: _weighted(parts, [torch.exp(s) for _, s in parts]),
    "do not add up to 1": lambda parts: _weighted(
        parts, [torch.exp(s - max(x for _, x in parts)) for _, s in parts], normalise=False),
    "largest lse; every partition": lambda parts: max(parts, key=lambda p: float(p[1]))[0],
}  # fmt: skip


def merge_with_python_floats(parts):
    """The max-less merge in Python floats: math.exp raises OverflowError in the hundreds."""
    weights = [math.exp(float(lse)) for _, lse in parts]
    return _weighted(parts, weights)


# name -> (checker, independent right answer, {phrase of the hint: wrong implementation})
CHECKERS = {
    "bytes_per_token": (ex.check_bytes_per_token, lambda n, h, d, b: n * 2 * b * d * h, {
        "counted only one of them": lambda n, h, d, b: n * h * d * b,
        "not bytes": lambda n, h, d, b: 2 * n * h * d,
        "you counted one layer": lambda n, h, d, b: 2 * h * d * b,
        "no factor of 8": lambda n, h, d, b: 2 * n * h * d * b * 8,
    }),
    "pow2_reservation": (
        ex.check_pow2_reservation, lambda p, o, m: min(p + 2 ** math.ceil(math.log2(o)), m), {
            "a true output of 25 reserves 32": lambda p, o, m: min(pow2(p + o), m),
            "(64 → 128)": lambda p, o, m: min(p + (1 << o.bit_length()), m),
            "capped the rounded output alone": lambda p, o, m: p + min(pow2(o), m),
            "you never capped it": lambda p, o, m: p + pow2(o),
            "left out the prompt": lambda p, o, m: min(pow2(o), m),
            "'at most 2x' is a bound": lambda p, o, m: min(p + 2 * o, m),
            "you rounded the output down": lambda p, o, m: min(p + 2 ** int(math.log2(o)), m),
        }),
    "first_fit": (ex.check_first_fit, first_fit, FIRST_FIT_WRONG),
    "slot": (ex.check_slot, slot, {
        "logical position": lambda t, bs, p: p,
        "added the offset to the block id": lambda t, bs, p: t[p // bs] + p % bs,
        "runs past the end of the block": lambda t, bs, p: t[p // bs] * bs + p,
        "one entry per logical block": lambda t, bs, p: t[p] * bs + p % bs,
    }),
    "wasted_slots": (ex.check_wasted_slots, lambda n, bs: -n % bs, {
        "a full last block": lambda n, bs: bs - n % bs,
        "filled slots": lambda n, bs: n % bs,
        "every slot the sequence holds": lambda n, bs: math.ceil(n / bs) * bs,
    }),
    "append_slot": (ex.check_append_slot, append_slot, APPEND_WRONG),
    "breakdown": (ex.check_breakdown, breakdown, BREAKDOWN_WRONG),
    "blocks_after_fork": (ex.check_blocks_after_fork, blocks_after_fork, FORK_WRONG),
    "write_slot": (ex.check_write_slot, write_slot, WRITE_WRONG),
    "pick_victims": (ex.check_pick_victims, pick_victims, VICTIMS_WRONG),
    "swap_time": (ex.check_swap_time,
                  lambda nb, bs, bpt, layers, bw, lat: nb * (2 * layers * lat + bs * bpt / bw),
                  SWAP_WRONG),
    "gather": (ex.check_gather, gather, GATHER_WRONG),
    "merge_partitions": (ex.check_merge_partitions, merge_partitions, MERGE_WRONG),
}  # fmt: skip
MISTAKES = [(name, hint) for name, (_, _, wrong) in CHECKERS.items() for hint in wrong]


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.delenv("PAGED_LANG", raising=False)


def test_every_checker_and_answer_of_these_topics_is_tested():
    from paged.exercises.answers import attention as attention_answers
    from paged.exercises.answers import memory as memory_answers

    checkers = {n.removeprefix("check_") for n in [*memory_checkers.__all__, *ex.attention.__all__]}
    assert checkers == set(CHECKERS)
    assert set(memory_answers.__all__) | set(attention_answers.__all__) == set(CHECKERS)
    assert all(len(wrong) >= 3 for _, _, wrong in CHECKERS.values())


@pytest.mark.parametrize("name", CHECKERS)
def test_model_answer_accepted_quickly_also_as_typed_into_a_chapter(name, capsys):
    check = CHECKERS[name][0]
    start = time.perf_counter()
    assert check(answers.find(name)) is True
    assert time.perf_counter() - start < 5  # simulator-backed ones included; most take ms
    assert capsys.readouterr().out.startswith(f"{name}: correct (")
    namespace = {}  # the solvability test puts this source in place of the chapter's stub
    exec(answers.source(name), namespace)
    assert check(namespace[name]) is True


@pytest.mark.parametrize("name", CHECKERS)
def test_an_answer_written_independently_is_accepted(name, capsys):
    check, right, _ = CHECKERS[name]
    assert check(right) is True, capsys.readouterr().out


@pytest.mark.parametrize(("name", "hint"), MISTAKES, ids=[f"{n}:{h}" for n, h in MISTAKES])
def test_each_typical_mistake_is_rejected_with_the_hint_that_names_it(name, hint, capsys):
    check, _, wrong = CHECKERS[name]
    assert check(wrong[hint]) is False
    out = capsys.readouterr().out
    assert f"{name}: not quite" in out and "  hint: " in out and hint in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize("name", CHECKERS)
def test_the_stub_is_not_yet_and_none_is_nothing(name, capsys):
    check = CHECKERS[name][0]
    assert check(stub) is False
    assert capsys.readouterr().out.startswith(f"{name}: not yet: replace the stub")
    assert check(nothing) is False
    out = capsys.readouterr().out
    if name == "first_fit":  # None means "no hole fits": right for some cases, wrong for others
        assert "not quite" in out and "forget to `return` its start" in out, out
    else:
        assert f"{name}: you returned nothing" in out and "did you forget `return`?" in out, out
        assert "not yet" not in out and "stub" not in out


def test_first_fit_none_is_an_answer_and_zero_is_not_none(capsys):
    assert ex.check_first_fit(first_fit) is True  # returns None where no hole fits
    assert ex.check_first_fit(lambda holes, size: 0) is False
    assert "not quite" in capsys.readouterr().out


def test_an_exception_is_reported_with_its_type_message_and_case(capsys):
    def broken(table, num_tokens, block_size, free):
        raise KeyError("oops")

    assert ex.check_append_slot(broken) is False
    out = capsys.readouterr().out
    assert "append_slot: not quite: for table=[], num_tokens=0" in out
    assert "your function raised KeyError: 'oops'" in out and "Traceback" not in out


def test_append_slot_checks_free_when_no_block_is_needed(capsys):
    assert ex.check_append_slot(append_touching_free) is False
    assert "not quite" in capsys.readouterr().out


def test_merge_without_the_max_fails_on_lse_in_the_hundreds_only(capsys):
    for wrong in (MERGE_WRONG["subtract the largest lse"], merge_with_python_floats):
        assert ex.check_merge_partitions(wrong) is False
        out = capsys.readouterr().out
        assert "lse [85" in out and "subtract the largest lse" in out, out
    parts = [(torch.ones(4), torch.tensor(1.0)), (torch.zeros(4), torch.tensor(2.0))]
    assert torch.allclose(MERGE_WRONG["subtract the largest lse"](parts), merge_partitions(parts))


def test_a_learner_that_mutates_its_arguments_does_not_change_the_cases(capsys):
    def vandal(holes, size):
        holes.clear()

    ex.check_first_fit(vandal)
    ex.check_write_slot(lambda table, n, bs, free, refs: (table.clear(), free.clear()))
    assert ex.check_first_fit(first_fit) and ex.check_write_slot(write_slot)


def test_a_hint_must_explain_every_wrong_answer_not_collide_with_one(capsys):
    mistakes = [(lambda x: 2 * x, msg("you doubled it", "두 배로 했습니다"))]
    cases = [(1,), (2,), (3,)]
    assert core.run_cases("f", lambda x: 2, cases, lambda x: x, mistakes) is False
    out = capsys.readouterr().out  # 2 is 2 * 1 on the failing case, but 3 -> 2 is not doubling
    assert out == "f: not quite: for (1,) you returned 2, expected 1.\n"
    for learner in (lambda x: 2 * x, lambda x: x if x == 1 else 2 * x):  # all, or all it got wrong
        assert core.run_cases("f", learner, cases, lambda x: x, mistakes) is False
        assert "  hint: you doubled it" in capsys.readouterr().out


def test_verdicts_and_hints_speak_korean_in_the_korean_edition(monkeypatch, capsys):
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert ex.check_first_fit(first_fit) is True
    assert capsys.readouterr().out == "first_fit: 정답입니다 (사례 7개).\n"
    assert ex.check_slot(stub) is False
    assert "slot: 아직입니다." in capsys.readouterr().out
    assert ex.check_append_slot(nothing) is False
    assert "아무것도 반환하지 않았습니다" in capsys.readouterr().out
    assert ex.check_pow2_reservation(CHECKERS["pow2_reservation"][2]["(64 → 128)"]) is False
    out = capsys.readouterr().out
    assert "아직 아닙니다" in out and "  힌트: " in out and "2의 거듭제곱" in out, out
