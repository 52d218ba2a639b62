"""Every exercise is a spec run by one engine: what holds for one holds for all.

For each plain-Python spec in the registry (`paged.exercises.SPECS`): the model answer passes,
also as `solution` prints it; a stub still raising NotImplementedError gets "not yet", a function
returning None "you returned nothing"; each named slip, handed in as the learner's function, is
rejected with its own hint (the typical mistakes the chapters' tests once wrote out, each the same
wrong answer as a slip); a seed draws the same random cases again.
Triton puzzles go through the same entry point (`core.check` hands a `KernelSpec` to the kernel
runner); their verdicts are tested in test_exercises_triton.py.
"""

import dataclasses
import random
from collections import deque

import pytest
import torch

from paged import exercises as ex
from paged.exercises import answers
from paged.exercises.engine import core
from paged.exercises.engine.kernel_runner import KernelSpec
from paged.exercises.engine.verdicts import HINT, NOT_A_KERNEL, NOT_YET
from paged.exercises.slips import SLIPS as SLIPS_BY_NAME
from paged.text import msg

pytestmark = pytest.mark.usefixtures("english")  # conftest.py

PLAIN = sorted(n for n, s in ex.SPECS.items() if isinstance(s, core.Spec))
SLIPS = [(n, i) for n in PLAIN for i in range(len(core.slips(ex.SPECS[n])))]


def test_every_checker_is_a_spec_in_the_registry():
    checkers = [n for n in ex.__all__ if n.startswith("check_")]
    assert len(checkers) == len(ex.SPECS) >= 27
    for name in checkers:
        spec = getattr(ex, name).spec
        assert isinstance(spec, core.Spec | KernelSpec) and ex.SPECS[spec.name] is spec
        assert name == f"check_{spec.name}" and getattr(ex, name).__doc__


def test_every_spec_picks_its_slips_by_name_from_the_catalogue():
    picked = [s for n in PLAIN for s in ex.SPECS[n].slips]
    assert all(isinstance(s, str) for s in picked)  # named once, in slips/, by concept
    assert sorted(picked) == sorted(SLIPS_BY_NAME)  # each picked once, none left unused


@pytest.mark.parametrize("name", PLAIN)
def test_the_model_answer_passes_also_as_typed_into_a_chapter(name, capsys):
    assert core.check(ex.SPECS[name], answers.find(name), seed=1) is True
    assert capsys.readouterr().out.startswith(f"{name}: correct (")
    ex.solution(name)
    printed = capsys.readouterr().out
    assert printed.startswith(f"def {name}(")
    namespace = {}  # the solvability test puts this source in place of the chapter's stub
    exec(printed, namespace)
    assert core.check(ex.SPECS[name], namespace[name], seed=2) is True


@pytest.mark.parametrize("name", PLAIN)
def test_a_stub_gets_not_yet(name, capsys):
    def stub(*args):
        raise NotImplementedError

    assert core.check(ex.SPECS[name], stub) is False
    assert capsys.readouterr().out == NOT_YET.format(name=name) + "\n"


@pytest.mark.parametrize("name", PLAIN)
def test_a_not_implemented_error_from_deeper_down_is_no_stub(name, capsys):
    def helper():
        raise NotImplementedError("a torch operator the guard has no rule for")

    def answer(*args):
        return helper()

    assert core.check(ex.SPECS[name], answer, seed=1) is False
    out = capsys.readouterr().out
    assert "not yet" not in out and "raised NotImplementedError: a torch operator" in out, out


@pytest.mark.parametrize("name", [n for n in PLAIN if not ex.SPECS[n].none_ok])
def test_none_is_nothing(name, capsys):
    assert core.check(ex.SPECS[name], lambda *args: None, seed=1) is False
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: you returned nothing — did you forget `return`? (for "), out


@pytest.mark.parametrize(("name", "i"), SLIPS)
def test_each_slip_is_rejected_with_its_own_hint(name, i, capsys):
    spec = dataclasses.replace(ex.SPECS[name], forbid=())  # a slip may use the library's helpers
    wrong, hint = core.slips(spec)[i]
    assert core.check(spec, wrong, seed=1) is False
    assert HINT.format(hint=hint) in capsys.readouterr().out


@pytest.mark.parametrize("name", [n for n in PLAIN if ex.SPECS[n].draw is not None])
def test_a_seed_draws_the_same_cases_again(name):
    draw = ex.SPECS[name].draw
    assert repr(draw(random.Random(7))) == repr(draw(random.Random(7)))


@pytest.mark.parametrize(
    "name", sorted(n for n, s in ex.SPECS.items() if isinstance(s, KernelSpec))
)
def test_a_kernel_spec_goes_through_the_same_entry_point(name, capsys):
    def not_a_kernel(*args):
        raise NotImplementedError

    assert core.check(ex.SPECS[name], not_a_kernel) is False
    assert capsys.readouterr().out == NOT_A_KERNEL.format(name=name, got="function") + "\n"


# ---- the engine itself, on specs made here ----------------------------------------------------
def _check(fn, cases, slips=(), **kw):
    return core.check(core.Spec("f", cases=cases, answer=lambda x: x, slips=slips, **kw), fn)


def test_a_hint_must_explain_every_wrong_answer_not_collide_with_one(capsys):
    slips = [(lambda x: 2 * x, msg("you doubled it", "두 배로 했습니다"))]
    cases = [(1,), (2,), (3,)]
    assert _check(lambda x: 2, cases, slips) is False
    out = capsys.readouterr().out  # 2 is 2 * 1 on the failing case, but 3 -> 2 is not doubling
    assert out == "f: not quite: for (1,) you returned 2, expected 1.\n"
    for learner in (lambda x: 2 * x, lambda x: x if x == 1 else 2 * x):  # all, or all it got wrong
        assert _check(learner, cases, slips) is False
        assert "  hint: you doubled it" in capsys.readouterr().out


def test_one_wrong_case_is_no_evidence_for_a_slip_that_differs_elsewhere(capsys):
    slips = [(lambda x: 2 * x, msg("you doubled it", "두 배로 했습니다"))]
    learner = lambda x: 2 if x == 1 else x  # noqa: E731  -- wrong on (1,) alone
    assert _check(learner, [(1,), (2,), (3,)], slips) is False  # right on (2,), where 2 * 2 is not
    assert "hint" not in capsys.readouterr().out  # 2 * 1 == 2 on (1,): a coincidence, not the slip


def test_a_near_miss_takes_no_hint_from_a_slip_that_is_right_there(capsys):
    near = lambda got, want: abs(got - want) <= 0.1  # noqa: E731  -- a tolerance, not ==
    slips = [(lambda x: x + 0.08, msg("you added a bit", "조금 더했습니다"))]
    assert _check(lambda x: x + 0.15, [(1.0,)], slips, same=near) is False
    assert "hint" not in capsys.readouterr().out  # 1.15 agrees with 1.08, and 1.08 is right


def test_a_tolerance_can_depend_on_the_case(capsys):
    loose = {(1.0,): 0.01, (1000.0,): 1.0}

    def same_for(args):
        return lambda got, want: abs(got - want) <= loose[args]

    learner = lambda x: x * (1 + 1e-4)  # noqa: E731  -- off by 1e-4 of the value
    assert _check(learner, list(loose), same_for=same_for) is True
    assert _check(lambda x: x + 0.5, list(loose), same_for=same_for) is False
    assert "for (1.0,)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("learner", "words"),
    [
        (lambda ids: list(reversed(ids)), "the right items, in another order"),
        (lambda ids: deque(reversed(ids)), "the right items, in another order"),  # a deque will do
        (lambda ids: ids[:-1], "the start of the expected one, and stops too early"),
        (lambda ids: (*ids, 9), "begins with the expected one, and goes on past its end"),
        (lambda ids: [ids[0], 9, *ids[1:-1]], "missing: [3]; not expected: [9]."),
        (lambda ids: [7 * i for i in ids], "times 7, the same factor"),
        # what the answers that returned share, when another case raised
        (lambda ids: ids[::-1] if len(ids) > 2 else 1 / 0, "the right items, in another order"),
    ],
)
def test_the_engine_names_what_wrong_lists_of_ids_share(learner, words, capsys):
    cases = [([1, 2, 3],), ([4, 5, 6, 3],), ([8, 2],)]
    assert core.check(core.Spec("f", cases=cases, answer=list), learner) is False
    hint = capsys.readouterr().out.split("\n  hint: ")[1]
    assert words in hint, hint


@pytest.mark.parametrize(
    ("learner", "words"),
    [
        (lambda t: t * float(t[0, 0] + 1), "off by a constant factor in each case"),
        (lambda t: t[None], "shape is (1, 2, 3); the expected one's is (2, 3)"),
        (lambda t: t / (t - t), "NaN or inf where the answer is finite"),
    ],
)
def test_the_engine_names_what_wrong_tensors_share(learner, words, capsys):
    cases = [(torch.arange(1.0, 7.0).reshape(2, 3),), (torch.full((2, 3), 2.0),)]
    same = lambda got, want: bool(torch.equal(got, want))  # noqa: E731
    spec = core.Spec("f", cases=cases, answer=torch.Tensor.clone, same=same)
    assert core.check(spec, learner) is False
    hint = capsys.readouterr().out.split("\n  hint: ")[1]
    assert words in hint, hint


@pytest.mark.parametrize(
    ("learner", "words"),
    [
        (lambda xs: (sum(xs), xs[::-1]), "right in every case: the sum; in the items, the right"),
        (lambda xs: (sum(xs), xs[:1]), "the sum; in the items, each wrong answer is the start"),
        (
            lambda xs: (sum(xs) + 1, xs),
            "the items; in the sum, every wrong answer is the expected one +1",
        ),
        (lambda xs: (-sum(xs), xs[1:]), None),  # no part right: no word of parts
    ],
)
def test_the_engine_names_which_parts_of_a_record_are_right(learner, words, capsys):
    parts = (msg("the sum", "합"), msg("the items", "항목"))
    cases = [([1, 2, 3],), ([4, 5],), ([7, 8, 9, 6],)]
    spec = core.Spec("f", cases=cases, answer=lambda xs: (sum(xs), xs), parts=parts)
    assert core.check(spec, learner) is False
    out = capsys.readouterr().out
    if words is None:
        assert "not quite" in out and "right in every case" not in out, out
    else:
        assert words in out, out


def test_another_exception_than_the_expected_one_is_named_beside_it(capsys):
    def answer(n):
        if n < 0:
            raise ValueError(f"n={n} < 0")
        return n

    def learner(n):
        if n < 0:
            raise AssertionError("negative")
        return n

    spec = core.Spec(
        "f", cases=[(1,), (-1,)], answer=lambda n: core.Raised(ValueError()) if n < 0 else n
    )
    assert core.check(spec, learner) is False
    out = capsys.readouterr().out
    assert "raised AssertionError: negative, where ValueError is expected" in out, out
    assert core.check(spec, answer) is True
