"""Checkers for the Triton on-ramp (chapter 6): small puzzles before the paged kernel."""

from __future__ import annotations

__all__: list[str] = []
