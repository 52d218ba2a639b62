"""The checking loop every plain-Python checker shares: cases, known mistakes, friendly verdicts.

`run_cases` calls the learner's function on every hidden case, each call on fresh copies of the
arguments, and compares what it gives with the library's answer. Its verdicts, in the edition's
language (`paged.text`):
- "correct" when every case agrees;
- "not yet" while the stub still raises NotImplementedError;
- "you returned nothing" when it returns None where an answer is due (unless None is a legitimate
  answer: `none_ok=True`);
- "not quite" with the first case that disagrees, or the exception raised there (its type and
  message, no traceback), and a hint when a known mistake explains it.

A mistake is a wrong implementation paired with its hint. The hint is printed when the wrong
implementation reproduces every wrong answer the learner's function gave (the same value, or the
same kind of exception, on each case it got wrong); one that agrees on every case is preferred.
So a hint names the slip the learner made, not one that merely collides with it on one case.
"""

from __future__ import annotations

import copy
import operator
from dataclasses import dataclass

from ..text import msg

CORRECT = msg("{name}: correct ({n} cases).", "{name}: 정답입니다 (사례 {n}개).")
NOT_YET = msg(
    "{name}: not yet: replace the stub's `raise NotImplementedError` with your code and run the "
    "cell again.",
    "{name}: 아직입니다. 스텁의 `raise NotImplementedError`를 여러분의 코드로 바꾸고 셀을 다시 "
    "실행하세요.",
)
NOTHING = msg(
    "{name}: you returned nothing — did you forget `return`? (for {case})",
    "{name}: 아무것도 반환하지 않았습니다. `return`을 빠뜨리지 않았나요? ({case})",
)
NOT_QUITE = msg(
    "{name}: not quite: for {case} you returned {got}, expected {want}.",
    "{name}: 아직 아닙니다. {case}일 때 {got}을(를) 반환했지만, 기대한 값은 {want}입니다.",
)
RAISED = msg(
    "{name}: not quite: for {case} your function raised {error}.",
    "{name}: 아직 아닙니다. {case}일 때 함수에서 예외가 발생했습니다: {error}",
)
HINT = msg("  hint: {hint}", "  힌트: {hint}")


@dataclass(frozen=True)
class Raised:
    """What a call ended with when it raised instead of returning."""

    error: Exception

    def __str__(self) -> str:
        text = " ".join(str(self.error).split())
        text = text if len(text) <= 200 else text[:197] + "..."
        return f"{type(self.error).__name__}: {text}" if text else type(self.error).__name__


def plain(fn, args):
    """Call fn(*args); return (what it returned, what is compared): here the same thing."""
    raw = fn(*args)
    return raw, raw


def named(*names: str):
    """A `describe` that names each argument: "prompt_len=40, output_len=25"."""

    def describe(args) -> str:
        return ", ".join(f"{n}={short(a, 80)}" for n, a in zip(names, args, strict=True))

    return describe


def same_sequence(got, want) -> bool:
    """A `same` for answers that are an ordered list of ids: a list or a tuple, in that order."""
    return isinstance(got, list | tuple) and list(got) == want


def by_case(pairs):
    """(cases, expected) from [(args, answer)], for answers read off a state built with the case."""
    cases = [args for args, _ in pairs]
    answers = {repr(args): answer for args, answer in pairs}  # repr: tensors compare elementwise
    if len(answers) != len(cases):
        raise ValueError("two cases have the same arguments")

    def expected(*args):
        return answers[repr(args)]

    return cases, expected


def run_cases(
    name: str,
    fn,
    cases,
    expected,
    mistakes=(),
    same=operator.eq,
    describe=repr,
    *,
    observe=plain,
    show=None,
    none_ok: bool = False,
) -> bool:
    """Check fn against `expected` on every case; `mistakes` are (wrong_fn, hint) pairs.

    `observe(fn, args)` calls fn and returns (what it returned, what is compared), so a checker
    can compare mutated arguments too; `expected(*args)` gives the compared form directly.
    `same(got, want)` decides equality, `describe(args)` names a case and `show(value)` a value
    in messages. With `none_ok`, None is an answer like any other.
    """
    show = show or short
    outcomes = []
    for args in cases:
        try:
            outcomes.append(observe(fn, copy.deepcopy(args)))
        except NotImplementedError:
            print(NOT_YET.format(name=name))
            return False
        except Exception as exc:  # the learner's bug: report it, not a traceback
            outcomes.append(Raised(exc))
    got = [o if isinstance(o, Raised) else o[1] for o in outcomes]
    wants = [expected(*copy.deepcopy(args)) for args in cases]
    wrong = [i for i in range(len(cases)) if not _agree(same, got[i], wants[i])]
    if not wrong:
        print(CORRECT.format(name=name, n=len(cases)))
        return True
    i = wrong[0]
    case = describe(cases[i])
    if isinstance(outcomes[i], Raised):
        print(RAISED.format(name=name, case=case, error=outcomes[i]))
    elif outcomes[i][0] is None and not none_ok:
        print(NOTHING.format(name=name, case=case))
        return False
    else:
        print(NOT_QUITE.format(name=name, case=case, got=show(got[i]), want=show(wants[i])))
    hint = _hint(got, wrong, cases, mistakes, same, observe)
    if hint is not None:
        print(HINT.format(hint=hint))
    return False


def _agree(same, a, b) -> bool:
    """Two outcomes agree: the same kind of exception, or values that `same` calls equal."""
    if isinstance(a, Raised) or isinstance(b, Raised):
        return isinstance(a, Raised) and isinstance(b, Raised) and type(a.error) is type(b.error)
    try:
        return bool(same(a, b))
    except Exception:  # a value `same` cannot compare (a string for a tensor, say)
        return False


def _hint(got, wrong, cases, mistakes, same, observe):
    """The hint of a mistake that gives every wrong answer the learner gave (module docstring)."""
    explains = []
    for mistake, hint in mistakes:
        agree = []
        for args, mine in zip(cases, got, strict=True):
            try:
                theirs = observe(mistake, copy.deepcopy(args))[1]
            except Exception as exc:
                theirs = Raised(exc)
            agree.append(_agree(same, mine, theirs))
        if all(agree):
            return hint
        if all(agree[i] for i in wrong):
            explains.append(hint)
    return explains[0] if explains else None


def short(value, limit: int = 120) -> str:
    """repr, cut to `limit` characters (tensors can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
