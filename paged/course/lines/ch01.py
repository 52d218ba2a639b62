"""What chapter 1 prints: KV bytes per token for each preset, what fits in 12 GiB, a cache growing."""

from ...text import msg

# KV cache per token, per model
KV_PER_TOKEN_HEADER = msg(
    "model       KV cache per token, and for one request of 2,048 tokens",
    "모델        토큰당 KV 캐시, 그리고 2,048 토큰짜리 요청 하나의 KV 캐시",
)
KV_PER_TOKEN_ROW = msg(
    "{name:11s} {b:>9,} bytes/token = {kib:8.1f} KiB;  2,048 tokens = {gib:5.2f} GiB = {gb:5.2f} GB",
    "{name:11s} 토큰당 {b:>9,} bytes = {kib:8.1f} KiB;  2,048 토큰 = {gib:5.2f} GiB = {gb:5.2f} GB",
)

# What fits in the A100's 12 GiB of KV cache
KV_SLOTS_FIT = msg(
    "{slots:,} KV slots in 12 GiB  ->  {n} requests of 2,048 tokens at most",
    "12 GiB에 KV 슬롯 {slots:,}개  ->  2,048 토큰짜리 요청은 최대 {n}개",
)

# A cache that grows by one token at a time
CACHE_BYTES = msg(
    "cache bytes after each token: {sizes}", "토큰을 하나씩 더한 뒤의 캐시 바이트: {sizes}"
)
