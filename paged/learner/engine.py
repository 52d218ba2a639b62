"""Your engine: the course's scheduler and model assembled from the learner's pieces, run in
lock-step with the course's own.

`generate(model, prompts, max_new_tokens, ...)` takes `paged.model.generate`'s arguments and
serves the same requests twice at once, step by step: the learner's engine (`YourScheduler` on
the learner's pieces, the model reading its cache through the learner's slot mapping and
attention) and, beside it, the course's scheduler on the same requests, handed the same tokens.
Every piece's call is judged as it happens (`referee.py`); after each phase the two schedules
must agree (the same runs with the same block tables, victims and copies), after each step the
two records and free lists; given the course's own run (`expected`), every sampled token must be
the course's. At the first difference the run stops and says where, what the piece was given,
what it returned and what the course's returned. `simulate(requests, policy, ...)` does the same
without a model (the simulator's lengths, no tokens): a quick check of the memory and scheduling
pieces. Both return the run with the pieces' table (`YourResult`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from itertools import zip_longest

from ..model.cache import KVCache, slots_of
from ..model.generate import GenerateResult, plan, result
from ..model.model_runner import ModelRunner, Served
from ..progress import progress
from ..scheduler import Scheduler
from ..text import msg
from . import pieces as piece_table
from .attention import default_mode, your_attention
from .referee import Difference, Referee
from .scheduler import YourScheduler

SERVED = msg("{policy}: requests your engine answered", "{policy}: 여러분의 엔진이 답한 요청")
STEP_PARTS = msg(
    "Your engine and the course's part at step {step} ({phase} phase): {what}: yours {mine}, "
    "the course's {theirs}. {who}",
    "여러분의 엔진과 코스의 엔진이 {step}단계({phase} 단계)에서 갈라집니다. {what}: 여러분의 것 "
    "{mine}, 코스의 것 {theirs}. {who}",
)
RECORD_PARTS = msg(
    "Your engine and the course's part at the end of step {step}: {what}: yours {mine}, the "
    "course's {theirs}. {who}",
    "여러분의 엔진과 코스의 엔진이 {step}단계가 끝날 때 갈라집니다. {what}: 여러분의 것 {mine}, "
    "코스의 것 {theirs}. {who}",
)
DECIDED_BY = msg(
    "Your pieces at work in this run that decide it: {names}.",
    "이 실행에서 일한 여러분의 부품 가운데 이것을 정하는 것: {names}.",
)
NO_PIECE = msg(
    "None of your pieces decides it: this is the course's own bug; please report it.",
    "이것을 정하는 여러분의 부품은 없습니다. 코스 자체의 버그이니 알려 주세요.",
)
TOKEN_PARTS = msg(
    "Your engine and the course's part at step {step}: request {req} sampled token {got} as its "
    "token {i}, where the course's run sampled {want}. Every piece agreed with the course's where "
    "it was called (attention to within {gap:.2g}).",
    "여러분의 엔진과 코스의 엔진이 {step}단계에서 갈라집니다. 요청 {req}의 {i}번째 토큰: 여러분의 "
    "엔진은 {got}, 코스의 실행은 {want}. 불린 곳마다 모든 부품이 코스의 것과 같았습니다(어텐션은 "
    "{gap:.2g} 이내).",
)
FIELDS = {  # what a step or its record holds -> its name, and the pieces that decide it
    "preempted": (
        msg("the requests preempted", "선점된 요청"),
        ("pick_victims", "append_slot", "write_slot"),
    ),
    "runs": (
        msg("the requests computed and their blocks", "계산한 요청과 그 블록"),
        ("admit", "append_slot", "write_slot", "block_hashes", "computed_blocks", "take_blocks"),
    ),
    "copies": (msg("the blocks copied on write", "쓰기 시 복사한 블록"), ("write_slot",)),
    "admitted": (msg("the requests admitted", "수락한 요청"), ("admit", "computed_blocks")),
    "free": (
        msg("the free list", "빈 블록 큐"),
        ("append_slot", "write_slot", "take_blocks", "free_blocks"),
    ),
    "layout": (msg("the memory map", "메모리 지도"), ("first_fit", "append_slot", "write_slot")),
}
OTHER = (msg("the step", "단계"), tuple(piece_table.ROLES))
RUN = msg(
    "request {req} from position {start}, {n} tokens through blocks {table}",
    "요청 {req}: 위치 {start}부터 토큰 {n}개, 블록 {table}",
)
NO_RUN = msg("nothing", "없음")


def _run(run) -> str:
    """A scheduled run, short: its tokens are the same on both sides."""
    if run is None:
        return str(NO_RUN)
    return RUN.format(
        req=run.req_id, start=run.start, n=run.num_tokens, table=list(run.block_table)
    )


@dataclass(frozen=True)
class YourResult(GenerateResult):
    """A run of the learner's engine: `GenerateResult`'s fields, and whose each piece was."""

    pieces: dict | None = None  # name -> `pieces.Piece`
    calls: dict | None = None  # name -> calls the learner's piece answered
    difference: str | None = None  # where the run parted from the course's (None: never)
    compared_steps: int = 0  # steps compared with the course's, all equal

    def table(self) -> str:
        """Which piece is whose, and how often the learner's answered in this run."""
        return piece_table.table(self.pieces, self.calls)


def _parted(step: int, phase, field: str, mine, theirs, referee: Referee) -> Difference:
    """A difference in a phase the schedulers handed out (`phase`), or in a step's record or
    memory (`phase` None), with the learner's pieces that decide that field."""
    what, deciders = FIELDS.get(field, OTHER)
    names = [n for n in deciders if referee.calls.get(n)]  # the learner's, at work in this run
    who = DECIDED_BY.format(names=", ".join(names)) if names else str(NO_PIECE)
    fields = dict(step=step, what=what, mine=mine, theirs=theirs, who=who)
    text = (
        RECORD_PARTS.format(**fields) if phase is None else STEP_PARTS.format(phase=phase, **fields)
    )
    return Difference(text)


def _compare_steps(step, theirs, referee: Referee) -> None:
    """The two schedulers handed out the same phase (runs, tables, victims, copies)."""
    if step == theirs:
        return
    for field in ("preempted", "runs", "copies", "prefix", "swapped_in", "num_running", "phase"):
        a, b = getattr(step, field), getattr(theirs, field)
        if a != b:
            if field == "runs":  # the first run that differs, not the whole batch
                a, b = map(_run, next((x, y) for x, y in zip_longest(a, b) if x != y))
            raise _parted(step.index, step.phase, field, a, b, referee)


def _compare_records(mine, course, record, theirs, referee: Referee) -> None:
    """The two steps left the same record and the same memory."""
    if record != theirs:
        field = next(f for f in record._fields if getattr(record, f) != getattr(theirs, f))
        a, b = getattr(record, field), getattr(theirs, field)
        raise _parted(record.step, None, field, a, b, referee)
    a, b = mine.allocator, course.allocator
    if hasattr(a, "free_block_ids") and list(a.free_block_ids) != list(b.free_block_ids):
        raise _parted(
            record.step, None, "free", list(a.free_block_ids), list(b.free_block_ids), referee
        )
    if mine.layout() != course.layout():
        raise _parted(record.step, None, "layout", mine.layout(), course.layout(), referee)


def _compare_tokens(mine, tokens: dict, expected, referee: Referee, step: int) -> None:
    """Each sampled token is the one the course's run sampled there."""
    if expected is None:
        return
    for q in mine.running:
        if q.req_id in tokens:
            i, want = len(q.output_ids), expected[q.req_id]
            if i < len(want) and tokens[q.req_id] != want[i]:
                text = TOKEN_PARTS.format(
                    step=step,
                    req=q.req_id,
                    got=tokens[q.req_id],
                    i=i,
                    want=want[i],
                    gap=referee.largest_gap,
                )
                raise Difference(text)


def lockstep(mine, course, runner, referee: Referee, label: str, expected=None):
    """Serve `mine` (the learner's scheduler) beside `course` until done or they part; `runner`
    computes each phase (None: simulated). Returns (`Served`, the difference's text or None,
    the steps compared)."""
    trace, decode_seconds, peak, copies = [], [], 0, 0
    start = time.perf_counter()
    difference = None
    with progress(len(mine.sequences), label) as bar:
        try:
            while not mine.done:
                referee.step = mine.step_index
                referee.course = theirs = course.schedule()
                step = mine.schedule()
                _compare_steps(step, theirs, referee)
                begin = time.perf_counter()
                tokens = runner.run(step) if runner is not None else None
                if step.phase == "decode" and step.runs:
                    decode_seconds.append((len(step.runs), time.perf_counter() - begin))
                if step.runs:
                    peak = max(peak, step.num_running)
                copies += len(step.copies)
                if tokens is not None:
                    _compare_tokens(mine, tokens, expected, referee, step.index)
                record = mine.postprocess(step, tokens)
                their_record = course.postprocess(theirs, tokens)
                if record is not None:
                    _compare_records(mine, course, record, their_record, referee)
                    trace.append(record)
                    bar.update(len(record.finished))
        except Difference as d:
            difference = str(d)
            print(difference)
    served = Served(tuple(trace), peak, copies, tuple(decode_seconds), time.perf_counter() - start)
    return served, difference, len(trace)


def _slots(referee: Referee):
    """The slot mapping of a run's new tokens, by the learner's `slot` (chapter 3)."""

    def slots(chunk, block_size: int) -> list[int]:
        want = slots_of(chunk, block_size)
        if not referee.yours("slot"):
            return want
        table, positions = list(chunk.block_table), range(chunk.start, chunk.seq_len)
        return [
            referee.call("slot", (table, block_size, p), w)
            for p, w in zip(positions, want, strict=True)
        ]

    return slots


def generate(
    model,
    prompts: list[str],
    max_new_tokens: int,
    *,
    attention: str | None = None,
    expected=None,
    workspace=None,
    record_layout: bool = False,
    **options,
) -> YourResult:
    """Serve `prompts` on the learner's engine beside the course's (module docstring).

    `options`: `paged.model.generate`'s (kv_slots, block_size, policy, system, share_prefix,
    rules, prefix_caching, ...). attention: "gather", "decode_one_head" or "kernel" (default: the
    kernel on a GPU, gather on a CPU). expected: the course's run of the same requests (a
    `GenerateResult`): each token is compared as it is sampled. workspace: the folder to read the
    pieces from (default: `paged.exercises.engine.workspace.folder()`).
    """
    pieces = piece_table.load(workspace)  # a file that cannot serve is named before any run
    p = plan(model, prompts, max_new_tokens, **options)
    referee = Referee(pieces)
    salted = any(r.cache_salt for r in p.requests)  # the exercise's hashes take no salt
    kw = dict(record_layout=record_layout, **p.options)
    mine = YourScheduler(p.requests, p.scheduler_policy, referee, hash_tokens=not salted, **kw)
    course = Scheduler(p.requests, p.scheduler_policy, **kw)
    backend = your_attention(referee, model.device, attention or default_mode(model.device))
    cache = KVCache(model, mine.pool.num_slots, mine.pool.block_size)
    runner = ModelRunner(model, cache, backend, slots=_slots(referee))
    want = getattr(expected, "tokens", expected)
    label = SERVED.format(policy=p.policy)
    served, difference, compared = lockstep(mine, course, runner, referee, label, want)
    base = result(model, p, mine, served, backend.name)
    values = {f.name: getattr(base, f.name) for f in fields(GenerateResult)}
    return YourResult(
        **values,
        pieces=pieces,
        calls=dict(referee.calls),
        difference=difference,
        compared_steps=compared,
    )


@dataclass(frozen=True)
class YourSimulation:
    """A simulated run of the learner's engine: its trace and whose each piece was."""

    trace: tuple
    pieces: dict
    calls: dict
    difference: str | None
    compared_steps: int

    def table(self) -> str:
        return piece_table.table(self.pieces, self.calls)


def simulate(requests, policy: str, *, workspace=None, record_layout: bool = False, **options):
    """The learner's engine on simulated requests (no model, no tokens), beside the course's
    scheduler: `paged.scheduler.Scheduler`'s arguments."""
    pieces = piece_table.load(workspace)
    referee = Referee(pieces)
    mine = YourScheduler(requests, policy, referee, record_layout=record_layout, **options)
    course = Scheduler(requests, policy, record_layout=record_layout, **options)
    label = SERVED.format(policy=policy)
    served, difference, compared = lockstep(mine, course, None, referee, label)
    return YourSimulation(served.trace, pieces, dict(referee.calls), difference, compared)
