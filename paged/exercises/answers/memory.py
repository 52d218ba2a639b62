"""Model answers for the memory exercises."""

from __future__ import annotations

__all__: list[str] = []
