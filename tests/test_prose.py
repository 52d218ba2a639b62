"""Every English chapter keeps its visible prose short: what is folded away does not count."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))  # the English edition
MAX_VISIBLE_WORDS = 3500
_FOLDED = re.compile(r"<details>(?:(?!<details>).)*?</details>", re.S)  # innermost first


def visible_prose(markdown: str) -> str:
    """`markdown` without its `<details>…</details>` blocks (nested ones included)."""
    while True:
        text = _FOLDED.sub(" ", markdown)
        if text == markdown:
            return text
        markdown = text


def visible_words(path: Path) -> int:
    cells = json.loads(path.read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return len(visible_prose(text).split())


def test_folded_prose_does_not_count():
    text = "one two <details><summary>a</summary> b <details>c</details> d</details> three"
    assert visible_prose(text).split() == ["one", "two", "three"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_visible_prose_is_short(path):
    words = visible_words(path)
    assert words <= MAX_VISIBLE_WORDS, (
        f"{path.name}: {words} words of visible prose (markdown outside <details>), more than "
        f"{MAX_VISIBLE_WORDS}: fold evidence and discussion into the chapter's Evidence notes"
    )
