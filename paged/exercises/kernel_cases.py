"""The kernel chapter's checkers' cases: what a paged kernel may read, and how mistakes read.

`paged_watch` registers a paged case's tensors (steps.make_case(..., poison=True)) with the
elements a correct kernel may load: the sequences' tokens in K and V, the used entries of the
block table, q, seq_lens. `slips.ADDRESS_RULES` are the typical wrong addresses of a K row (their
kernel hints: `slips.address.KERNEL_HINTS`);
`read_by_rule` evaluates one on a case, so that a checker can recognise the mistake a learner
made from what the kernel stored; `extreme_scores` pushes a case's scores past ±1000, and
`rising_scores` makes them climb by hundreds along a sequence (the maximum moves late).
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .triton_checks import SENTINEL, Watch, whole

__all__: list[str] = []  # helpers for kernels.py

BEFORE = msg(
    "{name} before its first block (block -1: a -1 table entry used as a block id?)",
    "{name}의 첫 블록 앞(블록 -1: 테이블의 -1 항목을 블록 번호로 썼나요?)",
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


def extreme_scores(q, k_cache, offset) -> None:
    """Make a case's scores exact and far from 0, in place: q . k * scale = offset + a small rest.

    Every token's K gets 1.0 as its first number and q's first number becomes offset / scale;
    the other numbers are rounded to quarters in [-2, 2]. With HEAD_DIM = 16 (scale 1/4) every
    score is then exact in float32, and |offset| >= 1000 puts it past float64's exp range.
    `offset` is a number or a tensor of q's first two dimensions (one per query head).
    """
    for t in (q, k_cache):
        t.copy_(torch.where(torch.isnan(t), t, (t * 4).round().clamp(-8, 8) / 4))
    first = k_cache[..., 0]
    first.copy_(torch.where(torch.isnan(first), first, torch.ones_like(first)))
    q[..., 0] = torch.as_tensor(offset, dtype=q.dtype, device=q.device) * q.shape[-1] ** 0.5


def rising_scores(q, k_cache, block_table, seq_lens, step) -> None:
    """Make a case's scores exact and rising along each sequence, in place: token pos scores
    step * pos + a small rest, so that the largest score lies in the last tile and a maximum
    taken early is hundreds too small there (`extreme_scores` with offset 0, then k[pos, :, 0]
    = pos)."""
    extreme_scores(q, k_cache, 0.0)
    block_size = k_cache.shape[1]
    for row, n in zip(block_table.tolist(), seq_lens.tolist(), strict=True):
        for pos in range(n):
            k_cache[row[pos // block_size], pos % block_size, :, 0] = float(pos)
    q[..., 0] = step * q.shape[-1] ** 0.5


def calls_dot(kernel) -> bool | None:
    """Whether the kernel's source calls tl.dot (None when its source cannot be read)."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(kernel, "fn", kernel))))
    except (OSError, TypeError, SyntaxError):
        return None
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "dot"
        for n in ast.walk(tree)
    )


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


# Shared by the paged-kernel checkers (kernels.py, kernels_attention.py, kernels_merge.py).
HINTS = {
    "store": msg(
        "the last tile stored past the end of the sequence.",
        "마지막 타일이 시퀀스 끝 너머에 store했습니다.",
    ),
    "one_d": msg(
        "a 1-D mask on a 2-D tile: mask has shape (TILE,) and the tile (TILE, ROW); Triton "
        "lines shapes up from the last dimension, so your mask switched COLUMNS on and off by "
        "a test on positions.",
        "2차원 타일에 1차원 마스크를 썼습니다. 마스크는 (TILE,), 타일은 (TILE, ROW) 모양이고 Triton은 마지막 차원부터 모양을 맞추므로, "
        "위치에 대한 검사가 열을 켜고 껐습니다.",
    ),
    "tile": msg(
        "some positions were never written: the programs' tiles do not cover the whole sequence.",
        "쓰이지 않은 위치가 있습니다. 프로그램들의 타일이 시퀀스 전체를 덮지 않습니다.",
    ),
    "address": msg(
        "some tokens came from the wrong rows of the cache: the case above names the slot "
        "read and the slot the token lives in.",
        "일부 토큰을 캐시의 엉뚱한 행에서 가져왔습니다. 위의 사례가 읽은 슬롯과 토큰이 실제로 있는 슬롯을 보여 줍니다.",
    ),
    "nan_read": msg(
        "NaN: you read a slot that holds no token (the checker keeps NaN there, a real cache "
        "keeps stale values).",
        "NaN입니다. 토큰이 없는 슬롯을 읽었습니다(채점기는 그곳에 NaN을, 실제 캐시는 오래된 값을 둡니다).",
    ),
    "neg_inf": msg(
        "positions past seq_len hold a finite score; the spec asks for -inf there, which the "
        "softmax turns into a weight of 0.",
        "seq_len 이후 위치에 유한한 점수가 들어 있습니다. 명세는 그곳에 -inf를 요구하고, 소프트맥스가 그것을 가중치 0으로 바꿉니다.",
    ),
    "scale": msg(
        "every score is off by the same factor, sqrt(HEAD_DIM) = 1 / scale: q · k is right, and "
        "the scale is missing.",
        "모든 점수가 같은 배수 sqrt(HEAD_DIM) = 1 / scale만큼 어긋났습니다. q · k는 맞고, "
        "scale이 빠졌습니다.",
    ),
    "kv_head": msg(
        "right only for kv_head 0: KV head 0 is read whatever kv_head says.",
        "kv_head가 0일 때만 맞습니다. kv_head가 무엇이든 KV 헤드 0을 읽습니다.",
    ),
    "slot_heads": msg(
        "tokens' rows overlap: a slot holds the K of every KV head of one token, KV_HEADS * "
        "HEAD_DIM numbers.",
        "토큰들의 행이 겹칩니다. 슬롯 하나에는 한 토큰의 모든 KV 헤드의 K, 즉 숫자 KV_HEADS * HEAD_DIM개가 들어 있습니다.",
    ),
    "head_mod": msg(
        "query heads read the wrong KV heads: yours deals them out in turn (h % KV_HEADS), "
        "while a group is GROUP consecutive query heads (chapter 5).",
        "쿼리 헤드가 엉뚱한 KV 헤드를 읽었습니다. 여러분의 코드는 헤드를 번갈아 나눠 주지만(h % KV_HEADS), 그룹은 연속한 쿼리 헤드 "
        "GROUP개입니다(5장).",
    ),
    "group_rows": msg(
        "rows past GROUP of the padded (BLOCK_G, TILE) tile were stored: they belong to other "
        "KV heads' query heads, or to nobody.",
        "덧댄 (BLOCK_G, TILE) 타일에서 GROUP 너머의 행까지 store했습니다. 그 행은 다른 KV 헤드의 쿼리 헤드 것이거나 누구의 것도 "
        "아닙니다.",
    ),
}
