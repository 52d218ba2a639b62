"""Two editions, one code: the Korean chapters in notebooks/ko/ follow the English ones.

The English chapters are the source of truth. Each Korean chapter has the same cells in the same
order: code cells are copied verbatim (never edited by hand; the setup cell differs by the line
that sets the edition's language, PAGED_LANG, and by its own last line), markdown cells hold the
Korean text
and record, in their metadata, a hash of the English cell they translate (`en_sha`). When an
English markdown cell changes, its hash no longer matches and `stale()` (and the test that calls
it) names the cell until its translation is revisited.

    python -m paged.course.editions                     # copy code cells into every Korean chapter
    python -m paged.course.editions --translations DIR  # also take Korean text from DIR/NN.json
    python -m paged.course.editions --check             # list stale or untranslated cells (exit 1)

`make ko` runs the first command, then re-executes the Korean chapters.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path

import nbformat

from .colab import BADGE, INSTALLED_LINE, SETUP_MARKER

ROOT = Path(__file__).resolve().parents[2]
EN_DIR = ROOT / "notebooks"
KO_DIR = EN_DIR / "ko"
HANGUL = range(0xAC00, 0xD7A4)


def en_sha(source: str) -> str:
    """A short hash of an English markdown cell, recorded by the cell that translates it.

    The Colab badge is left out: `python -m paged.course --repo` rewrites it in both editions,
    and re-pointing the course must not make a translation stale.
    """
    return hashlib.sha256(BADGE.sub("", source).encode()).hexdigest()[:16]


def is_korean(text: str, share: float = 0.3) -> bool:
    """Whether Hangul makes up at least `share` of the letters of `text`."""
    letters = [ch for ch in text if ch.isalpha()]
    hangul = sum(ord(ch) in HANGUL for ch in letters)
    return bool(letters) and hangul >= share * len(letters)


def korean_code(source: str) -> str:
    """An English code cell as the Korean edition runs it: its setup cell sets PAGED_LANG=ko and
    reports in Korean."""
    if not source.startswith(SETUP_MARKER):
        return source
    source = source.replace('os.environ["PAGED_LANG"] = "en"', 'os.environ["PAGED_LANG"] = "ko"', 1)
    return source.replace(INSTALLED_LINE["en"], INSTALLED_LINE["ko"], 1)


def twin(en_path: Path) -> Path:
    """The Korean chapter of an English one."""
    return KO_DIR / en_path.name


def sync(en_path: Path, translations: dict[str, str] | None = None) -> list[str]:
    """Rebuild the Korean twin of `en_path` from it; return what changed.

    Code cells come from the English chapter (outputs kept while the code is unchanged).
    Markdown cells keep their Korean text and hash; `translations` ({English cell id: Korean
    text}) replaces the text and records the English cell's current hash. A markdown cell with
    no translation yet carries the English text and an empty hash, so `stale()` reports it.
    """
    en = nbformat.read(en_path, as_version=4)
    ko_path = twin(en_path)
    old = nbformat.read(ko_path, as_version=4) if ko_path.exists() else None
    old_cells = {c.get("id"): c for c in old.cells} if old else {}
    translations = translations or {}
    cells, changes = [], []
    for cell in en.cells:
        previous = old_cells.get(cell.id)
        new = copy.deepcopy(cell)
        if cell.cell_type == "code":
            new.source = korean_code(cell.source)
            if previous is not None and previous.source == new.source:
                new.outputs = previous.outputs
                new.execution_count = previous.execution_count
            else:
                new.outputs, new.execution_count = [], None
                changes.append(f"{ko_path.name}: code cell {cell.id} copied")
        elif cell.id in translations:
            new.source = translations[cell.id].strip("\n")
            new.metadata["en_sha"] = en_sha(cell.source)
            if previous is None or previous.source != new.source:
                changes.append(f"{ko_path.name}: markdown cell {cell.id} translated")
        elif previous is not None and previous.cell_type == "markdown":
            new.source = previous.source
            new.metadata["en_sha"] = previous.metadata.get("en_sha", "")
        else:
            new.metadata["en_sha"] = ""  # untranslated: the English text stands in
            changes.append(f"{ko_path.name}: markdown cell {cell.id} needs a translation")
        cells.append(new)
    nb = copy.deepcopy(en)
    nb.cells = cells
    if old is not None:
        nb.metadata = old.metadata
    nb.metadata["language_info"] = en.metadata.get("language_info", {})
    if old is None or nbformat.writes(nb) != nbformat.writes(old):
        ko_path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, ko_path)
    return changes


def stale(en_path: Path) -> list[str]:
    """What keeps the Korean twin of `en_path` from being in step with it (empty: in step)."""
    ko_path = twin(en_path)
    if not ko_path.exists():
        return [f"{ko_path.name}: missing"]
    en = nbformat.read(en_path, as_version=4)
    ko = nbformat.read(ko_path, as_version=4)
    problems = []
    if [c.id for c in en.cells] != [c.id for c in ko.cells]:
        fix = "run python -m paged.course.editions"
        return [f"{ko_path.name}: cells differ from {en_path.name}: {fix}"]
    for e, k in zip(en.cells, ko.cells, strict=True):
        if e.cell_type == "code" and korean_code(e.source) != k.source:
            problems.append(f"{ko_path.name}: code cell {e.id} differs from the English one")
        elif e.cell_type == "markdown":
            recorded = k.metadata.get("en_sha", "")
            if not recorded:
                problems.append(f"{ko_path.name}: markdown cell {e.id} is not translated yet")
            elif recorded != en_sha(e.source):
                problems.append(
                    f"{ko_path.name}: markdown cell {e.id} translates an older English text"
                )
    return problems


def chapters() -> list[Path]:
    return sorted(EN_DIR.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--translations", type=Path, help="a folder of NN.json: {cell id: Korean}")
    ap.add_argument("--check", action="store_true", help="list stale cells; change nothing")
    args = ap.parse_args(argv)
    if args.check:
        problems = [p for path in chapters() for p in stale(path)]
        print("\n".join(problems) or "every Korean chapter is in step with the English one")
        return 1 if problems else 0
    for path in chapters():
        source = args.translations / f"{path.name[:2]}.json" if args.translations else None
        translations = json.loads(source.read_text()) if source and source.exists() else None
        for change in sync(path, translations):
            print(change)
    return 0


if __name__ == "__main__":
    sys.exit(main())
