"""What chapter 3 prints: a block table growing, where tokens live, and what paging wastes."""

from ...text import msg

# A block table growing token by token
GROWTH_HEADER = msg(
    "sequence A in blocks of 4, after each token it writes:",
    "블록 크기 4의 시퀀스 A, 토큰을 하나 쓸 때마다:",
)
GROWN = msg("{n:2d} tokens -> block table {table}", "토큰 {n:2d}개 -> 블록 테이블 {table}")

# From a token's position to its slot
WHERE_HEADER = msg("where the tokens of sequence A live:", "시퀀스 A의 토큰이 놓인 곳:")
WHERE = msg(
    "token {p}: logical block {logical}, offset {offset} -> physical block {physical} -> slot {slot}",
    "토큰 {p}: 논리 블록 {logical}, 오프셋 {offset} -> 물리 블록 {physical} -> 슬롯 {slot}",
)

# Internal fragmentation: at most the last block of each sequence
EMPTY_IN_LAST_BLOCK = msg(
    "empty slots in each sequence's last block: {wasted}",
    "시퀀스마다 마지막 블록의 빈 슬롯: {wasted}",
)

# Paged against contiguous on a whole workload
TOKEN_STATES_AGREE = msg(
    "token states agree at all {n} steps", "{n}단계 모두에서 토큰 상태가 일치합니다"
)
PAGED_MEAN_SLOTS = msg(
    "paged, mean slots per step: {reserved:.1f} reserved in last blocks, {wasted:.1f} never filled",
    "페이징, 단계당 평균 슬롯: 마지막 블록에 예약 {reserved:.1f}, 끝내 채워지지 않음 {wasted:.1f}",
)
