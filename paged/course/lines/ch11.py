"""What chapter 11 draws: the course and vLLM, step by step, and vLLM's block pool."""

from ...text import msg

# The two runs, step by step
REQUESTS_RUNNING = msg("requests running", "실행 중인 요청")
FREE_BLOCKS = msg("free blocks", "빈 블록")
ENGINE_STEP = msg("engine step (red lines: preemptions)", "엔진 단계 (빨간 선: 선점)")
RUNS_TITLE = msg(
    "24 requests, 31 usable blocks: the course under V1's rules and vLLM (MEASURED counts)",
    "요청 24개, 쓸 수 있는 블록 31개: V1 규칙의 코스와 vLLM (MEASURED 개수)",
)

# vLLM's block pool at its first preemption
BLOCK_POOL_TITLE = msg(
    "vLLM's block pool after step {t} (block 0: the null block)",
    "{t}단계 뒤 vLLM의 블록 풀 (블록 0: 널 블록)",
)
