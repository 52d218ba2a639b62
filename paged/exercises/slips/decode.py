"""Slips of decode attention of one query head through a block table (chapter 5): the softmax
(no max, unnormalised weights), the scale, and the gather inside it (`attention.GATHERS`,
wrapped), each a wrong `decode_one_head`."""

from __future__ import annotations

from ...text import msg
from .attention import GATHERS, LAST_BLOCK_MISSING, _used
from .base import slip


def _via(concept):
    """A K/V read by one of the gather's slips (`slips.GATHERS`), in KV head h, in float32."""
    gather = GATHERS[concept]
    return lambda c, row, n, h: gather(c, row, n)[:, h].float()


def keys_of(cache, row, n, kv_head):
    """The sequence's rows of KV head kv_head, logical order, in float32: (n, head_dim)."""
    return cache[_used(row, n, cache.shape[1])].flatten(0, 1)[:n, kv_head].float()


def _attend(q, k, v, scale, dtype, weights=None):
    """softmax(scale * k @ q) @ v, in float32, back in `dtype` (weights: another softmax)."""
    scores = (k @ q.float()) * scale
    w = scores.softmax(0) if weights is None else weights(scores)
    return (w @ v).to(dtype)


def _mistake(read=keys_of, weights=None, scale=None):
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
HALF = msg(
    "wrong only on the float16 and bfloat16 caches whose scores lie far from 0: those "
    "scores, and the differences between them, need more bits than half precision keeps.",
    "점수가 0에서 멀리 떨어진 float16, bfloat16 캐시에서만 틀립니다. 그런 점수와 점수 "
    "사이의 차이는 반정밀도가 담을 수 있는 것보다 많은 비트가 필요합니다.",
)
DECODE = {
    "decode.no_max": (
        _mistake(weights=_no_max),
        NO_MAX,
    ),
    "decode.unnormalised": (
        _mistake(weights=_unnormalised),
        FACTOR,
    ),
    "decode.scale_one": slip(
        _mistake(scale=lambda s, q: 1.0),
        "right only on the cases whose scale is 1: the scores miss the factor `scale`.",
        "scale이 1인 사례에서만 맞습니다. 점수에 `scale` 배율이 빠져 있습니다.",
    ),
    "decode.scale_default": slip(
        _mistake(scale=lambda s, q: q.shape[0] ** -0.5),
        "right only on the cases whose scale is head_dim ** -0.5: the `scale` argument never "
        "reaches your scores.",
        "scale이 head_dim ** -0.5인 사례에서만 맞습니다. `scale` 인자가 점수 계산에 전혀 "
        "쓰이지 않습니다.",
    ),
    "decode.whole_last_block": (
        _mistake(read=_via("whole_last_block")),
        PAST_LEN,
    ),
    "decode.whole_blocks": (
        _mistake(read=lambda c, row, n, h: c[row.long()].flatten(0, 1)[:, h].float()),
        PAST_LEN,
    ),
    "decode.pool_front": slip(
        _mistake(read=_via("pool_front")),
        "the tokens come from the pool's first blocks, not from the sequence's: logical block "
        "i lives in physical block block_table_row[i].",
        "토큰을 시퀀스의 블록이 아니라 풀의 앞쪽 블록에서 읽습니다. 논리 블록 i는 물리 블록 "
        "block_table_row[i]에 있습니다.",
    ),
    "decode.sorted_ids": (
        _mistake(read=_via("sorted_ids")),
        PHYSICAL,
    ),
    "decode.sorted_row": (
        _mistake(read=lambda c, row, n, h: keys_of(c, row[row >= 0].sort().values, n, h)),
        PHYSICAL,
    ),
    "decode.last_block_missing": (
        _mistake(read=_via("last_block_missing")),
        LAST_BLOCK_MISSING,
    ),
    "decode.head_zero": slip(
        _mistake(read=lambda c, row, n, h: keys_of(c, row, n, 0)),
        "right only on the cases whose kv_head is 0: KV head 0 is read whatever kv_head says.",
        "kv_head가 0인 사례에서만 맞습니다. kv_head 값과 상관없이 KV 헤드 0을 읽습니다.",
    ),
    "decode.scale_divided": slip(
        _mistake(scale=lambda s, q: 1 / s),
        "your scores are divided by `scale` where they are multiplied by it: right only on the "
        "cases whose scale is 1.",
        "점수에 `scale`을 곱해야 할 자리에서 나눴습니다. scale이 1인 사례에서만 맞습니다.",
    ),
    "decode.k_v_swapped": slip(
        lambda q, kc, vc, *rest: _mistake()(q, vc, kc, *rest),
        "k_cache and v_cache swapped roles: the scores came from the values and the weighted "
        "sum from the keys.",
        "k_cache와 v_cache의 역할이 바뀌었습니다. 점수는 값(V)에서, 가중합은 키(K)에서 나왔습니다.",
    ),
    "decode.one_short": slip(
        _mistake(read=lambda c, row, n, h: keys_of(c, row, n, h)[: n - 1]),
        "the sequence's last token is left out: your output is attention over its first "
        "seq_len - 1 tokens.",
        "시퀀스의 마지막 토큰이 빠졌습니다. 출력이 처음 seq_len - 1개 토큰에 대한 어텐션입니다.",
    ),
    "decode.weight_one": slip(
        _mistake(weights=lambda scores: scores * 0 + 1),
        "your output is the plain sum of the values: every token got weight 1, which is what a "
        "softmax over an axis of length one gives.",
        "출력이 값(V)을 그냥 더한 것입니다. 모든 토큰의 가중치가 1인데, 길이가 1인 축에 대한 "
        "softmax가 바로 그 값을 줍니다.",
    ),
    "decode.head_as_token": slip(
        _mistake(read=lambda c, row, n, h: keys_of(c, row, n, slice(None))[h]),
        "the softmax runs over the num_kv_heads heads of one token instead of over seq_len "
        "tokens: kv_head picked a token, not a head.",
        "softmax가 seq_len개 토큰이 아니라 한 토큰의 num_kv_heads개 헤드에 걸쳐 계산됩니다. "
        "kv_head로 헤드가 아니라 토큰을 골랐습니다.",
    ),
}
