"""Shared pytest set-up: markers used across the test files; the exercise tests in English."""

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: executes whole chapters (minutes); deselect with -m 'not slow'"
    )


@pytest.fixture(autouse=True)
def english(request, monkeypatch):
    """The exercise tests read the English edition's verdicts (a test may switch to Korean)."""
    if request.path.name.startswith("test_exercise"):
        monkeypatch.delenv("PAGED_LANG", raising=False)
