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


PREDICT = re.compile(r"Predict (first|with it)")
ASSERT = re.compile(r"^\s*assert\b", re.M)


def _asked(path: Path) -> list[str]:
    """Ids of the markdown cells that ask for a prediction: "Predict first" or "Predict with it"
    in the English chapter; a Korean chapter asks in the cells with the same ids."""
    cells = json.loads((ROOT / "notebooks" / path.name).read_text())["cells"]
    return [
        c["id"]
        for c in cells
        if c["cell_type"] == "markdown" and PREDICT.search("".join(c["source"]))
    ]


def test_chapters_ask_for_predictions():
    assert sum(len(_asked(p)) for p in NOTEBOOKS) >= 10  # the test below has something to check


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_predictions_are_not_answered_on_screen(path):
    """A prediction's answer is collapsed until the learner runs the cell: the first code cell
    after the question is tagged `prediction-answer`, its output collapsed
    (`metadata.jupyter.outputs_hidden`), and holds no assert; the asserts are in the code cell
    right after it, tagged `prediction-check`, its source hidden (`jupyter.source_hidden`),
    printing nothing."""
    cells = json.loads(path.read_text())["cells"]
    where = {c["id"]: i for i, c in enumerate(cells)}
    problems = []
    for asked in _asked(path):
        if asked not in where:
            problems.append(f"{asked}: no such cell")
            continue
        after = [i for i in range(where[asked] + 1, len(cells)) if cells[i]["cell_type"] == "code"]
        if not after:
            problems.append(f"{asked}: no code cell after the question")
            continue
        answer = cells[after[0]]
        meta, source = answer["metadata"], "".join(answer["source"])
        if "prediction-answer" not in meta.get("tags", []):
            problems.append(f"{answer['id']} (answers {asked}): not tagged prediction-answer")
        if meta.get("jupyter", {}).get("outputs_hidden") is not True:
            problems.append(f"{answer['id']} (answers {asked}): output not collapsed")
        if ASSERT.search(source):
            problems.append(f"{answer['id']} (answers {asked}): holds an assert")
        check = cells[after[0] + 1] if after[0] + 1 < len(cells) else {"cell_type": None}
        if check["cell_type"] != "code":
            problems.append(f"{answer['id']} (answers {asked}): no code cell right after it")
            continue
        meta, source = check["metadata"], "".join(check["source"])
        if "prediction-check" not in meta.get("tags", []):
            problems.append(f"{check['id']} (checks {asked}): not tagged prediction-check")
        if meta.get("jupyter", {}).get("source_hidden") is not True:
            problems.append(f"{check['id']} (checks {asked}): source not hidden")
        if not ASSERT.search(source):
            problems.append(f"{check['id']} (checks {asked}): holds no assert")
        shown = [
            o for o in check.get("outputs", []) if o.get("metadata", {}).get("paged") != "progress"
        ]
        if shown:  # a progress bar (paged.progress) shows no text and goes once the cell is done
            problems.append(f"{check['id']} (checks {asked}): prints something")
    assert not problems, problems


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_a_runs_exact_numbers_are_checked_out_of_sight_and_say_what_they_expected(path):
    """A chapter invites changing a cell's settings: the exact numbers of its own run are held by
    a hidden check cell after it (tagged hidden-check, or a prediction's check), which opens with
    a comment and gives every assert a message, so a learner who changed a setting reads what the
    chapter expected instead of a bare AssertionError."""
    import ast

    cells = json.loads(path.read_text())["cells"]
    problems = []
    for cell in cells:
        tags = cell["metadata"].get("tags", [])
        if not {"hidden-check", "prediction-check"} & set(tags):
            continue
        source = "".join(cell["source"])
        if "hidden-check" in tags and not cell["metadata"].get("jupyter", {}).get("source_hidden"):
            problems.append(f"{cell['id']}: source not hidden")
        if not source.startswith("#"):
            problems.append(f"{cell['id']}: does not open with a comment")
        bare = [
            n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert) and not n.msg
        ]
        if bare and "hidden-check" in tags:
            problems.append(f"{cell['id']}: asserts without a message on lines {bare}")
    assert not problems, problems


# A message written in a cell: msg("...", "...") or Message("...", "...") with its two texts.
WRITTEN_MESSAGE = re.compile(r"\b(?:msg|Message)\(")


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_cells_print_in_their_editions_language_only(path):
    """A chapter cell says what it prints, in its edition's language (literal f-strings), or
    prints a library report; never a catalogue key, and never an English and a Korean sentence
    side by side: the learner reads one line."""
    cells = json.loads(path.read_text())["cells"]
    code = [(c["id"], "".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    assert [i for i, src in code if WRITTEN_MESSAGE.search(src)] == []
    assert [i for i, src in code if re.search(r"paged\.course\.lines|\blines\.[A-Z]", src)] == []


def _lines(source: str) -> set[str]:
    """The code lines of `source` that say something (20 characters or more once spaces are
    collapsed and a trailing comment cut), but a def, a decorator, a return or a comment."""
    out = set()
    for line in source.split("\n"):
        line = " ".join(line.split("  #")[0].split(" # ")[0].split())
        if len(line) >= 20 and not line.startswith(("#", '"""', "return ", "def ", "@")):
            out.add(line)
    return out


def _answer_bodies() -> dict[str, set[str]]:
    """Every model answer's body lines (`paged.exercises.answers`, the course's own step kernels
    of chapter 7 included), by name."""
    import importlib
    import inspect

    from paged.exercises import answers

    bodies = {}
    for module in answers.MODULES:
        mod = importlib.import_module(f"paged.exercises.answers.{module}")
        for name in mod.__all__:
            src = inspect.getsource(getattr(mod.__dict__[name], "fn", mod.__dict__[name]))
            signature_end = src.index(":\n", src.index("def "))  # the body follows the signature
            bodies[name] = _lines(src[signature_end + 2 :])
    return bodies


@pytest.mark.parametrize("path", EVERY_EDITION, ids=_name)
def test_no_notebook_cell_holds_a_model_answer(path):
    """A folded cell is folded only in JupyterLab: Colab and GitHub show it under the puzzle. No
    code cell may hold 70 % or more of an answer's lines (step 3's kernel, which the chapter
    teaches before the puzzles, shares about half of the later kernels' lines)."""
    bodies = _answer_bodies()
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        lines = _lines("".join(cell["source"]))
        for name, body in bodies.items():
            shared = len(body & lines)
            assert shared < max(3, 0.7 * len(body)), f"cell {i} holds {shared} lines of {name}"


# ---- how long a chapter takes (paged.course.times: ARITHMETIC from its words and exercises) ----
CHAPTERS = [p for p in NOTEBOOKS if p.name[:2].isdigit()]
HEADER_EN = re.compile(r"\*About (\d+) min: (\d+) reading(?:, (\d+) exercises?)?")
HEADER_KO = re.compile(r"\*약 (\d+)분: 읽기 (\d+)분(?:, 연습 문제 (\d+)개)?")


@pytest.mark.parametrize("path", CHAPTERS, ids=_name)
def test_a_chapter_states_the_time_its_words_and_exercises_give(path):
    """Each chapter's first cell, in both editions, and chapter 0's map state the estimate
    `paged.course.times` makes from the chapter itself: a chapter that grows says so."""
    from paged.course import editions, times

    e = times.estimate(path)
    want = (e.total, e.reading, e.exercises)
    for edition, header, unit in ((path, HEADER_EN, "min"), (editions.twin(path), HEADER_KO, "분")):
        first = "".join(json.loads(edition.read_text())["cells"][0]["source"])
        found = header.search(first)
        assert found, f"{edition.name}: no time in its first cell"
        stated = (int(found[1]), int(found[2]), int(found[3] or 0))
        assert stated == want, (
            f"{edition.name} states {stated}; its words and exercises give {want}"
        )
        zero = edition.parent / "00_start_here.ipynb"
        rows = "".join("".join(c["source"]) for c in json.loads(zero.read_text())["cells"])
        row = re.search(rf"\n\| {int(path.name[:2])} · [^\n]*\| (\d+) ?{unit} \|", rows)
        assert row and int(row[1]) == e.total, (
            f"chapter 0's map ({zero.parent.name}) for {path.name}"
        )


def test_the_routes_add_up_the_chapters():
    from paged.course import times

    core, full = times.routes(CHAPTERS)
    zero = "".join("".join(c["source"]) for c in json.loads(CHAPTERS[0].read_text())["cells"])
    assert f"about {round(full)} hours in all, {round(core)} for the core route" in zero
    readme = (ROOT / "README.md").read_text()
    assert f"about {round(core)} hours)" in readme and f"about {round(full)} hours)" in readme
