"""Execute notebooks top to bottom in a fresh kernel and store their outputs (`make notebooks`).

python -m paged.course.runner notebooks/*.ipynb
python -m paged.course.runner --times notebooks/04_head_to_head.ipynb   # the slowest cells, not saved
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from ..progress import WIDGET_VIEW


def execute(path: Path, record_timing: bool = False):
    """The notebook at `path`, run top to bottom in a fresh kernel, and its wall time in s. The
    kernel's torch uses one thread (`paged.model`), as under the tests, unless the caller says."""
    os.environ.setdefault("PAGED_NUM_THREADS", "1")  # the kernel inherits it
    # The committed outputs are a learner's first run: nothing kept yet (chapter 13 reads it).
    os.environ["PAGED_WORKSPACE"] = "off"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps of an earlier run
    t0 = time.perf_counter()
    NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=record_timing,  # off when saving: a re-run changes only what it shows
    ).execute()
    drop_progress_state(nb)
    return nb, time.perf_counter() - t0


def drop_progress_state(nb) -> None:
    """Forget the saved state of the progress bars' widgets (`paged.progress`): each was closed
    when its loop ended, and would otherwise add hundreds of lines of state to the notebook."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = state.get("state", {})
    todo = [
        o["data"][WIDGET_VIEW]["model_id"]
        for cell in nb.cells
        for o in cell.get("outputs", [])
        if o.get("metadata", {}).get("paged") == "progress"
    ]
    while todo:  # a bar's box, and every model it refers to
        model = models.pop(todo.pop(), None)
        if model is not None:
            todo += re.findall(r"IPY_MODEL_(\w+)", json.dumps(model["state"]))
    if state and not models:
        del nb.metadata["widgets"]


def run(path: Path) -> float:
    """Execute `path` and store its outputs; the seconds it took."""
    nb, seconds = execute(path)
    nbformat.write(nb, path)
    return seconds


def cell_seconds(nb) -> list[tuple[float, int, str]]:
    """(seconds, index, cell id) of every executed code cell, slowest first (MEASURED here)."""
    rows = []
    for i, cell in enumerate(nb.cells):
        ex = cell.metadata.get("execution", {})
        if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            start, end = (
                datetime.fromisoformat(ex[k].replace("Z", "+00:00"))
                for k in ("iopub.execute_input", "shell.execute_reply")
            )
            rows.append(((end - start).total_seconds(), i, cell.get("id", "")))
    return sorted(rows, reverse=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument(
        "--times", action="store_true", help="print the slowest cells; save nothing"
    )
    args = parser.parse_args(argv)
    for p in args.paths:
        if args.times:
            nb, seconds = execute(Path(p), record_timing=True)
            slowest = ", ".join(f"cell {i} ({cid}) {s:.1f} s" for s, i, cid in cell_seconds(nb)[:5])
            print(f"{p}: {seconds:.1f} s; slowest: {slowest}", flush=True)
        else:
            print(f"{p}: executed in {run(Path(p)):.1f} s", flush=True)


if __name__ == "__main__":
    main()
