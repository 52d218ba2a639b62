"""The spec is the contract: arguments stay the caller's, answers have the type the spec names.

`snapshot(x)` turns an argument (lists, dicts, tensors, arrays, an allocator object's state) into
plain data that compares by value, so a checker can tell which argument a function changed.
The type checks accept every valid form of an answer (an int or a NumPy integer where an int is
asked; any real number, NumPy float32 included, where a float is) and name what is wrong with
the others (a float where an int is asked, a tensor of another dtype than its input's).
"""

from __future__ import annotations

import numbers

from ...text import msg

__all__: list[str] = []  # used by the checkers

CHANGED = msg(
    "{name}: not quite: for {case} your function changed its argument `{arg}`: it belongs to the "
    "caller and must come back as it went in.",
    "{name}: 아직 아닙니다. {case}일 때 함수가 인자 `{arg}`의 내용을 바꿨습니다. 인자는 호출한 "
    "쪽의 것이므로 받은 그대로 남아 있어야 합니다.",
)
NOT_INT = msg(
    "{got} is a {kind}; the spec asks for an int",
    "{got}의 타입은 {kind}입니다. 명세가 요구하는 타입은 int입니다",
)
NOT_REAL = msg(
    "{got} is a {kind}; the spec asks for a number",
    "{got}의 타입은 {kind}입니다. 명세가 요구하는 것은 숫자입니다",
)
NOT_TENSOR = msg(
    "the answer is a {kind}; the spec asks for a torch.Tensor",
    "답의 타입이 {kind}입니다. 명세가 요구하는 타입은 torch.Tensor입니다",
)
WRONG_DTYPE = msg(
    "the answer is a tensor of dtype {got}; its input is {want}, and the answer keeps that dtype",
    "답은 dtype이 {got}인 텐서입니다. 입력의 dtype은 {want}이고, 답도 그 dtype을 유지해야 합니다",
)
BREAKS = msg(
    "{name}: not quite: for {case} the values are right, but {why}.",
    "{name}: 아직 아닙니다. {case}일 때 값은 맞지만, 답이 명세와 다릅니다: {why}.",
)


def snapshot(x, depth: int = 0):
    """Plain, comparable data for x: what a function could have changed in it."""
    if depth > 8:
        return repr(x)
    kind = type(x).__name__
    if hasattr(x, "detach") and hasattr(x, "dtype"):  # a torch.Tensor, without importing torch
        t = x.detach().cpu().contiguous()
        return (
            "tensor",
            str(t.dtype),
            tuple(t.shape),
            t.view(-1).view(dtype=_bytes(t)).tolist() if t.numel() else (),
        )
    if hasattr(x, "tobytes") and hasattr(x, "dtype"):  # a NumPy array
        return ("array", str(x.dtype), tuple(x.shape), x.tobytes())
    if isinstance(x, float):
        return ("float", repr(x))  # NaN equals NaN here
    if isinstance(x, str | bytes | int | bool | type(None) | numbers.Number):
        return x
    if isinstance(x, dict):
        items = [(snapshot(k, depth + 1), snapshot(v, depth + 1)) for k, v in x.items()]
        return ("dict", sorted(items, key=repr))
    if isinstance(x, list | tuple):
        return (kind, [snapshot(v, depth + 1) for v in x])
    if isinstance(x, set | frozenset):
        return (kind, sorted((snapshot(v, depth + 1) for v in x), key=repr))
    state = getattr(x, "__dict__", None)
    if state is None and hasattr(x, "__slots__"):
        state = {s: getattr(x, s, None) for s in x.__slots__}
    if state is not None:
        return (kind, snapshot(dict(state), depth + 1))
    return (kind, repr(x))


def _bytes(t):
    import torch

    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]


def changed(before, after, params, mutable=()) -> str | None:
    """The name of the first argument (not in `mutable`) whose snapshot differs, or None."""
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        name = params[i] if params and i < len(params) else f"#{i + 1}"
        if name not in mutable and i not in mutable and b != snapshot(a):
            return name
    return None


def integer(value) -> str | None:
    """None for an int (or a NumPy integer); else why not."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return None
    return NOT_INT.format(got=short(value, 60), kind=type(value).__name__)


def real(value) -> str | None:
    """None for a real number (int, float, NumPy float32 ...), bools aside; else why not."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return None
    return NOT_REAL.format(got=short(value, 60), kind=type(value).__name__)


def optional_integer(value) -> str | None:
    """None for None or an int."""
    return None if value is None else integer(value)


def tensor_of(dtype):
    """A contract: a torch.Tensor of `dtype`."""

    def check(value) -> str | None:
        if not (hasattr(value, "dtype") and hasattr(value, "detach")):
            return NOT_TENSOR.format(kind=type(value).__name__)
        if value.dtype != dtype:
            return WRONG_DTYPE.format(got=value.dtype, want=dtype)
        return None

    return check


def each(check):
    """A contract on every item of a list or tuple."""

    def all_items(value) -> str | None:
        return next((why for v in value if (why := check(v))), None)

    return all_items


def short(value, limit: int = 120) -> str:
    """repr, cut to `limit` characters (tensors can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
