"""No shortcut through the library: while a learner's function runs, what it should write raises.

An exercise asks the learner to write something the library already has (`gather_kv`,
`Scheduler.schedule`, torch's SDPA, ...). A checker computes its expectations first, then runs the
learner's function inside `forbidden(targets)`, where a target is one of:
- `(label, function)`: that function (a method, property or @triton.jit kernel too);
- `"paged.scheduler"`: a module's whole surface, every function, method and property defined
  there, private ones included, and its classes' constructors (other dunder methods excepted:
  comparing or printing a record is no shortcut), however the learner reaches it (another name,
  an instance, a helper);
- an `Ops` group (`SDPA`, `MHA`, `SOFTMAX`): torch operators, however they are reached
  (`torch.nn.functional`, `torch._C._nn`, `torch.ops.aten`, a method, a decomposition).
The model answers (`answer_targets`, every function in `answers/`) are always forbidden.
A function raises `LibraryCall` naming it: its code object is swapped, so every reference to it
is covered (`from paged.attention.reference import gather_kv` done at the top of a chapter, a
bound method); operators raise from a `TorchFunctionMode` and a `TorchDispatchMode` (the first
sees a composite operator before it decomposes, the second an operator however it was called).
Every call is also recorded, so a learner's `try/except` does not hide it. Whatever happens
inside, every function gets its own code back and the modes are popped (try/finally).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import pkgutil
import types
from dataclasses import dataclass

from ...text import Message, msg

__all__: list[str] = []  # used by the checkers

CALLED = msg(
    "{name}: not quite: your function calls {target}, the library's own code for what this "
    "exercise asks you to write yourself.",
    "{name}: 아직 아닙니다. 함수 안에서 {target} 호출이 보입니다. 이 연습에서 직접 작성해야 하는 "
    "부분을 라이브러리가 구현한 코드입니다.",
)
SOLUTION = "paged.exercises.solution"
# The forbidden calls made inside the innermost `forbidden`, in order (None outside).
_CALLS: contextvars.ContextVar[list | None] = contextvars.ContextVar("calls", default=None)


class LibraryCall(Exception):
    """Raised by a forbidden library function while a learner's function runs."""

    def __init__(self, target: str):
        super().__init__(f"this calls {target}: the exercise is to write it")
        self.target = target
        calls = _CALLS.get()
        if calls is not None:
            calls.append(target)


@dataclass(frozen=True)
class Ops:
    """Torch operators blocked as one (by their aten name; a name ending in * is a prefix)."""

    label: Message
    names: tuple[str, ...]

    def matches(self, name: str) -> bool:
        """Whether the operator `name` ("aten::_softmax.default", "softmax") is one of these."""
        name = name.split("::")[-1].split(".")[0]
        return any(name.startswith(n[:-1]) if n.endswith("*") else name == n for n in self.names)


SDPA = Ops(
    msg(
        "torch's scaled_dot_product_attention (SDPA)", "torch의 scaled_dot_product_attention(SDPA)"
    ),
    # every backend, CUDA's too: reached through torch.ops.aten, they skip the dispatcher's choice
    (
        "scaled_dot_product_attention",
        "_scaled_dot_product_*",
        "_flash_attention_*",
        "_efficient_attention_*",
    ),
)
MHA = Ops(  # nn.MultiheadAttention: with need_weights, a softmax of its own, no SDPA
    msg(
        "torch's multi-head attention (nn.MultiheadAttention)",
        "torch의 멀티헤드 어텐션(nn.MultiheadAttention)",
    ),
    ("multi_head_attention_forward", "_native_multi_head_attention"),
)
SOFTMAX = Ops(
    msg("torch's softmax", "torch의 softmax"),
    ("softmax", "_softmax", "_safe_softmax", "log_softmax", "_log_softmax", "softmin"),
)


def function_of(obj):
    """The plain function behind obj (a function, method, property or @triton.jit kernel)."""
    if isinstance(obj, property):
        obj = obj.fget
    elif isinstance(obj, functools.cached_property):
        obj = obj.func
    elif type(obj).__module__.startswith("triton") and hasattr(obj, "fn"):
        obj = obj.fn  # under the interpreter, the kernel runs this function
    obj = getattr(obj, "__func__", obj)  # a bound, static or class method
    return obj if isinstance(obj, types.FunctionType) else None


def _members(key: str, cls: type):
    """(label, member) of a class: its constructor (labelled as the class) and every method or
    property but the other dunders (comparing or printing a record is no shortcut)."""
    for k, v in vars(cls).items():
        if k in ("__init__", "__post_init__"):
            yield key, v
        elif not (k.startswith("__") and k.endswith("__")):
            yield f"{key}.{k}", v


@functools.cache
def module_targets(name: str) -> tuple:
    """(label, function) for every function, method and property defined in module `name`."""
    module = importlib.import_module(name)
    out = []
    for key, obj in vars(module).items():
        members = [(key, obj)]
        if isinstance(obj, type) and obj.__module__ == name:
            members = list(_members(key, obj))
        for label, member in members:
            fn = function_of(member)
            if fn is not None and fn.__module__ == name and not label.startswith("__"):
                out.append((f"{name}.{label}", fn))
    return tuple(out)


@functools.cache
def _raiser(target: str, free: tuple[str, ...]) -> types.CodeType:
    """A code object that raises LibraryCall(target), with the free variables `free`."""
    outer = "\n".join(f"    {v} = None" for v in free) or "    pass"
    uses = "; ".join(free) if free else "pass"
    src = (
        f"def outer():\n{outer}\n    def blocked(*args, **kwargs):\n        {uses}\n"
        f"        raise __import__('paged.exercises.engine.guard', fromlist=['LibraryCall'])"
        f".LibraryCall({target!r})\n    return blocked\n"
    )
    namespace: dict = {}
    exec(compile(src, "<forbidden>", "exec"), namespace)
    code = namespace["outer"]().__code__
    return code.replace(co_freevars=free) if free else code


def _ops_guard(groups):
    """A context in which the operators of `groups` raise LibraryCall naming their group."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    def check(func):
        name = getattr(func, "__name__", "") or ""
        for group in groups:
            if group.matches(name):
                raise LibraryCall(str(group.label))

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            check(func)
            return func(*args, **(kwargs or {}))

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            check(func.overloadpacket)
            return func(*args, **(kwargs or {}))

    stack = contextlib.ExitStack()
    stack.enter_context(Functions())
    stack.enter_context(Dispatch())
    return stack


def _expand(targets):
    """(functions as (label, function) pairs, Ops groups) of forbid entries (module docstring)."""
    functions, groups = [], []
    for target in targets:
        if isinstance(target, Ops):
            groups.append(target)
        elif isinstance(target, str):
            try:
                functions += module_targets(target)
            except ImportError:  # Triton's modules where Triton does not install: no call either
                continue
        else:
            functions.append(target)
    return functions, groups


@contextlib.contextmanager
def forbidden(targets, allow=()):
    """Inside: each target (module docstring) raises LibraryCall; `allow` keeps its own.

    Yields the list of forbidden calls made inside (a call the learner's code caught included).
    The caller catches LibraryCall where it catches the learner's other exceptions.
    """
    functions, groups = _expand(targets)
    keep = {id(function_of(a)) for a in allow if function_of(a) is not None}
    outer = _CALLS.get()
    calls = [] if outer is None else outer
    token = _CALLS.set(calls)
    swapped = []
    try:
        with contextlib.ExitStack() as stack:
            for label, obj in functions:
                fn = function_of(obj)
                if fn is None or id(fn) in keep:
                    continue
                keep.add(id(fn))  # the first label of a function is its own
                original = fn.__code__
                fn.__code__ = _raiser(label, fn.__code__.co_freevars)
                swapped.append((fn, original))
            if groups:
                stack.enter_context(_ops_guard(groups))
            yield calls
    finally:
        for fn, original in reversed(swapped):
            fn.__code__ = original
        _CALLS.reset(token)


def answer_targets():
    """The model answers and `solution`: every function in the answers package, as (label, fn)."""
    from .. import answers

    out = [(SOLUTION, fn) for _, fn in module_targets(answers.__name__)]
    for info in pkgutil.iter_modules(answers.__path__):
        try:
            functions = module_targets(f"{answers.__name__}.{info.name}")
        except (ImportError, RuntimeError):  # Triton's answers where Triton cannot load: kernels
            continue  # only, which no plain function can call
        out += [(SOLUTION, fn) for _, fn in functions]
    return out
