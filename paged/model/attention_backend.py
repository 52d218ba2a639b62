"""Attention for the real model, reading K and V through block tables; where each variant runs.

Two shapes of work reach attention:
- decode: one new query per sequence, a batch of sequences. On the CPU, `decode_attention_ref`
  does it for the whole batch at once: it gathers each sequence's physical blocks in logical
  order (`paged.attention.reference.gather_kv_batched`), masks the slots past each
  sequence's length, and takes a softmax over the rest. On CUDA, the course's Triton kernel
  `paged.attention.paged_attention` does the same with the same arguments.
- prefill: a run of new queries of ONE sequence whose keys are all in the cache (the new ones
  were just written; older ones may be a shared prefix or tokens held before). `prefill_attention`
  reads them with `gather_kv` and applies a causal mask shifted by the tokens already held.
`select_attention` is the one place that chooses, by device; its name is shown in results.

Shapes (NHD, as in `paged.attention.reference`):
    q            (num_seqs, num_q_heads, head_dim)       decode
    k_cache      (num_blocks, block_size, num_kv_heads, head_dim), v_cache the same
    block_table  int32 (num_seqs, max_blocks_per_seq), seq_lens int32 (num_seqs,)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..attention.reference import gather_kv, gather_kv_batched
from ..text import msg


def decode_attention_ref(q, k_cache, v_cache, block_table, seq_lens, scale=None):
    """One query per sequence against its K/V read through `block_table`, all sequences at once.

    The same contract as `paged_attention_ref`, vectorised over the batch; fp32 inside.
    """
    num_seqs, num_q_heads, head_dim = q.shape
    group = num_q_heads // k_cache.shape[2]
    scale = head_dim**-0.5 if scale is None else float(scale)
    k = gather_kv_batched(k_cache, block_table).float()  # (num_seqs, max_len, kv_heads, d)
    v = gather_kv_batched(v_cache, block_table).float()
    # Query head h reads KV head h // group: view the query heads as (kv_heads, group).
    qg = q.float().view(num_seqs, -1, group, head_dim)  # (num_seqs, kv_heads, group, d)
    scores = torch.einsum("skgd,snkd->skgn", qg, k) * scale  # (num_seqs, kv_heads, group, max_len)
    positions = torch.arange(k.shape[1], device=q.device)
    past_end = positions[None, :] >= seq_lens[:, None]  # (num_seqs, max_len): not this sequence's
    scores = scores.masked_fill(past_end[:, None, None, :], float("-inf"))
    probs = scores.softmax(dim=-1)
    out = torch.einsum("skgn,snkd->skgd", probs, v)  # (num_seqs, kv_heads, group, d)
    return out.reshape(num_seqs, num_q_heads, head_dim).to(q.dtype)


def prefill_attention(q, k_cache, v_cache, block_table_row, seq_len: int, scale=None):
    """Causal attention for the last q.shape[0] tokens of one sequence of `seq_len` tokens.

    q: (num_new, num_q_heads, head_dim); the keys of all `seq_len` tokens, the new ones included,
    are read from the cache through `block_table_row`. Returns (num_new, num_q_heads, head_dim).
    """
    num_new, num_q_heads, head_dim = q.shape
    group = num_q_heads // k_cache.shape[2]
    scale = head_dim**-0.5 if scale is None else float(scale)
    k = gather_kv(k_cache, block_table_row, seq_len).repeat_interleave(group, dim=1)
    v = gather_kv(v_cache, block_table_row, seq_len).repeat_interleave(group, dim=1)
    # Query i sits at position seq_len - num_new + i and sees keys 0 .. that position.
    q_pos = torch.arange(seq_len - num_new, seq_len, device=q.device)
    future = torch.arange(seq_len, device=q.device)[None, :] > q_pos[:, None]  # (num_new, len)
    scores = torch.einsum("qhd,khd->hqk", q, k) * scale  # (num_q_heads, num_new, seq_len)
    probs = scores.masked_fill(future[None], float("-inf")).softmax(dim=-1)
    return torch.einsum("hqk,khd->qhd", probs, v)


@dataclass(frozen=True)
class AttentionBackend:
    """Which functions read the paged cache on this device, and a name to show for them."""

    name: str
    decode: Callable  # (q, k_cache, v_cache, block_table, seq_lens) -> out
    prefill: Callable  # (q, k_cache, v_cache, block_table_row, seq_len) -> out
    pow2_block_size: bool  # the Triton kernel needs block_size a power of two in [1, 256]


ON_CUDA = msg(
    "Triton paged_attention kernel (CUDA) for decode; PyTorch gather_kv for prefill",
    "디코드는 Triton paged_attention 커널(CUDA), prefill은 PyTorch gather_kv",
)
ON_CPU = msg(
    "PyTorch reference through the block table (CPU): decode_attention_ref, gather_kv",
    "블록 테이블을 거치는 PyTorch 참조 구현(CPU): decode_attention_ref, gather_kv",
)


def select_attention(device: torch.device | str) -> AttentionBackend:
    """The course's Triton kernel on CUDA, the batched PyTorch reference elsewhere."""
    if torch.device(device).type == "cuda":
        from ..attention import paged_attention  # imports Triton: only when it will run

        return AttentionBackend(
            str(ON_CUDA),
            paged_attention,
            prefill_attention,
            pow2_block_size=True,
        )
    return AttentionBackend(
        str(ON_CPU),
        decode_attention_ref,
        prefill_attention,
        pow2_block_size=False,
    )
