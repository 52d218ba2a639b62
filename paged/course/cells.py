"""What a chapter's code cells do, read from their source: which cell holds which exercise, which
cells call a checker, and which cells a run that only wants the checkers' verdicts must execute.

A stub is a code cell tagged `exercise:<name>` (cell metadata "tags"); it holds only the function
(or @triton.jit kernel) named <name>. Checker calls are the calls, in code cells, of the names a
chapter imports from `paged.exercises` (`solution` aside). `needed_cells` keeps the cells up to
the last checker call that a solved run must execute (the test that solves every chapter with the
model answers, and a teacher's grading run, `paged.course.grade`, both use it).
"""

from __future__ import annotations

import ast
import builtins
import re

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


def checker_calls_per_cell(nb) -> list[int]:
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
    return sum(checker_calls_per_cell(nb))


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


def printed(nb) -> str:
    """What an executed notebook's code cells printed (their stream outputs), in order."""
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
