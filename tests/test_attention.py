"""The Triton kernel against the reference, and the reference against PyTorch's SDPA.

Without a GPU these run under Triton's CPU interpreter, so shapes stay small; with one, every
test runs there on CUDA tensors, and the `gpu`-marked tests add large shapes. The launch
choices for GPUs that are not here (tile, path, warps, stages, segments) are pure functions of
the compute capability, tested for sm_75/sm_80/sm_90 here and compiled for them ahead of time
(no GPU needed); the interpreter then runs the kernel with those choices. Every kernel variant
(`launch.VARIANTS`) runs the kernel cases below that touch what it changes: block boundaries
(prefetched ids), split and merge (the balanced grid), fp32 and the CUDA-core path (base-2
softmax with the scale folded into q), empty sequences, NaN in unused slots. Tolerances:
fp32 runs ieee dot products in fp32, so only summation order differs: 1e-5. fp16 inputs
(eps 2**-10 ~ 1e-3) have the softmax weights rounded to fp16 before P @ V and the output
rounded to fp16, a few eps on outputs of size ~1: 5e-3. bf16 (eps 2**-7): 2e-2, GPU only.
"""

import random

import pytest
import torch
import torch.nn.functional as F

from paged.attention import backend, gather_kv, paged_attention, paged_attention_ref, steps
from paged.attention.launch import (
    MAX_SEGMENTS,
    VARIANTS,
    balanced_plan,
    choose_num_segments,
    launch_config,
    max_balanced_units,
    modelled_time,
    programs_per_sm,
)
from paged.attention.tables import block_table

TOL = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 2e-2}
DEVICE = "cuda" if backend() == "cuda" else "cpu"
pytestmark = pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed")
OTHERS = [v for v in VARIANTS if v != "baseline"]  # the variants measured against the baseline


def make_case(lens, block_size, num_q_heads, num_kv_heads, head_dim, dtype, **options):
    """The chapter's case builder (shuffled table, -1 padding), with dtype sixth as here."""
    return steps.make_case(
        lens, block_size, num_q_heads, num_kv_heads, head_dim, dtype=dtype, **options
    )


def assert_close(out, ref, dtype):
    assert out.dtype == ref.dtype and out.shape == ref.shape
    torch.testing.assert_close(out.float(), ref.float(), atol=TOL[dtype], rtol=TOL[dtype])


@pytest.mark.parametrize("num_q_heads, num_kv_heads", [(4, 4), (8, 2), (8, 1)])
def test_reference_equals_sdpa_on_gathered_kv(num_q_heads, num_kv_heads):
    q, k, v, table, lens = make_case(
        [1, 7, 8, 9, 30], 8, num_q_heads, num_kv_heads, 64, torch.float32, device="cpu"
    )
    ref = paged_attention_ref(q, k, v, table, lens)
    for i, n in enumerate(lens.tolist()):
        # Gather K/V by slot mapping on the flattened cache: a different path from the reference.
        slots = [int(table[i, p // 8]) * 8 + p % 8 for p in range(n)]
        kk = k.flatten(0, 1)[slots].transpose(0, 1)  # (num_kv_heads, n, head_dim)
        vv = v.flatten(0, 1)[slots].transpose(0, 1)
        group = num_q_heads // num_kv_heads
        expected = F.scaled_dot_product_attention(
            q[i][:, None, :], kk.repeat_interleave(group, 0), vv.repeat_interleave(group, 0)
        )[:, 0]
        torch.testing.assert_close(ref[i], expected, atol=1e-5, rtol=1e-5)


def test_a_block_table_gives_each_sequence_its_own_blocks_padded_with_minus_one():
    g = torch.Generator().manual_seed(3)
    table = block_table([1, 5, 0, 12], 5, 9, generator=g, width=4, skip=(0,))
    rows = [[b for b in row if b != -1] for row in table.tolist()]
    assert [len(r) for r in rows] == [1, 1, 0, 3]
    assert all(
        row[len(r) :] == [-1] * (4 - len(r)) for row, r in zip(table.tolist(), rows, strict=True)
    )
    used = [b for r in rows for b in r]
    assert len(set(used)) == len(used) and 0 not in used and max(used) < 9
    in_order = block_table([6, 6], 3, 4, order="identity")
    assert in_order.tolist() == [[0, 1], [2, 3]] and in_order.dtype == torch.int32
    for bad, words in [
        (dict(lens=[10], num_blocks=2), "2 blocks"),
        (dict(lens=[10], num_blocks=9, width=2), "width 2"),
        (dict(lens=[1], num_blocks=2, order="sorted"), "'sorted'"),
    ]:
        with pytest.raises(ValueError, match=words):
            block_table(block_size=3, **bad)


def test_gather_kv_follows_the_block_table():
    cache = torch.arange(6 * 2).reshape(6, 2, 1, 1).float()  # slot s holds value s
    got = gather_kv(cache, torch.tensor([4, 1, 5], dtype=torch.int32), 5).flatten()
    assert got.tolist() == [8, 9, 2, 3, 10]


def split_for(variant, split):
    """The balanced variants choose their own chunks: they take no split=False."""
    return None if VARIANTS[variant].balanced else split


F32, F16 = torch.float32, torch.float16
BOUNDARY_CASES = [
    ("baseline", d, s, b) for d in (F32, F16) for s in (False, True) for b in (1, 4, 16, 64)
]
BOUNDARY_CASES += [(v, d, s, b) for v in OTHERS for d, s, b in ((F32, True, 1), (F16, False, 16))]


@pytest.mark.parametrize("variant, dtype, split, block_size", BOUNDARY_CASES)
def test_kernel_lengths_around_block_boundaries(variant, dtype, split, block_size):
    lens = sorted({1, max(1, block_size - 1), block_size, block_size + 1, 2 * block_size + 3})
    case = make_case(lens, block_size, 4, 2, 32, dtype, seed=block_size)
    out = paged_attention(
        *case, split=split_for(variant, split), partition_size=16, variant=variant
    )
    assert_close(out, paged_attention_ref(*case), dtype)


@pytest.mark.parametrize("head_dim", [32, 64, 80, 96, 112, 128, 256])
def test_kernel_head_dims(head_dim):
    case = make_case([5, 33], 16, 2, 1, head_dim, torch.float16, seed=head_dim)
    assert_close(paged_attention(*case), paged_attention_ref(*case), torch.float16)


@pytest.mark.parametrize("num_q_heads, num_kv_heads", [(2, 2), (4, 2), (8, 2), (8, 1), (16, 2)])
def test_kernel_gqa_and_mqa(num_q_heads, num_kv_heads):
    case = make_case([3, 20], 8, num_q_heads, num_kv_heads, 32, torch.float32, seed=num_q_heads)
    for split in (False, True):
        out = paged_attention(*case, split=split, partition_size=16)
        assert_close(out, paged_attention_ref(*case), torch.float32)


def test_kernel_block_size_256_and_long_split_sequence():
    case = make_case([300, 17], 256, 4, 4, 32, torch.float16, seed=7)
    for split in (False, True):
        out = paged_attention(*case, split=split, partition_size=64)
        assert_close(out, paged_attention_ref(*case), torch.float16)


def test_kernel_many_seeded_random_cases():
    rng = random.Random(1234)
    for seed in range(24):
        block_size = rng.choice([1, 2, 8, 16, 32, 128])
        num_kv_heads = rng.choice([1, 2])
        group = rng.choice([1, 2, 4, 8])
        head_dim = rng.choice([32, 64, 96])
        dtype = rng.choice([torch.float32, torch.float16])
        lens = [rng.randint(1, 70) for _ in range(rng.randint(1, 4))]
        case = make_case(
            lens, block_size, num_kv_heads * group, num_kv_heads, head_dim, dtype, seed=seed
        )
        split = rng.choice([None, False, True])
        out = paged_attention(*case, split=split, partition_size=rng.choice([16, 32]))
        assert_close(out, paged_attention_ref(*case), dtype)


def test_scale_argument_and_identity_table_layout():
    q, k, v, table, lens = make_case([12, 5], 4, 2, 2, 32, torch.float32)
    for scale in (0.05, 1.0):
        assert_close(
            paged_attention(q, k, v, table, lens, scale=scale),
            paged_attention_ref(q, k, v, table, lens, scale=scale),
            torch.float32,
        )
    # A contiguous layout is the special case block_table[i] = i * blocks_per_seq + arange.
    ident = torch.arange(2 * 3, dtype=torch.int32, device=q.device).reshape(2, 3)
    assert_close(
        paged_attention(q, k, v, ident, lens),
        paged_attention_ref(q, k, v, ident, lens),
        torch.float32,
    )


def test_output_does_not_depend_on_where_blocks_live():
    q, k, v, table, lens = make_case([11, 6], 4, 4, 2, 32, torch.float32, seed=3)
    out = paged_attention(q, k, v, table, lens)
    perm = torch.randperm(k.shape[0], generator=torch.Generator().manual_seed(0)).to(k.device)
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(len(perm), device=perm.device)
    moved = torch.where(table >= 0, inverse[table.long().clamp(min=0)].int(), table)
    torch.testing.assert_close(paged_attention(q, k[perm], v[perm], moved, lens), out)


def bad_inputs():
    q, k, v, table, lens = make_case([5, 9], 4, 4, 2, 32, torch.float32)
    yield "q", dict(q=q[0])
    yield "v_cache", dict(v_cache=v[:, :2])
    yield "num_kv_heads=2", dict(q=q[:, :3])
    yield "dtypes differ", dict(k_cache=k.half())
    yield "block_table", dict(block_table=table.long())
    yield "3 rows", dict(block_table=torch.cat([table, table[:1]]))
    yield "seq_lens", dict(seq_lens=lens.long())
    yield r"seq_lens must be in \[0, 16\]", dict(seq_lens=lens.new_tensor([5, 17]))
    yield r"got min -1", dict(seq_lens=lens.new_tensor([-1, 9]))
    bad = table.clone()
    bad[1, 0] = 99
    yield "block ids outside", dict(block_table=bad)
    yield "stride 1", dict(k_cache=torch.cat([k, k], dim=-1)[..., ::2])
    yield "power of two", dict(k_cache=k[:, :3].contiguous(), v_cache=v[:, :3].contiguous())
    yield "partition_size must be a positive multiple of 16, got 10", dict(partition_size=10)
    yield "tile must be a power of two in \\[16, 256\\] for tensor_core, got 48", dict(tile=48)
    yield "tile 64 does not divide partition_size 32", dict(tile=64, partition_size=32)
    yield "num_warps must be one of 1, 2, 4, 8, 16, got 3", dict(num_warps=3)
    yield "num_stages must be an int in \\[1, 8\\], got 0", dict(num_stages=0)
    yield "path must be one of", dict(path="tensor")
    yield "num_segments must be an int in \\[1, 4096\\], got 0", dict(num_segments=0)
    yield "num_segments=4 needs the split path", dict(num_segments=4, split=False)
    yield "dtype torch.int64 not in", dict(q=q.long(), k_cache=k.long(), v_cache=v.long())
    yield "variant must be one of .*got 'fast'", dict(variant="fast")
    yield "variant 'balanced' chooses its own chunks", dict(variant="balanced", split=False)
    yield "variant 'combined' chooses its own chunks", dict(variant="combined", num_segments=2)


@pytest.mark.parametrize("text, change", list(bad_inputs()), ids=[t for t, _ in bad_inputs()])
def test_launcher_rejects_bad_inputs_by_name(text, change):
    q, k, v, table, lens = make_case([5, 9], 4, 4, 2, 32, torch.float32)
    args = dict(q=q, k_cache=k, v_cache=v, block_table=table, seq_lens=lens) | change
    with pytest.raises(ValueError, match=text):
        paged_attention(**args)


@pytest.mark.skipif(DEVICE == "cuda", reason="interpreter-only check")
def test_bf16_is_refused_on_the_interpreter():
    case = make_case([3], 4, 2, 2, 32, torch.bfloat16)
    with pytest.raises(ValueError, match="bfloat16"):
        paged_attention(*case)


# --- Launch choices for GPUs that are not here: pure functions, then run under the interpreter.

T4, A100, H100 = (7, 5), (8, 0), (9, 0)


@pytest.mark.parametrize("capability", [T4, A100, H100, None])
@pytest.mark.parametrize("partition_size", [16, 32, 48, 512])
def test_every_partition_size_that_is_a_multiple_of_16_is_valid_everywhere(
    capability, partition_size
):
    cfg = launch_config(capability, 128, 4, partition_size)
    assert partition_size % cfg.tile == 0 and cfg.tile <= 64


def test_launch_config_per_gpu():
    t4, a100, h100 = (launch_config(c, 128, 4, 512) for c in (T4, A100, H100))
    assert t4.path == "cuda_core" and t4.block_g == 4 and t4.num_stages == 2  # group not padded
    assert a100.path == h100.path == "tensor_core" and h100.block_g == 16  # tl.dot's 16 rows
    assert (h100.tile, h100.num_warps, h100.num_stages) == (32, 4, 5)  # 2 K/V buffers
    assert [launch_config(H100, d, 4, 512).tile for d in (64, 128, 256)] == [64, 32, 16]
    assert launch_config(H100, 128, 4, 16).tile == 16  # min(preferred, largest 2^k dividing)
    assert launch_config(None, 128, 4, 512).tile == 16  # the interpreter
    # CUDA cores keep block_g x tile x block_d near 32 values a thread: smaller tiles for big
    # groups, and never above 16 (a review found tile 64 compiling 24 s on 2 cores, spilling)
    assert [launch_config(T4, 128, g, 512).tile for g in (1, 4, 8)] == [16, 8, 4]
    assert max(launch_config(T4, d, 1, 512).tile for d in (16, 32, 64)) == 16
    assert launch_config(H100, 128, 4, 512, path="cuda_core", tile=2).tile == 2
    # Prefetched ids free the pipeline's table stage: a 64-token tile, two buffers at 3 stages.
    pre = launch_config(H100, 128, 4, 512, variant="prefetch")
    assert (pre.tile, pre.num_stages, pre.variant) == (64, 3, "prefetch")
    assert launch_config(H100, 256, 4, 512, variant="prefetch").tile == 32
    assert launch_config(T4, 128, 4, 512, variant="combined").tile == 8  # CUDA cores: unchanged
    assert launch_config(H100, 128, 4, 512).variant == "baseline"  # the default until measured


def test_segments_follow_occupancy_and_length_without_cliffs():
    h100_sms = 132
    assert choose_num_segments(4, 8, 512, 512, h100_sms) == 1  # one partition: never split
    assert choose_num_segments(4, 8, 32768, 512, h100_sms) == 16  # few, long: fill the GPU
    assert choose_num_segments(256, 8, 4096, 512, h100_sms) == 1  # full GPU: no split
    assert 32 < choose_num_segments(1, 8, 10**6, 512, h100_sms) <= MAX_SEGMENTS
    # The old rule (seqs x kv_heads < 2 x SMs) split batch 32 into 8 and left 33 whole.
    s32, s33 = (choose_num_segments(b, 8, 4096, 512, h100_sms) for b in (32, 33))
    t32, t33 = (modelled_time(s, b, 8, 4096, 512, h100_sms) for s, b in ((s32, 32), (s33, 33)))
    assert s32 == s33 == 2 and t33 <= 1.1 * t32


def make_nan_padded_case(lens, block_size, dtype, seed=0):
    """A case whose cache slots outside every sequence hold NaN, with a clean copy."""
    q, k, v, table, seq_lens = make_case(lens, block_size, 4, 2, 32, dtype, seed=seed)
    used = torch.zeros(k.shape[0] * block_size, dtype=torch.bool, device=k.device)
    for i, n in enumerate(seq_lens.tolist()):
        pos = torch.arange(n, device=k.device)
        used[table[i, pos // block_size].long() * block_size + pos % block_size] = True
    dirty = [c.clone().flatten(0, 1) for c in (k, v)]
    for c in dirty:
        c[~used] = float("nan")
    shape = k.shape
    return (q, k, v, table, seq_lens), (q, *(c.view(shape) for c in dirty), table, seq_lens)


NAN_CASES = [("baseline", p, s) for p in ("tensor_core", "cuda_core") for s in (False, True)]
NAN_CASES += [(v, p, True) for v, p in zip(OTHERS, ["tensor_core", "cuda_core"] * 2, strict=True)]


@pytest.mark.parametrize("variant, path, split", NAN_CASES)
def test_empty_sequences_give_zeros_and_nan_in_unused_slots_is_never_read(variant, path, split):
    clean, dirty = make_nan_padded_case([0, 5, 0, 19], 4, torch.float32, seed=5)
    ref = paged_attention_ref(*clean)
    opts = dict(split=split_for(variant, split), path=path, variant=variant)
    # check_values=False once: the launcher then never reads seq_lens (the NaN case).
    out = paged_attention(*dirty, partition_size=16, check_values=split, **opts)
    assert not out.isnan().any()
    assert (out[0] == 0).all() and (out[2] == 0).all()
    assert_close(out, ref, torch.float32)
    only_empty = [t[:1] for t in dirty]
    assert (paged_attention(*only_empty, **opts) == 0).all()


T4_CASES = [("baseline", torch.float32, 1), ("baseline", torch.float16, 4)]
# exp2 changes the CUDA-core arithmetic (scale folded into q); combined has every change.
T4_CASES += [(v, torch.float32, 8) for v in ("baseline", "exp2", "combined")]


@pytest.mark.parametrize("variant, dtype, group", T4_CASES)
def test_cuda_core_path_with_the_t4_launch(variant, dtype, group):
    """The sm_75 path (products and tl.sum, group padded to a power of two only)."""
    case = make_case([3, 21, 40], 8, 2 * group, 2, 32, dtype, seed=group)
    cfg = launch_config(T4, 32, group, 32, variant=variant)
    ref = paged_attention_ref(*case)
    for split in dict.fromkeys(split_for(variant, s) for s in (False, True)):
        out = paged_attention(
            *case, split=split, partition_size=32, path=cfg.path, tile=cfg.tile, variant=variant
        )
        assert_close(out, ref, dtype)


@pytest.mark.parametrize(
    "variant, block_size", [("baseline", 1), ("baseline", 64), ("prefetch", 1), ("prefetch", 64)]
)
def test_gpu_tile_and_chunked_merge_under_the_interpreter(variant, block_size):
    """The H100's tile for head_dim 64 (64 tokens), and more segments than one merge chunk."""
    case = make_case([280, 7], block_size, 2, 1, 64, torch.float16, seed=block_size)
    cfg = launch_config(H100, 64, 2, 512, variant=variant)
    assert cfg.tile == 64 and -(-280 // 16) > 16
    ref = paged_attention_ref(*case)
    out = paged_attention(*case, split=False, tile=cfg.tile, variant=variant)
    assert_close(out, ref, torch.float16)
    out = paged_attention(*case, split=True, partition_size=16, num_segments=18, variant=variant)
    assert_close(out, ref, torch.float16)  # 18 segments: the merge reads 2 chunks of 16


def test_wide_table_short_sequences_and_non_contiguous_q():
    from paged.attention.kernel import launch

    q, k, v, table, lens = make_case([9, 30], 16, 4, 1, 32, torch.float32, table_width=4096)
    q_wide = torch.cat([q, torch.full_like(q, float("nan"))], dim=1)[:, ::2]  # strides (256, 64, 1)
    q_wide.copy_(q)
    assert not q_wide.is_contiguous() and q_wide.stride(-1) == 1
    ref = paged_attention_ref(q, k, v, table, lens)
    # 65,536 tokens of capacity: segments come from the lengths, or are capped by MAX_SEGMENTS.
    run = launch(q_wide, k, v, table, lens, split=True, partition_size=16)
    assert run.num_segments == 2
    assert_close(run.out, ref, torch.float32)
    run = launch(q_wide, k, v, table, lens, split=True, partition_size=16, check_values=False)
    assert run.num_segments == MAX_SEGMENTS
    assert_close(run.out, ref, torch.float32)


@pytest.mark.parametrize("variant", ["baseline", "combined"])
def test_a_group_of_64_query_heads_per_kv_head(variant):
    """GROUP 64 fills tl.dot's rows with real heads (wgmma on sm_90); tiny under the interpreter."""
    case = make_case([7, 1, 20], 4, 64, 1, 16, torch.float32, seed=64)
    out = paged_attention(*case, partition_size=16, variant=variant)
    assert_close(out, paged_attention_ref(*case), torch.float32)


def test_the_balanced_kernel_plans_its_chunks_like_the_python_plan():
    """The plan the kernel writes for the merge == `launch.balanced_plan`, and it covers all."""
    from paged.attention.balanced import launch_balanced
    from paged.attention.kernel import launch

    lens = [0, 1, 16, 17, 250, 40, 0, 96]
    case = make_case(lens, 8, 4, 2, 16, torch.float32, seed=2)
    ran = launch(*case, variant="balanced")
    grid, tile = ran.num_segments, ran.config.tile
    consts = dict(
        HEAD_DIM=16,
        BLOCK_D=16,
        BLOCK_SIZE=8,
        GROUP=2,
        BLOCK_G=16,
        TILE=tile,
        TENSOR_CORES=True,
        PRECISION="ieee",
        PREFETCH=False,
        EXP2=False,
        num_warps=4,
        num_stages=1,
    )
    *_, plan, _, _ = launch_balanced(*case, 0.25, consts)
    want = balanced_plan(lens, 2, grid, tile)
    assert plan.tolist() == [[first, count] for first, count, _ in want]
    for n, (_, count, length) in zip(lens, want, strict=True):
        assert length % tile == 0 and (count - 1) * length < n <= count * length or n == count == 0
    units = 2 * sum(count for _, count, _ in want)
    assert units <= max_balanced_units(len(lens), 2, grid)
    if ran.out.device.type == "cpu":  # the interpreter's small grid: programs loop over units
        assert units > grid  # (a GPU's grid, one wave per SM, outnumbers these 20 units)
    assert_close(ran.out, paged_attention_ref(*case), torch.float32)


def test_one_wave_of_equal_chunks_when_the_gpu_is_large():
    """On a GPU-sized grid the balanced plan gives each program about the same tokens."""
    lens = [4096] * 33  # 33 sequences x 8 heads = 264 pairs: half of an H100's 528 slots
    plan = balanced_plan(lens, 8, 528, 64)
    assert {(count, length) for _, count, length in plan} == {(2, 2048)}  # 528 units: one wave
    mixed = balanced_plan([100, 5000, 300, 9000], 8, 528, 64)
    lengths = {length for _, count, length in mixed if count > 1}
    assert max(lengths) <= 2 * min(lengths)  # long sequences cut into chunks of similar size


def test_occupancy_from_registers_and_shared_memory():
    # Compiled ahead of time (aot.py, sm_90, head_dim 128): baseline 96 registers and 38,144 B,
    # combined 168 registers and 71,680 B. An H100 SM has 65,536 registers and 228 KiB.
    assert programs_per_sm(96, 38144, 4) == 5
    assert programs_per_sm(168, 71680, 4) == 3
    assert programs_per_sm(96, 38144, 4, shared_per_sm=100 * 1024) == 2  # sm_86 / sm_89
    assert programs_per_sm(32, 0, 1) == 32  # capped by the programs an SM can hold


@pytest.mark.parametrize(
    "variant, split", [("baseline", False), ("baseline", True), ("balanced", None)]
)
def test_unchecked_lengths_and_ids_stay_inside_memory(variant, split):
    """check_values=False: a length past the table reads only the table; a -1 id reads block 0."""
    q, k, v, table, lens = make_case([9, 6], 4, 4, 2, 32, torch.float32, seed=8)
    capacity = table.shape[1] * 4  # 3 columns x 4 tokens
    too_long = torch.tensor([capacity + 50, 6], dtype=torch.int32, device=lens.device)
    holed = table.clone()
    holed[1, 0] = -1
    opts = dict(split=split, partition_size=16, check_values=False, variant=variant)
    filled = torch.where(table >= 0, table, 0)  # -1 padding past the length: block 0 too
    got = paged_attention(q, k, v, table, too_long, **opts)
    want = paged_attention_ref(q, k, v, filled, lens.new_tensor([capacity, 6]))
    assert_close(got, want, torch.float32)
    got = paged_attention(q, k, v, holed, lens, **opts)
    assert_close(
        got, paged_attention_ref(q, k, v, torch.where(holed >= 0, holed, 0), lens), torch.float32
    )


# What the interpreter cannot show: the code compiled for sm_75, sm_80 and sm_90, no GPU needed.
# One process compiles everything the tests below read (Triton starts once).
AOT_JOBS = dict(
    defaults=[dict(sm=sm, head_dim=128, group=4) for sm in (75, 90)],
    variants=[dict(sm=80, head_dim=128, group=4, variant=v, only_unsplit=True) for v in VARIANTS],
    spilling=[dict(sm=80, head_dim=256, tile=32, num_warps=1, num_stages=1, only_unsplit=True)],
    group_64=[dict(sm=90, head_dim=64, group=64, only_unsplit=True)],
)


@pytest.fixture(scope="module")
def aot_rows():
    """{job name: rows} from `aot.report_jobs`, compiled once for this module."""
    from pathlib import Path

    import triton

    from paged.gpu import aot

    if not (Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas").exists():
        pytest.skip("this Triton has no bundled ptxas")
    jobs = [(name, job) for name, listed in AOT_JOBS.items() for job in listed]
    results = aot.report_jobs([job for _, job in jobs])
    rows = {name: [] for name in AOT_JOBS}
    for (name, _), found in zip(jobs, results, strict=True):
        rows[name] += found
    return rows


def test_kernels_compile_ahead_of_time_for_t4_and_h100_without_spills(aot_rows):
    from paged.gpu import aot

    rows = aot_rows["defaults"]
    assert [(r["sm"], r["kernel"], r["split"]) for r in rows] == [
        (sm, kernel, split)
        for sm in (75, 90)
        for kernel, split in (("attention", False), ("attention", True), ("merge", True))
    ]
    assert {r["path"] for r in rows if r["sm"] == 75} == {"cuda_core"}
    assert not any(map(aot.spills, rows)) and all(r["registers"] <= 255 for r in rows)
    assert all(r["num_stages"] == 5 for r in rows if r["sm"] == 90 and r["kernel"] == "attention")


def test_the_spill_check_reads_stack_and_fails_on_a_spilling_config(aot_rows):
    """Spills show in cuobjdump's STACK, not LOCAL: head_dim 256 on a single warp spills."""
    from paged.gpu import aot

    row = aot.parse_resource_usage("Function k:\n  REG:255 STACK:1408 SHARED:0 LOCAL:0 TEXTURE:0")
    assert row == dict(registers=255, stack_bytes=1408, local_bytes=0) and aot.spills(row)
    (row,) = aot_rows["spilling"]
    assert row["registers"] == 255 and row["stack_bytes"] > 0 and aot.spills(row)


def test_every_variant_compiles_for_sm80_without_spills_at_its_defaults(aot_rows):
    from paged.gpu import aot

    rows = aot_rows["variants"]
    assert {r["variant"] for r in rows} == set(VARIANTS)
    assert not [r for r in rows if aot.spills(r) or r["registers"] > 255]
    assert {r["mma"] for r in rows} == {"mma"}  # tensor cores (mma.sync) on sm_80
    assert {r["kernel"] for r in rows if VARIANTS[r["variant"]].balanced} == {"balanced"}
    prefetch = [r for r in rows if r["variant"] == "prefetch" and r["kernel"] == "attention"]
    assert {(r["tile"], r["num_stages"]) for r in prefetch} == {(64, 3)}
    assert max(r["shared_bytes"] for r in rows) < 99 * 1024  # fits sm_86 / sm_89 too


def test_a_group_of_64_compiles_to_wgmma_on_sm90(aot_rows):
    from paged.gpu import aot

    (row,) = aot_rows["group_64"]
    assert row["mma"] == "wgmma" and not aot.spills(row)


gpu = pytest.mark.gpu
F16, BF16 = torch.float16, torch.bfloat16
needs_cuda = pytest.mark.skipif(DEVICE != "cuda", reason="needs a CUDA GPU")


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("block_size", [1, 16, 256])
def test_gpu_long_sequences(dtype, block_size):
    if dtype == torch.bfloat16 and torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("bf16 needs compute capability >= 8.0")
    case = make_case([1, 1000, 4097, 9000], block_size, 32, 8, 128, dtype, seed=block_size)
    ref = paged_attention_ref(*case)
    for split in (None, False, True):
        assert_close(paged_attention(*case, split=split), ref, dtype)


@gpu
@needs_cuda
@pytest.mark.parametrize(
    "head_dim, group, block_size, dtype",
    [
        (64, 1, 1, F16),
        (64, 4, 16, BF16),
        (64, 8, 256, F16),
        (128, 1, 16, BF16),
        (128, 4, 256, F16),
        (128, 8, 1, BF16),
        (256, 1, 256, BF16),
        (256, 4, 1, F16),
        (256, 8, 16, BF16),
        (128, 4, 16, F16),
    ],
)
def test_gpu_head_dims_groups_and_block_sizes(head_dim, group, block_size, dtype):
    if dtype == torch.bfloat16 and torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("bf16 needs compute capability >= 8.0")
    lens = [0, 1, 77, 2000, 5003]
    case = make_case(lens, block_size, 2 * group, 2, head_dim, dtype, seed=head_dim + group)
    ref = paged_attention_ref(*case)
    for split in (None, False, True):
        assert_close(paged_attention(*case, split=split, check_values=False), ref, dtype)


@gpu
@needs_cuda
def test_gpu_cuda_core_path_and_wide_table():
    """The sm_75 variant on this GPU; a table sized for 128k tokens holding short sequences."""
    lens = [1, 100, 3000] * 8
    case = make_case(lens, 16, 32, 8, 128, torch.float16, seed=3, table_width=8192)
    ref = paged_attention_ref(*case)
    for split in (None, True):
        assert_close(paged_attention(*case, split=split, path="cuda_core"), ref, torch.float16)
        assert_close(paged_attention(*case, split=split, check_values=False), ref, torch.float16)


@gpu
@needs_cuda
@pytest.mark.parametrize("variant", OTHERS)
def test_gpu_every_variant_on_long_and_unequal_sequences(variant):
    dtype = torch.bfloat16 if torch.cuda.get_device_capability() >= (8, 0) else torch.float16
    case = make_case([0, 1, 1000, 4097, 9000, 77], 16, 32, 8, 128, dtype, seed=11)
    ref = paged_attention_ref(*case)
    for check_values in (True, False):
        out = paged_attention(*case, check_values=check_values, variant=variant)
        assert_close(out, ref, dtype)


@gpu
@needs_cuda
@pytest.mark.parametrize(
    "head_dim, variant",
    [(64, "baseline"), (128, "baseline"), (256, "baseline")] + [(128, v) for v in OTHERS],
)
def test_gpu_default_launch_does_not_spill(head_dim, variant):
    from paged.attention.kernel import launch

    case = make_case([700, 3000], 16, 32, 8, head_dim, torch.float16)
    split = None if VARIANTS[variant].balanced else True
    for compiled in launch(*case, split=split, variant=variant).compiled:
        if not hasattr(compiled, "n_spills"):
            pytest.skip("this Triton's CompiledKernel has no n_spills")
        assert compiled.n_spills == 0 and compiled.n_regs <= 255


def kernel_on_device(*args):
    """The kernel on the device under test, for a CPU model: tensors go there and back."""
    return paged_attention(*(t.to(DEVICE) for t in args)).cpu()


def test_tiny_decoder_paged_equals_contiguous():
    from paged.attention.tiny_model import TinyDecoder

    model = TinyDecoder(seed=1)
    tokens, logits = model.generate_contiguous([3, 1, 4, 1, 5], steps=9)
    p_tokens, p_logits, table = model.generate_paged([3, 1, 4, 1, 5], steps=9, block_size=4)
    k_tokens, k_logits, _ = model.generate_paged([3, 1, 4, 1, 5], 9, attention=kernel_on_device)
    assert tokens == p_tokens == k_tokens and len(table) == 4  # 13 tokens in blocks of 4
    torch.testing.assert_close(p_logits, logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(k_logits, logits, atol=1e-5, rtol=1e-5)


def test_the_backend_is_described_in_the_editions_language(monkeypatch):
    from paged.attention import backend, describe_backend

    for lang, word in (("en", "kernel backend: "), ("ko", "커널 백엔드: ")):
        monkeypatch.setenv("PAGED_LANG", lang)
        line = describe_backend()
        assert line.startswith(word) and backend() not in line.split(": ", 1)[0]
    monkeypatch.setattr("paged.attention.INTERPRETED", None)
    monkeypatch.setenv("PAGED_LANG", "en")
    assert describe_backend() == "kernel backend: none: Triton does not install on this platform"


def test_triton_imported_before_paged_is_named_not_left_to_fail_at_launch():
    """Issue 40: Triton fixes its mode when first imported; paged decides it, or says what to do."""
    import os
    import subprocess
    import sys

    from paged.attention import triton_mode

    assert triton_mode.loaded_mode() == triton_mode.INTERPRETED  # this process agrees with itself
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # no GPU for the child, whatever this machine has
    code = "import triton; import paged.attention as a; print(a.backend())"
    early = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert early.returncode == 1 and "TritonImportedTooEarly" in early.stderr, early.stderr[-2000:]
    assert "Import paged" in early.stderr and "TRITON_INTERPRET=1" in early.stderr
    env["TRITON_INTERPRET"] = "1"  # set before Python starts: Triton imported first is fine
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split() == ["interpreter"], done.stderr[-2000:]
