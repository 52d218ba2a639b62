"""How the paged-attention kernel is launched: pure functions, so tests can ask for any GPU.

Everything the launcher decides about a launch lives here, computed from plain numbers (compute
capability, SM count, shapes), so the choices for a T4 (sm_75), an A100 (sm_80) or an H100
(sm_90) can be checked on a laptop under Triton's CPU interpreter:

- `launch_config`: the path (tensor cores with `tl.dot` on sm >= 80; CUDA cores with products
  and `tl.sum` below, where Triton emits no tensor-core code), the tile of tokens per step, the
  padded query-group rows, `num_warps` and `num_stages`. The tile divides `partition_size`, so
  every partition size that is a multiple of 16 is valid on every backend.
- `choose_num_segments`: how many segments (split-K programs) each sequence gets, from a cost
  model of occupancy and length (see its docstring).

The defaults are starting points from compiling ahead of time (`aot.py`: registers, shared-memory
buffers), not timings; `python -m paged.attention.gpu_check` records registers, spills and a
sweep of these options on a real GPU (MEASURED), which is where better defaults come from.
References: Triton's `num_warps`/`num_stages` launch options; vLLM's unified Triton attention
(a fixed number of segments per sequence, segment length computed on the device).
"""

from __future__ import annotations

from dataclasses import dataclass

PATHS = ("tensor_core", "cuda_core")
MIN_PARTITION = 16  # partition_size must be a multiple of this (the smallest tl.dot tile)
MAX_SEGMENTS = 64  # segments per sequence; the merge reads them in chunks, so more is only waste
# Resident programs per SM: compiled ahead of time (Triton 3.9, sm_80/sm_90, head_dim 128, the
# default launch; see aot.py) the kernel takes ~96 registers x 128 threads and ~38 KiB of shared
# memory, so about 4 fit (5 on an H100, 2 in the 100 KiB of sm_86/sm_89).
PROGRAMS_PER_SM = 4
OVERHEAD_TOKENS = 64  # fixed cost of one program (q load, output store), in tokens of K/V read
MERGE_TOKENS = 128  # cost of the merge kernel, in tokens of K/V read per program


@dataclass(frozen=True)
class LaunchConfig:
    """One launch's compile-time choices."""

    path: str  # "tensor_core" (tl.dot) or "cuda_core" (products and tl.sum)
    tile: int  # tokens per loop step
    block_g: int  # query-head rows per program: the GQA group, padded
    num_warps: int
    num_stages: int


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def launch_config(
    capability: tuple[int, int] | None, head_dim: int, group: int, partition_size: int, *,
    path: str | None = None, tile: int | None = None,
    num_warps: int | None = None, num_stages: int | None = None,
) -> LaunchConfig:  # fmt: skip
    """The launch for a GPU of `capability` (None: the CPU interpreter); overrides are checked."""
    if not isinstance(partition_size, int) or partition_size < 1 or partition_size % MIN_PARTITION:
        raise ValueError(
            f"partition_size must be a positive multiple of {MIN_PARTITION}, got {partition_size!r}"
        )
    if path is None:
        path = "cuda_core" if capability is not None and capability < (8, 0) else "tensor_core"
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    block_d = max(16, _pow2(head_dim))
    # tl.dot needs at least 16 rows; products and tl.sum only pad the group to a power of two.
    block_g = max(16, _pow2(group)) if path == "tensor_core" else _pow2(group)
    if num_warps is None:
        num_warps = 4
    if num_warps not in (1, 2, 4, 8, 16):
        raise ValueError(f"num_warps must be one of 1, 2, 4, 8, 16, got {num_warps!r}")
    if num_stages is None:
        # sm >= 80: the table load takes a stage of the pipeline, so K and V get two buffers
        # (loads overlap compute) only from 5 stages up; with 3 or 4 they get one.
        num_stages = 1 if capability is None else 5 if capability >= (8, 0) else 2
    if not isinstance(num_stages, int) or not 1 <= num_stages <= 8:
        raise ValueError(f"num_stages must be an int in [1, 8], got {num_stages!r}")
    lowest = 16 if path == "tensor_core" else 1
    if tile is None:
        if capability is None:
            tile = 16  # the interpreter: fewer, smaller numpy steps
        elif path == "tensor_core":  # 4096 K (and V) values a tile: two buffers fit in 40 KiB
            tile = max(16, min(64, 4096 // block_d))
        else:  # keep the (block_g, tile, block_d) product near 32 fp32 values per thread
            tile = max(1, min(64, 32 * 32 * num_warps // (block_g * block_d)))
            tile = 1 << (tile.bit_length() - 1)
        tile = min(tile, partition_size & -partition_size)  # the largest power of two dividing it
    if not _is_pow2(tile) or not lowest <= tile <= 256:
        raise ValueError(f"tile must be a power of two in [{lowest}, 256] for {path}, got {tile!r}")
    if partition_size % tile:
        raise ValueError(f"tile {tile} does not divide partition_size {partition_size}")
    return LaunchConfig(path, tile, block_g, num_warps, num_stages)


def modelled_time(
    num_segments: int, num_seqs: int, num_kv_heads: int, max_seq_len: int, partition_size: int,
    num_sms: int, programs_per_sm: int = PROGRAMS_PER_SM,
) -> int:  # fmt: skip
    """Decode time in tokens read by one program: waves x (longest segment + overhead) + merge."""
    partitions = -(-max_seq_len // partition_size)
    slots = max(1, num_sms * programs_per_sm)
    waves = -(-max(1, num_seqs * num_kv_heads) * num_segments // slots)
    tokens = -(-partitions // num_segments) * partition_size + OVERHEAD_TOKENS
    return waves * tokens + (MERGE_TOKENS if num_segments > 1 else 0)


def choose_num_segments(
    num_seqs: int, num_kv_heads: int, max_seq_len: int, partition_size: int, num_sms: int,
    programs_per_sm: int = PROGRAMS_PER_SM, max_segments: int = MAX_SEGMENTS,
) -> int:  # fmt: skip
    """Segments per sequence: the fewest whose `modelled_time` is within 10 % of the least.

    The grid has num_seqs x num_kv_heads x s programs; num_sms x programs_per_sm run at once,
    so they take ceil(programs / slots) waves, each as long as its longest segment (whole
    partitions) plus a fixed overhead; splitting adds the merge. So one-partition sequences never
    split, few long sequences split until the GPU is full, and a full GPU splits only when a
    partial last wave makes it clearly worth it. Lengths come from seq_lens when the launcher
    reads them (check_values=True), else from the block table's capacity.
    """
    partitions = -(-max_seq_len // partition_size)
    args = (num_seqs, num_kv_heads, max_seq_len, partition_size, num_sms, programs_per_sm)
    candidates = range(1, max(1, min(partitions, max_segments)) + 1)
    times = {s: modelled_time(s, *args) for s in candidates}
    best = min(times.values())
    return min(s for s, t in times.items() if t <= 1.1 * best)
