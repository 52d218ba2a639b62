"""A Triton paged-attention decode kernel: each program reads K and V through the block table.

Grid: (num_seqs, num_kv_heads, num_partitions). A program owns one KV head of one sequence and
all the query heads that share it (GQA), so each K/V tile is loaded once for the whole group.
It walks its token range in tiles of TILE tokens, independent of block_size: token t lives in
physical block block_table[t // block_size] at offset t % block_size, so any power-of-two block
size (1...256) works. Softmax is computed online (running max m, running sum l).

Split-K ("flash-decoding"): with few sequences and long contexts, each sequence is cut into
partitions handled by separate programs; each writes its normalised partial output and its
log-sum-exp, and a second kernel merges them: out = sum_p exp(lse_p - max lse) * o_p / sum(...).

Without a CUDA GPU the package sets TRITON_INTERPRET=1 before this module is imported, so the
same kernel runs (slowly) on the CPU. Layout and conventions: see `reference.py`.
"""

from __future__ import annotations

import functools
import os
import sys

import torch
import triton
import triton.language as tl

from .reference import check_inputs

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEFAULT_PARTITION_SIZE = 512  # tokens per split-K partition (vLLM's v2 kernel uses 512 too)


@triton.jit
def _paged_attention_kernel(
    out_ptr, part_out_ptr, part_lse_ptr,
    q_ptr, k_ptr, v_ptr, block_table_ptr, seq_lens_ptr,
    scale, partition_size, num_partitions,
    stride_qs, stride_qh,
    stride_kb, stride_kt, stride_kh,
    stride_vb, stride_vt, stride_vh,
    stride_bt, stride_os, stride_oh,
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    GROUP: tl.constexpr, BLOCK_G: tl.constexpr,
    TILE: tl.constexpr,
    SPLIT: tl.constexpr,
    PRECISION: tl.constexpr,
):  # fmt: skip
    seq, kv_head, part = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    seq_len = tl.load(seq_lens_ptr + seq)
    start = part * partition_size
    end = tl.minimum(start + partition_size, seq_len)

    offs_g = tl.arange(0, BLOCK_G)  # query heads of this group (padded for tl.dot)
    offs_d = tl.arange(0, BLOCK_D)
    offs_n = tl.arange(0, TILE)
    g_mask = offs_g < GROUP
    d_mask = offs_d < HEAD_DIM
    q_heads = kv_head * GROUP + offs_g
    q = tl.load(
        q_ptr + seq * stride_qs + q_heads[:, None] * stride_qh + offs_d[None, :],
        mask=g_mask[:, None] & d_mask[None, :],
        other=0.0,
    )  # (BLOCK_G, BLOCK_D)

    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for t0 in range(start, end, TILE):
        pos = t0 + offs_n
        n_mask = pos < end
        block = tl.load(block_table_ptr + seq * stride_bt + pos // BLOCK_SIZE, mask=n_mask, other=0)
        offset = pos % BLOCK_SIZE
        kv_mask = n_mask[:, None] & d_mask[None, :]
        k_rows = block.to(tl.int64) * stride_kb + offset * stride_kt + kv_head * stride_kh
        k = tl.load(k_ptr + k_rows[:, None] + offs_d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale  # (BLOCK_G, TILE)
        s = tl.where(n_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v_rows = block.to(tl.int64) * stride_vb + offset * stride_vt + kv_head * stride_vh
        v = tl.load(v_ptr + v_rows[:, None] + offs_d[None, :], mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new

    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]  # an empty partition leaves zeros
    out_mask = g_mask[:, None] & d_mask[None, :]
    if SPLIT:
        row = (seq * (tl.num_programs(1) * GROUP) + q_heads) * num_partitions + part
        tl.store(part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], out, mask=out_mask)
        lse = tl.where(l_i > 0, m_i + tl.log(tl.where(l_i > 0, l_i, 1.0)), float("-inf"))
        tl.store(part_lse_ptr + row, lse, mask=g_mask)  # -inf marks an empty partition
    else:
        o_ptrs = out_ptr + seq * stride_os + q_heads[:, None] * stride_oh + offs_d[None, :]
        tl.store(o_ptrs, out.to(out_ptr.dtype.element_ty), mask=out_mask)


@triton.jit
def _merge_partitions_kernel(
    out_ptr, part_out_ptr, part_lse_ptr, num_partitions, stride_os, stride_oh,
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_P: tl.constexpr,
):  # fmt: skip
    seq, head = tl.program_id(0), tl.program_id(1)
    offs_p = tl.arange(0, BLOCK_P)
    offs_d = tl.arange(0, BLOCK_D)
    p_mask = offs_p < num_partitions
    row = (seq * tl.num_programs(1) + head) * num_partitions + offs_p
    lse = tl.load(part_lse_ptr + row, mask=p_mask, other=float("-inf"))
    weights = tl.exp(lse - tl.max(lse, 0))  # partition 0 is never empty: the max is finite
    weights = weights / tl.sum(weights, 0)
    parts = tl.load(
        part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
        mask=p_mask[:, None] & (offs_d < HEAD_DIM)[None, :],
        other=0.0,
    )  # (BLOCK_P, BLOCK_D)
    out = tl.sum(parts * weights[:, None], 0)
    tl.store(
        out_ptr + seq * stride_os + head * stride_oh + offs_d,
        out.to(out_ptr.dtype.element_ty),
        mask=offs_d < HEAD_DIM,
    )


@functools.cache
def _announce_interpreter() -> None:
    print(
        "paged: no CUDA GPU, so Triton kernels run under the CPU interpreter "
        "(TRITON_INTERPRET=1): correct, but far too slow to time.",
        file=sys.stderr,
    )


def _tile_for(head_dim: int) -> int:
    if INTERPRETED:
        return 16  # fewer, smaller numpy steps
    return 64 if head_dim <= 128 else 32


def _should_split(num_seqs: int, num_kv_heads: int, num_partitions: int, device) -> bool:
    """Split when the unsplit grid would leave most of the GPU's SMs idle."""
    if num_partitions < 2 or device.type != "cuda":
        return False
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return num_seqs * num_kv_heads < 2 * sms


def paged_attention(
    q, k_cache, v_cache, block_table, seq_lens, scale=None, *,
    split: bool | None = None, partition_size: int | None = None, check_values: bool = True,
):  # fmt: skip
    """Decode attention with K/V read through `block_table`, by the Triton kernel.

    `split` forces (True) or forbids (False) the split-K path; None picks automatically.
    `partition_size` (tokens, a multiple of the kernel's tile) sets the split granularity.
    `check_values=False` skips the checks that read seq_lens and block ids (a host sync).
    """
    num_seqs, num_q_heads, group = check_inputs(
        q, k_cache, v_cache, block_table, seq_lens, check_values=check_values
    )
    _, block_size, num_kv_heads, head_dim = k_cache.shape
    if q.device.type != "cuda" and not INTERPRETED:
        raise ValueError(f"q is on {q.device}; without TRITON_INTERPRET=1 the kernel needs CUDA")
    if q.device.type == "cuda" and q.dtype == torch.bfloat16:
        if torch.cuda.get_device_capability(q.device) < (8, 0):
            raise ValueError("bfloat16 needs compute capability >= 8.0: use float16 on this GPU")
    elif q.dtype == torch.bfloat16:
        raise ValueError("bfloat16 is not supported by Triton's CPU interpreter: use float16")
    if block_size & (block_size - 1) or not 1 <= block_size <= 256:
        raise ValueError(f"block_size must be a power of two in [1, 256], got {block_size}")
    if head_dim > 256:
        raise ValueError(f"head_dim must be <= 256, got {head_dim}")
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        if t.stride(-1) != 1:
            raise ValueError(
                f"{name} must have a contiguous last dimension (stride 1), got strides {t.stride()}"
            )
    if block_table.stride(1) != 1:
        raise ValueError(f"block_table rows must be contiguous, got strides {block_table.stride()}")
    if INTERPRETED:
        _announce_interpreter()

    tile = _tile_for(head_dim)
    partition_size = DEFAULT_PARTITION_SIZE if partition_size is None else partition_size
    if not isinstance(partition_size, int) or partition_size < tile or partition_size % tile:
        raise ValueError(
            f"partition_size must be a positive multiple of {tile}, got {partition_size!r}"
        )
    capacity = block_table.shape[1] * block_size
    num_partitions = max(1, -(-capacity // partition_size))
    if split is None:
        split = _should_split(num_seqs, num_kv_heads, num_partitions, q.device)
    if not split:
        partition_size, num_partitions = max(capacity, 1), 1

    out = torch.empty_like(q)
    if num_seqs == 0:
        return out
    scale = head_dim**-0.5 if scale is None else float(scale)
    block_d = max(16, triton.next_power_of_2(head_dim))
    block_g = max(16, triton.next_power_of_2(group))
    if split:
        part_out = torch.empty(
            num_seqs, num_q_heads, num_partitions, head_dim, dtype=torch.float32, device=q.device
        )
        part_lse = torch.empty(
            num_seqs, num_q_heads, num_partitions, dtype=torch.float32, device=q.device
        )
    else:
        part_out = part_lse = out  # unused
    _paged_attention_kernel[(num_seqs, num_kv_heads, num_partitions)](
        out, part_out, part_lse,
        q, k_cache, v_cache, block_table, seq_lens,
        scale, partition_size, num_partitions,
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        block_table.stride(0), out.stride(0), out.stride(1),
        HEAD_DIM=head_dim, BLOCK_D=block_d, BLOCK_SIZE=block_size,
        GROUP=group, BLOCK_G=block_g, TILE=tile, SPLIT=split,
        PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )  # fmt: skip
    if split:
        _merge_partitions_kernel[(num_seqs, num_q_heads)](
            out, part_out, part_lse, num_partitions, out.stride(0), out.stride(1),
            HEAD_DIM=head_dim, BLOCK_D=block_d,
            BLOCK_P=max(2, triton.next_power_of_2(num_partitions)),
        )  # fmt: skip
    return out
