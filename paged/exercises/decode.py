"""Checker for decode attention of one query head through a block table, in PyTorch (chapter 5).

The learner writes `decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head,
scale)`: the gather through the table and a softmax over one head's scores. The truth is the
reference, `paged.attention.reference.paged_attention_ref`, run with the query in KV head
`kv_head`'s place. Its cases are built so that the scores are known (`_scored_cache`): moderate
ones, and ones with |score| >= 1000 (exp() overflows or underflows even in float64 there).
"""

from __future__ import annotations

from ..text import msg
from . import guard
from .contract import tensor_of
from .core import NUM_RANDOM, Spec, checker, short
from .slips import GATHERS, LAST_BLOCK_MISSING
from .verdicts import constant_factor, nan_where_finite, on_every

__all__ = ["check_decode_one_head"]

PARAMS = ("q", "k_cache", "v_cache", "block_table_row", "seq_len", "kv_head", "scale")
_TOL = {"torch.float32": 1e-3, "torch.float16": 1e-2, "torch.bfloat16": 5e-2}


def _scored_cache(seed, num_blocks, block_size, heads, dim, kv_head, scale, offset, spread, dtype):
    """(q, k_cache, v_cache): in KV head kv_head, slot t scores about offset + spread * N(0, 1)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    q = torch.randn(dim, generator=g, dtype=torch.float64)
    q[0] = (1.0 + q[0].abs()) * (1 if seed % 2 else -1)  # far from 0: k[..., 0] sets the score
    k = torch.randn(num_blocks, block_size, heads, dim, generator=g, dtype=torch.float64)
    v = torch.randn(num_blocks, block_size, heads, dim, generator=g, dtype=torch.float64)
    target = offset + spread * torch.randn(num_blocks, block_size, generator=g, dtype=torch.float64)
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
):
    import torch

    dtype = getattr(torch, dtype)
    q, k, v = _scored_cache(seed, num_blocks, bs, heads, dim, kv_head, scale, offset, spread, dtype)
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
        _case(10, 2, 5, [3, -1], 1, dtype="bfloat16"),  # one token in bfloat16: its V, in bf16
        _case(11, 4, 6, [5, 0], 7, heads=1, kv_head=0, dtype="float16"),
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


# ---- typical mistakes, each written as a learner would -----------------------------------------
def _used(row, n, bs):
    return row[: -(-n // bs)].long()


def _via(concept):
    """A K/V read by one of the gather's slips (`slips.GATHERS`), in KV head h, in float32."""
    gather = GATHERS[concept]
    return lambda c, row, n, h: gather(c, row, n)[:, h].float()


def _keys(cache, row, n, kv_head):
    """The sequence's rows of KV head kv_head, logical order, in float32: (n, head_dim)."""
    return cache[_used(row, n, cache.shape[1])].flatten(0, 1)[:n, kv_head].float()


def _attend(q, k, v, scale, dtype, weights=None):
    """softmax(scale * k @ q) @ v, in float32, back in `dtype` (weights: another softmax)."""
    scores = (k @ q.float()) * scale
    w = scores.softmax(0) if weights is None else weights(scores)
    return (w @ v).to(dtype)


def _mistake(read=_keys, weights=None, scale=None):
    """A wrong decode_one_head: another way to read K/V, another softmax, another scale."""

    def wrong(q, kc, vc, row, n, kv_head, s):
        s = scale(s, q) if scale is not None else s
        k, v = read(kc, row, n, kv_head), read(vc, row, n, kv_head)
        return _attend(q, k, v, s, kc.dtype, weights)

    return wrong


def _no_max(scores):
    e = scores.double().exp()  # float64 overflows past exp(709) and is 0 below exp(-745)
    return (e / e.sum()).float()


def _unnormalised(scores):
    return (scores - scores.max()).exp()


NO_MAX = msg(
    "inf or NaN where the answer is finite, on the cases whose scores lie far from 0: exp() of a "
    "score passes what a float holds near 88 in float32 and 709 in float64, and is 0 below about "
    "-745, so the softmax meets inf / inf or 0 / 0.",
    "답은 유한한데, 점수가 0에서 멀리 떨어진 사례에서 inf나 NaN이 나옵니다. 점수의 exp()는 "
    "float32에서는 88 근처, float64에서는 709 근처를 넘으면 표현 범위를 벗어나고 약 -745보다 "
    "작으면 0이 되므로, softmax 계산에 inf / inf나 0 / 0이 생깁니다.",
)
PHYSICAL = msg(
    "physical order instead of logical: right when seq_len fills whole blocks, wrong when the "
    "last block is partly filled, because the blocks were read sorted by id and not in the "
    "table's order.",
    "논리 순서가 아니라 물리 순서로 읽었습니다. seq_len이 블록을 꽉 채우면 맞고 마지막 블록이 "
    "일부만 찼으면 틀립니다. 블록을 테이블 순서가 아니라 id 순서로 읽었기 때문입니다.",
)
FACTOR = msg(
    "off by a constant factor in each case: every number of your output is the answer times the "
    "same amount (the softmax weights do not add up to 1).",
    "사례마다 상수배만큼 어긋납니다. 출력의 모든 숫자가 답에 같은 값을 곱한 것입니다(softmax "
    "가중치의 합이 1이 아닙니다).",
)
PAST_LEN = msg(
    "reads past seq_len: the slots after the sequence's last token (the last block's padding, "
    "or blocks past its last one) leak into the softmax.",
    "seq_len 너머까지 읽습니다. 시퀀스의 마지막 토큰 뒤 슬롯(마지막 블록의 빈자리나 마지막 "
    "블록 뒤의 블록)이 softmax에 섞여 들어갑니다.",
)
_MISTAKES = (
    (_mistake(weights=_no_max), NO_MAX),
    (_mistake(weights=_unnormalised), FACTOR),
    (
        _mistake(scale=lambda s, q: 1.0),
        msg(
            "right only on the cases whose scale is 1: the scores miss the factor `scale`.",
            "scale이 1인 사례에서만 맞습니다. 점수에 `scale` 배율이 빠져 있습니다.",
        ),
    ),
    (
        _mistake(scale=lambda s, q: q.shape[0] ** -0.5),
        msg(
            "right only on the cases whose scale is head_dim ** -0.5: the `scale` argument never "
            "reaches your scores.",
            "scale이 head_dim ** -0.5인 사례에서만 맞습니다. `scale` 인자가 점수 계산에 전혀 "
            "쓰이지 않습니다.",
        ),
    ),
    (
        _mistake(read=_via("whole_last_block")),
        PAST_LEN,
    ),
    (
        _mistake(read=lambda c, row, n, h: c[row.long()].flatten(0, 1)[:, h].float()),
        PAST_LEN,
    ),
    (
        _mistake(read=_via("pool_front")),
        msg(
            "the tokens come from the pool's first blocks, not from the sequence's: logical block "
            "i lives in physical block block_table_row[i].",
            "토큰을 시퀀스의 블록이 아니라 풀의 앞쪽 블록에서 읽습니다. 논리 블록 i는 물리 블록 "
            "block_table_row[i]에 있습니다.",
        ),
    ),
    (_mistake(read=_via("sorted_ids")), PHYSICAL),
    (_mistake(read=lambda c, row, n, h: _keys(c, row[row >= 0].sort().values, n, h)), PHYSICAL),
    (_mistake(read=_via("last_block_missing")), LAST_BLOCK_MISSING),
    (
        _mistake(read=lambda c, row, n, h: _keys(c, row, n, 0)),
        msg(
            "right only on the cases whose kv_head is 0: KV head 0 is read whatever kv_head says.",
            "kv_head가 0인 사례에서만 맞습니다. kv_head 값과 상관없이 KV 헤드 0을 읽습니다.",
        ),
    ),
    (
        _mistake(read=lambda c, row, n, h: _keys(c, row, n, slice(None))[h]),
        msg(
            "the softmax runs over the num_kv_heads heads of one token instead of over seq_len "
            "tokens: kv_head picked a token, not a head.",
            "softmax가 seq_len개 토큰이 아니라 한 토큰의 num_kv_heads개 헤드에 걸쳐 계산됩니다. "
            "kv_head로 헤드가 아니라 토큰을 골랐습니다.",
        ),
    ),
)


def _other_shape(got, want) -> bool:
    return hasattr(got, "shape") and tuple(got.shape) != tuple(want.shape)


_SYMPTOMS = (
    (on_every(nan_where_finite), NO_MAX),
    (on_every(constant_factor), FACTOR),
    (
        on_every(_other_shape),
        msg(
            "the output has another shape than (head_dim,): one query head's attention is one "
            "vector of head_dim numbers.",
            "출력의 형상이 (head_dim,)이 아닙니다. 쿼리 헤드 하나의 어텐션 결과는 head_dim개 "
            "숫자로 된 벡터 하나입니다.",
        ),
    ),
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
    scores = _keys(kc, row, n, kv_head).double() @ q.double() * scale
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
    from ..attention import reference

    return [  # the library's attention, every module of it, and torch's
        ("paged.gather_kv", reference.gather_kv),
        ("paged.paged_attention_ref", reference.paged_attention_ref),
        "paged.attention.reference",
        "paged.attention.kernel",
        "paged.attention.launch",
        "paged.attention.tiles",
        "paged.attention.balanced",
        "paged.attention.steps",
        "paged.model.attention_backend",
        guard.SDPA,
        guard.MHA,
    ]


SPEC = Spec(
    "decode_one_head",
    params=PARAMS,
    cases=_fixed_cases,
    answer=_truth,
    draw=_random_cases,
    slips=_MISTAKES,
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
