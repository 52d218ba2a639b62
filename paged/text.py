"""One message catalogue: everything the library prints or draws for a learner, per language.

Checker verdicts and hints, figure legends and labels, widget captions and printed summaries are
`Message`s: an English and a Korean text side by side, defined where they are used. Which one a
learner sees depends on the edition's language, `PAGED_LANG` ("en" or "ko"). The two editions run
the same code cells; only each chapter's setup cell differs, by the line that sets `PAGED_LANG`
(`paged.course.colab.setup_cell`), so a Korean chapter speaks Korean in its outputs too.

A message without a Korean text, or whose two texts name different `{fields}`, fails when its
module is imported: the catalogue cannot be incomplete.
"""

from __future__ import annotations

import os
import re
import string
import unicodedata
from dataclasses import dataclass

LANGUAGES = ("en", "ko")
_HANGUL = range(0xAC00, 0xD7A4)


def language() -> str:
    """The language of this kernel's outputs: `PAGED_LANG`, "en" when unset."""
    lang = os.environ.get("PAGED_LANG", "en")
    if lang not in LANGUAGES:
        raise ValueError(f"PAGED_LANG must be one of {LANGUAGES}, got {lang!r}")
    return lang


def set_language(lang: str) -> None:
    """Switch every later output to `lang` ("en" or "ko"); child processes inherit it."""
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {lang!r}")
    os.environ["PAGED_LANG"] = lang


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@dataclass(frozen=True)
class Message:
    """One learner-facing text in every language; `str()` gives the current language's."""

    en: str
    ko: str

    def __post_init__(self) -> None:
        if not self.en.strip():
            raise ValueError("a message needs an English text")
        if not any(ord(ch) in _HANGUL for ch in self.ko):
            raise ValueError(f"message {self.en[:60]!r} has no Korean text (got {self.ko!r})")
        if _fields(self.en) != _fields(self.ko):
            raise ValueError(
                f"message {self.en[:60]!r}: fields {sorted(_fields(self.en))} in English but "
                f"{sorted(_fields(self.ko))} in Korean"
            )

    def __str__(self) -> str:
        return self.ko if language() == "ko" else self.en

    def __format__(self, spec: str) -> str:
        """f"{message:20s}" pads the current language's text to 20 columns of a terminal, where
        a Hangul syllable takes two (so Korean table rows line up as the English ones do)."""
        return pad(str(self), spec)

    def format(self, **fields) -> str:
        """The current language's text with `{fields}` filled in; a text field padded in the
        template ("{name:16s}") is padded to columns, as the message itself is."""
        return _COLUMNS.format(str(self), **fields)


def width(text: str) -> int:
    """Columns `text` takes in a monospaced font: two for wide (East Asian) characters."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_SPEC = re.compile(r"([<>^]?)(\d*)s?")


def pad(text: str, spec: str) -> str:
    """format(text, spec) for "<20s", ">20", "^9s" and the like, counting columns, not
    characters; any other spec as format() takes it."""
    m = _SPEC.fullmatch(spec)
    if not m or not m.group(2):
        return format(text, spec)
    fill = max(0, int(m.group(2)) - width(text))
    align = m.group(1) or "<"
    left = {"<": 0, ">": fill, "^": fill // 2}[align]
    return " " * left + text + " " * (fill - left)


class _Columns(string.Formatter):
    """str.format, but text fields are padded to terminal columns (`pad`), not characters."""

    def format_field(self, value, spec: str) -> str:
        return pad(value, spec) if isinstance(value, str) else format(value, spec)


_COLUMNS = _Columns()


def msg(en: str, ko: str) -> Message:
    """A catalogue entry: `msg("not yet", "아직입니다")`."""
    return Message(en, ko)
