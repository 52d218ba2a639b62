"""The Korean edition follows the English one: same cells, same code, translations not stale."""

import json
import shutil

import nbformat
import pytest

from paged.course import editions, glossary

CHAPTERS = editions.chapters()
MARKERS = (
    "핵심 질문",
    "목표",
    "🔬 증거 읽기",
    "⚖️ 절충",
    "📌 핵심",
    "🔎 이 장의 '지지하지 않는 결론'",
    "✍️ 확인 문제",
    "<details>",
    "연습 문제",
)


def test_every_chapter_has_a_korean_twin():
    assert [editions.twin(p).name for p in CHAPTERS] == [
        p.name for p in sorted(editions.KO_DIR.glob("[0-9][0-9]_*.ipynb"))
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_korean_chapter_is_in_step(path):
    """Same cells and code; every markdown cell translates the English cell as it is now.

    Fix a failure: `python -m paged.course.editions`, then revisit the named translations.
    """
    assert editions.stale(path) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_korean_chapter_is_korean_with_the_guides_markers(path):
    cells = nbformat.read(editions.twin(path), as_version=4).cells
    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    assert sum(map(editions.is_korean, markdown)) >= 0.8 * len(markdown)
    text = "\n".join(markdown)
    wanted = MARKERS if path.name[:2] != "00" else ("✍️ 확인 문제", "<details>")
    assert [m for m in wanted if m not in text] == []
    if path.name[:2] != "00":  # the guide's closing sections, each once and in its order
        where = [text.index(f"## {m}") for m in MARKERS[2:7] if text.count(f"## {m}") == 1]
        assert len(where) == 5 and where == sorted(where)


def scratch_editions(tmp_path, monkeypatch, path):
    """Copies of one chapter's two editions, with paged.editions pointed at them."""
    en_dir, ko_dir = tmp_path / "notebooks", tmp_path / "notebooks" / "ko"
    ko_dir.mkdir(parents=True)
    shutil.copy(path, en_dir / path.name)
    shutil.copy(editions.twin(path), ko_dir / path.name)
    monkeypatch.setattr(editions, "KO_DIR", ko_dir)
    return en_dir, ko_dir


def test_an_english_edit_alone_makes_its_translation_stale(tmp_path, monkeypatch):
    path = CHAPTERS[3]
    en_dir, _ = scratch_editions(tmp_path, monkeypatch, path)
    assert editions.stale(en_dir / path.name) == []
    nb = json.loads((en_dir / path.name).read_text())
    cell = next(c for c in nb["cells"][2:] if c["cell_type"] == "markdown")
    cell["source"] = "".join(cell["source"]) + "\nOne more English sentence."
    (en_dir / path.name).write_text(json.dumps(nb))
    assert editions.stale(en_dir / path.name) == [
        f"{path.name}: markdown cell {cell['id']} translates an older English text"
    ]
    last_code = next(c for c in reversed(nb["cells"]) if c["cell_type"] == "code")
    last_code["source"] = "print('changed code')"  # and code edited in one edition only
    (en_dir / path.name).write_text(json.dumps(nb))
    assert any("code cell" in p for p in editions.stale(en_dir / path.name))


def test_sync_copies_code_and_keeps_translations(tmp_path, monkeypatch):
    path = CHAPTERS[1]
    en_dir, ko_dir = scratch_editions(tmp_path, monkeypatch, path)
    assert editions.sync(en_dir / path.name) == []  # in step: nothing to do
    nb = json.loads((en_dir / path.name).read_text())
    code = next(c for c in nb["cells"][2:] if c["cell_type"] == "code")
    code["source"] = "x = 1"
    (en_dir / path.name).write_text(json.dumps(nb))
    assert editions.sync(en_dir / path.name) == [f"{path.name}: code cell {code['id']} copied"]
    ko = nbformat.read(ko_dir / path.name, as_version=4)
    assert next(c for c in ko.cells if c.id == code["id"]).source == "x = 1"
    assert editions.stale(en_dir / path.name) == []  # Korean text untouched, still in step


def test_repointing_the_course_leaves_translations_in_step(tmp_path, monkeypatch):
    """`python -m paged.course --repo` rewrites both editions' badges; no translation goes stale."""
    from paged.course import colab as course

    path = CHAPTERS[2]
    en_dir, ko_dir = scratch_editions(tmp_path, monkeypatch, path)
    for notebook in (en_dir / path.name, ko_dir / path.name):
        assert "badge" in course.sync_notebook(notebook, tmp_path, repo="octo/my-course")
    assert "octo/my-course" in (ko_dir / path.name).read_text()
    assert editions.stale(en_dir / path.name) == []


# ---- one terminology, qualified chapter references, one gloss per term (paged.course.glossary) --


def _korean_markdown(path) -> str:
    cells = nbformat.read(editions.twin(path), as_version=4).cells
    return "\n\n".join(c.source for c in cells if c.cell_type == "markdown")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_korean_chapter_uses_the_glossary(path):
    """One Korean term per concept: no variant that paged/course/glossary.py forbids."""
    assert glossary.variants(_korean_markdown(path)) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_korean_chapter_qualifies_chapter_numbers_and_glosses_once(path):
    text = _korean_markdown(path)
    assert (
        glossary.unqualified_chapter_refs(text) == []
    )  # N장 for the course, 가이드 0N장 for the guide
    assert glossary.repeated_glosses(text) == {}  # "블록 테이블(block table)" once per chapter


def test_korean_messages_use_the_glossary():
    """The catalogue's Korean texts (checkers, figures, widgets) follow the glossary too."""
    import gc

    from paged.text import Message

    for name in ("paged.exercises", "paged.viz.widgets", "paged.viz", "paged.attention.steps"):
        __import__(name)
    texts = [m.ko for m in gc.get_objects() if type(m) is Message]
    assert len(texts) > 200
    assert [(t[:40], v) for t in texts for v in glossary.variants(t)] == []


def test_the_glossary_checks_can_fail():
    assert glossary.variants("할당기가 스텝마다 2× 빠르다") == [
        ("할당기", "할당자"),
        ("스텝", "단계"),
        ("2× ", "N배 (× only between numbers)"),
    ]
    assert glossary.variants("`할당기` 2 × 5120") == []  # code, and × between numbers
    assert glossary.unqualified_chapter_refs("6장에서, 7장과 가이드 09장, 가이드 05, 09장") == []
    assert glossary.unqualified_chapter_refs("이 코스의 7장과 09장") == ["이 코스의 7장", "09장"]
    assert glossary.repeated_glosses("블록 테이블(block table), 블록 테이블(block table)") == {
        "block table": 2
    }


def test_the_korean_readme_follows_the_english_one():
    """README.ko.md has every section, command and picture of README.md, its pictures drawn in
    Korean (figures/ko/), and the glossary's terms."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    en, ko = (root / "README.md").read_text(), (root / "README.ko.md").read_text()
    assert len(re.findall(r"^## ", en, re.M)) == len(re.findall(r"^## ", ko, re.M))
    for target in set(re.findall(r"`make ([a-z-]+)", en)):
        assert f"make {target}" in ko, target
    en_pictures = re.findall(r"!\[[^\]]*\]\((figures/[^)]+)\)", en)
    ko_pictures = re.findall(r"!\[[^\]]*\]\((figures/[^)]+)\)", ko)
    assert len(ko_pictures) == len(en_pictures)
    assert all(p.startswith("figures/ko/") and (root / p).exists() for p in ko_pictures)
    assert (
        "make lab-ko" in ko
        and "notebooks/ko/00_start_here.ipynb" in (root / "Makefile").read_text()
    )
    assert glossary.variants(ko) == [] and glossary.unqualified_chapter_refs(ko) == []
