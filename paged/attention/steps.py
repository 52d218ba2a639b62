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

from . import backend, paged_attention_ref

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
    lens, block_size, num_q_heads=4, num_kv_heads=2, head_dim=HEAD_DIM, *,
    seed=0, spare_blocks=3, q_scale=1.0, dtype=torch.float32, device=None, table_width=None,
):  # fmt: skip
    """(q, k_cache, v_cache, block_table, seq_lens): shuffled physical blocks, -1 padding.

    `table_width` widens the block table (default: one column more than the longest needs).
    """
    g = torch.Generator().manual_seed(seed)
    blocks_per_seq = [-(-n // block_size) for n in lens]
    num_blocks = sum(blocks_per_seq) + spare_blocks
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k_cache = torch.randn(shape, generator=g)
    v_cache = torch.randn(shape, generator=g)
    q = torch.randn(len(lens), num_q_heads, head_dim, generator=g) * q_scale
    ids = torch.randperm(num_blocks, generator=g).tolist()
    width = table_width or max(blocks_per_seq) + 1
    table = torch.full((len(lens), width), -1, dtype=torch.int32)  # -1: unused
    for i, n in enumerate(blocks_per_seq):
        table[i, :n] = torch.tensor([ids.pop() for _ in range(n)], dtype=torch.int32)
    seq_lens = torch.tensor(lens, dtype=torch.int32)
    tensors = (q.to(dtype), k_cache.to(dtype), v_cache.to(dtype), table, seq_lens)
    return tuple(t.to(device or default_device()) for t in tensors)


def cases(max_len: int | None = None, seed: int = 0) -> list[tuple]:
    """The chapter's test cases, optionally only the sequences of at most `max_len` tokens."""
    out = []
    for k, (block_size, lens, num_q_heads, num_kv_heads) in enumerate(CASE_SPECS):
        kept = [n for n in lens if max_len is None or n <= max_len]
        if kept:
            out.append(make_case(kept, block_size, num_q_heads, num_kv_heads, seed=seed + k))
    return out


def launch_attention(
    kernel, q, k_cache, v_cache, block_table, seq_lens, *,
    per: str = "q_head", tile: int = 16, out=None, **constexprs,
):  # fmt: skip
    """Run a chapter-6 attention kernel; return `out` (num_seqs, num_q_heads, head_dim).

    Every step's kernel takes the same arguments: (q, k_cache, v_cache, block_table, seq_lens,
    out, scale, max_blocks, BLOCK_SIZE, KV_HEADS, GROUP, HEAD_DIM, TILE, **constexprs). The grid
    has one program per (sequence, query head) when `per="q_head"`, per (sequence, KV head) when
    `per="kv_head"` (GQA: the group's query heads share one program).
    """
    num_seqs, num_q_heads, head_dim = q.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty_like(q) if out is None else out
    heads = {"q_head": num_q_heads, "kv_head": num_kv_heads}[per]
    kernel[(num_seqs, heads)](
        q, k_cache, v_cache, block_table, seq_lens, out,
        head_dim**-0.5, block_table.shape[1],
        BLOCK_SIZE=block_size, KV_HEADS=num_kv_heads, GROUP=num_q_heads // num_kv_heads,
        HEAD_DIM=head_dim, TILE=tile, **constexprs,
    )  # fmt: skip
    return out


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
                f"{name}: max error {err:.3g} >= {atol:g} for block_size {args[1].shape[1]}, "
                f"seq_lens {lens}, block_table {table.tolist()}"
            )
    specs = [(bs, [n for n in lens if max_len is None or n <= max_len], h, kv)
             for bs, lens, h, kv in CASE_SPECS]  # fmt: skip
    specs = [spec for spec in specs if spec[1]]
    lengths = sorted({n for _, lens, _, _ in specs for n in lens})
    sizes = ", ".join(str(s[0]) for s in specs)
    heads = ", ".join(f"{h}/{kv}" for _, _, h, kv in specs)
    print(f"{name} == paged_attention_ref (max error < {atol:g}) on {len(specs)} batches:")
    print(f"  block sizes {sizes}; q/kv heads {heads}; lengths {', '.join(map(str, lengths))}")
