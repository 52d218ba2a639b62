"""The benchmark's cases: seeded paged inputs for each named shape, and a check of outputs.

`make_inputs` builds q, the K/V caches, a block table and seq_lens on a device, the blocks in
shuffled order (what paging gives) or in order (`layout="identity"`, a contiguous cache read
through a table). `make_case` adds what a row of the benchmark needs: the K and V bytes a decode
step reads (the GB/s numerator) and a checker that compares a few sequences (first, middle, last,
shortest, longest) against `paged_attention_ref`, within `TOLERANCE` for the dtype. Shapes:
`uniform` (batch x seq_len), `few_long` (batch / 16 sequences, 4 x longer) and `mixed` (seeded
lengths 1...seq_len, what work balancing is for).
"""

from __future__ import annotations

import torch

from ..attention import paged_attention_ref
from ..attention.tables import block_table
from .bandwidth import kv_bytes

SHAPES = ("uniform", "few_long", "mixed")
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def make_inputs(
    batch,
    seq_len,
    block_size,
    num_q_heads,
    num_kv_heads,
    head_dim,
    dtype,
    device,
    layout="shuffled",
    seed=0,
):
    """q, caches, block table, seq_lens made on `device`; 'identity' keeps blocks in order."""
    g = torch.Generator(device=device).manual_seed(seed)
    num_blocks = batch * -(-seq_len // block_size)
    lens = [seq_len] * batch
    table = block_table(lens, block_size, num_blocks, generator=g, order=layout, device=device)
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k = torch.randn(shape, generator=g, device=device, dtype=dtype)
    v = torch.randn(shape, generator=g, device=device, dtype=dtype)
    q = torch.randn(batch, num_q_heads, head_dim, generator=g, device=device, dtype=dtype)
    seq_lens = torch.full((batch,), seq_len, dtype=torch.int32, device=device)
    return q, k, v, table, seq_lens


def shape_dims(shape: str, batch: int, seq_len: int) -> tuple[int, int]:
    """(sequences, longest length) of a named benchmark shape."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    return (max(1, batch // 16), 4 * seq_len) if shape == "few_long" else (batch, seq_len)


def make_case(shape, batch, seq_len, block_size, heads, dtype, device, layout="shuffled"):
    """(inputs, K/V bytes read, a checker of outputs) for one shape and block size."""
    num_seqs, longest = shape_dims(shape, batch, seq_len)
    q, k, v, table, lens = make_inputs(num_seqs, longest, block_size, *heads, dtype, device, layout)
    if shape == "mixed":  # unequal lengths: what work balancing is for
        g = torch.Generator().manual_seed(1)
        lens = torch.randint(1, longest + 1, (num_seqs,), generator=g, dtype=torch.int32).to(device)
    nbytes = kv_bytes(1, int(lens.sum()), heads[1], heads[2], dtype)
    order = lens.argsort().tolist()  # the shortest and longest, and three in between
    idx = torch.tensor(sorted({0, num_seqs // 2, num_seqs - 1, order[0], order[-1]}), device=device)

    def check(out: torch.Tensor) -> float:
        """Largest |out - reference| over the picked sequences (fp32 reference, a few MB)."""
        want = paged_attention_ref(q[idx], k, v, table[idx], lens[idx])
        return (out[idx].float() - want.float()).abs().max().item()

    return (q, k, v, table, lens), nbytes, check


__all__ = ["SHAPES", "TOLERANCE", "make_case", "make_inputs", "shape_dims"]
