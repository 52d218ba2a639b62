"""Chapter 5's `decode_one_head` exercise: its checker, model answer and typical mistakes.

The model answer and answers written here in other valid styles are accepted on many seeds; the
typical mistakes are the spec's slips, each rejected with its hint in test_exercise_specs.py; the
contract (inputs untouched, no library shortcut, the cache's dtype) is enforced; the fixed cases
reach the edges the exercise is about; the texts speak Korean in the Korean edition.
"""

import math

import pytest
import torch

from paged.attention import reference
from paged.exercises import check_decode_one_head
from paged.exercises import decode as checker
from paged.exercises.answers import attention as attention_answers
from paged.exercises.engine import core
from paged.exercises.slips.decode import keys_of

pytestmark = pytest.mark.usefixtures("english")  # conftest.py

NAME = "decode_one_head"


def token_loop(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """Another valid style: token by token through the table, an explicit max, a Python sum."""
    bs = k_cache.shape[1]
    ks, vs = [], []
    for t in range(seq_len):
        block = int(block_table_row[t // bs])
        ks.append(k_cache[block, t % bs, kv_head].double())
        vs.append(v_cache[block, t % bs, kv_head].double())
    scores = [float(k @ q.double()) * scale for k in ks]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    out = sum(w * v for w, v in zip(weights, vs, strict=True)) / sum(weights)
    return out.to(k_cache.dtype)


def slot_softmax(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """Another valid style: slot numbers, torch.softmax, computed in the cache's own dtype."""
    bs = k_cache.shape[1]
    pos = torch.arange(seq_len)
    slots = block_table_row.long()[pos // bs] * bs + pos % bs
    k = k_cache.flatten(0, 1)[slots, kv_head]  # (seq_len, head_dim)
    v = v_cache.flatten(0, 1)[slots, kv_head]
    return torch.softmax((k.float() @ q.float()) * scale, dim=0).to(v.dtype) @ v


def logsumexp_style(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """Another valid style: weights as exp(score - logsumexp), the table's blocks one at a time."""
    bs = k_cache.shape[1]
    ks, vs = [], []
    for i in range(-(-seq_len // bs)):
        take = min(bs, seq_len - i * bs)
        ks.append(k_cache[int(block_table_row[i]), :take, kv_head])
        vs.append(v_cache[int(block_table_row[i]), :take, kv_head])
    scores = torch.cat(ks).float() @ q.float() * scale
    return ((scores - scores.logsumexp(0)).exp() @ torch.cat(vs).float()).to(q.dtype)


@pytest.mark.parametrize(
    "fn",
    [attention_answers.decode_one_head, token_loop, slot_softmax, logsumexp_style],
    ids=["model", "token-loop", "slot-softmax", "logsumexp"],
)
def test_right_answers_are_accepted_on_every_seed(verdict, fn):
    for seed in range(1, 9):
        ok, out = verdict(check_decode_one_head, fn, seed=seed)
        assert ok is True, out
        assert out.startswith(f"{NAME}: correct (")


# ---- wrong answers; the typical mistakes are the spec's slips (test_exercise_specs.py) -------
def _kv(k_cache, v_cache, row, n, h):
    bs = k_cache.shape[1]
    blocks = row[: -(-n // bs)].long()
    return (c[blocks].flatten(0, 1)[:n, h] for c in (k_cache, v_cache))


def no_max_float32(q, k_cache, v_cache, row, n, h, scale):
    k, v = _kv(k_cache, v_cache, row, n, h)
    e = ((k.float() @ q.float()) * scale).exp()
    return (e @ v.float() / e.sum()).to(k_cache.dtype)


def ignores_seq_len(q, k_cache, v_cache, row, n, h, scale):
    bs = k_cache.shape[1]
    blocks = row[: -(-n // bs)].long()
    k = k_cache[blocks].flatten(0, 1)[:, h]  # every slot of the used blocks
    v = v_cache[blocks].flatten(0, 1)[:, h]
    return torch.softmax(k.float() @ q.float() * scale, 0).to(v.dtype) @ v


def test_no_max_in_float32_is_named_by_where_exp_overflows(verdict):
    """Not the float64 slip of the spec: its own hint, from its own wrong answers."""
    ok, out = verdict(check_decode_one_head, no_max_float32)
    assert ok is False and out.startswith(f"{NAME}: not quite") and "near 88 in float32" in out


def in_the_cache_dtype(q, k_cache, v_cache, row, n, h, scale):
    """Every step in float16 or bfloat16 when the cache is: right while the scores stay near 0."""
    bs = k_cache.shape[1]
    blocks = row[: -(-n // bs)].long()
    k = k_cache[blocks].flatten(0, 1)[:n, h]
    v = v_cache[blocks].flatten(0, 1)[:n, h]
    return torch.softmax(scale * (k @ q), 0) @ v


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_half_precision_arithmetic_fails_where_the_scores_lie_far_from_0(verdict, seed):
    ok, out = verdict(check_decode_one_head, in_the_cache_dtype, seed=seed)
    assert ok is False and "hint: wrong only on the float16 and bfloat16 caches" in out, out


def test_the_hints_name_the_symptom_not_the_recipe():
    texts = [str(h) for _, h in core.slips(checker.SPEC)] + [str(h) for _, h in checker._SYMPTOMS]
    for text in texts:
        for recipe in ("max()", "subtract", ".sort", "[:seq_len]", "torch.softmax", "h // group"):
            assert recipe not in text, (recipe, text)


def mutates_the_cache(q, k_cache, v_cache, row, n, h, scale):
    bs = k_cache.shape[1]
    blocks = row[: -(-n // bs)].long()
    k = k_cache[int(row[0])].flatten(0, 1)  # a view into the cache, not a copy
    k.mul_(scale)  # scale the keys "in place", once: the caller's cache changes
    k = k_cache[blocks].flatten(0, 1)[:n, h]
    v = v_cache[blocks].flatten(0, 1)[:n, h]
    return torch.softmax(k.float() @ q.float(), 0).to(v.dtype) @ v


def clamps_the_table(q, k_cache, v_cache, row, n, h, scale):
    row.clamp_(min=0)  # "-1 is not a block"
    return slot_softmax(q, k_cache, v_cache, row, n, h, scale)


def calls_gather_kv(q, k_cache, v_cache, row, n, h, scale):
    k = reference.gather_kv(k_cache, row, n)[:, h]
    v = reference.gather_kv(v_cache, row, n)[:, h]
    return torch.softmax(k.float() @ q.float() * scale, 0).to(v.dtype) @ v


CONTRACT = {
    "mutates the cache": (mutates_the_cache, "changed its argument `k_cache`"),
    "clamps the table": (clamps_the_table, "changed its argument `block_table_row`"),
    "calls gather_kv": (calls_gather_kv, "calls paged.gather_kv, the library's own code"),
    "float64 from float32": (
        lambda *a: slot_softmax(*a).double(),
        "the values are right, but the answer is a tensor of dtype torch.float64",
    ),
    "float32 from bfloat16": (
        lambda *a: slot_softmax(*a).float(),
        "dtype torch.float32; its input is torch.bfloat16",
    ),
    "one row too many": (
        lambda *a: slot_softmax(*a)[None],
        "shape is (1, 4); the expected one's is (4,)",
    ),
}


@pytest.mark.parametrize("name", CONTRACT)
def test_the_contract_is_enforced(verdict, name):
    fn, phrase = CONTRACT[name]
    ok, out = verdict(check_decode_one_head, fn, seed=1)  # seed 1 draws a bfloat16 case
    assert ok is False
    assert out.startswith(f"{NAME}: not quite") and phrase in out, out


def test_the_fixed_cases_reach_the_edges():
    cases = checker.SPEC.cases()
    bs = [c[1].shape[1] for c in cases]
    lens = [c[4] for c in cases]
    assert 1 in lens and 1 in bs and max(bs) >= 16
    assert any(n % b == 0 for n, b in zip(lens, bs, strict=True))  # an exact block boundary
    assert any(n % b for n, b in zip(lens, bs, strict=True))  # a partly filled last block
    rows = [c[3][: -(-n // b)].tolist() for c, n, b in zip(cases, lens, bs, strict=True)]
    assert any(r == sorted(r, reverse=True) and len(r) > 2 for r in rows)  # decreasing
    assert any(r != sorted(r) and r != sorted(r, reverse=True) for r in rows)  # scattered
    assert any(c[5] > 0 for c in cases) and any(c[5] == 0 for c in cases)
    scores = [keys_of(c[1], c[3], c[4], c[5]).double() @ c[0].double() * c[6] for c in cases]
    assert any(bool((s >= 1000).all()) for s in scores)  # exp() overflows even float64
    assert any(bool((s <= -1000).all()) for s in scores)  # all negative: exp() underflows to 0
    assert any(math.isclose(c[6], 1.0) for c in cases) and any(c[6] != 1.0 for c in cases)


def test_the_random_cases_draw_the_extremes():
    import random

    pairs = checker.SPEC.draw(random.Random(3)) + checker.SPEC.draw(random.Random(4))
    dtypes = {str(args[1].dtype) for args, _ in pairs}
    assert {"torch.float32", "torch.float16", "torch.bfloat16"} <= dtypes
    assert any(args[4] == 1 for args, _ in pairs)
    scores = [keys_of(a[1], a[3], a[4], a[5]).double() @ a[0].double() * a[6] for a, _ in pairs]
    assert any(bool((s.abs() >= 1000).all()) for s in scores)
    assert any(bool((s < 0).all()) for s in scores)
    tables = [a[3][: -(-a[4] // a[1].shape[1])].tolist() for a, _ in pairs]
    assert any(len(t) > 2 and t == sorted(t, reverse=True) for t in tables)


def test_verdicts_and_hints_speak_korean_in_the_korean_edition(monkeypatch, verdict):
    monkeypatch.setenv("PAGED_LANG", "ko")
    ok, out = verdict(check_decode_one_head, ignores_seq_len)
    assert ok is False and "아직 아닙니다" in out and "seq_len 너머까지 읽습니다" in out, out
    assert verdict(check_decode_one_head, attention_answers.decode_one_head)[1].startswith(
        f"{NAME}: 정답입니다"
    )
