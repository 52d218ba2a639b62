"""Model answers for the Triton on-ramp (chapter 6): one @triton.jit kernel per puzzle."""

from __future__ import annotations

import paged.attention  # noqa: F401  (sets TRITON_INTERPRET=1 without a GPU, before triton)

# isort: split
import triton
import triton.language as tl

__all__ = ["copy_2d_kernel", "copy_kernel", "dot_kernel", "row_softmax_kernel", "stamp_kernel"]


@triton.jit
def stamp_kernel(out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)  # this program's BLOCK elements
    tl.store(out_ptr + offs, pid)  # the scalar pid is broadcast to the block


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n  # the last program's lanes past n do nothing
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def copy_2d_kernel(x_ptr, out_ptr, M, N, stride_x, stride_out, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)  # (BM,)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)  # (BN,)
    mask = (rows < M)[:, None] & (cols < N)[None, :]  # (BM, BN)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], x, mask=mask)


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, N, stride_x, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)  # BLOCK_N >= N, a power of two
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf"))
    p = tl.exp(x - tl.max(x, 0))  # exp(-inf) = 0 for the padding
    tl.store(out_ptr + row * N + cols, p / tl.sum(p, 0), mask=mask)


@triton.jit
def dot_kernel(
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
):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)  # fp16 products, summed in fp32
    for k0 in range(0, K, BK):
        k = k0 + tl.arange(0, BK)
        a = tl.load(
            a_ptr + rows[:, None] * stride_a + k[None, :],
            mask=(rows < M)[:, None] & (k < K)[None, :],
            other=0.0,
        )  # (BM, BK)
        b = tl.load(
            b_ptr + k[:, None] * stride_b + cols[None, :],
            mask=(k < K)[:, None] & (cols < N)[None, :],
            other=0.0,
        )  # (BK, BN)
        acc += tl.dot(a, b)
    tl.store(
        out_ptr + rows[:, None] * stride_out + cols[None, :],
        acc,
        mask=(rows < M)[:, None] & (cols < N)[None, :],
    )
