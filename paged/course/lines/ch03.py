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

# What the hidden prediction checks say when they fail (after a learner's change, say)
CHECK_GROWTH = msg(
    "expected tables of 1, 2, 2, 2, 2, 3, 3 blocks at 4 to 10 tokens for this chapter's sequence "
    "(a 3-token prompt, block_size 4); got {got}. Another prompt or block size moves the steps, "
    "which is fine: the rule is a new block only when the last one is full",
    "이 장의 시퀀스(3토큰 프롬프트, block_size 4)라면 4-10토큰에서 블록 수가 1, 2, 2, 2, 2, 3, "
    "3이어야 하는데, 나온 값은 {got}입니다. 프롬프트나 블록 크기를 바꾸면 달라지며, 그래도 "
    "괜찮습니다: 규칙은 마지막 블록이 찼을 때만 새 블록을 받는다는 것입니다",
)
CHECK_SLOT_RULE = msg(
    "expected slot = physical block x 4 + offset, 4 being this chapter's block_size; got slot "
    "{slot} for token 9 with table {table}. With another block_size, put yours in place of 4",
    "슬롯 = 물리 블록 x 4 + 오프셋이어야 합니다(4는 이 장의 block_size). 나온 값: 테이블 "
    "{table}에서 토큰 9의 슬롯 {slot}. block_size를 바꿨다면 4 대신 그 값을 넣으세요",
)
CHECK_SLOT_EXAMPLE = msg(
    "expected table [8, 11, 4] and token 9 in slot 17 for this chapter's allocator (12 blocks "
    "of 4, seed 1); got {table} and slot {slot}. Another seed shuffles the free blocks "
    "differently, which is fine: the slot still follows the rule above",
    "이 장의 할당자(4슬롯 블록 12개, 시드 1)라면 테이블 [8, 11, 4], 토큰 9는 슬롯 17이어야 "
    "하는데, 나온 값은 테이블 {table}, 슬롯 {slot}입니다. 시드를 바꾸면 빈 블록이 다르게 "
    "섞이며, 그래도 괜찮습니다: 슬롯은 여전히 위의 규칙을 따릅니다",
)
CHECK_SLOT_MAPPING = msg(
    "expected slot_mapping to apply that rule to every token (block_size 4, as in this "
    "chapter); got {got}",
    "slot_mapping은 모든 토큰에 그 규칙을 적용해야 합니다(이 장처럼 block_size 4). 나온 값: {got}",
)
