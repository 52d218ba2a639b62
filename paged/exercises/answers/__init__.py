"""Model answers, one function (or @triton.jit kernel) per exercise, named as the exercise.

They live here, not in the chapters, so that no answer is on screen before the attempt:
`solution("first_fit")` prints one after it. Tests hand each to its checker (it must pass), and
the solvability test puts each into its chapter in place of the stub.
"""

from __future__ import annotations

import importlib
import inspect

# Topic modules, searched in order; kernels import triton, so they load only when asked.
MODULES = ("memory", "attention", "basics", "kernels", "serving", "prefix", "block_pool")


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


def solution(name: str) -> None:
    """Print a model answer (after you tried: the checker's hints are worth more)."""
    print(source(name))
