"""Inputs, launchers and checks for chapter 7, where the learner grows a paged kernel in Triton.

The notebook's short `@triton.jit` cells are the lesson; this module only feeds and checks them,
so that the notebook's steps and the exercise checkers (`paged.exercises`) share one meaning of
"correct": equal to `paged_attention_ref` on small random paged cases (shuffled block tables
padded with -1; lengths 1, block_size and block_size + 1; GQA and MQA).

The teaching kernels assume contiguous tensors, so an element's address is plain arithmetic:
K of token `pos` for KV head `h` sits at `((slot * num_kv_heads) + h) * head_dim` with
`slot = block_table[pos // block_size] * block_size + pos % block_size` (chapter 3's slot).
Importing this module imports `paged.attention`, which sets TRITON_INTERPRET=1 without a GPU:
import it before the first `@triton.jit` cell.
"""

from __future__ import annotations

import torch

from ..text import msg
from . import backend, paged_attention_ref
from .tables import block_table

SAME_AS_REFERENCE = msg(
    "{name} == paged_attention_ref (max error < {atol}) on {batches} batches:",
    "{name} == paged_attention_ref(최대 오차 < {atol}), 배치 {batches}개:",
)
COVERED = msg(
    "  block sizes {sizes}; q/kv heads {heads}; lengths {lengths}",
    "  블록 크기 {sizes}; q/kv 헤드 {heads}; 길이 {lengths}",
)
DIFFERS = msg(
    "{name}: max error {err} >= {atol} for block_size {block_size}, seq_lens {lens}, "
    "block_table {table}",
    "{name}: 최대 오차 {err} >= {atol}(block_size {block_size}, seq_lens {lens}, "
    "block_table {table})",
)

# (block_size, seq_lens, num_q_heads, num_kv_heads): lengths 1, block_size, block_size + 1
# and a few tiles long; MHA (4/4), GQA (4/2, 8/2) and MQA (4/1).
CASE_SPECS = (
    (1, (1, 2, 11), 4, 4),
    (4, (1, 4, 5, 23), 4, 2),
    (8, (8, 9, 30), 8, 2),
    (16, (1, 16, 17, 37), 4, 1),
)
HEAD_DIM = 16  # the smallest head_dim `tl.dot` accepts


def default_device() -> str:
    """'cuda' where the kernels run on a GPU, else 'cpu' (the Triton interpreter)."""
    return "cuda" if backend() == "cuda" else "cpu"


def make_case(
    lens,
    block_size,
    num_q_heads=4,
    num_kv_heads=2,
    head_dim=HEAD_DIM,
    *,
    seed=0,
    spare_blocks=3,
    q_scale=1.0,
    dtype=torch.float32,
    device=None,
    table_width=None,
    poison=False,
):
    """(q, k_cache, v_cache, block_table, seq_lens): shuffled physical blocks, -1 padding.

    `table_width` widens the block table (default: one column more than the longest needs).
    `poison=True` (the exercise checkers) makes what lies outside the sequences visible: every
    slot that holds no token is NaN, each cache sits between two NaN blocks, q is followed by
    NaN and the table by -1 entries, so a load that is not masked to the sequence reads NaN
    (and 0 * NaN = NaN reaches the output, on a GPU too). Physical block 0 is then left empty (as
    vLLM V1 keeps a null block): a masked table load with other=0 leads to a block of NaN.
    """
    g = torch.Generator().manual_seed(seed)
    blocks_per_seq = [-(-n // block_size) for n in lens]
    num_blocks = sum(blocks_per_seq) + spare_blocks
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k_cache = torch.randn(shape, generator=g)
    v_cache = torch.randn(shape, generator=g)
    q = torch.randn(len(lens), num_q_heads, head_dim, generator=g) * q_scale
    width = table_width or max(blocks_per_seq) + 1
    skip = (0,) if poison else ()
    table = block_table(lens, block_size, num_blocks, generator=g, width=width, skip=skip)
    seq_lens = torch.tensor(lens, dtype=torch.int32)
    tensors = (q.to(dtype), k_cache.to(dtype), v_cache.to(dtype), table, seq_lens)
    if poison:
        tensors = _poisoned(*tensors)
    device = device or default_device()
    return tuple(_to(t, device) for t in tensors)


def _poisoned(q, k_cache, v_cache, table, seq_lens):
    """The same case inside guarded buffers, NaN wherever no token lives (see make_case)."""
    block_size = k_cache.shape[1]
    holds = torch.zeros(k_cache.shape[:2], dtype=torch.bool)  # (num_blocks, block_size)
    for row, n in zip(table.tolist(), seq_lens.tolist(), strict=True):
        for pos in range(n):
            holds[row[pos // block_size], pos % block_size] = True
    caches = []
    for cache in (k_cache, v_cache):
        block = cache[0].numel()
        flat = torch.full((cache.numel() + 2 * block,), float("nan"), dtype=cache.dtype)
        inner = flat[block:-block].view(cache.shape)
        inner[holds] = cache[holds]
        caches.append(inner)
    q_flat = torch.full((2 * q.numel(),), float("nan"), dtype=q.dtype)
    q_flat[: q.numel()] = q.flatten()
    t_flat = torch.full((2 * table.numel(),), -1, dtype=table.dtype)
    t_flat[: table.numel()] = table.flatten()
    return (
        q_flat[: q.numel()].view(q.shape),
        *caches,
        t_flat[: table.numel()].view(table.shape),
        seq_lens,
    )


def _to(t, device):
    """t on `device`, moving its whole allocation so that a view keeps its guards."""
    if t.device.type == torch.device(device).type:
        return t
    storage = t.untyped_storage()
    flat = t.new_empty(0).set_(storage, 0, (storage.nbytes() // t.element_size(),))
    return flat.to(device).as_strided(t.shape, t.stride(), t.storage_offset())


def cases(max_len: int | None = None, seed: int = 0) -> list[tuple]:
    """The chapter's test cases, optionally only the sequences of at most `max_len` tokens."""
    out = []
    for k, (block_size, lens, num_q_heads, num_kv_heads) in enumerate(CASE_SPECS):
        kept = [n for n in lens if max_len is None or n <= max_len]
        if kept:
            out.append(make_case(kept, block_size, num_q_heads, num_kv_heads, seed=seed + k))
    return out


def launch_attention(
    kernel,
    q,
    k_cache,
    v_cache,
    block_table,
    seq_lens,
    *,
    per: str = "q_head",
    tile: int = 16,
    out=None,
    inputs=(),
    scale: float | None = None,
    **constexprs,
):
    """Run a chapter-7 attention kernel; return `out` (num_seqs, num_q_heads, head_dim).

    Every step's kernel takes the same arguments: (q, k_cache, v_cache, block_table, seq_lens,
    *inputs, out, scale, max_blocks, BLOCK_SIZE, KV_HEADS, GROUP, HEAD_DIM, TILE, **constexprs);
    `inputs` are a step's own extra tensors (puzzle 3a's `m`). The grid has one program per
    (sequence, query head) when `per="q_head"`, per (sequence, KV head) when `per="kv_head"`
    (GQA: the group's query heads share one program). `scale` defaults to head_dim ** -0.5.
    """
    num_seqs, num_q_heads, head_dim = q.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty_like(q) if out is None else out
    heads = {"q_head": num_q_heads, "kv_head": num_kv_heads}[per]
    kernel[(num_seqs, heads)](
        q,
        k_cache,
        v_cache,
        block_table,
        seq_lens,
        *inputs,
        out,
        head_dim**-0.5 if scale is None else scale,
        block_table.shape[1],
        BLOCK_SIZE=block_size,
        KV_HEADS=num_kv_heads,
        GROUP=num_q_heads // num_kv_heads,
        HEAD_DIM=head_dim,
        TILE=tile,
        **constexprs,
    )
    return out


def library_source() -> str:
    """The source of every @triton.jit function the library's kernel runs (kernel.py, tiles.py).

    Read from the modules at run time, in file order: what chapter 7's step 7 offers to print.
    """
    import inspect
    import sys

    from . import kernel

    def jitted(module):
        return [
            obj
            for obj in vars(module).values()
            if hasattr(obj, "fn")
            and callable(getattr(obj, "__getitem__", None))
            and obj.fn.__module__.startswith("paged.attention")
        ]

    modules = [kernel] + sorted(
        {sys.modules[k.fn.__module__] for k in jitted(kernel)} - {kernel}, key=lambda m: m.__name__
    )
    found = {id(k): k for m in modules for k in jitted(m) if k.fn.__module__ == m.__name__}
    ordered = sorted(
        found.values(),
        key=lambda k: (modules.index(sys.modules[k.fn.__module__]), k.fn.__code__.co_firstlineno),
    )
    return "\n\n".join(inspect.getsource(k.fn) for k in ordered)


def max_error(fn, max_len: int | None = None) -> float:
    """Largest |fn(case) - paged_attention_ref(case)| over `cases(max_len)`."""
    err = 0.0
    for args in cases(max_len):
        got = fn(*args).float()
        err = max(err, (got - paged_attention_ref(*args).float()).abs().max().item())
    return err


def check_against_reference(fn, name: str, max_len: int | None = None, atol: float = 1e-5):
    """Assert fn == paged_attention_ref on every case and say what was covered."""
    for args in cases(max_len):
        want = paged_attention_ref(*args)
        got = fn(*args)
        err = (got.float() - want.float()).abs().max().item()
        if not err < atol:  # also catches NaN
            table, lens = args[3], args[4].tolist()
            raise AssertionError(
                DIFFERS.format(
                    name=name,
                    err=f"{err:.3g}",
                    atol=f"{atol:g}",
                    block_size=args[1].shape[1],
                    lens=lens,
                    table=table.tolist(),
                )
            )
    specs = [
        (bs, [n for n in lens if max_len is None or n <= max_len], h, kv)
        for bs, lens, h, kv in CASE_SPECS
    ]
    specs = [spec for spec in specs if spec[1]]
    lengths = sorted({n for _, lens, _, _ in specs for n in lens})
    sizes = ", ".join(str(s[0]) for s in specs)
    heads = ", ".join(f"{h}/{kv}" for _, _, h, kv in specs)
    print(SAME_AS_REFERENCE.format(name=name, atol=f"{atol:g}", batches=len(specs)))
    print(COVERED.format(sizes=sizes, heads=heads, lengths=", ".join(map(str, lengths))))
