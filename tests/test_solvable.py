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
import builtins
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from paged.exercises import answers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CHAPTERS = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00"))
# The last chapter has no exercise of its own: it assembles the others' answers into the
# learner's engine (test_the_last_chapter_runs_on_every_model_answer_kept).
ENGINE_CHAPTER = NOTEBOOKS / "13_your_engine.ipynb"
CHAPTERS.remove(ENGINE_CHAPTER)
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


SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _own_nodes(scope):
    """The nodes of a function or comprehension's own scope (not those of scopes inside it)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _global_loads(tree) -> set[str]:
    """Names read at the cell's top level or, inside functions and comprehensions, not bound
    there (Python's rule: a name bound anywhere in a function is local to it unless global)."""
    out = set()

    def visit(scope, local: set[str]):
        if isinstance(scope, SCOPES):
            bound = (
                {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}
                if hasattr(scope, "args")
                and not isinstance(
                    scope, ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp
                )
                else set()
            )
            own = list(_own_nodes(scope))
            bound |= {
                n.id for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
            }
            bound |= {n.name for n in own if isinstance(n, SCOPES[:2] + (ast.ClassDef,))}
            bound -= {g for n in own if isinstance(n, ast.Global) for g in n.names}
            local = local | bound
            nodes = own
        else:
            nodes = list(_own_nodes(scope))
        for node in nodes:
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id not in local
            ):
                out.add(node.id)
            elif isinstance(node, SCOPES):
                visit(node, local)

    visit(tree, set())
    return out


def _fresh_loads(stmts, bound: set[str]) -> set[str]:
    """Names the statements read before they bind them (branches bind nothing for sure; a for
    loop's body reads its targets as bound). Binding a name the cell read first keeps it read."""
    out, bound = set(), set(bound)
    for st in stmts:
        if isinstance(st, ast.For | ast.AsyncFor):
            out |= _global_loads(st.iter) - bound
            targets = {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
            out |= _fresh_loads(st.body, bound | targets) | _fresh_loads(st.orelse, bound)
            continue
        out |= _global_loads(ast.Module(body=[st], type_ignores=[])) - bound
        if isinstance(st, ast.AugAssign):
            out |= {st.target.id} - bound if isinstance(st.target, ast.Name) else set()
        if isinstance(st, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(st, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in st.names}
        elif isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(st.name)
    return out


def _names(source: str):
    """(names read from the notebook's namespace before the cell binds them, names bound,
    whether it imports or runs magics, whether it changes state it did not bind: an attribute,
    item or global of a name from another cell or of a module, the names its imports bind)."""
    lines = source.splitlines()
    magic = any(ln.lstrip().startswith(("%", "!")) for ln in lines)
    tree = ast.parse("\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!"))))
    stores, bases, imports = set(), set(), magic
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports = True
            stores |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bases.add(None)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(
            node.ctx, ast.Load
        ):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript, ast.Call)):
                base = base.func if isinstance(base, ast.Call) else base.value
            bases.add(base.id if isinstance(base, ast.Name) else None)
    imported = {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    fresh = _fresh_loads(tree.body, set())
    return fresh, stores, imports, bool(bases - (stores - imported)), imported


def needed_cells(nb, exercises: set[str], calls: list[int]) -> dict[int, str]:
    """The code cells up to the last checker call that a solved run must execute, with the
    source to run: the whole cell, or only its imports.

    Whole: the stubs and checker calls; every cell that runs a magic; every cell that changes an
    object another cell bound (an attribute or item of it, a global) or a module's; every cell
    that binds nothing and reads only what imports bound (a set-up call: a seed, a font); every
    cell that reads an exercise's name, or a name bound by such a cell (forward); and, backward,
    every cell that binds a name a kept cell after it reads, or reads (a call may change it) such
    a name that is not a builtin, a module or an imported function (`paged` keeps no
    module-level state).
    Any other cell runs its imports alone (they set things up: Triton's interpreter, fonts). A
    name bound anywhere in a cell counts as bound by it: more cells kept, never fewer.
    """
    last = max((i for i, n in enumerate(calls) if n), default=len(nb.cells) - 1)
    code = [i for i in range(last + 1) if nb.cells[i].cell_type == "code"]
    info = {i: _names(nb.cells[i].source) for i in code}
    shared = {n for i in code for n in info[i][4]} | set(dir(builtins))  # modules, builtins
    tainted, keep = set(exercises), set()
    for i in code:
        loads, stores, _, changes, _ = info[i]
        magic = any(ln.lstrip().startswith(("%", "!")) for ln in nb.cells[i].source.splitlines())
        setup = not stores and not loads - shared
        if loads & tainted or stores & tainted or calls[i] or magic or changes or setup:
            keep.add(i)
            tainted |= stores if loads & tainted else set()
    needed: set[str] = set()
    for i in reversed(code):
        loads, stores, _, _, _ = info[i]
        if i in keep or stores & needed or (loads & needed) - shared:
            keep.add(i)
            needed |= loads
    run = {}
    for i in code:
        if i in keep:
            run[i] = nb.cells[i].source
        elif info[i][2]:
            body = ast.parse(nb.cells[i].source).body
            run[i] = "\n".join(
                ast.unparse(st) for st in body if isinstance(st, ast.Import | ast.ImportFrom)
            )
    return run


def solve(path: Path, cwd: Path = NOTEBOOKS, timeout: int = 600):
    """Execute `path` with every tagged stub replaced by its model answer.

    Returns (the exercises' names, the verdict lines printed, the number of checker calls).
    """
    nb = nbformat.read(path, as_version=4)
    tagged = exercise_cells(nb)
    for i, name in tagged:
        nb.cells[i].source = answers.source(name)
    calls = _checker_calls_per_cell(nb)
    run = needed_cells(nb, {name for _, name in tagged}, calls)
    for i, source in run.items():
        nb.cells[i].source = source
    nb.cells = [nb.cells[i] for i in run]  # nothing else can change a verdict (see above)
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
    run = needed_cells(nb, {"f"}, _checker_calls_per_cell(nb))
    assert sorted(run) == [0, 1, 2, 3, 4, 5, 6]
    assert run[3] == "import statistics"
    assert all(run[i] == cells[i] for i in (0, 1, 2, 4, 5, 6))
    nb.cells.insert(4, nbformat.v4.new_code_cell("print(f(2))"))  # reads the exercise: whole
    nb.cells.insert(4, nbformat.v4.new_code_cell("z = slow[0]"))  # nothing reads z: skipped
    run = needed_cells(nb, {"f"}, _checker_calls_per_cell(nb))
    assert 5 in run and 4 not in run


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["", "ko"])
def test_the_last_chapter_runs_on_every_model_answer_kept(edition, tmp_path, monkeypatch):
    """Chapter 13 with every model answer kept as the learner's (as a learner who solved every
    exercise would have them): every piece is the learner's, and every cell's checks hold (the
    engine equal to the course's step for step, token for token, beside vLLM's recording)."""
    from paged.exercises import workspace

    workspace.keep_model_answers(tmp_path / "ws")
    monkeypatch.setenv("PAGED_WORKSPACE", str(tmp_path / "ws"))  # the kernel inherits it
    path = NOTEBOOKS / edition / ENGINE_CHAPTER.name
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    printed = "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    mine = "13 of them are yours" if not edition else "13개 중 13개가 여러분의 것"
    assert mine in printed, printed[:2000]
