"""A progress bar for the loops a learner waits on: tqdm's widget in a Jupyter kernel, else nothing.

`with progress(total, desc) as bar: ... bar.update(n)` shows a bar while the body runs (requests
served by the simulator or the model, say) and removes it afterwards. Its output carries no text (the
widget only), so a re-run changes nothing nbval compares and a notebook opened without its widgets
shows no stale bar. Outside a kernel (a script, pytest) `bar.update` does nothing.
"""

from __future__ import annotations

import contextlib

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class _Silent:
    def update(self, n: int = 1) -> None:
        pass


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (JupyterLab, Colab, nbclient), where a bar renders."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def progress(total: int, desc: str):
    """A bar of `total` units labelled `desc`, shown while the body runs (module docstring)."""
    if not in_kernel():
        yield _Silent()
        return
    from IPython.display import display

    try:
        from tqdm.notebook import tqdm

        bar = tqdm(total=total, desc=desc, leave=False, display=False)
    except ImportError:  # no ipywidgets: no bar rather than text that changes every run
        yield _Silent()
        return
    view = {"version_major": 2, "version_minor": 0, "model_id": bar.container.model_id}
    # the widget, with no text beside it: what nbval compares and a static view shows is empty
    display({WIDGET_VIEW: view, "text/plain": ""}, metadata={"paged": "progress"}, raw=True)
    try:
        yield bar
    finally:
        bar.close()
        # gone from the live page, also when it stopped short of `total` (answers that end
        # before their cap), which tqdm would leave standing in red
        bar.container.close()
