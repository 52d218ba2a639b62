"""A launch that fails: the learner's kernel did not compile or run. Say why, short, and hint.

`launch(name, watch, run, ...)` runs a kernel under a `triton_checks.Watch`; an error is printed
in one line (its type and the first 300 characters) with the hint of the first known phrase it
contains (`ERROR_HINTS`: a tile size that is not a power of two or not a constexpr, shapes that
do not broadcast, tl.dot's minimum sizes, a call of the library's own answer, an undefined name),
or the advice to run it by hand. A stub that still raises NotImplementedError is "not yet".
"""

from __future__ import annotations

from ...text import msg
from .verdicts import HINT

__all__: list[str] = []  # used by kernel_runner.py

DID_NOT_RUN = msg(
    "{name}: your kernel did not run: {error}", "{name}: 커널이 실행되지 않았습니다: {error}"
)
ERROR_HINTS = (
    (
        ("only 0-dimensional arrays can be converted",),  # seen: Triton 3.6.0 with NumPy 2.5.2
        msg(
            "this one is not your kernel's fault: older Triton interpreters fail with NumPy 2.4 "
            "and later, which no longer turns a one-element array into a number (Triton issue "
            '9171; newer Triton releases are fixed). Install `pip install "numpy<2.4"` or a newer '
            "triton, restart the kernel, and run the check again.",
            "이 오류는 여러분 커널의 잘못이 아닙니다. 오래된 Triton 인터프리터는 원소 하나짜리 배열을 "
            "더 이상 수로 바꿔 주지 않는 NumPy 2.4 이상에서 실패합니다(Triton 이슈 9171, 새 Triton "
            '릴리스에서 고쳐짐). `pip install "numpy<2.4"`나 새 triton을 설치하고 커널을 다시 '
            "시작한 뒤 검사를 다시 실행하세요.",
        ),
    ),
    (
        ("power of 2",),
        msg(
            "tl.arange(0, B) needs B to be a power of two: round the tile up (the launcher does it "
            "with triton.next_power_of_2) and mask the extra lanes.",
            "tl.arange(0, B)의 B는 2의 거듭제곱이어야 합니다. 타일 크기를 올림하고(런처에서는 "
            "triton.next_power_of_2로) 남는 레인은 마스크하세요.",
        ),
    ),
    (
        ("constexpr",),
        msg(
            "tile sizes are compile-time constants: declare them as NAME: tl.constexpr in the "
            "signature and use those names in tl.arange, not a runtime argument such as n.",
            "타일 크기는 컴파일 시점 상수입니다. 시그니처에서 NAME: tl.constexpr로 선언하고, "
            "tl.arange에는 n 같은 실행 시점 인자가 아니라 그 이름을 쓰세요.",
        ),
    ),
    (
        ("incompatible dimensions", "Cannot broadcast"),
        msg(  # Triton 3.9 and 3.5 say it so
            "two shapes do not line up. Triton matches shapes from the LAST dimension, so a "
            "(ROWS,) vector next to a (ROWS, COLS) tile is lined up with the columns: a 1-D mask "
            "on a 2-D tile (or a 1-D offset) needs [:, None] (one per row) or [None, :] (one per "
            "column).",
            "두 모양이 맞지 않습니다. Triton은 모양을 마지막 차원부터 맞추므로, (ROWS,) 벡터를 "
            "(ROWS, COLS) 타일 옆에 두면 열과 맞춰집니다. 2차원 타일의 1차원 마스크(또는 1차원 "
            "오프셋)에는 [:, None](행마다 하나) 또는 [None, :](열마다 하나)가 필요합니다.",
        ),
    ),
    (
        ("should have M >=",),
        msg(
            "tl.dot refused the shapes: its inner dimension K must be at least 16 on a GPU; pad "
            "the tiles to 16 and mask the padding (other=0.0).",
            "tl.dot이 모양을 거부했습니다. GPU에서는 안쪽 차원 K가 16 이상이어야 합니다. 타일을 "
            "16으로 채우고 채운 부분은 마스크하세요(other=0.0).",
        ),
    ),
    (
        ("the exercise is to write it",),
        msg(
            "the puzzle is to write this step yourself: while the checker runs your kernel, what "
            "already computes it (the library's attention, its kernel, launcher and reference; "
            "tl.softmax in the softmax puzzle) is switched off.",
            "이 퍼즐은 이 단계를 직접 작성하는 것입니다. 채점기가 여러분의 커널을 실행하는 "
            "동안에는 이미 그 계산을 하는 것(라이브러리의 어텐션과 그 커널, 런처, 참조 구현, "
            "소프트맥스 퍼즐의 tl.softmax)이 꺼져 있습니다.",
        ),
    ),
    (
        ("is not defined",),
        msg(
            "a name in your kernel is not defined: a typo, or a variable from another cell (a "
            "kernel sees only its arguments, constants and other @triton.jit functions).",
            "커널 안의 이름이 정의되지 않았습니다. 오타이거나 다른 셀의 변수입니다(커널은 인자와 "
            "상수, 다른 @triton.jit 함수만 볼 수 있습니다).",
        ),
    ),
)
STILL_A_STUB = msg(
    "{name}: not yet: your kernel still raises NotImplementedError. Write its body and run again.",
    "{name}: 아직입니다. 커널이 아직 NotImplementedError를 일으킵니다. 본문을 채우고 다시 "
    "실행하세요.",
)
RUN_BY_HAND = msg(
    "launch it once by hand on the same shapes to see the whole error and the line it points at.",
    "같은 모양으로 한 번 직접 실행해 전체 오류와 그 오류가 가리키는 줄을 확인하세요.",
)


def launch(name: str, watch, run, *args, **kwargs) -> bool:
    """run(*args, **kwargs) under `watch`; if the kernel fails to compile or launch, print why
    (short) and a hint, and return False."""
    try:
        with watch.run():
            run(*args, **kwargs)
    except Exception as exc:  # the learner's kernel: any error is theirs to read
        text = " ".join(str(exc).split())
        if isinstance(exc, NotImplementedError) or "NotImplementedError" in text:
            print(STILL_A_STUB.format(name=name))  # the interpreter wraps it: by its name
            return False
        said = _said(exc)
        print(DID_NOT_RUN.format(name=name, error=f"{type(exc).__name__}: {said[:300]}"))
        hint = next((h for keys, h in ERROR_HINTS if any(k in said for k in keys)), RUN_BY_HAND)
        print(HINT.format(hint=hint))
        return False
    return True


def _said(exc: BaseException) -> str:
    """What the error says, in one line. A GPU compile error (Triton's CompilationError) quotes
    the kernel's lines, whose `tl.constexpr` would match every hint's phrase and fill the 300
    characters shown: here it is its place and its own words (`error_message`, and the error it
    was raised from)."""
    if not hasattr(exc, "error_message"):
        return " ".join(str(exc).split())
    node = getattr(exc, "node", None)
    where = f"at {node.lineno}:{node.col_offset}: " if hasattr(node, "lineno") else ""
    said = [str(exc.error_message or "")] + [str(e) for e in (exc.__cause__, exc.__context__) if e]
    return where + " ".join(" ".join(dict.fromkeys(said)).split())
