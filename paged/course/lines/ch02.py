"""What chapter 2 prints: each policy's reservation, holes, and refusals despite free space."""

from ...text import msg

# What each policy reserves for one request
POLICY_RESERVES = msg(
    "{policy:6s} reserves {reserved:5d}: {usage}", "{policy:6s} 예약 {reserved:5d}슬롯: {usage}"
)

# What each placement takes for the same reservation
PLACEMENT_TAKES = msg(
    "{placement:9s}: policy reserves {reserved} (40 + 32), allocator takes {size}, "
    "round-up {rounded_up}; {usage}",
    "{placement:9s}: 정책이 {reserved}슬롯 예약(40 + 32), 할당자가 {size}슬롯 차지, "
    "올림분 {rounded_up}; {usage}",
)

# Holes: enough free space in total, none big enough
HOLES = msg("holes (start, size): {holes}", "구멍 (시작, 크기): {holes}")
FREE_AND_LARGEST_HOLE = msg(
    "free in total: {free} | largest hole: {largest}",
    "빈 슬롯 총량: {free} | 가장 큰 구멍: {largest}",
)
CAN_PLACE_15 = msg(
    "can a 15-token request be placed? {why}", "15토큰짜리 요청을 놓을 수 있나요? {why}"
)
UNUSABLE_FREE = msg(
    "free slots in holes too small for it: {n}", "이 요청에는 너무 작은 구멍들 속의 빈 슬롯: {n}"
)

# A whole workload: steps refused for want of a hole
REFUSED_DESPITE_FREE = msg(
    "steps where a request was refused despite enough free space: {n} of {steps} ({pct:.0f} %)",
    "빈 공간의 총량은 충분한데도 요청이 거절된 단계: {steps}단계 중 {n}단계 ({pct:.0f} %)",
)

# One refused step, drawn (title and label)
STEP_TITLE = msg("step {step}", "단계 {step}")
REFUSED_LABEL = msg(
    "R{req} needs {need}, {free} free in total",
    "R{req}: {need}슬롯 필요, 빈 슬롯은 모두 {free}슬롯",
)
NEEDS_CONTIGUOUS = msg(
    "R{req} needs {need} contiguous slots; {free} are free, but in pieces",
    "R{req}에는 연속된 슬롯 {need}개가 필요합니다. 빈 슬롯은 {free}개지만 조각나 있습니다",
)

# What the hidden prediction check says when it fails (after a learner's change, say)
CHECK_REFUSED_SHARE = msg(
    "expected about one step in five (15-30 %) for this chapter's run (40 ShareGPT-like "
    "requests, seed 2, 3,000 slots, Oracle); got {pct:.1f} %. Another seed or arena size moves "
    "it, which is fine: the lesson is that such refusals happen at all",
    "이 장의 실행(ShareGPT 비슷한 요청 40개, 시드 2, 슬롯 3,000개, Oracle)이라면 다섯 단계에 "
    "한 번꼴(15-30 %)이어야 하는데, 나온 값은 {pct:.1f} %입니다. 시드나 아레나 크기를 바꾸면 "
    "달라지며, 그래도 괜찮습니다: 배울 점은 이런 거절이 실제로 일어난다는 것입니다",
)
