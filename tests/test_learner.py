"""The learner's workspace and engine: what a correct answer leaves behind, and the engine that
the kept pieces make, in lock-step with the course's (simulated here; the model's in
test_learner_model.py).

The engine's lock-step must be able to fail: each wrong piece below, written into a workspace by
hand, stops the run at its first differing step, named with its file. (A piece its checker
accepts today and the engine still names: a kernel with chapter 7's head size built in, in
test_learner_model.py.)
"""

from __future__ import annotations

import dataclasses
import linecache
import textwrap
from pathlib import Path

import pytest

from paged import learner, workloads
from paged.exercises import answers, check_append_slot, check_wasted_slots
from paged.exercises.engine import workspace
from paged.scheduler import Scheduler

pytestmark = pytest.mark.usefixtures("english")


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """An empty workspace of this test's own."""
    monkeypatch.setenv("PAGED_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def write(where: Path, name: str, source: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


# ---- the workspace -----------------------------------------------------------------------------
def test_a_correct_answer_is_kept_and_imports_again(ws, capsys):
    assert check_append_slot(answers.find("append_slot"))
    out = capsys.readouterr().out
    assert "append_slot: kept in your workspace as" in out and "1 of the engine's 13 pieces" in out
    kept = workspace.load("append_slot")
    table, free = [3], [7, 5]
    assert kept(table, 4, 4, free) == 5 * 4 and table == [3, 5] and free == [7]
    assert workspace.kept() == ["append_slot"]


def notebook_cell(source: str, namespace: dict) -> dict:
    """Run `source` as Jupyter runs a cell: in the notebook's namespace (`__main__`), its text
    kept in linecache so that `inspect.getsource` finds it."""
    source = textwrap.dedent(source)
    filename = f"<cell-{len(linecache.cache)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_a_kept_answer_brings_its_helpers_and_constants(ws):
    cell = """
        import math

        ONE = 1

        def _blocks(n, bs):
            return math.ceil(n / bs) * ONE

        def wasted_slots(num_tokens, block_size):
            return _blocks(num_tokens, block_size) * block_size - num_tokens
    """
    notebook = notebook_cell(cell, {"__name__": "__main__"})
    assert check_wasted_slots(notebook["wasted_slots"])
    text = (ws / "wasted_slots.py").read_text()
    assert "import math" in text and "ONE = 1" in text and "def _blocks(n, bs):" in text
    assert workspace.load("wasted_slots")(17, 16) == 15


def test_a_wrong_answer_never_replaces_a_kept_one(ws, capsys):
    check_append_slot(answers.find("append_slot"))
    before = (ws / "append_slot.py").read_text()

    def append_slot(table, num_tokens, block_size, free):  # a block one token too late
        if num_tokens > len(table) * block_size:
            table.append(free.pop())
        return table[-1] * block_size + num_tokens % block_size

    assert not check_append_slot(append_slot)
    assert (ws / "append_slot.py").read_text() == before
    assert "kept" not in capsys.readouterr().out.split("not quite")[-1]


def test_a_newer_answer_replaces_the_older_which_is_kept_aside(ws):
    check_append_slot(answers.find("append_slot"))
    old = (ws / "append_slot.py").read_text()

    def append_slot(table, num_tokens, block_size, free):  # right, in another style
        if num_tokens % block_size == 0 and num_tokens // block_size == len(table):
            table.append(free.pop())
        return table[num_tokens // block_size] * block_size + num_tokens % block_size

    assert check_append_slot(append_slot)
    assert "right, in another style" in (ws / "append_slot.py").read_text()
    assert (ws / ".previous" / "append_slot.py").read_text() == old


def test_off_keeps_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PAGED_WORKSPACE", "off")
    monkeypatch.chdir(tmp_path)
    assert check_append_slot(answers.find("append_slot"))
    assert "kept" not in capsys.readouterr().out and not list(tmp_path.iterdir())
    assert workspace.folder() is None and not any(p.yours for p in learner.load().values())


def test_a_workspace_that_cannot_be_written_says_so_and_the_verdict_stands(
    tmp_path, monkeypatch, capsys
):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PAGED_WORKSPACE", str(blocker / "ws"))
    assert check_append_slot(answers.find("append_slot"))
    out = capsys.readouterr().out
    assert "append_slot: correct" in out
    assert "not kept in your workspace" in out and "set PAGED_WORKSPACE to a folder" in out


def test_an_answer_that_reads_an_object_from_the_notebook_is_not_kept(ws, capsys):
    cell = """
        table_of = {}.get

        def slot(block_table, block_size, position):
            assert table_of(0) is None
            return block_table[position // block_size] * block_size + position % block_size
    """
    from paged.exercises import check_slot

    assert check_slot(notebook_cell(cell, {"__name__": "__main__"})["slot"])
    out = capsys.readouterr().out
    assert "it reads `table_of` (builtin_function_or_method)" in out
    assert not (ws / "slot.py").exists()


def test_a_file_that_does_not_import_is_named_with_its_line(ws):
    write(
        ws,
        "admit",
        "def admit(waiting, free_blocks, block_size, watermark_blocks):\n    return [\n",
    )
    with pytest.raises(workspace.WorkspaceError, match=r"admit\.py, line \d+: your kept `admit`"):
        learner.load()


def test_a_file_without_its_function_is_named(ws):
    write(
        ws,
        "admit",
        "def admit_all(waiting, free_blocks, block_size, watermark_blocks):\n    return []\n",
    )
    with pytest.raises(workspace.WorkspaceError, match=r"admit\.py defines no `admit`"):
        learner.load()


def test_a_piece_with_the_wrong_signature_is_named(ws):
    write(ws, "slot", "def slot(block_table, position):\n    return 0\n")
    with pytest.raises(workspace.WorkspaceError, match=r"slot\.py: your `slot` takes 2 arguments"):
        learner.load()


def test_a_kept_kernel_loads_and_keeps_its_argument_names(ws):
    from paged.exercises import check_online_softmax_kernel

    assert check_online_softmax_kernel(answers.find("online_softmax_kernel"), seed=1)
    text = (ws / "online_softmax_kernel.py").read_text()
    assert text.count("@triton.jit") == 1 and "import triton.language as tl" in text
    assert learner.load()["online_softmax_kernel"].yours


# ---- the engine, simulated ---------------------------------------------------------------------
# ids that sort neither in arrival order nor against it: "the latest" is never the largest id
REQUESTS = [
    dataclasses.replace(r, req_id=f"r{(5 * i) % 14}")
    for i, r in enumerate(workloads.sharegpt_like(14, seed=2, rate=4.0))
]
CACHED = workloads.with_prompt_ids(REQUESTS, num_system_prompts=3, system_len=40, seed=1)
RUNS = {  # (requests, policy, options): what the pieces meet in them
    "preempting": (REQUESTS, "paged", dict(kv_slots=2048, block_size=16, watermark=0.05)),
    "odd_blocks": (REQUESTS, "paged", dict(kv_slots=2100, block_size=12)),  # not a power of two
    "swapping": (REQUESTS, "paged", dict(kv_slots=2048, block_size=16, preemption="swap")),
    "shared_prefix": (REQUESTS, "paged", dict(kv_slots=2400, block_size=16, shared_prefix=5)),
    "contiguous": (REQUESTS, "oracle", dict(kv_slots=3000)),  # first fit among holes
    "caching": (CACHED, "paged", dict(kv_slots=2048, block_size=16, prefix_caching=True)),
    "caching_v1": (
        CACHED,
        "paged",
        dict(
            kv_slots=2048,
            block_size=16,
            prefix_caching=True,
            rules="vllm-v1",
            max_num_batched_tokens=256,
        ),
    ),
}
USES = {
    "preempting": {"pick_victims", "admit", "append_slot"},
    "odd_blocks": {"pick_victims", "admit", "append_slot"},
    "swapping": {"pick_victims", "admit", "append_slot"},
    "shared_prefix": {"pick_victims", "append_slot", "write_slot"},
    "contiguous": {"first_fit"},
    "caching": {"pick_victims", "computed_blocks", "take_blocks", "append_slot", "free_blocks"},
    "caching_v1": {"computed_blocks", "take_blocks", "append_slot", "free_blocks"},
}


@pytest.mark.parametrize("run", RUNS)
def test_every_model_answer_kept_the_engine_is_the_courses_step_for_step(ws, run):
    workspace.keep_model_answers(ws)
    requests, policy, options = RUNS[run]
    mine = learner.simulate(requests, policy, record_layout=True, **options)
    course = Scheduler(requests, policy, record_layout=True, **options).run()
    assert mine.difference is None
    assert mine.trace == tuple(course) and mine.compared_steps == len(course)
    assert {name for name, n in mine.calls.items() if n} == USES[run]
    if run == "preempting":
        assert sum(len(s.preempted) for s in course) > 0  # the victims were chosen, not spared


def test_no_piece_kept_the_engine_is_the_courses_and_says_so(ws):
    requests, policy, options = RUNS["caching"]
    mine = learner.simulate(requests, policy, **options)
    assert mine.difference is None and mine.calls == {}
    assert all(not p.yours for p in mine.pieces.values())
    assert "yours" not in mine.table()


WRONG = {  # (run, piece, source): each stops the engine at its first differing step
    # refused by its checker: a new block one token too late
    "late_block": (
        "preempting",
        "append_slot",
        """
        def append_slot(table, num_tokens, block_size, free):
            if num_tokens > len(table) * block_size:
                table.append(free.pop())
            return table[-1] * block_size + num_tokens % block_size
        """,
    ),
    # shifts and masks: right only where the block size is a power of two
    "shifts": (
        "odd_blocks",
        "append_slot",
        """
        def append_slot(table, num_tokens, block_size, free):
            shift = block_size.bit_length() - 1
            if num_tokens >> shift == len(table):
                table.append(free.pop())
            return (table[-1] << shift) | (num_tokens & (block_size - 1))
        """,
    ),
    # the latest victim chosen by id, not by arrival
    "victim_by_id": (
        "preempting",
        "pick_victims",
        """
        def pick_victims(running, blocks_needed, free_blocks, blocks_held):
            running, victims = sorted(running), []
            for r in list(running):
                while r in running and blocks_needed[r] > free_blocks:
                    v = running.pop()
                    victims.append(v)
                    free_blocks += blocks_held[v]
                if r in running:
                    free_blocks -= blocks_needed[r]
            return victims
        """,
    ),
    # the watermark forgotten
    "no_watermark": (
        "preempting",
        "admit",
        """
        def admit(waiting, free_blocks, block_size, watermark_blocks):
            out = []
            for r, p, _ in waiting:
                need = -(-p // block_size)
                if need > free_blocks:
                    break
                free_blocks -= need
                out.append(r)
            return out
        """,
    ),
    # the freed blocks all to the tail
    "all_to_tail": (
        "caching",
        "free_blocks",
        """
        def free_blocks(free_queue, block_table, ref_counts, hashed):
            gone = [b for b in reversed(block_table) if ref_counts[b] == 1]
            return list(free_queue) + gone
        """,
    ),
    # a copy-on-write that forgets to count the old block's reference down
    "cow_refs": (
        "shared_prefix",
        "write_slot",
        """
        def write_slot(table, num_tokens, block_size, free, refs):
            copied = None
            if num_tokens == len(table) * block_size:
                table.append(free.pop())
                refs[table[-1]] = 1
            elif refs[table[-1]] > 1:
                new = free.pop()
                copied = (table[-1], new)
                refs[new] = 1
                table[-1] = new
            return table[-1] * block_size + num_tokens % block_size, copied
        """,
    ),
    # first fit from the largest hole
    "worst_fit": (
        "contiguous",
        "first_fit",
        """
        def first_fit(holes, size):
            fits = [h for h in holes if h[1] >= size]
            return max(fits, key=lambda h: h[1])[0] if fits else None
        """,
    ),
}


@pytest.mark.parametrize("case", WRONG)
def test_a_wrong_piece_stops_the_engine_at_its_first_differing_step(ws, case, capsys):
    run, piece, source = WRONG[case]
    workspace.keep_model_answers(ws)
    write(ws, piece, source)
    requests, policy, options = RUNS[run]
    mine = learner.simulate(requests, policy, **options)
    assert mine.difference is not None and f"your {piece} (" in mine.difference
    assert f"{piece}.py" in mine.difference and "the course's returned" in mine.difference
    assert mine.difference in capsys.readouterr().out  # said where the learner looks
    course = Scheduler(requests, policy, **options).run()
    assert mine.compared_steps < len(course)  # it stopped there
    assert mine.trace == tuple(course[: mine.compared_steps])  # equal up to that step


def test_a_piece_that_raises_is_named_with_its_file_and_line(ws):
    workspace.keep_model_answers(ws)
    write(
        ws,
        "take_blocks",
        """
        def take_blocks(free_queue, n, block_hash):
            taken = free_queue[:n]
            return taken, [block_hash[b] for b in taken]
        """,
    )
    requests, policy, options = RUNS["caching"]
    mine = learner.simulate(requests, policy, **options)
    assert "your take_blocks" in mine.difference and "raised KeyError" in mine.difference
    assert "take_blocks.py, line 4" in mine.difference


def test_a_piece_that_changes_what_it_must_leave_alone_is_named(ws):
    workspace.keep_model_answers(ws)
    write(
        ws,
        "free_blocks",
        """
        def free_blocks(free_queue, block_table, ref_counts, hashed):
            for b in reversed(block_table):
                ref_counts[b] -= 1
            front = [b for b in reversed(block_table) if ref_counts[b] == 0 and b not in hashed]
            tail = [b for b in reversed(block_table) if ref_counts[b] == 0 and b in hashed]
            return front + list(free_queue) + tail
        """,
    )
    requests, policy, options = RUNS["caching"]
    mine = learner.simulate(requests, policy, **options)
    assert "your free_blocks" in mine.difference and "changed `ref_counts`" in mine.difference


def test_right_values_of_the_wrong_type_are_named(ws):
    workspace.keep_model_answers(ws)
    write(
        ws,
        "append_slot",
        """
        def append_slot(table, num_tokens, block_size, free):
            if num_tokens == len(table) * block_size:
                table.append(free.pop())
            return float(table[-1] * block_size + num_tokens % block_size)
        """,
    )
    requests, policy, options = RUNS["preempting"]
    mine = learner.simulate(requests, policy, **options)
    assert "returned the right values" in mine.difference and "float" in mine.difference


def test_the_engine_holds_equal_under_both_languages(ws, monkeypatch):
    workspace.keep_model_answers(ws)
    write(ws, "admit", WRONG["no_watermark"][2])
    monkeypatch.setenv("PAGED_LANG", "ko")
    requests, policy, options = RUNS["preempting"]
    mine = learner.simulate(requests, policy, **options)
    assert "갈라집니다" in mine.difference and "admit.py" in mine.difference
    assert "수락" in mine.table()
