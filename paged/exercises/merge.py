"""Checker for the split-K merge of partial attention outputs, in PyTorch (chapter 7).

Exported by `attention.py`. The truth is `paged_attention_ref` over the whole sequence; each
partition's partial output is the same reference over its part of the sequence, and its lse the
log-sum-exp of its scores. The cases hold scores, and so log-sum-exps, in the hundreds and
thousands, partitions whose lse lie far apart, empty and one-token partitions.
"""

from __future__ import annotations

import math

from ..text import msg
from .engine.core import NUM_RANDOM, Spec, checker, short
from .engine.verdicts import nan_where_finite, on_every
from .slips import of

__all__: list[str] = []  # exported by attention.py


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
        ("paged.attention.paged_attention_ref", reference.paged_attention_ref),
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
