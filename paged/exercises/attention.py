"""Checkers for attention through a block table, in PyTorch (chapters 5 and 7).

The ground truth is the reference implementation, `paged.attention.reference`: `gather_kv` for
the gather, and `paged_attention_ref` over a whole sequence for the split-K merge (its partial
outputs are the same reference over each partition of the sequence).
"""

from __future__ import annotations

import math

from ..text import msg
from .contract import tensor_of
from .core import NUM_RANDOM, Spec, checker, short
from .slips import of
from .verdicts import constant_factor, nan_where_finite, on_every

__all__ = [
    "check_gather",
    "check_merge_partitions",
]


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
        used = -(-n // bs)
        row = torch.full(
            (width + rng.randint(0, 2),), -1, dtype=rng.choice((torch.int32, torch.int64))
        )
        row[:used] = torch.randperm(num_blocks, generator=g)[:used].to(row.dtype)
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


# (seed, number of scores, offset of the scores, partition cuts): the last case has scores, and
# so log-sum-exps, in the hundreds, where exp() overflows float32 and float64.
_MERGE_CASES = (
    (0, 24, 0.0, (0, 8, 24)),
    (1, 24, 0.0, (0, 1, 12, 24)),  # a one-token partition
    (2, 24, 0.0, (0, 24)),  # one partition: the merge returns it
    (3, 20, 0.0, (0, 7, 7, 20)),  # an empty partition: output zeros, lse -inf
    (4, 24, 850.0, (0, 6, 16, 24)),
)
_HEAD_DIM = 4


def _merge_pairs(cases=_MERGE_CASES):
    """(parts, answer): partial outputs and lse per partition; the answer, the whole sequence.

    A case is (seed, number of scores, offset, cuts) or (seed, n, offsets per partition, cuts).
    """
    import torch

    from ..attention.reference import paged_attention_ref

    pairs = []
    for seed, n, offset, cuts in cases:
        g = torch.Generator().manual_seed(seed)
        scores = 2.0 * torch.randn(n, generator=g)
        if isinstance(offset, tuple):  # partitions far apart: their lse spread by >= 100
            for lo, hi, shift in zip(cuts, cuts[1:], offset, strict=False):
                scores[lo:hi] += shift
        else:
            scores += offset
        k = torch.randn(n, 1, 1, _HEAD_DIM, generator=g)  # block size 1: block t holds token t
        k[:, 0, 0, 0] = scores  # with q = (1, 0, 0, 0) and scale 1, token t scores scores[t]
        v = torch.randn(n, 1, 1, _HEAD_DIM, generator=g)
        q = torch.zeros(1, 1, _HEAD_DIM)
        q[0, 0, 0] = 1.0

        def attend(positions, q=q, k=k, v=v):
            table = torch.tensor([list(positions) or [0]], dtype=torch.int32)
            lens = torch.tensor([len(positions)], dtype=torch.int32)
            return paged_attention_ref(q, k, v, table, lens, scale=1.0)[0, 0]  # (head_dim,)

        parts = []
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            lse = torch.logsumexp(scores[lo:hi].double(), 0).float()
            parts.append((attend(range(lo, hi)), lse))
        pairs.append((parts, attend(range(n))))
    return pairs


def _random_merges(rng):
    """Scores far from 0 (|x| >= 1000), partitions whose lse lie 100 to 2000 apart, all-negative
    ones, empty and one-token partitions."""
    cases = []
    for _ in range(NUM_RANDOM // 4):
        num_parts = rng.choice((1, 2, 3, 4))
        cuts = sorted(rng.randint(0, 16) for _ in range(num_parts - 1))
        n = max([16, *cuts])
        cuts = [0, *cuts, n]
        if rng.random() < 0.3:
            offset = rng.choice((0.0, 1000.0, -1000.0, 5000.0, -3000.0))
        else:
            base = rng.choice((0.0, 1000.0, -1500.0))
            offset = tuple(
                base + rng.choice((-1, 1)) * rng.choice((0.0, 150.0, 800.0, 2000.0))
                for _ in range(num_parts)
            )
        cases.append((rng.randint(0, 10**6), n, offset, tuple(cuts)))
    return [((parts,), want) for parts, want in _merge_pairs(cases)]


def _as_tensor(fn, args):
    """Call fn; compare its result as a float32 tensor (a list of floats will do)."""
    import torch

    raw = fn(*args)
    try:
        return raw, torch.as_tensor(raw, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        return raw, raw


_MERGE_SYMPTOMS = (
    (
        on_every(nan_where_finite),
        msg(
            "NaN, inf or an overflow where the answer is finite: it appears on cases whose "
            "log-sum-exps are far from 0 (|lse| of several hundred or more), far apart, or -inf "
            "(an empty partition).",
            "답이 유한한데 NaN이나 inf, 또는 오버플로가 나왔습니다. log-sum-exp가 0에서 멀거나"
            "(|lse|가 수백 이상) 서로 멀리 떨어졌거나 -inf인(빈 파티션) 사례에서 나타납니다.",
        ),
    ),
    (
        on_every(constant_factor),
        msg(
            "off by a constant factor in each case: every number of your output is the answer times "
            "the same amount.",
            "사례마다 상수배만큼 어긋납니다. 출력의 모든 숫자가 답에 같은 값을 곱한 것입니다.",
        ),
    ),
)


def _merge_same_for(args):
    # The lse come rounded to float32: half an ulp of each moves a right merge off the whole
    # sequence's attention by up to ulp(|lse|) * max |partial_out| (an ulp is 5e-4 at 5000;
    # float64's ulp times 2**29 is float32's).
    import torch

    parts = args[0]
    lses = [abs(float(lse)) for _, lse in parts if math.isfinite(float(lse))]
    biggest = max((float(out.abs().max()) for out, _ in parts), default=0.0)
    slack = math.ulp(max(lses, default=0.0)) * 2**29 * biggest

    def same(got, want):
        return (
            isinstance(got, torch.Tensor)
            and got.shape == want.shape
            and torch.allclose(got, want, rtol=1e-4, atol=1e-4 + slack, equal_nan=True)
        )

    return same


def _describe_merge(args):
    lses = ", ".join(f"{float(lse):.2f}" for _, lse in args[0])
    return f"{len(args[0])} partitions with lse [{lses}]"


def _merge_forbid():
    from ..attention import reference

    return [
        ("paged.paged_attention_ref", reference.paged_attention_ref),
        "paged.attention.reference",
        "paged.attention.kernel",
        "paged.model.attention_backend",
    ]


MERGE_PARTITIONS = Spec(
    "merge_partitions",
    params=("parts",),
    cases=lambda: [((parts,), want) for parts, want in _merge_pairs()],
    draw=_random_merges,
    slips=of("merge"),
    same_for=_merge_same_for,
    describe=_describe_merge,
    observe=_as_tensor,
    show=short,
    forbid=_merge_forbid,
    symptoms=_MERGE_SYMPTOMS,
    doc="""fn(list of (partial_out, lse)) -> the merged output (split-K, chapter 7).

    Each partition's partial_out is the softmax-weighted sum of V over its tokens, (head_dim,),
    and lse the log-sum-exp of its scores (0-d; -inf for an empty partition). The truth:
    `paged_attention_ref` over the whole sequence. Judged by value: the spec names no dtype, so
    a tensor of any float dtype, or a list of numbers, will do.
    """,
)
check_merge_partitions = checker(MERGE_PARTITIONS)
