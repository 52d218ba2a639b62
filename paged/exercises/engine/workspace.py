"""The learner's workspace: every answer a checker called correct, kept as a file of their own.

When a checker says "correct", `keep(name, fn)` writes the answer into `folder()` as `<name>.py`:
the function (or @triton.jit kernel) as typed, with what it reads from the notebook written above
it (`answer_file.file_text`), so the file imports on its own. A newer correct answer replaces it (the older file moves to
`.previous/`); a wrong answer never does. `load(name)` imports it again: chapter 13's engine
(`paged.learner`) is assembled from these files, so a learner can read and edit what runs there.

Where: `$PAGED_WORKSPACE`, else `workspace/` in the course's checkout (beside `notebooks/`), else
`paged_workspace/` in the current folder (Colab's /content; point `PAGED_WORKSPACE` at a mounted
Drive folder to keep it across sessions). `PAGED_WORKSPACE=off` keeps nothing (the tests, a
teacher's grading run).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from ...text import msg
from .answer_file import PACKAGE, CannotKeep, file_text, is_kernel

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
UNWRITABLE = msg(
    "{folder} cannot be written ({error}); set PAGED_WORKSPACE to a folder you can write",
    "{folder}에 쓸 수 없습니다({error}). PAGED_WORKSPACE를 쓸 수 있는 폴더로 정하세요",
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
    from ..answers import find

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
    if fn is None or not (callable(fn) or is_kernel(fn)):
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
