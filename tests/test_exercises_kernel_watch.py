"""What a Triton puzzle demands of the kernel, observed under the interpreter (issue 37): a
required tl.dot that reaches the output, each program storing its own share, every memory access
watched (atomics too), the maximum that moves late, the given maximum read; and `try_kernel`.

Each wrong kernel here (below, or a VARIANT of test_exercises_triton.py's kernels) gets the right
values (or would on the cases of before), so only the observation rejects it. On a GPU the
checkers and try_kernel observe in a child process under the interpreter, so these run there too
(the one test that drives a Watch in this process needs the interpreter here). Tiny shapes:
Triton's CPU interpreter is slow.
"""

import pytest

from paged.attention import backend  # sets TRITON_INTERPRET=1 before triton is imported

pytestmark = [
    pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed"),
    pytest.mark.usefixtures("english"),  # conftest.py
]

if backend() != "unavailable":
    import triton
    import triton.language as tl
    from test_exercises_triton import Variant, copy_v, dot_v, gqa_v, known_v, online_v, stamp_v

    from paged import exercises as ex
    from paged.exercises import answers
    from paged.viz.kernel_reads import try_kernel

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        """Named as the chapter's stub: try_kernel finds its puzzle by the name."""
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _rejected(check, kernel, capsys, *phrases) -> str:
    assert check(kernel) is False
    out = capsys.readouterr().out
    assert "not quite" in out and "hint:" in out and all(p in out for p in phrases), out
    return out


# ---- a required tl.dot reaches the output ---------------------------------------------------


def test_a_dot_puzzle_without_tl_dot_is_rejected(capsys):
    _rejected(ex.check_dot_kernel, Variant(dot_v, "sums"), capsys, "no tl.dot call that runs")


def test_a_tl_dot_computed_and_thrown_away_is_rejected(capsys):
    out = _rejected(
        ex.check_dot_kernel,
        Variant(dot_v, "thrown"),
        capsys,
        "with every tl.dot result changed, your kernel stored the same values",
        "its result never reaches the output",
    )
    assert "M 4, N 8, K 5" in out  # the first teaching case


def test_gqa_scores_with_a_tl_dot_thrown_away_is_rejected(capsys):
    _rejected(
        ex.check_gqa_scores_kernel, Variant(gqa_v, "thrown"), capsys, "never reaches the output"
    )


# ---- each program stores its own share ------------------------------------------------------


@pytest.mark.parametrize("puzzle", ["stamp", "copy"])
def test_program_0_doing_the_whole_grid_is_rejected(puzzle, capsys):
    kernel = Variant({"stamp": stamp_v, "copy": copy_v}[puzzle], "program_0")
    check = getattr(ex, f"check_{puzzle}_kernel")
    out = _rejected(check, kernel, capsys, "program 0 wrote out[", "another program's")
    assert "share" in out


# ---- every access watched ---------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["add", "max", "min", "cas"])
def test_an_unmasked_read_through_an_atomic_is_rejected(variant, capsys):
    version = tuple(int(part) for part in triton.__version__.split(".")[:2])
    if variant == "cas" and version < (3, 9):  # 3.6.0's refuses a block of them (seen on a GPU)
        pytest.skip(
            f"Triton {triton.__version__}'s interpreter cannot run tl.atomic_cas on a block"
        )
    if variant == "min" and version < (3, 9):
        # Colab's Triton 3.5 interpreter fails inside a float tl.atomic_min on a block, before the
        # watch sees the read: refused all the same, with the interpreter's own error
        assert ex.check_copy_kernel(Variant(copy_v, variant)) is False
        assert "copy_kernel: your kernel did not run: InterpreterError" in capsys.readouterr().out
        return
    _rejected(
        ex.check_copy_kernel,
        Variant(copy_v, variant),
        capsys,
        "ran an atomic, which reads and writes, on x[",
        "an atomic (tl.atomic_add",
    )


def test_a_load_without_a_mask_argument_goes_through_the_watch(capsys):
    unmasked = Variant(copy_v, "unmasked_load")  # tl.load(x_ptr + offs): no mask at all
    _rejected(ex.check_copy_kernel, unmasked, capsys, "loaded x[", "unmasked load")


@pytest.mark.skipif(backend() != "interpreter", reason="a Watch in this process: the interpreter")
def test_the_watch_records_what_each_program_touched():
    import torch

    from paged.exercises.engine.triton_checks import Watch

    watch = Watch(record=True)
    x, out = torch.arange(8.0), torch.zeros(8)
    watch.add("x", x)
    watch.add("out", out, load=False, store=True)
    with watch.run():
        copy_kernel[(2,)](x, out, 6, BLOCK=4)
    loads = {(pid[0], tuple(e)) for kind, name, e, pid in watch.accesses if kind == "load"}
    stores = {(pid[0], tuple(e)) for kind, name, e, pid in watch.accesses if kind == "store"}
    assert loads == stores == {(0, (0, 1, 2, 3)), (1, (4, 5))}
    assert torch.equal(out, torch.tensor([0.0, 1, 2, 3, 4, 5, 0, 0]))


# ---- the maximum that moves late, and the maximum given ----------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_an_online_softmax_without_a_running_max_fails_on_rising_scores(capsys):
    out = _rejected(
        ex.check_online_softmax_kernel, Variant(online_v, "first_tile"), capsys, "exp(s) overflows"
    )
    assert "scores rising by 25 per token" in out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_known_max_that_keeps_the_first_tiles_max_fails_on_rising_scores(capsys):
    out = _rejected(ex.check_known_max_kernel, Variant(known_v, "first"), capsys)
    assert "scores rising by 25 per token" in out


def test_known_max_that_never_reads_m_is_rejected(capsys):
    _rejected(
        ex.check_known_max_kernel,
        Variant(known_v, "online"),
        capsys,
        "the values are right, but program (0, 0) never read m[0, 0]",
        "hands each program its own element of this input",
    )


# ---- try_kernel: run once, print beside the answer, draw what each program touched -------------


@pytest.fixture
def agg():
    """Figures drawn off screen."""
    import matplotlib

    matplotlib.use("Agg")


def test_try_kernel_on_the_model_answer_prints_and_draws(capsys, agg):
    fig = try_kernel(answers.find("copy_kernel"), show=False)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "copy_kernel on n 10, BLOCK 4:" and "the same as the reference" in out[3]
    assert out[1].split(":")[1] == out[2].split(":")[1]  # yours, then the reference
    ax_x, ax_out = fig.axes[:2]
    assert ax_x.get_title(loc="left").startswith("x: loaded") and ax_out.get_title(
        loc="left"
    ).startswith("out: stored")
    drawn = [t.get_text() for t in ax_out.texts]
    assert drawn == ["0"] * 4 + ["1"] * 4 + ["2"] * 2  # program of each element; 2 lanes masked


def test_try_kernel_draws_the_learners_own_accesses_not_the_allowed_ones(capsys, agg):
    fig = try_kernel(Variant(copy_v, "program_0"), "copy_kernel", show=False)
    assert "the same as the reference" in capsys.readouterr().out  # right values...
    assert [t.get_text() for t in fig.axes[1].texts] == ["0"] * 10  # ...all stored by program 0
    fig = try_kernel(Variant(copy_v, "unmasked_load"), "copy_kernel", show=False)
    capsys.readouterr()
    from matplotlib.colors import to_rgba

    from paged.viz.kernel_reads import STRAY_COLOR

    red = [p for p in fig.axes[0].patches if p.get_edgecolor() == to_rgba(STRAY_COLOR)]
    assert len(red) == 2  # x[10] and x[11]: loaded by program 2, past n


def test_try_kernel_finds_the_puzzle_by_the_kernels_name(capsys, agg):
    assert try_kernel(copy_kernel) is None  # shown, not returned
    assert capsys.readouterr().out.startswith("copy_kernel on n 10, BLOCK 4:")


def test_try_kernel_on_a_stub_says_not_yet(capsys):
    @triton.jit
    def raising(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        raise NotImplementedError

    assert try_kernel(Variant(copy_v, "stub"), "copy_kernel") is None
    assert try_kernel(raising, "copy_kernel") is None
    assert try_kernel(None, "copy_kernel") is None
    assert capsys.readouterr().out.splitlines() == [
        "copy_kernel: not yet: your kernel wrote nothing. Write its body and run again.",
        "copy_kernel: not yet: your kernel still raises NotImplementedError. Write its body and "
        "run again.",
        "copy_kernel: not yet: pass your @triton.jit kernel (got NoneType).",
    ]


def test_try_kernel_names_an_unknown_puzzle():
    with pytest.raises(ValueError, match="no Triton puzzle named 'copy_v'; the puzzles are"):
        try_kernel(Variant(copy_v, "stub"))


def test_try_kernel_speaks_korean_in_the_korean_edition(monkeypatch, capsys, agg):
    monkeypatch.setenv("PAGED_LANG", "ko")
    fig = try_kernel(answers.find("gather_kernel"), show=False)
    out = capsys.readouterr().out
    assert "여러분의 값" in out and "참조 값과 같습니다" in out
    pool = fig.axes[1].get_title(loc="left")  # after the block table's panel
    assert pool.startswith("cache: 프로그램별 읽은 원소") and "물리 블록마다" in pool
