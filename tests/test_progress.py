"""The progress bar (paged.progress): silent outside a kernel; its saved widget state dropped."""

import nbformat

from paged.course.runner import drop_progress_state
from paged.progress import WIDGET_VIEW, in_kernel, progress

STATE = "application/vnd.jupyter.widget-state+json"


def test_outside_a_kernel_nothing_is_printed(capsys):
    assert not in_kernel()
    with progress(3, "requests") as bar:
        bar.update(2)
        bar.update()
    assert capsys.readouterr() == ("", "")


def _model(name, **state):
    return {"model_name": name, "state": state}


def test_runner_drops_a_bars_widgets_and_keeps_the_others():
    nb = nbformat.v4.new_notebook()
    bar = {"data": {WIDGET_VIEW: {"model_id": "box"}, "text/plain": ""}, "metadata": {}}
    bar["metadata"]["paged"] = "progress"
    explorer = {"data": {WIDGET_VIEW: {"model_id": "explorer"}}, "metadata": {}}
    cell = nbformat.v4.new_code_cell("...")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data=o["data"], metadata=o["metadata"])
        for o in (bar, explorer)
    ]
    nb.cells = [cell]
    models = {
        "box": _model("HBoxModel", children=["IPY_MODEL_label", "IPY_MODEL_fill"]),
        "label": _model("HTMLModel", layout="IPY_MODEL_l1"),
        "fill": _model("FloatProgressModel", layout="IPY_MODEL_l2"),
        "l1": _model("LayoutModel"),
        "l2": _model("LayoutModel"),
        "explorer": _model("VBoxModel", layout="IPY_MODEL_l3"),
        "l3": _model("LayoutModel"),
    }
    nb.metadata["widgets"] = {STATE: {"state": models, "version_major": 2}}
    drop_progress_state(nb)
    assert set(nb.metadata["widgets"][STATE]["state"]) == {"explorer", "l3"}
    nb.cells[0].outputs = nb.cells[0].outputs[:1]  # a notebook with bars only: no state left
    nb.metadata["widgets"][STATE]["state"] = {"box": models["box"]}
    drop_progress_state(nb)
    assert "widgets" not in nb.metadata
