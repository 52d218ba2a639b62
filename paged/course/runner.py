"""Execute notebooks top to bottom in a fresh kernel and store their outputs (`make notebooks`).

python -m paged.course.runner notebooks/*.ipynb
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps of an earlier run
    t0 = time.perf_counter()
    NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,  # no per-cell timestamps: a re-run changes only what it shows
    ).execute()
    nbformat.write(nb, path)
    return time.perf_counter() - t0


def main(paths: list[str]) -> None:
    for p in paths:
        print(f"{p}: executed in {run(Path(p)):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
