"""The house: what each part of `paged` may import. Data and dependencies flow one way.

Levels, lowest first; a module imports only from its own level or below, and no module imports
itself back through a circle. Function-level imports count too (they are still arrows).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGED = ROOT / "paged"

# (level, module-name prefixes). The taught modules sit at the top of paged/; the packages beside
# them build on them; drawings sit above what they draw; course tooling above everything.
LEVELS = [
    (0, ("paged.errors", "paged.text", "paged.facts", "paged.progress")),
    (
        1,
        (
            "paged.kv",
            "paged.workloads",
            "paged.contiguous",
            "paged.paging",
            "paged.trace",
            "paged.step",
            "paged.sequence",
            "paged.pool",
            "paged.scheduler_config",
            "paged.scheduler_options",
            "paged.prefill",
            "paged.admission",
            "paged.prefix_cache",
            "paged.block_pool",
        ),
    ),
    (2, ("paged.scheduler",)),
    (3, ("paged.simulator", "paged.experiments", "paged.preemption_cost")),
    (4, ("paged.attention",)),
    (5, ("paged.model", "paged.exercises", "paged.gpu")),
    (
        6,
        ("paged.engines", "paged.learner"),
    ),  # engines beside the course's: real ones, the learner's
    (7, ("paged.viz",)),
    (8, ("paged.course",)),
    (9, ("paged",)),  # the package itself: importing from it runs everything
]
TAUGHT = {
    "kv",
    "workloads",
    "contiguous",
    "paging",
    "trace",
    "step",
    "sequence",
    "pool",
    "admission",
    "prefix_cache",
    "block_pool",
    "scheduler_config",
    "scheduler_options",
    "prefill",
    "scheduler",
    "simulator",
    "preemption_cost",
    "facts",
    "errors",
    "text",
    "progress",
}
PACKAGES = {"attention", "model", "exercises", "viz", "gpu", "engines", "learner", "course"}
PACKAGES |= {"experiments"}  # one module per chapter that runs one


def level(module: str) -> int:
    best = max(
        (p for _, ps in LEVELS for p in ps if module == p or module.startswith(p + ".")),
        key=len,
        default=None,
    )
    if best is None:
        raise AssertionError(f"{module} has no level: add it to LEVELS")
    return next(lv for lv, ps in LEVELS if best in ps)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """`paged` modules `path` imports, anywhere in it (relative imports resolved)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("paged")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            if name.startswith("paged"):  # `from X import a`: X.a if that is a module, else X
                out |= {
                    f"{name}.{a.name}" if _is_module(f"{name}.{a.name}") else name
                    for a in node.names
                }
    return {m for m in out if _is_module(m)} - {me}


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


MODULES = {module_name(p): p for p in sorted(PAGED.rglob("*.py"))}
GRAPH = {m: imports(p) for m, p in MODULES.items()}


def test_top_of_paged_holds_the_taught_modules_and_the_packages():
    top = {p.stem for p in PAGED.glob("*.py")} - {"__init__"}
    assert top == TAUGHT
    assert {p.name for p in PAGED.iterdir() if (p / "__init__.py").exists()} == PACKAGES


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if not m.endswith("__init__") and m != "paged"), ids=str
)
def test_no_import_runs_back_up(module):
    # A package's __init__ may re-export what lies inside it, and paged/__init__ everything.
    up = sorted(m for m in GRAPH[module] if level(m) > level(module))
    assert not up, f"{module} (level {level(module)}) imports higher modules: {up}"


def test_no_circles():
    seen, stack = set(), []

    def visit(m):
        if m in stack:
            raise AssertionError(" -> ".join(stack[stack.index(m) :] + [m]))
        if m in seen:
            return
        stack.append(m)
        for n in GRAPH.get(m, ()):
            if not (n == "paged" or MODULES[n].name == "__init__.py"):  # re-exports excluded
                visit(n)
        stack.pop()
        seen.add(m)

    for m in GRAPH:
        visit(m)


@pytest.mark.parametrize("path", sorted(PAGED.rglob("*.py")), ids=lambda p: p.name)
def test_modules_say_what_they_are_for(path):
    """Every module opens with a docstring (purpose, references), DESIGN's style."""
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree), f"{path} has no module docstring"


def test_a_name_is_imported_from_the_module_that_defines_it():
    """No module hands out another module's names: no module-level __getattr__ and no `__all__` naming what the module only imports (a package's __init__ aside, and the
    exercises' topic modules: each lists its chapters' checkers for `paged.exercises`)."""
    topics = {PAGED / "exercises" / f"{n}.py" for n in ("attention", "basics", "kernels")}
    topics |= {PAGED / "exercises" / f"{n}.py" for n in ("block_pool", "memory")}
    for path in sorted(PAGED.rglob("*.py")):
        tree, name = ast.parse(path.read_text()), path.relative_to(ROOT).as_posix()
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        assert "__getattr__" not in defined, f"{name}: a module __getattr__"
        if path.name == "__init__.py" or path in topics:
            continue
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            defined |= {t.id for t in targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
        exported = []
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                exported = ast.literal_eval(node.value)
        assert set(exported) <= defined, f"{name} re-exports {sorted(set(exported) - defined)}"


def test_nothing_in_paged_imports_the_course_tooling():
    users = sorted(
        m
        for m, deps in GRAPH.items()
        if not m.startswith("paged.course") and any(d.startswith("paged.course") for d in deps)
    )
    assert not users, f"course/ is the top floor, yet these import it: {users}"


def test_attention_holds_the_kernel_its_launcher_tiles_and_reference():
    """The GPU harness (benchmarks, AOT, the GPU check) lives in paged/gpu/."""
    names = {p.stem for p in (PAGED / "attention").glob("*.py")} - {"__init__"}
    harness = {p.stem for p in (PAGED / "gpu").glob("*.py")}
    assert not names & harness
    assert not {n for n in names if "bench" in n or "gpu" in n or n == "aot"}


# Modules past the course's 300 lines, each waiting on the issue that reshapes it; none may grow.
LONG_MODULES = {
    "paged/exercises/engine/verdicts.py": 514,  # the checkers' engine (issue 48: one engine, one Spec)
    "paged/exercises/prefix.py": 366,  # chapter 11's specs (issue 48: one module per chapter)
    "paged/exercises/engine/core.py": 318,  # the checkers' engine (issue 48)
    "paged/attention/kernel.py": 440,  # the kernel near the memory floor (issue 51, on a GPU)
}


def test_a_module_holds_one_concept_in_300_lines():
    too_long = {}
    for path in sorted(PAGED.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > LONG_MODULES.get(name, 300):
            too_long[name] = lines
    assert not too_long, f"split by what each holds: {too_long}"
