"""What chapter 7 prints: the paged-attention kernel's steps checked, their bytes and its benchmark."""

from ...text import msg

# The backend cell
RUNTIME_NOTE = msg("NOTE: {hint}", "참고: {hint}")

# Step 1: gather a sequence's blocks
GATHER_CHECKED = msg(
    "gather_blocks_kernel == gather_kv for {n} sequences (block sizes 1, 4, 8, 16; lengths 1 to "
    "37), and it read exactly their blocks",
    "gather_blocks_kernel == gather_kv, 시퀀스 {n}개(블록 크기 1, 4, 8, 16; 길이 1–37), 그리고 "
    "정확히 그 시퀀스들의 블록만 읽었습니다",
)

# Softmax overflows unless the max is subtracted
SOFTMAX_NAIVE = msg("softmax, naive          : {values}", "소프트맥스, 그대로      : {values}")
SOFTMAX_SAFE = msg("softmax, max subtracted : {values}", "소프트맥스, 최댓값을 뺌 : {values}")

# Tiles without the rescale
RESCALE_ERRORS = msg(
    "RESCALE={rescale!s:5}: max error per sequence (5, 30, 37 tokens): {errors}",
    "RESCALE={rescale!s:5}: 시퀀스별 최대 오차 (5, 30, 37 토큰): {errors}",
)
ERRORS_FOR_SCALE = msg(
    "for scale: the largest output value is {largest:.2f}; without the rescale the errors are "
    "{a:.0f} % and {b:.0f} % of it",
    "크기를 견주면: 가장 큰 출력값은 {largest:.2f}이고, 재조정이 없을 때 오차는 그 값의 "
    "{a:.0f} %와 {b:.0f} %입니다",
)

# GQA: K and V read once per KV head
GQA_BYTES_TITLE = msg(
    "Computed from DOCS ({name}'s shape), one layer, one sequence of {seq_len} tokens:",
    "DOCS 수치로 계산({name}의 형상), 레이어 하나, {seq_len}토큰 시퀀스 하나:",
)
BYTES_PER_QUERY_HEAD = msg(
    "  K+V bytes read, program per query head: {mib:5.0f} MiB",
    "  읽는 K+V 바이트, 쿼리 헤드마다 프로그램: {mib:5.0f} MiB",
)
BYTES_PER_KV_HEAD = msg(
    "  K+V bytes read, program per KV head   : {mib:5.0f} MiB ({n}x less)",
    "  읽는 K+V 바이트, KV 헤드마다 프로그램  : {mib:5.0f} MiB ({n}배 적음)",
)

# The library's kernel
LIBRARY_FUNCTIONS = msg(
    "{n} @triton.jit functions, {lines} lines: {names}",
    "@triton.jit 함수 {n}개, {lines}줄: {names}",
)
LIBRARY_HOW_TO_READ = msg(
    "Every step above is in them. To read them: print(source)",
    "위의 모든 단계가 이 안에 있습니다. 읽으려면: print(source)",
)

# Watch the kernel read through block tables
BLOCK_TABLE_ROW = msg(
    "{seq}: {n:2d} tokens, block table {table}", "{seq}: 토큰 {n:2d}개, 블록 테이블 {table}"
)

# The benchmark
NO_BENCHMARK = msg(
    "No MEASURED kernel benchmark yet: none was committed, and this machine has no GPU.",
    "아직 MEASURED 커널 벤치마크가 없습니다. 커밋된 것이 없고, 이 컴퓨터에는 GPU가 없습니다.",
)
HOW_TO_BENCHMARK = msg(
    "Run `python -m paged.gpu.kernel_bench` on a CUDA GPU (e.g. Colab) to make one.",
    "CUDA GPU(예: Colab)에서 `python -m paged.gpu.kernel_bench`를 실행하면 만들어집니다.",
)
DECODE_KV_BYTES = msg(
    "Computed from DOCS: K+V of {batch} x {seq_len} tokens, {name} shape, one layer, fp16: "
    "{mib:.0f} MiB",
    "DOCS 수치로 계산: {batch} x {seq_len} 토큰의 K+V, {name} 형상, 레이어 하나, fp16: {mib:.0f} MiB",
)
BANDWIDTH_FLOOR = msg(
    "  floor on {gpu:21s} at {tbs:.2f} TB/s (DOCS, spec): {us:5.0f} µs per layer per decode step",
    "  {gpu:21s} 하한, {tbs:.2f} TB/s (DOCS, 스펙): 디코드 단계마다 레이어당 {us:5.0f} µs",
)
MEASURED_SPEED = msg(
    "MEASURED on {gpu} (torch {torch}, triton {triton}): {us:.0f} µs, {gbs:.0f} GB/s",
    "{gpu}에서 MEASURED (torch {torch}, triton {triton}): {us:.0f} µs, {gbs:.0f} GB/s",
)
NOTHING_MEASURED = msg(
    "No GPU here: nothing MEASURED. On a GPU this cell times paged_attention on this shape.",
    "여기에는 GPU가 없어 MEASURED 수치가 없습니다. GPU에서는 이 셀이 이 형상으로 "
    "paged_attention의 시간을 잽니다.",
)

# What the hidden prediction check says when it fails (after a learner's change, say)
CHECK_RESCALE_ERRORS = msg(
    "expected, without the rescale, the one-tile sequence exact (< 1e-5) and the two- and "
    "three-tile ones off by 5-20 % of the largest output, for this chapter's case (5, 30 and 37 "
    "tokens, seed 1, tiles of 16); got {errors} against {largest:.2f}. Other lengths or seeds "
    "move the sizes, which is fine: what holds is that only sequences longer than one tile go "
    "wrong",
    "재조정이 없을 때 이 장의 경우(5, 30, 37토큰, 시드 1, 16토큰 타일)라면 타일 하나짜리 "
    "시퀀스는 정확하고(< 1e-5) 타일 둘, 셋짜리는 가장 큰 출력의 5-20 %만큼 틀려야 하는데, 나온 "
    "오차는 {errors}, 가장 큰 출력은 {largest:.2f}입니다. 길이나 시드를 바꾸면 크기가 "
    "달라지며, 그래도 괜찮습니다: 변하지 않는 것은 타일 하나보다 긴 시퀀스만 틀린다는 점입니다",
)
