"""A serving run step by step: what each request did in each step (chapter 4's primer).

`schedule_states` replays a scheduler's trace (`StepRecord`s, course rules) into one row per
request: not arrived yet, waiting in the queue, prefilled (its whole prompt, the step it is
admitted), decoding (one token per step while it runs), preempted (its blocks taken back; it waits
again and is prefilled again), finished. `draw_schedule` draws those rows, one column per step:
continuous batching is visible as requests joining and leaving the batch at any step.
"""

from __future__ import annotations

from matplotlib.patches import Patch, Rectangle

from ..text import msg
from .style import _axes

STATES = ("waiting", "prefill", "decode", "preempted")
STATE_COLORS = {  # none of the four KV-slot colours: this picture is about time, not memory
    "waiting": "#FFFFFF",
    "prefill": "#CC79A7",  # reddish purple
    "decode": "#009E73",  # bluish green
    "preempted": "#D55E00",  # vermilion
}
STATE_LABELS = {
    "waiting": msg("waiting in the queue", "큐에서 대기"),
    "prefill": msg("prefill: the whole prompt at once", "prefill: 프롬프트 전체를 한 번에"),
    "decode": msg("decode: one more token", "decode: 토큰 하나 더"),
    "preempted": msg("preempted: blocks taken back", "선점: 블록을 돌려줌"),
}
TITLE = msg(
    "One scheduler, step by step: {n} requests in a pool of {blocks} blocks (SIMULATED)",
    "스케줄러 하나를 단계별로: 블록 {blocks}개짜리 풀의 요청 {n}개 (SIMULATED)",
)
STEP_AXIS = msg("step", "단계")
REQUEST_AXIS = msg("request", "요청")


def schedule_states(requests, trace) -> dict:
    """{req_id: [state or None per step]}: None before the request arrives and after it
    finished. A request admitted in a step prefills there; one running at a step's start decodes
    (unless preempted in it); a finished one's last step is its last decode (or prefill)."""
    arrival = {r.req_id: r.arrival_time for r in requests}
    rows = {r.req_id: [] for r in requests}
    running, done = set(), set()
    for record in trace:
        t = record.step
        admitted, preempted = set(record.admitted), set(record.preempted)
        for req_id, row in rows.items():
            if req_id in done or arrival[req_id] > t:
                row.append(None)
            elif req_id in preempted:
                row.append("preempted")
            elif req_id in admitted:
                row.append("prefill")
            elif req_id in running:
                row.append("decode")
            else:
                row.append("waiting")
        running = (running - preempted) | admitted
        running -= set(record.finished)
        done |= set(record.finished)
    return rows


def draw_schedule(requests, trace, num_blocks: int, ax=None, title=None):
    """One row per request (arrival order, top first), one column per step, coloured by
    `schedule_states`; the legend names the states."""
    rows = schedule_states(requests, trace)
    ax = _axes(ax, (9, 0.45 * len(rows) + 1.6))
    for y, states in enumerate(rows.values()):
        for t, state in enumerate(states):
            if state is None:
                continue
            ax.add_patch(
                Rectangle(
                    (t, -y - 0.4),
                    1,
                    0.8,
                    facecolor=STATE_COLORS[state],
                    edgecolor="#555555",
                    lw=0.5,
                )
            )
    ax.set_xlim(0, len(trace))
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.set_yticks([-y for y in range(len(rows))], [str(r) for r in rows])
    ax.set_xlabel(str(STEP_AXIS))
    ax.set_ylabel(str(REQUEST_AXIS))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [
        Patch(facecolor=STATE_COLORS[s], edgecolor="#555555", lw=0.5, label=str(STATE_LABELS[s]))
        for s in STATES
    ]
    ax.legend(
        handles=handles,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        ncol=2,
        frameon=False,
    )
    text = title or TITLE.format(n=len(rows), blocks=num_blocks)
    ax.set_title(text, fontsize=10, loc="left")
    return ax
