"""Slips of the tile loop (chapter 6, steps 4a and 4b): what a kernel with a typical mistake
stores (in float64, on a paged case), so that its checker can name it: `online_softmax_outputs`
for the online softmax, `known_max_outputs` for the loop given each head's largest score
(`max_scores`).
"""

from __future__ import annotations

import torch

__all__: list[str] = []  # used by kernels_attention.py


def _variant(q, k, v, scale, tile, variant):
    """One (sequence, query head) by the tile loop, right or with a typical mistake (float64)."""
    m = torch.tensor(float("-inf"), dtype=torch.float64)
    l_sum, acc = torch.tensor(0.0, dtype=torch.float64), torch.zeros(q.shape[-1]).double()
    n = k.shape[0] - k.shape[0] % tile if variant == "whole_tiles" else k.shape[0]
    for t0 in range(0, n, tile):
        s, vt = k[t0 : t0 + tile] @ q * scale, v[t0 : t0 + tile]
        if variant == "no_mask":  # masked loads gave k = v = 0 there: score 0.0
            pad = tile - s.shape[0]
            s = torch.cat([s, s.new_zeros(pad)])
            vt = torch.cat([vt, vt.new_zeros(pad, vt.shape[1])])
        if variant == "tile_max":
            p = torch.exp(s - s.max())
            l_sum, acc = l_sum + p.sum(), acc + p @ vt
            continue
        m_new = torch.maximum(m, s.max())
        alpha, p = torch.exp(m - m_new), torch.exp(s - m_new)
        a_l = 1.0 if variant in ("no_rescale", "acc_only") else alpha
        a_acc = 1.0 if variant in ("no_rescale", "l_only") else alpha
        l_sum, acc, m = l_sum * a_l + p.sum(), acc * a_acc + p @ vt, m_new
    return acc / l_sum


def _heads(q, k_cache, v_cache, block_table, seq_lens, variant):
    """(sequence, query head, n, q, K, V) in float64, K/V of the head's KV head (or h % KV)."""
    from ...attention import gather_kv

    num_q_heads, kvh = q.shape[1], k_cache.shape[2]
    for i, n in enumerate(seq_lens.tolist()):
        k = gather_kv(k_cache, block_table[i], n).cpu().double()
        v = gather_kv(v_cache, block_table[i], n).cpu().double()
        for h in range(num_q_heads):
            if variant == "head_mod":  # dealt out in turn
                j = h % kvh
            elif variant == "head_div":  # runs of KV_HEADS query heads (raises past the last)
                j = h // kvh
            else:
                j = h // (num_q_heads // kvh)
            yield i, h, n, q[i, h].cpu().double(), k[:, j], v[:, j]


def online_softmax_outputs(q, k_cache, v_cache, block_table, seq_lens, tile, variant, *, scale):
    """What an online-softmax kernel stores, right or with `variant` ("no_rescale", "tile_max",
    "l_only", "acc_only", "no_mask", "head_mod", "head_div", "whole_tiles": the partial last tile
    left out)."""
    out = torch.empty(q.shape, dtype=torch.float64)
    loop = "right" if variant.startswith("head_") else variant  # the right loop, other heads
    for i, h, _, qh, k, v in _heads(q, k_cache, v_cache, block_table, seq_lens, variant):
        out[i, h] = _variant(qh, k, v, scale, tile, loop)
    return out


def max_scores(q, k_cache, v_cache, block_table, seq_lens, *, scale):
    """The largest score q . k * scale of each (sequence, query head), float64."""
    m = torch.empty(q.shape[:2], dtype=torch.float64)
    for i, h, _, qh, k, _ in _heads(q, k_cache, v_cache, block_table, seq_lens, "right"):
        m[i, h] = (k @ qh).max() * scale
    return m


def known_max_outputs(q, k_cache, v_cache, block_table, seq_lens, m, tile, variant, *, scale):
    """What a known-max kernel stores, right or with `variant` ("no_divide", "no_mask",
    "head_mod", "head_div", "whole_tiles")."""
    out = torch.empty(q.shape, dtype=torch.float64)
    for i, h, n, qh, k, v in _heads(q, k_cache, v_cache, block_table, seq_lens, variant):
        used = n - n % tile if variant == "whole_tiles" else n
        p = torch.exp(k[:used] @ qh * scale - m[i, h])
        v = v[:used]
        total = p.sum()
        if variant == "no_mask":  # the padded lanes of the last tile: k = 0, score 0.0, v = 0
            total = total + (-(-n // tile) * tile - n) * torch.exp(-m[i, h])
        out[i, h] = p @ v if variant == "no_divide" else (p @ v) / total
    return out
