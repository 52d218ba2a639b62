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

# What the hidden prediction checks say when they fail (after a learner's change, say)
CHECK_SAME_PREEMPTIONS = msg(
    "expected both modes to preempt equally often (more than 0) in as many steps, for this "
    "chapter's run (200 ShareGPT-like requests, seed 1, 6,144 slots); got {rec} and {swap} "
    "preemptions in {rec_steps} and {swap_steps} steps. A smaller workload or a larger pool "
    "may never preempt",
    "이 장의 실행(ShareGPT 비슷한 요청 200개, 시드 1, 슬롯 6,144개)이라면 두 방식의 선점 횟수가 "
    "같고(0보다 많음) 단계 수도 같아야 하는데, 나온 값은 선점 {rec}회와 {swap}회, {rec_steps}단계와 "
    "{swap_steps}단계입니다. 워크로드가 작거나 풀이 크면 선점이 아예 없을 수 있습니다",
)
CHECK_CHAPTER4_PREEMPTIONS = msg(
    "expected chapter 4's run (2,000 ShareGPT-like requests, seed 0, {slots:,} slots) to "
    "preempt more often than there are requests; got {n:,}. Another seed, size or pool moves it",
    "4장의 실행(ShareGPT 비슷한 요청 2,000개, 시드 0, 슬롯 {slots:,}개)이라면 선점이 요청 수보다 "
    "많아야 하는데, 나온 값은 {n:,}회입니다. 시드, 크기, 풀을 바꾸면 달라집니다",
)
CHECK_WATERMARKS = msg(
    "expected fewer preemptions with each larger watermark (0, 1, 5 %), 5 % under a quarter of "
    "1 %'s, for this chapter's 600 requests (seed 0); got {n}. Another seed or size moves the "
    "counts, which is fine: the lesson is the direction",
    "이 장의 요청 600개(시드 0)라면 워터마크가 클수록(0, 1, 5 %) 선점이 줄고, 5 %는 1 %의 4분의 1 "
    "미만이어야 하는데, 나온 값은 {n}입니다. 시드나 크기를 바꾸면 횟수가 달라지며, 그래도 "
    "괜찮습니다: 배울 점은 방향입니다",
)
CHECK_PACED = msg(
    "expected no preemption when this chapter's 600 requests arrive at 0.05 per step (seed 0); "
    "got {n}. A faster rate or a smaller pool can bring preemptions back",
    "이 장의 요청 600개(시드 0)가 단계당 0.05개씩 도착하면 선점이 없어야 하는데, 나온 값은 "
    "{n}회입니다. 도착이 빠르거나 풀이 작으면 선점이 다시 생길 수 있습니다",
)
CHECK_HOLD_TOKENS = msg(
    "expected token states under 75 % with hold and over 75 % with greedy admission, for this "
    "chapter's 600 requests (seed 0); got {hold:.1f} % and {greedy:.1f} %. Another seed or size "
    "moves them, which is fine: the lesson is that holding leaves memory idle",
    "이 장의 요청 600개(시드 0)라면 토큰 상태가 보류에서는 75 % 미만, 탐욕적 수락에서는 75 % "
    "초과여야 하는데, 나온 값은 {hold:.1f} %와 {greedy:.1f} %입니다. 시드나 크기를 바꾸면 "
    "달라지며, 그래도 괜찮습니다: 배울 점은 보류하면 메모리가 놀게 된다는 것입니다",
)
CHECK_HOLD_STEPS = msg(
    "expected hold to take 1.6-1.9 x greedy's steps for this chapter's 600 requests (seed 0); "
    "got {ratio:.2f} x. Another seed or size moves it",
    "이 장의 요청 600개(시드 0)라면 보류는 탐욕적 수락의 1.6-1.9배 단계가 걸려야 하는데, 나온 "
    "값은 {ratio:.2f}배입니다. 시드나 크기를 바꾸면 달라집니다",
)
CHECK_FIT = msg(
    "expected the model fitted to §7.3 (9.5 GB/s, 5 µs per transfer, prefill 5,000 tokens/s) "
    "to meet all three statements, recompute at most 1.2 x swap, swap cheaper from block size "
    "32; got {holds}, {ratio:.2f} x, from {crossover}. Other ASSUMPTIONS move these",
    "§7.3에 맞춘 모델(9.5 GB/s, 전송당 5 µs, 초당 5,000토큰 prefill)이라면 세 문장이 모두 "
    "성립하고, 재계산은 많아야 스왑의 1.2배, 스와핑은 블록 크기 32부터 더 싸야 하는데, 나온 "
    "값은 {holds}, {ratio:.2f}배, {crossover}부터입니다. ASSUMPTION을 바꾸면 달라집니다",
)
CHECK_MODERN_STATEMENTS = msg(
    "expected the modern host (ASSUMPTION: 25 GB/s, prefill 7,200 tokens/s) to keep statements "
    "1 and 2 and break 3; got {one}, {two}, {three}. Other rates change which ones hold",
    "요즘 호스트(ASSUMPTION: 25 GB/s, 초당 7,200토큰 prefill)라면 문장 1과 2는 성립하고 3은 "
    "깨져야 하는데, 나온 값은 {one}, {two}, {three}입니다. 속도를 바꾸면 성립하는 문장이 "
    "달라집니다",
)
CHECK_MODERN_CROSSOVER = msg(
    "expected the modern host's swap cheaper from block size 16 (the fit's: {fit}) and recompute "
    "at most about 2 x swap (1.8-2.2); got {crossover} and {ratio:.2f} x. Other rates move both",
    "요즘 호스트라면 스와핑이 블록 크기 16부터 더 싸고(맞춘 모델은 {fit}) 재계산은 많아야 "
    "스왑의 약 2배(1.8-2.2)여야 하는데, 나온 값은 {crossover}, {ratio:.2f}배입니다. 속도를 "
    "바꾸면 둘 다 달라집니다",
)
CHECK_WINDOW = msg(
    "expected a window narrower than 2 GB/s, under 25 GB/s, around the fitted {fit:.1f} GB/s, "
    "for this chapter's ASSUMPTIONS (5 µs per transfer, prefill 5,000 tokens/s); got "
    "{low:.2f}-{high:.2f} GB/s. Other ASSUMPTIONS move the window",
    "이 장의 ASSUMPTION(전송당 5 µs, 초당 5,000토큰 prefill)이라면 창이 맞춘 값 {fit:.1f} GB/s를 "
    "품고 25 GB/s 아래에서 2 GB/s보다 좁아야 하는데, 나온 값은 {low:.2f}-{high:.2f} "
    "GB/s입니다. ASSUMPTION을 바꾸면 창이 움직입니다",
)
CHECK_LINK = msg(
    "expected the 25 GB/s, 10 µs link to need a prefill above 90 % of the A100's fp16 peak and "
    "§7.3 not to hold for it; got {peak:.0f} % and {holds}. Another link changes both",
    "25 GB/s, 10 µs 링크라면 prefill이 A100 fp16 최대 성능의 90 %를 넘어야 하고 §7.3이 "
    "성립하지 않아야 하는데, 나온 값은 {peak:.0f} %, {holds}입니다. 링크를 바꾸면 둘 다 "
    "달라집니다",
)
CHECK_BLOCK_16 = msg(
    "block size 16: expected recompute at 0.85-0.95 x swap for the fitted model, and swap "
    "cheaper than recompute on the modern host; got {ratio:.2f} x, and {swap:.1f} against "
    "{recompute:.1f} µs. Other ASSUMPTIONS move both",
    "블록 크기 16: 맞춘 모델에서는 재계산이 스왑의 0.85-0.95배, 요즘 호스트에서는 스와핑이 "
    "재계산보다 싸야 하는데, 나온 값은 {ratio:.2f}배, 그리고 {swap:.1f} µs 대 {recompute:.1f} "
    "µs입니다. ASSUMPTION을 바꾸면 둘 다 달라집니다",
)
CHECK_STAND_IN = msg(
    "expected the stand-in model's likeliest token at under 0.2 with scale 1 and 0.75-0.85 with "
    "scale 8 (rng seed 0); got {flat:.2f} and {peaked:.2f}. Another seed moves them a little",
    "대역 모델의 가장 그럴듯한 토큰 확률은 배율 1에서 0.2 미만, 배율 8에서 0.75-0.85여야 "
    "하는데(난수 시드 0), 나온 값은 {flat:.2f}, {peaked:.2f}입니다. 시드를 바꾸면 조금 "
    "달라집니다",
)
CHECK_WIDER_BEAMS = msg(
    "{name}, {rule}: expected the saving to grow with the width and stay above 30 %, for this "
    "chapter's workloads (100 Alpaca-like, 20 ShareGPT-like requests, seed 0); got {values}",
    "{name}, {rule}: 이 장의 워크로드(Alpaca 비슷한 요청 100개, ShareGPT 비슷한 요청 20개, "
    "시드 0)라면 절약이 폭과 함께 커지고 30 %를 넘어야 하는데, 나온 값은 {values}입니다",
)
CHECK_SHAREGPT_MORE = msg(
    "expected ShareGPT-like to save more than Alpaca-like at every width (random survivors, "
    "this chapter's workloads, seed 0); got {sharegpt} against {alpaca}",
    "모든 폭에서 ShareGPT 비슷한 요청이 Alpaca 비슷한 요청보다 더 아껴야 하는데(무작위 생존, "
    "이 장의 워크로드, 시드 0), 나온 값은 {sharegpt} 대 {alpaca}입니다",
)
CHECK_K2_BELOW = msg(
    "random survivors, k = 2: expected just below Fig. 15b's {paper:.2f} % (by under 0.5 "
    "points) for this chapter's 100 Alpaca-like requests (seed 0); got {got:.2f} %. Another seed "
    "or size moves it",
    "무작위 생존, k = 2: 이 장의 Alpaca 비슷한 요청 100개(시드 0)라면 Fig. 15b의 {paper:.2f} % "
    "바로 아래(0.5포인트 안)여야 하는데, 나온 값은 {got:.2f} %입니다. 시드나 크기를 바꾸면 "
    "달라집니다",
)
CHECK_WIDER_ABOVE = msg(
    "random survivors: expected k = 4 above Fig. 15b by 1.5-3 points and k = 6 by over 4, for "
    "this chapter's 100 Alpaca-like requests (seed 0); got {k4:+.2f} and {k6:+.2f} points. "
    "Another seed or size moves them",
    "무작위 생존: 이 장의 Alpaca 비슷한 요청 100개(시드 0)라면 Fig. 15b보다 k = 4는 1.5-3포인트, "
    "k = 6은 4포인트 넘게 높아야 하는데, 나온 차이는 {k4:+.2f}포인트와 {k6:+.2f}포인트입니다. "
    "시드나 크기를 바꾸면 달라집니다",
)
CHECK_FLAT_LIKE_RANDOM = msg(
    "expected flat scores within 1.5 points of random survivors at every width, for this "
    "chapter's 100 Alpaca-like requests (seed 0); got {flat} against {rand}. Another seed or "
    "size moves them, which is fine: a flat model picks survivors almost at random",
    "이 장의 Alpaca 비슷한 요청 100개(시드 0)라면 모든 폭에서 평평한 점수가 무작위 생존과 "
    "1.5포인트 안이어야 하는데, 나온 값은 {flat} 대 {rand}입니다. 시드나 크기를 바꾸면 "
    "달라지며, 그래도 괜찮습니다: 평평한 모델은 생존 후보를 거의 무작위로 고릅니다",
)
CHECK_PEAKED = msg(
    "expected peaked scores within 2 points of Fig. 15b at k = 6 and over 3 points below it at "
    "k = 2, for this chapter's 100 Alpaca-like requests (seed 0); got {k6:+.2f} and {k2:+.2f} "
    "points. Another seed or size moves them",
    "이 장의 Alpaca 비슷한 요청 100개(시드 0)라면 뾰족한 점수는 k = 6에서 Fig. 15b와 2포인트 "
    "안, k = 2에서 3포인트 넘게 낮아야 하는데, 나온 차이는 {k6:+.2f}포인트와 {k2:+.2f}포인트입니다. "
    "시드나 크기를 바꾸면 달라집니다",
)
CHECK_SHAREGPT_BEAMS = msg(
    "expected, for this chapter's 20 ShareGPT-like requests (seed 0), k = 2 inside §6.3's "
    "44.3-66.3 % and every wider beam above it; got {values}. Another seed or size moves them",
    "이 장의 ShareGPT 비슷한 요청 20개(시드 0)라면 k = 2는 §6.3의 44.3-66.3 % 안에, 그보다 넓은 "
    "빔은 모두 그 위에 있어야 하는데, 나온 값은 {values}입니다. 시드나 크기를 바꾸면 달라집니다",
)
