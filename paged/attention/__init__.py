"""Paged decode attention: a PyTorch reference and a Triton kernel.

Importing this package first decides where Triton's kernels run (`triton_mode`): without a CUDA
GPU it sets TRITON_INTERPRET=1 before Triton is imported, so the kernels run on the CPU
interpreter, and it says what to do if Triton was already imported the other way. Without
Triton (macOS, Windows) the reference still works and `paged_attention` raises a message saying
where to run it.
"""

from __future__ import annotations

from ..text import msg
from . import triton_mode  # noqa: F401  (first: before anything below imports Triton)
from .reference import check_inputs, gather_kv, paged_attention_ref

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


def describe_backend() -> str:
    """`backend()` as a sentence for the learner, in the edition's language."""
    return KERNEL_BACKEND.format(backend=BACKENDS[backend()])


KERNEL_BACKEND = msg("kernel backend: {backend}", "커널 백엔드: {backend}")
BACKENDS = {
    "cuda": msg("the Triton kernel on the CUDA GPU", "CUDA GPU에서 도는 Triton 커널"),
    "interpreter": msg(
        "Triton's CPU interpreter (TRITON_INTERPRET=1): slow, fine for small shapes",
        "Triton의 CPU 인터프리터(TRITON_INTERPRET=1): 느리지만 작은 크기에는 충분함",
    ),
    "unavailable": msg(
        "none: Triton does not install on this platform",
        "없음: 이 플랫폼에는 Triton이 설치되지 않음",
    ),
}

__all__ = [
    "backend",
    "describe_backend",
    "check_inputs",
    "gather_kv",
    "paged_attention",
    "paged_attention_ref",
]
