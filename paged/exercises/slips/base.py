"""A catalogue entry: a wrong implementation and its bilingual hint."""

from __future__ import annotations

from ...text import msg


def slip(wrong, en: str, ko: str) -> tuple:
    """The (wrong_fn, hint) pair `core.check` tries: the hint is `msg(en, ko)`."""
    return wrong, msg(en, ko)
