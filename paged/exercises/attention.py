"""Checkers for attention through a block table, in PyTorch (chapters 5 and 7).

The ground truth is the reference implementation, `paged.attention.reference`: `gather_kv` for
the gather (here), and `paged_attention_ref` over a whole sequence for the split-K merge
(`merge.py`: its partial outputs are the same reference over each partition of the sequence).
"""

from __future__ import annotations

from .engine.contract import tensor_of
from .engine.core import NUM_RANDOM, Spec, checker, short
from .merge import check_merge_partitions
from .slips import of

__all__ = ["check_gather", "check_merge_partitions"]


def _address_cache(num_blocks, block_size, heads=2, head_dim=3, dtype="float32"):
    """A cache whose numbers tell where they are: slot + (head * head_dim + d) / 100."""
    import torch

    slots = torch.arange(num_blocks * block_size, dtype=torch.float32)
    cols = torch.arange(heads * head_dim, dtype=torch.float32) / 100
    cache = (slots[:, None] + cols[None, :]).view(num_blocks, block_size, heads, head_dim)
    return cache.to(getattr(torch, dtype))


def _gather_cases():
    import torch

    cache, ones = _address_cache(9, 4), _address_cache(12, 1)  # block sizes 4 and 1
    half, bf16 = _address_cache(6, 2, dtype="float16"), _address_cache(5, 4, 1, 2, "bfloat16")
    rows = [
        torch.tensor([7, 2, 5, -1, -1]),
        torch.tensor([0, 8, -1, -1, -1]),
        torch.tensor([3, 1, 6, 4, -1], dtype=torch.int32),
    ]
    shuffled = torch.tensor([11, 4, 0, 9, 2, 7, -1])
    return [
        (cache, rows[0], 10),
        (cache, rows[1], 8),
        (cache, rows[2], 13),
        (cache, rows[0], 1),
        (ones, shuffled, 6),
        (cache, rows[1], 0),
        (half, torch.tensor([4, 1, -1]), 0),  # empty, in float16: the answer keeps the dtype
        (bf16, torch.tensor([3, -1], dtype=torch.int32), 1),  # one token of one KV head
        (half, torch.tensor([5, 0, 2]), 6),
    ]


def _show_rows(value) -> str:
    """A gathered tensor as the cache slots its rows came from (the cache encodes them)."""
    import torch

    if not isinstance(value, torch.Tensor) or value.dim() != 3 or not value.is_floating_point():
        return short(value)
    first = value[:, 0, 0].double()
    if not bool((first == first.floor()).all()):  # random data, not the address cache
        return f"shape {tuple(value.shape)}, {value.dtype}, {short(value, 80)}"
    slots = first.long().tolist() if value.numel() else []
    return f"shape {tuple(value.shape)}, rows from slots {short(slots, 100)}"


def _random_gathers(rng):
    """Random caches (non-integer data, float32/16, bf16), shuffled tables, edge lengths."""
    import torch

    from ..attention.reference import gather_kv
    from ..attention.tables import block_table

    pairs = []
    for _ in range(NUM_RANDOM // 2):
        bs = rng.choice((1, 1, 2, 4, 16, 32))
        width = rng.randint(1, 6)
        n = max(0, rng.randint(0, width) * bs + rng.choice((-1, 0, 0, 1, rng.randint(0, bs))))
        n = min(n, width * bs)
        num_blocks = width + rng.randint(0, 3)
        g = torch.Generator().manual_seed(rng.randint(0, 10**6))
        dtype = rng.choice((torch.float32, torch.float32, torch.float16, torch.bfloat16))
        heads, dim = rng.choice(((1, 1), (2, 3), (4, 8)))
        cache = torch.randn(num_blocks, bs, heads, dim, generator=g).to(dtype)
        row_dtype, row_width = rng.choice((torch.int32, torch.int64)), width + rng.randint(0, 2)
        row = block_table([n], bs, num_blocks, generator=g, width=row_width, dtype=row_dtype)[0]
        pairs.append(((cache, row, n), gather_kv(cache, row, n)))
    return pairs


def _gather_kv(*args):
    from ..attention.reference import gather_kv

    return gather_kv(*args)


def _same_tensor(got, want):  # exact: a gather moves numbers, it computes none
    import torch

    return (
        isinstance(got, torch.Tensor)
        and got.shape == want.shape
        and torch.equal(got.to(want.dtype), want)
    )


def _gather_forbid():
    from ..attention.reference import gather_kv

    return [
        ("paged.gather_kv", gather_kv),
        "paged.attention.reference",
        "paged.model.attention_backend",
        "paged.model.cache",  # slots_of: a sequence's slots through its block table
    ]


def _describe_gather(args):
    cache, row, n = args
    return f"block_size {cache.shape[1]}, block_table row {row.tolist()}, seq_len {n}"


GATHER = Spec(
    "gather",
    params=("cache", "block_table_row", "seq_len"),
    cases=_gather_cases,
    answer=_gather_kv,
    draw=_random_gathers,
    slips=of("gather"),
    same=_same_tensor,
    describe=_describe_gather,
    show=_show_rows,
    forbid=_gather_forbid,
    contract=lambda got, args: tensor_of(args[0].dtype)(got),
    doc="""fn(cache, block_table_row, seq_len) -> (seq_len, num_kv_heads, head_dim), logical order.

    Chapter 5: a sequence's K (or V) read through its block table (entries past its last block
    are -1); the answer is a tensor of the cache's dtype, an empty sequence's too. The truth:
    `paged.attention.reference.gather_kv`.
    """,
)
check_gather = checker(GATHER)
