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
