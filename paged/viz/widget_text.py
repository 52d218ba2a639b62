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

# prefix-caching explorer
PREFIX = msg("prefix", "접두사")
QUESTION = msg("question", "질문 토큰")
SALT = msg("salt", "솔트")
TENANT = msg("tenant", "테넌트")  # the salt field's placeholder
SEND = msg("send", "보내기")
FINISH = msg("finish request", "요청 끝내기")
REQUEST = msg("request", "요청")
NO_PREFIX = msg("(none)", "(없음)")
NO_SYSTEM = msg("no system prompt", "시스템 프롬프트 없음")
PREFIX_START = msg(
    "An empty pool of {n} blocks of {size} tokens. Send a request: its prompt is the chosen "
    "system prompt, then a question of its own.",
    "토큰 {size}개짜리 블록 {n}개로 된 빈 풀입니다. 요청을 보내 보세요: 프롬프트는 고른 시스템 "
    "프롬프트 뒤에 그 요청만의 질문이 붙은 것입니다.",
)
SENT = msg(
    "sent {req} ({prefix}, {tokens} tokens): block table {table}",
    "{req} 보냄 ({prefix}, 토큰 {tokens}개): 블록 테이블 {table}",
)
HITS = msg("{num} cached blocks hit: {blocks}", "캐시에 있던 블록 {num}개 적중: {blocks}")
NO_HITS = msg("no cached block hit", "적중한 캐시 블록 없음")
HIT_CAP = msg(
    "(the block holding the last prompt token is always computed)",
    "(프롬프트의 마지막 토큰이 든 블록은 언제나 계산합니다)",
)
EVICTED = msg(
    "eviction: block {block} was {tag}'s, its hash dropped",
    "축출: 블록 {block} (원래 {tag}의 블록), 해시가 지워졌습니다",
)
FINISHED = msg(
    "finished {req}: its cached blocks wait at the free queue's tail, still findable",
    "{req} 끝남: 캐시된 블록은 빈 블록 큐의 꼬리에서 기다리며, 여전히 찾을 수 있습니다",
)
EMPTY_PROMPT = msg(
    "an empty prompt: choose a prefix or give the question at least one token",
    "빈 프롬프트입니다: 접두사를 고르거나 질문에 토큰을 하나 이상 주세요",
)
NO_ROOM = msg(
    "{req} needs {needed} free blocks and {free} are free: finish a request first "
    "(nothing changed)",
    "{req}에는 빈 블록 {needed}개가 필요한데 {free}개뿐입니다: 먼저 요청을 끝내세요 "
    "(아무것도 바뀌지 않았습니다)",
)
NOTHING_RUNNING = msg("no request is running", "실행 중인 요청이 없습니다")
PREFIX_POOL_TITLE = msg(
    "Pool: {n} blocks of {size} tokens; colour = request holding it, ×n = ref count, "
    "tag = whose block it was",
    "풀: 토큰 {size}개짜리 블록 {n}개; 색 = 가진 요청, ×n = 참조 카운트, 이름표 = 누구의 블록이었나",
)
FREE_QUEUE_TITLE = msg(
    "Free queue, front (taken next) → tail (evicted last); outlined = cached, still findable",
    "빈 블록 큐, 앞 (다음에 쓰임) → 끝 (가장 늦게 축출); 테두리 = 캐시됨, 아직 찾을 수 있음",
)
EVICTED_NOTE = msg(
    "orange outline: evicted by the last request (its old hash dropped; the tag is the new one)",
    "주황 테두리: 방금 보낸 요청이 축출한 블록 (옛 해시는 사라졌고, 이름표는 새 것)",
)
FRONT = msg("front", "앞")
TAIL = msg("tail", "끝")
QUEUE_EMPTY = msg("(empty: every block is held)", "(비어 있음: 모든 블록이 쓰이는 중)")
PREFIX_COUNTERS = msg(
    "free {free} of {n} · cached blocks {cached} · prompt tokens found cached <b>{hit}</b> of "
    "{total} · evictions <b>{evictions}</b>",
    "빈 블록 {n}개 중 {free}개 · 캐시된 블록 {cached}개 · 캐시에서 찾은 프롬프트 토큰 "
    "<b>{hit}</b> / {total} · 축출 <b>{evictions}</b>회",
)
TABLE_ROW = msg(
    "{req} ({prefix}{salt}): block table {table}, {hits} from the cache",
    "{req} ({prefix}{salt}): 블록 테이블 {table}, 캐시에서 {hits}개",
)
