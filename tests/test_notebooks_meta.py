"""Every chapter: a Colab badge and setup cell that agree with paged.course; the same bones."""

import json
from pathlib import Path

import pytest

from paged import course

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_eight_chapters():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(8)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_badge_and_setup_cell_point_at_the_course(path):
    cells = json.loads(path.read_text())["cells"]
    assert course.colab_badge(path.name) in "".join(cells[0]["source"])
    setup = "".join(cells[1]["source"])
    assert cells[1]["cell_type"] == "code"
    assert f'"{course.PIP_SPEC}"' in setup and '"google.colab" in sys.modules' in setup


@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=lambda p: p.name)
def test_chapters_have_the_bones(path):
    text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
    for heading in (
        "Key questions",
        "Goals",
        "Where this fits",
        "Trade-off",
        "Reading the evidence",
        "Takeaways",
        "does not show",
        "Check questions",
        "<details>",
        "Exercise",
    ):
        assert heading in text, heading


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_from_one_clean_run(path):
    """Outputs come from `make notebooks`: cells numbered 1, 2, 3... in order, no timestamps."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    assert not [c["id"] for c in cells if "execution" in c["metadata"]]
