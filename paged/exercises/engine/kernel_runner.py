"""One runner for every Triton puzzle: a puzzle is a `KernelSpec`, `check_kernel` checks it.

The Triton twin of `core.check`, which hands it every `KernelSpec`. A spec builds a case from its
parameters (the fixed teaching cases, then `num_random` drawn for this call from a fresh seed,
printed with a failing random case; `seed=` draws them again); each `Case` carries its buffers
(in a `triton_checks.Watch`: which elements a program may load and store), the launch, the
compared output and the library's answer. For every case the runner checks, in order: not a
kernel; the launch (an error is reported short, with a hint); atomics on elements a program may
not both read and write*; the inputs untouched (bit for bit); wrote nothing (every output still
SENTINEL: "not yet"); stores outside the allowed elements, or into another program's share*
(where a spec gives each program its own); the values (to the spec's tolerance, NaN where NaN);
loads outside the valid range*; a `tl.dot` that runs, where the puzzle asks for one, and no
more per program than it asks for*; no tl.dot on float32 operands at TF32 precision (what a GPU
would compute to 3 digits)*; the inputs each program must read (`Case.required`)*. Where a tl.dot is asked for, once every case passed,
the first case runs again with every tl.dot result perturbed*: an output that does not move
means the dot never reached it. (*: seen under the interpreter; on a CUDA GPU the whole check
runs under it in a child process, `kernel_child`, so every observation holds there too.) A wrong
answer gets the first spec hint whose predicate holds, and otherwise a symptom: what the output
got wrong, never how to fix it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random
from collections.abc import Callable

import numpy as np
import torch

from . import kernel_child
from .core import fresh_seed
from .kernel_launch import launch
from .triton_checks import (
    SENTINEL,
    Watch,
    first_difference,
    interpreted,
    is_kernel,
    same,
    strays_in,
)
from .verdicts import (
    ATOMIC,
    DOT_UNCHANGED,
    DOT_UNUSED,
    DOTS,
    DOTS_HINT,
    HINT,
    INPUT_HINT,
    INPUT_WRITTEN,
    KERNEL_CORRECT,
    KERNEL_NOT_QUITE,
    KERNEL_RANDOM,
    NO_DOT,
    NOT_A_KERNEL,
    RIGHT,
    SHARE,
    STORE_PAST,
    TF32_DOT,
    UNMASKED_LOAD,
    UNREAD,
    UNREAD_HINT,
    WROTE_NOTHING,
    symptom,
)

__all__: list[str] = []  # the machinery behind basics.py and kernels.py


@dataclasses.dataclass
class Case:
    """One launch of a puzzle: its buffers, how to run a kernel on them, what must come out.

    `outputs` are (name, flat, allowed) for the buffers the kernel writes (allowed: a bool array
    over flat's elements); every other buffer of `watch` is an input, read only; `required`
    names inputs whose elements each program must load (pid -> bool array; interpreter);
    `views` are (buffer, kind, start, rows, cols, row_stride, per_cell[, note]): the cells
    `try_kernel` draws, cell (r, c) being elements start + r * row_stride + c * per_cell and the
    per_cell - 1 after it; `note` says what the rows are. `got()` reads the compared output
    after the launch; `regions` name parts of it (a bool tensor of got's shape each) for the
    "wrong only there" symptom; `data` is whatever the spec's predicates need.
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
    required: dict = dataclasses.field(default_factory=dict)
    views: list = dataclasses.field(default_factory=list)

    def wrote_nothing(self) -> bool:
        """Every output still SENTINEL: "not yet"."""
        return all(bool((flat == SENTINEL).all()) for _, flat, _ in self.outputs)


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
    dots_per_program: int | None = None  # the most tl.dot calls a program may run
    describe: Callable | None = None  # describe(Failure) -> words for a wrong value
    store_hints: tuple = ()  # a store outside every program's share
    share_hints: tuple = ()  # a store into another program's share (then SHARE)
    value_hints: tuple = ()
    load_hints: tuple = ()

    def run(self, kernel, seed: int | None = None) -> bool:
        """`check_kernel(self, kernel, seed)`: what `core.check` calls for a Triton puzzle."""
        return check_kernel(self, kernel, seed)


def check_kernel(spec: KernelSpec, kernel, seed: int | None = None) -> bool:
    """Check `kernel` against `spec` on its fixed and random cases; print the verdict."""
    name = spec.name
    if not is_kernel(kernel):
        print(NOT_A_KERNEL.format(name=name, got=type(kernel).__name__))
        return False
    seed = fresh_seed(seed)
    if kernel_child.apart():  # a GPU here: judged under the interpreter, in a child
        verdict = kernel_child.judge("check", spec, kernel, seed)
        if verdict is not kernel_child.UNKNOWN_SPEC:
            return verdict
    rng = random.Random(seed)
    plan = [(p, 1000 + i) for i, p in enumerate(spec.fixed)]
    if spec.draw is not None:
        plan += [(spec.draw(rng), rng.randrange(1 << 30)) for _ in range(spec.num_random)]
    for i, (params, data_seed) in enumerate(plan):
        verdict = _one_case(spec, kernel, spec.build(params, data_seed))
        if verdict is not None:
            if verdict and i >= len(spec.fixed):
                print(KERNEL_RANDOM.format(name=name, seed=seed))
            return False
    if spec.needs_dot and interpreted() and _dot_unused(spec, kernel, *plan[0]):
        return False
    print(KERNEL_CORRECT.format(name=name, what=f"{len(plan)} cases: {spec.summary}"))
    return True


def _one_case(spec, kernel, case):
    """None when the kernel passes `case`; else the verdict printed, and whether it was "wrong"
    (a random case's seed is worth printing) rather than "not yet" or "did not run"."""
    name, watch = spec.name, case.watch
    outputs = ", ".join(n for n, _, _ in case.outputs)
    inputs = [b for b in watch.buffers if not any(b.flat is f for _, f, _ in case.outputs)]
    before = [b.flat.clone() for b in inputs]
    if not launch(name, watch, case.run, kernel):
        return False
    if watch.describe("atomic"):
        return _wrong(name, case, watch.describe("atomic"), ATOMIC)
    for buf, old in zip(inputs, before, strict=True):
        if (changed := _changed(buf.flat, old)) is not None:
            hint = INPUT_HINT.format(inputs=", ".join(b.name for b in inputs), outputs=outputs)
            return _wrong(name, case, INPUT_WRITTEN.format(what=buf.where(changed)), hint)
    if case.wrote_nothing():
        print(WROTE_NOTHING.format(name=name))
        return False
    got, want = case.got(), case.want
    fail = Failure(case, got, want, watch)
    stray = watch.describe("store")
    if stray:
        buf, elem, _ = watch.stray["store"][0]
        if buf is not None and any(buf.flat is f and ok[elem] for _, f, ok in case.outputs):
            # an element that another program may write: into its share
            return _wrong(name, case, stray, _first(spec.share_hints, fail) or SHARE)
    stray = stray or next(
        (STORE_PAST for _, f, ok in case.outputs if strays_in(f, ok, SENTINEL).size), None
    )
    if stray:
        return _wrong(name, case, stray, _first(spec.store_hints, fail))
    if not same(got, want, spec.tol):
        if spec.describe:
            what = spec.describe(fail)
        else:
            what = first_difference(case.label, got, want, spec.tol)
        hint = _first(spec.value_hints, fail) or symptom(got, want, spec.tol, case.regions)
        return _wrong(name, case, what, hint)
    if watch.describe("load"):
        hint = _first(spec.load_hints, fail) or UNMASKED_LOAD
        return _wrong(name, case, watch.describe("load"), hint)
    if spec.needs_dot and interpreted() and watch.count["dot"] == 0:  # counted by the watch
        return _wrong(name, case, RIGHT, NO_DOT)
    most = max(watch.dots.items(), key=lambda kv: kv[1], default=(None, 0))
    if spec.dots_per_program is not None and most[1] > spec.dots_per_program:
        pid, want = watch.pid_name(most[0]), spec.dots_per_program
        return _wrong(name, case, DOTS.format(pid=pid, count=most[1], want=want), DOTS_HINT)
    if watch.count["tf32"]:  # every puzzle's tolerance is finer than TF32's 10 bits
        return _wrong(name, case, RIGHT, TF32_DOT)
    if (unread := _unread(case, watch)) is not None:
        return _wrong(name, case, unread, UNREAD_HINT)
    return None


def _dot_unused(spec, kernel, params, data_seed) -> bool:
    """Run one case again with every tl.dot result perturbed; True (and the verdict printed)
    when the output still equals the answer: the dots never reached it."""
    case = spec.build(params, data_seed)
    case.watch.perturb = np.random.default_rng(data_seed)
    with contextlib.redirect_stdout(io.StringIO()):
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
    print(KERNEL_NOT_QUITE.format(name=name, where=case.where, what=what))
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
