"""Exercise checkers. The plain-Python and PyTorch ones are tested in test_exercises_memory.py;
this file keeps the Triton checkers of the paged kernel (about to move to their own file)."""

# ---- chapter 7: the Triton exercise checkers -------------------------------------------------
# One kernel per exercise with a VARIANT switch plays the learner: the right answer and each
# typical mistake. It runs under Triton's CPU interpreter here (on the GPU where there is one).
import functools  # noqa: E402

import pytest  # noqa: E402

from paged import exercises as ex  # noqa: E402
from paged.attention import backend  # noqa: E402  (sets TRITON_INTERPRET=1 before any kernel)

needs_triton = pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed")

if backend() != "unavailable":
    import triton
    import triton.language as tl

    @triton.jit
    def gather_variants(cache_ptr, block_table_ptr, out_ptr, seq_len, BLOCK_SIZE: tl.constexpr,
                        ROW: tl.constexpr, TILE: tl.constexpr, VARIANT: tl.constexpr):  # fmt: skip
        pos = tl.program_id(0) * TILE + tl.arange(0, TILE)
        mask = pos < seq_len
        cols = tl.arange(0, ROW)
        index = pos if VARIANT == "table_by_position" else pos // BLOCK_SIZE
        block = tl.load(block_table_ptr + index, mask=mask, other=0)
        offset = pos if VARIANT == "no_modulo" else pos % BLOCK_SIZE
        slot = pos if VARIANT == "no_table" else block * BLOCK_SIZE + offset
        if VARIANT == "slot_not_times_row":
            addr = slot[:, None] + cols[None, :]
        elif VARIANT == "block_plus_offset":
            addr = (block + offset)[:, None] * ROW + cols[None, :]
        else:
            addr = slot[:, None] * ROW + cols[None, :]
        x = tl.load(cache_ptr + addr, mask=mask[:, None])
        store_mask = (pos >= 0) if VARIANT == "unmasked_store" else mask
        tl.store(out_ptr + pos[:, None] * ROW + cols[None, :], x, mask=store_mask[:, None])

    @triton.jit
    def gather_stub(cache_ptr, block_table_ptr, out_ptr, seq_len, BLOCK_SIZE: tl.constexpr,
                    ROW: tl.constexpr, TILE: tl.constexpr):  # fmt: skip
        """The notebook's stub: a docstring and comments, no code."""

    @triton.jit
    def gather_broken(cache_ptr, block_table_ptr, out_ptr, seq_len, BLOCK_SIZE: tl.constexpr,
                      ROW: tl.constexpr, TILE: tl.constexpr):  # fmt: skip
        tl.store(out_ptr + tl.arange(0, ROW), tl.load(cache_ptr + tl.arange(0, ROW)) + undefined)  # noqa: F821

    @triton.jit
    def softmax_variants(q_ptr, k_ptr, v_ptr, block_table_ptr, seq_lens_ptr, out_ptr, scale,
                         max_blocks, BLOCK_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
                         GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, TILE: tl.constexpr,
                         VARIANT: tl.constexpr):  # fmt: skip
        seq, head = tl.program_id(0), tl.program_id(1)
        kv_head = head // GROUP
        d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
        seq_len = tl.load(seq_lens_ptr + seq)
        m_i = tl.full([], float("-inf"), tl.float32)
        l_i = tl.zeros([], tl.float32)
        acc = tl.zeros([HEAD_DIM], tl.float32)
        for t0 in range(0, seq_len, TILE):
            pos = t0 + tl.arange(0, TILE)
            mask = pos < seq_len
            index = seq * max_blocks + pos // BLOCK_SIZE
            block = tl.load(block_table_ptr + index, mask=mask, other=0)
            rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
            k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            s = tl.sum(q[None, :] * k, 1) * scale
            if VARIANT != "no_mask":
                s = tl.where(mask, s, float("-inf"))
            if VARIANT == "tile_max" or VARIANT == "no_max":
                p = tl.exp(s - tl.max(s, 0)) if VARIANT == "tile_max" else tl.exp(s)
                l_i = l_i + tl.sum(p, 0)
                acc = acc + tl.sum(p[:, None] * v, 0)
            else:
                m_new = tl.maximum(m_i, tl.max(s, 0))
                alpha = tl.exp(m_i - m_new)
                p = tl.exp(s - m_i) if VARIANT == "old_max" else tl.exp(s - m_new)
                keep_l = VARIANT == "no_rescale" or VARIANT == "acc_only"
                keep_acc = VARIANT == "no_rescale" or VARIANT == "l_only"
                l_i = (l_i if keep_l else l_i * alpha) + tl.sum(p, 0)
                acc = (acc if keep_acc else acc * alpha) + tl.sum(p[:, None] * v, 0)
                m_i = m_new
        if l_i > 0:
            tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)

    @triton.jit
    def softmax_update_stub(m_i, l_i, acc, s, v, mask):
        return m_i, l_i, acc

    @triton.jit
    def softmax_stub(q_ptr, k_ptr, v_ptr, block_table_ptr, seq_lens_ptr, out_ptr, scale,
                     max_blocks, BLOCK_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
                     GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, TILE: tl.constexpr):  # fmt: skip
        """The notebook's stub: the loop calls an update that returns the state unchanged."""
        seq, head = tl.program_id(0), tl.program_id(1)
        m_i = tl.full([], float("-inf"), tl.float32)
        l_i = tl.zeros([], tl.float32)
        acc = tl.zeros([HEAD_DIM], tl.float32)
        seq_len = tl.load(seq_lens_ptr + seq)
        for t0 in range(0, seq_len, TILE):
            pos = t0 + tl.arange(0, TILE)
            s = pos.to(tl.float32)
            m_i, l_i, acc = softmax_update_stub(m_i, l_i, acc, s, s[:, None], pos < seq_len)
        if l_i > 0:
            d = tl.arange(0, HEAD_DIM)
            tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)


class Variant:
    """A VARIANT of a test kernel, launched as the checker launches the learner's: k[grid](...)."""

    def __init__(self, kernel, variant):
        self.kernel, self.variant = kernel, variant

    def __getitem__(self, grid):
        return functools.partial(self.kernel[grid], VARIANT=self.variant)


GATHER_HINTS = {
    "table_by_position": "use block_table[pos // BLOCK_SIZE]",
    "no_modulo": "pos % BLOCK_SIZE, not pos",
    "no_table": "as if the cache were contiguous",
    "slot_not_times_row": "multiply the slot by ROW",
    "block_plus_offset": "not block + offset",
    "unmasked_store": "mask the store",
}


@needs_triton
def test_gather_kernel_checker_right_wrong_and_stub(capsys):
    assert ex.check_gather_kernel(Variant(gather_variants, "right")) is True
    assert "gather_kernel: correct" in capsys.readouterr().out
    for variant, hint in GATHER_HINTS.items():
        assert ex.check_gather_kernel(Variant(gather_variants, variant)) is False, variant
        out = capsys.readouterr().out
        assert "not quite" in out and "hint:" in out and hint in out, (variant, out)
    for stub in (gather_stub, None):
        assert ex.check_gather_kernel(stub) is False
        assert "not yet" in capsys.readouterr().out
    assert ex.check_gather_kernel(gather_broken) is False
    assert "did not run" in capsys.readouterr().out


SOFTMAX_HINTS = {
    "no_rescale": "you never rescale",
    "tile_max": "each tile's own max",
    "l_only": "you rescale l_i but not acc",
    "acc_only": "you rescale acc but not l",
    "no_mask": "tl.where(mask, s, float('-inf'))",
    "old_max": "m_i is still -inf",
    "no_max": "overflows float32",
}


@needs_triton
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's exp overflow, on purpose
def test_online_softmax_checker_right_wrong_and_stub(capsys):
    assert ex.check_online_softmax_kernel(Variant(softmax_variants, "right")) is True
    assert "online_softmax: correct" in capsys.readouterr().out
    for variant, hint in SOFTMAX_HINTS.items():
        assert ex.check_online_softmax_kernel(Variant(softmax_variants, variant)) is False
        out = capsys.readouterr().out
        assert "not quite" in out and "hint:" in out and hint in out, (variant, out)
    for stub in (softmax_stub, None):
        assert ex.check_online_softmax_kernel(stub) is False
        assert "not yet" in capsys.readouterr().out
