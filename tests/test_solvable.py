"""Every chapter is solvable as written: with its stubs replaced by the package's model answers,
it runs top to bottom in a fresh kernel and every checker it calls says "correct".

A stub is a code cell tagged `exercise:<name>` (cell metadata "tags"); it holds only the
function (or @triton.jit kernel) named <name>, and `paged.exercises.answers.source(name)` takes
its place. The committed chapters keep their stubs and their "not yet" outputs (strict nbval
checks those); this test never writes a notebook. Checker calls are the calls, in code cells, of
the names a chapter imports from `paged.exercises`; each must print one "correct" verdict. The run
stops after the last cell that calls a checker: what comes later cannot change a verdict (and
chapter 10's serving runs, which come after its exercise, are nbval's to execute). Before it, the
run skips the cells that neither the exercises nor their checkers need (`needed_cells`): chapter
4's policy comparisons, chapters 10 and 11's generations. They never see an exercise's name, so
they run the same with a stub as with an answer, and strict nbval runs them in `make test`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from paged.course.cells import (
    VERDICT,
    checker_calls,
    checker_calls_per_cell,
    exercise_cells,
    needed_cells,
    printed,
)
from paged.exercises import answers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00"))
# The last chapter has no exercise of its own: it assembles the others' answers into the
# learner's engine (test_the_last_chapter_runs_on_every_model_answer_kept).
ENGINE_CHAPTER = NOTEBOOKS / "13_your_engine.ipynb"
CHAPTERS.remove(ENGINE_CHAPTER)


def solve(path: Path, cwd: Path = NOTEBOOKS, timeout: int = 600):
    """Execute `path` with every tagged stub replaced by its model answer.

    Returns (the exercises' names, the verdict lines printed, the number of checker calls).
    """
    nb = nbformat.read(path, as_version=4)
    tagged = exercise_cells(nb)
    for i, name in tagged:
        nb.cells[i].source = answers.source(name)
    calls = checker_calls_per_cell(nb)
    run = needed_cells(nb, {name for _, name in tagged}, calls)
    for i, source in run.items():
        nb.cells[i].source = source
    nb.cells = [nb.cells[i] for i in run]  # nothing else can change a verdict (see above)
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()
    text = printed(nb)
    verdicts = [m.group(0) for m in VERDICT.finditer(text)]
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


def test_the_solved_run_skips_only_what_no_exercise_or_checker_needs():
    cells = [
        "import os\nimport paged\nos.environ['X'] = '1'",  # 0 changes a module: whole
        "paged.use_seed(0)",  # 1 binds nothing, reads only imports: whole
        "data = paged.big(1)\nprint(data)",  # 2 read by 4 (as the checker's input): whole
        "import statistics\nslow = paged.big(2)\nfor r in slow: print(r)",  # 3 imports alone
        "data.sort()",  # 4 may change `data`, which 6 reads: whole
        "def f(x):\n    return x",  # 5 the stub
        "from paged.exercises import check_f\ncheck_f(f, data)",  # 6 the checker call
        "y = f(1)",  # 7 after the last checker call: not run
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    run = needed_cells(nb, {"f"}, checker_calls_per_cell(nb))
    assert sorted(run) == [0, 1, 2, 3, 4, 5, 6]
    assert run[3] == "import statistics"
    assert all(run[i] == cells[i] for i in (0, 1, 2, 4, 5, 6))
    nb.cells.insert(4, nbformat.v4.new_code_cell("print(f(2))"))  # reads the exercise: whole
    nb.cells.insert(4, nbformat.v4.new_code_cell("z = slow[0]"))  # nothing reads z: skipped
    run = needed_cells(nb, {"f"}, checker_calls_per_cell(nb))
    assert 5 in run and 4 not in run


@pytest.mark.slow
def test_the_last_chapter_runs_on_every_model_answer_kept(tmp_path, monkeypatch):
    """Chapter 13 with every model answer kept as the learner's (as a learner who solved every
    exercise would have them): every piece is the learner's, and every cell's checks hold (the
    engine equal to the course's step for step, token for token, beside vLLM's recording).
    The Korean edition runs the same code cells (`paged.course.editions`) under strict nbval."""
    from paged.exercises.engine import workspace

    workspace.keep_model_answers(tmp_path / "ws")
    monkeypatch.setenv("PAGED_WORKSPACE", str(tmp_path / "ws"))  # the kernel inherits it
    path = ENGINE_CHAPTER
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    text = printed(nb)
    assert "13 of them are yours" in text, text[:2000]
