"""Attention for the real model, reading K and V through block tables; where each variant runs.

Two shapes of work reach attention:
- decode: one new query per sequence, a batch of sequences. On the CPU, `decode_attention_ref`
  does it for the whole batch at once: it reads each sequence's slots in logical order through
  its block table, masks the slots past each sequence's length, and takes a softmax over the
  rest. A decode step calls it in all 30 layers with the same tables, so `BatchedDecode` builds
  what the layers share (which rows of the cache to read, the mask) once per step, and each
  layer only gathers and multiplies. On CUDA, the course's Triton kernel
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

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..attention.reference import gather_kv
from ..text import msg


class BatchedDecode:
    """One decode step's reads through the block tables, built once for every layer.

    The products are those `torch.einsum` runs for the plain formula (two `bmm`s on the same
    contiguous operands), so the result is the same to the bit; only the gathers are planned.
    """

    def __init__(self, block_table, seq_lens, cache_shape):
        _, block_size, num_kv_heads, head_dim = cache_shape
        device = block_table.device
        num_slots = block_table.shape[1] * block_size  # read per sequence, padded to the widest
        pos = torch.arange(num_slots, device=device)
        used = pos[::block_size][None, :] < seq_lens[:, None]  # (seqs, blocks): holds a token
        table = torch.where(used, block_table.long(), 0)  # the rest are ignored: read block 0
        slots = table[:, pos // block_size] * block_size + pos % block_size  # (seqs, slots)
        heads = torch.arange(num_kv_heads, device=device)
        rows = slots[:, None, :] * num_kv_heads + heads[None, :, None]  # (seqs, kv_heads, slots)
        # int32 indices (where they fit) read faster than int64
        index = torch.int32 if math.prod(cache_shape) < 2**31 else torch.long
        self.v_rows = rows.flatten().to(index)  # rows of the cache as (slots x kv_heads, head_dim)
        dims = torch.arange(head_dim, device=device)
        # elements of the flat cache, laid out (seqs, kv_heads, head_dim, slots) for q @ K
        elems = rows[:, :, None, :] * head_dim + dims[None, None, :, None]
        self.k_elems = elems.flatten().to(index)
        self.past_end = (pos[None, :] >= seq_lens[:, None])[:, None, None, :]  # not its slots
        self.shape = (block_table.shape[0], num_kv_heads, num_slots, head_dim)

    def __call__(self, q, k_cache, v_cache, scale=None):
        """Attention output (num_seqs, num_q_heads, head_dim) of this step's queries."""
        return self.attend(q, *self.read(k_cache, v_cache), scale)

    def read(self, k_cache, v_cache):
        """Every sequence's K as (seqs x kv_heads, head_dim, slots) and V as (seqs x kv_heads,
        slots, head_dim), float32; a slot past a sequence's end holds any finite value."""
        head_dim = self.shape[3]
        k = k_cache.reshape(-1).index_select(0, self.k_elems).float()
        v = v_cache.reshape(-1, head_dim).index_select(0, self.v_rows).float()
        return k, v

    def attend(self, q, k, v, scale=None):
        """softmax(scale * q K) V for every query head, over the K and V that `read` gave."""
        num_seqs, kv_heads, num_slots, head_dim = self.shape
        group = q.shape[1] // kv_heads
        scale = head_dim**-0.5 if scale is None else float(scale)
        # Query head h reads KV head h // group: the query heads as (kv_heads, group) per sequence.
        qg = q.float().reshape(num_seqs * kv_heads, group, head_dim)
        scores = torch.bmm(qg, k.view(num_seqs * kv_heads, head_dim, num_slots))
        scores = scores.view(num_seqs, kv_heads, group, num_slots) * scale
        probs = scores.masked_fill_(self.past_end, float("-inf")).softmax(dim=-1)
        out = torch.bmm(probs.view(-1, group, num_slots), v.view(-1, num_slots, head_dim))
        return out.view(num_seqs, -1, head_dim).to(q.dtype)


def decode_attention_ref(q, k_cache, v_cache, block_table, seq_lens, scale=None):
    """One query per sequence against its K/V read through `block_table`, all sequences at once.

    The same contract as `paged_attention_ref`, vectorised over the batch; fp32 inside.
    """
    return BatchedDecode(block_table, seq_lens, k_cache.shape)(q, k_cache, v_cache, scale)


@dataclass(frozen=True)
class TablesBound:
    """A decode function that takes the tables at every call, with one step's tables given."""

    decode: Callable
    block_table: torch.Tensor
    seq_lens: torch.Tensor

    def __call__(self, q, k_cache, v_cache):
        return self.decode(q, k_cache, v_cache, self.block_table, self.seq_lens)


def prefill_attention(
    q, k_cache, v_cache, block_table_row, seq_len: int, scale=None, gather: Callable = gather_kv
):
    """Causal attention for the last q.shape[0] tokens of one sequence of `seq_len` tokens.

    q: (num_new, num_q_heads, head_dim); the keys of all `seq_len` tokens, the new ones included,
    are read from the cache through `block_table_row` (by `gather`, chapter 5's: a learner's
    engine passes its own). Returns (num_new, num_q_heads, head_dim).
    """
    num_new, num_q_heads, head_dim = q.shape
    group = num_q_heads // k_cache.shape[2]
    scale = head_dim**-0.5 if scale is None else float(scale)
    k = gather(k_cache, block_table_row, seq_len).repeat_interleave(group, dim=1)
    v = gather(v_cache, block_table_row, seq_len).repeat_interleave(group, dim=1)
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
    # (block_table, seq_lens, cache_shape) -> (q, k_cache, v_cache) -> out: a step, every layer
    decode_step: Callable
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
            lambda block_table, seq_lens, _: TablesBound(paged_attention, block_table, seq_lens),
            prefill_attention,
            pow2_block_size=True,
        )
    return AttentionBackend(
        str(ON_CPU),
        decode_attention_ref,
        BatchedDecode,
        prefill_attention,
        pow2_block_size=False,
    )
