"""Guards at the level a shortcut takes (issue 37): a checker blocks what solves its exercise,
however the learner's function reaches it.

Each wrong answer below is written as a learner would, reaching the library's answer another
way: torch's SDPA under another name, through `torch._C._nn` or `torch.ops.aten`; the course's own
attention; a scheduler method other than `step`, a private helper, the pool; `paged.model.cache`'s
slot function; a model answer from `answers/`. Where it would be right without the guard, a test
says so first. Each is rejected with a message that names what it called, also when the
function catches the error itself. The model answers pass (`test_solvable.py`, the checkers'
own tests), every module a checker names exists, and the guard leaves every function and torch's
mode stacks as they were, after an exception too.
"""

import importlib
import pkgutil
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from torch.nn.functional import scaled_dot_product_attention as attend

import paged.exercises as ex
from paged import prefix_cache
from paged.exercises import answers
from paged.exercises.answers import attention as attention_answers
from paged.exercises.answers import memory as memory_answers
from paged.exercises.engine import core, guard
from paged.scheduler import Scheduler
from paged.workloads import Request

pytestmark = pytest.mark.usefixtures("english")  # conftest.py

SDPA_CALLED = "your function calls torch's scaled_dot_product_attention (SDPA)"


# ---- decode_one_head: torch's SDPA and the course's attention ----------------------------------
def _decode_case():
    g = torch.Generator().manual_seed(0)
    k, v = torch.randn(2, 4, 3, 2, 4, generator=g)  # (num_blocks, block_size, kv_heads, dim)
    q = torch.randn(4, generator=g)
    return q, k, v, torch.tensor([2, 0, 3, -1]), 7, 1, 0.5


def _kv(k_cache, v_cache, block_table_row, seq_len, kv_head):
    bs = k_cache.shape[1]
    rows = block_table_row[: (seq_len + bs - 1) // bs].long()
    k = k_cache[rows].flatten(0, 1)[:seq_len, kv_head]  # (seq_len, head_dim)
    return k, v_cache[rows].flatten(0, 1)[:seq_len, kv_head]


def through(sdpa):
    """decode_one_head that gathers K and V itself and hands the softmax to `sdpa`."""

    def decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
        k, v = _kv(k_cache, v_cache, block_table_row, seq_len, kv_head)
        out = sdpa(q.float()[None, None, None], k.float()[None, None], v.float()[None, None], scale)
        return out.reshape(-1).to(k_cache.dtype)  # (1, 1, 1, head_dim) -> (head_dim,)

    return decode_one_head


SDPA_ROUTES = {
    "imported under another name": lambda q, k, v, s: attend(q, k, v, scale=s),
    "torch._C._nn": lambda q, k, v, s: torch._C._nn.scaled_dot_product_attention(q, k, v, scale=s),
    "torch.ops.aten": lambda q, k, v, s: torch.ops.aten.scaled_dot_product_attention(
        q, k, v, scale=s
    ),
    "aten's CPU flash kernel": lambda q, k, v, s: (
        torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, scale=s)[0]
    ),
    "aten's math path (it decomposes)": lambda q, k, v, s: (
        torch.ops.aten._scaled_dot_product_attention_math(q, k, v, scale=s)[0]
    ),
}


@pytest.mark.parametrize("route", SDPA_ROUTES)
def test_sdpa_however_reached_is_rejected_and_named(verdict, route):
    wrong = through(SDPA_ROUTES[route])
    case = _decode_case()
    assert torch.allclose(wrong(*case), attention_answers.decode_one_head(*case), atol=1e-5)
    ok, out = verdict(ex.check_decode_one_head, wrong)
    assert ok is False
    assert out.startswith(f"decode_one_head: not quite: {SDPA_CALLED}, the library's own code")


def own_decode(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
    """A right answer of the learner's own: the softmax written with torch.softmax (allowed)."""
    k, v = _kv(k_cache, v_cache, block_table_row, seq_len, kv_head)
    weights = torch.softmax(k.float() @ q.float() * scale, 0)  # (seq_len,)
    return (weights @ v.float()).to(k_cache.dtype)


def test_multihead_attention_is_rejected_and_named(verdict):
    def decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
        k, v = _kv(k_cache, v_cache, block_table_row, seq_len, kv_head)
        mha = torch.nn.MultiheadAttention(q.shape[0], 1, bias=False)
        return mha(q[None].float(), k.float(), v.float())[0][0].to(q.dtype)

    ok, out = verdict(ex.check_decode_one_head, decode_one_head)
    assert ok is False
    assert "your function calls torch's multi-head attention (nn.MultiheadAttention)" in out


def by(module, name):
    """decode_one_head handed to the course's own attention `module.name` (imported when called),
    the query in kv_head's place."""

    def decode_one_head(q, k_cache, v_cache, block_table_row, seq_len, kv_head, scale):
        attend = getattr(importlib.import_module(module), name)
        heads = slice(kv_head, kv_head + 1)
        table = block_table_row.clamp(min=0)[None].int()
        lens = torch.tensor([seq_len], dtype=torch.int32)
        k, v = k_cache[:, :, heads], v_cache[:, :, heads]
        return attend(q[None, None], k, v, table, lens, scale)[0, 0]

    return decode_one_head


_reference = by("paged.attention.reference", "paged_attention_ref")


@pytest.mark.parametrize(
    "wrong, called",
    [
        (_reference, "paged.attention.paged_attention_ref"),
        (
            by("paged.model.attention_backend", "decode_attention_ref"),
            "paged.model.attention_backend.decode_attention_ref",
        ),
    ],
)
def test_the_course_s_own_attention_is_rejected_and_named(verdict, wrong, called):
    case = _decode_case()
    assert torch.allclose(wrong(*case), attention_answers.decode_one_head(*case), atol=1e-5)
    ok, out = verdict(ex.check_decode_one_head, wrong)
    assert ok is False and f"your function calls {called}, the library's own code" in out


# ---- the scheduler's exercises: any part of the scheduler ---------------------------------------
def _scheduler():
    """A scheduler built in an earlier cell, as a learner might have one at hand."""
    return Scheduler([Request(0, 4, 2), Request(1, 5, 3)], "paged", kv_slots=64, block_size=4)


SCHEDULER_CALLS = {
    "paged.scheduler.Scheduler.schedule": lambda s: s.schedule(),
    "paged.scheduler.Scheduler.postprocess": lambda s: s.postprocess(None),
    "paged.prefill.Prefill._admit": lambda s: s._admit(None),
    "paged.scheduler.Scheduler.step": lambda s: s.step(),
    "paged.scheduler.Scheduler": lambda s: Scheduler([Request(0, 4, 2)], "paged", kv_slots=64),
    "paged.pool.PagedPool.why_not": lambda s: s.pool.why_not(Request(0, 4, 2), 4),
    "paged.admission.why_wait": lambda s: __import__("paged.admission").admission.why_wait(
        None, full=False, swapped=False, held=False
    ),
}


@pytest.mark.parametrize("check", [ex.check_pick_victims, ex.check_admit])
@pytest.mark.parametrize("called", SCHEDULER_CALLS)
def test_any_part_of_the_scheduler_is_rejected_and_named(verdict, check, called):
    sched, call = _scheduler(), SCHEDULER_CALLS[called]

    def through_the_scheduler(*args):
        call(sched)
        return []

    ok, out = verdict(check, through_the_scheduler)
    assert ok is False and f"your function calls {called}, the library's own code" in out


def own_pick_victims(running, blocks_needed, free_blocks, blocks_held):
    """A right answer of the learner's own."""
    running, victims, i = list(running), [], 0
    while i < len(running):
        request = running[i]
        while blocks_needed[request] > free_blocks:
            victims.append(running.pop())
            free_blocks += blocks_held[victims[-1]]
            if victims[-1] == request:
                break
        else:
            free_blocks -= blocks_needed[request]
            i += 1
    return victims


def _caught(route, right):
    """The learner's function: `route(*args)`, and a right answer of its own if that raises."""

    def fn(*args):
        try:
            return route(*args)
        except Exception:
            return right(*args)

    return fn


@pytest.mark.parametrize("shortcut", ["SDPA", "schedule"])
def test_a_call_caught_by_the_learner_is_still_seen(verdict, shortcut):
    sched = _scheduler()
    check, route, right, called = {
        "SDPA": (ex.check_decode_one_head, through(SDPA_ROUTES["torch.ops.aten"]), own_decode,
                 SDPA_CALLED),
        "schedule": (ex.check_pick_victims, lambda *a: sched.schedule(), own_pick_victims,
                     "your function calls paged.scheduler.Scheduler.schedule"),
    }[shortcut]  # fmt: skip
    assert verdict(check, right)[0] is True
    ok, out = verdict(check, _caught(route, right))
    assert ok is False and called in out


# ---- the slot exercise: the model's cache -------------------------------------------------------
def slot_by_the_cache(block_table, block_size, position):
    from paged.model.cache import slots_of

    chunk = SimpleNamespace(block_table=block_table, start=position, seq_len=position + 1)
    return slots_of(chunk, block_size)[0]


def test_the_model_cache_s_slot_function_is_rejected_and_named(verdict):
    assert slot_by_the_cache([7, 2, 5], 4, 9) == memory_answers.slot([7, 2, 5], 4, 9) == 21
    ok, out = verdict(ex.check_slot, slot_by_the_cache)
    assert ok is False
    assert "your function calls paged.model.cache.slots_of, the library's own code" in out


def gather_by_the_cache(cache, block_table_row, seq_len):
    from paged.model.cache import slots_of

    chunk = SimpleNamespace(block_table=block_table_row.tolist(), start=0, seq_len=seq_len)
    return cache.flatten(0, 1)[torch.tensor(slots_of(chunk, cache.shape[1]), dtype=torch.long)]


def bytes_by_the_benchmark(num_layers, num_kv_heads, head_dim, dtype_bytes):
    from paged.gpu.bandwidth import kv_bytes

    dtype = {1: torch.int8, 2: torch.float16, 4: torch.float32, 8: torch.float64}[dtype_bytes]
    return kv_bytes(1, num_layers, num_kv_heads, head_dim, dtype)


@pytest.mark.parametrize(
    "check, wrong, called",
    [
        (ex.check_gather, gather_by_the_cache, "paged.model.cache.slots_of"),
        (ex.check_bytes_per_token, bytes_by_the_benchmark, "paged.gpu.bandwidth.kv_bytes"),
    ],
)
def test_the_library_s_slots_and_kv_bytes_elsewhere_are_rejected_too(verdict, check, wrong, called):
    ok, out = verdict(check, wrong)
    assert ok is False and f"your function calls {called}, the library's own code" in out, out


# ---- the model answers ---------------------------------------------------------------------------
def test_every_function_of_the_answers_package_is_forbidden():
    targets = {id(fn) for _, fn in guard.answer_targets()}
    modules = [answers] + [
        importlib.import_module(f"{answers.__name__}.{m.name}")
        for m in pkgutil.iter_modules(answers.__path__)
    ]
    assert len(modules) >= 7  # __init__ and every topic module (prefix, basics, kernels too)
    for module in modules:
        for name in getattr(module, "__all__", ["find", "source", "solution"]):
            assert id(guard.function_of(getattr(module, name))) in targets, (module, name)


def test_a_model_answer_from_another_module_is_rejected(verdict):
    from paged.exercises.answers.prefix import block_hashes

    def wasted_slots(num_tokens, block_size):  # full blocks from chapter 11's answer
        full = len(block_hashes([0] * num_tokens, block_size))
        return 0 if full * block_size == num_tokens else (full + 1) * block_size - num_tokens

    ok, out = verdict(ex.check_wasted_slots, wasted_slots)
    assert ok is False and "your function calls paged.exercises.solution" in out


# ---- the guard itself ---------------------------------------------------------------------------
def test_every_module_a_checker_forbids_exists(monkeypatch):
    """A module name with a typo would guard nothing (modules that cannot load are skipped)."""
    seen = []
    real = core.forbidden

    def recording(targets, allow=()):
        seen.extend(t for t in targets if isinstance(t, str))
        return real(targets, allow)

    monkeypatch.setattr(core, "forbidden", recording)
    for name in ex.__all__:
        if name.startswith("check_") and not name.endswith("_kernel"):
            getattr(ex, name)(answers.find(name.removeprefix("check_")), seed=1)
    from paged.exercises.kernels_attention import _library

    names = {*seen, *(t for t in _library() if isinstance(t, str))}
    assert {"paged.scheduler", "paged.model.cache", "paged.attention.kernel"} <= names
    for name in names:
        assert guard.module_targets(name), name  # imports, and defines something


def test_softmax_group_blocks_every_spelling_and_nothing_else():
    x = torch.randn(3, 4)
    spellings = {
        "torch.softmax": lambda: torch.softmax(x, -1),
        "Tensor.softmax": lambda: x.softmax(-1),
        "F.log_softmax": lambda: F.log_softmax(x, -1),
        "aten._softmax": lambda: torch.ops.aten._softmax(x, -1, False),
    }
    for call in spellings.values():
        with (
            pytest.raises(guard.LibraryCall, match="torch's softmax"),
            guard.forbidden([guard.SOFTMAX]),
        ):
            call()
    with guard.forbidden([guard.SOFTMAX, guard.SDPA]) as calls:
        (x.exp() / x.exp().sum(-1, keepdim=True)) @ x.T  # a softmax written out is fine
    assert calls == []


def _mode_stacks():
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return len(_get_current_function_mode_stack()), len(_get_current_dispatch_mode_stack())


def test_everything_is_restored_after_an_exception():
    codes = {fn: fn.__code__ for _, fn in guard.module_targets("paged.scheduler")}
    before = _mode_stacks()
    with pytest.raises(ValueError, match="the learner's bug"):
        with guard.forbidden(["paged.scheduler", guard.SDPA, guard.SOFTMAX]) as calls:
            assert Scheduler.schedule.__code__ is not codes[Scheduler.schedule]
            assert _mode_stacks() != before
            with pytest.raises(guard.LibraryCall):
                torch.softmax(torch.ones(2), 0)
            raise ValueError("the learner's bug")
    assert calls == ["torch's softmax"]
    assert all(fn.__code__ is code for fn, code in codes.items())
    assert _mode_stacks() == before and guard._CALLS.get() is None
    q = torch.ones(1, 1, 2, 4)
    assert torch.equal(F.scaled_dot_product_attention(q, q, q), q)
    assert len(_scheduler().run()) > 0  # the scheduler runs its own code again


def test_the_library_works_after_a_checker_caught_a_call(verdict):
    from paged.attention.reference import gather_kv, paged_attention_ref
    from paged.preemption_cost import CostModel

    code = (gather_kv.__code__, paged_attention_ref.__code__, CostModel.swap_time.__code__)
    sdpa = F.scaled_dot_product_attention
    verdict(ex.check_admit, lambda *args: _scheduler().step() and [])
    for wrong in (through(SDPA_ROUTES["torch._C._nn"]), _reference):
        assert verdict(ex.check_decode_one_head, wrong)[0] is False
    assert verdict(ex.check_gather, lambda c, row, n: gather_kv(c, row, n))[0] is False
    swap = lambda nb, bs, bpt, layers, bw, lat: CostModel(  # noqa: E731
        bytes_per_token=bpt, num_layers=layers, pcie_bytes_per_s=bw, transfer_latency_s=lat
    ).swap_time(nb, bs)
    assert verdict(ex.check_swap_time, swap)[0] is False
    hashes = lambda ids, size: prefix_cache.block_hashes(ids, size)  # noqa: E731
    assert verdict(ex.check_block_hashes, hashes)[0] is False
    assert (gather_kv.__code__, paged_attention_ref.__code__, CostModel.swap_time.__code__) == code
    assert len(prefix_cache.block_hashes([1, 2, 3], 1)) == 3
    assert F.scaled_dot_product_attention is sdpa
    assert verdict(ex.check_decode_one_head, own_decode)[0] is True
    assert verdict(ex.check_gather, attention_answers.gather)[0] is True
    assert _mode_stacks() == (0, 0)
    assert len(_scheduler().run()) > 0
    q = torch.ones(1, 1, 2, 4)
    assert torch.equal(F.scaled_dot_product_attention(q, q, q), q)


def test_the_verdict_names_the_call_in_korean(verdict, monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    ok, out = verdict(ex.check_decode_one_head, through(SDPA_ROUTES["torch._C._nn"]))
    assert ok is False
    assert "torch의 scaled_dot_product_attention(SDPA) 호출이 보입니다" in out


class Shortcut:
    """A "kernel" that hands the work to the library's attention (`attend` names it)."""

    fn = None

    def __init__(self, attend):
        self.attend = attend

    def __getitem__(self, grid):
        def run(q, k_cache, v_cache, block_table, seq_lens, *rest, **constexprs):
            module, name = self.attend.rsplit(".", 1)
            attend = getattr(importlib.import_module(module), name)
            out = next(t for t in rest if isinstance(t, torch.Tensor) and t.shape == q.shape)
            out.copy_(attend(q, k_cache, v_cache, block_table, seq_lens))

        return run


@pytest.mark.parametrize(
    ("check", "attend", "called"),
    [
        ("known_max", "paged.attention.paged_attention_ref", "paged.attention.paged_attention_ref"),
        (
            "online_softmax",
            "paged.attention.paged_attention_ref",
            "paged.attention.paged_attention_ref",
        ),
        ("online_softmax", "paged.model.attention_backend.decode_attention_ref", None),
    ],
)
def test_a_kernel_puzzle_blocks_the_whole_attention_surface(capsys, check, attend, called):
    assert getattr(ex, f"check_{check}_kernel")(Shortcut(attend)) is False
    out = capsys.readouterr().out
    assert "did not run" in out and (called or attend) in out, out
    assert "write this step yourself" in out, out
