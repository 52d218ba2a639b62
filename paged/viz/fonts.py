"""A font for Hangul in matplotlib figures, so 논리 블록 never renders as empty boxes.

matplotlib's default DejaVu Sans has no Hangul. `use_cjk_font()` looks for an installed font that
has it (Nanum, Noto CJK, Source Han, Malgun, Apple SD Gothic, ...), registers it, and appends it to
`font.family` as a fallback: Latin text keeps its font, Hangul glyphs come from the CJK one
(glyph fallback, matplotlib >= 3.6). In Colab the setup cell passes `install=True`, which installs
Debian/Ubuntu's `fonts-nanum` with apt only when no such font is present.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from pathlib import Path

import matplotlib
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

HANGUL = "한"  # any syllable: a font that has it has the whole Hangul block in practice
APT_PACKAGE = "fonts-nanum"  # about 10 MB; Debian and Ubuntu (Colab) both ship it
# File-name hints, best first; only fonts whose name matches are opened (scanning all is slow).
HINTS = (
    "nanumgothic",
    "notosanscjk",
    "notosanskr",
    "sourcehansans",
    "nanum",
    "notoserifcjk",
    "undotum",
    "unbatang",
    "malgun",
    "applesdgothicneo",
    "applegothic",
    "gulim",
    "batang",
    "baekmuk",
    "wqy",
    "droidsansfallback",
)


def rank(path: str) -> int | None:
    """Where the font file's name stands in `HINTS` (0: most wanted), None when it names none."""
    stem = Path(path).name.lower().replace("-", "").replace("_", "").replace(" ", "")
    return next((i for i, hint in enumerate(HINTS) if hint in stem), None)


def has_hangul(path: str | Path) -> bool:
    """Whether the font file at `path` has a glyph for Hangul."""
    return _has_hangul(str(path))


@functools.cache  # font files do not change while a kernel runs; drawings call this often
def _has_hangul(path: str) -> bool:
    try:
        return ord(HANGUL) in FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return False


@functools.cache  # walking the font folders is the slow part; cleared after an install
def _system_fonts() -> tuple[str, ...]:
    return tuple(font_manager.findSystemFonts())


def find_cjk_font() -> Path | None:
    """The best installed font file that draws Hangul, or None."""
    known = [f.fname for f in font_manager.fontManager.ttflist]
    files = {*known, *_system_fonts()}
    ranked = sorted((r, p) for p in files if (r := rank(p)) is not None)
    return next((Path(p) for _, p in ranked if has_hangul(p)), None)


def _apt_install(package: str) -> bool:
    """Install a Debian package quietly (Colab runs as root); False if apt is missing or fails."""
    apt = shutil.which("apt-get")
    if apt is None:
        return False
    sudo = [] if os.geteuid() == 0 or not shutil.which("sudo") else ["sudo", "-n"]
    install = [*sudo, apt, "install", "-y", "-qq", package]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(install, capture_output=True, env=env).returncode == 0:
        return True
    subprocess.run([*sudo, apt, "update", "-qq"], capture_output=True, env=env)  # stale lists
    return subprocess.run(install, capture_output=True, env=env).returncode == 0


class _QuietWeightFallback(logging.Filter):
    """Drop matplotlib's note that a fallback font lacks an exact weight (Nanum's bold is 600).

    Latin text keeps its own bold; only Hangul glyphs would come out a little lighter. Without
    this, some matplotlib versions print the note into notebook outputs, others do not.
    """

    def __init__(self, family: str):
        super().__init__()
        self.family = family

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("findfont: Failed to find font weight") and self.family in message
        )


def _quiet(family: str) -> None:
    log = logging.getLogger("matplotlib.font_manager")
    if not any(isinstance(f, _QuietWeightFallback) and f.family == family for f in log.filters):
        log.addFilter(_QuietWeightFallback(family))


def use_cjk_font(install: bool = False) -> str | None:
    """Make matplotlib draw Hangul with an installed CJK font; return its family name, or None.

    Idempotent and cheap to call again. `install=True` (Colab's setup cell) first installs
    `fonts-nanum` with apt when no font with Hangul is found.
    """
    manager = font_manager.fontManager
    families = list(matplotlib.rcParams["font.family"])
    for font in manager.ttflist:  # already set up by an earlier call
        if font.name in families and rank(font.fname) is not None and has_hangul(font.fname):
            _quiet(font.name)
            return font.name
    path = find_cjk_font()
    if path is None and install and _apt_install(APT_PACKAGE):
        _system_fonts.cache_clear()
        path = find_cjk_font()
    if path is None:
        return None
    if not any(Path(f.fname) == path for f in manager.ttflist):
        manager.addfont(str(path))  # a font installed after matplotlib built its cache
    name = font_manager.FontProperties(fname=path).get_name()
    if name not in families:
        matplotlib.rcParams["font.family"] = [*families, name]  # a fallback, after the default
    _quiet(name)
    return name
