"""Model answers for the basics exercises."""

from __future__ import annotations

__all__: list[str] = []
