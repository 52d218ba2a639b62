"""Shared pytest set-up: markers used across the test files."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: executes whole chapters (minutes); deselect with -m 'not slow'"
    )
