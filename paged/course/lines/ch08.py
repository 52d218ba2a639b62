"""What chapter 8 prints: forked sequences sharing blocks, copy-on-write, parallel sampling's saving."""

from ...text import msg

# Four tables on one prompt
BLOCK_TABLES = msg("block tables: {tables}", "블록 테이블: {tables}")
REF_COUNTS = msg("reference counts: {refs}", "참조 카운트: {refs}")

# Copy-on-write
APPEND_COPIES = msg(
    "s1 appends one token -> copies to perform: {copies}",
    "s1이 토큰 하나를 덧붙임 -> 수행할 복사: {copies}",
)
S1_AND_PROMPT_TABLES = msg(
    "s1's table: {s1} | prompt's: {prompt}", "s1의 테이블: {s1} | prompt의 테이블: {prompt}"
)

# Parallel sampling, against §6.3
SAMPLING_SAVED = msg(
    "{name:13s} 4 samples: {shared} blocks shared vs {private} private: {saved:.1f}% saved "
    "(SIMULATED)",
    "{name:13s} 샘플 4개: 공유하면 블록 {shared}개, 따로 가지면 {private}개: {saved:.1f} % 절약 "
    "(SIMULATED)",
)
PAPER_SAMPLING_SAVED = msg(
    "PAPER §6.3, parallel sampling: 6.1-9.8% saved on Alpaca, 16.2-30.5% on ShareGPT",
    "PAPER §6.3, 병렬 샘플링: Alpaca에서 6.1-9.8 %, ShareGPT에서 16.2-30.5 % 절약",
)
