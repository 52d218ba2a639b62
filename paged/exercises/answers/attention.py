"""Model answers for the attention exercises."""

from __future__ import annotations

__all__: list[str] = []
