"""The Triton puzzles' checkers (chapters 6 and 7): wrong kernels rejected with the hint that
names their mistake, the model answer and an independently written kernel accepted, the stub
told "not yet".

One kernel per puzzle with a VARIANT switch plays the learner: "right" (written apart from the
model answer), each typical mistake, and "stub" (the chapter's stub: its signature, no code).
`Variant` makes each a kernel of its own, in a file, as a learner's is. Every mistake is asserted everywhere: the
checker judges under Triton's CPU interpreter here, and on a GPU in a child process under it
(`paged.exercises.engine.kernel_child`), so even an unmasked load whose value never reaches the output
is seen on both.
"""

import functools
import importlib.util
import inspect
import re
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch

from paged.attention import backend  # sets TRITON_INTERPRET=1 before triton is imported

pytestmark = [
    pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed"),
    pytest.mark.usefixtures("english"),  # conftest.py
]

if backend() != "unavailable":
    import triton
    import triton.language as tl

    from paged import exercises as ex
    from paged.exercises import answers
    from paged.exercises.answers import basics as basic_answers
    from paged.exercises.answers import kernels as kernel_answers
    from paged.exercises.engine.kernel_launch import launch
    from paged.exercises.engine.triton_checks import SENTINEL, Watch

    # ---- chapter 6 ---------------------------------------------------------------------------
    @triton.jit
    def stamp_v(out_ptr, BLOCK: tl.constexpr, V: tl.constexpr):
        if V == "program_0":  # program 0 stamps every program's block, the others nothing
            if tl.program_id(0) == 0:
                for p in range(tl.num_programs(0)):
                    offs = p * BLOCK + tl.arange(0, BLOCK)
                    tl.store(out_ptr + offs, offs * 0 + p)
            return
        i = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        if V == "same_block":
            where = lanes
        elif V == "pid_plus":
            where = i + lanes
        elif V == "grid_stride":  # blocks num_programs apart, cut at the end of out
            where = i * tl.num_programs(0) + lanes
        else:
            where = lanes + BLOCK * i
        value = where if V == "offsets" else lanes * 0 + i
        if V == "first_only":
            tl.store(out_ptr + BLOCK * i, i)
        else:
            end = tl.num_programs(0) * BLOCK
            tl.store(out_ptr + where, value, mask=where < end if V == "grid_stride" else None)

    @triton.jit
    def copy_v(x_ptr, out_ptr, n, BLOCK: tl.constexpr, V: tl.constexpr):
        if V == "program_0":  # program 0 copies every block, masked, the others nothing
            if tl.program_id(0) == 0:
                for start in range(0, n, BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
            return
        start = 0 if V == "no_pid" else tl.program_id(0) * BLOCK
        offs = start + tl.arange(0, BLOCK)
        inside = offs <= n if V == "le" else offs < n
        if V == "unmasked_load":
            x = tl.load(x_ptr + offs)
        # an unmasked read through an atomic that leaves x as it was
        elif V == "add":
            x = tl.atomic_add(x_ptr + offs, 0.0)
        elif V == "max":
            x = tl.atomic_max(x_ptr + offs, float("-inf"))
        elif V == "min":  # (the interpreter refuses atomic_xchg on floats)
            x = tl.atomic_min(x_ptr + offs, float("inf"))
        elif V == "cas":  # compare with a value never there, so nothing is written
            x = tl.atomic_cas(x_ptr + offs, offs.to(tl.float32) * 0.0 + 12345.0, 0.0)
        else:
            x = tl.load(x_ptr + offs, mask=inside, other=0.0)
        if V == "unmasked_store":
            tl.store(out_ptr + offs, x)
        else:
            tl.store(out_ptr + offs, x, mask=inside)
        if V == "writes_x":  # scribbles on its input
            tl.store(x_ptr + offs, x * 0.0, mask=inside)

    @triton.jit
    def copy_2d_v(
        x_ptr,
        out_ptr,
        M,
        N,
        stride_x,
        stride_out,
        BM: tl.constexpr,
        BN: tl.constexpr,
        V: tl.constexpr,
    ):
        pm, pn = tl.program_id(0), tl.program_id(1)
        if V == "axes":
            pm, pn = pn, pm
        r = pm * BM + tl.arange(0, BM)
        c = pn * BN + tl.arange(0, BN)
        if V == "one_d":
            ok = r < M  # (BM,), lined up with the columns
        elif V == "rows_only":
            ok = (r < M)[:, None] & (c >= 0)[None, :]
        elif V == "cols_only":
            ok = (r >= 0)[:, None] & (c < N)[None, :]
        else:
            ok = (r[:, None] < M) & (c[None, :] < N)
        sx = N if V == "stride_n" else stride_x
        so = stride_x if V == "out_stride" else stride_out
        if V == "unmasked_load":
            tile = tl.load(x_ptr + r[:, None] * sx + c[None, :])
        else:
            tile = tl.load(x_ptr + r[:, None] * sx + c[None, :], mask=ok)
        tl.store(out_ptr + r[:, None] * so + c[None, :], tile, mask=ok)

    @triton.jit
    def softmax_v(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr, V: tl.constexpr):
        i = tl.program_id(0)
        j = tl.arange(0, BLOCK_N)
        if V == "pad_zero":
            x = tl.load(x_ptr + i * stride_x + j, mask=j < N)
        elif V == "unmasked_load":
            x = tl.where(j < N, tl.load(x_ptr + i * stride_x + j), float("-inf"))
        else:
            x = tl.load(x_ptr + i * stride_x + j, mask=j < N, other=float("-inf"))
        if V == "f64_no_max":  # float64 does not save it from values past 1000
            e = tl.exp(x.to(tl.float64))
            y = (e / tl.sum(e, axis=0)).to(tl.float32)
        else:
            if V == "abs_max":  # shifted by the largest |x|: all-negative rows underflow
                big = tl.max(tl.where(j < N, tl.abs(x), 0.0), axis=0)
                e = tl.exp(x - big)
            else:
                e = tl.exp(x) if V == "no_max" else tl.exp(x - tl.max(x, axis=0))
            y = e if V == "no_sum" else e / tl.sum(e, axis=0)
        if V == "tl_softmax":  # Triton's own softmax: the puzzle is to write it
            y = tl.softmax(x)
        if V == "unmasked_store":
            tl.store(out_ptr + i * N + j, y)
        else:
            tl.store(out_ptr + i * N + j, y, mask=j < N)

    @triton.jit
    def dot_v(
        a_ptr,
        b_ptr,
        out_ptr,
        M,
        N,
        K,
        stride_a,
        stride_b,
        stride_out,
        BM: tl.constexpr,
        BN: tl.constexpr,
        BK: tl.constexpr,
        V: tl.constexpr,
    ):
        m = tl.arange(0, BM)
        n = tl.arange(0, BN)
        sa = K if V == "widths" else stride_a
        if V == "fp16_acc":
            total = tl.zeros((BM, BN), tl.float16)
        else:
            total = tl.zeros((BM, BN), tl.float32)
        stop = BK if V == "no_loop" else K - K % BK if V == "whole_chunks" else K
        for start in range(0, stop, BK):
            kk = start + tl.arange(0, BK)
            a_ok = (kk[None, :] < K) & (
                (m[:, None] >= 0) if V == "unmasked_rows" else (m[:, None] < M)
            )
            b_ok = (n[None, :] < N) if V == "no_k_mask" else (kk[:, None] < K) & (n[None, :] < N)
            a = tl.load(a_ptr + m[:, None] * sa + kk[None, :], mask=a_ok, other=0.0)
            b = tl.load(b_ptr + kk[:, None] * stride_b + n[None, :], mask=b_ok, other=0.0)
            if V == "fp16_acc":
                total += tl.dot(a, b).to(tl.float16)
            elif V == "sums" or V == "thrown":  # outer products summed over K
                a, b = a.to(tl.float32), b.to(tl.float32)
                total += tl.sum(a[:, :, None] * b[None, :, :], 1)
                if V == "thrown":  # a tl.dot runs too, its result never stored
                    unused = tl.dot(a, b, input_precision="ieee")  # noqa: F841
            else:
                total = tl.dot(a, b, total)
        ok = (m[:, None] < M) & (n[None, :] < N)
        if V == "unmasked_store":
            ok = (m[:, None] < BM) & (n[None, :] < BN)
        tl.store(out_ptr + m[:, None] * stride_out + n[None, :], total, mask=ok)

    # ---- chapter 7 ---------------------------------------------------------------------------
    @triton.jit
    def gather_v(
        cache_ptr,
        block_table_ptr,
        out_ptr,
        seq_len,
        BLOCK_SIZE: tl.constexpr,
        ROW: tl.constexpr,
        TILE: tl.constexpr,
        V: tl.constexpr,
    ):
        pos = tl.program_id(0) * TILE + tl.arange(0, TILE)
        mask = pos < seq_len
        cols = tl.arange(0, ROW)
        index = pos if V == "table_by_position" else pos // BLOCK_SIZE
        index = pos % BLOCK_SIZE if V == "div_mod_swapped" else index
        if V == "unmasked_load":
            block = tl.load(block_table_ptr + index)
        else:
            block = tl.load(block_table_ptr + index, mask=mask, other=0)
        offset = pos if V == "no_modulo" else pos % BLOCK_SIZE
        offset = pos // BLOCK_SIZE if V == "div_mod_swapped" else offset
        slot = pos if V == "no_table" else block * BLOCK_SIZE + offset
        if V == "slot_not_times_row":
            addr = slot[:, None] + cols[None, :]
        elif V == "block_plus_offset":
            addr = (block + offset)[:, None] * ROW + cols[None, :]
        else:
            addr = slot[:, None] * ROW + cols[None, :]
        if V == "one_d":
            x = tl.load(cache_ptr + addr, mask=mask)
            tl.store(out_ptr + pos[:, None] * ROW + cols[None, :], x, mask=mask)
        elif V == "unmasked_load":
            x = tl.load(cache_ptr + addr)
            tl.store(out_ptr + pos[:, None] * ROW + cols[None, :], x, mask=mask[:, None])
        else:
            x = tl.load(cache_ptr + addr, mask=mask[:, None])
            store_mask = (pos >= 0) if V == "unmasked_store" else mask
            tl.store(out_ptr + pos[:, None] * ROW + cols[None, :], x, mask=store_mask[:, None])

    @triton.jit
    def scores_v(
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
        V: tl.constexpr,
    ):
        t = tl.program_id(0) * TILE + tl.arange(0, TILE)
        live = t < seq_len
        e = tl.arange(0, HEAD_DIM)
        index = t if V == "table_by_position" else t // BLOCK_SIZE
        b = tl.load(block_table_ptr + index, mask=live, other=0)
        slot = b * BLOCK_SIZE + t % BLOCK_SIZE
        if V == "head0":
            base = slot * KV_HEADS * HEAD_DIM
        elif V == "slot_heads":
            base = slot * HEAD_DIM + kv_head * HEAD_DIM
        else:
            base = (slot * KV_HEADS + kv_head) * HEAD_DIM
        if V == "unmasked_load":
            k = tl.load(k_ptr + base[:, None] + e[None, :])
        else:
            k = tl.load(k_ptr + base[:, None] + e[None, :], mask=live[:, None], other=0.0)
        s = tl.sum(k * tl.load(q_ptr + e)[None, :], axis=1)
        if V != "no_scale":
            s = s * scale
        if V != "no_neg_inf":
            s = tl.where(live, s, float("-inf"))
        tl.store(scores_ptr + t, s)

    @triton.jit
    def known_v(
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
        V: tl.constexpr,
    ):
        seq, head = tl.program_id(0), tl.program_id(1)
        kv_head = head % KV_HEADS if V == "head_mod" else head // GROUP
        d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
        seq_len = tl.load(seq_lens_ptr + seq)
        if V == "online":  # never reads m: a running maximum instead (right values)
            big = tl.full([], float("-inf"), tl.float32)
        else:
            big = tl.load(m_ptr + seq * KV_HEADS * GROUP + head)
        total = tl.zeros([], tl.float32)
        if V == "fp16_acc":
            out = tl.zeros([HEAD_DIM], tl.float16)
        else:
            out = tl.zeros([HEAD_DIM], tl.float32)
        stop = seq_len - seq_len % TILE if V == "whole_tiles" else seq_len
        for start in range(0, stop, TILE):
            t = start + tl.arange(0, TILE)
            live = t < seq_len
            b = tl.load(block_table_ptr + seq * max_blocks + t // BLOCK_SIZE, mask=live, other=0)
            at = ((b * BLOCK_SIZE + t % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
            k = tl.load(k_ptr + at[:, None] + d[None, :], mask=live[:, None], other=0.0)
            if V == "unmasked_v":
                v = tl.load(v_ptr + at[:, None] + d[None, :])
            else:
                v = tl.load(v_ptr + at[:, None] + d[None, :], mask=live[:, None], other=0.0)
            s = tl.sum(k * q[None, :], axis=1)
            if V != "no_scale":
                s = s * scale
            if V != "no_mask":
                s = tl.where(live, s, float("-inf"))
            if V == "first":  # m read, but the first tile's maximum kept
                if start == 0:
                    big = tl.max(s, 0)
            if V == "tile_max":  # m read, each tile's own maximum used instead
                big = tl.max(s, 0)
            if V == "online":
                new = tl.maximum(big, tl.max(s, 0))
                alpha = tl.exp(big - new)
                big, total, out = new, total * alpha, out * alpha
            w = tl.exp(s) if V == "no_subtract" else tl.exp(s - big)
            total = total + tl.sum(w, axis=0)
            out = out + tl.sum(w[:, None] * v, axis=0).to(out.dtype)
        if V != "no_divide":
            out = out / total
        tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, out.to(tl.float32))
        if V == "writes_m":
            tl.store(m_ptr + seq * KV_HEADS * GROUP + head, big + 1.0)

    @triton.jit
    def online_v(
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
        V: tl.constexpr,
    ):
        seq, head = tl.program_id(0), tl.program_id(1)
        kv_head = head % KV_HEADS if V == "head_mod" else head // GROUP
        d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
        seq_len = tl.load(seq_lens_ptr + seq)
        if V == "zero_max":
            m_i = tl.zeros([], tl.float32)  # the running max starts at 0, not -inf
        else:
            m_i = tl.full([], float("-inf"), tl.float32)
        l_i = tl.zeros([], tl.float32)
        if V == "fp16_acc":
            acc = tl.zeros([HEAD_DIM], tl.float16)
        elif V == "f64_no_max":
            acc, l_i = tl.zeros([HEAD_DIM], tl.float64), tl.zeros([], tl.float64)
        else:
            acc = tl.zeros([HEAD_DIM], tl.float32)
        stop = seq_len - seq_len % TILE if V == "whole_tiles" else seq_len
        for t0 in range(0, stop, TILE):
            pos = t0 + tl.arange(0, TILE)
            mask = pos < seq_len
            block = tl.load(
                block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask, other=0
            )
            rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
            k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            if V == "unmasked_v":
                v = tl.load(v_ptr + rows[:, None] + d[None, :])
            else:
                v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            s = tl.sum(q[None, :] * k, 1)
            if V != "no_scale":
                s = s * scale
            if V != "no_mask":
                s = tl.where(mask, s, float("-inf"))
            if V == "f64_no_max":
                p = tl.exp(s.to(tl.float64))
                l_i = l_i + tl.sum(p, 0)
                acc = acc + tl.sum(p[:, None] * v.to(tl.float64), 0)
            elif V == "first_tile":  # the first tile's maximum kept: no running max, no rescale
                if t0 == 0:
                    m_i = tl.max(s, 0)
                p = tl.exp(s - m_i)
                l_i = l_i + tl.sum(p, 0)
                acc = acc + tl.sum(p[:, None] * v, 0)
            elif V == "tile_max" or V == "no_max":
                p = tl.exp(s - tl.max(s, 0)) if V == "tile_max" else tl.exp(s)
                l_i = l_i + tl.sum(p, 0)
                acc = acc + tl.sum(p[:, None] * v, 0)
            else:
                m_new = tl.maximum(m_i, tl.max(s, 0))
                alpha = tl.exp(m_i - m_new)
                p = tl.exp(s - m_i) if V == "old_max" else tl.exp(s - m_new)
                keep_l = V == "no_rescale" or V == "acc_only"
                keep_acc = V == "no_rescale" or V == "l_only"
                l_i = (l_i if keep_l else l_i * alpha) + tl.sum(p, 0)
                acc = (acc if keep_acc else acc * alpha) + tl.sum(p[:, None] * v, 0).to(acc.dtype)
                m_i = m_new
        if l_i > 0:
            tl.store(
                out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, (acc / l_i).to(tl.float32)
            )
        if V == "writes_q":
            tl.store(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, q * 2.0)

    @triton.jit
    def gqa_v(
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
        V: tl.constexpr,
    ):
        s_id, kvh = tl.program_id(0), tl.program_id(1)
        g = tl.arange(0, BLOCK_G)
        h = g * KV_HEADS + kvh if V == "head_mod" else kvh * GROUP + g
        real = g < GROUP
        d = tl.arange(0, HEAD_DIM)
        q_at = q_ptr + (s_id * KV_HEADS * GROUP + h)[:, None] * HEAD_DIM + d[None, :]
        if V == "unmasked_q":
            q = tl.load(q_at)
        elif V == "first_only":  # the mask lets one row of the group through
            q = tl.load(q_at, mask=(g < 1)[:, None], other=0.0)
        else:
            q = tl.load(q_at, mask=real[:, None], other=0.0)
        n = tl.load(seq_lens_ptr + s_id)
        t = tl.arange(0, TILE)
        live = t < n
        b = tl.load(block_table_ptr + s_id * max_blocks + t // BLOCK_SIZE, mask=live, other=0)
        k_at = ((b * BLOCK_SIZE + t % BLOCK_SIZE) * KV_HEADS + kvh) * HEAD_DIM
        k = tl.load(k_ptr + k_at[:, None] + d[None, :], mask=live[:, None], other=0.0)
        if V == "sum_loop" or V == "thrown":  # right values, but no tl.dot (or one unused)
            s = tl.sum(q[:, None, :] * k[None, :, :], 2)
            if V == "thrown":
                unused = tl.dot(q, tl.trans(k), input_precision="ieee")  # noqa: F841
        elif V == "fp16":
            s = tl.dot(q.to(tl.float16), tl.trans(k.to(tl.float16))).to(tl.float32)
        elif V == "tf32":  # Triton's default precision for float32 operands
            s = tl.dot(q, tl.trans(k))
        else:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        if V != "no_scale":
            s = s * scale
        if V != "no_neg_inf":
            s = tl.where(live[None, :], s, float("-inf"))
        rows_ok = (g >= 0) if V == "all_rows" else real
        dest = scores_ptr + (s_id * KV_HEADS * GROUP + h)[:, None] * TILE + t[None, :]
        tl.store(dest, s, mask=rows_ok[:, None])

    @triton.jit
    def merge_v(
        part_out_ptr,
        part_lse_ptr,
        out_ptr,
        num_parts,
        HEAD_DIM: tl.constexpr,
        BLOCK_P: tl.constexpr,
        V: tl.constexpr,
    ):
        r = tl.program_id(0)
        p = tl.arange(0, BLOCK_P)
        d = tl.arange(0, HEAD_DIM)
        ok = p < num_parts
        if V == "pad_zero":
            lse = tl.load(part_lse_ptr + r * num_parts + p, mask=ok)
        elif V == "unmasked_lse":
            lse = tl.where(ok, tl.load(part_lse_ptr + r * num_parts + p), float("-inf"))
        else:
            lse = tl.load(part_lse_ptr + r * num_parts + p, mask=ok, other=float("-inf"))
        if V == "no_max":
            w = tl.exp(lse)
        elif V == "f64_no_max":
            w = tl.exp(lse.to(tl.float64))
        elif V == "first_lse":  # partition 0's lse, not the largest
            w = tl.exp(lse - tl.sum(tl.where(p == 0, lse, 0.0), 0))
        elif V == "mean_lse":
            w = tl.exp(
                lse
                - tl.sum(tl.where(ok & (lse > float("-inf")), lse, 0.0), 0)
                / tl.sum(tl.where(ok & (lse > float("-inf")), 1.0, 0.0), 0)
            )
        elif V == "mean":
            w = tl.where(ok, 1.0, 0.0)
        else:
            w = tl.exp(lse - tl.max(lse, 0))
        if V != "no_norm":
            w = w / tl.sum(w, 0)
        at = part_out_ptr + (r * num_parts + p)[:, None] * HEAD_DIM + d[None, :]
        if V == "unmasked_out":
            o = tl.where(ok[:, None], tl.load(at), 0.0)
        else:
            o = tl.load(at, mask=ok[:, None], other=0.0)
        tl.store(out_ptr + r * HEAD_DIM + d, tl.sum(w[:, None] * o, 0).to(tl.float32))
        if V == "writes_lse":
            tl.store(part_lse_ptr + r * num_parts + p, w.to(tl.float32), mask=ok)

    @triton.jit
    def one_d_mask(out_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
        r = tl.arange(0, BM)
        c = tl.arange(0, BN)
        tl.store(out_ptr + r[:, None] * BN + c[None, :], 1.0, mask=r < M)


@functools.cache
def Variant(kernel, variant: str):
    """A VARIANT of a test kernel as a kernel of its own, as a learner hands one in: its source
    in a file, with V a global tl.constexpr instead of a parameter (on a GPU the checker sends
    such a kernel to the interpreter in a child process, source and globals). "stub" is the
    chapter's stub as it is given: the signature and a docstring, no code."""
    src = re.sub(r",\s*V: tl\.constexpr", "", textwrap.dedent(inspect.getsource(kernel.fn)))
    if variant == "stub":
        src = src[: src.index("):\n") + 3] + '    """Not written yet."""\n'
    return typed(f"V = tl.constexpr({variant!r})\n\n\n{src}", f"{kernel.fn.__name__}_{variant}")[
        kernel.fn.__name__
    ]


def typed(source: str, stem: str) -> dict:
    """The names `source` defines, run as a chapter's cell runs it (triton and tl imported), from
    a file: a GPU compiles a @triton.jit function only when it can read its source."""
    path = VARIANTS / f"{stem}.py"
    path.write_text(f"import triton\nimport triton.language as tl\n\n{source}")
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(stem, path))
    module.__spec__.loader.exec_module(module)
    return vars(module)


VARIANTS = Path(tempfile.mkdtemp(prefix="paged-variants-"))


def hint_text(name: str) -> str:
    """A hint by its catalogue and key, in the words a verdict prints (up to its first
    placeholder): "HINTS.scale" (`slips.kernels_paged`), "COPY_2D.one_d" (`slips.kernels_onramp`),
    "KERNEL_HINTS.no_table" (`slips.address`), "KERNEL_SYMPTOMS.precision" or a verdict's name,
    "SHARE" (`verdicts`), "ERROR_HINTS.5" (`kernel_launch`, by position). Tests name a hint so,
    never by its words, so that a hint can be reworded without touching a test."""
    from paged.exercises.engine import kernel_launch, verdicts
    from paged.exercises.slips import address, kernels_onramp, kernels_paged

    catalogue, _, key = name.partition(".")
    modules = (kernels_paged, kernels_onramp, address, verdicts, kernel_launch)
    found = next(getattr(m, catalogue) for m in modules if hasattr(m, catalogue))
    if catalogue == "ERROR_HINTS":
        found = found[int(key)][1]
    elif key:
        found = found[key]
    return str(found).split("{")[0]


# Triton 3.5 (Colab's) refuses some shape mistakes at launch (a 1-D mask on a square tile) where
# 3.9 broadcasts them: rejected either way, with the hint for either.
SHAPES = "ERROR_HINTS.3"
# puzzle (check_<puzzle>): (kernel with variants, {variant: the hint due, by catalogue and key,
# or a tuple of the hints either Triton gives})
PUZZLES = {
    "stamp_kernel": (
        "stamp_v",
        {
            "same_block": "STAMP.same_block",
            "offsets": "STAMP.offsets",
            "pid_plus": "STAMP.cover",
            "first_only": "STAMP.gaps",
            "grid_stride": "SHARE",
        },
    ),
    "copy_kernel": (
        "copy_v",
        {
            "le": "COPY.off_by_one",
            "unmasked_load": "UNMASKED_LOAD",
            "unmasked_store": "COPY.store",
            "no_pid": "COPY.start",
            "writes_x": "INPUT_HINT",
        },
    ),
    "copy_2d_kernel": (
        "copy_2d_v",
        {
            "one_d": ("COPY_2D.one_d", SHAPES),
            "rows_only": "COPY_2D.cols",
            "cols_only": "COPY_2D.rows",
            "stride_n": "COPY_2D.stride_x",
            "out_stride": "COPY_2D.stride_out",
            "axes": "COPY_2D.axes",
            "unmasked_load": "UNMASKED_LOAD",
        },
    ),
    "row_softmax_kernel": (
        "softmax_v",
        {
            "pad_zero": "ROW_SOFTMAX.pad_zero",
            "no_max": "ROW_SOFTMAX.overflow",
            "no_sum": "ROW_SOFTMAX.no_sum",
            "f64_no_max": "ROW_SOFTMAX.overflow",
            "abs_max": "ROW_SOFTMAX.underflow",
            "tl_softmax": "ERROR_HINTS.5",
            "unmasked_load": "UNMASKED_LOAD",
            "unmasked_store": "ROW_SOFTMAX.store",
        },
    ),
    "dot_kernel": (
        "dot_v",
        {
            "no_loop": "DOT.loop",
            "whole_chunks": "DOT.partial",
            "no_k_mask": "DOT.nan",
            "widths": "DOT.stride",
            "unmasked_store": "DOT.store",
            "unmasked_rows": "UNMASKED_LOAD",
            "fp16_acc": "DOT.rounded",
        },
    ),
    "gather_kernel": (
        "gather_v",
        {
            "table_by_position": "KERNEL_HINTS.table_by_position",
            "no_modulo": "KERNEL_HINTS.no_modulo",
            "no_table": "KERNEL_HINTS.no_table",
            "slot_not_times_row": "KERNEL_HINTS.slot_not_times_row",
            "block_plus_offset": "KERNEL_HINTS.block_plus_offset",
            "div_mod_swapped": "KERNEL_HINTS.div_mod_swapped",
            "unmasked_store": "HINTS.store",
            "one_d": ("HINTS.one_d", SHAPES),
            "unmasked_load": "UNMASKED_LOAD",
        },
    ),
    "tile_scores_kernel": (
        "scores_v",
        {
            "no_neg_inf": "HINTS.neg_inf",
            "no_scale": "HINTS.scale",
            "head0": "HINTS.kv_head",
            "slot_heads": "HINTS.slot_heads",
            "table_by_position": "KERNEL_HINTS.table_by_position",
            "unmasked_load": "UNMASKED_LOAD",
        },
    ),
    "known_max_kernel": (
        "known_v",
        {
            "no_divide": "KNOWN.no_divide",
            "no_subtract": "KNOWN.overflow",
            "no_mask": "KNOWN.no_mask",
            "no_scale": "SOFTMAX.scale",
            "fp16_acc": "KERNEL_SYMPTOMS.precision",
            "writes_m": "INPUT_HINT",
            "head_mod": "HINTS.head_mod",
            "unmasked_v": "UNMASKED_LOAD",
            "tile_max": "KNOWN.tile_max",
            "whole_tiles": "HINTS.whole_tiles",
        },
    ),
    "online_softmax_kernel": (
        "online_v",
        {
            "no_rescale": "SOFTMAX.no_rescale",
            "tile_max": "SOFTMAX.tile_max",
            "l_only": "SOFTMAX.l_only",
            "acc_only": "SOFTMAX.acc_only",
            "no_mask": "SOFTMAX.no_mask",
            "old_max": "SOFTMAX.nan",
            "no_max": "SOFTMAX.overflow",
            "f64_no_max": "SOFTMAX.overflow",
            "zero_max": "SOFTMAX.negative",
            "no_scale": "SOFTMAX.scale",
            "fp16_acc": "KERNEL_SYMPTOMS.precision",
            "writes_q": "INPUT_HINT",
            "head_mod": "HINTS.head_mod",
            "unmasked_v": "UNMASKED_LOAD",
            "whole_tiles": "HINTS.whole_tiles",
        },
    ),
    "gqa_scores_kernel": (
        "gqa_v",
        {
            "head_mod": "HINTS.head_mod",
            "all_rows": "HINTS.group_rows",
            "first_only": "GQA.first_only",
            "no_neg_inf": "HINTS.neg_inf",
            "no_scale": "HINTS.scale",
            "unmasked_q": "UNMASKED_LOAD",
            "sum_loop": "NO_DOT",
            "fp16": "GQA.precision",
            "tf32": "TF32_DOT",
        },
    ),
    "merge_kernel": (
        "merge_v",
        {
            "no_max": "MERGE.overflow",
            "f64_no_max": "MERGE.overflow",
            "first_lse": "MERGE.overflow",
            "mean_lse": "MERGE.overflow",
            "writes_lse": "INPUT_HINT",
            "pad_zero": "MERGE.pad_zero",
            "no_norm": "MERGE.no_norm",
            "mean": "MERGE.mean",
            "unmasked_lse": "UNMASKED_LOAD",
            "unmasked_out": "UNMASKED_LOAD",
        },
    ),
}
MISTAKES = [(p, v, hint) for p, (_, wrong) in PUZZLES.items() for v, hint in wrong.items()]


def test_every_puzzle_checker_and_answer_is_tested():
    exported = {n.removeprefix("check_") for n in [*ex.basics.__all__, *ex.kernels.__all__]}
    assert exported == set(PUZZLES)
    assert set(basic_answers.__all__) | set(kernel_answers.__all__) == set(PUZZLES)
    assert all(len(wrong) >= 3 for _, wrong in PUZZLES.values())
    assert sum(h == "UNMASKED_LOAD" for _, _, h in MISTAKES) >= 8  # the loads, checked
    assert all(isinstance(h, str) or SHAPES in h for _, _, h in MISTAKES)


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_model_answer_and_an_independent_kernel_are_correct(puzzle, capsys):
    check = getattr(ex, f"check_{puzzle}")
    assert check(answers.find(puzzle), seed=7) is True  # every observation, on the interpreter
    assert capsys.readouterr().out.startswith(f"{puzzle}: correct (")
    assert check(Variant(globals()[PUZZLES[puzzle][0]], "right")) is True


def test_no_right_answer_looks_like_an_output_never_written():
    # seed 277 draws M = N = 1, K = 15 in quarters, whose one sum is 0.5: the value outputs once
    # started as, so the model answer was told "your kernel wrote nothing"
    assert ex.check_dot_kernel(answers.find("dot_kernel"), seed=277) is True
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        assert torch.tensor(SENTINEL, dtype=dtype).item() == SENTINEL  # exact where compared
    assert SENTINEL < 0 and (SENTINEL * 16) % 1  # never a probability, nor a sum of quarters


@pytest.mark.parametrize(
    "puzzle, variant, hint", MISTAKES, ids=[f"{p}-{v}" for p, v, _ in MISTAKES]
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's exp overflow, on purpose
def test_typical_mistake_rejected_with_the_hint_that_names_it(
    puzzle, variant, hint, capsys, monkeypatch
):
    record, astray = Watch._record, []

    def recorded(watch, kind, buf, elems, pid):
        astray.extend(elems if kind == "store" and buf is None else [])
        return record(watch, kind, buf, elems, pid)

    monkeypatch.setattr(Watch, "_record", recorded)
    check = getattr(ex, f"check_{puzzle}")
    assert check(Variant(globals()[PUZZLES[puzzle][0]], variant)) is False
    out = capsys.readouterr().out
    # A store past every watched buffer lands, unmasked, wherever memory lies next: in an input
    # (a verdict of "wrote into q") in one run, nowhere in another. Each case's output guard
    # must hold what its mistakes overshoot, so that the verdict does not depend on the layout.
    assert not astray, f"{variant} stored past every buffer at {astray[:3]}"
    # rejected, or refused at launch (Triton 3.5: `SHAPES`), with the hint due
    rejected = (f"{puzzle}: not quite (", f"{puzzle}: your kernel did not run")
    due = (hint,) if isinstance(hint, str) else hint
    assert out.startswith(rejected) and any(f"hint: {hint_text(h)}" in out for h in due), out


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_the_stub_and_a_non_kernel_are_not_yet(puzzle, capsys):
    check = getattr(ex, f"check_{puzzle}")
    assert check(Variant(globals()[PUZZLES[puzzle][0]], "stub")) is False  # writes nothing
    assert check(None) is False
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{puzzle}: not yet: your kernel wrote nothing. Write its body and run again.",
        f"{puzzle}: not yet: pass your @triton.jit kernel (got NoneType).",
    ]


def test_the_cases_hold_the_block_boundaries_and_the_extremes():
    from paged.exercises import basics_compute, kernels, kernels_attention, kernels_merge
    from paged.exercises.kernels_scores import TILE_SCORES_SPEC

    for spec in (kernels.GATHER_SPEC, TILE_SCORES_SPEC):
        sizes = [(bs, tile, n) for bs, tile, n, *_ in spec.fixed]
        assert {(tile > bs) - (tile < bs) for bs, tile, _ in sizes} == {-1, 0, 1}
        assert any(bs == 1 for bs, _, _ in sizes) and any(
            n % bs == 0 and n > bs for bs, _, n in sizes
        )
    softmax = kernels_attention.ONLINE_SOFTMAX_SPEC.fixed
    assert {(tile > bs) - (tile < bs) for bs, _, _, _, tile, *_ in softmax} == {-1, 0, 1}
    lens = [(bs, n) for bs, ls, *_ in softmax for n in ls]
    assert any(n == bs for bs, n in lens) and any(n == bs + 1 for bs, n in lens)
    assert max(c[5] for c in softmax) > 30 and any(c[6] for c in softmax)  # hundreds, ±1000
    known = kernels_attention.KNOWN_MAX_SPEC.fixed
    assert max(c[5] for c in known) > 30 and any(c[6] for c in known)  # hundreds, ±1000
    assert any(n % tile for _, ls, _, _, tile, *_ in known for n in ls)  # a last tile padded
    assert max(abs(c[3]) for c in basics_compute.ROW_SOFTMAX_SPEC.fixed) >= 1000
    merge = kernels_merge.MERGE_SPEC.fixed
    assert max(c[4] for c in merge) >= 1000 and min(c[4] for c in merge) <= -1000
    assert any(c[5] for c in merge) and max(kernels_merge.SPREAD) - min(kernels_merge.SPREAD) >= 100


def test_a_missing_scale_is_named_by_its_symptom_not_the_update_rule(capsys):
    assert ex.check_online_softmax_kernel(Variant(online_v, "no_scale")) is False
    out = capsys.readouterr().out
    assert "scale = 1" in out and "l_i * alpha" not in out and "m_new" not in out, out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_failing_random_case_prints_its_seed_and_seed_draws_it_again(capsys):
    import dataclasses

    from paged.exercises import basics
    from paged.exercises.engine.kernel_runner import check_kernel

    random_only = dataclasses.replace(basics.COPY_SPEC, fixed=())  # every case is drawn
    wrong = Variant(copy_v, "le")
    # A draw of BLOCK 1 only cannot show this mistake (no lane lies past n): take the first seed
    # whose cases do, so the test never depends on the luck of a fresh seed.
    given = next(s for s in range(50) if check_kernel(random_only, wrong, seed=s) is False)
    capsys.readouterr()
    assert check_kernel(random_only, wrong, seed=given) is False
    first = capsys.readouterr().out
    seed = int(first.split("seed=")[1].split(")")[0])
    assert seed == given
    assert check_kernel(random_only, wrong, seed=seed) is False
    assert capsys.readouterr().out == first
    assert ex.check_copy_kernel(Variant(copy_v, "right"), seed=seed) is True
    assert ex.check_copy_kernel(Variant(copy_v, "le"), seed=seed) is False
    assert "seed=" not in capsys.readouterr().out.split("correct")[1]  # a fixed case failed


def test_the_fallback_names_a_symptom():
    from paged.exercises.engine.verdicts import symptom

    want = torch.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
    assert "constant factor" in str(symptom(want * torch.tensor([[2.0], [1.0]]), want, 1e-5))
    assert "NaN or inf" in str(symptom(want.log() * 0 / 0, want, 1e-5))
    assert "float16" in str(symptom(want.half().float() + 1e-4, want, 1e-6))
    region = torch.tensor([[True] * 3, [False] * 3])
    assert "only here" in str(symptom(want + region * 0.5, want, 1e-5, {"here": region}))
    assert "every wrong element of the output is 0" in str(symptom(want * region, want, 1e-5))


def test_a_one_d_mask_that_does_not_broadcast_is_named(capsys):
    out = torch.zeros(8, device="cuda" if backend() == "cuda" else "cpu")
    assert launch("tile", Watch(), one_d_mask[(1,)], out, 2, BM=2, BN=4) is False
    printed = capsys.readouterr().out
    assert "tile: your kernel did not run:" in printed and "needs [:, None]" in printed


def test_a_gpu_compile_error_is_hinted_by_its_own_words_not_the_source_it_quotes(capsys):
    import ast

    from triton.compiler.errors import CompilationError

    src = inspect.getsource(one_d_mask.fn)  # its signature says tl.constexpr: not the error
    node = ast.parse("x").body[0]
    node.lineno, node.col_offset = 4, 4

    def compile_fails():
        raise CompilationError(src, node, "ValueError('Cannot broadcast, rank mismatch')")

    assert launch("tile", Watch(), compile_fails) is False
    printed = capsys.readouterr().out
    assert printed.startswith("tile: your kernel did not run: CompilationError: at 4:4: Value")
    assert "needs [:, None]" in printed and "def one_d_mask" not in printed


def test_an_interpreter_that_numpy_broke_is_named_as_not_the_learners_fault(capsys):
    def interpreter_fails():  # what Triton 3.6.0's interpreter raised beside NumPy 2.5.2
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars")

    assert launch("copy_kernel", Watch(), interpreter_fails) is False
    assert "not your kernel's fault" in capsys.readouterr().out


def test_a_kernel_that_does_not_compile_is_reported_with_a_hint(capsys):
    @triton.jit
    def arange_of_n(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, n)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))

    assert ex.check_copy_kernel(arange_of_n) is False
    out = capsys.readouterr().out
    assert out.startswith("copy_kernel: your kernel did not run: ") and "tl.constexpr" in out


def test_hints_speak_korean_in_the_korean_edition(monkeypatch, capsys):
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert ex.check_copy_kernel(Variant(copy_v, "le")) is False
    assert ex.check_copy_kernel(Variant(copy_v, "stub")) is False
    out = capsys.readouterr().out
    assert (
        "아직 아닙니다" in out
        and "힌트: 마스크가 레인 하나를 더 통과시켰습니다" in out
        and "아직입니다" in out
    )


@pytest.mark.parametrize("puzzle", ["copy_kernel", "merge_kernel"])
def test_solution_prints_the_kernel_as_typed_into_a_chapter(puzzle, capsys):
    answers.solution(puzzle)
    source = capsys.readouterr().out
    assert source.startswith("@triton.jit\ndef " + puzzle + "(")
    assert getattr(ex, f"check_{puzzle}")(typed(source, f"typed_{puzzle}")[puzzle]) is True
