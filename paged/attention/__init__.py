"""Paged decode attention: a PyTorch reference and a Triton kernel.

Importing this package sets TRITON_INTERPRET=1 when no CUDA GPU is present, before the kernel is
defined, so the Triton kernel runs on the CPU interpreter. Without Triton (macOS, Windows) the
reference still works and `paged_attention` raises a message saying where to run it.
"""

from __future__ import annotations

import os

import torch

from .reference import check_inputs, gather_kv, paged_attention_ref

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

try:
    from .kernel import INTERPRETED, paged_attention
except ImportError as exc:  # no triton wheel for this platform
    INTERPRETED = None
    _reason = str(exc)

    def paged_attention(*args, **kwargs):
        """Stand-in when Triton cannot be imported."""
        raise RuntimeError(
            f"Triton is not available here ({_reason}). It ships for Linux only: run the Triton "
            "chapters (6 and 7) in Google Colab (GPU runtime), or on Linux after "
            "`pip install triton`."
        )


def backend() -> str:
    """Where `paged_attention` runs: 'cuda', 'interpreter' or 'unavailable'."""
    if INTERPRETED is None:
        return "unavailable"
    return "interpreter" if INTERPRETED else "cuda"


__all__ = ["backend", "check_inputs", "gather_kv", "paged_attention", "paged_attention_ref"]
