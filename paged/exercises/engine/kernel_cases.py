"""The kernel chapter's checkers' cases: what a paged kernel may read, and how mistakes read.

`paged_watch` registers a paged case's tensors (`steps.make_case(..., poison=True)`) with the
elements a correct kernel may load (the sequences' tokens in K and V, the used entries of the
block table, q, seq_lens); `read_by_rule` evaluates one of `slips.ADDRESS_RULES` (the typical
wrong addresses of a K row) on a case, so that a checker can recognise the mistake from what
the kernel stored; `extreme_scores` and `rising_scores` make a case's scores hard for a softmax.
"""

from __future__ import annotations

import numpy as np
import torch

from ...text import msg
from .triton_checks import SENTINEL, Watch, whole

__all__: list[str] = []  # helpers for kernels.py

BEFORE = msg(
    "{name} before its first block (block -1: a -1 table entry used as a block id?)",
    "{name}의 첫 블록 앞(블록 -1: 테이블의 -1 항목을 블록 id로 썼나요?)",
)
AFTER = msg("{name} past its last block", "{name}의 마지막 블록 너머")
SLOT = msg(
    "{name} slot {slot} (block {block}, offset {offset}), which holds no token of this "
    "program's sequence",
    "{name} 슬롯 {slot}(블록 {block}, 오프셋 {offset}), 이 "
    "프로그램이 맡은 시퀀스의 토큰이 없는 슬롯",
)
ENTRY = msg(
    "block_table[{seq}, {col}], which is not one of the {used} entries of this program's sequence",
    "block_table[{seq}, {col}], 이 프로그램이 맡은 시퀀스의 항목 {used}개 중 하나가 아닌 곳",
)
PAST = msg("{name} past its end", "{name}의 끝 너머")


def table_as_read(table_row: torch.Tensor, length: int) -> torch.Tensor:
    """The values a kernel reads at block_table_ptr + i for i < length (-1 past the buffer)."""
    flat, start = whole(table_row).cpu().long(), table_row.storage_offset()
    out = torch.full((length,), -1, dtype=torch.long)
    n = max(0, min(length, flat.numel() - start))
    out[:n] = flat[start : start + n]
    return out


def read_by_rule(flat: torch.Tensor, start: int, addr: torch.Tensor) -> torch.Tensor:
    """flat[start + addr] as float64, NaN where the address lies outside the allocation."""
    index = addr.long() + start
    inside = (index >= 0) & (index < flat.numel())
    out = torch.full(index.shape, float("nan"), dtype=torch.float64)
    out[inside] = flat.cpu().double()[index[inside]]
    return out


def cache_words(name, start, block_size, row, num_slots):
    """flat element index of a cache allocation -> words for a verdict."""

    def where(i):
        rel = i - start
        if rel < 0:
            return BEFORE.format(name=name)
        if rel >= num_slots * row:
            return AFTER.format(name=name)
        slot = rel // row
        return SLOT.format(name=name, slot=slot, block=slot // block_size, offset=slot % block_size)

    return where


def paged_watch(q, k_cache, v_cache, block_table, seq_lens, with_v=True, seq_axis=None) -> Watch:
    """A Watch over a paged case: each buffer with the elements a correct kernel may load.

    With `seq_axis`, program_id(seq_axis) is the sequence, and a program may read only its own
    sequence's tokens and table entries.
    """
    watch = Watch()
    num_blocks, block_size, num_kv_heads, head_dim = k_cache.shape
    row, width = num_kv_heads * head_dim, block_table.shape[1]
    t_flat, t_start = whole(block_table), block_table.storage_offset()
    k_flat = whole(k_cache)
    num_seqs = len(seq_lens)
    may_kv = np.zeros((num_seqs + 1, k_flat.numel()), bool)  # row num_seqs: any sequence
    may_t = np.zeros((num_seqs + 1, t_flat.numel()), bool)
    users = {}
    for i, (tb, n) in enumerate(zip(block_table.tolist(), seq_lens.tolist(), strict=True)):
        used = -(-n // block_size)
        slots = np.array([tb[p // block_size] * block_size + p % block_size for p in range(n)])
        if n:
            elems = (slots[:, None] * row + np.arange(row)).ravel()
            may_kv[i, k_cache.storage_offset() + elems] = True
        may_t[i, t_start + i * width : t_start + i * width + used] = True
        users.update({t_start + i * width + j: (i, used) for j in range(width)})
    may_kv[num_seqs], may_t[num_seqs] = may_kv.any(0), may_t.any(0)

    def rule(masks):
        if seq_axis is None:
            return masks[num_seqs]
        return lambda pid: masks[pid[seq_axis]] if pid[seq_axis] < num_seqs else masks[0] * 0

    for name, cache in (("k_cache", k_cache), ("v_cache", v_cache))[: 2 if with_v else 1]:
        watch.add(
            name,
            whole(cache),
            load=rule(may_kv),
            where=cache_words(
                name, cache.storage_offset(), block_size, row, num_blocks * block_size
            ),
        )

    def entry(i):
        if i not in users:
            return PAST.format(name="block_table")
        seq, used = users[i]
        return ENTRY.format(seq=seq, col=i - t_start - seq * width, used=used)

    watch.add("block_table", t_flat, load=rule(may_t), where=entry)
    for name, t in (("q", q), ("seq_lens", seq_lens)):
        flat, start = whole(t), t.storage_offset()
        may = np.zeros(flat.numel(), bool)
        may[start : start + t.numel()] = True
        watch.add(name, flat, load=may, where=lambda i, name=name: PAST.format(name=name))
    return watch


def extreme_scores(q, k_cache, offset, scale) -> None:
    """Make a case's scores exact and far from 0, in place: q . k * scale = offset + a small rest.

    Every token's K gets 1.0 as its first number and q's first number becomes offset / scale;
    the other numbers are rounded to quarters in [-2, 2]. With a scale that is a power of two
    every score is then exact in float32, and |offset| >= 1000 puts it past float64's exp range.
    `offset` is a number or a tensor of q's first two dimensions (one per query head).
    """
    for t in (q, k_cache):
        t.copy_(torch.where(torch.isnan(t), t, (t * 4).round().clamp(-8, 8) / 4))
    first = k_cache[..., 0]
    first.copy_(torch.where(torch.isnan(first), first, torch.ones_like(first)))
    q[..., 0] = torch.as_tensor(offset, dtype=q.dtype, device=q.device) / scale


def rising_scores(q, k_cache, block_table, seq_lens, step, scale) -> None:
    """Make a case's scores exact and rising along each sequence, in place: token pos scores
    step * pos + a small rest, so that the largest score lies in the last tile and a maximum
    taken early is hundreds too small there (`extreme_scores` with offset 0, then k[pos, :, 0]
    = pos)."""
    extreme_scores(q, k_cache, 0.0, scale)
    block_size = k_cache.shape[1]
    for row, n in zip(block_table.tolist(), seq_lens.tolist(), strict=True):
        for pos in range(n):
            k_cache[row[pos // block_size], pos % block_size, :, 0] = float(pos)
    q[..., 0] = step / scale


def shares(numel: int, size: int, owner):
    """pid -> the elements program pid may store: the `size` elements of part owner(pid) of a
    buffer cut into parts of `size` (interpreter); `numel` counts its guard too."""
    part = np.arange(numel) // size
    return lambda pid: part == owner(pid)


def draw_scale(rng, exact=False, dims=(8, 16, 32)):
    """(HEAD_DIM, scale) of a random case: HEAD_DIM one of `dims`; the scale HEAD_DIM ** -0.5 or
    another (a power of two where the scores must be exact: `extreme_scores`)."""
    head_dim = rng.choice(dims)
    if exact:
        return head_dim, rng.choice((0.125, 0.25, 0.5))
    return head_dim, rng.choice((head_dim**-0.5, round(rng.uniform(0.05, 1.0), 3)))


POOL_ROWS = msg("a row per physical block, a cell per slot", "물리 블록마다 한 행, 슬롯마다 한 칸")


def pool_view(name, cache):
    """The view of a paged cache: a row per physical block, a cell per slot (all its heads)."""
    num_blocks, bs, kvh, D = cache.shape
    start = cache.storage_offset()
    return (name, "load", start, num_blocks, bs, bs * kvh * D, kvh * D, POOL_ROWS)


def output(shape, device, guard: int):
    """(flat, view): an output of `shape` filled with SENTINEL, followed by `guard` more."""
    n = int(np.prod(shape))
    flat = torch.full((n + guard,), SENTINEL, device=device)
    return flat, flat[:n].view(shape)


def element(name, shape, i):
    """name[i, j, ...] for flat index i, or "name past its end"."""
    if i >= np.prod(shape):
        return PAST.format(name=name)
    return f"{name}[{', '.join(str(int(x)) for x in np.unravel_index(i, shape))}]"
