"""Checkers for the kernel chapter's Triton puzzles (chapter 7), from the gather to the merge.

Each launches the learner's @triton.jit kernel on small paged cases (shuffled tables padded
with -1, block sizes 1-16, tiles below, equal to and above the block size, lengths that end on
a block boundary; fixed teaching cases, then random ones drawn for the call) and compares with
the library (`gather_kv`, `paged_attention_ref`, torch), through `kernel_runner.check_kernel`.
The cases are poisoned (`steps.make_case(..., poison=True)`): NaN in every slot that holds no
token, so an unmasked V load turns the output into NaN; and the interpreter checks every
address (`triton_checks.Watch`). A wrong answer is compared with what
the typical mistakes would produce, and the hint names the one that matches.
"""

from __future__ import annotations

import numpy as np
import torch

from ..text import msg
from .engine.core import checker
from .engine.kernel_cases import POOL_ROWS, cache_words, output, read_by_rule, table_as_read
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import SENTINEL, Watch, device, same
from .slips import ADDRESS_RULES
from .slips.address import KERNEL_HINTS as ADDRESS_HINTS
from .slips.kernels_paged import HINTS

__all__ = [
    "check_gather_kernel",
    "check_gqa_scores_kernel",
    "check_known_max_kernel",
    "check_merge_kernel",
    "check_online_softmax_kernel",
    "check_tile_scores_kernel",
]

TOKEN = msg(
    "token {pos} holds {got}, expected {want}", "토큰 {pos}의 값은 {got}, 기대값은 {want}입니다"
)
READ_FROM = msg(
    "token {pos} was read from slot {slot} (block {block}, offset {offset}); it lives "
    "in slot {want} (block {wblock}, offset {woffset})",
    "토큰 {pos}의 읽은 위치는 슬롯 {slot}(블록 {block}, 오프셋 {offset})이지만, "
    "이 토큰은 슬롯 {want}(블록 {wblock}, 오프셋 {woffset})에 "
    "있습니다",
)


# ---- step 2 · gather through the block table ------------------------------------------------
GUARD = 4096  # elements around the gather's cache: a stray read stays inside, and says where


def _gather_case(params, seed):
    """A cache whose every number is its own address (guards too), a shuffled table."""
    from ..attention.tables import block_table

    bs, tile, seq_len, num_blocks, row = params
    g = torch.Generator().manual_seed(seed)
    n = num_blocks * bs * row
    flat = torch.arange(-GUARD, n + GUARD, dtype=torch.float32).to(device())
    used = -(-seq_len // bs)
    t_flat = block_table([seq_len], bs, num_blocks, generator=g, width=used + 1 + 64)[0]
    ids = t_flat[:used]
    t_flat = t_flat.to(device())
    watch = Watch()
    may = np.zeros(flat.numel(), bool)
    slots = [int(ids[p // bs]) * bs + p % bs for p in range(seq_len)]
    may[GUARD + (np.array(slots)[:, None] * row + np.arange(row)).ravel()] = True
    watch.add("cache", flat, load=may, where=cache_words("cache", GUARD, bs, row, n // row))
    watch.add(
        "block_table",
        t_flat,
        load=np.arange(t_flat.numel()) < used,
        where=lambda i: f"block_table[{i}] (used: {used})",
    )
    cache = flat[GUARD : GUARD + n].view(num_blocks, bs, row)
    out_flat, out = output((seq_len, row), device(), GUARD)
    ok = np.arange(out_flat.numel()) < seq_len * row
    pos = np.arange(out_flat.numel()) // row

    def own_tile(pid):  # program i stores the rows of positions i * TILE ... only (interpreter)
        return ok & (pos // tile == pid[0])

    watch.add(
        "out", out_flat, load=False, store=own_tile, where=lambda i: f"out[{i // row}, {i % row}]"
    )
    from ..attention import gather_kv

    return Case(
        where=f"block_size {bs}, TILE {tile}, ROW {row}, seq_len {seq_len}, block_table "
        f"{t_flat[:used].tolist()}",
        watch=watch,
        run=lambda k: k[(-(-seq_len // tile),)](
            cache, t_flat, out_flat, seq_len, BLOCK_SIZE=bs, ROW=row, TILE=tile
        ),
        outputs=[("out", out_flat, ok)],
        got=lambda: out.cpu(),
        want=gather_kv(cache, t_flat, seq_len).cpu(),
        views=[  # the pool: a row per physical block, a cell per slot; out: a cell per token
            ("block_table", "load", 0, 1, used + 1, used + 1, 1),
            ("cache", "load", GUARD, num_blocks, bs, bs * row, row, POOL_ROWS),
            ("out", "store", 0, 1, seq_len, seq_len * row, row),
        ],
        data={
            "flat": flat,
            "table": t_flat,
            "bs": bs,
            "seq_len": seq_len,
            "row": row,
            "written": lambda: out_flat.cpu() != SENTINEL,
            "slots": slots,
        },
    )


def _gather_draw(rng):
    bs, tile = rng.choice((1, 2, 4, 8, 16)), rng.choice((2, 4, 8, 16))
    seq_len = rng.choice((1, bs, bs + 1, tile, tile + 1, rng.randint(1, 40)))
    return bs, tile, seq_len, -(-seq_len // bs) + rng.randint(1, 4), rng.choice((4, 8, 16, 32))


def _physical(f) -> bool:
    """The rows written are the tokens' slots, not their positions (a store in the pool's order)."""
    written = f.written()
    due = torch.zeros(written.numel(), dtype=torch.bool)
    for slot in f.slots:
        due[slot * f.row : min((slot + 1) * f.row, due.numel())] = True
    return bool(torch.equal(written, due))


def _read_by(f, rule):
    """What a gather whose addresses follow ADDRESS_RULES[rule] stores (NaN past the cache)."""
    p, c = torch.arange(f.seq_len)[:, None], torch.arange(f.row)[None, :]
    addr = ADDRESS_RULES[rule](table_as_read(f.table, f.seq_len + 1), p, f.bs, f.row, c)
    return read_by_rule(f.flat, GUARD, addr)


def _gather_what(f):
    """Where the first wrong token was read from, in words (the cache holds its addresses)."""
    bad = int(torch.nonzero((f.got != f.want).any(1))[0])
    read, right = f.got[bad, 0].item(), int(f.want[bad, 0].item())
    if read == SENTINEL or not float(read).is_integer():
        return TOKEN.format(pos=bad, got="-" if read == SENTINEL else read, want=right)
    slot, want_slot = int(read) // f.row, right // f.row
    return READ_FROM.format(
        pos=bad,
        slot=slot,
        block=slot // f.bs,
        offset=slot % f.bs,
        want=want_slot,
        wblock=want_slot // f.bs,
        woffset=want_slot % f.bs,
    )


GATHER_SPEC = KernelSpec(
    name="gather_kernel",
    # (block_size, TILE, seq_len, num_blocks, ROW): TILE above, below and equal to the block
    # size, block size 1, a length that ends on a block boundary, one token; ROW 4 to 32.
    fixed=(
        (4, 8, 13, 9, 8),
        (16, 8, 17, 5, 4),
        (1, 4, 6, 10, 16),
        (8, 16, 8, 4, 8),
        (4, 4, 12, 6, 32),
        (4, 4, 1, 5, 8),
    ),
    build=_gather_case,
    draw=_gather_draw,
    summary="block sizes 1-16, tiles 2-16, rows of 4-32 numbers, shuffled tables",
    describe=_gather_what,
    store_hints=(
        (_physical, HINTS["physical"]),
        (lambda f: bool((f.got == SENTINEL).any()), HINTS["one_d"]),
        (lambda f: True, HINTS["store"]),
    ),
    share_hints=(
        (_physical, HINTS["physical"]),
        (lambda f: bool((f.got == SENTINEL).any()), HINTS["tile"]),
    ),
    value_hints=(
        (lambda f: bool((f.got == SENTINEL).any()), HINTS["tile"]),
        *((lambda f, r=r: same(f.got, _read_by(f, r)), h) for r, h in ADDRESS_HINTS.items()),
        (lambda f: True, HINTS["address"]),
    ),
)


check_gather_kernel = checker(
    GATHER_SPEC,
    """kernel[(cdiv(seq_len, TILE),)](cache, block_table, out, seq_len, BLOCK_SIZE=, ROW=, TILE=).

    Copies one sequence's K rows, TILE positions per program, from the paged cache
    (num_blocks, BLOCK_SIZE, ROW) into out (seq_len, ROW), through its block table.
    """,
)


from .kernels_attention import check_known_max_kernel, check_online_softmax_kernel  # noqa: E402
from .kernels_gqa import check_gqa_scores_kernel  # noqa: E402
from .kernels_merge import check_merge_kernel  # noqa: E402
from .kernels_scores import check_tile_scores_kernel  # noqa: E402
