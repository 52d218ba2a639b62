"""The verdicts every checker prints, plain-Python (`core.check`) and Triton (`kernel_runner`).

Each is a bilingual `paged.text.msg`; the Triton ones name a kernel and where a launch failed.
"""

from __future__ import annotations

from ..text import msg

__all__: list[str] = []  # used by the checkers

# ---- plain-Python checkers ----
CORRECT = msg("{name}: correct ({n} cases).", "{name}: 정답입니다 (사례 {n}개).")
NOT_YET = msg(
    "{name}: not yet: replace the stub's `raise NotImplementedError` with your code and run the "
    "cell again.",
    "{name}: 아직입니다. 스텁의 `raise NotImplementedError`를 여러분의 코드로 바꾸고 셀을 다시 "
    "실행하세요.",
)
NOTHING = msg(
    "{name}: you returned nothing — did you forget `return`? (for {case})",
    "{name}: 아무것도 반환하지 않았습니다. `return`을 빠뜨리지 않았나요? ({case})",
)
NOT_QUITE = msg(
    "{name}: not quite: for {case} you returned {got}, expected {want}.",
    "{name}: 아직 아닙니다. {case}일 때 반환값은 {got}, 기대한 값은 {want}입니다.",
)
RAISED = msg(
    "{name}: not quite: for {case} your function raised {error}.",
    "{name}: 아직 아닙니다. {case}일 때 함수에서 예외가 발생했습니다: {error}",
)
HINT = msg("  hint: {hint}", "  힌트: {hint}")
RANDOM = msg(
    "  (a random case: `check_{name}(your_function, seed={seed})` draws the same cases again)",
    "  (무작위 사례입니다. `check_{name}(your_function, seed={seed})`로 같은 사례를 다시 뽑을 수 "
    "있습니다)",
)

# ---- Triton puzzles ----
NOT_A_KERNEL = msg(
    "{name}: not yet: pass your @triton.jit kernel (got {got}).",
    "{name}: 아직입니다. @triton.jit 커널을 넘겨 주세요(받은 것: {got}).",
)
WROTE_NOTHING = msg(
    "{name}: not yet: your kernel wrote nothing. Write its body and run again.",
    "{name}: 아직입니다. 커널이 아무것도 쓰지 않았습니다. 본문을 채우고 다시 실행하세요.",
)
KERNEL_CORRECT = msg("{name}: correct ({what}).", "{name}: 정답입니다 ({what}).")
KERNEL_NOT_QUITE = msg(
    "{name}: not quite ({where}): {what}", "{name}: 아직 아닙니다 ({where}). {what}"
)
KERNEL_RANDOM = msg(
    "  (a random case: `check_{name}(your_kernel, seed={seed})` draws the same cases again)",
    "  (무작위 사례입니다. `check_{name}(your_kernel, seed={seed})`로 같은 사례를 다시 뽑을 수 "
    "있습니다)",
)
