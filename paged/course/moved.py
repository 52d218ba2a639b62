"""Old module paths keep working: `import paged.widgets` loads `paged.viz.widgets`, and so on.

Modules moved into `paged.viz` and `paged.course` when the package was sorted into what the
course teaches and what draws or runs it; a learner's notebook written before still runs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

MOVED = {
    "paged.widgets": "paged.viz.widgets",
    "paged.figures": "paged.viz.figures",
    "paged.fonts": "paged.course.fonts",
    "paged.editions": "paged.course.editions",
    "paged.notebook_runner": "paged.course.runner",
    "paged.sim_bench": "paged.course.sim_bench",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and hands out the module that lives at the new one."""

    def find_spec(self, name, path=None, target=None):
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        pass  # already executed, under its new name


def install() -> None:
    """Register the aliases once per interpreter."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
