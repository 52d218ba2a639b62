"""What chapter 9 prints: recompute or swap, admission rules, preemption's cost, beam search."""

from ...text import msg

# Recompute or swap: one run each
PREEMPTION_ROW = msg(
    "{mode:9s}: {n} preemptions, {swapped:5d} blocks swapped out, {recomputed:6d} tokens "
    "recomputed, {steps} steps (SIMULATED)",
    "{mode:9s}: 선점 {n}회, 스왑 아웃한 블록 {swapped:5d}개, 재계산한 토큰 {recomputed:6d}개, "
    "{steps}단계 (SIMULATED)",
)
RECOMPUTE = msg("recompute", "재계산")
SWAP = msg("swap", "스와핑")

# Why chapter 4 preempts so often: the admission rules
CHAPTER4_PREEMPTIONS = msg(
    "chapter 4's run, 2,000 requests queued at once: {n:,} preemptions (SIMULATED)",
    "4장의 실행, 한꺼번에 대기열에 들어간 요청 2,000개: 선점 {n:,}회 (SIMULATED)",
)
WATERMARK_0 = msg("greedy, watermark 0", "탐욕적, 워터마크 0")
WATERMARK_1 = msg("greedy, watermark 1% (default)", "탐욕적, 워터마크 1 % (기본값)")
WATERMARK_5 = msg("greedy, watermark 5%", "탐욕적, 워터마크 5 %")
HOLD = msg("hold (§4.5's swapping rule)", "보류 (§4.5의 스와핑 규칙)")
PACED = msg("greedy, arrivals 0.05/step", "탐욕적, 단계당 도착 0.05")
ADMISSION_TABLE_HEADER = msg(
    "admission rule (SIMULATED)       preemptions  token states  mean batch  steps",
    "수락 규칙 (SIMULATED)                   선점     토큰 상태   평균 배치   단계",
)

# The cost per preempted token, against §7.3's three statements
COST_TABLE_TITLE = msg(
    "µs per preempted token, swap out + in / recompute (SIMULATED)",
    "선점된 토큰당 µs, 스왑 아웃 + 인 / 재계산 (SIMULATED)",
)
COST_TABLE_HEADER = msg(
    "block   bandwidth fitted to PAPER §7.3   modern host (ASSUMPTION)",
    "블록    대역폭을 PAPER §7.3에 맞춤       요즘 호스트 (ASSUMPTION)",  # padded for Hangul's width
)
STATEMENTS = msg(
    "  statement 1 (swap excessive at small blocks): {one}; 2 (recompute constant): {two}; "
    "3 (each wins its side, recompute <= 1.2 x swap): {three}, recompute at most "
    "{ratio:.2f} x swap; swap cheaper from block size {crossover}",
    "  문장 1 (작은 블록에서 스와핑이 과도함): {one}; 2 (재계산은 일정함): {two}; "
    "3 (각자 자기 쪽에서 이기고, 재계산 <= 1.2 x 스왑): {three}, 재계산은 많아야 스왑의 "
    "{ratio:.2f}배; 스와핑이 더 싸지는 블록 크기 {crossover}부터",
)
BANDWIDTH_WINDOW = msg(
    "with 5 µs and 5,000 tokens/s, all three hold for {low:.2f}-{high:.2f} GB/s only; the fit "
    "takes {fit:.1f}",
    "5 µs와 초당 5,000토큰이면 세 문장이 모두 성립하는 것은 {low:.2f}-{high:.2f} GB/s뿐입니다. "
    "맞춘 값은 {fit:.1f}입니다",
)
LINK_NEEDS_PREFILL = msg(
    "25 GB/s and 10 µs would need a prefill of {needed:,.0f} tokens/s for statement 3: "
    "{peak:.0f}% of the A100's fp16 dense peak (ARITHMETIC from DOCS and the model's ASSUMPTIONS)",
    "25 GB/s와 10 µs로 문장 3이 성립하려면 prefill이 초당 {needed:,.0f}토큰이어야 합니다: "
    "A100의 fp16 최대 연산 성능(희소성 없이)의 {peak:.0f} % (DOCS와 모델의 ASSUMPTION에서 얻은 "
    "ARITHMETIC)",
)

# Whole runs: the time preemption costs, per block size
RUN_COST_HEADER = msg(
    "block  slots swapped     bandwidth fitted to §7.3      modern host (ASSUMPTION)      (SIMULATED)",
    "블록   옮긴 슬롯         대역폭을 §7.3에 맞춤          요즘 호스트 (ASSUMPTION)      (SIMULATED)",
)
RUN_COST_SUBHEADER = msg(
    "       per token         recompute / swap (s)          recompute / swap (s)",
    "       토큰당            재계산 / 스왑 (초)            재계산 / 스왑 (초)",
)

# Beam search: blocks shared by several beams
BEAM = msg("beam {n}", "빔 {n}")
BEAM_TITLE = msg(
    "Beam search, width 4, after 5 steps: shared blocks are held by several beams",
    "빔 서치, 폭 4, 5단계 뒤: 공유 블록은 여러 빔이 함께 가진다",
)
BEAM_ROW = msg("{name}: {n} tokens, blocks {blocks}", "{name}: 토큰 {n}개, 블록 {blocks}")
PHYSICAL_HOLD_LOGICAL = msg(
    "{physical} physical blocks hold {logical} logical blocks",
    "물리 블록 {physical}개가 논리 블록 {logical}개를 담습니다",
)

# Beam search's saving, against Fig. 15b: which beams survive
RANDOM = msg("random", "무작위")
SCORE_FLAT = msg("score, flat (scale 1)", "점수, 평평함 (배율 1)")
SCORE_PEAKED = msg("score, peaked (scale 8)", "점수, 뾰족함 (배율 8)")
BEAM_TABLE_HEADER = msg(
    "workload         label      survivors               {widths}",
    "워크로드         라벨       생존 후보               {widths}",
)
PAPER_SHAREGPT_RANGE = msg(
    "{name:16s} {label:10s} §6.3 gives a range over widths only: 44.3-66.3%",
    "{name:16s} {label:10s} §6.3은 폭별 값 없이 범위만 줍니다: 44.3-66.3 %",
)
STAND_IN_TOP = msg(
    "stand-in model, scale {scale:g}: its likeliest next token has probability {p:.2f} on "
    "average (SIMULATED)",
    "대역 모델, 배율 {scale:g}: 가장 그럴듯한 다음 토큰의 확률이 평균 {p:.2f} (SIMULATED)",
)
