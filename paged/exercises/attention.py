"""Checkers for attention through a block table, in PyTorch (chapters 5 and 7)."""

from __future__ import annotations

from .core import run_cases

__all__ = [
    "check_gather",
    "check_merge_partitions",
]


def check_gather(fn) -> bool:
    """fn(cache, block_table_row, seq_len) -> (seq_len, num_kv_heads, head_dim), logical order.

    Chapter 5: a sequence's K (or V) read through its block table.
    """
    import torch

    from ..attention.reference import gather_kv

    g = torch.Generator().manual_seed(5)
    cache = torch.randn(9, 4, 2, 3, generator=g)  # (num_blocks, block_size, heads, head_dim)
    rows = [torch.tensor([7, 2, 5, -1, -1]), torch.tensor([0, 8, -1, -1, -1]),
            torch.tensor([3, 1, 6, 4, -1])]  # fmt: skip
    cases = [(cache, rows[0], 10), (cache, rows[1], 8), (cache, rows[2], 13), (cache, rows[0], 1)]

    def by_position(c, row, n):
        return c.flatten(0, 1)[:n]

    def no_trim(c, row, n):
        return c[row[: -(-n // c.shape[1])].long()].flatten(0, 1)

    def same(got, want):
        return (
            isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got, want)
        )

    mistakes = [
        (by_position, "read through the table: logical block i lives in physical block "
                      "block_table[i], not in block i."),
        (no_trim, "the last block is only partly filled: keep the first seq_len rows."),
    ]  # fmt: skip
    def describe(args):
        return f"block_table row {args[1].tolist()}, seq_len {args[2]}"

    return run_cases("gather", fn, cases, gather_kv, mistakes, same=same, describe=describe)


def check_merge_partitions(fn) -> bool:
    """fn(list of (partial_out, lse)) -> merged softmax output (floats, split-K merge)."""
    import torch

    g = torch.Generator().manual_seed(0)
    scores, values = torch.randn(24, generator=g), torch.randn(24, 3, generator=g)
    full = torch.softmax(scores, 0) @ values
    for cuts in ([0, 8, 24], [0, 1, 12, 24], [0, 24]):
        parts = []
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            s = scores[lo:hi]
            parts.append((torch.softmax(s, 0) @ values[lo:hi], torch.logsumexp(s, 0)))
        try:
            got = fn(parts)
        except NotImplementedError:
            got = None
        if got is None:
            print("merge_partitions: not yet: replace the stub and run again.")
            return False
        if not torch.allclose(torch.as_tensor(got, dtype=full.dtype), full, atol=1e-5):
            print(f"merge_partitions: not quite for cuts {cuts}: got {got}, expected {full}.")
            return False
    print("merge_partitions: correct (3 ways of cutting 24 scores).")
    return True
