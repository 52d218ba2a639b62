"""Attention in the learner's engine: the model reads its paged cache through the learner's pieces.

Three ways to decode, one prefill (`your_attention(referee, device, mode)`):
- prefill, always: the course's causal attention over K and V read by the learner's `gather`
  (chapter 5), each call compared with `gather_kv` (a copy: equal to the bit);
- mode "gather" (the default on a CPU): decode reads every sequence's K and V with `gather`
  and computes what the course's batched decode computes from them (the same products on the same
  operands, so the same tokens to the bit);
- mode "decode_one_head": each query head of each sequence by the learner's `decode_one_head`
  (chapter 5), compared with the course's decode within that exercise's tolerance;
- mode "kernel" (the default on a GPU): the learner's `online_softmax_kernel` (chapter 7) decodes
  the whole batch, one program per (sequence, query head), on the GPU or under Triton's CPU
  interpreter, compared with the course's decode to 1e-3.
A piece the workspace does not hold is the course's: the course's decode serves.
"""

from __future__ import annotations

import functools

import torch

from ..attention.reference import gather_kv
from ..model.attention_backend import (
    AttentionBackend,
    BatchedDecode,
    prefill_attention,
    select_attention,
)
from ..text import msg
from .referee import Difference

MODES = ("gather", "decode_one_head", "kernel")
NAME_KERNEL = "online_softmax_kernel"
KERNEL_TILE = 32  # tokens a kernel program reads per tile
KERNEL_TOL = 1e-3

NAMES = {
    "gather": msg(
        "your gather through the block tables (prefill and decode), the course's softmax",
        "여러분의 gather로 블록 테이블을 거쳐 읽기(prefill과 디코드), 소프트맥스는 코스의 것",
    ),
    "decode_one_head": msg(
        "decode: your decode_one_head, head by head; prefill: your gather",
        "디코드: 여러분의 decode_one_head(헤드마다), prefill: 여러분의 gather",
    ),
    "kernel": msg(
        "decode: your online_softmax_kernel ({where}); prefill: your gather",
        "디코드: 여러분의 online_softmax_kernel({where}), prefill: 여러분의 gather",
    ),
}
ON_GPU = msg("on the GPU", "GPU에서")
INTERPRETED = msg("under Triton's CPU interpreter", "Triton의 CPU 인터프리터로")
KERNEL_PARTED = msg(
    "Your engine and the course's part at step {step}: your online_softmax_kernel ({where}) "
    "decoded sequence {seq} (length {seq_len}, block table {table}), query head {head}, to "
    "{got}; the course's decode gives {want} (tolerance {tol:g}).",
    "여러분의 엔진과 코스의 엔진이 {step}단계에서 갈라집니다. 여러분의 online_softmax_kernel"
    "({where})이 디코드한 값: 시퀀스 {seq}(길이 {seq_len}, 블록 테이블 {table}), 쿼리 헤드 {head}, "
    "{got}. 코스의 디코드: {want} (허용 오차 {tol:g}).",
)
KERNEL_RAISED = msg(
    "Your engine stops at step {step}: your online_softmax_kernel ({where}) did not run: {error}",
    "여러분의 엔진이 {step}단계에서 멈춥니다. 여러분의 online_softmax_kernel({where})이 "
    "실행되지 않았습니다: {error}",
)


def _vector(t) -> str:
    values = ", ".join(f"{float(x):.4g}" for x in t[:4])
    return f"[{values}, ...]" if len(t) > 4 else f"[{values}]"


def exercise_row(block_table_row, seq_len: int, block_size: int):
    """A sequence's block-table row as chapter 5's exercises hand it: -1 past its last block
    (the engine's batched tables pad with block 0)."""
    row = block_table_row.clone()
    row[-(-seq_len // block_size) :] = -1
    return row


class GatheredDecode(BatchedDecode):
    """The course's batched decode, its K and V read by `gather`, one sequence at a time."""

    def __init__(self, block_table, seq_lens, cache_shape, gather):
        super().__init__(block_table, seq_lens, cache_shape)
        self.block_table, self.seq_lens, self.gather = block_table, seq_lens.tolist(), gather

    def read(self, k_cache, v_cache):
        num_seqs, kv_heads, num_slots, head_dim = self.shape
        k = k_cache.new_zeros((num_seqs, num_slots, kv_heads, head_dim))
        v = v_cache.new_zeros((num_seqs, num_slots, kv_heads, head_dim))
        for i, n in enumerate(self.seq_lens):
            k[i, :n] = self.gather(k_cache, self.block_table[i], n)  # (n, kv_heads, head_dim)
            v[i, :n] = self.gather(v_cache, self.block_table[i], n)
        k = k.permute(0, 2, 3, 1).reshape(num_seqs * kv_heads, head_dim, num_slots).float()
        v = v.permute(0, 2, 1, 3).reshape(num_seqs * kv_heads, num_slots, head_dim).float()
        return k, v


class HeadByHead:
    """Decode by `decode_one_head`, per sequence and query head; the course's decode answers
    for comparison."""

    def __init__(self, block_table, seq_lens, cache_shape, referee):
        self.course = BatchedDecode(block_table, seq_lens, cache_shape)
        self.block_table, self.seq_lens, self.referee = block_table, seq_lens.tolist(), referee
        self.scale = cache_shape[3] ** -0.5

    def __call__(self, q, k_cache, v_cache):
        want = self.course(q, k_cache, v_cache)  # (num_seqs, num_q_heads, head_dim)
        group = q.shape[1] // k_cache.shape[2]
        out = torch.empty_like(q)
        for i, n in enumerate(self.seq_lens):
            row = exercise_row(self.block_table[i], n, k_cache.shape[1])
            for h in range(q.shape[1]):
                args = (q[i, h], k_cache, v_cache, row, n, h // group, self.scale)
                out[i, h] = self.referee.call("decode_one_head", args, want[i, h])
        gap = float((out.double() - want.double()).abs().max()) if out.numel() else 0.0
        self.referee.largest_gap = max(self.referee.largest_gap, gap)
        return out


class KernelDecode:
    """Decode by the learner's kernel, launched as chapter 7 launches it; compared with the
    course's decode."""

    def __init__(self, block_table, seq_lens, course, referee, kernel):
        self.block_table, self.seq_lens = block_table, seq_lens
        self.course, self.referee, self.kernel = course, referee, kernel

    def __call__(self, q, k_cache, v_cache):
        from ..attention.steps import launch_attention  # imports Triton: only when it will run

        r = self.referee
        want = self.course(q, k_cache, v_cache, self.block_table, self.seq_lens)
        try:
            got = launch_attention(
                self.kernel,
                q.contiguous(),
                k_cache,
                v_cache,
                self.block_table,
                self.seq_lens,
                tile=KERNEL_TILE,
            )
        except Exception as error:
            text = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
            where = r.where(NAME_KERNEL)
            raise Difference(KERNEL_RAISED.format(step=r.step, where=where, error=text)) from None
        gap = (got.double() - want.double()).abs()
        bad = ~(gap <= KERNEL_TOL + KERNEL_TOL * want.double().abs())  # NaN is bad too
        if bool(bad.any()):
            i, h = (int(x) for x in bad.any(dim=-1).nonzero()[0])
            n = int(self.seq_lens[i])
            blocks = -(-n // k_cache.shape[1])
            text = KERNEL_PARTED.format(
                step=r.step,
                where=r.where(NAME_KERNEL),
                seq=i,
                seq_len=n,
                table=self.block_table[i, :blocks].tolist(),
                head=h,
                got=_vector(got[i, h]),
                want=_vector(want[i, h]),
                tol=KERNEL_TOL,
            )
            raise Difference(text)
        r.calls[NAME_KERNEL] += 1
        r.largest_gap = max(r.largest_gap, float(gap.max()) if gap.numel() else 0.0)
        return got


def default_mode(device) -> str:
    """The kernel on a GPU, the gather elsewhere (the interpreter is for short runs)."""
    return "kernel" if torch.device(device).type == "cuda" else "gather"


def your_attention(referee, device, mode: str) -> AttentionBackend:
    """The attention the learner's engine runs (module docstring), by `mode`."""
    if mode not in MODES:
        raise ValueError(f"attention must be one of {MODES}, got {mode!r}")
    course = select_attention(device)

    def gather(cache, block_table_row, seq_len):
        want = gather_kv(cache, block_table_row, seq_len)
        row = exercise_row(block_table_row, seq_len, cache.shape[1])
        return referee.call("gather", (cache, row, seq_len), want)

    prefill = functools.partial(prefill_attention, gather=gather)
    decode_step = course.decode_step
    if mode == "gather" and referee.yours("gather"):

        def decode_step(block_table, seq_lens, shape):
            return GatheredDecode(block_table, seq_lens, shape, gather)

    elif mode == "decode_one_head" and referee.yours("decode_one_head"):

        def decode_step(block_table, seq_lens, shape):
            return HeadByHead(block_table, seq_lens, shape, referee)

    elif mode == "kernel" and referee.yours(NAME_KERNEL):
        kernel = referee.pieces[NAME_KERNEL].fn

        def decode_step(block_table, seq_lens, shape):
            return KernelDecode(block_table, seq_lens, course.decode, referee, kernel)

    name = course.name  # the course's decode serves: no piece of this mode is kept
    if decode_step is not course.decode_step:
        where = ON_GPU if torch.device(device).type == "cuda" else INTERPRETED
        name = NAMES[mode].format(where=where) if mode == "kernel" else str(NAMES[mode])
    return AttentionBackend(name, course.decode, decode_step, prefill, course.pow2_block_size)
