"""The learner's engine on SmolLM2: the pieces kept in a workspace serve the real model, in
lock-step with the course's run, and a wrong piece is named at its first differing step.

Every model answer kept as the learner's, the engine gives the course's tokens and schedule with
each attention mode: gather (the CPU default), decode_one_head and the learner's Triton kernel
(under Triton's CPU interpreter here; on a GPU the same path runs compiled). transformers' own
tokens for the same prompts are compared in test_model.py, beside its transformers model.
"""

from __future__ import annotations

import json

import pytest
from test_learner import write

import paged.model as pm
from paged import learner
from paged.exercises.answers import source
from paged.exercises.engine import workspace
from paged.model.shared_prompt import LIBRARY_SYSTEM
from paged.model.tenants import CHAPTER12_QUESTIONS, MUSEUM_SYSTEM

pytestmark = pytest.mark.usefixtures("english")

PROMPTS = [
    "Say hello in French.",
    "Name three primary colours.",
    "How many legs does a spider have?",
    "What is photosynthesis?",
    "Give me three tips for sleeping better.",
    "Translate 'good morning' into Spanish.",
]


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGED_WORKSPACE", str(tmp_path / "ws"))
    workspace.keep_model_answers(tmp_path / "ws")
    return tmp_path / "ws"


def test_every_piece_yours_serves_the_courses_tokens_and_schedule(model, ws):
    """A pool tight enough to preempt and recompute; gather reads the cache."""
    options = dict(kv_slots=12 * 16, block_size=16)
    course = pm.generate(model, PROMPTS, 20, **options)
    mine = learner.generate(model, PROMPTS, 20, expected=course, **options)
    assert mine.difference is None and course.preemptions > 0
    assert mine.tokens == course.tokens and mine.trace == course.trace
    assert mine.compared_steps == course.steps
    used = {n for n, k in mine.calls.items() if k}
    assert used == {"slot", "append_slot", "gather", "pick_victims", "admit"}
    assert "your gather" in mine.attention


def test_decode_one_head_and_copy_on_write_serve_a_shared_prefix(model, ws):
    options = dict(system=LIBRARY_SYSTEM, share_prefix=True)
    course = pm.generate(model, PROMPTS[:3], 6, **options)
    mine = learner.generate(model, PROMPTS[:3], 6, attention="decode_one_head", **options)
    assert mine.difference is None and mine.tokens == course.tokens
    assert mine.calls["write_slot"] == 3 and mine.calls["decode_one_head"] > 0


def test_prefix_caching_under_vllms_rules_runs_on_the_learners_hashes(model, ws):
    prompts = [CHAPTER12_QUESTIONS[i] for i in (0, 1, 0, 2)]
    systems = [LIBRARY_SYSTEM, MUSEUM_SYSTEM, LIBRARY_SYSTEM, MUSEUM_SYSTEM]
    options = dict(kv_slots=14 * 32, block_size=32, rules="vllm-v1", prefix_caching=True)
    course = pm.generate(model, prompts, 8, system=systems, **options)
    mine = learner.generate(model, prompts, 8, system=systems, expected=course, **options)
    assert mine.difference is None and mine.cached_tokens == course.cached_tokens
    assert sum(course.cached_tokens) > 0 and mine.trace == course.trace
    for piece in ("block_hashes", "computed_blocks", "take_blocks", "free_blocks"):
        assert mine.calls[piece] > 0, piece
    salted = learner.generate(
        model, prompts, 8, system=systems, cache_salts=list("abab"), **options
    )
    assert (
        salted.difference is None and "block_hashes" not in salted.calls
    )  # no salt in its signature


def test_the_learners_kernel_decodes_the_model_under_the_interpreter(model, ws):
    course = pm.generate(model, PROMPTS[:1], 3)
    mine = learner.generate(model, PROMPTS[:1], 3, attention="kernel", expected=course)
    assert mine.difference is None and mine.tokens == course.tokens
    assert mine.calls["online_softmax_kernel"] == 2 * model.config.num_layers  # two decode steps
    assert "your online_softmax_kernel (under Triton's CPU interpreter)" in mine.attention


def test_a_kernel_its_checker_accepts_today_is_named_by_the_engine(model, ws):
    """Chapter 7's cases all have head size 16, so a scale of 16 ** -0.5 written in passes them;
    SmolLM2's heads have 64 dimensions, and the engine's first decode step names the kernel."""
    text = source("online_softmax_kernel").replace("* scale,", "* 0.25,", 1)
    assert "0.25" in text
    header = "import paged.attention\nimport triton\nimport triton.language as tl\n\n\n"
    write(ws, "online_softmax_kernel", header + text)
    mine = learner.generate(model, PROMPTS[:1], 3, attention="kernel")
    assert "your online_softmax_kernel" in mine.difference and "step 1" in mine.difference
    assert "online_softmax_kernel.py" in mine.difference and "query head 0" in mine.difference


def test_a_gather_that_leaves_out_the_last_block_is_named_at_the_first_prefill(model, ws):
    write(
        ws,
        "gather",
        """
        def gather(cache, block_table_row, seq_len):
            n = seq_len // cache.shape[1]  # full blocks only
            return cache[block_table_row[:n].long()].flatten(0, 1)[:seq_len]
        """,
    )
    mine = learner.generate(model, PROMPTS[:2], 4)
    assert mine.difference is not None and "your gather" in mine.difference
    assert "step 0" in mine.difference and "gather.py" in mine.difference


def test_the_benchmark_times_both_engines_and_checks_their_tokens(model, tmp_path, capsys):
    """`python -m paged.course.engine_bench` (a benchmark, not a test of speed: no time is asserted)."""
    from paged.course import engine_bench

    out = tmp_path / "engine.json"
    args = ["--repeats", "1", "--prompts", "2", "--new-tokens", "3", "--json", str(out)]
    assert engine_bench.main(args) == 0
    result = json.loads(out.read_text())
    assert result["same_tokens"] and result["calls"]["gather"] > 0
    assert (
        result["label"].startswith("MEASURED on ")
        and "yours, in lock-step" in capsys.readouterr().out
    )


def test_hashes_that_name_every_request_alike_are_caught_by_the_step_they_change(model, ws):
    """A block_hashes that gives the i-th block of every prompt the same name answers each call
    with the right number of names (what one call can be judged on); the hits it makes differ
    from the course's, so the phase that admits the second request differs, and the message
    names the pieces that decide it."""
    write(
        ws,
        "block_hashes",
        """
        def block_hashes(token_ids, block_size):
            return [("block", i) for i in range(len(token_ids) // block_size)]
        """,
    )
    prompts = [CHAPTER12_QUESTIONS[0], CHAPTER12_QUESTIONS[1]]
    systems = [LIBRARY_SYSTEM, MUSEUM_SYSTEM]
    options = dict(block_size=32, rules="vllm-v1", prefix_caching=True, system=systems)
    mine = learner.generate(model, prompts, 4, **options)
    assert "step 0 (mixed phase)" in mine.difference
    assert "Your pieces at work in this run that decide it:" in mine.difference
    assert "block_hashes" in mine.difference and "admit" not in mine.difference  # not at work
