"""An answer as a file of its own: the function a checker called correct, with what it reads.

`file_text(name, fn)` is the text of the workspace file for answer `fn` to exercise `name`
(`paged.exercises.engine.workspace` keeps it): the function (or @triton.jit kernel) as typed, and above
it what it reads from the notebook's globals, found in its bytecode (`LOAD_GLOBAL`) and its
decorators: a module becomes an import, a function or class of an importable module a
`from ... import`, a helper function defined in the notebook its source (and what that reads),
a plain constant its value. Anything else (an object built in the notebook, a closure's cell)
cannot stand in a file: `CannotKeep` says which name and why.
"""

from __future__ import annotations

import ast
import datetime
import dis
import importlib
import inspect
import textwrap
import types

from ...text import msg

PACKAGE = "paged_workspace"  # the module name prefix of a loaded workspace file

NO_SOURCE = msg(
    "its source code cannot be read (define it with `def` in a cell, then run the checker again)",
    "소스 코드를 읽을 수 없습니다(셀에서 `def`로 정의한 뒤 검사를 다시 실행하세요)",
)
READS_OBJECT = msg(
    "it reads `{global_name}` ({kind}) from your notebook, which a file cannot hold; pass it as "
    "an argument or build it inside the function",
    "노트북에 있는 값을 읽습니다: `{global_name}`({kind}). 이런 값은 파일에 담을 수 없으니 인자로 "
    "받거나 함수 안에서 만드세요",
)
HEADER = msg(
    '# Your answer to `{name}`, kept by its checker on {date} when it said "correct".\n'
    "# It is yours: read it, edit it, run it. Chapter 13's engine imports this file; an edit that\n"
    "# changes what it computes is named there, at the first step where it differs.\n",
    '# `{name}`에 대한 여러분의 답. {date}에 채점기가 "정답"이라고 했을 때 보관했습니다.\n'
    "# 여러분의 것입니다. 읽고, 고치고, 실행해 보세요. 13장의 엔진이 이 파일을 불러옵니다. 계산을\n"
    "# 바꾸는 수정은 그 장에서, 처음 달라지는 단계에서 이름이 불립니다.\n",
)
# A kept kernel runs under Triton's CPU interpreter where there is no GPU, like the chapters'.
KERNEL_PREAMBLE = (
    "import paged.attention  # noqa: F401  (Triton's CPU interpreter without a GPU, set first)\n"
)


class CannotKeep(Exception):
    """Why an answer cannot stand in a file on its own (a message for the learner)."""


def _plain(fn):
    """The Python function behind fn (a @triton.jit kernel keeps it in `.fn`)."""
    return fn.fn if is_kernel(fn) else fn


def is_kernel(obj) -> bool:
    return type(obj).__module__.startswith("triton") and isinstance(
        getattr(obj, "fn", None), types.FunctionType
    )


def _source(fn) -> str:
    try:
        return textwrap.dedent(inspect.getsource(_plain(fn)))
    except (OSError, TypeError):
        raise CannotKeep(str(NO_SOURCE)) from None


def _global_names(code: types.CodeType) -> list[str]:
    """Global names the code (and the functions and comprehensions inside it) reads."""
    names = [
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    ]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _global_names(const)
    return list(dict.fromkeys(names))


def _decorator_names(source: str) -> list[str]:
    tree = ast.parse(source)
    out = []
    for node in tree.body[:1]:
        for dec in getattr(node, "decorator_list", []):
            out += [n.id for n in ast.walk(dec) if isinstance(n, ast.Name)]
    return out


def _is_constant(value) -> bool:
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return True
    if isinstance(value, (tuple, list, set, frozenset)):
        return all(map(_is_constant, value))
    if isinstance(value, dict):
        return all(_is_constant(k) and _is_constant(v) for k, v in value.items())
    return False


def _from_module(name: str, value) -> str | None:
    """`from m import x as name` for a function or class defined in an importable module."""
    module = getattr(value, "__module__", None)
    if not module or module == "__main__" or module.startswith(PACKAGE):
        return None
    try:
        if getattr(importlib.import_module(module), value.__name__, None) is not value:
            return None
    except Exception:  # a module that cannot be imported again
        return None
    alias = "" if value.__name__ == name else f" as {name}"
    return f"from {module} import {value.__name__}{alias}"


def _imports_and_helpers(fn, source: str, seen: set[str]) -> tuple[list[str], list[str]]:
    """(import and constant lines, helper sources) for what fn reads from its globals."""
    plain = _plain(fn)
    space = plain.__globals__
    lines, helpers = [], []
    for name in _global_names(plain.__code__) + _decorator_names(source):
        if name in seen or name not in space:  # a builtin, or a name it never reads
            continue
        seen.add(name)
        value = space[name]
        if isinstance(value, types.ModuleType):
            module = value.__name__
            lines.append(f"import {module}" if module == name else f"import {module} as {name}")
        elif (line := _from_module(name, value)) is not None:
            lines.append(line)
        elif isinstance(value, types.FunctionType) or is_kernel(value):
            helper = _source(value)
            more, deeper = _imports_and_helpers(value, helper, seen)
            lines += more
            helpers += [*deeper, helper]
        elif _is_constant(value) and ast.literal_eval(repr(value)) == value:
            lines.append(f"{name} = {value!r}")
        else:
            why = READS_OBJECT.format(global_name=name, kind=type(value).__name__)
            raise CannotKeep(why)
    return lines, helpers


def _import_order(line: str) -> tuple:
    return line.startswith("from "), line


def file_text(name: str, fn) -> str:
    """The workspace file of answer `fn` to exercise `name` (raises CannotKeep)."""
    source = _source(fn)
    for cell_name in _plain(fn).__code__.co_freevars:  # a function defined inside another
        why = READS_OBJECT.format(global_name=cell_name, kind="closure")
        raise CannotKeep(why)
    lines, helpers = _imports_and_helpers(fn, source, {name})
    date = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    head = HEADER.format(name=name, date=date)
    preamble = KERNEL_PREAMBLE if is_kernel(fn) else ""
    imports = sorted({ln for ln in lines if ln.startswith(("import ", "from "))}, key=_import_order)
    constants = [ln for ln in lines if not ln.startswith(("import ", "from "))]
    blocks = ["\n".join(imports), "\n".join(constants), *helpers, source]
    body = "\n\n\n".join(b.strip("\n") for b in blocks if b.strip())
    return f"{head}\n{preamble}{body}\n"
