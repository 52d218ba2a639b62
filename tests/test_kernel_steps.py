"""Chapter 7's helpers: its paged cases, its reference check, and the kernel-reads picture."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from paged import PagedAllocator, viz  # noqa: E402
from paged.attention import check_inputs, paged_attention_ref, steps  # noqa: E402
from paged.trace import paged_layout  # noqa: E402


def test_cases_are_shuffled_padded_and_valid():
    for args in steps.cases():
        q, k_cache, _, table, seq_lens = args
        check_inputs(*args)  # ids in range, lengths fit the table
        block_size = k_cache.shape[1]
        used = [-(-n // block_size) for n in seq_lens.tolist()]
        ids = [b for row, u in zip(table.tolist(), used, strict=True) for b in row[:u]]
        assert len(set(ids)) == len(ids)  # no block shared between sequences
        assert all(set(row[u:]) == {-1} for row, u in zip(table.tolist(), used, strict=True))
        assert q.dtype == torch.float32 and q.shape[-1] == steps.HEAD_DIM
    lens = {n for args in steps.cases() for n in args[4].tolist()}
    for block_size, *_ in steps.CASE_SPECS:  # the edge lengths of every block size
        assert {block_size, block_size + 1} <= lens
    assert 1 in lens and all(n <= 16 for args in steps.cases(16) for n in args[4].tolist())


def test_check_against_reference_passes_the_reference_and_names_a_wrong_case(capsys):
    steps.check_against_reference(paged_attention_ref, "reference")
    assert "reference == paged_attention_ref" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="block_size 1, seq_lens"):
        steps.check_against_reference(lambda q, *rest: torch.zeros_like(q), "zeros")
    assert steps.max_error(paged_attention_ref) == 0.0


def test_draw_kernel_reads_outlines_exactly_the_blocks_read():
    alloc = PagedAllocator(num_blocks=12, block_size=4, seed=0)
    alloc.allocate("A", 6)
    alloc.allocate("B", 3)
    reads = [0] * 12
    for i, b in enumerate(alloc.block_table("A")):
        reads[b] = min(4, 6 - 4 * i)  # 4 then 2 tokens
    fig, ax = plt.subplots()
    viz.draw_kernel_reads(paged_layout(alloc), reads, ax=ax, columns=6)
    thick = [p for p in ax.patches if not p.get_fill() and p.get_linewidth() == 3]
    assert len(thick) == 2  # A's two blocks, not B's
    counts = sorted(t.get_text() for t in ax.texts if t.get_color() == "white")
    assert counts == ["2", "4"]  # tokens read, as the buffer says
    assert "B" in [t.get_text() for t in ax.texts]  # B's block: not read, named
    assert ax.get_title(loc="left").startswith("What the kernel read: 6 tokens from 2 of 12")
    with pytest.raises(ValueError, match="one entry per physical block"):
        viz.draw_kernel_reads(paged_layout(alloc), reads[:5])
    plt.close(fig)


def test_poisoned_cases_hide_nothing_but_what_no_token_holds():
    """The checkers' cases: the same attention, NaN wherever no token lives, guards around."""
    import numpy as np

    from paged.exercises.engine.triton_checks import whole

    q, k_cache, v_cache, table, seq_lens = args = steps.make_case([1, 4, 5, 23], 4, poison=True)
    out = paged_attention_ref(*args)
    assert torch.isfinite(out).all()
    block_size = k_cache.shape[1]
    used = [-(-n // block_size) for n in seq_lens.tolist()]
    assert 0 not in {b for row, u in zip(table.tolist(), used, strict=True) for b in row[:u]}
    holds = torch.zeros(k_cache.shape[:2], dtype=torch.bool)
    for row, n in zip(table.tolist(), seq_lens.tolist(), strict=True):
        for pos in range(n):
            holds[row[pos // block_size], pos % block_size] = True
    for cache in (k_cache, v_cache):
        assert cache.is_contiguous()
        assert torch.isfinite(cache[holds]).all() and torch.isnan(cache[~holds]).all()
        flat, start = whole(cache), cache.storage_offset()
        block = cache[0].numel()
        assert start == block and flat.numel() == cache.numel() + 2 * block
        assert torch.isnan(flat[:start]).all() and torch.isnan(flat[start + cache.numel() :]).all()
    assert torch.isnan(whole(q)[q.numel() :]).all()
    assert set(whole(table)[table.numel() :].tolist()) == {-1}
    assert np.isfinite(steps.make_case([1, 4, 5, 23], 4)[1].numpy()).all()  # unpoisoned: as before


def test_library_source_holds_every_step_of_the_kernel():
    source = steps.library_source()
    for name in (
        "// BLOCK_SIZE",
        "% BLOCK_SIZE",
        "stride_kb",
        "m_i",
        "l_i",
        "alpha",
        "BLOCK_G",
        "tl.dot",
        "SPLIT",
        "part_lse_ptr",
    ):
        assert name in source, name
    assert source.startswith("@triton.jit\ndef ") and source.count("@triton.jit") >= 3
