"""What an online-softmax kernel with a typical mistake stores, so its checker can name it.

`online_softmax_outputs(*case, tile, variant)` runs the tile loop in float64 on a paged case,
right or with one mistake ("no_rescale", "tile_max", "l_only", "acc_only", "no_mask",
"head_mod"), and returns what such a kernel would leave in out.
"""

from __future__ import annotations

import torch

__all__: list[str] = []  # used by kernels_attention.py


def _variant(q, k, v, scale, tile, variant):
    """One (sequence, query head) by the tile loop, right or with a typical mistake (float64)."""
    m = torch.tensor(float("-inf"), dtype=torch.float64)
    l_sum, acc = torch.tensor(0.0, dtype=torch.float64), torch.zeros(q.shape[-1]).double()
    for t0 in range(0, k.shape[0], tile):
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


def online_softmax_outputs(q, k_cache, v_cache, block_table, seq_lens, tile, variant):
    """What an online-softmax kernel with `variant` ("right", "head_mod", ...) stores."""
    from ..attention import gather_kv

    num_seqs, num_q_heads, head_dim = q.shape
    kvh = k_cache.shape[2]
    out = torch.empty(num_seqs, num_q_heads, head_dim, dtype=torch.float64)
    for i, n in enumerate(seq_lens.tolist()):
        k = gather_kv(k_cache, block_table[i], n).cpu().double()
        v = gather_kv(v_cache, block_table[i], n).cpu().double()
        for h in range(num_q_heads):
            j = h % kvh if variant == "head_mod" else h // (num_q_heads // kvh)
            out[i, h] = _variant(
                q[i, h].cpu().double(),
                k[:, j],
                v[:, j],
                head_dim**-0.5,
                tile,
                "right" if variant == "head_mod" else variant,
            )
    return out
