"""Every parameter a Triton puzzle takes is varied, and the answers that hold one fixed fail.

A learner's kernel may hard-code what the chapter's example holds (HEAD_DIM 16, scale 1/4, ROW
8), let one program do every program's work, or run a tl.dot per query head where the puzzle
asks for one per group. Each such answer here is the model answer with one learner's edit (or,
where the edit is structural, a whole kernel), and it must fail on every seed: the fixed cases
catch it, not a lucky draw. The first test says why they can: no launch argument keeps one
value across a puzzle's fixed cases. Where a hint is due, the test names it by its catalogue
and key ("HINTS.own_scale": `test_exercises_triton.hint_text`), never by its words.
"""

import importlib.util
import inspect
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch

from paged.attention import backend  # sets TRITON_INTERPRET=1 before triton is imported

pytestmark = [
    pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed"),
    pytest.mark.usefixtures("english"),  # conftest.py
]

if backend() != "unavailable":
    from test_exercises_triton import hint_text

    from paged import exercises as ex
    from paged.exercises import answers
    from paged.exercises.engine import verdicts

PUZZLES = [
    "stamp_kernel",
    "copy_kernel",
    "copy_2d_kernel",
    "row_softmax_kernel",
    "dot_kernel",
    "gather_kernel",
    "tile_scores_kernel",
    "known_max_kernel",
    "online_softmax_kernel",
    "gqa_scores_kernel",
    "merge_kernel",
]


class Recorder:
    """Stands in for a kernel: records the grid and arguments of its one launch, runs nothing."""

    fn = None

    def __init__(self):
        self.launch = None

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launch = (grid, args, kwargs)
            raise StopIteration  # nothing runs: only the arguments are wanted

        return launch


def _arguments(spec, params, seed):
    kernel = Recorder()
    case = spec.build(params, seed)
    with pytest.raises(StopIteration):
        case.run(kernel)
    _, args, kwargs = kernel.launch
    named = {f"argument {i}": a for i, a in enumerate(args)} | kwargs
    return {k: tuple(v.shape) if isinstance(v, torch.Tensor) else v for k, v in named.items()}


def test_every_puzzle_is_listed_here():
    exported = {n.removeprefix("check_") for n in [*ex.basics.__all__, *ex.kernels.__all__]}
    assert exported == set(PUZZLES)


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_no_launch_argument_keeps_one_value_across_the_fixed_cases(puzzle):
    """A scalar, a constexpr or a tensor's shape that every fixed case holds alike is one an
    answer may hard-code and pass on every seed."""
    spec = getattr(ex, f"check_{puzzle}").spec
    seen = {}
    for i, params in enumerate(spec.fixed):
        for name, value in _arguments(spec, params, 1000 + i).items():
            seen.setdefault(name, set()).add(value)
    constant = {name: values.pop() for name, values in seen.items() if len(values) == 1}
    assert not constant, f"{puzzle}: the fixed cases hold {constant} alike"


def _edited(puzzle, edits):
    """The model answer with each (old, new) replaced once: a learner's small edit."""
    source = textwrap.dedent(inspect.getsource(answers.find(puzzle).fn))
    for old, new in edits:
        assert source.count(old) == 1, f"{old!r} is not once in the model answer of {puzzle}"
        source = source.replace(old, new)
    return source


def _kernel(puzzle, source, stem):
    """`source` run from a file, as a chapter's cell runs it: its kernel named `puzzle`."""
    path = FOLDER / f"{stem}.py"
    path.write_text(f"import triton\nimport triton.language as tl\n\n{source}")
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(stem, path))
    module.__spec__.loader.exec_module(module)
    return getattr(module, puzzle)


FOLDER = Path(tempfile.mkdtemp(prefix="paged-fixed-params-"))
ONE_OVER_SQRT = "/ tl.sqrt(HEAD_DIM * 1.0)"


# (puzzle, what the learner did, edits of the model answer, the hint due or None: any refusal)
EDITS = [
    ("tile_scores_kernel", "sqrt_dim", [("* scale  #", f"{ONE_OVER_SQRT}  #")], "HINTS.own_scale"),
    ("tile_scores_kernel", "quarter", [("* scale  #", "* 0.25  #")], "HINTS.own_scale"),
    ("tile_scores_kernel", "d16", [("d = tl.arange(0, HEAD_DIM)", "d = tl.arange(0, 16)")], None),
    (
        "known_max_kernel",
        "sqrt_dim",
        [('* scale, float("-inf")', f'{ONE_OVER_SQRT}, float("-inf")')],
        "HINTS.own_scale",
    ),
    (
        "online_softmax_kernel",
        "sqrt_dim",
        [('* scale, float("-inf")', f'{ONE_OVER_SQRT}, float("-inf")')],
        "HINTS.own_scale",
    ),
    (
        "online_softmax_kernel",
        "d16",
        [
            ("d = tl.arange(0, HEAD_DIM)", "d = tl.arange(0, 16)"),
            ("acc = tl.zeros([HEAD_DIM], tl.float32)", "acc = tl.zeros([16], tl.float32)"),
        ],
        None,
    ),
    ("gqa_scores_kernel", "sqrt_dim", [("* scale  #", f"{ONE_OVER_SQRT}  #")], "HINTS.own_scale"),
    (
        "gqa_scores_kernel",
        "rows_head_dim_apart",
        [
            (
                "out_rows = (seq * KV_HEADS * GROUP + heads) * TILE",
                "out_rows = (seq * KV_HEADS * GROUP + heads) * HEAD_DIM",
            )
        ],
        None,
    ),
    ("merge_kernel", "d16", [("d = tl.arange(0, HEAD_DIM)", "d = tl.arange(0, 16)")], None),
    ("gather_kernel", "row8", [("cols = tl.arange(0, ROW)", "cols = tl.arange(0, 8)")], None),
    # hints that once named another mistake
    (
        "copy_2d_kernel",
        "bounds_swapped",
        [
            (
                "(rows < M)[:, None] & (cols < N)[None, :]",
                "(rows < N)[:, None] & (cols < M)[None, :]",
            )
        ],
        "COPY_2D.bounds_swapped",
    ),
    ("copy_kernel", "le", [("mask = offs < n", "mask = offs <= n")], "COPY.off_by_one"),
    (
        "online_softmax_kernel",
        "one_token_skipped",
        [("range(0, seq_len, TILE)", "range(0, seq_len - 1, TILE)")],
        "HINTS.one_token",
    ),
    (
        "known_max_kernel",
        "one_token_skipped",
        [("range(0, seq_len, TILE)", "range(0, seq_len - 1, TILE)")],
        "HINTS.one_token",
    ),
    (
        "online_softmax_kernel",
        "max_from_minus_1e4",
        [('m_i = tl.full([], float("-inf"), tl.float32)', "m_i = tl.full([], -1e4, tl.float32)")],
        "SOFTMAX.negative",
    ),
    (
        "online_softmax_kernel",
        "head_div",
        [("kv_head = head // GROUP", "kv_head = head // KV_HEADS")],
        "HINTS.head_div",
    ),
    (
        "known_max_kernel",
        "head_div",
        [("kv_head = head // GROUP", "kv_head = head // KV_HEADS")],
        "HINTS.head_div",
    ),
    (
        "tile_scores_kernel",
        "tail_unwritten",
        [('pos, tl.where(mask, s, float("-inf")))', "pos, s, mask=mask)")],
        "HINTS.tail_unwritten",
    ),
    (
        "gather_kernel",
        "physical_order",
        [
            (
                "tl.store(out_ptr + pos[:, None] * ROW",
                "tl.store(out_ptr + slot[:, None] * ROW",
            )
        ],
        "HINTS.physical",
    ),
]

# Answers whose mistake is their structure, written whole.
PROGRAM_0_SCORES = """
@triton.jit
def tile_scores_kernel(q_ptr, k_ptr, block_table_ptr, scores_ptr, seq_len, kv_head, scale,
                       BLOCK_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
                       HEAD_DIM: tl.constexpr, TILE: tl.constexpr):
    # program 0 does every tile, the others nothing
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + d)
    last = tl.where(tl.program_id(0) == 0, tl.num_programs(0), 0)
    for i in range(0, last):
        pos = i * TILE + tl.arange(0, TILE)
        mask = pos < seq_len
        block = tl.load(block_table_ptr + pos // BLOCK_SIZE, mask=mask, other=0)
        rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        s = tl.sum(q[None, :] * k, 1) * scale
        tl.store(scores_ptr + pos, tl.where(mask, s, float("-inf")))
"""

EVERY_HEAD_SOFTMAX = """
@triton.jit
def online_softmax_kernel(q_ptr, k_ptr, v_ptr, block_table_ptr, seq_lens_ptr, out_ptr, scale,
                          max_blocks, BLOCK_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
                          GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, TILE: tl.constexpr):
    # program (seq, 0) does every head of its sequence, the others nothing
    seq = tl.program_id(0)
    d = tl.arange(0, HEAD_DIM)
    seq_len = tl.load(seq_lens_ptr + seq)
    heads = tl.where(tl.program_id(1) == 0, KV_HEADS * GROUP, 0)
    for head in range(0, heads):
        q = tl.load(q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d)
        m_i = tl.full([], float("-inf"), tl.float32)
        l_i = tl.zeros([], tl.float32)
        acc = tl.zeros([HEAD_DIM], tl.float32)
        for t0 in range(0, seq_len, TILE):
            pos = t0 + tl.arange(0, TILE)
            mask = pos < seq_len
            block = tl.load(block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask,
                            other=0)
            rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + head // GROUP) * HEAD_DIM
            k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
            s = tl.where(mask, tl.sum(q[None, :] * k, 1) * scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 0))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new)
            l_i = l_i * alpha + tl.sum(p, 0)
            acc = acc * alpha + tl.sum(p[:, None] * v, 0)
            m_i = m_new
        tl.store(out_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d, acc / l_i)
"""

DOT_PER_HEAD = """
@triton.jit
def gqa_scores_kernel(q_ptr, k_ptr, block_table_ptr, seq_lens_ptr, scores_ptr, scale,
                      max_blocks, BLOCK_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
                      GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, TILE: tl.constexpr,
                      BLOCK_G: tl.constexpr):
    # one tl.dot per query head of the group (its row alone in a padded tile)
    seq, kv_head = tl.program_id(0), tl.program_id(1)
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, HEAD_DIM)
    seq_len = tl.load(seq_lens_ptr + seq)
    pos = tl.arange(0, TILE)
    mask = pos < seq_len
    block = tl.load(block_table_ptr + seq * max_blocks + pos // BLOCK_SIZE, mask=mask, other=0)
    rows = ((block * BLOCK_SIZE + pos % BLOCK_SIZE) * KV_HEADS + kv_head) * HEAD_DIM
    for j in tl.static_range(GROUP):
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=mask[:, None], other=0.0)
        head = kv_head * GROUP + j
        q_at = q_ptr + (seq * KV_HEADS * GROUP + head) * HEAD_DIM + d[None, :] + g[:, None] * 0
        q = tl.load(q_at, mask=(g == 0)[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(mask[None, :], s, float("-inf"))
        at = scores_ptr + (seq * KV_HEADS * GROUP + head) * TILE + pos[None, :] + g[:, None] * 0
        tl.store(at, s, mask=(g == 0)[:, None])
"""

WHOLE = [
    ("tile_scores_kernel", "program_0", PROGRAM_0_SCORES, "SHARE"),
    ("online_softmax_kernel", "every_head", EVERY_HEAD_SOFTMAX, "SHARE"),
    ("gqa_scores_kernel", "dot_per_head", DOT_PER_HEAD, "DOTS_HINT"),
]
CASES = [(p, name, _edited, edits, hint) for p, name, edits, hint in EDITS] + [
    (p, name, None, source, hint) for p, name, source, hint in WHOLE
]


@pytest.mark.parametrize(
    "puzzle, name, edit, source, hint", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_learners_edit_fails_on_every_seed_with_the_hint_due(
    puzzle, name, edit, source, hint, capsys
):
    source = edit(puzzle, source) if edit else textwrap.dedent(source)
    kernel = _kernel(puzzle, source, f"{puzzle}_{name}")
    check = getattr(ex, f"check_{puzzle}")
    for seed in range(1, 6):
        assert check(kernel, seed=seed) is False, f"{name} accepted on seed {seed}"
        out = capsys.readouterr().out
        assert "seed" not in out, out  # refused by a fixed case, not by a lucky draw
        assert hint is None or f"hint: {hint_text(hint)}" in out, out


def test_a_tl_dot_per_query_head_gives_the_right_values(capsys):
    """What fails the answer that runs a tl.dot per query head is the count of its dots, not a
    value: the verdict says the values are right."""
    kernel = _kernel("gqa_scores_kernel", textwrap.dedent(DOT_PER_HEAD), "gqa_dot_per_head_rt")
    assert ex.check_gqa_scores_kernel(kernel, seed=1) is False
    assert str(verdicts.RIGHT) in capsys.readouterr().out
