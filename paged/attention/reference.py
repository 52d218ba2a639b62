"""Decode attention through a block table, in plain PyTorch: the reference for the Triton kernel.

Shapes (NHD cache layout, as FlashAttention's paged KV cache):
    q            (num_seqs, num_q_heads, head_dim)
    k_cache      (num_blocks, block_size, num_kv_heads, head_dim), v_cache the same
    block_table  int32 (num_seqs, max_blocks_per_seq); entries past a sequence's last block
                 are ignored
    seq_lens     int32 (num_seqs,), each >= 0; an empty sequence (a padded batch slot)
                 attends to nothing and its output is zeros
Query head h reads KV head h // (num_q_heads // num_kv_heads) (GQA; MQA when num_kv_heads == 1).
"""

from __future__ import annotations

import torch

DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def check_inputs(q, k_cache, v_cache, block_table, seq_lens, *, check_values: bool = True):
    """Raise ValueError naming the bad argument; return (num_seqs, num_q_heads, group)."""
    tensors = dict(
        q=q, k_cache=k_cache, v_cache=v_cache, block_table=block_table, seq_lens=seq_lens
    )
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if q.dim() != 3:
        raise ValueError(f"q must be (num_seqs, num_q_heads, head_dim), got shape {tuple(q.shape)}")
    if k_cache.dim() != 4:
        raise ValueError(
            "k_cache must be (num_blocks, block_size, num_kv_heads, head_dim), "
            f"got shape {tuple(k_cache.shape)}"
        )
    if v_cache.shape != k_cache.shape:
        raise ValueError(f"v_cache shape {tuple(v_cache.shape)} != k_cache {tuple(k_cache.shape)}")
    num_seqs, num_q_heads, head_dim = q.shape
    num_blocks, block_size, num_kv_heads, k_dim = k_cache.shape
    if k_dim != head_dim:
        raise ValueError(f"k_cache head_dim {k_dim} != q head_dim {head_dim}")
    if num_q_heads % num_kv_heads:
        raise ValueError(
            f"num_q_heads={num_q_heads} is not a multiple of num_kv_heads={num_kv_heads}"
        )
    for name in ("q", "k_cache", "v_cache"):
        if tensors[name].dtype not in DTYPES:
            raise ValueError(f"{name} dtype {tensors[name].dtype} not in {DTYPES}")
    if not q.dtype == k_cache.dtype == v_cache.dtype:
        raise ValueError(
            f"q, k_cache, v_cache dtypes differ: {q.dtype}, {k_cache.dtype}, {v_cache.dtype}"
        )
    if block_table.dtype != torch.int32 or block_table.dim() != 2:
        raise ValueError(
            f"block_table must be a 2-D int32 tensor, got {block_table.dtype} "
            f"of shape {tuple(block_table.shape)}"
        )
    if block_table.shape[0] != num_seqs:
        raise ValueError(f"block_table has {block_table.shape[0]} rows for {num_seqs} sequences")
    if seq_lens.dtype != torch.int32 or tuple(seq_lens.shape) != (num_seqs,):
        raise ValueError(
            f"seq_lens must be int32 of shape ({num_seqs},), got {seq_lens.dtype} "
            f"of shape {tuple(seq_lens.shape)}"
        )
    devices = {t.device for t in tensors.values()}
    if len(devices) > 1:
        raise ValueError(f"all tensors must be on one device, got {sorted(map(str, devices))}")
    if check_values and num_seqs:
        capacity = block_table.shape[1] * block_size
        lo, hi = int(seq_lens.min()), int(seq_lens.max())
        if lo < 0 or hi > capacity:
            raise ValueError(
                f"seq_lens must be in [0, {capacity}] (block_table columns x block_size), "
                f"got min {lo}, max {hi}"
            )
        cols = torch.arange(block_table.shape[1], device=block_table.device)
        used = cols[None, :] < (seq_lens[:, None] + block_size - 1) // block_size
        ids = block_table[used]
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_blocks):
            raise ValueError(
                f"block_table holds block ids outside [0, {num_blocks}): "
                f"min {int(ids.min())}, max {int(ids.max())}"
            )
    return num_seqs, num_q_heads, num_q_heads // num_kv_heads


def gather_kv(cache: torch.Tensor, block_table_row: torch.Tensor, seq_len: int) -> torch.Tensor:
    """One sequence's K (or V) in logical order: (seq_len, num_kv_heads, head_dim)."""
    block_size = cache.shape[1]
    num_used = -(-seq_len // block_size)
    blocks = block_table_row[:num_used].long()
    return cache[blocks].flatten(0, 1)[:seq_len]


def gather_kv_batched(cache: torch.Tensor, block_table: torch.Tensor) -> torch.Tensor:
    """Every sequence's blocks in logical order: (num_seqs, max_blocks * block_size, kv, d)."""
    blocks = cache[block_table.long()]  # (num_seqs, max_blocks, block_size, kv_heads, head_dim)
    return blocks.flatten(1, 2)


def paged_attention_ref(q, k_cache, v_cache, block_table, seq_lens, scale=None):
    """Decode attention, one sequence at a time, reading K/V block by block; fp32 inside."""
    # An empty sequence: softmax over no scores, then a sum over no tokens, gives zeros.
    num_seqs, _, group = check_inputs(q, k_cache, v_cache, block_table, seq_lens)
    scale = q.shape[-1] ** -0.5 if scale is None else float(scale)
    out = torch.empty_like(q)
    for i in range(num_seqs):
        n = int(seq_lens[i])
        k = gather_kv(k_cache, block_table[i], n).float().repeat_interleave(group, dim=1)
        v = gather_kv(v_cache, block_table[i], n).float().repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[i].float(), k) * scale  # (num_q_heads, n)
        out[i] = torch.einsum("hn,nhd->hd", scores.softmax(dim=-1), v).to(q.dtype)
    return out
