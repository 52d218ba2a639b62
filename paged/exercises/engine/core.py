"""One engine for every checker: an exercise is a `Spec` (data), `check(spec, fn)` runs it.

A chapter's checker is `check_x = checker(SPEC)`: `check_x(fn, seed=None)` is `check(SPEC, fn,
seed)`; a Triton puzzle's spec (`kernel_runner.KernelSpec`) goes to the kernel runner. For a plain-Python spec, `check` calls the learner's function on the spec's
fixed teaching cases and on random cases drawn for this call (`draw(rng)`, seeded: a fresh seed
per call, printed with a failing random case; `seed=` draws the same ones again), and compares
what it gives with the library's answer, computed before the call. Around each call:
- the arguments are the function's own copies, snapshotted before (`contract.snapshot`): an
  argument the spec does not let it change (`mutable`) must come back as it went in;
- what the exercise asks the learner to write (library functions, whole modules, torch
  operators: `forbid`) and the model answers raise `guard.LibraryCall`; a call the function
  catches itself counts too;
- once every value is right, `contract(raw, args)` says whether the answer has the type the
  spec names (an int, the input's dtype): right values of the wrong type are "not quite" too.
Its verdicts, in the edition's language (`paged.text`):
- "correct" when every case agrees;
- "not yet" while the stub still raises NotImplementedError;
- "you returned nothing" when it returns None where an answer is due (unless None is a legitimate
  answer: `none_ok=True`);
- "not quite" with the first case that disagrees, or the exception raised there (its type and
  message, no traceback), and a hint when a known mistake explains it.

A slip (named once in the `slips` catalogue, or given by the spec) is a wrong implementation
paired with its hint. The hint is printed when the wrong implementation reproduces every wrong
answer the learner's function gave (the same value, or the same kind of exception, on each case
it got wrong); one that agrees on every case is preferred, and one that agrees only where the
learner is wrong needs two such cases, not all of them exceptions (one alone, or the same
exception alone, is a coincidence). So a hint names the slip the learner made, not one that
merely collides with it on one case.
When none does, the exercise's `symptoms` (predicate over the wrong (got, want, args) triples,
hint), then the engine's own (`verdicts.plain_symptom`: another type; items in another order, cut
short, run on, or other items; all zero, one factor or one offset on every case) may say what the
output got wrong, never how to fix it.
"""

from __future__ import annotations

import copy
import operator
import random
from collections.abc import Callable
from dataclasses import dataclass

from ..slips import SLIPS
from . import workspace
from .contract import BREAKS, CHANGED, changed, short, snapshot
from .guard import CALLED, LibraryCall, answer_targets, forbidden
from .verdicts import (
    CORRECT,
    HINT,
    NOT_QUITE,
    NOT_YET,
    NOTHING,
    RAISED,
    RAISED_OTHER,
    RANDOM,
    plain_symptom,
)

NUM_RANDOM = 40  # random cases per call, besides the fixed ones
REGISTRY: dict = {}  # every spec a checker was made for, by name (`paged.exercises` fills it)


def fresh_seed(seed: int | None) -> int:
    """`seed`, or a fresh one for this call (printed with a failing random case)."""
    return random.SystemRandom().randrange(1, 1_000_000) if seed is None else int(seed)


def draws(generate, truth, n: int = NUM_RANDOM):
    """A `Spec.draw`: n cases from generate(rng), each with truth(*case) as answer."""

    def draw(rng):
        cases = [generate(rng) for _ in range(n)]
        return [(args, truth(*copy.deepcopy(args))) for args in cases]

    return draw


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


@dataclass(frozen=True)
class Spec:
    """An exercise as data (module docstring); `check(spec, fn)` runs it.

    `cases` are the teaching cases (a list of argument tuples, or a function that builds them
    when checked), `answer(*args)` the library's compared answer (None: `cases` gives (args,
    answer) pairs); `draw(rng)` gives random (args, answer) pairs; `slips` are (wrong_fn, hint)
    pairs or names in the catalogue (`slips.of(concept)`). `observe(fn, args)` calls fn
    and returns (what it returned, what is compared); `same(got, want)` decides equality, or `same_for(args)` gives the `same`
    of one case; `describe(args)` names a case and `show(value)` a value in messages. With
    `none_ok`, None is an answer like any other. `mutable` names the arguments fn may change;
    `forbid` (or a function giving it) lists what raises while fn runs (`guard.forbidden`'s
    targets); `contract(raw, args)` says why a right value breaks the spec's types, or None;
    `symptoms` are (predicate over the wrong (got, want, args) triples, hint); `parts` name
    the parts of an answer that is a record (a tuple), for the engine's symptom of which are right.
    """

    name: str
    params: tuple = ()
    cases: object = ()
    answer: Callable | None = None
    draw: Callable | None = None
    slips: tuple = ()
    same: Callable = operator.eq
    same_for: Callable | None = None
    describe: Callable | None = None
    show: Callable | None = None
    observe: Callable = plain
    none_ok: bool = False
    mutable: tuple = ()
    forbid: object = ()
    contract: Callable | None = None
    symptoms: tuple = ()
    parts: tuple = ()
    doc: str = ""


def checker(spec, doc: str | None = None):
    """`check_<name>(fn, seed=None)`: the spec's checker, as the chapters call it; a correct
    answer is kept in the learner's workspace (`workspace.keep`)."""

    def check_it(fn, seed: int | None = None) -> bool:
        ok = check(spec, fn, seed)
        if ok:  # the learner's to keep: chapter 13's engine is assembled from these
            workspace.keep(spec.name, fn)
        return ok

    check_it.__name__ = check_it.__qualname__ = f"check_{spec.name}"
    check_it.__doc__ = doc if doc is not None else getattr(spec, "doc", "")
    check_it.spec = REGISTRY[spec.name] = spec
    return check_it


def check(spec, fn, seed: int | None = None) -> bool:
    """Check fn against `spec` on every case and print the verdict (module docstring).

    A Triton puzzle (`kernel_runner.KernelSpec`) goes to the kernel runner: the same entry point.
    """
    if not isinstance(spec, Spec):  # a KernelSpec checks itself, under the memory watch
        return spec.run(fn, seed)
    name, params, observe, contract = spec.name, spec.params, spec.observe, spec.contract
    show = spec.show or short
    describe = spec.describe or (named(*params) if params else repr)
    seed = fresh_seed(seed)
    cases = spec.cases() if callable(spec.cases) else spec.cases
    if spec.answer is None:
        pairs = list(cases)
    else:
        pairs = [(args, spec.answer(*copy.deepcopy(args))) for args in cases]
    num_fixed = len(pairs)
    if spec.draw is not None:
        pairs += spec.draw(random.Random(seed))
    forbid = spec.forbid() if callable(spec.forbid) else spec.forbid
    targets = [*forbid, *answer_targets()]
    outcomes = []
    for args, _ in pairs:
        given, before = copy.deepcopy(args), [snapshot(a) for a in args]
        calls = []
        try:
            with forbidden(targets, allow=(fn,)) as calls:
                outcome = observe(fn, given)
        except NotImplementedError as exc:
            if _raised_by(exc, fn):  # the stub's own raise; deeper in torch it is a bug
                print(NOT_YET.format(name=name))
                return False
            outcome = Raised(exc)
        except LibraryCall as exc:
            print(CALLED.format(name=name, target=exc.target))
            return False
        except Exception as exc:  # the learner's bug: report it, not a traceback
            outcome = Raised(exc)
        if calls:  # a forbidden call that the function caught itself
            print(CALLED.format(name=name, target=calls[0]))
            return False
        if (arg := changed(before, given, params, spec.mutable)) is not None:
            print(CHANGED.format(name=name, case=describe(args), arg=arg))
            _random_note(name, seed, len(outcomes), num_fixed)
            return False
        outcomes.append(outcome)
    cases = [args for args, _ in pairs]
    wants = [want for _, want in pairs]
    got = [o if isinstance(o, Raised) else o[1] for o in outcomes]
    sames = [spec.same if spec.same_for is None else spec.same_for(args) for args in cases]
    wrong = [i for i in range(len(cases)) if not _agree(sames[i], got[i], wants[i])]
    if not wrong:
        broken = next(
            (
                (i, why)
                for i, o in enumerate(outcomes)
                if contract is not None and (why := contract(o[0], cases[i]))
            ),
            None,
        )
        if broken is None:
            print(CORRECT.format(name=name, n=len(cases)))
            return True
        i, why = broken
        print(BREAKS.format(name=name, case=describe(cases[i]), why=why))
        _random_note(name, seed, i, num_fixed)
        return False
    i = wrong[0]
    case = describe(cases[i])
    if isinstance(outcomes[i], Raised) and isinstance(wants[i], Raised):  # another exception
        want = type(wants[i].error).__name__
        print(RAISED_OTHER.format(name=name, case=case, error=outcomes[i], want=want))
    elif isinstance(outcomes[i], Raised):
        print(RAISED.format(name=name, case=case, error=outcomes[i]))
    elif outcomes[i][0] is None and not spec.none_ok:
        print(NOTHING.format(name=name, case=case))
        _random_note(name, seed, i, num_fixed)
        return False
    else:
        print(NOT_QUITE.format(name=name, case=case, got=show(got[i]), want=show(wants[i])))
    _random_note(name, seed, i, num_fixed)
    hint = _hint(got, wants, wrong, cases, slips(spec), sames, observe)
    if hint is None:
        triples = [(got[j], wants[j], cases[j]) for j in wrong]
        hint = next((h for test, h in spec.symptoms if _holds(test, triples)), None)
        if hint is None:  # what the wrong answers share, in any exercise
            try:
                hint = plain_symptom(triples, spec.parts)
            except Exception:  # answers it cannot read: no symptom
                hint = None
    if hint is not None:
        print(HINT.format(hint=hint))
    return False


def slips(spec) -> list:
    """The spec's slips as (wrong_fn, hint) pairs: names are looked up in `slips.SLIPS`."""
    return [SLIPS[s] if isinstance(s, str) else s for s in spec.slips]


def _raised_by(exc, fn) -> bool:
    """The exception was raised in fn's own body (a stub's `raise NotImplementedError`)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is getattr(fn, "__code__", None)


def _random_note(name, seed, i, num_fixed):
    if i >= num_fixed:
        print(RANDOM.format(name=name, seed=seed))


def _holds(test, triples) -> bool:
    try:
        return bool(test(triples))
    except Exception:  # a symptom that cannot read these answers does not hold
        return False


def _agree(same, a, b) -> bool:
    """Two outcomes agree: the same kind of exception, or values that `same` calls equal."""
    if isinstance(a, Raised) or isinstance(b, Raised):
        return isinstance(a, Raised) and isinstance(b, Raised) and type(a.error) is type(b.error)
    try:
        return bool(same(a, b))
    except Exception:  # a value `same` cannot compare (a string for a tensor, say)
        return False


def _hint(got, wants, wrong, cases, mistakes, sames, observe):
    """The hint of a mistake that gives every wrong answer the learner gave (module docstring);
    `sames[i]` compares on case i. Where only the wrong cases agree, some must be values: two
    slips that both raise IndexError on an empty list share nothing else. A mistake that is
    right where the learner is wrong (a near miss inside one tolerance and outside the other)
    does not explain it."""
    explains = []
    for mistake, hint in mistakes:
        agree, theirs = [], []
        for args, mine, same in zip(cases, got, sames, strict=True):
            try:
                answer = observe(mistake, copy.deepcopy(args))[1]
            except Exception as exc:
                answer = Raised(exc)
            theirs.append(answer)
            agree.append(_agree(same, mine, answer))
        if any(_agree(sames[i], theirs[i], wants[i]) for i in wrong):
            continue
        if all(agree):
            return hint
        # one wrong case is a coincidence, and so is the same exception alone (an IndexError)
        returned = any(not isinstance(got[i], Raised) for i in wrong)
        if len(wrong) > 1 and returned and all(agree[i] for i in wrong):
            explains.append(hint)
    return explains[0] if explains else None
