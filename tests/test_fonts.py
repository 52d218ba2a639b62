"""Hangul in a figure finds a font (CI installs fonts-nanum and sets PAGED_REQUIRE_CJK_FONT=1)."""

import logging
import os
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from paged.viz import fonts  # noqa: E402

TEXT = "논리 블록 → 물리 블록 (block table, 내부 단편화)"


def _missing_glyph_warnings(fig) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    return [str(w.message) for w in caught if "missing from" in str(w.message)]


@pytest.fixture
def rc():
    with matplotlib.rc_context():  # use_cjk_font changes rcParams: keep other tests unaffected
        yield


def test_a_figure_with_hangul_finds_a_font(rc):
    name = fonts.use_cjk_font()
    if name is None:
        msg = f"no font with Hangul installed (Debian/Ubuntu: apt-get install {fonts.APT_PACKAGE})"
        if os.environ.get("PAGED_REQUIRE_CJK_FONT"):
            pytest.fail(msg)
        pytest.skip(msg)
    assert fonts.has_hangul(fonts.find_cjk_font())
    assert matplotlib.rcParams["font.family"][-1] == name  # a fallback: Latin keeps its font
    fig, ax = plt.subplots()
    ax.set_title(TEXT)
    ax.bar(["논리", "물리"], [1, 2])
    try:
        assert _missing_glyph_warnings(fig) == []
    finally:
        plt.close(fig)
    families = list(matplotlib.rcParams["font.family"])
    assert fonts.use_cjk_font() == name and list(matplotlib.rcParams["font.family"]) == families


def test_without_a_cjk_font_hangul_is_missing(rc):
    """The check above can fail: DejaVu Sans alone draws boxes and says so."""
    matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
    fig, ax = plt.subplots()
    ax.set_title(TEXT)
    try:
        assert _missing_glyph_warnings(fig)
    finally:
        plt.close(fig)


def test_dejavu_has_no_hangul_and_hints_rank_fonts():
    dejavu = matplotlib.font_manager.findfont("DejaVu Sans")
    assert not fonts.has_hangul(dejavu) and fonts.rank(dejavu) is None
    assert fonts.rank("/usr/share/fonts/truetype/nanum/NanumGothic.ttf") == 0
    assert fonts.rank("/x/NotoSansCJK-Regular.ttc") == 1


def test_installs_only_when_no_font_is_found(rc, monkeypatch):
    calls = []
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)
    monkeypatch.setattr(fonts, "_apt_install", lambda pkg: calls.append(pkg) or False)
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    assert fonts.use_cjk_font() is None and calls == []  # not asked to install
    assert fonts.use_cjk_font(install=True) is None and calls == ["fonts-nanum"]
    dejavu = matplotlib.font_manager.findfont("DejaVu Sans")
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: dejavu)  # "found": no apt
    calls.clear()
    fonts.use_cjk_font(install=True)
    assert calls == []


def test_bold_labels_do_not_log_a_weight_fallback(rc, caplog):
    """Nanum's bold is weight 600: matplotlib's note about it must not reach notebook outputs."""
    name = fonts.use_cjk_font()
    if name is None:
        pytest.skip("no font with Hangul here")
    fig, ax = plt.subplots()
    ax.text(0, 0, "R1 논리 블록", fontweight="bold")
    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        fig.canvas.draw()
    plt.close(fig)
    assert not [r for r in caplog.records if "Failed to find font weight" in r.getMessage()]
