"""A Triton puzzle's kernel run once, before asking for a verdict: what it stored and touched.

Like Triton-Puzzles' drawings: `trial(kernel)` runs the learner's kernel on the puzzle's first
teaching case (the one `check_...` runs first), prints its output beside the library's answer,
and returns the trace of the launch, taken under the interpreter (on a CUDA GPU in
`kernel_child`'s process): program by program, which elements of each tensor the kernel loaded
and stored, from what the watch recorded (`Watch(record=True)`), not from what a program may
touch. `paged.viz.kernel_reads.try_kernel` draws it. A stub that
writes nothing, or still raises NotImplementedError, gets a friendly "not yet". The puzzle is
found by the kernel's name (the chapters' stubs are named as their puzzles), or named.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from ...text import msg
from . import kernel_child
from .kernel_launch import launch
from .triton_checks import SENTINEL, is_kernel, same
from .verdicts import NOT_A_KERNEL, WROTE_NOTHING

__all__: list[str] = []  # paged.viz.kernel_reads.try_kernel draws what trial() returns

RAN = msg("{name} on {where}:", "{where}에서 실행한 {name}:")
YOURS = msg("  yours     : {values}", "  여러분의 값: {values}")
REFERENCE = msg("  reference : {values}", "  참조 값    : {values}")
NEVER = msg("(· = never written)", "(· = 쓰이지 않음)")
SAME = msg(
    "  the same as the reference on this case; check_{name}(...) runs them all and watches "
    "every lane.",
    "  이 사례에서는 참조 값과 같습니다. check_{name}(...)은 모든 사례를 실행하고 레인 하나하나를 "
    "지켜봅니다.",
)
DIFFERENT = msg(
    "  not the same as the reference yet; check_{name}(...) says where and why.",
    "  아직 참조 값과 다릅니다. check_{name}(...)이 어디서 왜 다른지 알려 줍니다.",
)
MORE = msg("… ({n} values in all)", "… (모두 {n}개)")
UNKNOWN = "no Triton puzzle named {name!r}; the puzzles are {known}"
SHOWN = 8  # values printed of each output


@dataclasses.dataclass(frozen=True)
class Trial:
    """One launch of a learner's kernel: the puzzle, its case, and per view of the case (name,
    kind, owners, stray, names, outside[, note]) as `draw_program_accesses` takes them."""

    name: str
    where: str
    panels: list


def trial(kernel, puzzle: str | None = None) -> Trial | None:
    """Run `kernel` on its puzzle's first teaching case and print its output beside the answer;
    return what each program touched (None: not yet, or did not run). `puzzle` defaults to the
    kernel's own name ("copy_kernel")."""
    from .core import REGISTRY  # every puzzle whose chapter was imported, by name
    from .kernel_runner import KernelSpec

    specs = {n: s for n, s in REGISTRY.items() if isinstance(s, KernelSpec)}
    if not is_kernel(kernel):
        print(NOT_A_KERNEL.format(name=puzzle or "try_kernel", got=type(kernel).__name__))
        return None
    name = puzzle if puzzle is not None else getattr(kernel.fn, "__name__", None)
    if name not in specs:
        raise ValueError(UNKNOWN.format(name=name, known=sorted(specs)))
    spec = specs[name]
    if kernel_child.apart():  # a GPU here: run under the interpreter, in a child, and drawn
        return kernel_child.judge("try", spec, kernel)  # (the registry's spec: never unknown)
    case = spec.build(spec.fixed[0], 1000)  # check_kernel's first case, the same data
    case.watch.accesses = []
    if not launch(name, case.watch, case.run, kernel):
        return None
    if case.wrote_nothing():
        print(WROTE_NOTHING.format(name=name))
        return None
    got = case.got()
    print(RAN.format(name=name, where=case.where))
    print(YOURS.format(values=_values(got)) + (f"  {NEVER}" if (got == SENTINEL).any() else ""))
    print(REFERENCE.format(values=_values(case.want)))
    print((SAME if same(got, case.want, spec.tol) else DIFFERENT).format(name=name))
    return Trial(name, case.where, _panels(case))


def _values(t: torch.Tensor) -> str:
    flat = t.flatten().tolist()
    words = ["·" if v == SENTINEL else f"{v:.4g}" for v in flat[:SHOWN]]
    more = f" {MORE.format(n=len(flat))}" if len(flat) > SHOWN else ""
    return "[" + ", ".join(words) + "]" + more


def _panels(case) -> list:
    """(name, kind, owners, stray, names, outside) per view of `case`, from its watch's record."""
    watch = case.watch
    grid = watch.grid or (1, 1, 1)
    names = [",".join(str(i) for i in pid[: watch.dims]) for pid in np.ndindex(*grid)]
    buffers = {b.name: b for b in watch.buffers}
    panels = []
    for buf_name, kind, start, rows, cols, row_stride, per_cell, *note in case.views:
        owners = np.full((rows, cols), -1)
        stray = np.zeros((rows, cols), bool)
        outside = 0
        buf = buffers[buf_name]
        for k, name, elems, pid in watch.accesses:
            if name != buf_name or k != kind:
                continue
            rule = getattr(buf, kind)
            ok = (rule(pid) if callable(rule) else rule)[elems]
            rel = elems - start
            r, within = np.divmod(rel, row_stride)
            c = within // per_cell
            drawn = (rel >= 0) & (r < rows) & (c < cols)
            outside += int((~drawn).sum())
            who = np.ravel_multi_index(pid, grid)  # the program's place in `names`
            for rr, cc, good in zip(r[drawn], c[drawn], ok[drawn], strict=True):
                now = owners[rr, cc]
                owners[rr, cc] = who if now in (-1, who) else -2
                stray[rr, cc] |= not good
        panels.append((buf_name, kind, owners, stray, names, outside, *map(str, note)))
    return panels
