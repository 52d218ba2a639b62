"""The tile loop every paged-attention kernel shares: load q, walk K/V tiles, store partials.

A program reads tokens [start, end) of one sequence for one KV head, TILE tokens a step: token
t lives in physical block block_table[t // block_size] at offset t % block_size. The loop keeps
an online softmax (running max m_i, running sum l_i, accumulator acc) for the query heads of one
GQA group. `kernel.py` and `balanced.py` call these functions from their `@triton.jit` kernels
(Triton inlines them), so every variant runs the same loop, switched by two constexprs:

- PREFETCH: the next tile's block ids are loaded while this tile's K and V are read, so the K/V
  addresses never wait for a table load in the same step (FlashInfer's decode kernel also loads
  page indices ahead of its K/V copies; not checked against a specific version).
- EXP2: base-2 exponentials with scale x log2(e) folded into q (CUDA cores, where q is fp32) or
  into the scores (tensor cores, where scaling an fp16/bf16 q would round it); the accumulator is
  rescaled only when some row's maximum grows; the softmax weights are summed once after the
  loop instead of once a tile (one reduction over the tile fewer per step; with tl.dot's layout
  it crosses warps). FlashAttention-2 and Triton's fused-attention tutorial use exp2 likewise.

Unchecked inputs stay inside memory: block ids are clamped into the cache (a -1 pad reads block
0), and callers clamp lengths to the table's capacity.
"""

import triton
import triton.language as tl


@triton.jit
def _clamp(x, lo, hi):
    return tl.minimum(tl.maximum(x, lo), hi)


@triton.jit
def _block_ids(table_ptrs, mask, num_blocks):
    """Physical block ids (0 where masked), clamped into the cache: -1 never becomes an address."""
    return _clamp(tl.load(table_ptrs, mask=mask, other=0), 0, num_blocks - 1).to(tl.int64)


@triton.jit
def _load_q(
    q_row_ptr,
    q_heads,
    g_mask,
    stride_qh,
    scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    TENSOR_CORES: tl.constexpr,
    EXP2: tl.constexpr,
):
    """The group's query rows (BLOCK_G, BLOCK_D); fp32 for CUDA cores, pre-scaled under EXP2."""
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(
        q_row_ptr + q_heads[:, None] * stride_qh + offs_d[None, :],
        mask=g_mask[:, None] & (offs_d < HEAD_DIM)[None, :],
        other=0.0,
    )
    if not TENSOR_CORES:
        q = q.to(tl.float32)  # CUDA cores multiply in fp32
        if EXP2:
            q = q * scale  # one multiply per q value instead of one per score
    return q


@triton.jit
def _attend(
    q,
    k_ptr,
    v_ptr,
    table_row_ptr,
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
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_G: tl.constexpr,
    TILE: tl.constexpr,
    TENSOR_CORES: tl.constexpr,
    PRECISION: tl.constexpr,
    PREFETCH: tl.constexpr,
    EXP2: tl.constexpr,
):
    """Online softmax over tokens [start, end) of one KV head: (acc, m_i, l_i), unnormalised.

    EXP2: `scale` carries log2(e), so scores and m_i are in base 2.
    """
    offs_d = tl.arange(0, BLOCK_D)
    offs_n = tl.arange(0, TILE)
    d_mask = offs_d < HEAD_DIM
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    l_tile = tl.zeros([BLOCK_G, TILE], tl.float32)  # EXP2: summed once, after the loop
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    if PREFETCH:  # the first tile's ids now; each step then fetches the next tile's
        pos = start + offs_n
        next_block = _block_ids(table_row_ptr + pos // BLOCK_SIZE, pos < end, num_blocks)
    for t0 in range(start, end, TILE):
        pos = t0 + offs_n
        n_mask = pos < end
        if PREFETCH:  # K/V addresses no longer wait for a table load in this step
            block = next_block
            ahead = pos + TILE
            next_block = _block_ids(table_row_ptr + ahead // BLOCK_SIZE, ahead < end, num_blocks)
        else:
            block = _block_ids(table_row_ptr + pos // BLOCK_SIZE, n_mask, num_blocks)
        offset = pos % BLOCK_SIZE
        kv_mask = n_mask[:, None] & d_mask[None, :]
        k_rows = block * stride_kb + offset * stride_kt + kv_head * stride_kh
        k = tl.load(k_ptr + k_rows[:, None] + offs_d[None, :], mask=kv_mask, other=0.0)
        if TENSOR_CORES:
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale  # (BLOCK_G, TILE)
        else:
            s = tl.sum(q[:, None, :] * k.to(tl.float32)[None, :, :], 2)
            if not EXP2:  # EXP2 scaled q instead
                s = s * scale
        s = tl.where(n_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        if EXP2:
            if tl.max(m_new - m_i, 0) > 0:  # rescale only when some row's maximum grew
                alpha = tl.exp2(m_i - m_new)
                acc = acc * alpha[:, None]
                l_tile = l_tile * alpha[:, None]
                m_i = m_new
            p = tl.exp2(s - m_i[:, None])
            l_tile += p  # no reduction across the tile here
        else:
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
        v_rows = block * stride_vb + offset * stride_vt + kv_head * stride_vh
        v = tl.load(v_ptr + v_rows[:, None] + offs_d[None, :], mask=kv_mask, other=0.0)
        if TENSOR_CORES:
            pv = tl.dot(p.to(v.dtype), v, input_precision=PRECISION)  # (BLOCK_G, BLOCK_D)
        else:
            pv = tl.sum(p[:, :, None] * v.to(tl.float32)[None, :, :], 1)
        if EXP2:
            acc = acc + pv
        else:
            acc = acc * alpha[:, None] + pv
            m_i = m_new
    if EXP2:
        l_i = tl.sum(l_tile, 1)
    return acc, m_i, l_i


@triton.jit
def _store_partial(
    part_out_ptr,
    part_lse_ptr,
    row,
    used,
    acc,
    m_i,
    l_i,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    EXP2: tl.constexpr,
):
    """A segment's normalised output and natural log-sum-exp, into rows `row` where `used`."""
    offs_d = tl.arange(0, BLOCK_D)
    l_safe = tl.where(l_i > 0, l_i, 1.0)  # nothing read leaves zeros
    if EXP2:
        lse = m_i * 0.6931471805599453 + tl.log(l_safe)  # base-2 max back to natural log: x ln 2
    else:
        lse = m_i + tl.log(l_safe)
    row = row.to(tl.int64)  # row x HEAD_DIM passes 2**31 with many sequences, heads, segments
    tl.store(
        part_out_ptr + row[:, None] * HEAD_DIM + offs_d[None, :],
        acc / l_safe[:, None],
        mask=used[:, None] & (offs_d < HEAD_DIM)[None, :],
    )
    tl.store(part_lse_ptr + row, lse, mask=used)
