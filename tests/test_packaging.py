"""pyproject: the library needs what it imports, tools live in extras; environment.yml agrees."""

import ast
import re
import sys
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}  # conda-forge name -> PyPI name
# import name -> PyPI name, where they differ
IMPORT_NAMES = {"PIL": "pillow", "IPython": "ipython"}


def _split(spec: str) -> tuple[str, str]:
    spec = spec.split(";")[0].split("#")[0].replace(" ", "")
    name, version = re.match(r"([A-Za-z0-9_.\-]+)(.*)", spec).groups()
    return CONDA_NAMES.get(name.lower(), name.lower()), version


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {IMPORT_NAMES.get(n, n) for n in names - set(sys.stdlib_module_names) - {"paged"}}


def test_dependencies_are_what_paged_imports():
    """Core = the library's imports (Colab has them all); a dev tool's imports live in extras."""
    # Tools that make and sync notebooks (`make notebooks`, `make ko`), never imported by a chapter,
    # the GPU check's pytest plugin (`make gpu-check`), the real model (the `model` extra: its
    # chapter installs it) and the real engines (which also run in an environment of their own).
    course = ROOT / "paged" / "course"
    model = (ROOT / "paged" / "model").rglob("*.py")
    gpu_tests = ROOT / "paged" / "gpu" / "pytest_plugin.py"
    engines = (ROOT / "paged" / "engines").rglob("*.py")
    grading = course / "grade.py"  # a teacher runs it where the course is installed for tests
    tools = {course / "runner.py", course / "editions.py", grading, gpu_tests, *model, *engines}
    # vLLM's child runs in vLLM's own environment (`make vllm-venv`), a script beside its checks
    child = {ROOT / "paged" / "engines" / n for n in ("vllm_child.py", "vllm_engine_checks.py")}
    assert set().union(*map(_third_party_imports, child)) == {
        *("vllm", "torch", "transformers"),
        "vllm_engine_checks",  # the sibling file, imported as the script's neighbour
    }
    tools -= child
    library = set().union(
        *(_third_party_imports(p) for p in (ROOT / "paged").rglob("*.py") if p not in tools | child)
    )
    core = {_split(s)[0] for s in _project()["dependencies"]}
    assert core == library
    extras = {_split(s)[0] for deps in _project()["optional-dependencies"].values() for s in deps}
    assert set().union(*(_third_party_imports(p) for p in tools)) <= extras | core


def test_setup_cell_checks_the_dependencies():
    """Colab's setup cell installs with --no-deps and checks these import instead."""
    from paged.course import colab as course

    core = {_split(s)[0] for s in _project()["dependencies"]}
    checked = {IMPORT_NAMES.get(m, m) for m in course.RUNTIME_MODULES}
    assert checked <= core
    assert core - checked <= {"pillow"}  # matplotlib cannot import without it


def test_colab_cannot_pull_jupyter_or_test_tools():
    core = {_split(s)[0] for s in _project()["dependencies"]}
    assert not core & {"jupyterlab", "notebook", "jupyter-server", "nbval", "nbclient", "pytest"}
    assert _project()["optional-dependencies"]["lab"] == ["jupyterlab>=3.6"]


def test_environment_yml_matches_pyproject():
    project = _project()
    wanted = dict(_split(s) for s in project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted.update(_split(s) for s in extra)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_section = [d for d in env["dependencies"] if isinstance(d, dict)]
    listed = dict(_split(s) for s in conda if not s.startswith(("python", "pip")))
    assert listed == wanted
    assert "conda-forge" in env["channels"]
    assert pip_section == [{"pip": ["-e ."]}]


def test_ci_calls_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make lab" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_make_installs_every_extra():
    extras = ",".join(sorted(_project()["optional-dependencies"]))
    assert f'-e ".[{extras}]"' in (ROOT / "Makefile").read_text()
