"""The serving exercise of chapter 10 (`admit`): its checker, model answer and typical mistakes.

An answer written here independently is accepted (the model answer, the stub, None and each
typical mistake, a spec's slip, are tested for every spec in test_exercise_specs.py); a changed
queue, the queue sorted by id and the scheduler itself are rejected; the texts speak Korean in
the Korean edition, in the glossary's terms. And the checker's truth is the scheduler's: its
first step, on a pool of `free_blocks` free blocks, admits what the checker expects.
"""

import math
import re

import pytest

from paged.course import glossary
from paged.exercises import serving
from paged.exercises.engine import core
from paged.exercises.serving import check_admit
from paged.scheduler import Scheduler
from paged.text import Message
from paged.workloads import Request

pytestmark = pytest.mark.usefixtures("english")  # conftest.py


def admit(waiting, free_blocks, block_size, watermark_blocks):
    """Written independently of the model answer: count what stays free, stop at a misfit."""
    out = []
    i = 0
    while i < len(waiting):
        req_id, prompt_len, _ = waiting[i]
        blocks = math.ceil(prompt_len / block_size)
        if free_blocks - blocks < watermark_blocks:
            return out
        free_blocks -= blocks
        out.append(req_id)
        i += 1
    return out


def test_the_truth_is_the_schedulers_first_step():
    """Admission reads only prompt lengths: the pool sees no blocks for max_new_tokens."""
    waiting = [("A", 40, 200), ("B", 35, 200), ("C", 70, 200), ("D", 38, 200)]
    case, answer = next(p for p in serving.SPEC.cases() if p[0] == (waiting, 20, 16, 0))
    assert case == (waiting, 20, 16, 0) and answer == ["A", "B", "C", "D"]
    requests = [Request(i, p, n) for i, (_, p, n) in enumerate(waiting)]
    s = Scheduler(requests, "paged", kv_slots=20 * 16, block_size=16, watermark=0.0)
    s.step()
    assert s.allocator.num_free_blocks == 20 - (3 + 3 + 5 + 3)
    contiguous = Scheduler(requests, "oracle", kv_slots=20 * 16)  # prompt + max_new reserved
    assert contiguous.step().admitted == (0,)


def test_checker_texts_speak_korean_in_the_glossarys_terms(monkeypatch, capsys):
    hints = [m for _, m in core.slips(serving.SPEC)]
    assert len(hints) >= 3 and all(type(m) is Message for m in hints)
    assert [(m.ko[:30], v) for m in hints for v in glossary.variants(m.ko)] == []
    monkeypatch.setenv("PAGED_LANG", "ko")
    assert check_admit(admit) is True  # an answer written independently
    assert re.fullmatch(r"admit: 정답입니다 \(사례 \d+개\)\.\n", capsys.readouterr().out)
    fcfs = next(f for f, h in core.slips(serving.SPEC) if "first come, first served" in h.en)
    assert check_admit(fcfs) is False
    out = capsys.readouterr().out
    assert "아직 아닙니다" in out and "  힌트: 수락은 선착순입니다." in out, out


def admit_by_id_order(waiting, free_blocks, block_size, watermark_blocks):
    """Right but for the order: serves the queue sorted by id, not in arrival order."""
    return admit(
        sorted(waiting, key=lambda w: str(w[0])), free_blocks, block_size, watermark_blocks
    )


def admit_popping(waiting, free_blocks, block_size, watermark_blocks):
    """Right answer, but it empties the caller's queue as it goes."""
    out = admit(list(waiting), free_blocks, block_size, watermark_blocks)
    del waiting[: len(out)]
    return out


def admit_by_the_scheduler(waiting, free_blocks, block_size, watermark_blocks):
    requests = [Request(i, prompt_len=p, output_len=n) for i, (_, p, n) in enumerate(waiting)]
    s = Scheduler(
        requests,
        "paged",
        kv_slots=free_blocks * block_size,
        block_size=block_size,
        watermark=(watermark_blocks + 0.5) / free_blocks,
    )
    return [waiting[i][0] for i in s.step().admitted]


@pytest.mark.parametrize(
    ("learner", "phrase"),
    [
        (admit_by_id_order, "you returned"),
        (admit_popping, "changed its argument `waiting`"),
        (admit_by_the_scheduler, "calls paged.scheduler.Scheduler"),
    ],
)
def test_id_order_a_mutated_queue_and_the_scheduler_itself_are_rejected(learner, phrase, capsys):
    assert check_admit(learner) is False
    out = capsys.readouterr().out
    assert out.startswith("admit: not quite") and phrase in out, out
