"""Two editions, one code: the Korean chapters in notebooks/ko/ follow the English ones.

The English chapters are the source of truth. Each Korean chapter has the same cells in the same
order. Code cells are the same program: a Korean code cell is the English one (the setup cell
differs by the line that sets the edition's language, PAGED_LANG, and by its own last line), or
the English one with its string literals and comments in Korean (`program()` is what must stay
equal: the cell's syntax tree with every string left blank; comments are not in it). Markdown
cells hold the Korean text. Each translated cell records, in its metadata, a hash of the English
cell it translates (`en_sha`; a code cell's, of the English strings and comments alone). When
that English text changes, the hash no longer matches and `stale()` (and the test that calls it)
names the cell until its translation is revisited. When only the English code around a Korean
cell's strings changes, `sync()` carries the Korean strings and comments over, in order, into
the new code; where their number changed it copies the English cell and lists it.

    python -m paged.course.editions                     # copy code cells into every Korean chapter
    python -m paged.course.editions --translations DIR  # also take Korean text from DIR/NN.json
    python -m paged.course.editions --check             # list stale or untranslated cells (exit 1)

`make ko` runs the first command, then re-executes the Korean chapters.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import io
import json
import sys
import tokenize
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


def _python(source: str) -> str:
    """The cell as Python: IPython's %magics and !commands left out."""
    lines = source.splitlines()
    return "\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!")))


class _Blank(ast.NodeTransformer):
    def visit_JoinedStr(self, node):  # an f-string: its text and what it formats are literal
        return ast.copy_location(ast.Constant(""), node)

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(""), node) if isinstance(node.value, str) else node


def program(source: str) -> str:
    """What both editions' code cells share: the syntax tree, every string left blank (comments
    are not in it). A cell that does not parse is its own text."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return source
    return ast.dump(_Blank().visit(tree), annotate_fields=False)


def literals(source: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, text) of every string literal (an f-string whole) and comment, in order."""
    out, depth, start = [], 0, None
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for tok in tokens:
        kind = tokenize.tok_name[tok.type]
        if kind == "FSTRING_START":  # Python 3.12 splits an f-string into tokens
            depth += 1
            start = start or tok.start
        elif kind == "FSTRING_END":
            depth -= 1
            if depth == 0:
                out.append((start, tok.end, None))
                start = None
        elif depth == 0 and tok.type in (tokenize.STRING, tokenize.COMMENT):
            out.append((tok.start, tok.end, tok.string))
    lines = source.splitlines(True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(pos):
        return offsets[pos[0] - 1] + pos[1]

    return [(at(a), at(b), source[at(a) : at(b)]) for a, b, _ in out]


def strings_and_comments(source: str) -> list[str]:
    """A code cell's string literals and comments, in order: what an edition translates."""
    return [t for _, _, t in literals(_python(source))]


def literals_sha(source: str) -> str:
    """A hash of a code cell's strings and comments: what its translation translates."""
    text = "\0".join(strings_and_comments(source))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def carry_over(korean: str, english: str) -> str | None:
    """The English code with the Korean cell's strings and comments in place of its own, in
    order; None where their numbers differ (or the code does not tokenize)."""
    try:
        ko, en = literals(korean), literals(english)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if len(ko) != len(en):
        return None
    out = english
    for (start, end, _), (_, _, text) in reversed(list(zip(en, ko, strict=True))):
        out = out[:start] + text + out[end:]
    return out if program(out) == program(english) else None


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
            translated = previous is not None and previous.metadata.get("en_sha")
            if translated and previous.source != new.source:  # its strings in Korean
                carried = carry_over(previous.source, new.source)
                if carried is not None:
                    new.source = carried
                    new.metadata["en_sha"] = previous.metadata["en_sha"]
            if previous is not None and previous.source == new.source:
                new.outputs = previous.outputs
                new.execution_count = previous.execution_count
            elif "en_sha" in new.metadata:
                new.outputs, new.execution_count = [], None
                changes.append(f"{ko_path.name}: code cell {cell.id}: Korean strings carried over")
            else:
                new.outputs, new.execution_count = [], None
                was = " (its Korean strings did not fit: translate again)" if translated else ""
                changes.append(f"{ko_path.name}: code cell {cell.id} copied{was}")
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
            if program(korean_code(e.source)) != program(k.source):
                problems.append(f"{ko_path.name}: code cell {e.id} differs from the English one")
            elif k.metadata.get("en_sha") != literals_sha(e.source):
                problems.append(
                    f"{ko_path.name}: code cell {e.id} translates older English strings"
                )
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
