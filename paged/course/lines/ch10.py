"""What chapter 10 prints: a real model on the paged cache, its block tables, batches and timings."""

from ...text import msg

# The model and its KV cache
KV_PER_TOKEN = msg(
    "KV cache: 2 (K and V) x {layers} layers x {heads} KV heads x {dim} numbers x {size} bytes"
    " = {n:,} bytes per token",
    "KV 캐시: 2 (K와 V) x 레이어 {layers}개 x KV 헤드 {heads}개 x 숫자 {dim}개 x {size}바이트"
    " = 토큰당 {n:,}바이트",
)

# One request, its block table growing
ATTENTION = msg("attention: {name}", "어텐션: {name}")
BLOCK_TABLE_STEP = msg(
    "step {step:2d}: {n} tokens in the cache, block table {table}",
    "단계 {step:2d}: 캐시에 토큰 {n}개, 블록 테이블 {table}",
)
BLOCKS_TITLE = msg("step {step}: {n} tokens in {b} blocks", "단계 {step}: 토큰 {n}개, 블록 {b}개")

# Paged, contiguous and transformers: the same tokens
PAGED_16 = msg("paged, blocks of 16", "페이징, 크기 16인 블록")
CONTIGUOUS_MAX_NEW_TOKENS = msg("contiguous max_new_tokens", "연속 할당 max_new_tokens")
TRANSFORMERS_GENERATE = msg("transformers generate()", "transformers의 generate()")
SLOTS_HELD = msg(
    "the contiguous run reserved {r} slots at admission; paging held {a} slots then and {b} at"
    " the end",
    "연속 할당 실행은 수락할 때 슬롯 {r}개를 예약했고, 페이징은 그때 슬롯 {a}개, 끝에는 {b}개를"
    " 가졌습니다",
)

# Twenty-four requests, max_new_tokens against paging
WORKLOAD = msg(
    "{n} prompts of {lo}-{hi} tokens; answers of {a}-{b} tokens ({early} stopped before the cap"
    " of {cap}); {slots} KV slots",
    "프롬프트 {n}개, 길이 {lo}-{hi}토큰; 답 {a}-{b}토큰 ({early}개는 상한 {cap}토큰 전에 멈춤);"
    " KV 슬롯 {slots}개",
)
MEASURED_COUNTS = msg(
    "MEASURED (counts: they depend on the prompts and the tokens, not on the machine's speed)",
    "MEASURED (센 값: 기계의 속도가 아니라 프롬프트와 토큰에 달려 있음)",
)
POLICY_TABLE_HEADER = msg(
    "policy          peak batch  mean batch  steps  preemptions  tokens recomputed",
    "정책             최대 배치   평균 배치   단계         선점      재계산한 토큰",
)

# The timings
MEASURED_ON = msg("MEASURED on {env}", "MEASURED, 측정 환경: {env}")
POLICY_SECONDS = msg(
    "{policy:14s} {total:5.1f} s: {decode:5.1f} s of decode steps, {rest:4.1f} s of prefills"
    " (recomputation included) and bookkeeping; {tps:5.1f} new tokens/s",
    "{policy:14s} {total:5.1f}초: 디코드 단계 {decode:5.1f}초, prefill(재계산 포함)과 관리"
    " {rest:4.1f}초; 초당 새 토큰 {tps:5.1f}개",
)
SPEED_RATIO = msg(
    "new tokens per second, paged / max_new_tokens: {ratio:.2f}",
    "초당 새 토큰, 페이징 / max_new_tokens: {ratio:.2f}",
)
DECODE_MS_BY_BATCH = msg(
    "one decode step, median ms by batch size:", "디코드 단계 하나, 배치 크기별 중앙값(ms):"
)
PEAK_MEMORY = msg(
    "peak memory of this kernel so far: {gib:.2f} GiB",
    "지금까지 이 커널의 최대 메모리: {gib:.2f} GiB",
)

# The batch over time
PAGING = msg("paging", "페이징")
PREEMPTION = msg("preemption", "선점")
SCHEDULER_STEP = msg("scheduler step", "스케줄러 단계")
REQUESTS_RUNNING = msg("requests running", "실행 중인 요청")
BATCH_TITLE = msg(
    "24 requests in {slots} KV slots: requests holding KV cache after each step (MEASURED)",
    "KV 슬롯 {slots}개에 요청 24개: 단계마다 KV 캐시를 가진 요청 수 (MEASURED)",
)

# What the first step admits, by output cap and budget
ADMITTED_HEADER = msg(
    "requests admitted by the first step, of {n} queued (SIMULATED: the scheduler's admission on"
    " these prompts' lengths)",
    "요청 {n}개 가운데 첫 단계가 수락하는 수 (SIMULATED: 이 프롬프트 길이로 돌린 스케줄러의 수락)",
)
ADMITTED_TABLE_HEADER = msg(
    "output cap  slots  max_new_tokens  paging", " 출력 상한   슬롯  max_new_tokens  페이징"
)

# A shared system prompt
SHARED_PREFIX = msg(
    "shared prefix: {n} tokens = {full} full blocks held once + {rest} tokens in a block that"
    " {copies} requests copied on write",
    "공유 접두사: 토큰 {n}개 = 한 번만 저장한 꽉 찬 블록 {full}개 + 요청 {copies}개가 쓰기 시"
    " 복사한 블록에 든 토큰 {rest}개",
)
SHARED_BLOCKS = msg(
    "MEASURED blocks (with sharing / each request on its own): after the prefill {a} / {b},"
    " at the peak {c} / {d}; saved over the run (§6.3's metric): {saved:.1f} %",
    "MEASURED 블록 수 (공유 / 요청마다 따로): prefill 직후 {a} / {b}, 최대 {c} / {d};"
    " 실행 전체에서 아낀 비율(§6.3의 지표): {saved:.1f} %",
)
EACH_ON_ITS_OWN = msg("each request on its own", "요청마다 따로")
PREFIX_SHARED = msg("prefix shared", "접두사 공유")
BLOCKS_HELD = msg("blocks held", "가진 블록 수")
SHARED_TITLE = msg(
    "8 requests behind one system prompt (MEASURED)",
    "시스템 프롬프트 하나를 앞에 둔 요청 8개 (MEASURED)",
)
