"""Model answers for the kernels exercises."""

from __future__ import annotations

__all__: list[str] = []
