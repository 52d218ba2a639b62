"""The course's own kernels for chapter 7's steps 4, 5 and 6: what puzzles 3b, 4 and 5b build.

The chapter runs them right after each puzzle, so they live here and not in the notebook, where
every viewer would show them under the puzzle: `solution("tiled_kernel")` prints one, after you
tried. `tiled_kernel` is step 4's tile loop with an online softmax and a `RESCALE` switch (turn
it off to see what the rescale is for); `attend_tiles` is that loop for a group of query heads
in one `tl.dot` (step 5's `gqa_kernel` calls it; step 6's split kernel calls it on part of a
sequence); `merge_partials_kernel` merges a split sequence's partitions by their log-sum-exps.
"""

from __future__ import annotations

import paged.attention  # noqa: F401  (sets TRITON_INTERPRET=1 without a GPU, before triton)

# isort: split
import triton
import triton.language as tl

__all__ = ["attend_tiles", "gqa_kernel", "merge_partials_kernel", "tiled_kernel"]


@triton.jit
def tiled_kernel(
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
    RESCALE: tl.constexpr = True,
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
        if RESCALE:
            alpha = tl.exp(m_i - m_new)  # old sums: units of exp(-m_i) -> exp(-m_new)
        else:
            alpha = 1.0
        p = tl.exp(s - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        m_i = m_new
    if l_i > 0:  # no token seen, nothing written
        tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)


@triton.jit
def attend_tiles(
    q,
    k_ptr,
    v_ptr,
    table_ptr,
    kv_head,
    start,
    end,
    scale,
    BLOCK_SIZE: tl.constexpr,
    KV_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    TILE: tl.constexpr,
    BLOCK_G: tl.constexpr,
):
    # Step 4's loop for a group of query heads q (BLOCK_G, HEAD_DIM), tokens start .. end - 1.
    d = tl.arange(0, HEAD_DIM)
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, HEAD_DIM], tl.float32)
    for t0 in range(start, end, TILE):
        pos = t0 + tl.arange(0, TILE)
        mask = pos < end
        block = tl.load(table_ptr + pos // BLOCK_SIZE, mask=mask, other=0)
        rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)  # once...
        v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale  # ...for the whole group
        s = tl.where(mask[None, :], s, float("-inf"))  # (BLOCK_G, TILE)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    return m_i, l_i, acc


@triton.jit
def gqa_kernel(
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
    BLOCK_G: tl.constexpr,
):
    seq, kv_head = tl.program_id(0), tl.program_id(1)  # one program per KV head
    g = tl.arange(0, BLOCK_G)  # the group's query heads, padded to BLOCK_G rows
    d = tl.arange(0, HEAD_DIM)
    rows = (seq * KV_HEADS * GROUP + kv_head * GROUP + g) * HEAD_DIM
    q = tl.load(q_ptr + rows[:, None] + d[None, :], mask=(g < GROUP)[:, None], other=0.0)
    seq_len = tl.load(seq_lens_ptr + seq)
    m_i, l_i, acc = attend_tiles(
        q,
        k_ptr,
        v_ptr,
        block_table_ptr + seq * max_blocks,
        kv_head,
        0,
        seq_len,
        scale,
        BLOCK_SIZE,
        KV_HEADS,
        HEAD_DIM,
        TILE,
        BLOCK_G,
    )
    tl.store(out_ptr + rows[:, None] + d[None, :], acc / l_i[:, None], mask=(g < GROUP)[:, None])


@triton.jit
def merge_partials_kernel(
    part_out_ptr, part_lse_ptr, out_ptr, num_parts, HEAD_DIM: tl.constexpr, BLOCK_P: tl.constexpr
):
    row = tl.program_id(0)  # one (sequence, query head)
    p = tl.arange(0, BLOCK_P)
    d = tl.arange(0, HEAD_DIM)
    lse = tl.load(part_lse_ptr + row * num_parts + p, mask=p < num_parts, other=float("-inf"))
    w = tl.exp(lse - tl.max(lse, 0))  # partition 0 is never empty: the max is finite
    w = w / tl.sum(w, 0)
    o = tl.load(
        part_out_ptr + (row * num_parts + p)[:, None] * HEAD_DIM + d[None, :],
        mask=(p < num_parts)[:, None],
        other=0.0,
    )  # (BLOCK_P, HEAD_DIM)
    tl.store(out_ptr + row * HEAD_DIM + d, tl.sum(w[:, None] * o, 0))
