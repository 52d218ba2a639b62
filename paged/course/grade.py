"""For teachers: grade learners' notebooks or workspaces, one row per exercise.

    python -m paged.course.grade PATH... [--out grades]

A PATH is a learner's chapter notebook (`.ipynb`, either edition) or a learner's workspace folder
(the `.py` files the checkers kept, `paged.exercises.engine.workspace`). A notebook runs headless in a
fresh kernel, only the cells its checkers need (`paged.course.cells.needed_cells`: the stubs as
the learner left them, the checker calls and what they read); a workspace's files are each handed
to their checker in a fresh Python process. Both run in English, with `PAGED_SOLUTIONS=off`
(`solution()` declines) and `PAGED_WORKSPACE=off` (nothing is kept). Each checker's verdict
becomes a row: learner (the path), exercise, verdict ("correct", "not yet": the stub untouched,
"wrong"), the slip's name when its hint named a typical mistake (`paged.exercises.slips`), and
the verdict's first line. The rows go to `grades.csv` and `grades.md` in `--out`.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from dataclasses import astuple, dataclass, fields
from pathlib import Path

from .cells import VERDICT, checker_calls_per_cell, exercise_cells, needed_cells, printed

ENV = {"PAGED_LANG": "en", "PAGED_SOLUTIONS": "off", "PAGED_WORKSPACE": "off"}
KINDS = {"correct": "correct", "not yet": "not yet"}  # every other verdict is "wrong"
HINT = re.compile(r"^  hint: (.*)$", re.M)


@dataclass(frozen=True)
class Row:
    learner: str
    exercise: str
    verdict: str  # "correct", "not yet" or "wrong"
    slip: str  # the typical mistake its hint named, "" when none
    detail: str  # the verdict's first line


def slip_names() -> list[tuple[re.Pattern, str]]:
    """(a hint's English text as a pattern, the slip's name): the catalogue's slips, and the
    Triton puzzles' hints by puzzle and mistake ("kernels_paged.softmax.no_rescale")."""
    from ..exercises import slips
    from ..exercises.slips import kernels_onramp, kernels_paged
    from ..text import Message

    named = [(name, hint) for name, (_, hint) in slips.SLIPS.items()]
    for module in (kernels_onramp, kernels_paged, slips.address):
        short = module.__name__.rsplit(".", 1)[1]
        for table, values in vars(module).items():
            if table.isupper() and isinstance(values, dict):
                named += [
                    (f"{short}.{table.lower()}.{key}", m)
                    for key, m in values.items()
                    if isinstance(m, Message)
                ]

    def pattern(text: str) -> re.Pattern:  # a {field} matches whatever filled it
        parts = re.split(r"\{[^{}]*\}", text)
        return re.compile(".*".join(re.escape(p) for p in parts), re.S)

    return [(pattern(m.en), name) for name, m in named]


def rows_from(printed: str, learner: str, patterns=None) -> list[Row]:
    """One row per verdict in `printed` (English), with the slip its hint names."""
    patterns = patterns or slip_names()
    rows = []
    matches = list(VERDICT.finditer(printed))
    for m, after in zip(matches, [*matches[1:], None], strict=True):
        text = printed[m.start() : after.start() if after else len(printed)]
        hint = HINT.search(text)
        slip = ""
        if hint is not None:
            slip = next((name for p, name in patterns if p.fullmatch(hint.group(1))), "")
        first = text.splitlines()[0]
        rows.append(Row(learner, m.group(1), KINDS.get(m.group(2), "wrong"), slip, first))
    return rows


def _environment() -> dict:
    return {**os.environ, **ENV}


def grade_notebook(path: Path, timeout: int = 900) -> list[Row]:
    """Run the checker cells of a learner's chapter in a fresh kernel; its verdicts as rows."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    calls = checker_calls_per_cell(nb)
    names = {name for _, name in exercise_cells(nb)}
    run = needed_cells(nb, names, calls)
    if run and "PAGED_LANG" in nb.cells[min(run)].source:  # the setup cell picks the edition
        run[min(run)] += '\nos.environ["PAGED_LANG"] = "en"  # graded in English'
    for i, source in run.items():
        nb.cells[i].source = source
    nb.cells = [nb.cells[i] for i in run]
    saved = dict(os.environ)
    os.environ.update(ENV)  # the kernel inherits them
    try:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            allow_errors=True,  # a learner's error is a verdict, not the end of the grading
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return rows_from(printed(nb), str(path))


# A workspace file, checked in a fresh process: its checker, on the function it keeps.
_CHECK = """
import sys
from pathlib import Path
from paged import exercises
from paged.exercises.engine import workspace
where = Path(sys.argv[1])
for name in sys.argv[2:]:
    try:
        fn = workspace.load(name, where)
    except workspace.WorkspaceError as error:
        print(f"{name}: not quite: the file does not serve: {error}")
        continue
    getattr(exercises, f"check_{name}")(fn)
"""


def grade_workspace(where: Path, timeout: int = 900) -> list[Row]:
    """Each kept answer in `where` handed to its checker, in one fresh Python process."""
    from ..exercises import SPECS
    from ..exercises.engine import workspace

    names = [n for n in workspace.kept(where) if n in SPECS]
    if not names:
        return []
    done = subprocess.run(
        [sys.executable, "-c", _CHECK, str(where), *names],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_environment(),
    )
    return rows_from(done.stdout, str(where))


def grade(paths: list[Path]) -> list[Row]:
    rows = []
    for path in paths:
        if path.is_dir():
            rows += grade_workspace(path)
        elif path.suffix == ".ipynb":
            rows += grade_notebook(path)
        else:
            raise SystemExit(f"{path}: neither a chapter notebook (.ipynb) nor a workspace folder")
    return rows


def write(rows: list[Row], out: Path) -> tuple[Path, Path]:
    """grades.csv and grades.md in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    header = [f.name for f in fields(Row)]
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(astuple(r) for r in rows)
    cells = [[str(v).replace("|", "\\|") for v in astuple(r)] for r in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c) + " |" for c in cells]
    (out / "grades.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "grades.csv", out / "grades.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path, help="chapter notebooks or workspace folders")
    ap.add_argument("--out", type=Path, default=Path("grades"), help="where the tables go")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise SystemExit(f"no such notebook or folder: {', '.join(missing)}")
    rows = grade(args.paths)
    csv_path, md_path = write(rows, args.out)
    counts = {k: sum(r.verdict == k for r in rows) for k in ("correct", "not yet", "wrong")}
    print(json.dumps(counts), f"-> {csv_path}, {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
