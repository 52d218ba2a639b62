"""Issue 37 item 5: the checkers' cases cover their concept's behaviours, and hints name the slip.

Each wrong answer here was accepted, or got another slip's hint, before its checker grew the
cases or the named mistake it needed: a hash chain that adds (or XORs) the blocks' hashes, a
breakdown that drops the last step, an empty gather of the wrong dtype, first_fit reading a
hole's length as its end, write_slot's reference-count slips. Each is rejected on every seed
tried, with the hint written for it; the model answers pass on the same seeds, and a right merge
in float64 passes too (its spec names no dtype).
"""

import math

import pytest
import torch

from paged import exercises as ex
from paged.exercises import answers, core, prefix, sizes
from paged.exercises import attention as attention_checker
from paged.exercises import decode as decode_checker
from paged.exercises import merge as merge_checker
from paged.exercises.slips import SLIPS

SEEDS = (1, 2, 3, 4, 5)


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.delenv("PAGED_LANG", raising=False)


def verdicts(capsys, check, fn, seeds=SEEDS):
    """(ok, printed) for each seed."""
    out = []
    for seed in seeds:
        ok = check(fn, seed=seed)
        out.append((ok, capsys.readouterr().out))
    return out


def rejected_with(capsys, check, fn, name, phrase):
    for ok, out in verdicts(capsys, check, fn):
        assert ok is False, out
        assert out.startswith(f"{name}: not quite") and phrase in out, out


# ---- block_hashes: reordered and repeated blocks ------------------------------------------------
def adding_chain(token_ids, block_size):
    h, out = 0, []
    for i in range(len(token_ids) // block_size):
        h = h + hash(tuple(token_ids[i * block_size : (i + 1) * block_size]))
        out.append(h)
    return out


def xor_chain(token_ids, block_size):
    h, out = 0, []
    for i in range(len(token_ids) // block_size):
        h ^= hash(tuple(token_ids[i * block_size : (i + 1) * block_size]))
        out.append(h)
    return out


def parent_chain(token_ids, block_size):
    parent, out = None, []
    for i in range(len(token_ids) // block_size):
        parent = hash((parent, tuple(token_ids[i * block_size : (i + 1) * block_size])))
        out.append(parent)
    return out


@pytest.mark.parametrize(
    ("fn", "phrase"),
    [
        (adding_chain, "the same blocks in another order got equal hashes from the block"),
        (xor_chain, "a block seen twice cancels out"),
    ],
    ids=["adds", "xors"],
)
def test_a_chain_blind_to_block_order_is_rejected_with_its_hint(capsys, fn, phrase):
    rejected_with(capsys, ex.check_block_hashes, fn, "block_hashes", phrase)


def test_the_fixed_cases_hold_reordered_and_repeated_blocks():
    for wrong in (adding_chain, xor_chain):
        assert any(
            prefix.observe(wrong, case)[1] != prefix.truth(*case) for case in prefix.CASES
        ), wrong.__name__
    # without the two new cases, the adding chain passed every fixed case
    assert all(prefix.observe(adding_chain, c)[1] == prefix.truth(*c) for c in prefix.CASES[:-2])


def test_right_chains_still_pass(capsys):
    for fn in (parent_chain, answers.find("block_hashes")):
        assert all(ok for ok, _ in verdicts(capsys, ex.check_block_hashes, fn))


# ---- breakdown: steps that end with a waiting request ------------------------------------------
def breakdown(steps, kv_slots):
    chosen = [u for u, waiting, _ in steps if waiting] or [u for u, _, run in steps if run]
    return [sum(u[c] for u in chosen) / (len(chosen) * kv_slots) for c in range(4)]


def breakdown_without_last_step(steps, kv_slots):
    return breakdown(steps[: len(steps) - 1], kv_slots)


def test_dropping_the_last_step_is_rejected_with_its_hint(capsys):
    rejected_with(
        capsys,
        ex.check_breakdown,
        breakdown_without_last_step,
        "breakdown",
        "the last step of `steps` never reaches your average",
    )


def test_some_fixed_traces_end_with_a_waiting_or_preempted_request():
    pairs = sizes._breakdown_pairs()
    assert all(steps[-1][1] == 0 and steps[-1][2] == 0 for (steps, _), _ in pairs[:4])  # idle
    assert sum(steps[-1][1] > 0 for (steps, _), _ in pairs) >= 2
    # a rotation keeps the answer: an average does not depend on the order of its steps
    first, rotated = pairs[0], pairs[4]
    assert first[1] == rotated[1] and first[0][0] != rotated[0][0]
    assert sorted(map(repr, first[0][0])) == sorted(map(repr, rotated[0][0]))


def test_right_breakdowns_still_pass(capsys):
    for fn in (breakdown, answers.find("breakdown")):
        assert all(ok for ok, _ in verdicts(capsys, ex.check_breakdown, fn))


# ---- gather: empty and one-token sequences, dtype checked on every seed -----------------------
def gather(cache, row, seq_len):
    used = -(-seq_len // cache.shape[1])
    return cache[row[:used].long()].flatten(0, 1)[:seq_len]


def gather_empty_in_float32(cache, row, seq_len):
    if seq_len == 0:
        return torch.zeros(0, cache.shape[2], cache.shape[3])  # float32, whatever the cache
    return gather(cache, row, seq_len)


def test_an_empty_gather_of_the_wrong_dtype_is_rejected_on_every_seed(capsys):
    rejected_with(
        capsys,
        ex.check_gather,
        gather_empty_in_float32,
        "gather",
        "seq_len 0 the values are right, but the answer is a tensor of dtype torch.float32; its "
        "input is torch.float16",
    )


def test_a_squeezed_one_token_gather_is_rejected(capsys):
    squeezed = lambda c, row, n: gather(c, row, n).squeeze()  # noqa: E731
    rejected_with(capsys, ex.check_gather, squeezed, "gather", "seq_len 1 you returned")


def test_the_gather_and_decode_fixed_cases_hold_short_half_precision_sequences():
    gathers = attention_checker._gather_cases()
    assert {(c.dtype, n) for c, _, n in gathers} >= {
        (torch.float16, 0),
        (torch.bfloat16, 1),
    }
    decodes = decode_checker._fixed_cases()
    assert any(k.dtype != torch.float32 and n == 1 for _, k, _, _, n, _, _ in decodes)


def test_right_gathers_still_pass(capsys):
    for fn in (gather, answers.find("gather")):
        assert all(ok for ok, _ in verdicts(capsys, ex.check_gather, fn))


# ---- merge_partitions: judged by value ---------------------------------------------------------
def merge_in_float64(parts):
    lses = [float(lse) for _, lse in parts]
    top = max(lses)
    weights = [math.exp(x - top) if math.isfinite(x) else 0.0 for x in lses]
    total = sum(w * out.double() for w, (out, _) in zip(weights, parts, strict=True))
    return total / sum(weights)  # a float64 tensor


def test_a_right_float64_merge_is_accepted(capsys):
    assert merge_in_float64(merge_checker._merge_pairs()[0][0]).dtype == torch.float64
    for ok, out in verdicts(capsys, ex.check_merge_partitions, merge_in_float64):
        assert ok is True and out.startswith("merge_partitions: correct"), out


def test_a_wrong_float64_merge_is_still_rejected(capsys):
    halved = lambda parts: merge_in_float64(parts) / 2  # noqa: E731
    rejected_with(capsys, ex.check_merge_partitions, halved, "merge_partitions", "you returned")


# ---- hints that name the slip they match --------------------------------------------------------
def first_fit_length_as_end(holes, size):
    return next((start for start, end in holes if end - start >= size), None)


def test_first_fit_reading_a_length_as_an_end_gets_its_own_hint(capsys):
    hint = str(SLIPS["first_fit.length_as_end"][1])
    for ok, out in verdicts(capsys, ex.check_first_fit, first_fit_length_as_end):
        assert ok is False and f"hint: {hint}" in out, out
        assert "forget to `return`" not in out, out


def _write_slot(old_rule="lower", leave_full=False):
    """write_slot as a learner writes it, with one slip in the reference counts."""

    def write(table, num_tokens, block_size, free, refs):
        copied = None
        if leave_full and table and num_tokens % block_size == 0 and refs[table[-1]] > 1:
            refs[table[-1]] -= 1
        if num_tokens == len(table) * block_size:
            table.append(free.pop())
            refs[table[-1]] = 1
        elif refs[table[-1]] > 1:
            old, new = table[-1], free.pop()
            if old_rule == "lower":
                refs[old] -= 1
            elif old_rule == "one":
                refs[old] = 1
            else:
                del refs[old]
            refs[new] = 1
            table[-1] = new
            copied = (old, new)
        return table[-1] * block_size + num_tokens % block_size, copied

    return write


@pytest.mark.parametrize(
    ("learner", "phrase"),
    [
        (_write_slot(old_rule="one"), "wrong when three do: after the copy the old block counts"),
        (_write_slot(old_rule="delete"), "the old block counts 0 holders (or left refs)"),
        (_write_slot(leave_full=True), "when the shared last block is full, its count went down"),
    ],
    ids=["old count set to 1", "old count dropped", "full shared block lowered"],
)
def test_write_slot_reference_count_slips_get_their_hint(capsys, learner, phrase):
    rejected_with(capsys, ex.check_write_slot, learner, "write_slot", phrase)


def test_the_new_hints_are_in_the_catalogues():
    hints = [str(h) for _, h in core.slips(ex.SPECS["write_slot"])]
    assert sum("after the copy the old block counts" in h for h in hints) == 2
    assert any("the last step of `steps`" in str(h) for _, h in core.slips(ex.SPECS["breakdown"]))
    assert any(
        "a block seen twice cancels out" in str(h) for _, h in core.slips(ex.SPECS["block_hashes"])
    )


def test_right_write_slots_still_pass(capsys):
    for fn in (_write_slot(), answers.find("write_slot")):
        assert all(ok for ok, _ in verdicts(capsys, ex.check_write_slot, fn))


def test_the_new_hints_speak_korean(capsys, monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert ex.check_block_hashes(adding_chain, seed=1) is False
    assert "힌트: 같은 블록들을 다른 순서로" in capsys.readouterr().out
    assert ex.check_breakdown(breakdown_without_last_step, seed=1) is False
    assert "마지막 단계가 평균에 들어가지 않습니다" in capsys.readouterr().out
    assert ex.check_first_fit(first_fit_length_as_end, seed=1) is False
    assert "그 수는 구멍의 길이입니다" in capsys.readouterr().out
    assert ex.check_write_slot(_write_slot(old_rule="one"), seed=1) is False
    assert "그 블록을 가진 시퀀스는 아직 둘입니다" in capsys.readouterr().out
