"""Model answers for the attention exercises in PyTorch (chapters 5 and 7).

Each uses only tensor methods of its arguments, so its source runs as typed into a chapter.
"""

from __future__ import annotations

__all__ = ["decode_one_head", "gather", "merge_partitions"]


def gather(cache, block_table_row, seq_len):
    """The sequence's blocks in table order, flattened to token rows, trimmed to seq_len."""
    block_size = cache.shape[1]
    num_blocks = (seq_len + block_size - 1) // block_size
    blocks = block_table_row[:num_blocks].long()
    return cache[blocks].flatten(0, 1)[:seq_len]  # (seq_len, num_kv_heads, head_dim)


def merge_partitions(parts):
    """Weight each partial output by its share exp(lse) of the softmax mass, max subtracted."""
    top = max(float(lse) for _, lse in parts)  # exp(lse) alone overflows for large scores
    weights = [(lse - top).exp() for _, lse in parts]
    merged = sum(w * out for w, (out, _) in zip(weights, parts, strict=True))
    return merged / sum(weights)


def decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """Gather the sequence's K and V of KV head kv_head, then softmax(scale * K q) weights V."""
    block_size = k_cache.shape[1]
    blocks = block_table_row[: (seq_len + block_size - 1) // block_size].long()
    k = k_cache[blocks].flatten(0, 1)[:seq_len, kv_head].float()  # (seq_len, head_dim)
    v = v_cache[blocks].flatten(0, 1)[:seq_len, kv_head].float()
    scores = (k @ q.float()) * scale  # (seq_len,)
    weights = (scores - scores.max()).exp()  # minus the max: exp() of a big score overflows
    return (weights / weights.sum() @ v).to(k_cache.dtype)  # (head_dim,)
