"""vLLM's child reports its progress through a pipe; the parent turns it into two bars.

No vLLM here: a stand-in child writes the lines (the live run's own lines are checked in
tests/test_vllm.py). The pipe is read until it closes, or until the child has ended although a
process it started keeps the pipe open; the bars move by exactly what the lines say.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

from paged.engines import vllm_process

CHILD = """
import os, sys, time
out = os.fdopen(int(sys.argv[1]), "w", buffering=1)
for line in ("start 1", "start 2", "tokens 3", "tokens 10"):
    out.write(line + "\\n")
    time.sleep(0.05)
out.write("tokens 1"); out.flush(); out.write("2\\n")  # a line in two writes
"""
KEEPS_PIPE = """
import subprocess, sys
fd = int(sys.argv[1])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], pass_fds=(fd,))
"""


def events_of(script: str) -> tuple[list, float]:
    read_end, write_end = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", script, str(write_end)], pass_fds=(write_end,))
    os.close(write_end)
    start = time.perf_counter()
    try:
        events = list(vllm_process.progress_lines(child, read_end))
    finally:
        os.close(read_end)
    child.wait()
    return events, time.perf_counter() - start


def test_every_line_arrives_in_order():
    events, _ = events_of(CHILD)
    assert events == [("start", 1), ("start", 2), ("tokens", 3), ("tokens", 10), ("tokens", 12)]


def test_a_pipe_held_open_by_a_grandchild_ends_with_the_child():
    events, seconds = events_of(KEEPS_PIPE)
    assert events == [] and seconds < 10  # not the grandchild's 30 s


class Bars:
    """Stands in for paged.progress.progress, keeping each bar's total, label and updates."""

    def __init__(self):
        self.bars = []

    @contextlib.contextmanager
    def __call__(self, total, desc):
        bar = {"total": total, "desc": desc, "updates": [], "closed": False}
        self.bars.append(bar)
        yield type("Bar", (), {"update": lambda _, n=1: bar["updates"].append(n)})()
        bar["closed"] = True


def test_vllm_starting_then_its_tokens(monkeypatch):
    bars = Bars()
    monkeypatch.setattr(vllm_process, "progress", bars)
    events = [("start", 1), ("start", 2), ("tokens", 3), ("tokens", 10), ("tokens", 10)]
    vllm_process.show_progress(events, num_tokens=12)
    start, tokens = bars.bars
    assert (start["total"], start["desc"], start["updates"]) == (
        2,
        str(vllm_process.STARTING),
        [1, 1],
    )
    assert (tokens["total"], tokens["desc"]) == (12, str(vllm_process.NEW_TOKENS))
    assert tokens["updates"] == [3, 7, 0] and start["closed"] and tokens["closed"]


def test_a_child_that_fails_while_starting_leaves_one_bar(monkeypatch):
    bars = Bars()
    monkeypatch.setattr(vllm_process, "progress", bars)
    vllm_process.show_progress([("start", 1)], num_tokens=12)
    assert [b["updates"] for b in bars.bars] == [[1]] and bars.bars[0]["closed"]


def test_a_recording_standing_in_for_vllm_shows_the_live_runs_bars_full(monkeypatch):
    """So a chapter's outputs are the same with or without vLLM's environment (nbval compares
    them); a recording asked for by name (live=False) shows none."""
    from paged.engines import vllm, vllm_recordings

    bars = Bars()
    monkeypatch.setattr(vllm_process, "progress", bars)
    monkeypatch.setattr(vllm, "vllm_python", lambda: None)  # no vLLM environment here
    q = vllm_recordings.recording("chapter12_tight")["request"]
    run = lambda live: vllm.generate(  # noqa: E731
        q["prompt_token_ids"],
        q["max_new_tokens"],
        kv_blocks=q["kv_blocks"],
        block_size=q["block_size"],
        prefix_caching=True,
        live=live,
    )
    assert run(None).source == "recorded"
    num_tokens = len(q["prompt_token_ids"]) * q["max_new_tokens"]
    assert [(b["total"], b["updates"], b["closed"]) for b in bars.bars] == [
        (2, [2], True),
        (num_tokens, [num_tokens], True),
    ]
    run(False)
    assert len(bars.bars) == 2
