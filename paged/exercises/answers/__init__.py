"""Model answers, one function (or @triton.jit kernel) per exercise, named as the exercise.

They live here, not in the chapters, so that no answer is on screen before the attempt:
`solution("first_fit")` prints one after it. Tests hand each to its checker (it must pass), and
the solvability test puts each into its chapter in place of the stub.
"""

from __future__ import annotations

import importlib
import inspect
import os

from ...text import msg

# Topic modules, searched in order; kernels import triton, so they load only when asked.
# `course_steps`: the kernels chapter 7 runs after its puzzles 3b, 4 and 5b.
MODULES = (
    *("memory", "attention", "basics", "kernels", "serving", "prefix", "block_pool"),
    "course_steps",
)


def find(name: str):
    """The model answer named `name` (a function or a @triton.jit kernel)."""
    for module in MODULES:
        mod = importlib.import_module(f".{module}", __name__)
        if name in getattr(mod, "__all__", ()):
            return getattr(mod, name)
    known = sorted(n for m in MODULES for n in importlib.import_module(f".{m}", __name__).__all__)
    raise ValueError(f"no exercise named {name!r}; the exercises are {known}")


def source(name: str) -> str:
    """The model answer's source code, as it would be typed into the chapter."""
    obj = find(name)
    fn = getattr(obj, "fn", obj)  # a @triton.jit kernel keeps the Python function in .fn
    return inspect.getsource(fn)


DECLINED = msg(
    "solution({name!r}): model answers are switched off here (PAGED_SOLUTIONS=off, as in a graded "
    "run); the checker's hints still say what a wrong answer got wrong.",
    "solution({name!r}): 이곳에서는 모범 답안을 볼 수 없습니다(PAGED_SOLUTIONS=off, 채점하는 실행처럼). "
    "채점기의 힌트는 틀린 답이 무엇을 틀렸는지 여전히 알려 줍니다.",
)


def solution(name: str) -> None:
    """Print a model answer (after you tried: the checker's hints are worth more); with
    `PAGED_SOLUTIONS=off` (a graded run) it declines."""
    find(name)  # an unknown name is named as such, switched off or not
    if os.environ.get("PAGED_SOLUTIONS", "").strip().lower() == "off":
        print(DECLINED.format(name=name))
        return
    print(source(name))
