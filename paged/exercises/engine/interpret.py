"""The child process of `kernel_child.judge`: `python -m paged.exercises.engine.interpret DIR`.

It imports the kernel judge wrote into DIR, runs the job (check or try) on the registry's spec
under the interpreter, as a machine without a GPU does, and writes what it returned to
DIR/result.pkl. A module of its own: it needs kernel_runner, which imports kernel_child.
"""

from __future__ import annotations

import importlib
import pickle
import sys
from pathlib import Path

import paged.attention  # noqa: F401  (chooses the interpreter before triton loads)
import paged.exercises  # noqa: F401, E402  (every chapter's checkers register their specs)

from .core import REGISTRY
from .kernel_child import MODULE
from .kernel_runner import check_kernel
from .kernel_try import trial

__all__: list[str] = []  # a program, run by kernel_child.judge


def main(folder: str) -> None:
    """Import the learner's module (`learner_kernel.py`: the kernel's source and the globals it
    reads), run the job (job.pkl: check or try, the puzzle, the kernel's name, the seed), write
    what it returned."""
    path = Path(folder)
    job = pickle.loads((path / "job.pkl").read_bytes())
    sys.path.insert(0, str(path))
    kernel = getattr(importlib.import_module(MODULE), job["kernel"])
    if job["op"] == "check":
        result = check_kernel(REGISTRY[job["puzzle"]], kernel, job["seed"])
    else:
        result = trial(kernel, job["puzzle"])
    (path / "result.pkl").write_bytes(pickle.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
