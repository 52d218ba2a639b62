"""What chapter 6 prints: two refusals by Triton (a mask, a size not constexpr) and a title."""

from ...text import msg

# A (2,) mask on a (2, 4) tile
MASK_REFUSED = msg(
    "Triton refused the kernel: a (2,) mask does not line up with a (2, 4) tile.",
    "Triton이 커널을 거부했습니다: (2,) 마스크는 (2, 4) 타일과 모양이 맞지 않습니다.",
)

# Which program owns which element (the figure's title)
OWNERS_TITLE = msg(
    "{M} x {N} matrix, tiles {BM} x {BN}, grid {grid}: the number is the program "
    "(grey: masked lanes)",
    "{M} x {N} 행렬, 타일 {BM} x {BN}, 그리드 {grid}: 숫자는 원소를 맡은 프로그램 "
    "(회색: 마스크로 꺼진 레인)",
)

# tl.arange needs a constexpr power of two
TRITON_ERROR = msg("error: {text}", "오류: {text}")  # the text is Triton's own
