"""What the model tests need, shared by tests/test_model*.py: skip where it is missing, or fail.

The model extra (`pip install -e '.[model]'`) and the SmolLM2 weights are optional for a learner,
so a test that needs them is skipped without them; CI sets PAGED_REQUIRE_MODEL=1, where a
missing piece is a failure instead.
"""

import os

import pytest

import paged.model as pm

REQUIRE = os.environ.get("PAGED_REQUIRE_MODEL", "") not in ("", "0")


def unavailable(*modules: str) -> str | None:
    """Why one of `modules` cannot be imported, or None."""
    for name in modules:
        try:
            __import__(name)
        except ImportError:
            return f"{name} is not installed (pip install -e '.[model]')"
    return None


def need(*modules: str, weights: bool = False) -> None:
    """Skip the calling test (fail it under PAGED_REQUIRE_MODEL) unless all of it is here."""
    reason = unavailable(*modules)
    if reason is None and weights:
        try:
            pm.weights_path()
        except pm.WeightsNotFound as exc:
            reason = str(exc)
    if reason is not None:
        if REQUIRE:
            pytest.fail(f"PAGED_REQUIRE_MODEL is set but {reason}")
        pytest.skip(reason)
