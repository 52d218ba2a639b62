"""What chapter 0 prints: the runtime check (Triton, GPU, Hangul font) and the paper's Fig. 2."""

from ...text import msg

# The runtime check
TRITON_MISSING = msg(
    "triton: not installed (Linux only) - chapters 6 and 7 run in Colab",
    "triton: 설치되어 있지 않습니다(Linux 전용). 6장과 7장은 Colab에서 실행하세요",
)
GPU = msg("GPU: {gpu} compute capability {cc}", "GPU: {gpu}, 연산 능력(compute capability) {cc}")
NOTE = msg("NOTE: {hint}", "참고: {hint}")
NO_FONT = msg(
    "none found: install one, e.g. `sudo apt-get install fonts-nanum` (Debian/Ubuntu) "
    "or Noto Sans CJK, then restart the kernel",
    "찾지 못했습니다. `sudo apt-get install fonts-nanum`(Debian/Ubuntu)으로 설치하거나 "
    "Noto Sans CJK를 설치한 뒤 커널을 다시 시작하세요",
)
HANGUL_FONT = msg("font for Hangul in figures: {font}", "그림의 한글 글꼴: {font}")

# The paper's Fig. 2
FIG2_TOKEN_STATES = msg(
    "PAPER Fig. 2 ('the experiment in §6.2'), share of KV memory holding token states:",
    "PAPER Fig. 2('the experiment in §6.2'), KV 메모리 중 토큰 상태를 담는 비율:",
)
