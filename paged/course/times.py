"""How long a chapter takes, estimated from the chapter itself (ARITHMETIC, not a measurement of
learners): the words of its English text read at 150 a minute, 10 minutes per exercise (two
ASSUMPTIONs, which together give the 75 minutes one learner took for chapter 6), the sum rounded
up to 5 minutes. Each chapter's first cell states its estimate and chapter 0's map lists them;
`tests/test_notebooks_meta.py` holds both to these numbers, so a chapter that grows says so.

    python -m paged.course.times     # every chapter's estimate, the routes' sums
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

WORDS_PER_MINUTE = 150  # ASSUMPTION
MINUTES_PER_EXERCISE = 10  # ASSUMPTION
CORE_ROUTE = (0, 1, 2, 3, 4, 5, 8, 9, 10, 13)  # the chapters a short course keeps


@dataclass(frozen=True)
class Estimate:
    reading: int  # minutes, rounded up
    exercises: int
    total: int  # minutes, rounded up to 5


def estimate(path: Path) -> Estimate:
    """A chapter's estimate from its markdown words and its exercise cells."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    words = sum(len("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    exercises = sum(
        any(t.startswith("exercise:") for t in c["metadata"].get("tags", [])) for c in cells
    )
    reading = math.ceil(words / WORDS_PER_MINUTE)
    total = 5 * math.ceil((reading + MINUTES_PER_EXERCISE * exercises) / 5)
    return Estimate(reading, exercises, total)


def routes(chapters: list[Path]) -> tuple[float, float]:
    """Hours of the core route and of the full route."""
    minutes = {int(p.name[:2]): estimate(p).total for p in chapters}
    core = sum(m for n, m in minutes.items() if n in CORE_ROUTE)
    return core / 60, sum(minutes.values()) / 60


def main() -> None:
    root = Path(__file__).resolve().parents[2] / "notebooks"
    chapters = sorted(root.glob("[0-9][0-9]_*.ipynb"))
    for p in chapters:
        e = estimate(p)
        print(f"{p.name:42s} {e.total:4d} min: {e.reading:3d} reading, {e.exercises} exercises")
    core, full = routes(chapters)
    print(f"core route {core:.1f} h, full route {full:.1f} h (ARITHMETIC)")


if __name__ == "__main__":
    main()
