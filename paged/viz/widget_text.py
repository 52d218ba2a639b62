"""What the explorers write on screen, in both editions' languages (`paged.text`).

Control names stay short: ipywidgets cuts a description longer than its label area.
"""

from ..text import msg

# controls
RESERVE = msg("reserve", "예약 방식")
PLACEMENT = msg("placement", "위치 선정")
BLOCK_SIZE = msg("block size", "블록 크기")
KV_SLOTS = msg("KV slots", "KV 슬롯")
GPU_SLOTS = msg("GPU slots", "GPU 슬롯")
SEED = msg("seed", "시드")
STEPS_PER_CLICK = msg("steps/click", "클릭당 단계")
STEP = msg("step", "단계")
RESET = msg("reset", "초기화")
PLAY = msg("play", "재생")
PREEMPTION = msg("preemption", "선점 방식")
SEQUENCE = msg("sequence", "시퀀스")
NEW_ID = msg("new id", "새 id")
TOKENS = msg("tokens", "토큰 수")
ALLOCATE = msg("allocate new id", "새 id 할당")
APPEND = msg("append 1 token", "토큰 1개 추가")
FORK = msg("fork into new id", "새 id로 fork")
FREE = msg("free", "해제")

STEP_N = msg("step {step}", "{step}단계")

# allocator explorer
REFUSED_NO_HOLE = msg(
    "step {step}: R{req} refused although {free} slots are free in total (largest hole {hole})",
    "{step}단계: 요청 R{req} 거절 (빈 슬롯은 모두 {free}개지만 가장 큰 빈 구멍은 {hole})",
)
CONTIGUOUS_TITLE = msg(
    "contiguous ({policy}, {placement}): {running} running, {waiting} waiting",
    "연속 할당 ({policy}, {placement}): 실행 중 {running}개, 대기 {waiting}개",
)
HEAD_REFUSED = msg("refused: no hole big enough", "거절: 충분히 큰 빈 구멍이 없음")
PAGED_TITLE = msg(
    "paged (block {block}): {running} running, {waiting} waiting; one colour per request",
    "페이징 (블록 {block}): 실행 중 {running}개, 대기 {waiting}개; 요청마다 한 색",
)
ALLOCATOR_COUNTERS = msg(
    "{step_n} · preemptions (paged): {preemptions} · contiguous refusals: {refusals} "
    "(of which enough free in total: {no_hole})",
    "{step_n} · 선점(페이징): {preemptions} · 연속 할당의 거절: {refusals} "
    "(그중 전체로는 공간이 충분했던 경우: {no_hole})",
)
CONTIGUOUS = msg("contiguous", "연속 할당")
PAGED = msg("paged", "페이징")

# block-table explorer
START = msg(
    "A holds 6 tokens in 2 blocks of 4.", "A는 크기 4인 블록 2개에 토큰 6개를 담고 있습니다."
)
ALLOCATED = msg(
    "allocated {seq}: {tokens} tokens → blocks {table}",
    "{seq} 할당: 토큰 {tokens}개 → 블록 {table}",
)
APPENDED = msg(
    "appended 1 token to {seq}: table {table}.", "{seq}에 토큰 1개 추가: 테이블 {table}."
)
COPIED = msg(" copy-on-write: copy block {old} → {new}", " 쓰기 시 복사: 블록 {old} → {new} 복사")
FORKED = msg(
    "forked {seq} → {new}: every block now shared",
    "fork {seq} → {new}: 이제 모든 블록을 공유합니다",
)
FREED = msg("freed {seq}", "{seq} 해제")
BLOCKS_FREE = msg("{free} of {n} blocks free", "블록 {n}개 중 {free}개가 비어 있음")

# block-size explorer
BLOCK_SIZE_READOUT = msg(
    "block size <b>{block}</b>: empty slots in last blocks <b>{empty:.1f}%</b> of all slots, "
    "<b>{entries:.1f}</b> block-table entries per request, {batch:.1f} requests running on "
    "average (SIMULATED)",
    "블록 크기 <b>{block}</b>: 마지막 블록의 빈 슬롯이 전체 슬롯의 <b>{empty:.1f} %</b>, "
    "요청당 블록 테이블 항목 <b>{entries:.1f}</b>개, 평균 {batch:.1f}개 요청이 실행 중 "
    "(SIMULATED)",
)

# preemption explorer
SWAPPED_OUT = msg("swapped out", "스왑 아웃")
FREED_TO_RECOMPUTE = msg("freed, to recompute", "해제, 재계산 예정")
PREEMPTED = msg("step {step}: R{req} preempted ({where})", "{step}단계: R{req} 선점됨 ({where})")
SWAPPED_IN = msg("step {step}: R{req} swapped back in", "{step}단계: R{req} 다시 스왑 인")
GPU_POOL = msg("GPU pool: {running} running", "GPU 풀: 실행 중 {running}개")
CPU_POOL = msg("CPU pool: {swapped} swapped out", "CPU 풀: 스왑 아웃 {swapped}개")
NO_CPU_POOL = msg(
    "no CPU pool:\npreempted requests\nare recomputed", "CPU 풀 없음:\n선점된 요청은\n재계산됩니다"
)
NO_PREEMPTION_YET = msg("no preemption yet", "아직 선점 없음")
SWAPPED_OUT_BLOCKS = msg("blocks swapped out", "스왑 아웃된 블록")
PREEMPTION_COUNTERS = msg(
    "{step_n} · waiting {waiting} · preemptions <b>{preemptions}</b> · {swapped_words} "
    "<b>{swapped}</b> · tokens to recompute <b>{recompute}</b> (SIMULATED)",
    "{step_n} · 대기 {waiting} · 선점 <b>{preemptions}</b> · {swapped_words} "
    "<b>{swapped}</b> · 재계산할 토큰 <b>{recompute}</b> (SIMULATED)",
)
