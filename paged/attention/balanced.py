"""The balanced variant: near-equal chunks of work on a grid sized to the GPU.

The baseline grid (`kernel.py`) has num_seqs x num_kv_heads x num_segments programs, each a whole
number of 512-token partitions; with unequal lengths, or a program count just above a multiple
of what the GPU holds at once, the last wave runs partly empty. Here the grid is as many
programs as the GPU holds at once, and the work is cut into units of about the same size:
target = all K/V tokens x KV heads / programs (one wave), sequence s gets round(len_s / target)
chunks of equal length rounded up to the tile, and unit u (chunk u // num_kv_heads, KV head
u % num_kv_heads) goes to program u % grid. Every program computes this plan itself from
seq_lens (`_balanced_chunks`; `launch.balanced_plan` is the same arithmetic in Python), so the
host never reads the lengths; program 0 writes each sequence's (first chunk, chunk count) for
the merge. Partial results go to rows (unit, group member); `kernel._merge_segments_kernel`
with BALANCED=True combines them. The grid is SMs x the compiled kernel's occupancy (registers
and shared memory: `launch.programs_per_sm`), so exactly one wave is resident.
References (DOCS, not checked against a version): FlashInfer's `plan` (work split for a grid of
about the SM count) and vLLM's 3-D unified Triton attention (segments on a fixed grid).
"""

import functools

import torch
import triton
import triton.language as tl

from .launch import MAX_SEGMENTS, PROGRAMS_PER_SM, max_balanced_units, programs_per_sm
from .tiles import _attend, _clamp, _load_q, _store_partial


@triton.jit
def _balanced_chunks(
    seq_lens_ptr,
    num_seqs,
    capacity,
    num_kv_heads,
    TILE: tl.constexpr,
    BLOCK_S: tl.constexpr,
    MAX_CHUNKS: tl.constexpr,
):
    """Each sequence's (length, chunk count, chunk length, first chunk): `launch.balanced_plan`."""
    offs_s = tl.arange(0, BLOCK_S)
    lens = _clamp(tl.load(seq_lens_ptr + offs_s, mask=offs_s < num_seqs, other=0), 0, capacity)
    total = tl.sum(lens.to(tl.int64), 0) * num_kv_heads  # int64: tokens x heads of the batch
    target = tl.maximum(tl.cdiv(total, tl.num_programs(0)), TILE).to(tl.int32)  # one wave
    count = _clamp((lens + target // 2) // target, 1, MAX_CHUNKS)
    count = tl.minimum(count, tl.cdiv(lens, TILE))  # no chunk shorter than a tile
    length = tl.maximum(tl.cdiv(tl.cdiv(lens, tl.maximum(count, 1)), TILE) * TILE, TILE)
    count = tl.cdiv(lens, length)  # rounding length up may empty the last chunk: drop it
    return lens, count, length, tl.cumsum(count, 0) - count


@triton.jit
def _paged_attention_balanced_kernel(
    part_out_ptr,
    part_lse_ptr,
    plan_ptr,
    q_ptr,
    k_ptr,
    v_ptr,
    block_table_ptr,
    seq_lens_ptr,
    scale,
    num_seqs,
    num_kv_heads,
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
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    GROUP: tl.constexpr,
    BLOCK_G: tl.constexpr,
    TILE: tl.constexpr,
    BLOCK_S: tl.constexpr,
    MAX_CHUNKS: tl.constexpr,
    TENSOR_CORES: tl.constexpr,
    PRECISION: tl.constexpr,
    PREFETCH: tl.constexpr,
    EXP2: tl.constexpr,
):
    """A grid sized to the GPU; program p takes work units p, p + grid, ... A unit is one chunk
    of one sequence for one KV head; its partial result goes to rows (unit, group member)."""
    pid = tl.program_id(0)
    capacity = max_blocks * BLOCK_SIZE
    offs_s = tl.arange(0, BLOCK_S)
    lens, count, length, first = _balanced_chunks(
        seq_lens_ptr, num_seqs, capacity, num_kv_heads, TILE, BLOCK_S, MAX_CHUNKS
    )
    if pid == 0:  # the merge reads each sequence's chunks from here
        tl.store(plan_ptr + 2 * offs_s, first, mask=offs_s < num_seqs)
        tl.store(plan_ptr + 2 * offs_s + 1, count, mask=offs_s < num_seqs)
    offs_g = tl.arange(0, BLOCK_G)
    g_mask = offs_g < GROUP
    for unit in range(pid, tl.sum(count, 0) * num_kv_heads, tl.num_programs(0)):
        chunk, kv_head = unit // num_kv_heads, unit % num_kv_heads
        # Recomputed, not kept: (BLOCK_S,) vectors live through the tile loop would cost registers.
        lens, count, length, first = _balanced_chunks(
            seq_lens_ptr, num_seqs, capacity, num_kv_heads, TILE, BLOCK_S, MAX_CHUNKS
        )
        seq = tl.sum((first + count <= chunk).to(tl.int32), 0)  # sequences wholly before
        here = offs_s == seq
        chunk_len = tl.sum(tl.where(here, length, 0), 0)
        start = (chunk - tl.sum(tl.where(here, first, 0), 0)) * chunk_len
        end = tl.minimum(start + chunk_len, tl.sum(tl.where(here, lens, 0), 0))
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
        _store_partial(
            part_out_ptr,
            part_lse_ptr,
            unit * GROUP + offs_g,
            g_mask,
            acc,
            m_i,
            l_i,
            HEAD_DIM,
            BLOCK_D,
            EXP2,
        )


@functools.cache
def _sm_limits(device_index: int) -> dict:
    """The GPU's SM count and per-SM limits, as `launch.programs_per_sm` takes them."""
    props = torch.cuda.get_device_properties(device_index)
    limits = dict(
        regs_per_sm=getattr(props, "regs_per_multiprocessor", 65536),
        shared_per_sm=getattr(props, "shared_memory_per_multiprocessor", 0) or 100 * 1024,
        threads_per_sm=getattr(props, "max_threads_per_multi_processor", 0) or 1024,
    )
    return dict(num_sms=props.multi_processor_count, limits=limits)


def launch_balanced(q, k_cache, v_cache, block_table, seq_lens, scale, constexprs):
    """Run the balanced kernel; return (part_out, part_lse, plan, compiled, grid) for the merge."""
    num_seqs, num_q_heads, head_dim = q.shape
    num_blocks, _, num_kv_heads, _ = k_cache.shape
    group = num_q_heads // num_kv_heads
    args = [
        None,
        None,
        None,  # part_out, part_lse, plan: allocated once the grid is known
        q,
        k_cache,
        v_cache,
        block_table,
        seq_lens,
        scale,
        num_seqs,
        num_kv_heads,
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
    ]
    constexprs = constexprs | dict(
        BLOCK_S=max(16, triton.next_power_of_2(num_seqs)), MAX_CHUNKS=MAX_SEGMENTS
    )
    kernel = _paged_attention_balanced_kernel
    grid = 2 * PROGRAMS_PER_SM  # the interpreter has no occupancy: a few programs, units each
    if q.device.type == "cuda":  # one resident wave: the compiled kernel's occupancy x SMs
        f32 = torch.float32
        args[:3] = [torch.empty(0, dtype=f32, device=q.device)] * 2 + [seq_lens]
        compiled = kernel.warmup(*args, grid=(1,), **constexprs)
        compiled._init_handles()  # loads it: n_regs is known from here on
        sm = _sm_limits(q.device.index if q.device.index is not None else 0)
        occupancy = programs_per_sm(
            compiled.n_regs, compiled.metadata.shared, constexprs["num_warps"], **sm["limits"]
        )
        grid = sm["num_sms"] * occupancy
    units = max_balanced_units(num_seqs, num_kv_heads, grid)
    part_out = torch.empty(units * group, head_dim, dtype=torch.float32, device=q.device)
    part_lse = torch.empty(units * group, dtype=torch.float32, device=q.device)
    plan = torch.empty(num_seqs, 2, dtype=torch.int32, device=q.device)  # (first, count)
    args[:3] = part_out, part_lse, plan
    compiled = kernel[(grid,)](*args, **constexprs)
    return part_out, part_lse, plan, compiled, grid
