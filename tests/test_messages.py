"""The message catalogue: complete by construction, and the edition's language is the one shown."""

import importlib
import pkgutil

import pytest

import paged
from paged.text import Message, language, msg, set_language


def test_a_message_without_korean_or_with_other_fields_is_refused():
    with pytest.raises(ValueError, match="no Korean text"):
        Message("not yet", "")
    with pytest.raises(ValueError, match="no Korean text"):
        msg("not yet", "not yet")  # an English stand-in is not a translation
    with pytest.raises(ValueError, match=r"fields \['name'\] in English but \[\] in Korean"):
        msg("{name}: not yet", "아직입니다")


def test_the_language_follows_paged_lang(monkeypatch):
    m = msg("{name}: correct", "{name}: 정답입니다")
    monkeypatch.delenv("PAGED_LANG", raising=False)
    assert language() == "en" and m.format(name="slot") == "slot: correct"
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert str(m) == "{name}: 정답입니다" and m.format(name="slot") == "slot: 정답입니다"
    monkeypatch.setenv("PAGED_LANG", "fr")
    with pytest.raises(ValueError, match="'fr'"):
        language()


def test_a_message_pads_in_an_f_string_and_keys_a_dict(monkeypatch):
    m = msg("swap", "스와핑")
    monkeypatch.setenv("PAGED_LANG", "en")
    assert f"[{m:6s}]" == "[swap  ]" and {m: 1}[msg("swap", "스와핑")] == 1
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert f"[{m:>8s}]" == "[  스와핑]" and f"[{m:4}]" == "[스와핑]"  # a syllable is 2 columns
    assert f"{m:^10}|" == "  스와핑  |" and f"{msg('a', '가'):.1}" == "가"  # other specs: format()


def test_set_language_checks_its_argument(monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "en")
    with pytest.raises(ValueError, match="'kr'"):
        set_language("kr")
    assert language() == "en"  # unchanged after the refusal
    set_language("ko")
    assert language() == "ko"


OPTIONAL = ("paged.model",)  # needs the `model` extra; its own tests import it


def test_every_module_imports_so_every_message_is_complete():
    """A Message with no Korean text raises at import: importing everything checks them all."""
    names = [m.name for m in pkgutil.walk_packages(paged.__path__, "paged.")]
    for name in names:
        if name.startswith(OPTIONAL) or name.endswith("__main__"):
            continue
        importlib.import_module(name)
    assert len(names) > 30
