"""The Triton kernel against the reference, and the reference against PyTorch's SDPA.

Without a GPU these run under Triton's CPU interpreter, so shapes stay small. Tolerances:
fp32 runs ieee dot products in fp32, so only summation order differs: 1e-5. fp16 inputs
(eps 2**-10 ~ 1e-3) have the softmax weights rounded to fp16 before P @ V and the output
rounded to fp16, a few eps on outputs of size ~1: 5e-3. bf16 (eps 2**-7): 2e-2, GPU only.
"""

import random

import pytest
import torch
import torch.nn.functional as F

from paged.attention import backend, gather_kv, paged_attention, paged_attention_ref

TOL = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 2e-2}
DEVICE = "cuda" if backend() == "cuda" else "cpu"
pytestmark = pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed")


def make_case(
    lens,
    block_size,
    num_q_heads,
    num_kv_heads,
    head_dim,
    dtype,
    seed=0,
    device=DEVICE,
    spare_blocks=3,
):
    """Random q and caches, and a shuffled block table padded with -1 past each sequence."""
    g = torch.Generator().manual_seed(seed)
    blocks_per_seq = [-(-n // block_size) for n in lens]
    num_blocks = sum(blocks_per_seq) + spare_blocks
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k_cache = torch.randn(shape, generator=g).to(dtype)
    v_cache = torch.randn(shape, generator=g).to(dtype)
    q = torch.randn(len(lens), num_q_heads, head_dim, generator=g).to(dtype)
    ids = torch.randperm(num_blocks, generator=g).tolist()
    table = torch.full((len(lens), max(blocks_per_seq) + 1), -1, dtype=torch.int32)
    for i, nb in enumerate(blocks_per_seq):
        table[i, :nb] = torch.tensor([ids.pop() for _ in range(nb)])
    seq_lens = torch.tensor(lens, dtype=torch.int32)
    return [t.to(device) for t in (q, k_cache, v_cache, table, seq_lens)]


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


def test_gather_kv_follows_the_block_table():
    cache = torch.arange(6 * 2).reshape(6, 2, 1, 1).float()  # slot s holds value s
    got = gather_kv(cache, torch.tensor([4, 1, 5], dtype=torch.int32), 5).flatten()
    assert got.tolist() == [8, 9, 2, 3, 10]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("block_size", [1, 4, 16, 64])
def test_kernel_lengths_around_block_boundaries(dtype, split, block_size):
    lens = sorted({1, max(1, block_size - 1), block_size, block_size + 1, 2 * block_size + 3})
    case = make_case(lens, block_size, 4, 2, 32, dtype, seed=block_size)
    out = paged_attention(*case, split=split, partition_size=16)
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
    yield r"seq_lens must be in \[1, 16\]", dict(seq_lens=torch.tensor([5, 17], dtype=torch.int32))
    yield r"seq_lens must be in", dict(seq_lens=torch.tensor([0, 9], dtype=torch.int32))
    bad = table.clone()
    bad[1, 0] = 99
    yield "block ids outside", dict(block_table=bad)
    yield "stride 1", dict(k_cache=torch.cat([k, k], dim=-1)[..., ::2])
    yield "power of two", dict(k_cache=k[:, :3].contiguous(), v_cache=v[:, :3].contiguous())
    yield "partition_size", dict(split=True, partition_size=10)
    yield "dtype torch.int64 not in", dict(q=q.long(), k_cache=k.long(), v_cache=v.long())


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


gpu = pytest.mark.gpu
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


def test_tiny_decoder_paged_equals_contiguous():
    from paged.attention.tiny_model import TinyDecoder

    model = TinyDecoder(seed=1)
    tokens, logits = model.generate_contiguous([3, 1, 4, 1, 5], steps=9)
    p_tokens, p_logits, table = model.generate_paged([3, 1, 4, 1, 5], steps=9, block_size=4)
    k_tokens, k_logits, _ = model.generate_paged([3, 1, 4, 1, 5], 9, attention=paged_attention)
    assert tokens == p_tokens == k_tokens and len(table) == 4  # 13 tokens in blocks of 4
    torch.testing.assert_close(p_logits, logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(k_logits, logits, atol=1e-5, rtol=1e-5)
