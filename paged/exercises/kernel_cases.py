"""The kernel chapter's checkers' cases: what a paged kernel may read, and how mistakes read.

`paged_watch` registers a paged case's tensors (steps.make_case(..., poison=True)) with the
elements a correct kernel may load: the sequences' tokens in K and V, the used entries of the
block table, q, seq_lens. `ADDRESS_RULES` are the typical wrong addresses of a token's K row;
`read_by_rule` evaluates one on a case, so that a checker can recognise the mistake a learner
made from what the kernel stored; `extreme_scores` pushes a case's scores past ±1000.
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

# A token's K row address (in elements from the cache's start) by the right rule and by the
# typical mistakes: tb = the table row as the kernel would read it, p = positions (column),
# bs = block size, row = numbers per slot, c = the column(s) inside a slot.
ADDRESS_RULES = {
    "right": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p % bs) * row + c,
    "table_by_position": lambda tb, p, bs, row, c: (tb[p] * bs + p % bs) * row + c,
    "no_modulo": lambda tb, p, bs, row, c: (tb[p // bs] * bs + p) * row + c,
    "no_table": lambda tb, p, bs, row, c: p * row + c,
    "slot_not_times_row": lambda tb, p, bs, row, c: tb[p // bs] * bs + p % bs + c,
    "block_plus_offset": lambda tb, p, bs, row, c: (tb[p // bs] + p % bs) * row + c,
}
ADDRESS_HINTS = {
    "table_by_position": msg(
        "you indexed the block table by token position (block_table[pos]); it holds one entry "
        "per logical block: use block_table[pos // BLOCK_SIZE].",
        "블록 테이블을 토큰 위치로 인덱싱했습니다(block_table[pos]). 테이블에는 논리 블록마다 "
        "항목이 하나씩 있으니 block_table[pos // BLOCK_SIZE]를 쓰세요.",
    ),
    "no_modulo": msg(
        "the offset inside the physical block is pos % BLOCK_SIZE, not pos: you read past the "
        "end of the block, into another block's slots.",
        "물리 블록 안의 오프셋은 pos가 아니라 pos % BLOCK_SIZE입니다. 블록 끝을 지나 다른 "
        "블록의 슬롯을 읽었습니다.",
    ),
    "no_table": msg(
        "you read token pos from slot pos, as if the cache were contiguous: look up its physical "
        "block in the block table first.",
        "캐시가 연속인 것처럼 토큰 pos를 슬롯 pos에서 읽었습니다. 먼저 블록 테이블에서 그 "
        "토큰의 물리 블록을 찾으세요.",
    ),
    "slot_not_times_row": msg(
        "block * BLOCK_SIZE + offset is a slot (one token's row), and each row holds ROW = "
        "KV_HEADS * HEAD_DIM numbers: multiply the slot by it before adding the column.",
        "block * BLOCK_SIZE + offset은 슬롯(토큰 하나의 행)이고, 행마다 숫자가 ROW = "
        "KV_HEADS * HEAD_DIM개 있습니다. 열을 더하기 전에 슬롯에 이 값을 곱하세요.",
    ),
    "block_plus_offset": msg(
        "a physical block holds BLOCK_SIZE rows, so block b starts at row b * BLOCK_SIZE: the "
        "slot is block * BLOCK_SIZE + offset, not block + offset.",
        "물리 블록에는 행이 BLOCK_SIZE개 있으므로 블록 b는 행 b * BLOCK_SIZE에서 시작합니다. "
        "슬롯은 block + offset이 아니라 block * BLOCK_SIZE + offset입니다.",
    ),
}


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
        "mask the store with pos < seq_len: the last tile runs past the end of the sequence.",
        "저장을 pos < seq_len으로 마스크하세요. 마지막 타일은 시퀀스 끝을 넘어갑니다.",
    ),
    "one_d": msg(
        "a 1-D mask on a 2-D tile: mask has shape (TILE,) and the tile (TILE, ROW); Triton lines "
        "shapes up from the last dimension, so your mask switched COLUMNS on and off by a test "
        "on positions. Use mask[:, None], one value per row.",
        "2차원 타일에 1차원 마스크를 썼습니다. 마스크는 (TILE,), 타일은 (TILE, ROW) 모양인데 "
        "Triton은 마지막 차원부터 모양을 맞추므로, 위치에 대한 조건으로 열을 켜고 끈 셈입니다. "
        "행마다 값 하나인 mask[:, None]을 쓰세요.",
    ),
    "tile": msg(
        "program i handles positions i * TILE + tl.arange(0, TILE): does every program load and "
        "store its whole tile?",
        "프로그램 i는 위치 i * TILE + tl.arange(0, TILE)을 맡습니다. 모든 프로그램이 자기 타일 "
        "전체를 읽고 저장하나요?",
    ),
    "address": msg(
        "token pos lives in physical block block_table[pos // BLOCK_SIZE], at offset "
        "pos % BLOCK_SIZE: its row starts at (block * BLOCK_SIZE + offset) * ROW.",
        "토큰 pos는 물리 블록 block_table[pos // BLOCK_SIZE]의 오프셋 pos % BLOCK_SIZE에 "
        "있습니다. 그 행은 (block * BLOCK_SIZE + offset) * ROW에서 시작합니다.",
    ),
    "nan_read": msg(
        "NaN: you read a slot that holds no token (the checker keeps NaN there, a real cache "
        "keeps stale values). Check the address, and mask every load with pos < seq_len.",
        "NaN입니다. 토큰이 없는 슬롯을 읽었습니다(채점기는 그곳을 NaN으로, 실제 캐시는 오래된 "
        "값으로 채워 둡니다). 주소를 확인하고 모든 로드를 pos < seq_len으로 마스크하세요.",
    ),
    "neg_inf": msg(
        "positions past seq_len must hold -inf, so that the softmax gives them weight "
        "exp(-inf) = 0: tl.where(pos < seq_len, s, float('-inf')).",
        "seq_len 이후 위치에는 -inf가 있어야 소프트맥스가 그 위치에 가중치 exp(-inf) = 0을 "
        "줍니다: tl.where(pos < seq_len, s, float('-inf')).",
    ),
    "scale": msg(
        "every score is off by the same factor, sqrt(HEAD_DIM) = 1 / scale: q · k is right, and "
        "the scale is missing.",
        "모든 점수가 같은 배수 sqrt(HEAD_DIM) = 1 / scale만큼 어긋났습니다. q · k는 맞고, "
        "scale이 빠졌습니다.",
    ),
    "kv_head": msg(
        "you read KV head 0: head kv_head's numbers start kv_head * HEAD_DIM into each slot.",
        "KV 헤드 0을 읽었습니다. 헤드 kv_head의 숫자는 각 슬롯에서 kv_head * HEAD_DIM만큼 "
        "뒤에서 시작합니다.",
    ),
    "slot_heads": msg(
        "a slot holds the K of every KV head of one token, KV_HEADS * HEAD_DIM numbers: "
        "multiply the slot by KV_HEADS * HEAD_DIM, then add kv_head * HEAD_DIM.",
        "슬롯 하나에는 한 토큰의 모든 KV 헤드 K, 즉 숫자 KV_HEADS * HEAD_DIM개가 있습니다. "
        "슬롯에 KV_HEADS * HEAD_DIM을 곱한 뒤 kv_head * HEAD_DIM을 더하세요.",
    ),
    "head_mod": msg(
        "query head h reads KV head h // GROUP: a group is GROUP consecutive query heads (with "
        "GROUP = 2, heads 0 and 1 share KV head 0). h % KV_HEADS deals them out in turn instead.",
        "쿼리 헤드 h는 KV 헤드 h // GROUP을 읽습니다. 그룹은 연속한 쿼리 헤드 GROUP개입니다"
        "(GROUP = 2이면 헤드 0과 1이 KV 헤드 0을 공유합니다). h % KV_HEADS는 헤드를 돌아가며 "
        "나눠 줍니다.",
    ),
    "group_rows": msg(
        "store only the GROUP real rows of the padded (BLOCK_G, TILE) tile: mask with "
        "(g < GROUP)[:, None]; the other rows belong to other KV heads' query heads, or to nobody.",
        "채워 넣은 (BLOCK_G, TILE) 타일에서 실제 행 GROUP개만 저장하세요: (g < GROUP)[:, None]로 "
        "마스크합니다. 나머지 행은 다른 KV 헤드의 쿼리 헤드 몫이거나 아무의 몫도 아닙니다.",
    ),
}
