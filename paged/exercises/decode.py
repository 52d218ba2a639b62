"""Checker for decode attention of one query head through a block table, in PyTorch (chapter 5).

The learner writes `decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head,
scale)`: the gather through the table and a softmax over one head's scores. The truth is the
reference, `paged.attention.reference.paged_attention_ref`, run with the query in KV head
`kv_head`'s place. Its cases are built so that the scores are known (`_scored_cache`): moderate
ones, and ones with |score| >= 1000 (exp() overflows or underflows even in float64 there).
"""

from __future__ import annotations

from .engine import guard
from .engine.contract import tensor_of
from .engine.core import NUM_RANDOM, Spec, checker, short
from .engine.verdicts import constant_factor, nan_where_finite, on_every
from .slips import of
from .slips.decode import FACTOR, HALF, NO_MAX, PAST_LEN, keys_of

__all__ = ["check_decode_one_head"]

PARAMS = ("q", "k_cache", "v_cache", "block_table_row", "seq_len", "kv_head", "scale")
_TOL = {"torch.float32": 1e-3, "torch.float16": 1e-2, "torch.bfloat16": 5e-2}


def _scored_cache(
    seed, num_blocks, block_size, heads, dim, kv_head, scale, offset, spread, dtype, pad=None
):
    """(q, k_cache, v_cache): in KV head kv_head, slot t scores about offset + spread * N(0, 1);
    `pad` = (block, first slot, score): that block's slots from there on score `score` instead
    (the empty slots after a sequence's last token, which no answer may read)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    q = torch.randn(dim, generator=g, dtype=torch.float64)
    q[0] = (1.0 + q[0].abs()) * (1 if seed % 2 else -1)  # far from 0: k[..., 0] sets the score
    k = torch.randn(num_blocks, block_size, heads, dim, generator=g, dtype=torch.float64)
    v = torch.randn(num_blocks, block_size, heads, dim, generator=g, dtype=torch.float64)
    target = offset + spread * torch.randn(num_blocks, block_size, generator=g, dtype=torch.float64)
    if pad is not None:
        target[pad[0], pad[1] :] = pad[2]
    rest = k[:, :, kv_head, 1:] @ q[1:]  # (num_blocks, block_size)
    k[:, :, kv_head, 0] = (target / scale - rest) / q[0]
    return q.to(dtype), k.to(dtype), v.to(dtype)


def _case(
    seed,
    bs,
    num_blocks,
    row,
    n,
    heads=2,
    dim=4,
    kv_head=1,
    scale=0.5,
    offset=0.0,
    spread=2.0,
    dtype="float32",
    pad_score=None,
):
    import torch

    dtype = getattr(torch, dtype)
    pad = None if pad_score is None else (row[(n - 1) // bs], n % bs or bs, pad_score)
    q, k, v = _scored_cache(
        seed, num_blocks, bs, heads, dim, kv_head, scale, offset, spread, dtype, pad
    )
    return (q, k, v, torch.tensor(row), n, kv_head, scale)


def _fixed_cases():
    rows4 = [7, 2, 5, -1]
    return [
        _case(0, 4, 9, rows4, 10),  # the last block holds 2 of its 4 slots
        _case(1, 4, 9, rows4, 1, kv_head=0),  # one token: the output is its V
        _case(2, 4, 9, [3, 8, -1, -1], 8, scale=1.0),  # exactly two full blocks
        _case(3, 1, 12, [11, 4, 0, 9, 2, 7, -1], 6, heads=1, dim=3, kv_head=0),  # blocks of 1
        _case(4, 16, 3, [2, -1], 5, heads=4, dim=8, kv_head=3, scale=8**-0.5),  # 5 of 16 slots
        _case(5, 4, 9, [8, 6, 5, 1], 14, scale=0.3),  # a decreasing table
        _case(6, 4, 9, rows4, 11, scale=1.0, offset=1000.0),  # scores around +1000
        _case(7, 2, 8, [6, 1, 4, -1], 5, kv_head=0, offset=-1500.0),  # all scores near -1500
        _case(8, 4, 9, [0, 4, 2, -1], 9, heads=4, kv_head=2, offset=3000.0, spread=5.0),
        _case(9, 4, 9, rows4, 12, scale=1.0, spread=600.0),  # scores from about -1500 to +1500
        # the 2 empty slots after the last token would score +2000: no answer may read them
        _case(12, 4, 9, rows4, 10, scale=1.0, pad_score=2000.0),
        _case(10, 2, 5, [3, -1], 1, dtype="bfloat16"),  # one token in bfloat16: its V, in bf16
        _case(11, 4, 6, [5, 0], 7, heads=1, kv_head=0, dtype="float16"),
        # scores near 500 in half precision: half-precision arithmetic loses the differences
        _case(13, 4, 6, [5, 0, 2], 11, dim=8, scale=1.0, offset=500.0, spread=3.0, dtype="float16"),
        _case(14, 2, 6, [1, 4, 3], 6, offset=-300.0, spread=1.0, dtype="bfloat16"),
    ]


def _random_cases(rng):
    """Edges and extremes: seq_len 1 or on a block boundary, blocks of 1 and of 32, tables in
    scattered or decreasing order, scores far from 0 or all negative, half-precision caches."""
    import torch

    pairs = []
    for _ in range(NUM_RANDOM // 2):
        bs = rng.choice((1, 1, 2, 4, 16, 32))
        width = rng.randint(1, 6)
        n = rng.choice((1, width * bs, (width - 1) * bs + 1, rng.randint(1, width * bs)))
        n = max(1, min(n, width * bs))
        used = -(-n // bs)
        num_blocks = used + rng.randint(0, 4)
        heads, dim = rng.choice(((1, 1), (2, 4), (4, 8), (2, 16)))
        dtype = rng.choice(("float32",) * 4 + ("float16", "bfloat16"))
        scale = rng.choice((dim**-0.5, 1.0, round(rng.uniform(0.05, 2.0), 3)))
        offset, spread = 0.0, rng.choice((0.5, 2.0, 6.0))
        if dtype == "float32" and rng.random() < 0.5:
            offset = rng.choice((1000.0, -1000.0, 2500.0, -4000.0, 800.0, -800.0))
            spread = rng.choice((1.0, 3.0, 20.0, 400.0))  # 400: scores thousands apart
        elif dtype != "float32" and rng.random() < 0.5:  # the cache's half precision
            offset = rng.choice((200.0, -200.0, 500.0, -500.0))  # K's numbers stay below 2**15
            spread = rng.choice((1.0, 3.0, 20.0))
        ids = list(range(num_blocks))
        rng.shuffle(ids)
        ids = ids[:used]
        if rng.random() < 0.3:
            ids.sort(reverse=True)  # a non-increasing (decreasing) table
        row = ids + [-1] * (width - used + rng.randint(0, 2))
        args = _case(
            rng.randint(0, 10**6),
            bs,
            num_blocks,
            row,
            n,
            heads,
            dim,
            rng.randrange(heads),
            scale,
            offset,
            spread,
            dtype,
        )
        if rng.random() < 0.5:
            args = (*args[:3], args[3].to(torch.int32), *args[4:])
        pairs.append((args, _truth(*args)))
    return pairs


def _truth(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """The reference with q in KV head kv_head's place (one query head per KV head)."""
    import torch

    from ..attention.reference import paged_attention_ref

    queries = torch.zeros(1, k_cache.shape[2], q.shape[0], dtype=q.dtype)
    queries[0, kv_head] = q
    table = block_table_row.to(torch.int32)[None]
    lens = torch.tensor([seq_len], dtype=torch.int32)
    return paged_attention_ref(queries, k_cache, v_cache, table, lens, scale)[0, kv_head]


# ---- symptoms; the slips are the catalogue's (`slips.of("decode")`) ------------------------
def _scores(args, past=False):
    """The scores of the sequence's tokens, or (past) of the last block's slots after them."""
    q, kc, _, row, n, kv_head, scale = args
    end = -(-n // kc.shape[1]) * kc.shape[1] if past else n
    return (keys_of(kc, row, end, kv_head).double() @ q.double() * scale)[n if past else 0 :]


def _nan_past_seq_len(triples) -> bool:
    """NaN where the answer is finite only on cases whose own scores no exp() overflows on and
    whose last block's empty slots score far above them (a case built so): what overflowed lies
    past seq_len."""
    nan = [(_scores(a), a) for g, w, a in triples if nan_where_finite(g, w)]
    small = [(s, _scores(a, past=True)) for s, a in nan if s.abs().max() < 80]
    return bool(small) and all(p.numel() and p.max() > s.max() + 80 for s, p in small)


def _far_in_half(triples) -> bool:
    """Wrong only on half-precision caches whose scores lie far from 0."""
    return all(a[1].element_size() == 2 and _scores(a).abs().max() > 100 for _, _, a in triples)


_SYMPTOMS = (
    (_nan_past_seq_len, PAST_LEN),
    (_far_in_half, HALF),
    (on_every(nan_where_finite), NO_MAX),
    (on_every(constant_factor), FACTOR),
)


# ---- the checker -------------------------------------------------------------------------------
def _same(got, want) -> bool:
    import torch

    tol = _TOL[str(want.dtype)]
    return (
        isinstance(got, torch.Tensor)
        and tuple(got.shape) == tuple(want.shape)
        and got.is_floating_point()
        and bool(torch.allclose(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True))
    )


def _describe(args) -> str:
    q, kc, _, row, n, kv_head, scale = args
    scores = _scores(args)
    return (
        f"block_size {kc.shape[1]}, block_table_row {row.tolist()}, seq_len {n}, "
        f"kv_head {kv_head} of {kc.shape[2]}, scale {scale:.4g}, {str(kc.dtype)[6:]} cache, "
        f"scores from {scores.min().item():.1f} to {scores.max().item():.1f}"
    )


def _show(value) -> str:
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dim() == 1:
        numbers = [round(x, 4) for x in value.double().tolist()]
        return f"{short(numbers, 90)} ({str(value.dtype)[6:]})"
    return short(value)


def _forbid():
    from torch.nn.attention import flex_attention

    from ..attention import reference

    return [  # the library's attention, every module of it, and torch's
        ("torch.nn.attention.flex_attention", flex_attention.flex_attention),
        ("paged.gather_kv", reference.gather_kv),
        ("paged.attention.paged_attention_ref", reference.paged_attention_ref),
        "paged.attention.reference",
        "paged.attention.kernel",
        "paged.attention.launch",
        "paged.attention.tiles",
        "paged.attention.balanced",
        "paged.attention.steps",
        "paged.model.attention_backend",
        "paged.model.cache",
        guard.SDPA,
        guard.MHA,
    ]


SPEC = Spec(
    "decode_one_head",
    params=PARAMS,
    cases=_fixed_cases,
    answer=_truth,
    draw=_random_cases,
    slips=of("decode"),
    same=_same,
    describe=_describe,
    show=_show,
    forbid=_forbid,
    contract=lambda got, args: tensor_of(args[1].dtype)(got),
    symptoms=_SYMPTOMS,
    doc="""fn(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale) -> (head_dim,).

    Chapter 5: one query head's decode attention, softmax(scale * q . k) weighting v over the
    sequence's first seq_len tokens, read through its block table in KV head kv_head; the answer
    keeps the cache's dtype. torch.softmax is allowed; the library's gather and reference and
    PyTorch's SDPA raise while fn runs. The truth: `paged_attention_ref`.
    """,
)
check_decode_one_head = checker(SPEC)
