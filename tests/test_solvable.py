"""Every chapter is solvable as written: with its stubs replaced by the package's model answers,
it runs top to bottom in a fresh kernel and every checker it calls says "correct".

A stub is a code cell tagged `exercise:<name>` (cell metadata "tags"); it holds only the
function (or @triton.jit kernel) named <name>, and `paged.exercises.answers.source(name)` takes
its place. The committed chapters keep their stubs and their "not yet" outputs (strict nbval
checks those); this test never writes a notebook. Checker calls are the calls, in code cells, of
the names a chapter imports from `paged.exercises`; each must print one "correct" verdict. The run
stops after the last cell that calls a checker: what comes later cannot change a verdict (and
chapter 10's serving runs, which come after its exercise, are nbval's to execute).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from paged.exercises import answers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00"))
TAG = "exercise:"
VERDICT = re.compile(
    r"^(\w+): (correct|not yet|not quite|you returned nothing|your kernel did not run)\b", re.M
)


def exercise_cells(nb) -> list[tuple[int, str]]:
    """(cell index, exercise name) of every code cell tagged `exercise:<name>`."""
    out = []
    for i, cell in enumerate(nb.cells):
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith(TAG):
                assert cell.cell_type == "code", f"cell {i} is tagged {tag!r} but is not code"
                out.append((i, tag.removeprefix(TAG)))
    return out


def _checker_calls_per_cell(nb) -> list[int]:
    """Per cell: calls of the names imported from paged.exercises (except `solution`)."""
    trees = []
    for cell in nb.cells:
        source = cell.source if cell.cell_type == "code" else ""
        lines = source.splitlines()  # IPython's %magics and !commands are not Python
        trees.append(
            ast.parse("\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!"))))
        )
    names = {
        alias.asname or alias.name
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "paged.exercises"
        for alias in node.names
    } - {"solution"}
    return [
        sum(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
            for node in ast.walk(tree)
        )
        for tree in trees
    ]


def checker_calls(nb) -> int:
    """Calls, in code cells, of the names imported from paged.exercises (except `solution`)."""
    return sum(_checker_calls_per_cell(nb))


def solve(path: Path, cwd: Path = NOTEBOOKS, timeout: int = 600):
    """Execute `path` with every tagged stub replaced by its model answer.

    Returns (the exercises' names, the verdict lines printed, the number of checker calls).
    """
    nb = nbformat.read(path, as_version=4)
    tagged = exercise_cells(nb)
    for i, name in tagged:
        nb.cells[i].source = answers.source(name)
    calls = _checker_calls_per_cell(nb)
    last = max((i for i, n in enumerate(calls) if n), default=len(nb.cells) - 1)
    nb.cells = nb.cells[: last + 1]  # nothing after the last checker call changes a verdict
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()
    printed = "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    verdicts = [m.group(0) for m in VERDICT.finditer(printed)]
    return [name for _, name in tagged], verdicts, checker_calls(nb)


def test_there_are_chapters_to_solve():
    assert len(CHAPTERS) >= 8, [p.name for p in CHAPTERS]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stub_cells_hold_one_function_named_as_their_exercise(path):
    """The conventions the solvability test relies on (passes for chapters without tags yet)."""
    nb = nbformat.read(path, as_version=4)
    for i, name in exercise_cells(nb):
        body = ast.parse(nb.cells[i].source).body
        defs = [n for n in body if isinstance(n, ast.FunctionDef)]
        assert len(body) == 1 and defs and defs[0].name == name, (
            f"{path.name} cell {i}: a cell tagged exercise:{name} must hold only `def {name}(...)`"
        )
        answers.find(name)  # a model answer exists (ValueError names the known ones if not)
        later = [  # a cell that only tries the kernel (try_kernel) may stand between
            c
            for c in nb.cells[i + 1 :]
            if c.cell_type == "code" and not re.search(r"^try_kernel\(", c.source, re.M)
        ]
        assert later and re.search(rf"\bcheck_\w+\(\s*{name}\s*\)", later[0].source), (
            f"{path.name} cell {i}: the next code cell must hand {name} to its checker"
        )


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_is_solvable_with_the_model_answers(path):
    nb = nbformat.read(path, as_version=4)
    assert exercise_cells(nb), (
        f"{path.name} has no cell tagged 'exercise:<name>': every chapter from 1 on needs at "
        "least one exercise in which the learner writes code"
    )
    names, verdicts, calls = solve(path)
    bad = [v for v in verdicts if not v.endswith(": correct")]
    assert not bad, f"{path.name} with the model answers for {names}: {bad}"
    assert calls >= len(names), f"{path.name}: exercises {names} but {calls} checker calls"
    assert len(verdicts) == calls, (
        f"{path.name}: {calls} checker calls but {len(verdicts)} verdicts: {verdicts}"
    )
