"""One runner for every Triton puzzle: a puzzle is a `KernelSpec`, `check_kernel` checks it.

The Triton twin of `core.check`, which hands it every `KernelSpec`. A spec says how to build a
case from its parameters (the fixed teaching cases, then `num_random` drawn for this call from a fresh seed, printed with a
failing random case; `seed=` draws them again), and each `Case` carries its buffers (inside a
`triton_checks.Watch`: which elements a program may load and store), the launch, the compared
output and the library's answer. For every puzzle and every case the runner checks, in order:
not a kernel; the launch (an error is reported short, with a hint); atomics on elements a
program may not both read and write (under the interpreter); the inputs untouched (every buffer
the kernel may only read must come back bit for bit); wrote nothing (every output still
SENTINEL: "not yet"); stores outside the allowed elements, or into another program's share
(under the interpreter, where a spec gives each program its own); the values (to the spec's
tolerance, NaN where NaN); loads outside the valid range (under the interpreter); a `tl.dot`
that runs, where the puzzle asks for one; the inputs each program must read (`Case.required`,
under the interpreter). Where a tl.dot is asked for, once every case passed, the first case runs
again with every tl.dot result perturbed (under the interpreter): an output that does not move
means the dot never reached it. A wrong answer gets the first spec hint whose predicate holds,
and otherwise a symptom: what the output got wrong, never how to fix it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random
from collections.abc import Callable

import numpy as np
import torch

from ..text import msg
from .core import fresh_seed
from .guard import forbidden
from .kernel_launch import launch
from .slips import KERNEL_SYMPTOMS as SYMPTOMS
from .slips import constant_factor_by_row as _constant_factor
from .triton_checks import (
    ATOMIC,
    SENTINEL,
    UNMASKED_LOAD,
    Watch,
    first_difference,
    interpreted,
    is_kernel,
    same,
    strays_in,
)
from .verdicts import HINT
from .verdicts import KERNEL_CORRECT as CORRECT
from .verdicts import KERNEL_NOT_QUITE as NOT_QUITE
from .verdicts import KERNEL_RANDOM as RANDOM
from .verdicts import NOT_A_KERNEL as _NOT_A_KERNEL
from .verdicts import WROTE_NOTHING as _WROTE_NOTHING

__all__: list[str] = []  # the machinery behind basics.py and kernels.py

INPUT_WRITTEN = msg(
    "your kernel wrote into {what}, an input", "커널이 입력인 {what} 위치에 썼습니다"
)
INPUT_HINT = msg(
    "the inputs ({inputs}) belong to the caller: the kernel reads them and leaves them as they "
    "were. Only {outputs} is the kernel's to write.",
    "입력({inputs})은 호출한 쪽의 것입니다. 커널은 입력을 읽기만 하고 그대로 두어야 합니다. "
    "커널이 쓸 수 있는 출력: {outputs}.",
)
STORE_PAST = msg(
    "a store landed outside the output's elements", "출력 원소 밖에 저장한 값이 있습니다"
)
RIGHT = msg("the values are right", "값은 맞습니다")
NO_DOT = msg(
    "the puzzle asks for this result from tl.dot, and your kernel has no tl.dot call that "
    "runs: the values may be right, but the tensor cores would sit idle.",
    "이 퍼즐은 이 결과를 tl.dot으로 구하라고 합니다. 그런데 커널에서 실행되는 tl.dot 호출이 "
    "없습니다. 값은 맞을 수 있어도 텐서 코어는 쉬게 됩니다.",
)
DOT_UNCHANGED = msg(
    "with every tl.dot result changed, your kernel stored the same values",
    "모든 tl.dot 결과를 바꿔도 커널이 같은 값을 저장했습니다",
)
DOT_UNUSED = msg(
    "the puzzle asks for this result from tl.dot: your tl.dot runs, but its result never reaches "
    "the output.",
    "이 퍼즐은 이 결과를 tl.dot으로 구하라고 합니다. 커널의 tl.dot은 실행되지만, 그 결과가 "
    "출력까지 가지 않습니다.",
)
UNREAD = msg(
    "the values are right, but program {pid} never read {what}",
    "값은 맞지만 프로그램 {pid}의 load 중 {what} 위치를 읽은 것이 하나도 없습니다",
)
UNREAD_HINT = msg(
    "the puzzle hands each program this input to use, and your kernel got its numbers without it.",
    "이 퍼즐은 각 프로그램이 쓰도록 이 입력을 건네는데, 커널은 이것 없이 값을 구했습니다.",
)
SHARE = msg(
    "a program wrote elements of another program's share: the grid's programs did not each "
    "write their own part of the output.",
    "한 프로그램이 다른 프로그램 몫의 원소에 썼습니다. 그리드의 프로그램들이 출력에서 각자 "
    "자기 몫만 쓰지 않았습니다.",
)


@dataclasses.dataclass
class Case:
    """One launch of a puzzle: its buffers, how to run a kernel on them, what must come out.

    `outputs` are (name, flat, allowed) for the buffers the kernel writes (allowed: a bool array
    over flat's elements); every other buffer of `watch` is an input, read only; `required`
    names inputs whose elements each program must load (pid -> bool array; interpreter);
    `views` are (buffer, kind, start, rows, cols, row_stride, per_cell[, note]): the cells
    `try_kernel` draws, cell (r, c) being elements start + r * row_stride + c * per_cell and the
    per_cell - 1 after it; `note` says what the rows are. `got()` reads
    the compared output after the launch; `regions` name parts of it (a bool tensor of got's
    shape each) for the "wrong only there" symptom; `data` is whatever the spec's predicates need.
    """

    where: str
    watch: Watch
    run: Callable
    outputs: list
    got: Callable
    want: torch.Tensor
    label: str = "out"
    regions: dict = dataclasses.field(default_factory=dict)
    data: dict = dataclasses.field(default_factory=dict)
    required: dict = dataclasses.field(default_factory=dict)  # buffer -> (pid -> must load)
    views: list = dataclasses.field(default_factory=list)  # what try_kernel draws


@dataclasses.dataclass
class Failure:
    """What a spec's hint predicates see: the case, what came out, what the watch recorded."""

    case: Case
    got: torch.Tensor
    want: torch.Tensor
    watch: Watch

    def __getattr__(self, key):  # the case's data, by name: f.tile, f.scale ...
        data = self.__dict__.get("case").data if "case" in self.__dict__ else {}
        if key in data:
            return data[key]
        raise AttributeError(key)


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """A Triton puzzle as data (module docstring). Hints are ordered (predicate(Failure), hint)."""

    name: str
    fixed: tuple  # the teaching cases' parameters
    build: Callable  # build(params, seed) -> Case
    summary: object  # what "correct (...)" says the cases held
    draw: Callable | None = None  # draw(rng) -> params of one random case
    num_random: int = 4
    tol: float = 0.0  # 0: exact
    needs_dot: bool = False
    describe: Callable | None = None  # describe(Failure) -> words for a wrong value
    store_hints: tuple = ()  # a store outside every program's share
    share_hints: tuple = ()  # a store into another program's share (then SHARE)
    value_hints: tuple = ()
    load_hints: tuple = ()
    forbid: tuple = ()  # (label, library function) pairs that raise while the kernel runs
    doc: str = ""  # the checker's docstring (`core.checker`)

    def run(self, kernel, seed: int | None = None) -> bool:
        """`check_kernel(self, kernel, seed)`: what `core.check` calls for a Triton puzzle."""
        return check_kernel(self, kernel, seed)


def check_kernel(spec: KernelSpec, kernel, seed: int | None = None) -> bool:
    """Check `kernel` against `spec` on its fixed and random cases; print the verdict."""
    name = spec.name
    if not is_kernel(kernel):
        print(_NOT_A_KERNEL.format(name=name, got=type(kernel).__name__))
        return False
    seed = fresh_seed(seed)
    rng = random.Random(seed)
    plan = [(p, 1000 + i) for i, p in enumerate(spec.fixed)]
    if spec.draw is not None:
        plan += [(spec.draw(rng), rng.randrange(1 << 30)) for _ in range(spec.num_random)]
    for i, (params, data_seed) in enumerate(plan):
        verdict = _one_case(spec, kernel, spec.build(params, data_seed))
        if verdict is not None:
            if verdict and i >= len(spec.fixed):
                print(RANDOM.format(name=name, seed=seed))
            return False
    if spec.needs_dot and interpreted() and _dot_unused(spec, kernel, *plan[0]):
        return False
    print(CORRECT.format(name=name, what=f"{len(plan)} cases: {spec.summary}"))
    return True


def _one_case(spec, kernel, case):
    """None when the kernel passes `case`; else the verdict printed, and whether it was "wrong"
    (a random case's seed is worth printing) rather than "not yet" or "did not run"."""
    name, watch = spec.name, case.watch
    out_flats = [flat for _, flat, _ in case.outputs]
    inputs = [b for b in watch.buffers if not any(b.flat is f for f in out_flats)]
    before = [b.flat.clone() for b in inputs]
    with forbidden(spec.forbid):  # a forbidden call raises: "did not run", naming it
        if not launch(name, watch, case.run, kernel):
            return False
    if watch.describe("atomic"):
        return _wrong(name, case, watch.describe("atomic"), ATOMIC)
    for buf, old in zip(inputs, before, strict=True):
        if (changed := _changed(buf.flat, old)) is not None:
            what = INPUT_WRITTEN.format(what=buf.where(changed))
            return _wrong(
                name,
                case,
                what,
                INPUT_HINT.format(
                    inputs=", ".join(b.name for b in inputs),
                    outputs=", ".join(n for n, _, _ in case.outputs),
                ),
            )
    if all(bool((f == SENTINEL).all()) for f in out_flats):
        print(_WROTE_NOTHING.format(name=name))
        return False
    got, want = case.got(), case.want
    fail = Failure(case, got, want, watch)
    if watch.describe("store") and _into_a_share(case, watch.stray["store"][0]):
        hint = _first(spec.share_hints, fail) or SHARE
        return _wrong(name, case, watch.describe("store"), hint)
    stray = watch.describe("store") or next(
        (STORE_PAST for _, f, ok in case.outputs if strays_in(f, ok, SENTINEL).size), None
    )
    if stray:
        return _wrong(name, case, stray, _first(spec.store_hints, fail))
    if not same(got, want, spec.tol):
        what = (
            spec.describe(fail)
            if spec.describe
            else first_difference(case.label, got, want, spec.tol)
        )
        hint = _first(spec.value_hints, fail) or symptom(got, want, spec.tol, case.regions)
        return _wrong(name, case, what, hint)
    if watch.describe("load"):
        return _wrong(
            name, case, watch.describe("load"), _first(spec.load_hints, fail) or UNMASKED_LOAD
        )
    if spec.needs_dot and _no_dot(kernel, watch):
        return _wrong(name, case, RIGHT, NO_DOT)
    if (unread := _unread(case, watch)) is not None:
        return _wrong(name, case, unread, UNREAD_HINT)
    return None


def _into_a_share(case, stray) -> bool:
    """Whether a stray store landed on an output element that some other program may write."""
    buf, elem, _ = stray
    return buf is not None and any(buf.flat is f and bool(ok[elem]) for _, f, ok in case.outputs)


def _dot_unused(spec, kernel, params, data_seed) -> bool:
    """Run one case again with every tl.dot result perturbed; True (and the verdict printed)
    when the output still equals the answer: the dots never reached it."""
    case = spec.build(params, data_seed)
    case.watch.perturb = np.random.default_rng(data_seed)
    with contextlib.redirect_stdout(io.StringIO()), forbidden(spec.forbid):
        ran = launch(spec.name, case.watch, case.run, kernel)
    if not ran or not same(case.got(), case.want, spec.tol):
        return False
    return _wrong(spec.name, case, DOT_UNCHANGED, DOT_UNUSED)


def _unread(case, watch) -> str | None:
    """Words for the first program that did not load an element `case.required` asks it to
    (under the interpreter, where the watch lists what each program loaded), or None."""
    if not case.required or watch.accesses is None or watch.grid is None:
        return None
    loaded = {}
    for kind, name, elems, pid in watch.accesses:
        if kind != "store":
            loaded.setdefault((name, pid), set()).update(elems.tolist())
    buffers = {b.name: b for b in watch.buffers}
    for name, need in case.required.items():
        for pid in np.ndindex(*watch.grid):
            missing = set(np.nonzero(need(pid))[0].tolist()) - loaded.get((name, pid), set())
            if missing:
                what = buffers[name].where(min(missing))
                return UNREAD.format(pid=watch.pid_name(pid), what=what)
    return None


def _wrong(name, case, what, hint) -> bool:
    print(NOT_QUITE.format(name=name, where=case.where, what=what))
    if hint:
        print(HINT.format(hint=hint))
    return True


def _first(hints, fail):
    for test, hint in hints:
        try:
            if test(fail):
                return hint
        except Exception:  # a predicate that cannot read this output does not hold
            continue
    return None


def _changed(flat, old):
    """The first element of `flat` that no longer holds what `old` held (NaN equal), or None."""
    now, old = flat.cpu(), old.cpu()
    diff = now != old
    if now.is_floating_point():
        diff &= ~(now.isnan() & old.isnan())
    idx = torch.nonzero(diff)
    return int(idx[0]) if len(idx) else None


def _no_dot(kernel, watch) -> bool:
    if interpreted():
        return watch.count["dot"] == 0
    from .kernel_cases import calls_dot

    return calls_dot(kernel) is False


def symptom(got, want, tol, regions=None):
    """What the output got wrong, in words (never the fix), or None when nothing stands out."""
    got, want = got.double().cpu(), want.double().cpu()
    bad = ~torch.isclose(got, want, rtol=max(tol, 1e-12), atol=max(tol, 1e-12), equal_nan=True)
    finite = torch.isfinite(want)
    if bool((~torch.isfinite(got) & finite).any()):
        return SYMPTOMS["nonfinite"]
    if tol < 1e-3 and bool(torch.isclose(got, want, rtol=2e-3, atol=2e-3, equal_nan=True).all()):
        return SYMPTOMS["precision"]
    for region, mask in (regions or {}).items():
        if bool(bad.any()) and not bool((bad & ~mask).any()):
            return SYMPTOMS["only"].format(region=region)
    if got.dim() and _constant_factor(got, want, bad):
        return SYMPTOMS["factor"]
    return None
