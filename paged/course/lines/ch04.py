"""What chapter 4 prints: the four policies side by side, against the paper's Fig. 2 and Fig. 13a."""

from ...text import msg

# The setup cell
BUDGET_AND_QUEUE = msg(
    "OPT-13B on an A100-40GB budget: {slots:,} slots; 2,000 ShareGPT-like requests queued at t=0",
    "A100-40GB 예산의 OPT-13B: 슬롯 {slots:,}개. ShareGPT 비슷한 요청 2,000개가 t=0에 대기열에 "
    "들어갑니다",
)

# The breakdown, SIMULATED beside PAPER
POLICY_TABLE_HEADER = msg(
    "policy         label     {cats}  round-up  batch",
    "정책           라벨      {cats}    올림분   배치",  # padded for Hangul's double width
)

# The gap to Fig. 2
GAP_TITLE = msg(
    "gap, SIMULATED minus PAPER, in points (+: the simulator shows more; -: no bar in Fig. 2)",
    "차이: SIMULATED에서 PAPER를 뺀 포인트 (+: 시뮬레이터 쪽이 더 많음; -: Fig. 2에 막대가 없음)",
)
GAP_TABLE_HEADER = msg("policy  {cats}", "정책    {cats}")

# First fit instead of the buddy allocator
FIRST_FIT_SHARES = msg(
    "{policy:7s} first fit, SIMULATED: {shares}", "{policy:7s} 최초 적합, SIMULATED: {shares}"
)

# How wide the output lengths spread
SPREAD_TITLE = msg(
    "SIMULATED, 2,000 ShareGPT-like requests; token states (% of memory) | mean batch size",
    "SIMULATED, ShareGPT 비슷한 요청 2,000개; 토큰 상태(메모리 대비 %) | 평균 배치 크기",
)
SPREAD_TABLE_HEADER = msg(
    "output σ mean output{names}   |{names}", "  출력 σ   평균 출력{names}   |{names}"
)

# Mean batch size, against Fig. 13a
BATCH_TABLE_HEADER = msg(
    "mean batch size        SIMULATED   PAPER Fig. 13a (OPT-13B, ShareGPT, 2 reqs/s)",
    "평균 배치 크기         SIMULATED   PAPER Fig. 13a (OPT-13B, ShareGPT, 초당 요청 2개)",
)
BATCH_RATIOS = msg(
    "paged runs {oracle:.1f}x as many requests as Oracle and {max:.1f}x as many as Max (SIMULATED)",
    "페이징은 Oracle보다 {oracle:.1f}배, Max보다 {max:.1f}배 많은 요청을 한 배치로 처리합니다 "
    "(SIMULATED)",
)
PAPER_BATCH_RATIOS = msg("PAPER §6.2: {oracle}x and {max}x", "PAPER §6.2: {oracle}배와 {max}배")
PAGED_PREEMPTIONS = msg(
    "preemptions while paging: {n} (recomputation; none for contiguous; chapter 9)",
    "페이징의 선점: {n}회 (재계산; 연속 할당에는 없음; 9장)",
)

# A small budget: Alpaca-like requests in 4,000 slots
SMALL_BUDGET_ROW = msg(
    "{policy:7s} token states {share:5.1f}%  mean batch {batch:6.1f}",
    "{policy:7s} 토큰 상태 {share:5.1f} %  평균 배치 {batch:6.1f}",
)

# The block-size sweep
BLOCK_SIZE_ROW = msg(
    "block {size:3d}: empty slots in last blocks {empty:5.1f}%, {entries:6.1f} table entries per request",
    "블록 {size:3d}: 마지막 블록의 빈 슬롯 {empty:5.1f} %, 요청당 테이블 항목 {entries:6.1f}개",
)

# What the hidden prediction checks say when they fail (after a learner's change, say). The
# numbers are those of this chapter's run: 2,000 ShareGPT-like requests (seed 0), OPT-13B in an
# A100-40GB's KV budget, buddy placement.
CHECK_NEAR_FIG2 = msg(
    "{policy}: expected within 15 points of Fig. 2, summed over its four bars, for this "
    "chapter's workload (2,000 ShareGPT-like requests, seed 0); got {gap:.1f}. Another workload "
    "moves the bars, which is fine: the match holds for this one",
    "{policy}: 이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0)라면 네 막대를 합쳐 "
    "Fig. 2와 15포인트 안이어야 하는데, 나온 차이는 {gap:.1f}입니다. 워크로드를 바꾸면 막대가 "
    "움직이며, 그래도 괜찮습니다: 일치는 이 워크로드에서의 이야기입니다",
)
CHECK_TOKEN_SHARES = msg(
    "expected token states of {expected} (% of memory) for this chapter's workload (2,000 "
    "ShareGPT-like requests, seed 0, OPT-13B on an A100-40GB); got {got}. Another seed, size "
    "or budget moves them, which is fine: the lesson is the order, Max < Pow2 < Oracle < paged",
    "이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0, A100-40GB의 OPT-13B)에서 토큰 "
    "상태(메모리 대비 %)의 예상 값은 {expected}, 나온 값은 {got}입니다. 시드, 크기, 예산을 "
    "바꾸면 달라지며, 그래도 괜찮습니다: 배울 점은 Max < Pow2 < Oracle < paged라는 순서입니다",
)
CHECK_ROUND_UP = msg(
    "expected the buddy round-up under Oracle to take 25.1% of memory for this chapter's "
    "workload (2,000 ShareGPT-like requests, seed 0); got {got:.1f}%. Another seed or size "
    "moves it, which is fine: the prediction's answer is about a quarter",
    "이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0)라면 Oracle에서 버디 할당자의 "
    "올림분이 메모리의 25.1 %여야 하는데, 나온 값은 {got:.1f} %입니다. 시드나 크기를 바꾸면 "
    "달라지며, 그래도 괜찮습니다: 예측의 답은 '4분의 1쯤'입니다",
)
CHECK_SHARE = msg(
    "{policy}, {category}: expected {expected}% of memory for this chapter's workload (2,000 "
    "ShareGPT-like requests, seed 0); got {got:.1f}%. Another seed or size moves it, which is "
    "fine: compare the policies, not the decimals",
    "{policy}, {category}: 이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0)라면 메모리의 "
    "{expected} %여야 하는데, 나온 값은 {got:.1f} %입니다. 시드나 크기를 바꾸면 달라지며, "
    "그래도 괜찮습니다: 소수점이 아니라 정책끼리 비교하세요",
)
CHECK_SAME_REQUESTS = msg(
    "expected `sharegpt` to be the setup cell's 2,000 requests with seed 0 and the default "
    "σ = 0.8; another seed or size there changes every row below, which is fine: compare the "
    "rows with each other",
    "`sharegpt`는 설정 셀의 요청 2,000개(시드 0, 기본값 σ = 0.8)여야 합니다. 거기서 시드나 "
    "크기를 바꾸면 아래의 모든 행이 달라지며, 그래도 괜찮습니다: 행끼리 비교하세요",
)
CHECK_SPREAD_TABLE = msg(
    "expected token states (% of memory) by σ of {expected} for this chapter's workload (2,000 "
    "ShareGPT-like requests, seed 0); got {got}. Another seed or size moves them, which is "
    "fine: the lesson is which column moves most",
    "이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0)에서 σ별 토큰 상태(메모리 대비 %)의 "
    "예상 값은 {expected}, 나온 값은 {got}입니다. 시드나 크기를 바꾸면 달라지며, 그래도 "
    "괜찮습니다: 배울 점은 어느 열이 가장 많이 움직이느냐입니다",
)
CHECK_MAX_BATCH = msg(
    "expected Max to run 7 requests at every σ: its 2,048-token reservations fit 7 times in "
    "this chapter's {slots:,} slots; got {got}. Another budget or model changes the 7",
    "Max는 모든 σ에서 요청 7개를 처리해야 합니다: 2,048토큰 예약이 이 장의 슬롯 {slots:,}개에 "
    "7번 들어갑니다. 나온 값: {got}. 예산이나 모델을 바꾸면 7이 달라집니다",
)
CHECK_PAGED_BATCH = msg(
    "σ = {sigma}: expected a mean batch of {expected} with paging for this chapter's workload "
    "(2,000 ShareGPT-like requests, seed 0); got {got:.1f}. Another seed or size moves it, "
    "which is fine: the lesson is that a wider spread runs fewer requests at once",
    "σ = {sigma}: 이 장의 워크로드(ShareGPT 비슷한 요청 2,000개, 시드 0)에서 페이징의 평균 "
    "배치는 예상 값이 {expected}, 나온 값이 {got:.1f}입니다. 시드나 크기를 바꾸면 달라지며, "
    "그래도 괜찮습니다: 배울 점은 퍼짐이 넓을수록 한꺼번에 처리하는 요청이 적다는 것입니다",
)
CHECK_MEAN_OUTPUT = msg(
    "σ = 1.1: expected a mean output of 322 tokens (the paper's 338 before the 2,048-token cap) "
    "for this chapter's workload (seed 0); got {got:.1f}. Another seed moves it a little",
    "σ = 1.1: 이 장의 워크로드(시드 0)라면 평균 출력이 322토큰(2,048토큰 상한 전에는 논문의 "
    "338)이어야 하는데, 나온 값은 {got:.1f}입니다. 시드를 바꾸면 조금 달라집니다",
)
