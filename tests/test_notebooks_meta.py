"""Every chapter: a Colab badge and setup cell that agree with paged.course; the same bones."""

import json
import re
from pathlib import Path

import pytest

from paged.course import colab as course

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))  # the English edition
EVERY_EDITION = course.notebooks(ROOT)  # and notebooks/ko/..., present and future


def _name(path: Path) -> str:
    return path.relative_to(ROOT / "notebooks").as_posix()


def test_chapters_are_numbered_from_zero():
    assert len(NOTEBOOKS) >= 8
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(len(NOTEBOOKS))]


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_badge_and_setup_cell_point_at_the_course(path):
    """Fix a failure with `python -m paged.course` (it rewrites both from course.REPO)."""
    cells = json.loads(path.read_text())["cells"]
    assert course.colab_badge(_name(path)) in "".join(cells[0]["source"])
    assert cells[1]["cell_type"] == "code"
    setup = course.setup_cell(lang=course.edition(path), chapter=path.name)
    assert "".join(cells[1]["source"]) == setup
    assert cells[1]["outputs"] == []  # outside Colab the setup cell does nothing, silently


def test_nothing_else_names_another_repository():
    """Every place that means *this course's* repository names course.REPO: Colab links, pip and
    git URLs, links into its notebooks (citing other projects' code on GitHub is fine)."""
    files = [ROOT / n for n in ("README.md", "Makefile", "pyproject.toml", "environment.yml")]
    files += [ROOT / ".ci" / "run", *EVERY_EDITION, *sorted((ROOT / "paged").rglob("*.py"))]
    ours = re.compile(
        r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)"
        r"|(?:git\+|git clone )https://github\.com/([\w.-]+/[\w.-]+)"
        r"|github\.com/([\w.-]+/[\w.-]+)/(?:blob|tree)/[\w.-]+/notebooks/"
    )
    named = {
        (p.relative_to(ROOT).as_posix(), "".join(m.groups("")).removesuffix(".git"))
        for p in files
        if p.exists()
        for m in ours.finditer(p.read_text())
    }
    assert named and {(f, repo) for f, repo in named if repo != course.REPO} == set()


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=lambda p: p.name)
def test_chapters_have_the_bones(path):
    text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
    for heading in (
        "Key questions",
        "Goals",
        "Where this fits",
        "Trade-off",
        "Reading the evidence",
        "Takeaways",
        "does not show",
        "Check questions",
        "<details>",
        "Exercise",
    ):
        assert heading in text, heading


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_committed_from_one_clean_run(path):
    """Outputs come from `make notebooks`: cells numbered 1, 2, 3... in order, no timestamps."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    assert not [c["id"] for c in cells if "execution" in c["metadata"]]
