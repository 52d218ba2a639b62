"""The learner's workspace: every answer a checker called correct, kept as a file of their own.

When a checker says "correct", `keep(name, fn)` writes the answer into `folder()` as `<name>.py`:
the function (or @triton.jit kernel) as typed, with what it reads from the notebook written above
it (the modules it uses as imports, helper functions as source, plain constants as values), so
the file imports on its own. A newer correct answer replaces it (the older file moves to
`.previous/`); a wrong answer never does. `load(name)` imports it again: chapter 13's engine
(`paged.learner`) is assembled from these files, so a learner can read and edit what runs there.

Where: `$PAGED_WORKSPACE`, else `workspace/` in the course's checkout (beside `notebooks/`), else
`paged_workspace/` in the current folder (Colab's /content; point `PAGED_WORKSPACE` at a mounted
Drive folder to keep it across sessions). `PAGED_WORKSPACE=off` keeps nothing (the tests, a
teacher's grading run).
"""

from __future__ import annotations

import ast
import datetime
import dis
import importlib.util
import inspect
import os
import sys
import textwrap
import types
from pathlib import Path

from ..text import msg

# The pieces of the learner's engine (chapter 13), in the order the chapters teach them.
ENGINE_PIECES = (
    "first_fit",
    "slot",
    "append_slot",
    "gather",
    "decode_one_head",
    "online_softmax_kernel",
    "write_slot",
    "pick_victims",
    "admit",
    "block_hashes",
    "computed_blocks",
    "free_blocks",
    "take_blocks",
)
OFF = "off"
PACKAGE = "paged_workspace"  # the module name prefix of a loaded file

KEPT = msg(
    "{name}: kept in your workspace as {path}",
    "{name}: 여러분의 작업 공간에 보관했습니다: {path}",
)
KEPT_PIECE = msg(
    "{name}: kept in your workspace as {path} ({mine} of the engine's {total} pieces are yours now)",
    "{name}: 여러분의 작업 공간에 보관했습니다: {path} (엔진 부품 {total}개 중 {mine}개가 이제 "
    "여러분의 것입니다)",
)
NOT_KEPT = msg(
    "{name}: correct, but not kept in your workspace: {why}",
    "{name}: 정답이지만 작업 공간에 보관하지 못했습니다: {why}",
)
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
UNWRITABLE = msg(
    "{folder} cannot be written ({error}); set PAGED_WORKSPACE to a folder you can write",
    "{folder}에 쓸 수 없습니다({error}). PAGED_WORKSPACE를 쓸 수 있는 폴더로 정하세요",
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


class WorkspaceError(Exception):
    """A workspace file that cannot serve: it does not import, or lacks its function."""


def folder() -> Path | None:
    """Where answers are kept (module docstring); None when `PAGED_WORKSPACE=off`."""
    where = os.environ.get("PAGED_WORKSPACE", "")
    if where.strip().lower() == OFF:
        return None
    if where:
        return Path(where).expanduser()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "notebooks").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "workspace"
    return Path.cwd() / "paged_workspace"


def path_of(name: str, where: Path | None = None) -> Path | None:
    where = folder() if where is None else where
    return None if where is None else where / f"{name}.py"


def kept(where: Path | None = None) -> list[str]:
    """The exercises whose answers are kept, by name."""
    where = folder() if where is None else where
    if where is None or not where.is_dir():
        return []
    return sorted(p.stem for p in where.glob("*.py") if p.stem.isidentifier())


# ---- keeping ---------------------------------------------------------------------------------
class CannotKeep(Exception):
    """Why an answer cannot stand in a file on its own (a message for the learner)."""


def _plain(fn):
    """The Python function behind fn (a @triton.jit kernel keeps it in `.fn`)."""
    return fn.fn if _is_kernel(fn) else fn


def _is_kernel(obj) -> bool:
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
        elif isinstance(value, types.FunctionType) or _is_kernel(value):
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
    preamble = KERNEL_PREAMBLE if _is_kernel(fn) else ""
    imports = sorted({ln for ln in lines if ln.startswith(("import ", "from "))}, key=_import_order)
    constants = [ln for ln in lines if not ln.startswith(("import ", "from "))]
    blocks = ["\n".join(imports), "\n".join(constants), *helpers, source]
    body = "\n\n\n".join(b.strip("\n") for b in blocks if b.strip())
    return f"{head}\n{preamble}{body}\n"


def shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def keep(name: str, fn) -> Path | None:
    """Keep `fn`, a correct answer to `name`, in the workspace; print one line saying where (or
    why not). The older answer moves to `.previous/`. None when nothing was written."""
    where = folder()
    if where is None:
        return None
    try:
        text = file_text(name, fn)
    except CannotKeep as why:
        print(NOT_KEPT.format(name=name, why=why))
        return None
    path = where / f"{name}.py"
    try:
        where.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.read_text() != text:
            (where / ".previous").mkdir(exist_ok=True)
            path.replace(where / ".previous" / path.name)
        path.write_text(text)
    except OSError as error:
        why = UNWRITABLE.format(folder=shown(where), error=error.strerror or error)
        print(NOT_KEPT.format(name=name, why=why))
        return None
    if name in ENGINE_PIECES:
        mine = sum(p in ENGINE_PIECES for p in kept(where))
        print(KEPT_PIECE.format(name=name, path=shown(path), mine=mine, total=len(ENGINE_PIECES)))
    else:
        print(KEPT.format(name=name, path=shown(path)))
    return path


def keep_model_answers(where: Path, names=ENGINE_PIECES) -> None:
    """The course's model answers to `names`, kept in `where` as a learner's checkers would keep
    them (a learner who solved every exercise: the tests, the benchmark)."""
    from .answers import find

    where.mkdir(parents=True, exist_ok=True)
    for name in names:
        (where / f"{name}.py").write_text(file_text(name, find(name)))


# ---- loading ---------------------------------------------------------------------------------
DOES_NOT_IMPORT = msg(
    "{path}, line {line}: your kept `{name}` does not import ({error}). Fix the file, or run the "
    "exercise's checker again to write it anew.",
    "{path}, {line}번째 줄: 보관한 `{name}` 파일을 불러올 수 없습니다({error}). 파일을 고치거나, "
    "연습 문제의 채점기를 다시 실행해 새로 쓰세요.",
)
NO_FUNCTION = msg(
    "{path} defines no `{name}`: the engine calls the function of that name. Rename it back, or "
    "run the exercise's checker again to write the file anew.",
    "{path}에는 `{name}` 함수가 정의되어 있지 않습니다. 엔진은 그 이름의 함수를 부릅니다. 이름을 "
    "되돌리거나, 연습 문제의 채점기를 다시 실행해 파일을 새로 쓰세요.",
)


def load(name: str, where: Path | None = None):
    """The kept answer to `name` (a function or kernel), imported from its file; None if none is
    kept. Raises WorkspaceError naming the file and line when the file does not serve."""
    path = path_of(name, where)
    if path is None or not path.is_file():
        return None
    module_name = f"{PACKAGE}.{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # Triton reads a kernel's source through its module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        sys.modules.pop(module_name, None)
        line = getattr(error, "lineno", None) or _line_in(error, path)
        raise WorkspaceError(
            DOES_NOT_IMPORT.format(
                path=shown(path), line=line, name=name, error=f"{type(error).__name__}: {error}"
            )
        ) from None
    fn = getattr(module, name, None)
    if fn is None or not (callable(fn) or _is_kernel(fn)):
        raise WorkspaceError(NO_FUNCTION.format(path=shown(path), name=name))
    return fn


def _line_in(error: Exception, path: Path):
    """The line of `path` where `error` was raised (its traceback's last frame there)."""
    line = "?"
    tb = error.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
