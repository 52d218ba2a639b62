"""A teacher's grading run (`python -m paged.course.grade`): one row per exercise, from a learner's
notebook (run headless in a fresh kernel) or workspace (each kept file handed to its checker), in
English whatever the edition, with model answers switched off."""

from __future__ import annotations

import csv

import nbformat
import pytest

from paged.course import grade
from paged.exercises import solution
from paged.exercises.answers import source
from paged.exercises.engine import workspace

PICK_EARLIEST = """
def pick_victims(running, blocks_needed, free_blocks, blocks_held):
    alive, victims = list(running), []
    for r in running:
        if r not in alive:
            continue
        while blocks_needed[r] > free_blocks:
            victim = alive.pop(0)  # the earliest arrival
            victims.append(victim)
            free_blocks += blocks_held[victim]
            if victim == r:
                break
        else:
            free_blocks -= blocks_needed[r]
    return victims
""".strip()


def learner_notebook(path):
    """A Korean learner's chapter: one exercise solved, one untouched, one with a typical slip."""

    def exercise(name, body):
        cell = nbformat.v4.new_code_cell(body)
        cell.metadata["tags"] = [f"exercise:{name}"]
        return cell

    def check(name):
        return nbformat.v4.new_code_cell(
            f"from paged.exercises import check_{name}\n\ncheck_{name}({name})"
        )

    stub = "def admit(waiting, free_blocks, block_size, watermark_blocks):\n    raise NotImplementedError"
    cells = [
        nbformat.v4.new_markdown_cell("# a chapter"),
        nbformat.v4.new_code_cell('import os\n\nos.environ["PAGED_LANG"] = "ko"'),
        exercise("append_slot", source("append_slot")),
        check("append_slot"),
        nbformat.v4.new_code_cell("print('a long experiment the checkers do not need')"),
        exercise("admit", stub),
        check("admit"),
        exercise("pick_victims", PICK_EARLIEST),
        check("pick_victims"),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_a_notebook_is_graded_exercise_by_exercise_in_english(tmp_path):
    rows = grade.grade_notebook(learner_notebook(tmp_path / "03_paging.ipynb"))
    got = {(r.exercise, r.verdict, r.slip) for r in rows}
    assert got == {
        ("append_slot", "correct", ""),
        ("admit", "not yet", ""),
        ("pick_victims", "wrong", "victims.earliest"),
    }
    assert all(r.learner.endswith("03_paging.ipynb") for r in rows)
    assert next(r for r in rows if r.verdict == "wrong").detail.startswith(
        "pick_victims: not quite"
    )


def test_a_workspace_is_graded_file_by_file(tmp_path):
    where = tmp_path / "ws"
    workspace.keep_model_answers(where, ("slot", "first_fit"))
    (where / "pick_victims.py").write_text(PICK_EARLIEST + "\n")  # a hand edit gone wrong
    (where / "admit.py").write_text(
        "def admit(waiting, free_blocks, block_size, watermark_blocks:\n"
    )
    rows = {r.exercise: r for r in grade.grade_workspace(where)}
    assert {n: r.verdict for n, r in rows.items()} == {
        "admit": "wrong",
        "first_fit": "correct",
        "pick_victims": "wrong",
        "slot": "correct",
    }
    assert rows["pick_victims"].slip == "victims.earliest"
    assert "does not serve" in rows["admit"].detail and "admit.py, line 1" in rows["admit"].detail


def test_the_command_writes_csv_and_markdown(tmp_path, capsys):
    where = tmp_path / "ws"
    workspace.keep_model_answers(where, ("slot",))
    assert grade.main([str(where), "--out", str(tmp_path / "out")]) == 0
    assert '"correct": 1' in capsys.readouterr().out
    with open(tmp_path / "out" / "grades.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert table == [
        {
            "learner": str(where),
            "exercise": "slot",
            "verdict": "correct",
            "slip": "",
            "detail": table[0]["detail"],
        }
    ]
    assert "| slot | correct |" in (tmp_path / "out" / "grades.md").read_text()
    with pytest.raises(SystemExit, match="no such notebook or folder"):
        grade.main([str(tmp_path / "missing.ipynb")])


def test_model_answers_can_be_switched_off(monkeypatch, capsys):
    monkeypatch.setenv("PAGED_SOLUTIONS", "off")
    solution("slot")
    out = capsys.readouterr().out
    assert "switched off" in out and "def slot" not in out
    with pytest.raises(ValueError, match="no exercise named"):
        solution("no_such_exercise")
