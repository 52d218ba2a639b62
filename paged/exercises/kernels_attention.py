"""The attention puzzles of the kernel chapter: online softmax, GQA scores, split-K merge.

Helpers of `kernels.py`, which exports these checkers; see its docstring for how they check.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .kernel_cases import HINTS, output, paged_watch
from .kernel_cases import element as _element
from .kernel_cases import online_softmax_outputs as _outputs
from .kernel_cases import stray_store as _stray
from .triton_checks import (
    CORRECT,
    SENTINEL,
    UNMASKED_LOAD,
    Watch,
    device,
    first_difference,
    interpreted,
    launch,
    not_a_kernel,
    same,
    wrong,
    wrote_nothing,
)  # fmt: skip

__all__: list[str] = []  # exported by kernels.py

OUT = msg("head {head} of sequence {seq}: max error {err:.3g} against paged_attention_ref",
          "시퀀스 {seq}의 헤드 {head}: paged_attention_ref와의 최대 오차 {err:.3g}")
RESCALE = msg(
    "when the running max grows from m_i to m_new, the old l_i and acc were summed in units of "
    "exp(-m_i): multiply BOTH by alpha = exp(m_i - m_new) before adding this tile.",
    "누적 최댓값이 m_i에서 m_new로 커지면, 지금까지의 l_i와 acc는 exp(-m_i) 단위로 더해진 "
    "값입니다. 이 타일을 더하기 전에 둘 다 alpha = exp(m_i - m_new)를 곱하세요.")
SOFTMAX = {
    "no_rescale": msg("you never rescale the old l_i and acc: {why}",
                      "이전 l_i와 acc의 배율을 한 번도 다시 맞추지 않았습니다: {why}"),
    "tile_max": msg("you subtract each tile's own max and never correct the earlier tiles: {why}",
                    "타일마다 그 타일의 최댓값을 빼고 이전 타일은 고치지 않았습니다: {why}"),
    "l_only": msg("you rescale l_i but not acc: {why}",
                  "l_i의 배율은 다시 맞췄지만 acc는 그대로입니다: {why}"),
    "acc_only": msg("you rescale acc but not l_i: {why}",
                    "acc의 배율은 다시 맞췄지만 l_i는 그대로입니다: {why}"),
    "no_mask": msg(
        "positions past seq_len in the last tile got a score of 0.0 and a weight: set their "
        "scores to -inf with tl.where(mask, s, float('-inf')) before the max and the exp.",
        "마지막 타일에서 seq_len 이후 위치가 점수 0.0을 받아 가중치를 얻었습니다. max와 exp 전에 "
        "tl.where(mask, s, float('-inf'))로 그 점수를 -inf로 만드세요."),
    "overflow": msg(
        "exp(s) overflows float32 for scores above ~88: subtract the running max first, "
        "p = exp(s - m_new).",
        "점수가 약 88을 넘으면 float32에서 exp(s)가 넘칩니다. 누적 최댓값을 먼저 빼세요: "
        "p = exp(s - m_new)."),
    "nan": msg(
        "NaN or inf. Either m_i is still -inf on the first tile, so exp(s - m_i) or "
        "exp(m_new - m_i) is inf (use p = exp(s - m_new) and alpha = exp(m_i - m_new)); or a K or "
        "V load that is not masked with pos < seq_len read a slot with no token (NaN here, stale "
        "values on a GPU: an unmasked load), and 0 × NaN = NaN.",
        "NaN이나 inf입니다. 첫 타일에서 m_i가 아직 -inf라서 exp(s - m_i)나 exp(m_new - m_i)가 "
        "inf가 되었거나(p = exp(s - m_new), alpha = exp(m_i - m_new)를 쓰세요), pos < seq_len으로 "
        "마스크하지 않은 K나 V 로드가 토큰 없는 슬롯(여기서는 NaN, GPU에서는 오래된 값)을 읽어 "
        "0 × NaN = NaN이 되었습니다(마스크 없는 로드, unmasked load)."),
    "loop": msg(
        "per tile: mask s; m_new = max(m_i, max(s)); alpha = exp(m_i - m_new); p = exp(s - m_new); "
        "l_i = l_i * alpha + sum(p); acc = acc * alpha + p @ v; m_i = m_new.",
        "타일마다: s를 마스크하고, m_new = max(m_i, max(s)); alpha = exp(m_i - m_new); "
        "p = exp(s - m_new); l_i = l_i * alpha + sum(p); acc = acc * alpha + p @ v; "
        "m_i = m_new."),
}  # fmt: skip

# (block_size, seq_lens, num_q_heads, num_kv_heads, TILE, q_scale): TILE above, equal to and
# below the block size, block size 1, lengths on block boundaries; scores in the hundreds last.
SOFTMAX_CASES = (
    (4, (1, 4, 5, 21), 4, 2, 8, 3.0),
    (16, (16, 17, 40), 4, 1, 16, 3.0),
    (16, (9, 33), 2, 2, 8, 3.0),
    (1, (3, 9), 2, 2, 4, 3.0),
    (4, (6, 19), 2, 1, 8, 60.0),
)


def check_online_softmax_kernel(kernel) -> bool:
    """kernel[(num_seqs, num_q_heads)](q, k_cache, v_cache, block_table, seq_lens, out, scale,
    max_blocks, BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=): step 4's tile loop.
    """
    from ..attention import paged_attention_ref
    from ..attention.steps import launch_attention, make_case

    name = "online_softmax_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (bs, lens, num_q, num_kv, tile, q_scale) in enumerate(SOFTMAX_CASES):
        args = make_case(lens, bs, num_q, num_kv, seed=10 + k, q_scale=q_scale, poison=True)
        out_flat, out = output(args[0].shape, device(), args[0][0].numel())
        watch = paged_watch(*args, seq_axis=0)
        allowed = np.arange(out_flat.numel()) < out.numel()
        watch.add("out", out_flat, load=False, store=allowed, where=lambda i: f"out + {i}")
        if not launch(name, watch, launch_attention, kernel, *args, tile=tile, out=out):
            return False
        if bool((out_flat == SENTINEL).all()):
            return wrote_nothing(name)
        where = f"block_size {bs}, TILE {tile}, seq_lens {list(lens)}, q/kv heads {num_q}/{num_kv}"
        if stray := _stray(watch, out_flat, allowed):
            return wrong(name, where, stray, HINTS["store"])
        got, want = out.cpu().double(), paged_attention_ref(*args).cpu().double()
        if same(got, want, 1e-4):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        err = (got - want).abs().nan_to_num(float("inf")).amax(-1)
        i, h = (int(x) for x in np.unravel_index(int(err.argmax()), err.shape))
        what = OUT.format(seq=i, head=h, err=err[i, h].item())
        if not torch.isfinite(got).all():
            hint = (UNMASKED_LOAD if watch.describe("load") else
                    SOFTMAX["overflow" if q_scale > 10 else "nan"])
        elif same(got, _outputs(*args, tile, "head_mod"), 1e-4):
            hint = HINTS["head_mod"]
        else:
            found = (v for v in ("no_rescale", "tile_max", "l_only", "acc_only", "no_mask")
                     if same(got, _outputs(*args, tile, v), 1e-4))
            hint = SOFTMAX[next(found, "loop")].format(why=RESCALE)
        return wrong(name, where, what, hint)
    print(CORRECT.format(name=name, what=f"{len(SOFTMAX_CASES)} batches: block sizes 1-16, "
                                           "several tiles per sequence, GQA, scores in the "
                                           "hundreds"))
    return True


# ---- step 5 · a group's scores in one tl.dot -------------------------------------------------
# (block_size, seq_lens, num_q_heads, num_kv_heads): GROUP 2 with 2 and 3 KV heads, GROUP 4,
# MQA; every sequence fits in one TILE = 16; BLOCK_G = 16 rows.
GQA_CASES = ((4, (5, 16, 1), 4, 2), (1, (3, 12), 6, 3), (16, (16, 9), 8, 2), (8, (8,), 4, 1))


GQA = {
    "right": msg("the scores are right", "점수는 맞습니다"),
    "no_dot": msg(
        "the puzzle asks for the group's scores from one tl.dot, and your kernel has "
        "no tl.dot call that runs: the values may be right, but the tensor cores would sit idle.",
        "이 퍼즐은 그룹의 점수를 tl.dot 한 번으로 구하라고 합니다. 그런데 커널에서 실행되는 "
        "tl.dot 호출이 없습니다. 값은 맞을 수 있어도 텐서 코어는 쉬게 됩니다."),
    "precision": msg(
        "close, but not to float32 precision: the products lost bits (float16 or tf32 "
        "operands); the puzzle asks for full float32 products.",
        "가깝지만 float32 정밀도에는 못 미칩니다. 곱셈에서 비트를 잃었습니다(float16이나 tf32 "
        "피연산자). 이 퍼즐은 완전한 float32 곱을 요구합니다."),
}  # fmt: skip


def calls_dot(kernel) -> bool | None:
    """Whether the kernel's source calls tl.dot (None when its source cannot be read)."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(kernel, "fn", kernel))))
    except (OSError, TypeError, SyntaxError):
        return None
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "dot" for n in ast.walk(tree))  # fmt: skip


def check_gqa_scores_kernel(kernel) -> bool:
    """kernel[(num_seqs, KV_HEADS)](q, k_cache, block_table, seq_lens, scores, scale, max_blocks,
    BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=, BLOCK_G=): scores (num_seqs, num_q_heads,
    TILE), one tl.dot per (sequence, KV head) for its GROUP query heads; -inf past seq_len.
    """
    from ..attention import gather_kv
    from ..attention.steps import make_case

    name = "gqa_scores_kernel"
    if not_a_kernel(name, kernel):
        return False
    tile = block_g = 16
    for k, (bs, lens, num_q, num_kv) in enumerate(GQA_CASES):
        args = make_case(lens, bs, num_q, num_kv, seed=30 + k, poison=True)
        q, k_cache, table, seq_lens = args[0], args[1], args[3], args[4]
        D, group = q.shape[2], num_q // num_kv
        out_flat, out = output((len(lens), num_q, tile), device(), num_q * tile)
        watch = paged_watch(*args, with_v=False, seq_axis=0)
        allowed = np.arange(out_flat.numel()) < out.numel()
        watch.add("scores", out_flat, load=False, store=allowed,
                  where=lambda i, num_q=num_q: f"scores[{i // (num_q * tile)}, "
                                               f"{i // tile % num_q}, {i % tile}]")
        if not launch(name, watch, kernel[(len(lens), num_kv)], q, k_cache, table, seq_lens,
                      out_flat, D**-0.5, table.shape[1], BLOCK_SIZE=bs, KV_HEADS=num_kv,
                      GROUP=group, HEAD_DIM=D, TILE=tile, BLOCK_G=block_g):
            return False
        if bool((out_flat == SENTINEL).all()):
            return wrote_nothing(name)
        where = f"block_size {bs}, seq_lens {list(lens)}, q/kv heads {num_q}/{num_kv}"
        got = out.cpu().double()
        want, by_mod = (torch.full_like(got, float("-inf")) for _ in range(2))
        for i, n in enumerate(lens):
            keys = gather_kv(k_cache, table[i], n).cpu().double()  # (n, kv heads, D)
            for h in range(num_q):
                qh = q[i, h].cpu().double() * D**-0.5
                want[i, h, :n] = keys[:, h // group] @ qh
                by_mod[i, h, :n] = keys[:, h % num_kv] @ qh
        if stray := _stray(watch, out_flat, allowed):
            return wrong(name, where, stray, HINTS["group_rows"])
        if same(got, want, 1e-5):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            traced = watch.count["dot"] if interpreted() else None
            if (traced == 0) if traced is not None else calls_dot(kernel) is False:
                return wrong(name, where, GQA["right"], GQA["no_dot"])
            continue
        valid = torch.isfinite(want)
        if same(got, want, 1e-2):
            hint = GQA["precision"]
            return wrong(name, where, first_difference("scores", got, want, 1e-5), hint)
        if same(got[valid], want[valid], 1e-2):
            hint = HINTS["neg_inf"]
        elif same(got[valid], by_mod[valid], 1e-2):
            hint = HINTS["head_mod"]
        elif same(got[valid], want[valid] / D**-0.5, 1e-2):
            hint = HINTS["scale"]
        else:
            hint = UNMASKED_LOAD if watch.describe("load") else None
        return wrong(name, where, first_difference("scores", got, want, 1e-2), hint)
    print(CORRECT.format(name=name, what=f"{len(GQA_CASES)} batches: GROUP 1-4, 1-3 KV heads, "
                                           "block sizes 1-16"))
    return True


# ---- step 6 · the split-K merge ----------------------------------------------------------------
# (rows, num_parts, BLOCK_P, empty, shift): `empty` trailing partitions of row 0 hold no token
# (lse -inf, output 0, as the split kernel leaves them); `shift` puts the LSEs in the hundreds.
MERGE_CASES = ((3, 3, 4, 1, 0.0), (2, 1, 2, 0, 0.0), (2, 5, 8, 2, 0.0), (2, 4, 4, 1, 300.0))
PART, MERGE_DIM = 8, 16  # tokens per partition, head_dim
MERGE = {
    "overflow": msg(
        "inf or NaN with log-sum-exps in the hundreds: exp(lse) overflows float32 above ~88. "
        "Subtract the largest lse first: w_p = exp(lse_p - max lse) / sum_q exp(lse_q - max lse).",
        "log-sum-exp가 수백일 때 inf나 NaN이 나왔습니다. float32에서 exp(lse)는 약 88을 넘으면 "
        "넘칩니다. 가장 큰 lse를 먼저 빼세요: "
        "w_p = exp(lse_p - max lse) / sum_q exp(lse_q - max lse)."),
    "pad_zero": msg(
        "the padding lanes p >= num_parts came back with lse 0.0 and took a weight: load the LSEs "
        "with other=float('-inf'), whose weight exp(-inf) is exactly 0.",
        "p >= num_parts인 채움 레인이 lse 0.0으로 돌아와 가중치를 받았습니다. LSE는 "
        "other=float('-inf')로 읽으세요. 그 가중치 exp(-inf)는 정확히 0입니다."),
    "no_norm": msg(
        "the weights exp(lse_p - max lse) do not add up to 1: divide by their sum.",
        "가중치 exp(lse_p - max lse)의 합이 1이 아닙니다. 그 합으로 나누세요."),
    "mean": msg(
        "you averaged the partitions' outputs: a partition's share of the softmax is "
        "exp(lse_p) / sum_q exp(lse_q), not 1 / num_parts.",
        "부분 출력을 단순 평균했습니다. 소프트맥스에서 파티션의 몫은 1 / num_parts가 아니라 "
        "exp(lse_p) / sum_q exp(lse_q)입니다."),
    "store": msg(
        "each program writes its own row's HEAD_DIM outputs, nothing else.",
        "각 프로그램은 자기 행의 출력 HEAD_DIM개만 씁니다."),
}  # fmt: skip


def _merge_case(rows, parts, empty, shift, seed):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, parts * PART, generator=g).double() * 2 + shift
    values = torch.randn(rows, parts * PART, MERGE_DIM, generator=g).double()
    scores[0, (parts - empty) * PART :] = float("-inf")  # row 0 is a shorter sequence
    s = scores.view(rows, parts, PART)
    lse = torch.logsumexp(s, -1)  # (rows, parts): -inf for an empty partition
    weights = torch.softmax(s, -1).nan_to_num(0.0)  # an empty partition: all -inf, weights 0
    o = (weights[..., None] * values.view(rows, parts, PART, -1)).sum(2)
    want = torch.einsum("rt,rtd->rd", torch.softmax(scores, -1), values)
    return o, lse, want


def check_merge_kernel(kernel) -> bool:
    """kernel[(rows,)](part_out, part_lse, out, num_parts, HEAD_DIM=, BLOCK_P=): out[r] =
    sum_p w_p part_out[r, p], w = softmax over p of part_lse[r, p]; BLOCK_P >= num_parts.
    """
    name = "merge_kernel"
    if not_a_kernel(name, kernel):
        return False
    for k, (rows, parts, block_p, empty, shift) in enumerate(MERGE_CASES):
        o, lse, want = _merge_case(rows, parts, empty, shift, seed=40 + k)
        o_flat = torch.full((o.numel() + block_p * MERGE_DIM,), float("nan"))
        o_flat[: o.numel()] = o.flatten().float()
        l_flat = torch.full((lse.numel() + block_p,), float("nan"))
        l_flat[: lse.numel()] = lse.flatten().float()
        o_flat, l_flat = o_flat.to(device()), l_flat.to(device())
        out_flat, out = output((rows, MERGE_DIM), device(), MERGE_DIM)
        watch = Watch()
        shapes = {"part_out": (rows, parts, MERGE_DIM), "part_lse": (rows, parts),
                  "out": (rows, MERGE_DIM)}
        for (buf, shape), flat in zip(shapes.items(), (o_flat, l_flat, out_flat), strict=True):
            idx, w = np.arange(flat.numel()), int(np.prod(shape[1:]))

            def mine(pid, idx=idx, w=w):  # program r reads and writes row r only
                return (idx >= pid[0] * w) & (idx < (pid[0] + 1) * w)

            watch.add(buf, flat, load=mine if buf != "out" else False,
                      store=mine if buf == "out" else False,
                      where=lambda i, b=buf, s=shape: _element(b, s, i))
        if not launch(name, watch, kernel[(rows,)], o_flat, l_flat, out_flat, parts,
                      HEAD_DIM=MERGE_DIM, BLOCK_P=block_p):
            return False
        if bool((out_flat == SENTINEL).all()):
            return wrote_nothing(name)
        where = f"{rows} rows, num_parts {parts}, BLOCK_P {block_p}" + \
            (f", lse around {shift:.0f}" if shift else "")  # fmt: skip
        if stray := _stray(watch, out_flat, np.arange(out_flat.numel()) < out.numel()):
            return wrong(name, where, stray, MERGE["store"])
        got = out.cpu().double()
        if same(got, want, 1e-4):
            if watch.describe("load"):
                return wrong(name, where, watch.describe("load"), UNMASKED_LOAD)
            continue
        what = first_difference("out", got, want, 1e-4)
        return wrong(name, where, what, _merge_mistake(got, o, lse, block_p, shift, watch))
    print(CORRECT.format(name=name, what=f"{len(MERGE_CASES)} cases: empty partitions, BLOCK_P "
                                           "above num_parts, LSEs in the hundreds"))
    return True


def _merge_mistake(got, o, lse, block_p, shift, watch):
    pad = lse.new_zeros(lse.shape[0], block_p - lse.shape[1])
    w_pad = torch.softmax(torch.cat([lse, pad], 1), 1)[:, : lse.shape[1]]
    e = torch.exp(lse - lse.max(1, keepdim=True).values)
    if not torch.isfinite(got).all() and shift > 10:
        return MERGE["overflow"]
    for key, guess in (("pad_zero", torch.einsum("rp,rpd->rd", w_pad, o)),
                       ("no_norm", torch.einsum("rp,rpd->rd", e, o)), ("mean", o.mean(1))):
        if same(got, guess, 1e-4):
            return MERGE[key]
    return UNMASKED_LOAD if watch.describe("load") else None
