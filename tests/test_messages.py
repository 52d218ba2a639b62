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


def test_a_text_field_pads_to_columns_too(monkeypatch):
    """A plain str filled into "{name:8s}" is padded by columns, as a Message is."""
    row = msg("{name:8s}|{n:>3}", "{name:8s}|{n:>3}개")
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert row.format(name="스와핑", n=7) == "스와핑  |  7개"
    assert row.format(name="swap", n=7) == "swap    |  7개"


def test_korean_side_by_side_table_lines_up(monkeypatch):
    """paged.engines.compare's table: Korean names and row labels take their columns."""
    from paged.engines.compare import SideBySide
    from paged.text import width

    runs = SideBySide(
        names=("코스 (V1 규칙)", "vLLM"),
        same_tokens=True,
        running=((1, 2, 2), (1, 2, 2)),
        free_blocks=((9, 8, 8), (9, 8, 8)),
        preempted=((), ()),
        peak_batch=(2, 2),
    )
    for lang in ("en", "ko"):
        monkeypatch.setenv("PAGED_LANG", lang)
        table = runs.summary_lines()[:4]  # the header and three rows
        assert [width(line) for line in table] == [58] * 4, table
        assert table[0].endswith("코스 (V1 규칙)             vLLM")


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
        if name.startswith(OPTIONAL) or name.endswith(("__main__", "vllm_child")):  # scripts
            continue
        importlib.import_module(name)
    assert len(names) > 30
