"""What chapter 5 prints: the paged reference's output, its check against SDPA, and the tiny model."""

from ...text import msg

# The paged reference on two sequences
OUTPUT_SHAPE = msg("output shape: {shape}", "출력 형상: {shape}")
HEAD_TO_KV_HEAD = msg(
    "query head -> KV head it reads: {pairs}", "쿼리 헤드 -> 그 헤드가 읽는 KV 헤드: {pairs}"
)

# Whose gather the cells below use
GATHER_YOURS = msg(
    "The cells below gather with your `gather`.", "아래 셀들은 여러분의 `gather`로 모읍니다."
)
GATHER_LIBRARY = msg(
    "The cells below gather with the library's `gather_kv` until your `gather` is correct.",
    "여러분의 `gather`가 정답이 될 때까지 아래 셀들은 라이브러리의 `gather_kv`로 모읍니다.",
)

# The paged reference against SDPA on contiguous K/V
SDPA_HEADER = msg(
    "the paged reference against SDPA on contiguous K/V, per sequence:",
    "시퀀스별로 본 페이징 참조 구현과 연속 K/V에 대한 SDPA의 비교:",
)
SDPA_SEQ = msg(
    "sequence {i}: largest |paged - SDPA| = {diff:.1e}, bit-for-bit equal: {equal}",
    "시퀀스 {i}: 가장 큰 |paged - SDPA| = {diff:.1e}, 비트 단위로 같음: {equal}",
)

# The learner's decode_one_head, checked head by head
DECODE_ONE_HEAD_OK = msg(
    "Your decode_one_head, with query head h on KV head h // group, gives `out` for all "
    "{n} heads of both sequences.",
    "여러분의 decode_one_head는 쿼리 헤드 h를 KV 헤드 h // group에 맞춰, 두 시퀀스의 헤드 "
    "{n}개 모두에서 `out`과 같은 값을 냅니다.",
)

# The tiny model, contiguous and paged
CONTIGUOUS_TOKENS = msg("contiguous: {tokens}", "연속 실행:   {tokens}")
PAGED_TOKENS = msg("paged:      {tokens}", "페이징 실행: {tokens}")
PAGED_BLOCK_TABLE = msg(
    "block table of the paged run: {table}", "paged 실행의 블록 테이블: {table}"
)
