"""Checkers for the Triton chapters' exercises: they launch the learner's @triton.jit kernel.

The learner's @triton.jit kernel runs under Triton's CPU interpreter (or on the GPU where there
is one) on small cases built so that a typical mistake is recognised, not only detected. Output
buffers start filled with STUB_FILL: a kernel that writes nothing (the stub) is "not yet".
"""

from __future__ import annotations

__all__ = [
    "check_gather_kernel",
    "check_online_softmax_kernel",
]

STUB_FILL = 0.5  # never a cache address (those are integers) nor, exactly everywhere, attention
_GUARD = 4096  # elements of padding around the gather checker's buffers, so stray reads stay in

# (block_size, TILE, seq_len, num_blocks): TILE below, equal to and above block_size; 1 token.
_GATHER_CASES = ((4, 8, 13, 9), (16, 8, 17, 5), (1, 4, 6, 10), (8, 16, 8, 4), (4, 4, 1, 5))
_GATHER_ROW = 8  # numbers per token (num_kv_heads * head_dim)
_GATHER_MISTAKES = (
    (lambda tb, p, bs, row, c: (tb[p] * bs + p % bs) * row + c,
     "you indexed the block table by token position (block_table[pos]); it holds one entry per "
     "logical block: use block_table[pos // BLOCK_SIZE]."),
    (lambda tb, p, bs, row, c: (tb[p // bs] * bs + p) * row + c,
     "the offset inside the physical block is pos % BLOCK_SIZE, not pos: you read past the end "
     "of the block, into another block's slots."),
    (lambda tb, p, bs, row, c: p * row + c,
     "you read token pos from slot pos, as if the cache were contiguous: look up its physical "
     "block in the block table first."),
    (lambda tb, p, bs, row, c: tb[p // bs] * bs + p % bs + c,
     "block * BLOCK_SIZE + offset is a slot (one token's row), and each row holds ROW numbers: "
     "multiply the slot by ROW before adding the column."),
    (lambda tb, p, bs, row, c: (tb[p // bs] + p % bs) * row + c,
     "a physical block holds BLOCK_SIZE rows, so block b starts at row b * BLOCK_SIZE: the slot "
     "is block * BLOCK_SIZE + offset, not block + offset."),
)  # fmt: skip


def _is_kernel(kernel) -> bool:
    return callable(getattr(kernel, "__getitem__", None))


def _launch(name: str, launch, *args, **kwargs) -> bool:
    """Call launch(*args, **kwargs); print why and return False if the kernel raised."""
    try:
        launch(*args, **kwargs)
    except Exception as exc:  # a compile or launch error in the learner's kernel
        msg = " ".join(str(exc).split())[:400]
        print(f"{name}: your kernel did not run: {type(exc).__name__}: {msg}")
        print("  hint: launch it once by hand to see the whole error, with the line it points at.")
        return False
    return True


def _gather_case(bs, num_blocks, seq_len, seed, device):
    """Cache whose every number is its own address; a shuffled table; guarded buffers."""
    import torch

    g = torch.Generator().manual_seed(seed)
    n_elems = num_blocks * bs * _GATHER_ROW
    flat = torch.arange(-_GUARD, n_elems + _GUARD, dtype=torch.float32)  # value = address
    used = -(-seq_len // bs)
    ids = torch.randperm(num_blocks, generator=g)[:used].to(torch.int32)
    table = torch.full((used + 1 + _GUARD,), -1, dtype=torch.int32)  # -1 past the last block
    table[:used] = ids
    out = torch.full((seq_len * _GATHER_ROW + _GUARD,), STUB_FILL)
    flat, table, out = flat.to(device), table.to(device), out.to(device)
    cache = flat[_GUARD : _GUARD + n_elems].view(num_blocks, bs, _GATHER_ROW)
    return cache, table, out, ids.tolist()


def check_gather_kernel(kernel) -> bool:
    """kernel[(cdiv(seq_len, TILE),)](cache, block_table, out, seq_len, BLOCK_SIZE=, ROW=, TILE=).

    Copies one sequence's K rows, token positions tile by tile, from the paged cache
    (num_blocks, BLOCK_SIZE, ROW) into out (seq_len, ROW), through its block table row.
    """
    import torch

    from ..attention import gather_kv
    from ..attention.steps import default_device

    name = "gather_kernel"
    if not _is_kernel(kernel):
        print(f"{name}: not yet: pass your @triton.jit kernel (got {type(kernel).__name__}).")
        return False
    device = default_device()
    for k, (bs, tile, seq_len, num_blocks) in enumerate(_GATHER_CASES):
        cache, table, out_buf, ids = _gather_case(bs, num_blocks, seq_len, seed=k, device=device)
        row = _GATHER_ROW
        grid = (-(-seq_len // tile),)
        launched = _launch(name, kernel[grid], cache, table, out_buf, seq_len,
                           BLOCK_SIZE=bs, ROW=row, TILE=tile)  # fmt: skip
        if not launched:
            return False
        got_all = out_buf.cpu()
        if torch.all(got_all == STUB_FILL):
            print(f"{name}: not yet: your kernel wrote nothing. Write its body and run again.")
            return False
        got = got_all[: seq_len * row].view(seq_len, row)
        want = gather_kv(cache, table, seq_len).cpu().view(seq_len, row)
        where = f"block_size {bs}, TILE {tile}, seq_len {seq_len}, block_table {ids}"
        if torch.any(got_all[seq_len * row :] != STUB_FILL):
            print(f"{name}: not quite ({where}): you wrote rows past seq_len.")
            print("  hint: mask the store with pos < seq_len: the last tile runs past the end.")
            return False
        if torch.equal(got, want):
            continue
        tb = table.cpu().long()
        p = torch.arange(seq_len)[:, None]
        c = torch.arange(row)[None, :]
        bad = int(torch.nonzero((got != want).any(1))[0])
        read = got[bad, 0].item()
        if read == STUB_FILL:
            print(f"{name}: not quite ({where}): token {bad} was never written.")
            print("  hint: program i handles positions i * TILE + arange(0, TILE); does every "
                  "program load and store its whole tile?")  # fmt: skip
            return False
        if not float(read).is_integer():
            print(f"{name}: not quite ({where}): token {bad} holds {read}, not a number from the "
                  "cache: store the values you loaded.")  # fmt: skip
            return False
        slot, want_slot = int(read) // row, int(want[bad, 0].item()) // row
        print(f"{name}: not quite ({where}): token {bad} was read from slot {slot} "
              f"(block {slot // bs}, offset {slot % bs}); it lives in slot {want_slot} "
              f"(block {want_slot // bs}, offset {want_slot % bs}).")  # fmt: skip
        hint = next((h for rule, h in _GATHER_MISTAKES
                     if torch.equal(got, rule(tb, p, bs, row, c).float())), None)  # fmt: skip
        print("  hint: " + (hint or "token pos lives in physical block block_table[pos // "
                            "BLOCK_SIZE], at offset pos % BLOCK_SIZE: its row starts at "
                            "(block * BLOCK_SIZE + offset) * ROW."))  # fmt: skip
        return False
    print(f"{name}: correct ({len(_GATHER_CASES)} cases: block sizes 1-16, tiles 4-16, "
          "shuffled tables).")  # fmt: skip
    return True


# (block_size, seq_lens, num_q_heads, num_kv_heads, TILE, q_scale): scores of a few units, so the
# running max moves between tiles; the last case has scores in the hundreds, where exp overflows.
_SOFTMAX_CASES = (
    (4, (1, 4, 5, 21), 4, 2, 8, 3.0),
    (16, (16, 17, 40), 4, 1, 16, 3.0),
    (1, (3, 9), 2, 2, 4, 3.0),
    (4, (6, 19), 2, 1, 8, 60.0),
)
_RESCALE_HINT = (
    "when the running max grows from m_i to m_new, the old l_i and acc were summed in units "
    "of exp(-m_i): multiply BOTH by alpha = exp(m_i - m_new) before adding this tile."
)
_SOFTMAX_MISTAKES = (
    ("no_rescale", "you never rescale the old l_i and acc: " + _RESCALE_HINT),
    ("tile_max", "you subtract each tile's own max and never correct the earlier tiles: "
     + _RESCALE_HINT),
    ("l_only", "you rescale l_i but not acc: " + _RESCALE_HINT),
    ("acc_only", "you rescale acc but not l_i: " + _RESCALE_HINT),
    ("no_mask", "positions past seq_len in the last tile got a score of 0.0 and a weight: set "
     "their scores to -inf with tl.where(mask, s, float('-inf')) before the max and the exp."),
)  # fmt: skip


def _online_softmax_variant(q, k, v, scale, tile, variant):
    """One (sequence, query head) by the tile loop, right ("right") or with a typical mistake."""
    import torch

    m = torch.tensor(float("-inf"), dtype=torch.float64)
    l_sum = torch.tensor(0.0, dtype=torch.float64)
    acc = torch.zeros(q.shape[-1], dtype=torch.float64)
    for t0 in range(0, k.shape[0], tile):
        s, vt = k[t0 : t0 + tile] @ q * scale, v[t0 : t0 + tile]
        if variant == "no_mask":  # the masked loads gave k = v = 0 there: score 0.0
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


def _online_softmax_outputs(q, k_cache, v_cache, block_table, seq_lens, tile, variant):
    import torch

    from ..attention import gather_kv

    num_seqs, num_q_heads, head_dim = q.shape
    group = num_q_heads // k_cache.shape[2]
    out = torch.empty(num_seqs, num_q_heads, head_dim, dtype=torch.float64)
    for i, n in enumerate(seq_lens.tolist()):
        k = gather_kv(k_cache, block_table[i], n).cpu().double()
        v = gather_kv(v_cache, block_table[i], n).cpu().double()
        for h in range(num_q_heads):
            qh = q[i, h].cpu().double()
            out[i, h] = _online_softmax_variant(qh, k[:, h // group], v[:, h // group],
                                                head_dim**-0.5, tile, variant)  # fmt: skip
    return out


def check_online_softmax_kernel(kernel) -> bool:
    """kernel[(num_seqs, num_q_heads)](q, k_cache, v_cache, block_table, seq_lens, out, scale,
    max_blocks, BLOCK_SIZE=, KV_HEADS=, GROUP=, HEAD_DIM=, TILE=): step 4's tile loop.
    """
    import torch

    from ..attention import paged_attention_ref
    from ..attention.steps import launch_attention, make_case

    name = "online_softmax"
    if not _is_kernel(kernel):
        print(f"{name}: not yet: pass your @triton.jit kernel (got {type(kernel).__name__}).")
        return False
    for k, (bs, lens, num_q, num_kv, tile, q_scale) in enumerate(_SOFTMAX_CASES):
        args = make_case(lens, bs, num_q, num_kv, seed=10 + k, q_scale=q_scale)
        out = torch.full_like(args[0], STUB_FILL)
        if not _launch(name, launch_attention, kernel, *args, tile=tile, out=out):
            return False
        got = out.cpu().double()
        if torch.all(got == STUB_FILL):
            print(f"{name}: not yet: nothing was written (l_i stayed 0). Write the update "
                  "and run again.")  # fmt: skip
            return False
        want = paged_attention_ref(*args).cpu().double()
        if torch.allclose(got, want, atol=1e-4, rtol=1e-4):
            continue
        where = f"block_size {bs}, TILE {tile}, seq_lens {list(lens)}"
        err = (got - want).abs().max().item()
        print(f"{name}: not quite ({where}): max error {err:.3g} against paged_attention_ref.")
        if not torch.isfinite(got).all():
            if q_scale > 10:
                hint = ("exp(s) overflows float32 for scores above ~88: subtract the running "
                        "max first, p = exp(s - m_new).")  # fmt: skip
            else:
                hint = ("NaN or inf: on the first tile m_i is still -inf, so exp(s - m_i) "
                        "or exp(m_new - m_i) is inf. Use p = exp(s - m_new) and alpha = "
                        "exp(m_i - m_new) (0 on the first tile).")  # fmt: skip
        else:
            hint = next((h for variant, h in _SOFTMAX_MISTAKES if torch.allclose(
                got, _online_softmax_outputs(*args, tile, variant), atol=1e-4, rtol=1e-4)),
                "per tile: mask s; m_new = max(m_i, max(s)); alpha = exp(m_i - m_new); "
                "p = exp(s - m_new); l_i = l_i * alpha + sum(p); acc = acc * alpha + p @ v; "
                "m_i = m_new.")  # fmt: skip
        print(f"  hint: {hint}")
        return False
    print(f"{name}: correct ({len(_SOFTMAX_CASES)} batches: block sizes 1-16, several tiles "
          "per sequence, GQA, scores in the hundreds).")  # fmt: skip
    return True
