"""Other decode-attention implementations to time beside ours, at the same shapes (kernel_sweep).

Each `make_*` takes our inputs (NHD cache `(num_blocks, block_size, num_kv_heads, head_dim)`,
int32 block table and seq_lens, see `reference.py`), does any layout conversion once, outside
the timed region, and returns a `Baseline` whose `fn()` computes `(num_seqs, num_q_heads,
head_dim)`. Where one cannot run here it raises `Unavailable` with the reason, which the
benchmark records instead of a time.

- FlexAttention's paged path: `torch.nn.attention.experimental._paged_attention.PagedAttention`
  (PyTorch >= 2.6, DOCS) maps a logical block mask to physical pages; `flex_attention` then reads
  an HND cache `(1, num_kv_heads, num_blocks * block_size, head_dim)`. Compiled on a GPU; eager
  (unfused, for plumbing only) elsewhere.
- FlashAttention-2's paged call in PyTorch: `torch.nn.attention.varlen.varlen_attn(...,
  block_table=...)`, where the installed torch has it. PyTorch's FA2 port checks "Paged KV cache
  block size must be divisible by 256" (flash_api.cpp, DOCS), so only block sizes 256, 512, ...
- SDPA on contiguous K/V with the flash backend pinned (sm >= 80, fp16/bf16): the no-paging
  yardstick. Below sm_80 PyTorch has no flash backend; timing the math fallback would compare
  against a slow path, so it is reported as unavailable, before K/V are gathered (the math
  path with GQA would also need ~28x K's size in temporaries: 14 GiB at batch 64 x 4096).
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..attention.reference import gather_kv_batched

FA2_BLOCK_MULTIPLE = 256


class Unavailable(Exception):
    """This baseline cannot run here; the message says why."""


@dataclass
class Baseline:
    """A callable to time, what it is, and a context to time it in."""

    fn: Callable[[], torch.Tensor]
    note: str
    context: Callable[[], contextlib.AbstractContextManager] = field(default=contextlib.nullcontext)


def make_flex_paged(q, k_cache, v_cache, block_table, seq_lens, *, compile_=None) -> Baseline:
    """FlexAttention over PyTorch's PagedAttention page table, holding our block table."""
    try:
        from torch.nn.attention.experimental._paged_attention import PagedAttention
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError as exc:
        raise Unavailable(f"no FlexAttention paged path in torch {torch.__version__}") from exc
    num_blocks, block_size, num_kv_heads, head_dim = k_cache.shape
    num_seqs, width = block_table.shape
    device = q.device
    pages = PagedAttention(num_blocks, block_size, num_seqs, device=device)
    table = block_table.long()[:, : min(width, num_blocks)]
    pages.page_table[:, : table.shape[1]] = table
    rows, cols = torch.nonzero(table >= 0, as_tuple=True)
    pages.physical_to_logical[rows, table[rows, cols]] = cols
    lens = seq_lens.long()

    def inside(b, h, q_idx, kv_idx):
        return kv_idx < lens[b]

    logical = create_block_mask(
        inside,
        num_seqs,
        None,
        1,
        table.shape[1] * block_size,
        device=device,
        BLOCK_SIZE=(128, block_size),
    )
    mask = pages.convert_logical_block_mask(logical, kv_len=lens)
    # HND cache for flex_attention: one copy, not timed.
    k_hnd, v_hnd = (
        c.permute(2, 0, 1, 3).reshape(1, num_kv_heads, num_blocks * block_size, head_dim)
        for c in (k_cache, v_cache)
    )
    compile_ = device.type == "cuda" if compile_ is None else compile_
    attend = torch.compile(flex_attention, dynamic=False) if compile_ else flex_attention
    q4 = q[:, :, None, :]  # (num_seqs, num_q_heads, 1, head_dim)

    def fn():
        with warnings.catch_warnings():  # eager mode warns that it is unfused: we know
            warnings.simplefilter("ignore", UserWarning)
            return attend(q4, k_hnd, v_hnd, block_mask=mask, enable_gqa=True)[:, :, 0]

    how = "compiled" if compile_ else "eager (unfused; plumbing only)"
    return Baseline(fn, f"flex_attention {how}, PagedAttention page table, HND cache")


def make_fa2_paged(q, k_cache, v_cache, block_table, seq_lens, *, max_seq_len) -> Baseline:
    """PyTorch's FlashAttention-2 varlen call with a block table (NHD cache, as ours)."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError as exc:
        raise Unavailable(f"no torch.nn.attention.varlen in torch {torch.__version__}") from exc
    if "block_table" not in inspect.signature(varlen_attn).parameters:
        raise Unavailable(f"varlen_attn in torch {torch.__version__} takes no block_table")
    if q.device.type != "cuda":
        raise Unavailable("FlashAttention-2 needs a CUDA GPU")
    if torch.cuda.get_device_capability(q.device) < (8, 0):
        raise Unavailable("FlashAttention-2 needs compute capability >= 8.0")
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise Unavailable(f"FlashAttention-2 needs fp16 or bf16, got {q.dtype}")
    block_size = k_cache.shape[1]
    if block_size % FA2_BLOCK_MULTIPLE:
        raise Unavailable(f"FA2's paged KV needs block_size % 256 == 0, got {block_size}")
    num_seqs = q.shape[0]
    cu_q = torch.arange(num_seqs + 1, dtype=torch.int32, device=q.device)
    cu_k = torch.zeros(num_seqs + 1, dtype=torch.int32, device=q.device)
    cu_k[1:] = seq_lens.cumsum(0)
    table = block_table.clamp(min=0)  # FA2 reads only the entries a sequence uses

    def fn():
        return varlen_attn(
            q,
            k_cache,
            v_cache,
            cu_q,
            cu_k,
            1,
            max_seq_len,
            enable_gqa=True,
            seqused_k=seq_lens,
            block_table=table,
        )

    return Baseline(fn, "torch varlen_attn(block_table=...), FlashAttention-2, NHD cache")


def _check_sdpa_flash(q) -> None:
    """Raise Unavailable unless SDPA's flash backend can run q here."""
    if q.device.type != "cuda":
        raise Unavailable("SDPA's flash backend needs a CUDA GPU")
    cc = torch.cuda.get_device_capability(q.device)
    if cc < (8, 0):
        raise Unavailable(
            f"SDPA's flash backend needs sm_80+ (this GPU is sm_{cc[0]}{cc[1]}); "
            "its math fallback is not a yardstick, so it is not timed"
        )
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise Unavailable(f"SDPA's flash backend needs fp16 or bf16, got {q.dtype}")


def make_sdpa_contiguous(q, k, v) -> Baseline:
    """SDPA with the flash backend pinned; k, v: (num_seqs, num_kv_heads, seq_len, head_dim)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    _check_sdpa_flash(q)
    q4 = q[:, :, None, :]

    def fn():
        return F.scaled_dot_product_attention(q4, k, v, enable_gqa=True)[:, :, 0]

    return Baseline(
        fn,
        "SDPA, backend pinned: FLASH_ATTENTION, contiguous K/V",
        lambda: sdpa_kernel([SDPBackend.FLASH_ATTENTION]),
    )


def make_sdpa_gathered(q, k_cache, v_cache, block_table, seq_len: int) -> Baseline:
    """`make_sdpa_contiguous` on K/V gathered from the cache (the copy is made only if it runs)."""
    _check_sdpa_flash(q)
    k, v = (
        gather_kv_batched(c, block_table)[:, :seq_len].transpose(1, 2).contiguous()
        for c in (k_cache, v_cache)
    )  # (num_seqs, num_kv_heads, seq_len, head_dim)
    return make_sdpa_contiguous(q, k, v)
