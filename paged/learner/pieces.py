"""The pieces of the learner's engine: where each exercise serves, and whose each piece is.

An engine piece is an exercise whose answer does a job in a serving run (`ROLES`: chapter and
job). `load()` reads the learner's workspace (`paged.exercises.engine.workspace`): each piece kept there
is the learner's, checked for its signature before anything runs; a piece not kept is the
course's. `table()` prints which is which.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

from ..exercises import SPECS
from ..exercises.answers import find
from ..exercises.engine import workspace
from ..text import Message, msg, pad

ROLES = {  # piece -> (the chapter that teaches it, its job in the engine)
    "first_fit": (
        2,
        msg(
            "places a request's range in the contiguous arena", "연속 영역에 요청의 범위를 놓습니다"
        ),
    ),
    "slot": (
        3,
        msg("the slot each new token's K and V are written to", "새 토큰의 K와 V를 쓸 슬롯"),
    ),
    "append_slot": (
        3,
        msg(
            "a sequence's next slot; a block when the last is full",
            "시퀀스의 다음 슬롯, 마지막 블록이 차면 새 블록",
        ),
    ),
    "gather": (
        5,
        msg(
            "reads K and V through a block table (prefill; decode on a CPU)",
            "블록 테이블을 거쳐 K와 V를 읽습니다(prefill, CPU의 디코드)",
        ),
    ),
    "decode_one_head": (
        5,
        msg(
            "one query head's decode (attention='decode_one_head')",
            "쿼리 헤드 하나의 디코드(attention='decode_one_head')",
        ),
    ),
    "online_softmax_kernel": (
        7,
        msg(
            "decode attention on a GPU (attention='kernel')",
            "GPU의 디코드 어텐션(attention='kernel')",
        ),
    ),
    "write_slot": (
        8,
        msg(
            "the next slot where the last block is shared: copy-on-write",
            "마지막 블록을 공유할 때의 다음 슬롯: 쓰기 시 복사",
        ),
    ),
    "pick_victims": (
        9,
        msg(
            "which requests a step preempts (the course's rules)",
            "한 단계가 선점할 요청(코스의 규칙)",
        ),
    ),
    "admit": (
        10,
        msg(
            "which waiting requests a step admits (the course's rules)",
            "한 단계가 수락할 대기 요청(코스의 규칙)",
        ),
    ),
    "block_hashes": (
        11,
        msg(
            "names each full block by its hash chain",
            "가득 찬 블록마다 해시 사슬로 이름을 붙입니다",
        ),
    ),
    "computed_blocks": (
        12,
        msg("the cached blocks a new request takes", "새 요청이 가져가는 캐시된 블록"),
    ),
    "free_blocks": (
        12,
        msg(
            "where a request's freed blocks go in the free queue",
            "요청이 내놓은 블록이 빈 블록 큐의 어디로 가는지",
        ),
    ),
    "take_blocks": (
        12,
        msg(
            "which blocks an allocation takes, and what it evicts", "할당이 가져갈 블록과 축출할 것"
        ),
    ),
}
assert tuple(ROLES) == workspace.ENGINE_PIECES

YOURS = msg("yours", "여러분의 것")
COURSE = msg("the course's", "코스의 것")
PIECE, CHAPTER, WHOSE, JOB = (
    msg("piece", "부품"),
    msg("chapter", "장"),
    msg("whose", "누구의 것"),
    msg("its job in the engine", "엔진에서 하는 일"),
)
CHAPTER_NO = msg("{n}", "{n}장")
SIGNATURE = msg(
    "{path}: your `{name}` takes {got} arguments; the engine calls it with {want} ({params}). "
    "Give it back the exercise's signature, or run its checker again to write the file anew.",
    "{path}: 여러분의 `{name}` 함수는 인자를 {got}개 받는데, 엔진은 {want}개({params})로 부릅니다. "
    "연습 문제의 시그니처로 되돌리거나, 채점기를 다시 실행해 파일을 새로 쓰세요.",
)


@dataclass(frozen=True)
class Piece:
    """One piece of the engine: its chapter and job, and the learner's function (None: the
    course's serves) with the file it came from."""

    name: str
    chapter: int
    job: Message
    fn: object = None
    path: Path | None = None

    @property
    def yours(self) -> bool:
        return self.fn is not None

    @property
    def shown(self) -> str:
        return workspace.shown(self.path) if self.path is not None else self.name


def _parameters(fn) -> list[str]:
    plain = fn.fn if hasattr(fn, "fn") and callable(fn.fn) else fn
    return list(inspect.signature(plain).parameters)


def _check_signature(name: str, fn, path: Path) -> None:
    """A piece called with the exercise's arguments must take as many (a kernel: the same
    names, which the launch passes by keyword)."""
    want = _parameters(find(name))
    got = _parameters(fn)
    kernel = name.endswith("_kernel")
    if len(got) != len(want) or (kernel and got[-5:] != want[-5:]):
        params = ", ".join(SPECS[name].params or want) if not kernel else ", ".join(want)
        raise workspace.WorkspaceError(
            SIGNATURE.format(
                path=workspace.shown(path), name=name, got=len(got), want=len(want), params=params
            )
        )


def load(where: Path | None = None) -> dict[str, Piece]:
    """Every piece, the learner's where the workspace keeps one (its signature checked), else the
    course's. Raises `WorkspaceError` naming the file when a kept piece cannot serve."""
    pieces = {}
    for name, (chapter, job) in ROLES.items():
        fn = workspace.load(name, where)
        path = workspace.path_of(name, where) if fn is not None else None
        if fn is not None:
            _check_signature(name, fn, path)
        pieces[name] = Piece(name, chapter, job, fn, path)
    return pieces


def table(pieces: dict[str, Piece], calls=None) -> str:
    """One line per piece: its name, chapter, whose it is and its job (and, given the run's
    `calls`, how often the learner's piece answered)."""

    def row(piece, chapter, whose, job) -> str:
        return f"{pad(piece, '22')} {pad(chapter, '>7')}  {pad(whose, '14')} {job}"

    lines = [row(str(PIECE), str(CHAPTER), str(WHOSE), str(JOB))]
    for p in pieces.values():
        whose = str(YOURS if p.yours else COURSE)
        if calls is not None and p.yours:
            whose = f"{whose} ×{calls.get(p.name, 0)}"
        lines.append(row(p.name, CHAPTER_NO.format(n=p.chapter), whose, str(p.job)))
    return "\n".join(lines)
