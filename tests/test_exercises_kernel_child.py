"""On a CUDA GPU the Triton puzzles are judged under the interpreter, in a child process
(`paged.exercises.engine.kernel_child`). Here, without a GPU, the child path is forced: it must print
what the check in this process prints, carry the kernel's globals and helpers, draw try_kernel's
figure, and tell a learner whose kernel cannot travel why."""

import dataclasses

import pytest

from paged.attention import backend  # sets TRITON_INTERPRET=1 before triton is imported

pytestmark = [
    pytest.mark.skipif(backend() == "unavailable", reason="Triton is not installed"),
    pytest.mark.usefixtures("english"),  # conftest.py
]

if backend() != "unavailable":
    import torch
    import triton
    import triton.language as tl
    from test_exercises_triton import Variant, copy_v

    from paged import exercises as ex
    from paged.exercises import answers
    from paged.exercises.engine import kernel_child

    BLOCK_GIVEN = tl.constexpr(4)
    SCALE = 1.0
    DTYPE = tl.float32  # one of Triton's own names, as a GPU compiles it
    TENSOR = torch.ones(1)

    @triton.jit
    def _offsets(pid, BLOCK: tl.constexpr):
        return pid * BLOCK + tl.arange(0, BLOCK)

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # a helper and globals of each kind
        offs = _offsets(tl.program_id(0), BLOCK)
        keep = (offs < n) & (BLOCK_GIVEN > 0)
        x = tl.load(x_ptr + offs, mask=keep).to(DTYPE)
        tl.store(out_ptr + offs, x * SCALE, mask=keep)

    @triton.jit
    def tensor_global(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(
            out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + TENSOR.numel(), mask=offs < n
        )


def _both(capsys, monkeypatch, run):
    """What run() returns and prints in this process, then through the child."""
    here = run(), capsys.readouterr().out
    monkeypatch.setattr(kernel_child, "apart", lambda: True)
    apart = run(), capsys.readouterr().out
    return here, apart


@pytest.mark.parametrize("variant", ["right", "unmasked_load", "no_pid"])
def test_the_child_prints_the_verdict_this_process_prints(variant, capsys, monkeypatch):
    kernel = Variant(copy_v, variant)
    here, apart = _both(capsys, monkeypatch, lambda: ex.check_copy_kernel(kernel, seed=5))
    assert here == apart and here[0] is (variant == "right")


def test_helpers_constants_and_constexprs_travel_with_the_kernel(capsys, monkeypatch):
    text = kernel_child.module_text(copy_kernel)
    assert "def _offsets(" in text and "BLOCK_GIVEN = triton.language.constexpr(4)" in text
    assert "SCALE = 1.0" in text and "tl = importlib.import_module('triton.language')" in text
    assert "DTYPE = importlib.import_module('triton.language').float32" in text
    monkeypatch.setattr(kernel_child, "apart", lambda: True)
    assert ex.check_copy_kernel(copy_kernel, seed=1) is True
    printed = capsys.readouterr()
    assert printed.out.startswith("copy_kernel: correct (")
    assert printed.err == kernel_child.WAIT.format(name="copy_kernel") + "\n"  # while it waits
    assert ex.check_copy_kernel(answers.find("copy_kernel"), seed=1) is True


def test_a_stub_travels_with_the_names_its_signature_reads(capsys, monkeypatch):
    stub = Variant(copy_v, "stub")  # only the signature: `tl` is read by its annotations alone
    assert "tl = importlib.import_module('triton.language')" in kernel_child.module_text(stub)
    monkeypatch.setattr(kernel_child, "apart", lambda: True)
    assert ex.check_copy_kernel(stub) is False
    assert capsys.readouterr().out.startswith("copy_kernel: not yet: your kernel wrote nothing.")


def test_a_kernel_that_cannot_travel_is_told_why_and_nothing_runs(capsys, monkeypatch):
    monkeypatch.setattr(kernel_child, "apart", lambda: True)
    tuned = triton.autotune(configs=[triton.Config({})], key=[])(copy_kernel)
    for kernel, why in [
        (tensor_global, "tensor_global reads the global 'TENSOR', a Tensor"),
        (tuned, "not a @triton.jit function itself but wraps one (Autotuner)"),
    ]:
        assert ex.check_copy_kernel(kernel, seed=1) is False
        out = capsys.readouterr().out
        assert out.startswith("copy_kernel: the checker runs your kernel under") and why in out
    spec = ex.SPECS["copy_kernel"]  # a test's own variant of a spec is checked in this process
    other = dataclasses.replace(spec, fixed=())
    assert kernel_child.judge("check", other, copy_kernel, 1) is kernel_child.UNKNOWN_SPEC


def test_try_kernel_draws_the_childs_trace(capsys, monkeypatch):
    from paged.exercises.engine.kernel_try import trial

    kernel = Variant(copy_v, "unmasked_load")
    here, apart = _both(capsys, monkeypatch, lambda: trial(kernel, "copy_kernel"))
    assert here[1] == apart[1] and here[0].where == apart[0].where
    for mine, theirs in zip(here[0].panels, apart[0].panels, strict=True):
        assert mine[:2] == theirs[:2] and mine[4:] == theirs[4:]
        assert (mine[2] == theirs[2]).all() and (mine[3] == theirs[3]).all()
    assert any(p[3].any() or p[5] for p in apart[0].panels)  # the stray loads, drawn or counted


def test_the_child_speaks_the_editions_language(capsys, monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    monkeypatch.setattr(kernel_child, "apart", lambda: True)
    assert ex.check_copy_kernel(Variant(copy_v, "unmasked_load"), seed=2) is False
    assert "힌트" in capsys.readouterr().out


@pytest.mark.gpu
@pytest.mark.skipif(backend() != "cuda", reason="needs a CUDA GPU")
def test_on_a_gpu_a_wild_read_is_named_and_cuda_still_works(capsys):
    from test_exercises_triton import scores_v

    # block_table[pos] for block_table[pos // block_size]: block ids read far past the table, an
    # illegal memory access when launched on a GPU, after which CUDA refuses every call
    assert ex.check_tile_scores_kernel(Variant(scores_v, "table_by_position")) is False
    assert "looked the block table up by token position" in capsys.readouterr().out
    assert torch.ones(4, device="cuda").sum().item() == 4  # this process's CUDA still works
