"""Block tables for paged inputs: each sequence's blocks drawn from a seeded shuffle of the pool.

Paging hands a sequence whichever physical blocks are free, so its blocks lie in no order. The
chapters' checks (`steps`), the exercise checkers and the benchmarks (`paged.gpu`) build their
tables here: `ceil(len / block_size)` distinct blocks per sequence, popped in turn off a seeded
shuffle of the pool's free list (`order="identity"`: in order, a contiguous cache read through a
table), each row padded with -1 (vLLM's padding for an unused entry).
"""

from __future__ import annotations

import torch

ORDERS = ("shuffled", "identity")


def block_table(
    lens,
    block_size: int,
    num_blocks: int,
    *,
    generator: torch.Generator | None = None,
    width: int | None = None,
    skip: tuple[int, ...] = (),
    order: str = "shuffled",
    dtype: torch.dtype = torch.int32,
    device=None,
) -> torch.Tensor:
    """(len(lens), width) physical block ids; `skip` lists blocks never handed out (vLLM V1's
    null block, 0); `width` defaults to the longest row. ValueError when the pool is too small."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    needs = [-(-int(n) // block_size) for n in lens]
    width = max(needs, default=0) if width is None else width
    if needs and max(needs) > width:
        raise ValueError(f"width {width} is narrower than a sequence's {max(needs)} blocks")
    if order == "identity":
        free = torch.arange(num_blocks, device=device).flip(0)
    else:
        free = torch.randperm(num_blocks, generator=generator, device=device)
    free = free[~torch.isin(free, torch.tensor(skip, dtype=free.dtype, device=free.device))]
    ids = free.flip(0)  # the free list's blocks in the order they are popped off its end
    if sum(needs) > ids.numel():
        raise ValueError(
            f"{num_blocks} blocks (less {len(skip)} skipped) cannot hold the {sum(needs)} "
            f"blocks of lengths {list(lens)} at block_size {block_size}"
        )
    table = torch.full((len(needs), width), -1, dtype=dtype, device=device)
    start = 0
    for row, n in zip(table, needs, strict=True):
        row[:n] = ids[start : start + n]
        start += n
    return table
