"""The prefix-caching exercise of chapter 11 (`block_hashes`): its checker, answer and mistakes.

The checker compares which hashes are equal, not their values: the model answer (the library's
`hash_block`) and answers hashing with Python's own `hash` are both accepted (the typical mistakes
are the spec's slips, each rejected with its hint in test_exercise_specs.py); a failing
random case prints its seed and `seed=` draws it again; the texts speak Korean in the Korean
edition.
"""

import re

import pytest

from paged import prefix_cache
from paged.exercises import check_block_hashes
from paged.exercises import prefix as checker
from paged.exercises.answers import prefix as prefix_answers
from paged.exercises.engine import core
from paged.text import Message

pytestmark = pytest.mark.usefixtures("english")  # conftest.py


def builtin_hash(token_ids, block_size):
    """Another valid style: Python's hash of (parent, block), a while loop, a tuple back."""
    out, parent, start = [], None, 0
    while start + block_size <= len(token_ids):
        parent = hash((parent, tuple(token_ids[start : start + block_size])))
        out.append(parent)
        start += block_size
    return tuple(out)


def whole_prefix(token_ids, block_size):
    """The prefix itself as the key: no parent, but it names the whole prefix, so it is valid."""
    n = len(token_ids) // block_size
    return [tuple(token_ids[: (i + 1) * block_size]) for i in range(n)]


@pytest.mark.parametrize(
    "fn",
    [prefix_answers.block_hashes, builtin_hash, whole_prefix],
    ids=["model", "builtin-hash", "whole-prefix"],
)
def test_right_answers_are_accepted_on_every_seed(verdict, fn):
    for seed in range(1, 11):
        ok, out = verdict(check_block_hashes, fn, seed=seed)
        assert ok is True, out
        assert out.startswith("block_hashes: correct (")


def slip(phrase):
    """The spec's slip whose hint says `phrase` (the typical mistakes live in the catalogue)."""
    return next(f for f, h in core.slips(checker.BLOCK_HASHES) if phrase in h.en)


def mutates(token_ids, block_size):
    while len(token_ids) % block_size:
        token_ids.pop()  # drop the partial block, in the caller's list
    return builtin_hash(token_ids, block_size)


def calls_the_library(token_ids, block_size):
    return prefix_cache.block_hashes(token_ids, block_size)


def calls_the_answer(token_ids, block_size):
    return prefix_answers.block_hashes(token_ids, block_size)


WRONG = {  # not slips: the engine's classes of wrong answer, seen from this exercise
    "mutates its input": (mutates, "changed its argument `token_ids`"),
    "calls the library": (calls_the_library, "calls paged.prefix_cache.block_hashes"),
    "calls the model answer": (calls_the_answer, "calls paged.exercises.solution"),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_changed_argument_and_a_library_call_are_named(verdict, name):
    fn, phrase = WRONG[name]
    ok, out = verdict(check_block_hashes, fn, seed=7)
    assert ok is False
    assert out.startswith("block_hashes: not quite") and phrase in out, out


def test_the_hint_names_the_symptom_not_the_recipe(capsys):
    """No hint spells the fix out: none names hash_block or the parent's hash as code."""
    for m in [*(h for _, h in core.slips(checker.BLOCK_HASHES)), *(h for _, h in checker.SYMPTOMS)]:
        assert "hash_block" not in m.en and "parent" not in m.en, m.en


def test_a_failing_fixed_case_shows_the_pattern_of_equal_hashes(verdict):
    ok, out = verdict(check_block_hashes, slip("name its whole prefix"))
    assert ok is False
    assert (
        "for token_ids=[5, 5, 5, 5], block_size=2 you returned [A, A] (the same letter: the "
        "same hash), expected [A, B]." in out
    )
    assert "seed=" not in out  # a teaching case: no seed to repeat


def test_a_failing_random_case_prints_its_seed_and_seed_draws_it_again(verdict):
    def wrong_for_three(token_ids, block_size):  # the fixed cases never use block_size 3
        return [] if block_size == 3 else builtin_hash(token_ids, block_size)

    assert all(bs != 3 for _, bs in checker.CASES)
    ok, out = verdict(check_block_hashes, wrong_for_three)
    assert ok is False and "block_size=3" in out
    seed = int(re.search(r"check_block_hashes\(your_function, seed=(\d+)\)", out).group(1))
    ok_again, again = verdict(check_block_hashes, wrong_for_three, seed=seed)
    assert ok_again is False and again == out


def test_other_wrong_answers_get_a_symptom(verdict):
    def summed(token_ids, block_size):  # a hash that ignores the order inside a block
        out, h = [], 0
        for i in range(len(token_ids) // block_size):
            h = h * 1_000_003 + sum(token_ids[i * block_size : (i + 1) * block_size])
            out.append(h)
        return out

    def with_length(token_ids, block_size):  # depends on the tokens after the block
        out, h = [], len(token_ids)
        for i in range(len(token_ids) // block_size):
            h = hash((h, tuple(token_ids[i * block_size : (i + 1) * block_size])))
            out.append(h)
        return out

    def unhashable(token_ids, block_size):
        return [list(h) for h in whole_prefix(token_ids, block_size)]

    _, out = verdict(check_block_hashes, summed, seed=1)
    assert "got equal hashes: a request would find a block that is not its own" in out
    _, out = verdict(check_block_hashes, with_length, seed=1)
    assert "the same prefix got different hashes" in out
    _, out = verdict(check_block_hashes, unhashable, seed=1)
    assert "the values are right, but the hash [10, 11, 12, 13] is a list" in out


def test_the_truth_is_the_library_s_pattern():
    prompts = ([1, 2, 3, 4, 1, 2], [9, 2, 3, 4, 1, 2], [1, 2, 3])
    want = checker.truth(prompts, 2)
    assert str(want) == "[A, B, C] and [D, E, F] and [A]"
    lib = [prefix_cache.block_hashes(p, 2) for p in prompts]
    assert want == checker.pattern(lib) and want == checker.pattern(
        [builtin_hash(p, 2) for p in prompts]
    )


def test_the_checker_speaks_korean(verdict, monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    ok, out = verdict(check_block_hashes, slip("partly filled block a hash too"))
    assert ok is False
    assert "반환값은 [A, B, C] (같은 글자는 같은 해시), 기대한 값은 [A, B]입니다." in out
    assert "힌트: 덜 찬 마지막 블록에도 해시를 주었습니다." in out
    texts = [v for v in vars(checker).values() if isinstance(v, Message)]
    texts += [h for _, h in (*core.slips(checker.BLOCK_HASHES), *checker.SYMPTOMS)]
    assert len(texts) > 10
    for m in texts:
        assert not re.search(r"\((?:을|를|이|가|은|는|와|과)\)", m.ko), m.ko
