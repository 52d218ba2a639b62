"""The referee of the learner's engine: every call of a piece, judged as its checker judges a case.

The engine asks the referee for each piece's answer (`Referee.call`) and hands it the course's
answer to the same call, computed by the library on the same state. Where the learner's
workspace holds the piece, the referee calls the learner's function (on its own copies of the
arguments, as the checker does), reads what it returned and what it did to its arguments (the
spec's `observe`), and compares that with the course's (the spec's `same`): they agree, and the
engine goes on with the learner's answer; they do not, and the run stops with a `Difference`
that names the piece, its file, the step, what the piece was given, what it returned (or
raised, with the line) and what the course's returned. Where the workspace holds no piece, the
course's answer serves. Nothing falls back silently: a piece that raises, changes a tensor it
was handed, or returns right values of the wrong type is a difference too.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

from ..exercises import SPECS
from ..exercises.engine import core
from ..exercises.engine.contract import changed, short, snapshot
from ..exercises.engine.core import Raised, named
from ..text import msg

PARTED = msg(
    "Your engine and the course's part at step {step}: your {piece} ({where}) was given {given}, "
    "and returned {got}; the course's returned {want}.",
    "여러분의 엔진과 코스의 엔진이 {step}단계에서 갈라집니다. 여러분의 부품 {piece}({where})에 "
    "준 인자: {given}. 돌려준 값: {got}. 코스의 부품이 돌려준 값: {want}.",
)
RAISED = msg(
    "Your engine stops at step {step}: your {piece} ({where}) was given {given}, and raised "
    "{error}; the course's returned {want}.",
    "여러분의 엔진이 {step}단계에서 멈춥니다. 여러분의 부품 {piece}({where})에 준 인자: {given}. "
    "일으킨 예외: {error}. 코스의 부품이 돌려준 값: {want}.",
)
CHANGED = msg(
    "Your engine stops at step {step}: your {piece} ({where}) changed `{arg}`, which it was "
    "handed to read: the engine's memory must come back as it went in.",
    "여러분의 엔진이 {step}단계에서 멈춥니다. 여러분의 부품 {piece}({where})이 읽으라고 건넨 "
    "`{arg}` 값을 바꿨습니다. 엔진의 메모리는 받은 그대로 돌아와야 합니다.",
)
BROKEN = msg(
    "Your engine stops at step {step}: your {piece} ({where}) returned the right values for "
    "{given}, but {why}.",
    "여러분의 엔진이 {step}단계에서 멈춥니다. 여러분의 부품 {piece}({where})은 {given}에 맞는 값을 "
    "돌려주었지만, {why}.",
)
LINE = msg("{path}, line {line}", "{path}, {line}번째 줄")


class Difference(Exception):
    """Where the learner's engine and the course's part: the message names the piece, the step,
    its inputs and both answers."""


class Referee:
    """Answers each piece's calls for one run of the learner's engine (module docstring)."""

    def __init__(self, pieces: dict):
        self.pieces = pieces  # name -> `pieces.Piece`
        self.step = 0  # the step being computed, for the messages
        self.course = None  # the course's phase of this step (`paged.step.Step`)
        self.calls: Counter = Counter()  # calls answered by the learner's pieces
        self.largest_gap = 0.0  # largest difference of a float answer that agreed (attention)

    def yours(self, name: str) -> bool:
        return self.pieces[name].yours

    def where(self, name: str) -> str:
        return self.pieces[name].shown

    def call(self, name: str, args: tuple, want, same=None, plain: bool = False):
        """The answer of piece `name` to `args`: the learner's, once it agrees with `want` (the
        course's answer, in the form the spec compares), or `want` where none is written.
        `same(got, want)` replaces the spec's comparison (block hashes: any names will do);
        `plain`: one plain call, where the checker calls fn on a family of cases at once."""
        piece = self.pieces[name]
        if piece.fn is None:
            return want
        spec = SPECS[name]
        tensors = {i: a for i, a in enumerate(args) if hasattr(a, "is_inference")}  # not copied
        given = copy.deepcopy(args, {id(t): t for t in tensors.values()})
        versions = {i: _version(t) for i, t in tensors.items()}
        before = [None if i in tensors else snapshot(a) for i, a in enumerate(args)]
        try:
            raw, got = (core.plain if plain else spec.observe)(piece.fn, given)
        except Exception as error:
            error = self._raised(error, piece)
            raise self._stop(RAISED, name, args, want, plain, error=error) from None
        after = [None if i in tensors else a for i, a in enumerate(given)]
        arg = changed(before, after, spec.params, spec.mutable)  # what it was to leave alone
        for i, t in tensors.items():
            arg = arg or (None if _same_version(t, versions[i]) else spec.params[i])
        if arg is not None:
            text = CHANGED.format(step=self.step, piece=name, where=piece.shown, arg=arg)
            raise Difference(text)
        same = same or (spec.same if spec.same_for is None else spec.same_for(args))
        if not _agree(same, got, want):
            shown = short if plain else (spec.show or short)
            raise self._stop(PARTED, name, args, want, plain, got=shown(got))
        why = spec.contract(raw, args) if spec.contract is not None and not plain else None
        if why:
            given_text = self._describe(name, args, plain)
            text = BROKEN.format(
                step=self.step, piece=name, where=piece.shown, given=given_text, why=why
            )
            raise Difference(text)
        self.calls[name] += 1
        return got

    def _describe(self, name: str, args: tuple, plain: bool = False) -> str:
        spec = SPECS[name]
        return (named(*spec.params) if plain else spec.describe or named(*spec.params))(args)

    def _stop(self, template, name, args, want, plain, **fields) -> Difference:
        show = short if plain else (SPECS[name].show or short)
        text = template.format(
            step=self.step,
            piece=name,
            where=self.where(name),
            given=self._describe(name, args, plain),
            want=show(want),
            **fields,
        )
        return Difference(text)

    def _raised(self, error: Exception, piece) -> str:
        """The exception, and the line of the learner's file where it was raised."""
        line = None
        tb = error.__traceback__
        while tb is not None:
            if piece.path is not None and Path(tb.tb_frame.f_code.co_filename) == piece.path:
                line = tb.tb_lineno
            tb = tb.tb_next
        text = str(Raised(error))
        return text if line is None else f"{text} ({LINE.format(path=piece.shown, line=line)})"


def _agree(same, got, want) -> bool:
    try:
        return bool(same(got, want))
    except Exception:  # an answer `same` cannot compare (a string for a tensor, say)
        return False


SMALL = 4096  # elements: an inference tensor this small is compared by value


def _version(t):
    """What tells whether `t` was written in place: its version counter, or (inference tensors
    have none, as the model's are) a copy of a small one; None: not watched (a KV cache)."""
    if not t.is_inference():
        return t._version
    return t.clone() if t.numel() <= SMALL else None


def _same_version(t, version) -> bool:
    if version is None:
        return True
    if isinstance(version, int):
        return t._version == version
    return bool(t.shape == version.shape and (t == version).all())
