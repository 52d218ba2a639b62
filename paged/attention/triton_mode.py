"""Where Triton's kernels run, GPU or CPU interpreter: decided here, once, before Triton loads.

Triton reads TRITON_INTERPRET whenever a function is decorated with `@triton.jit`, and it
decorates its own helpers (`tl.sum`, `tl.max`, `tl.cdiv`, ...) the first time `triton` is
imported. A kernel decorated for the interpreter that calls helpers compiled for the GPU fails
at launch with "Cannot call @triton.jit'd outside of the scope of a kernel" (issue 40), so the
choice has to be made before that first import, whichever module comes first. This module is
that one place: `paged.attention` imports it before anything that imports Triton, and
`paged.gpu` imports `paged.attention` before any of its modules runs.

The rule: without a CUDA GPU (`torch.cuda.is_available()` is False) TRITON_INTERPRET becomes 1;
a value already set (0 or 1) wins. If Triton was imported earlier in the other mode, the choice
can no longer take effect, and importing this module raises `TritonImportedTooEarly`, which says
what to do, instead of kernels that fail later at their first launch.
"""

from __future__ import annotations

import os
import sys

import torch

from ..text import msg

TOO_EARLY = msg(
    "Triton was imported before paged, {found}, but this process needs {wanted}: Triton reads "
    "TRITON_INTERPRET only when it is first imported, so its kernels would fail at launch. "
    "Import paged (for example `import paged.attention`) before triton, or set "
    "TRITON_INTERPRET={value} before Python starts; in a notebook, restart the kernel first.",
    "Triton이 paged보다 먼저 {found} import되었습니다. 이 프로세스에 필요한 것: {wanted}. "
    "Triton은 처음 import될 때만 TRITON_INTERPRET을 읽으므로 커널이 실행 시 실패합니다. "
    "triton보다 paged를 먼저 import하거나(예: `import paged.attention`), Python을 시작하기 전에 "
    "TRITON_INTERPRET={value}로 설정하세요. 노트북에서는 먼저 커널을 다시 시작하세요.",
)
MODES = {
    True: msg("for the CPU interpreter", "CPU 인터프리터용으로"),
    False: msg("compiled for the GPU", "GPU용으로 컴파일되게"),
}
WANTED = {
    True: msg("the CPU interpreter (no CUDA GPU here)", "CPU 인터프리터(CUDA GPU 없음)"),
    False: msg("compiled GPU kernels", "컴파일된 GPU 커널"),
}


class TritonImportedTooEarly(RuntimeError):
    """Triton was imported in the other mode before `paged` could choose it."""


def loaded_mode() -> bool | None:
    """How the Triton already imported defined its helpers: True interpreted, False compiled,
    None when Triton is not imported yet (or its helpers cannot tell)."""
    standard = sys.modules.get("triton.language.standard")
    helper = getattr(standard, "sum", None)
    if helper is None:
        return None
    return type(helper).__name__ == "InterpretedFunction"


def decide() -> bool:
    """Set TRITON_INTERPRET=1 when there is no CUDA GPU (a value already set wins); return
    whether kernels run under the interpreter. Raises `TritonImportedTooEarly` (see above)."""
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    wanted = os.environ.get("TRITON_INTERPRET") == "1"
    found = loaded_mode()
    if found is not None and found != wanted:
        raise TritonImportedTooEarly(
            TOO_EARLY.format(found=MODES[found], wanted=WANTED[wanted], value=int(wanted))
        )
    return wanted


INTERPRETED = decide()

__all__ = ["INTERPRETED", "TritonImportedTooEarly", "decide", "loaded_mode"]
