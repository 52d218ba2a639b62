"""What chapter 12 prints: what caching saves, the course beside vLLM with caching, two tenants."""

from ...text import msg

# What caching saves (SIMULATED)
NO_CACHING = msg("no caching", "캐싱 없음")
PREFIX_CACHING = msg("prefix caching", "접두사 캐싱")
SAVINGS_ROW = msg(
    "{name:>14}: prompt tokens computed {computed:>6,} (found cached {cached:>6,}), peak batch "
    "{peak:>3}, steps {steps:,}, preemptions {preemptions} (SIMULATED)",
    "{name}: 계산한 프롬프트 토큰 {computed:,}개 (캐시에서 찾은 토큰 {cached:,}개), 최대 배치 {peak}, "
    "단계 {steps:,}개, 선점 {preemptions}번 (SIMULATED)",
)

# Beside vLLM, in a pool that evicts and preempts
CACHED_PER_REQUEST = msg(
    "prompt tokens found cached at first admission, per request: the course {course}; {engine} "
    "{theirs}",
    "요청마다 처음 수락될 때 캐시에서 찾은 프롬프트 토큰: 코스 {course}; {engine} {theirs}",
)
RESUMED = msg(
    "requests resumed after a preemption found {n} more tokens cached ({engine}'s count)",
    "선점 뒤 재개된 요청이 캐시에서 더 찾은 토큰: {n}개 ({engine}의 집계)",
)

# Two tenants
CONDITIONS = {
    "uncached": msg("no caching", "캐싱 없음"),
    "shared": msg("caching, no salt", "캐싱, 솔트 없음"),
    "salted": msg("caching, a salt per tenant", "캐싱, 테넌트마다 솔트"),
}
TENANT_HITS = msg(
    "{condition:>26}: B found {cached} of its {prompt} prompt tokens cached; cross-tenant hits: "
    "{hits} blocks",
    "{condition}: B는 프롬프트 토큰 {prompt}개 가운데 {cached}개를 캐시에서 찾음; 테넌트 간 "
    "적중: 블록 {hits}개",
)
TENANT_TTFT = msg(
    "{condition:>26}: time to first token A {a:.0f} ms, B {b:.0f} ms",
    "{condition}: 첫 토큰까지 걸린 시간 A {a:.0f} ms, B {b:.0f} ms",
)
TENANT_RATIOS = msg(
    "B's first token {speedup:.2f}x sooner from A's cache; with salts, {salted:.2f}x the uncached "
    "time (MEASURED on {machine}; median of {repeats})",
    "A의 캐시 덕분에 B의 첫 토큰이 {speedup:.2f}배 빨리 나옴; 솔트를 쓰면 캐싱 없을 때 시간의 "
    "{salted:.2f}배 (MEASURED, 잰 기계: {machine}; {repeats}번 잰 값의 중앙값)",
)
ENGINE_TENANTS = msg(
    "{engine}: cross-tenant hits without salts {plain} blocks, with a salt per tenant {salted}",
    "{engine}: 테넌트 간 적중 블록, 솔트 없이 {plain}개, 테넌트마다 솔트를 쓰면 {salted}개",
)
