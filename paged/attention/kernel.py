"""A Triton paged-attention decode kernel: each program reads K and V through the block table.

Grid: (num_seqs, num_kv_heads, num_segments). A program owns one KV head of one sequence and
all the query heads that share it (GQA), so each K/V tile is loaded once for the whole group.
It walks its token range in tiles of TILE tokens, independent of block_size: token t lives in
physical block block_table[t // block_size] at offset t % block_size, so any power-of-two block
size (1...256) works. Softmax is computed online (running max m, running sum l).

Split-K ("flash-decoding"): with few sequences and long contexts, each sequence is cut into
`num_segments` segments handled by separate programs. A segment is a whole number of
`partition_size`-token partitions, computed on the device from the sequence's own length, so
the work follows the lengths, not the width of the block table. Each program writes its
normalised partial output and log-sum-exp; a second kernel merges them, a chunk of segments at
a time with an online log-sum-exp: out = sum_s exp(lse_s - max lse) * o_s / sum(...). An empty
sequence (seq_len 0) gives zeros on both paths.

Two variants of the products, chosen in `launch.py`: tensor cores (`tl.dot`, query group padded
to 16 rows) on sm >= 80, CUDA cores (products and `tl.sum`, group padded to a power of two)
below. The tile loop itself lives in `tiles.py`, shared with the balanced variant's kernel
(`balanced.py`); the variants to measure side by side are launch options (`launch.VARIANTS`,
`variant=`; the default is the baseline). Unchecked inputs (check_values=False) stay inside
memory: lengths are clamped to the table's capacity and block ids to the cache. Without a CUDA
GPU `triton_mode` sets TRITON_INTERPRET=1 before this module is imported, so the same kernels run
(slowly) on the CPU. Layout and conventions: see `reference.py`.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from ..text import msg
from .balanced import launch_balanced
from .launch import (
    MAX_SEGMENTS,
    VARIANTS,
    LaunchConfig,
    check_backend,
    check_split,
    choose_num_segments,
    launch_config,
)
from .reference import check_inputs
from .tiles import _attend, _clamp, _load_q, _store_partial
from .triton_mode import INTERPRETED

DEFAULT_PARTITION_SIZE = 512  # tokens per split-K partition (vLLM's v2 kernel uses 512 too)
MERGE_CHUNK = 16  # segments the merge reads per step


@triton.jit
def _segment_len(seq_len, partition_size, num_segments):
    """Tokens per segment: the fewest whole partitions that let num_segments cover seq_len."""
    partitions = tl.cdiv(seq_len, partition_size)
    return tl.maximum(tl.cdiv(partitions, num_segments), 1) * partition_size


@triton.jit
def _paged_attention_kernel(
    out_ptr,
    part_out_ptr,
    part_lse_ptr,
    q_ptr,
    k_ptr,
    v_ptr,
    block_table_ptr,
    seq_lens_ptr,
    scale,
    partition_size,
    num_segments,
    max_blocks,
    num_blocks,
    stride_qs,
    stride_qh,
    stride_kb,
    stride_kt,
    stride_kh,
    stride_vb,
    stride_vt,
    stride_vh,
    stride_bt,
    stride_os,
    stride_oh,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    GROUP: tl.constexpr,
    BLOCK_G: tl.constexpr,
    TILE: tl.constexpr,
    SPLIT: tl.constexpr,
    TENSOR_CORES: tl.constexpr,
    PRECISION: tl.constexpr,
    PREFETCH: tl.constexpr,
    EXP2: tl.constexpr,
):
    seq, kv_head, segment = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    seq_len = _clamp(tl.load(seq_lens_ptr + seq), 0, max_blocks * BLOCK_SIZE)
    seg_len = _segment_len(seq_len, partition_size, num_segments)
    start = segment * seg_len
    end = tl.minimum(start + seg_len, seq_len)

    offs_g = tl.arange(0, BLOCK_G)  # query heads of this group (padded)
    offs_d = tl.arange(0, BLOCK_D)
    g_mask = offs_g < GROUP
    q_heads = kv_head * GROUP + offs_g
    q = _load_q(
        q_ptr + seq * stride_qs,
        q_heads,
        g_mask,
        stride_qh,
        scale,
        HEAD_DIM,
        BLOCK_D,
        TENSOR_CORES,
        EXP2,
    )
    acc, m_i, l_i = _attend(
        q,
        k_ptr,
        v_ptr,
        block_table_ptr + seq * stride_bt,
        kv_head,
        start,
        end,
        scale,
        num_blocks,
        stride_kb,
        stride_kt,
        stride_kh,
        stride_vb,
        stride_vt,
        stride_vh,
        HEAD_DIM,
        BLOCK_D,
        BLOCK_SIZE,
        BLOCK_G,
        TILE,
        TENSOR_CORES,
        PRECISION,
        PREFETCH,
        EXP2,
    )
    if SPLIT:
        row = (seq * (tl.num_programs(1) * GROUP) + q_heads) * num_segments + segment
        # An empty segment stores nothing: the merge reads only segments that hold tokens.
        used = offs_g < tl.where(start < seq_len, GROUP, 0)
        _store_partial(
            part_out_ptr, part_lse_ptr, row, used, acc, m_i, l_i, HEAD_DIM, BLOCK_D, EXP2
        )
    else:
        out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]  # nothing read leaves zeros
        o_ptrs = out_ptr + seq * stride_os + q_heads[:, None] * stride_oh + offs_d[None, :]
        out_mask = g_mask[:, None] & (offs_d < HEAD_DIM)[None, :]
        tl.store(o_ptrs, out.to(out_ptr.dtype.element_ty), mask=out_mask)


@triton.jit
def _merge_segments_kernel(
    out_ptr,
    part_out_ptr,
    part_lse_ptr,
    seq_lens_ptr,
    plan_ptr,
    partition_size,
    num_segments,
    capacity,
    stride_os,
    stride_oh,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    CHUNK: tl.constexpr,
    BALANCED: tl.constexpr,
):
    seq, head = tl.program_id(0), tl.program_id(1)
    if BALANCED:  # chunks numbered across the batch; rows (chunk, query head)
        first = tl.load(plan_ptr + 2 * seq)
        num_used = tl.load(plan_ptr + 2 * seq + 1)
    else:  # rows (sequence, query head, segment)
        seq_len = _clamp(tl.load(seq_lens_ptr + seq), 0, capacity)
        num_used = tl.cdiv(seq_len, _segment_len(seq_len, partition_size, num_segments))
    offs_c = tl.arange(0, CHUNK)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HEAD_DIM
    m_i = tl.full([], -1e30, tl.float32)  # finite: an empty sequence must not give exp(-inf + inf)
    l_i = tl.zeros([], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for c0 in range(0, num_used, CHUNK):  # online log-sum-exp over chunks of segments
        c_mask = c0 + offs_c < num_used
        if BALANCED:
            row = (first + c0 + offs_c) * tl.num_programs(1) + head
        else:
            row = (seq * tl.num_programs(1) + head) * num_segments + c0 + offs_c
        row = row.to(tl.int64)  # row x HEAD_DIM may pass 2**31
        lse = tl.load(part_lse_ptr + row, mask=c_mask, other=float("-inf"))
        m_new = tl.maximum(m_i, tl.max(lse, 0))
        alpha = tl.exp(m_i - m_new)
        w = tl.exp(lse - m_new)  # (CHUNK,)
        parts = tl.load(
            part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
            mask=c_mask[:, None] & d_mask[None, :],
            other=0.0,
        )  # (CHUNK, BLOCK_D)
        acc = acc * alpha + tl.sum(parts * w[:, None], 0)
        l_i = l_i * alpha + tl.sum(w, 0)
        m_i = m_new
    out = acc / tl.where(l_i > 0, l_i, 1.0)  # no segments (seq_len 0): zeros
    tl.store(
        out_ptr + seq * stride_os + head * stride_oh + offs_d,
        out.to(out_ptr.dtype.element_ty),
        mask=d_mask,
    )


INTERPRETER_NOTE = msg(
    "paged: no CUDA GPU, so Triton kernels run under the CPU interpreter (TRITON_INTERPRET=1): "
    "correct, but far too slow to time.",
    "paged: CUDA GPU가 없어 Triton 커널이 CPU 인터프리터(TRITON_INTERPRET=1)에서 실행됩니다. "
    "결과는 맞지만 시간을 재기에는 너무 느립니다.",
)


@functools.cache
def _announce_interpreter() -> None:
    print(INTERPRETER_NOTE, file=sys.stderr)


@dataclass
class Launch:
    """What one call ran: output, config, split, and compiled kernels (none if interpreted)."""

    out: torch.Tensor
    config: LaunchConfig
    split: bool
    num_segments: int  # segments per sequence; for the balanced variant, programs in its grid
    compiled: list


def launch(
    q,
    k_cache,
    v_cache,
    block_table,
    seq_lens,
    scale=None,
    *,
    split: bool | None = None,
    partition_size: int | None = None,
    check_values: bool = True,
    num_segments: int | None = None,
    path: str | None = None,
    tile: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    variant: str | None = None,
) -> Launch:
    """`paged_attention`, returning what ran with the output (for `gpu_check`)."""
    num_seqs, num_q_heads, group = check_inputs(
        q, k_cache, v_cache, block_table, seq_lens, check_values=check_values
    )
    on_gpu = q.device.type == "cuda"
    capability = torch.cuda.get_device_capability(q.device) if on_gpu else None
    check_backend(q, k_cache, v_cache, block_table, capability, INTERPRETED)
    num_blocks, block_size, num_kv_heads, head_dim = k_cache.shape
    partition_size = DEFAULT_PARTITION_SIZE if partition_size is None else partition_size
    cfg = launch_config(
        capability,
        head_dim,
        group,
        partition_size,
        path=path,
        tile=tile,
        num_warps=num_warps,
        num_stages=num_stages,
        variant=variant,
    )
    balanced = VARIANTS[cfg.variant].balanced
    split = check_split(cfg.variant, split, num_segments, num_seqs)
    if INTERPRETED:
        _announce_interpreter()

    out = torch.empty_like(q)
    if num_seqs == 0:
        return Launch(out, cfg, bool(split), 1, [])
    if num_blocks == 0:  # nothing to read: only empty sequences are valid
        return Launch(out.zero_(), cfg, bool(split), 1, [])
    capacity = block_table.shape[1] * block_size
    if num_segments is None and not balanced:  # balanced: launch_balanced sizes the grid
        # The longest sequence, when its value is read anyway; else the table's capacity bounds it.
        max_len = int(seq_lens.max()) if check_values else capacity
        if split is None and on_gpu:
            sms = torch.cuda.get_device_properties(q.device).multi_processor_count
            num_segments = choose_num_segments(num_seqs, num_kv_heads, max_len, partition_size, sms)
            split = num_segments > 1
        elif split:  # as many segments as partitions, up to MAX_SEGMENTS
            num_segments = max(1, min(-(-max_len // partition_size), MAX_SEGMENTS))
        else:
            num_segments = 1
    split = bool(split)
    if not split:
        partition_size = cfg.tile  # one segment per sequence: any multiple of the tile covers it

    scale = head_dim**-0.5 if scale is None else float(scale)
    prefetch, exp2 = VARIANTS[cfg.variant].prefetch, VARIANTS[cfg.variant].exp2
    if exp2:
        scale *= math.log2(math.e)  # the kernel's exponentials and maxima are in base 2
    block_d = max(16, triton.next_power_of_2(head_dim))
    constexprs = dict(
        HEAD_DIM=head_dim,
        BLOCK_D=block_d,
        BLOCK_SIZE=block_size,
        GROUP=group,
        BLOCK_G=cfg.block_g,
        TILE=cfg.tile,
        TENSOR_CORES=cfg.path == "tensor_core",
        PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        PREFETCH=prefetch,
        EXP2=exp2,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )
    f32 = dict(dtype=torch.float32, device=q.device)
    plan = seq_lens  # read by the merge only when balanced
    if balanced:
        part_out, part_lse, plan, ran, num_segments = launch_balanced(
            q, k_cache, v_cache, block_table, seq_lens, scale, constexprs
        )
        compiled = [ran]
    else:
        if split:
            part_out = torch.empty(num_seqs, num_q_heads, num_segments, head_dim, **f32)
            part_lse = torch.empty(num_seqs, num_q_heads, num_segments, **f32)
        else:
            part_out = part_lse = out  # unused
        compiled = [
            _paged_attention_kernel[(num_seqs, num_kv_heads, num_segments)](
                out,
                part_out,
                part_lse,
                q,
                k_cache,
                v_cache,
                block_table,
                seq_lens,
                scale,
                partition_size,
                num_segments,
                block_table.shape[1],
                num_blocks,
                q.stride(0),
                q.stride(1),
                k_cache.stride(0),
                k_cache.stride(1),
                k_cache.stride(2),
                v_cache.stride(0),
                v_cache.stride(1),
                v_cache.stride(2),
                block_table.stride(0),
                out.stride(0),
                out.stride(1),
                SPLIT=split,
                **constexprs,
            )
        ]
    if split:
        compiled.append(
            _merge_segments_kernel[(num_seqs, num_q_heads)](
                out,
                part_out,
                part_lse,
                seq_lens,
                plan,
                partition_size,
                num_segments,
                capacity,
                out.stride(0),
                out.stride(1),
                HEAD_DIM=head_dim,
                BLOCK_D=block_d,
                CHUNK=MERGE_CHUNK,
                BALANCED=balanced,
                num_warps=4,
            )
        )
    return Launch(out, cfg, split, num_segments, [c for c in compiled if c is not None])


def paged_attention(
    q,
    k_cache,
    v_cache,
    block_table,
    seq_lens,
    scale=None,
    *,
    split: bool | None = None,
    partition_size: int | None = None,
    check_values: bool = True,
    num_segments: int | None = None,
    path: str | None = None,
    tile: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    variant: str | None = None,
):
    """Decode attention with K/V read through `block_table`, by the Triton kernel.

    `split` forces (True) or forbids (False) the split-K path; None picks from occupancy and
    length on a GPU (`launch.choose_num_segments`) and never splits on the interpreter.
    `partition_size` (tokens, a multiple of 16) is the split granularity: a segment is a whole
    number of partitions. `num_segments` fixes the segments per sequence (implies split).
    `check_values=False` skips the checks that read seq_lens and block ids (a host sync); the
    kernel still clamps lengths to the table and ids to the cache, so nothing is read outside.
    `path` ('tensor_core' or 'cuda_core'), `tile`, `num_warps`, `num_stages` override the
    choices of `launch.launch_config`; `variant` picks one of `launch.VARIANTS` (default: the
    baseline; 'balanced' and 'combined' choose their own chunks, so no split=False or
    num_segments). An empty sequence (seq_len 0) gives zeros.
    """
    return launch(
        q,
        k_cache,
        v_cache,
        block_table,
        seq_lens,
        scale,
        split=split,
        partition_size=partition_size,
        check_values=check_values,
        num_segments=num_segments,
        path=path,
        tile=tile,
        num_warps=num_warps,
        num_stages=num_stages,
        variant=variant,
    ).out
