"""Two serving runs of the same requests side by side, step by step: the course's and an engine's.

`compare(course, engine)` reads two results that hold `paged.trace.StepRecord`s with the memory
map of every step (the course's `paged.model.generate(..., record_layout=True)` and
`paged.engines.vllm.generate`) and says where they agree: the tokens, the running requests and
free blocks after every step, who was preempted when, and the first step where they part. Free
blocks are counted from each step's block tables (distinct blocks held), so both sides are
counted the same way; the null block is neither held nor free. A step's victims are a set: the
course lists them in the order it popped them, vLLM hands back a set (`preempted_req_ids`), so
both sides keep them sorted by request and two steps with the same victims compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text import msg, pad
from .summary import rules_name


def held_blocks(record) -> int:
    """Distinct physical blocks that the step's block tables hold."""
    return len({b for _, table, _ in record.layout.tables for b in table})


def victims(record) -> tuple:
    """The step's preempted requests as a set, in one order for every side (sorted)."""
    return tuple(sorted(record.preempted))


@dataclass(frozen=True)
class SideBySide:
    """What two runs of the same requests did, step by step."""

    names: tuple[str, str]
    same_tokens: bool
    running: tuple[tuple[int, ...], tuple[int, ...]]  # requests running after each step
    free_blocks: tuple[tuple[int, ...], tuple[int, ...]]  # usable blocks free after each step
    preempted: tuple[tuple[tuple[int, tuple], ...], ...]  # ((step, sorted ids), ...) per side
    peak_batch: tuple[int, int]

    @property
    def steps(self) -> tuple[int, int]:
        return len(self.running[0]), len(self.running[1])

    @property
    def agreeing_steps(self) -> int:
        """Steps after which both ran as many requests and held as many blocks."""
        pairs = zip(
            zip(*self.running, strict=False), zip(*self.free_blocks, strict=False), strict=False
        )
        return sum(r[0] == r[1] and f[0] == f[1] for r, f in pairs)

    @property
    def first_difference(self) -> int | None:
        """The first step whose running count, free blocks or victims differ (None: none)."""
        victims = [dict(p) for p in self.preempted]
        for t in range(max(self.steps)):
            sides = [
                (run[t] if t < len(run) else None, free[t] if t < len(free) else None, v.get(t, ()))
                for run, free, v in zip(self.running, self.free_blocks, victims, strict=True)
            ]
            if sides[0] != sides[1]:
                return t
        return None

    def summary_lines(self) -> list[str]:
        """A table of the two runs, then where they part."""
        a, b = self.names
        lines = [f"{pad(str(a), '>41')} {pad(str(b), '>16')}"]  # columns, not characters
        rows = [
            (PEAK, *self.peak_batch),
            (STEPS, *self.steps),
            (PREEMPTIONS, *(sum(len(ids) for _, ids in p) for p in self.preempted)),
        ]
        lines += [f"{pad(str(name), '24')} {x!s:>16} {y!s:>16}" for name, x, y in rows]
        for name, p in zip(self.names, self.preempted, strict=True):
            victims = " ".join(f"{t}:{','.join(map(str, ids))}" for t, ids in p) or "-"
            lines.append(VICTIMS.format(name=name, victims=victims))
        lines.append(AGREE.format(n=self.agreeing_steps, total=max(self.steps)))
        t = self.first_difference
        lines.append(str(SAME_ALL) if t is None else FIRST_DIFF.format(step=t))
        return lines


def compare(course, engine, names=None) -> SideBySide:
    """Set two paged results (tokens, a trace with layouts, `num_usable_blocks`) side by side.

    `names` defaults to the course's rules ("course (V1 rules)" or "course (own rules)", in the
    edition's language) and the engine's name.
    """
    sides = (course, engine)
    names = names or (rules_name(course), engine.engine)
    for side, name in zip(sides, names, strict=True):
        if any(s.layout is None for s in side.trace):
            raise ValueError(f"{name}'s trace has no memory maps: run it with record_layout=True")
    usable = [side.num_usable_blocks for side in sides]
    return SideBySide(
        names=tuple(names),
        same_tokens=course.tokens == engine.tokens,
        running=tuple(tuple(s.num_running for s in side.trace) for side in sides),
        free_blocks=tuple(
            tuple(n - held_blocks(s) for s in side.trace)
            for side, n in zip(sides, usable, strict=True)
        ),
        preempted=tuple(
            tuple((s.step, victims(s)) for s in side.trace if s.preempted) for side in sides
        ),
        peak_batch=(course.peak_batch, engine.peak_batch),
    )


PEAK = msg("peak batch", "최대 배치")
STEPS = msg("steps", "단계 수")
PREEMPTIONS = msg("preemptions", "선점 횟수")
VICTIMS = msg("{name} preempted (step:request): {victims}", "{name}의 선점 (단계:요청): {victims}")
AGREE = msg(
    "running requests and free blocks agree after {n} of {total} steps",
    "실행 중인 요청 수와 빈 블록 수가 {total}단계 중 {n}단계에서 같음",
)
SAME_ALL = msg(
    "no step differs: same running requests, free blocks and victims throughout",
    "다른 단계 없음: 실행 중인 요청, 빈 블록, 선점된 요청이 처음부터 끝까지 같음",
)
FIRST_DIFF = msg("the runs first differ after step {step}", "두 실행은 {step}단계 뒤에 처음 갈라짐")
