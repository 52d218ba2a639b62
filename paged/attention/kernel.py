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
below. Without a CUDA GPU the package sets TRITON_INTERPRET=1 before this module is imported,
so the same kernels run (slowly) on the CPU. Layout and conventions: see `reference.py`.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from .launch import MAX_SEGMENTS, LaunchConfig, choose_num_segments, launch_config
from .reference import check_inputs

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEFAULT_PARTITION_SIZE = 512  # tokens per split-K partition (vLLM's v2 kernel uses 512 too)
MERGE_CHUNK = 16  # segments the merge reads per step


@triton.jit
def _segment_len(seq_len, partition_size, num_segments):
    """Tokens per segment: the fewest whole partitions that let num_segments cover seq_len."""
    partitions = tl.cdiv(seq_len, partition_size)
    return tl.maximum(tl.cdiv(partitions, num_segments), 1) * partition_size


@triton.jit
def _paged_attention_kernel(
    out_ptr, part_out_ptr, part_lse_ptr,
    q_ptr, k_ptr, v_ptr, block_table_ptr, seq_lens_ptr,
    scale, partition_size, num_segments,
    stride_qs, stride_qh,
    stride_kb, stride_kt, stride_kh,
    stride_vb, stride_vt, stride_vh,
    stride_bt, stride_os, stride_oh,
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    GROUP: tl.constexpr, BLOCK_G: tl.constexpr,
    TILE: tl.constexpr,
    SPLIT: tl.constexpr,
    TENSOR_CORES: tl.constexpr,
    PRECISION: tl.constexpr,
):  # fmt: skip
    seq, kv_head, segment = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    seq_len = tl.load(seq_lens_ptr + seq)
    seg_len = _segment_len(seq_len, partition_size, num_segments)
    start = segment * seg_len
    end = tl.minimum(start + seg_len, seq_len)

    offs_g = tl.arange(0, BLOCK_G)  # query heads of this group (padded)
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
    if not TENSOR_CORES:
        q = q.to(tl.float32)  # CUDA cores multiply in fp32

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
        if TENSOR_CORES:
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION)  # (BLOCK_G, TILE)
        else:
            s = tl.sum(q[:, None, :] * k.to(tl.float32)[None, :, :], 2)
        s = tl.where(n_mask[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v_rows = block.to(tl.int64) * stride_vb + offset * stride_vt + kv_head * stride_vh
        v = tl.load(v_ptr + v_rows[:, None] + offs_d[None, :], mask=kv_mask, other=0.0)
        if TENSOR_CORES:
            pv = tl.dot(p.to(v.dtype), v, input_precision=PRECISION)  # (BLOCK_G, BLOCK_D)
        else:
            pv = tl.sum(p[:, :, None] * v.to(tl.float32)[None, :, :], 1)
        acc = acc * alpha[:, None] + pv
        m_i = m_new

    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]  # nothing read leaves zeros
    out_mask = g_mask[:, None] & d_mask[None, :]
    if SPLIT:
        row = (seq * (tl.num_programs(1) * GROUP) + q_heads) * num_segments + segment
        # An empty segment stores nothing: the merge reads only segments that hold tokens.
        used = offs_g < tl.where(start < seq_len, GROUP, 0)
        tl.store(
            part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
            out,
            mask=used[:, None] & d_mask[None, :],
        )
        tl.store(part_lse_ptr + row, m_i + tl.log(tl.where(l_i > 0, l_i, 1.0)), mask=used)
    else:
        o_ptrs = out_ptr + seq * stride_os + q_heads[:, None] * stride_oh + offs_d[None, :]
        tl.store(o_ptrs, out.to(out_ptr.dtype.element_ty), mask=out_mask)


@triton.jit
def _merge_segments_kernel(
    out_ptr, part_out_ptr, part_lse_ptr, seq_lens_ptr, partition_size, num_segments,
    stride_os, stride_oh,
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CHUNK: tl.constexpr,
):  # fmt: skip
    seq, head = tl.program_id(0), tl.program_id(1)
    seq_len = tl.load(seq_lens_ptr + seq)
    num_used = tl.cdiv(seq_len, _segment_len(seq_len, partition_size, num_segments))
    offs_c = tl.arange(0, CHUNK)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HEAD_DIM
    m_i = tl.full([], -1e30, tl.float32)  # finite: an empty sequence must not give exp(-inf + inf)
    l_i = tl.zeros([], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for c0 in range(0, num_used, CHUNK):  # online log-sum-exp over chunks of segments
        c_mask = c0 + offs_c < num_used
        row = (seq * tl.num_programs(1) + head) * num_segments + c0 + offs_c
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


@functools.cache
def _announce_interpreter() -> None:
    print(
        "paged: no CUDA GPU, so Triton kernels run under the CPU interpreter "
        "(TRITON_INTERPRET=1): correct, but far too slow to time.",
        file=sys.stderr,
    )


@dataclass
class Launch:
    """What one call ran: output, config, split, and compiled kernels (none if interpreted)."""

    out: torch.Tensor
    config: LaunchConfig
    split: bool
    num_segments: int
    compiled: list


def _check_backend(q, k_cache, v_cache, block_table) -> None:
    """Raise ValueError for inputs this backend or this kernel cannot run."""
    block_size, head_dim = k_cache.shape[1], k_cache.shape[3]
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


def launch(
    q, k_cache, v_cache, block_table, seq_lens, scale=None, *,
    split: bool | None = None, partition_size: int | None = None, check_values: bool = True,
    num_segments: int | None = None, path: str | None = None, tile: int | None = None,
    num_warps: int | None = None, num_stages: int | None = None,
) -> Launch:  # fmt: skip
    """`paged_attention`, returning what ran with the output (for `gpu_check`)."""
    num_seqs, num_q_heads, group = check_inputs(
        q, k_cache, v_cache, block_table, seq_lens, check_values=check_values
    )
    _check_backend(q, k_cache, v_cache, block_table)
    _, block_size, num_kv_heads, head_dim = k_cache.shape
    on_gpu = q.device.type == "cuda"
    capability = torch.cuda.get_device_capability(q.device) if on_gpu else None
    partition_size = DEFAULT_PARTITION_SIZE if partition_size is None else partition_size
    cfg = launch_config(
        capability, head_dim, group, partition_size,
        path=path, tile=tile, num_warps=num_warps, num_stages=num_stages,
    )  # fmt: skip
    if num_segments is not None:
        if not isinstance(num_segments, int) or not 1 <= num_segments <= 4096:
            raise ValueError(f"num_segments must be an int in [1, 4096], got {num_segments!r}")
        if split is False:
            raise ValueError(f"num_segments={num_segments} needs the split path, got split=False")
        split = True
    if INTERPRETED:
        _announce_interpreter()

    out = torch.empty_like(q)
    if num_seqs == 0:
        return Launch(out, cfg, bool(split), 1, [])
    # The longest sequence, when its value is read anyway; else the table's capacity bounds it.
    capacity = block_table.shape[1] * block_size
    max_len = int(seq_lens.max()) if check_values else capacity
    if num_segments is None:
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
    block_d = max(16, triton.next_power_of_2(head_dim))
    opts = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    if split:
        part_out = torch.empty(
            num_seqs, num_q_heads, num_segments, head_dim, dtype=torch.float32, device=q.device
        )
        part_lse = torch.empty(
            num_seqs, num_q_heads, num_segments, dtype=torch.float32, device=q.device
        )
    else:
        part_out = part_lse = out  # unused
    compiled = [
        _paged_attention_kernel[(num_seqs, num_kv_heads, num_segments)](
            out, part_out, part_lse,
            q, k_cache, v_cache, block_table, seq_lens,
            scale, partition_size, num_segments,
            q.stride(0), q.stride(1),
            k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
            block_table.stride(0), out.stride(0), out.stride(1),
            HEAD_DIM=head_dim, BLOCK_D=block_d, BLOCK_SIZE=block_size,
            GROUP=group, BLOCK_G=cfg.block_g, TILE=cfg.tile, SPLIT=split,
            TENSOR_CORES=cfg.path == "tensor_core",
            PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
            **opts,
        )
    ]  # fmt: skip
    if split:
        compiled.append(
            _merge_segments_kernel[(num_seqs, num_q_heads)](
                out, part_out, part_lse, seq_lens, partition_size, num_segments,
                out.stride(0), out.stride(1),
                HEAD_DIM=head_dim, BLOCK_D=block_d, CHUNK=MERGE_CHUNK, num_warps=4,
            )
        )  # fmt: skip
    return Launch(out, cfg, split, num_segments, [c for c in compiled if c is not None])


def paged_attention(
    q, k_cache, v_cache, block_table, seq_lens, scale=None, *,
    split: bool | None = None, partition_size: int | None = None, check_values: bool = True,
    num_segments: int | None = None, path: str | None = None, tile: int | None = None,
    num_warps: int | None = None, num_stages: int | None = None,
):  # fmt: skip
    """Decode attention with K/V read through `block_table`, by the Triton kernel.

    `split` forces (True) or forbids (False) the split-K path; None picks from occupancy and
    length on a GPU (`launch.choose_num_segments`) and never splits on the interpreter.
    `partition_size` (tokens, a multiple of 16) is the split granularity: a segment is a whole
    number of partitions. `num_segments` fixes the segments per sequence (implies split).
    `check_values=False` skips the checks that read seq_lens and block ids (a host sync).
    `path` ('tensor_core' or 'cuda_core'), `tile`, `num_warps`, `num_stages` override the
    choices of `launch.launch_config`. An empty sequence (seq_len 0) gives zeros.
    """
    return launch(
        q, k_cache, v_cache, block_table, seq_lens, scale,
        split=split, partition_size=partition_size, check_values=check_values,
        num_segments=num_segments, path=path, tile=tile,
        num_warps=num_warps, num_stages=num_stages,
    ).out  # fmt: skip
