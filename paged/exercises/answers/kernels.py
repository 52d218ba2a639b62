"""Model answers for the kernel chapter's Triton puzzles (chapter 7), one kernel per puzzle."""

from __future__ import annotations

import paged.attention  # noqa: F401  (sets TRITON_INTERPRET=1 without a GPU, before triton)

# isort: split
import triton
import triton.language as tl

__all__ = [
    "gather_kernel",
    "gqa_scores_kernel",
    "known_max_kernel",
    "merge_kernel",
    "online_softmax_kernel",
    "tile_scores_kernel",
]


@triton.jit
def gather_kernel(
    cache_ptr,
    block_table_ptr,
    out_ptr,
    seq_len,
    BLOCK_SIZE: tl.constexpr,
    ROW: tl.constexpr,
    TILE: tl.constexpr,
):
    pos = tl.program_id(0) * TILE + tl.arange(0, TILE)  # this program's token positions
    mask = pos < seq_len
    block = tl.load(block_table_ptr + pos // BLOCK_SIZE, mask=mask, other=0)  # physical block
    slot = block * BLOCK_SIZE + pos % BLOCK_SIZE  # chapter 3's slot
    cols = tl.arange(0, ROW)
    x = tl.load(cache_ptr + slot[:, None] * ROW + cols[None, :], mask=mask[:, None])
    tl.store(out_ptr + pos[:, None] * ROW + cols[None, :], x, mask=mask[:, None])


@triton.jit
def tile_scores_kernel(
    q_ptr,
    k_ptr,
    block_table_ptr,
    scores_ptr,
    seq_len,
    kv_head,
    scale,
    BLOCK_SIZE: tl.constexpr,
    KV_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    TILE: tl.constexpr,
):
    pos = tl.program_id(0) * TILE + tl.arange(0, TILE)
    mask = pos < seq_len
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + d)  # (HEAD_DIM,)
    block = tl.load(block_table_ptr + pos // BLOCK_SIZE, mask=mask, other=0)
    rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
    k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
    s = tl.sum(q[None, :] * k, 1) * scale  # (TILE,)
    tl.store(scores_ptr + pos, tl.where(mask, s, float("-inf")))


@triton.jit
def known_max_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    block_table_ptr,
    seq_lens_ptr,
    m_ptr,
    out_ptr,
    scale,
    max_blocks,
    BLOCK_SIZE: tl.constexpr,
    KV_HEADS: tl.constexpr,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    TILE: tl.constexpr,
):
    seq, head = tl.program_id(0), tl.program_id(1)
    kv_head = head // GROUP
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
    seq_len = tl.load(seq_lens_ptr + seq)
    m = tl.load(m_ptr + seq * KV_HEADS * GROUP + head)  # this head's largest score
    l_i = tl.zeros([], tl.float32)  # sum of exp(s - m)
    acc = tl.zeros([HEAD_DIM], tl.float32)  # sum of exp(s - m) * v
    for t0 in range(0, seq_len, TILE):
        pos = t0 + tl.arange(0, TILE)
        mask = pos < seq_len
        block = tl.load(block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask, other=0)
        rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        s = tl.where(mask, tl.sum(q[None, :] * k, 1) * scale, float("-inf"))
        p = tl.exp(s - m)  # at most exp(0) = 1
        l_i += tl.sum(p, 0)
        acc += tl.sum(p[:, None] * v, 0)
    tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)


@triton.jit
def online_softmax_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    block_table_ptr,
    seq_lens_ptr,
    out_ptr,
    scale,
    max_blocks,
    BLOCK_SIZE: tl.constexpr,
    KV_HEADS: tl.constexpr,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    TILE: tl.constexpr,
):
    seq, head = tl.program_id(0), tl.program_id(1)
    kv_head = head // GROUP
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
    seq_len = tl.load(seq_lens_ptr + seq)
    m_i = tl.full([], float("-inf"), tl.float32)  # running max of the scores
    l_i = tl.zeros([], tl.float32)  # running sum of exp(s - m_i)
    acc = tl.zeros([HEAD_DIM], tl.float32)  # running sum of exp(s - m_i) * v
    for t0 in range(0, seq_len, TILE):
        pos = t0 + tl.arange(0, TILE)
        mask = pos < seq_len
        block = tl.load(block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask, other=0)
        rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        s = tl.where(mask, tl.sum(q[None, :] * k, 1) * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 0))
        alpha = tl.exp(m_i - m_new)  # old sums: units of exp(-m_i) -> exp(-m_new)
        p = tl.exp(s - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        m_i = m_new
    tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)


@triton.jit
def gqa_scores_kernel(
    q_ptr,
    k_ptr,
    block_table_ptr,
    seq_lens_ptr,
    scores_ptr,
    scale,
    max_blocks,
    BLOCK_SIZE: tl.constexpr,
    KV_HEADS: tl.constexpr,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    TILE: tl.constexpr,
    BLOCK_G: tl.constexpr,
):
    seq, kv_head = tl.program_id(0), tl.program_id(1)
    g = tl.arange(0, BLOCK_G)  # the group's query heads, padded to BLOCK_G rows
    heads = kv_head * GROUP + g  # query heads h with h // GROUP == kv_head
    d = tl.arange(0, HEAD_DIM)
    q_rows = (seq * KV_HEADS * GROUP + heads) * HEAD_DIM
    q = tl.load(q_ptr + q_rows[:, None] + d[None, :], mask=(g < GROUP)[:, None], other=0.0)
    seq_len = tl.load(seq_lens_ptr + seq)
    pos = tl.arange(0, TILE)  # the whole sequence: seq_len <= TILE
    mask = pos < seq_len
    block = tl.load(block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask, other=0)
    rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
    k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale  # (BLOCK_G, TILE)
    s = tl.where(mask[None, :], s, float("-inf"))
    out_rows = (seq * KV_HEADS * GROUP + heads) * TILE
    tl.store(scores_ptr + out_rows[:, None] + pos[None, :], s, mask=(g < GROUP)[:, None])


@triton.jit
def merge_kernel(
    part_out_ptr, part_lse_ptr, out_ptr, num_parts, HEAD_DIM: tl.constexpr, BLOCK_P: tl.constexpr
):
    row = tl.program_id(0)  # one (sequence, query head)
    p = tl.arange(0, BLOCK_P)
    d = tl.arange(0, HEAD_DIM)
    lse = tl.load(part_lse_ptr + row * num_parts + p, mask=p < num_parts, other=float("-inf"))
    w = tl.exp(lse - tl.max(lse, 0))  # the largest weight is 1: no overflow
    w = w / tl.sum(w, 0)
    o = tl.load(
        part_out_ptr + (row * num_parts + p)[:, None] * HEAD_DIM + d[None, :],
        mask=(p < num_parts)[:, None],
        other=0.0,
    )  # (BLOCK_P, HEAD_DIM)
    tl.store(out_ptr + row * HEAD_DIM + d, tl.sum(w[:, None] * o, 0))
