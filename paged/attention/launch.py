"""How the paged-attention kernel is launched: pure functions, so tests can ask for any GPU.

Everything the launcher decides about a launch lives here, computed from plain numbers (compute
capability, SM count, shapes), so the choices for a T4 (sm_75), an A100 (sm_80) or an H100
(sm_90) can be checked on a laptop under Triton's CPU interpreter:

- `VARIANTS`: the baseline kernel and the three changes a bandwidth-bound decode kernel needs
  most, each a launch option, so one GPU run measures each against the baseline (`kernel_sweep`):
  `prefetch` fetches the next tile's block ids while the current tile is read, with a 64-token
  tile for head_dim <= 128; `balanced` cuts the work into near-equal chunks on a grid sized to
  the device (as FlashInfer's plan and vLLM's 3-D unified kernel do) instead of whole 512-token
  partitions that can leave a partial wave; `exp2` works in base 2 (scale x log2(e) folded into
  q where q is held in fp32), rescales the accumulator only when a row's maximum grows and sums
  the softmax weights once after the loop, not once a tile. `combined` has all three.
- `launch_config`: the path (tensor cores with `tl.dot` on sm >= 80; CUDA cores with products
  and `tl.sum` below, where Triton emits no tensor-core code), the tile of tokens per step, the
  padded query-group rows, `num_warps` and `num_stages`. The tile divides `partition_size`, so
  every partition size that is a multiple of 16 is valid on every backend.
- `choose_num_segments`: how many segments (split-K programs) each sequence gets, from a cost
  model of occupancy and length (see its docstring).

The defaults are starting points from compiling ahead of time (`aot.py`: registers, shared-memory
buffers), not timings; `python -m paged.gpu.check` records registers, spills and a
sweep of these options on a real GPU (MEASURED), which is where better defaults come from. The
default variant stays the baseline until a GPU has measured the others.
References: Triton's `num_warps`/`num_stages` launch options; vLLM's unified Triton attention
(a fixed number of segments per sequence, segment length computed on the device); FlashInfer's
`plan` (work split into chunks for a grid of about the SM count).
"""

from __future__ import annotations

from dataclasses import dataclass

PATHS = ("tensor_core", "cuda_core")
MIN_PARTITION = 16  # partition_size must be a multiple of this (the smallest tl.dot tile)
MAX_SEGMENTS = 64  # segments per sequence; the merge reads them in chunks, so more is only waste
# The compile-level review (aot.py, sm_75) found tiles 64 / 128 compiling for 24 / 106 s on
# 2 cores and spilling; 16 keeps CUDA-core compiles short and spill-free.
MAX_CUDA_CORE_TILE = 16
# Resident programs per SM: compiled ahead of time (Triton 3.9, sm_80/sm_90, head_dim 128, the
# default launch; see aot.py) the kernel takes ~96 registers x 128 threads and ~38 KiB of shared
# memory, so about 4 fit (5 on an H100, 2 in the 100 KiB of sm_86/sm_89).
PROGRAMS_PER_SM = 4
OVERHEAD_TOKENS = 64  # fixed cost of one program (q load, output store), in tokens of K/V read
MERGE_TOKENS = 128  # cost of the merge kernel, in tokens of K/V read per program
MAX_BALANCED_SEQS = 4096  # the balanced kernel holds every seq_len of the batch in one vector


@dataclass(frozen=True)
class Variant:
    """Which of the three improvements a launch switches on."""

    prefetch: bool  # next tile's block ids in registers, ahead of the K/V loads
    balanced: bool  # near-equal chunks on a device-sized (persistent) grid
    exp2: bool  # base-2 softmax, rescale only when the max grows, row sums after the loop


VARIANTS = {
    "baseline": Variant(False, False, False),
    "prefetch": Variant(True, False, False),
    "balanced": Variant(False, True, False),
    "exp2": Variant(False, False, True),
    "combined": Variant(True, True, True),
}
# The launcher's default. It changes only after a GPU run (gpu_check) has measured the others.
DEFAULT_VARIANT = "baseline"


@dataclass(frozen=True)
class LaunchConfig:
    """One launch's compile-time choices."""

    path: str  # "tensor_core" (tl.dot) or "cuda_core" (products and tl.sum)
    tile: int  # tokens per loop step
    block_g: int  # query-head rows per program: the GQA group, padded
    num_warps: int
    num_stages: int
    variant: str = DEFAULT_VARIANT  # a key of VARIANTS


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def check_variant(variant) -> Variant:
    """The Variant for a name, or ValueError naming the bad one."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    return VARIANTS[variant]


def check_backend(q, k_cache, v_cache, block_table, capability, interpreted: bool) -> None:
    """Raise ValueError for inputs this backend (capability None: the CPU) or kernel cannot run."""
    block_size, head_dim = k_cache.shape[1], k_cache.shape[3]
    bf16 = str(q.dtype) == "torch.bfloat16"
    if capability is None and not interpreted:
        raise ValueError(f"q is on {q.device}; without TRITON_INTERPRET=1 the kernel needs CUDA")
    if bf16 and capability is not None and capability < (8, 0):
        raise ValueError("bfloat16 needs compute capability >= 8.0: use float16 on this GPU")
    if bf16 and capability is None:
        raise ValueError("bfloat16 is not supported by Triton's CPU interpreter: use float16")
    if block_size & (block_size - 1) or not 1 <= block_size <= 256:
        raise ValueError(f"block_size must be a power of two in [1, 256], got {block_size}")
    if head_dim > 256:
        raise ValueError(f"head_dim must be <= 256, got {head_dim}")
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        if t.stride(-1) != 1:
            raise ValueError(
                f"{name} must have a contiguous last dimension (stride 1), got strides {t.stride()}"
            )
    if block_table.stride(1) != 1:
        raise ValueError(f"block_table rows must be contiguous, got strides {block_table.stride()}")


def check_split(variant: str, split, num_segments, num_seqs: int):
    """The split flag the options imply; ValueError for combinations that cannot run."""
    if num_segments is not None:
        if not isinstance(num_segments, int) or not 1 <= num_segments <= 4096:
            raise ValueError(f"num_segments must be an int in [1, 4096], got {num_segments!r}")
        if split is False:
            raise ValueError(f"num_segments={num_segments} needs the split path, got split=False")
    if check_variant(variant).balanced:
        if split is False or num_segments is not None:
            raise ValueError(
                f"variant {variant!r} chooses its own chunks: pass neither split=False nor "
                f"num_segments (got split={split}, num_segments={num_segments})"
            )
        if num_seqs > MAX_BALANCED_SEQS:
            raise ValueError(
                f"variant {variant!r} takes at most {MAX_BALANCED_SEQS} sequences, got {num_seqs}"
            )
        return True  # partial results and the merge, always
    return True if num_segments is not None else split


def launch_config(
    capability: tuple[int, int] | None,
    head_dim: int,
    group: int,
    partition_size: int,
    *,
    path: str | None = None,
    tile: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    variant: str | None = None,
) -> LaunchConfig:
    """The launch for a GPU of `capability` (None: the CPU interpreter); overrides are checked."""
    if not isinstance(partition_size, int) or partition_size < 1 or partition_size % MIN_PARTITION:
        raise ValueError(
            f"partition_size must be a positive multiple of {MIN_PARTITION}, got {partition_size!r}"
        )
    variant = DEFAULT_VARIANT if variant is None else variant
    chosen = check_variant(variant)
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
        # (loads overlap compute) only from 5 stages up; with 3 or 4 they get one. Prefetched
        # ids leave the pipeline to K and V: 3 stages give them two buffers of the larger tile.
        on_sm80 = capability is not None and capability >= (8, 0)
        num_stages = 1 if capability is None else (3 if chosen.prefetch else 5) if on_sm80 else 2
    if not isinstance(num_stages, int) or not 1 <= num_stages <= 8:
        raise ValueError(f"num_stages must be an int in [1, 8], got {num_stages!r}")
    lowest = 16 if path == "tensor_core" else 1
    if tile is None:
        if capability is None:
            tile = 16  # the interpreter: fewer, smaller numpy steps
        elif path == "tensor_core":  # 4096 K (and V) values a tile: two buffers fit in 40 KiB
            tile = max(16, min(64, (8192 if chosen.prefetch else 4096) // block_d))
        else:  # keep the (block_g, tile, block_d) product near 32 fp32 values per thread
            tile = max(1, min(MAX_CUDA_CORE_TILE, 32 * 32 * num_warps // (block_g * block_d)))
            tile = 1 << (tile.bit_length() - 1)
        tile = min(tile, partition_size & -partition_size)  # the largest power of two dividing it
    if not _is_pow2(tile) or not lowest <= tile <= 256:
        raise ValueError(f"tile must be a power of two in [{lowest}, 256] for {path}, got {tile!r}")
    if partition_size % tile:
        raise ValueError(f"tile {tile} does not divide partition_size {partition_size}")
    return LaunchConfig(path, tile, block_g, num_warps, num_stages, variant)


def modelled_time(
    num_segments: int,
    num_seqs: int,
    num_kv_heads: int,
    max_seq_len: int,
    partition_size: int,
    num_sms: int,
    programs_per_sm: int = PROGRAMS_PER_SM,
) -> int:
    """Decode time in tokens read by one program: waves x (longest segment + overhead) + merge."""
    partitions = -(-max_seq_len // partition_size)
    slots = max(1, num_sms * programs_per_sm)
    waves = -(-max(1, num_seqs * num_kv_heads) * num_segments // slots)
    tokens = -(-partitions // num_segments) * partition_size + OVERHEAD_TOKENS
    return waves * tokens + (MERGE_TOKENS if num_segments > 1 else 0)


def choose_num_segments(
    num_seqs: int,
    num_kv_heads: int,
    max_seq_len: int,
    partition_size: int,
    num_sms: int,
    programs_per_sm: int = PROGRAMS_PER_SM,
    max_segments: int = MAX_SEGMENTS,
) -> int:
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


def balanced_plan(seq_lens, num_kv_heads: int, num_programs: int, tile: int) -> list[tuple]:
    """The balanced kernel's chunks, as it computes them on the device: (first, count, length).

    Target chunk: all K/V tokens x KV heads / programs, so one wave reads everything. Sequence s
    gets round(len / target) chunks (1 to MAX_SEGMENTS, no more than its tiles) of equal length
    rounded up to the tile; `first` numbers its chunks across the batch. Work unit u of the grid
    is chunk u // num_kv_heads for KV head u % num_kv_heads; program p takes units p, p + grid...
    The kernel (`_balanced_chunks`) does the same arithmetic; this copy documents and tests it.
    """
    total = sum(max(0, n) for n in seq_lens)
    target = max(tile, -(-total * num_kv_heads // max(1, num_programs)))
    plan, first = [], 0
    for n in seq_lens:
        n = max(0, n)
        count = min(max((n + target // 2) // target, 1), MAX_SEGMENTS, -(-n // tile))
        length = -(-max(1, -(-n // max(1, count))) // tile) * tile  # ceil(n / count), up to tiles
        count = -(-n // length)  # rounding the length up can leave the last chunk empty: drop it
        plan.append((first, count, length))
        first += count
    return plan


def programs_per_sm(
    n_regs: int,
    shared_bytes: int,
    num_warps: int,
    *,
    regs_per_sm: int = 65536,
    shared_per_sm: int = 233472,
    threads_per_sm: int = 2048,
) -> int:
    """Programs of one compiled kernel resident on an SM at once (its occupancy), at least 1.

    Registers are allocated per warp in units of 256; each program also reserves 1 KiB of
    shared memory for the system (sm_80 and later). Defaults: an H100 (sm_90).
    """
    warp_regs = -(-max(1, n_regs) * 32 // 256) * 256
    by_regs = regs_per_sm // (warp_regs * num_warps)
    by_shared = shared_per_sm // (shared_bytes + 1024)
    by_threads = threads_per_sm // (32 * num_warps)
    return max(1, min(by_regs, by_shared, by_threads, 32))


def max_balanced_units(num_seqs: int, num_kv_heads: int, num_programs: int) -> int:
    """An upper bound on the balanced kernel's work units, for its partial-result buffers.

    A sequence gets at most len / target + 1 chunks and target >= total x heads / programs, so
    all chunks number at most programs / heads + num_seqs (and MAX_SEGMENTS per sequence).
    """
    chunks = min(num_seqs * MAX_SEGMENTS, -(-num_programs // num_kv_heads) + num_seqs)
    return chunks * num_kv_heads
