"""No shortcut through the library: while a learner's function runs, what it should write raises.

An exercise asks the learner to write something the library already has (`gather_kv`,
`CostModel.swap_time`, ...). A checker computes its expectations first, then runs the learner's
function inside `forbidden(...)`: for that call, each named library function (and the model
answers behind `solution`) is swapped for one that raises `LibraryCall` naming it. The swap
replaces the function's code object, so every reference to it is covered: `paged.gather_kv`,
`from paged.attention.reference import gather_kv` done at the top of a chapter, a bound method.
Whatever happens inside, every function gets its own code back (try/finally).
"""

from __future__ import annotations

import contextlib
import types

from ..text import msg

__all__: list[str] = []  # used by the checkers

CALLED = msg(
    "{name}: not quite: your function calls {target}, the library's own answer; the exercise is "
    "to write it yourself.",
    "{name}: 아직 아닙니다. 함수 안에서 라이브러리의 답인 {target} 호출이 보입니다. 이 연습은 "
    "그것을 직접 작성하는 것입니다.",
)


class LibraryCall(Exception):
    """Raised by a forbidden library function while a learner's function runs."""

    def __init__(self, target: str):
        super().__init__(f"this calls {target}: the exercise is to write it")
        self.target = target


def _function(obj):
    """The plain function behind obj (a function, method, property or @triton.jit kernel)."""
    if isinstance(obj, property):
        obj = obj.fget
    obj = getattr(obj, "__func__", obj)
    return obj if isinstance(obj, types.FunctionType) else None


def _raiser(target: str, like: types.FunctionType) -> types.CodeType:
    """A code object that raises LibraryCall(target), with `like`'s free variables."""
    free = like.__code__.co_freevars
    outer = "\n".join(f"    {v} = None" for v in free) or "    pass"
    uses = "; ".join(free) if free else "pass"
    src = (
        f"def outer():\n{outer}\n    def blocked(*args, **kwargs):\n        {uses}\n"
        f"        raise __import__('paged.exercises.guard', fromlist=['LibraryCall'])"
        f".LibraryCall({target!r})\n    return blocked\n"
    )
    namespace: dict = {}
    exec(compile(src, "<forbidden>", "exec"), namespace)
    code = namespace["outer"]().__code__
    return code.replace(co_freevars=free) if free else code


@contextlib.contextmanager
def forbidden(targets, allow=()):
    """Inside: each (label, obj) in `targets` raises LibraryCall(label); `allow` keeps its own.

    The caller catches LibraryCall where it catches the learner's other exceptions.
    """
    keep = {id(_function(a)) for a in allow if _function(a) is not None}
    swapped = []
    try:
        for label, obj in targets:
            fn = _function(obj)
            if fn is None or id(fn) in keep or any(f is fn for f, _ in swapped):
                continue
            original = fn.__code__
            fn.__code__ = _raiser(label, fn)
            swapped.append((fn, original))
        yield
    finally:
        for fn, original in reversed(swapped):
            fn.__code__ = original


def answer_targets():
    """The model answers and `solution`, as (label, function) pairs: never a shortcut."""
    from . import answers

    out = [
        ("paged.exercises.solution", answers.solution),
        ("paged.exercises.solution", answers.find),
        ("paged.exercises.solution", answers.source),
    ]
    for module in ("memory", "attention", "serving"):
        mod = __import__(f"paged.exercises.answers.{module}", fromlist=["__all__"])
        out += [("paged.exercises.solution", getattr(mod, n)) for n in mod.__all__]
    return out
