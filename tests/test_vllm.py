"""paged.engines.vllm: vLLM V1 on the course's model, live or recorded, in the course's shapes.

Three groups:
- always: the committed recordings load and keep the invariants of a paged pool (blocks held +
  free = the usable pool at every step, every preempted request comes back and finishes, each
  answer is max_new_tokens long or ends at EOS) and agree with vLLM's own counts (cache hits at
  admission, waiting requests); every bad input raises a named error naming its value before
  anything starts; a failed or stale model conversion is never trusted; `compare` takes a step's
  victims as a set; the child names what a vLLM lacks before its first step;
- with the model (skip without it, fail under PAGED_REQUIRE_MODEL=1): the recorded request is
  the chapter's prompts through the course's tokenizer, and vLLM's tokens equal the course's own
  paged scheduler's (`paged.model.generate`) in the same pool of 31 blocks of 32;
- with vLLM's environment (`make vllm-venv`; skip without it, fail under PAGED_REQUIRE_VLLM=1):
  a live run equals the recording step by step, and prefix caching serves cached prompt tokens.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from model_needs import need
from vllm_replay import as_result, options, replay, run_recorded

import paged.model as pm
from paged.engines import compare, convert, vllm_process, vllm_recordings, vllm_request
from paged.engines import vllm as V
from paged.model.errors import KVBudgetTooSmall
from paged.scheduler import Scheduler
from paged.workloads import Request

REQUIRE_VLLM = os.environ.get("PAGED_REQUIRE_VLLM", "") not in ("", "0")
CHAPTER, PREFIX = "chapter11_24x48_32x32", "chapter11_prefix_caching"
PREEMPTED = "prefix_caching_preempted"  # the prefix run in 32 blocks: resumed requests hit too
# chapter 12: two tenants without and with salts; a tight pool that evicts and preempts
CHAPTER12 = ("chapter12_tenants_nosalt", "chapter12_tenants_salted", "chapter12_tight")
WATERMARK = "watermark_while_running"  # watermark 0.3 of 8 blocks: one request fits only alone
ALL = (CHAPTER, PREFIX, PREEMPTED, *CHAPTER12, WATERMARK)


def recording(name: str) -> dict:
    return next(r for r in vllm_recordings.recordings() if r["name"] == name)


# ---- the recordings: no vLLM, no model -----------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_recording_keeps_the_pool_invariants(name):
    rec, run = recording(name), run_recorded(name)
    q = rec["request"]
    n = len(q["prompt_token_ids"])
    assert run.source == "recorded" and run.engine == "vLLM" and run.version == "0.32.0"
    assert run.machine["cores"] >= 1 and run.date and run.versions["torch"]
    assert run.num_usable_blocks == q["kv_blocks"] - 1 and run.objects["null_block_id"] == 0
    for step, free in zip(run.trace, run.num_free_blocks, strict=True):
        held = {b for _, table, _ in step.layout.tables for b in table}
        assert 0 not in held  # the null block is never handed out
        assert len(held) + free == run.num_usable_blocks, step.step
        assert sum(step.usage) == run.num_usable_blocks * run.block_size
        running = [r for r, _, _ in step.layout.tables]  # Scheduler.running, in its order
        assert len(set(running)) == len(running) == step.num_running
        assert set(running) <= set(range(n))
    finished = [r for s in run.trace for r in s.finished]
    assert sorted(finished) == list(range(n))  # each request finishes once
    preempted = {r for s in run.trace for r in s.preempted}
    for r in preempted:  # every preempted request is admitted again after its last preemption
        last = max(s.step for s in run.trace if r in s.preempted)
        assert any(r in s.admitted for s in run.trace[last + 1 :])
    assert run.preemptions == sum(map(len, (s.preempted for s in run.trace)))
    assert len(run.tokens) == n  # in prompt order, one answer each
    for tokens in run.tokens:
        assert len(tokens) == q["max_new_tokens"] or tokens[-1] == run.eos_token_id


def test_chapter_recording_preempts_and_prefix_recording_caches():
    chapter, prefix = run_recorded(CHAPTER), run_recorded(PREFIX)
    assert chapter.kv_blocks == 32 and chapter.block_size == 32 and chapter.preemptions > 0
    assert chapter.metrics["vllm:num_preemptions"] == chapter.preemptions
    assert prefix.preemptions == 0 and prefix.cached_prompt_tokens > 0
    assert prefix.cached_prompt_tokens == prefix.metrics["vllm:prefix_cache_hits"]
    shared = [s for s in prefix.trace if s.layout.tables]  # a block in several block tables
    assert any(len({t[0] for _, t, _ in s.layout.tables}) < len(s.layout.tables) for s in shared)


def test_a_request_without_a_recording_is_refused_by_name():
    q = recording(CHAPTER)["request"]
    with pytest.raises(
        vllm_recordings.RecordingNotFound, match="max_new_tokens=47.*make vllm-venv"
    ):
        V.generate(q["prompt_token_ids"], 47, kv_blocks=32, live=False)


# ---- bad input: each a named error with the value, before anything starts ------------------
IDS = [[1, 2, 3] * 10]


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(kv_blocks=32, block_size=48), ValueError, "block_size=48"),
        (dict(kv_blocks=2, block_size=32), pm.KVBudgetTooSmall, "kv_blocks=2 .*kv_blocks >= 3"),
        (dict(kv_blocks=4, max_model_len=4 * 32), ValueError, "max_model_len=128"),
        (dict(kv_blocks=4, max_model_len=40), pm.PromptTooLong, "max_model_len=40"),
        (dict(kv_blocks=1), ValueError, "kv_blocks must be an int >= 2"),
    ],
)
def test_bad_sizes_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        V.generate(IDS, 16, **kwargs)


def test_bad_prompts_are_named():
    with pytest.raises(ValueError, match="prompt_token_ids"):
        V.generate("What is 2 + 2?", 16, kv_blocks=8)
    with pytest.raises(ValueError, match="max_new_tokens"):
        V.generate(IDS, 0, kv_blocks=8)


def test_no_vllm_environment_is_named(monkeypatch, tmp_path):
    bogus = tmp_path / "no-python"
    monkeypatch.setenv("PAGED_VLLM_PYTHON", str(bogus))
    for live in (True, None):
        with pytest.raises(vllm_process.VLLMNotFound, match=f"PAGED_VLLM_PYTHON='{bogus}'"):
            V.generate(IDS, 16, kv_blocks=8, live=live)
    monkeypatch.delenv("PAGED_VLLM_PYTHON")
    monkeypatch.setattr(vllm_process, "ROOT", tmp_path)  # a checkout without .venv-vllm
    with pytest.raises(vllm_process.VLLMNotFound, match="make vllm-venv"):
        V.generate(IDS, 16, kv_blocks=8, live=True)


# ---- the converted model folder: never trusted half-made or stale --------------------------
def fake_gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"not really a gguf file")
    return path


def test_a_killed_conversion_leaves_nothing_trusted(monkeypatch, tmp_path):
    gguf, cache = fake_gguf(tmp_path), tmp_path / "cache"

    def killed(path, out, key):
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(convert, "_write", killed)
    with pytest.raises(KeyboardInterrupt):
        convert.convert(gguf, cache)
    assert not convert.model_dir(gguf, cache).exists() and list(cache.iterdir()) == []


def test_a_stale_folder_is_converted_again(monkeypatch, tmp_path):
    gguf, cache = fake_gguf(tmp_path), tmp_path / "cache"
    folder = convert.model_dir(gguf, cache)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")  # no marker: a conversion that never finished

    def write(path, out, key):
        (out / "config.json").write_text('{"new": 1}')
        (out / convert.MARKER).write_text(json.dumps({"key": key, "files": ["config.json"]}))

    monkeypatch.setattr(convert, "_write", write)
    assert convert.convert(gguf, cache) == folder
    assert json.loads((folder / "config.json").read_text()) == {"new": 1}
    gguf.write_bytes(b"another file now")  # other bytes: another key, another folder
    assert convert.model_dir(gguf, cache) != folder
    assert convert.convert(gguf, cache) == convert.model_dir(gguf, cache)
    assert [f.name for f in cache.iterdir()] == [convert.model_dir(gguf, cache).name]  # replaced


def test_a_failed_conversion_is_named_and_leaves_nothing(tmp_path):
    need("transformers", "gguf")
    gguf, cache = fake_gguf(tmp_path), tmp_path / "cache"
    with pytest.raises(convert.ConversionFailed, match="nothing was kept"):
        convert.ensure_converted(gguf, cache)
    assert not cache.exists() or list(cache.iterdir()) == []


# ---- with the model: the recording is the chapter's request, and agrees with the course -----
def test_recorded_ids_are_the_course_tokenizers(model):
    for name in (CHAPTER, PREFIX, *CHAPTER12):
        rec = recording(name)
        n, system = len(rec["prompts"]), rec["system"]
        systems = system if isinstance(system, list) else [system] * n  # chapter12_tight: two
        pairs = zip(rec["prompts"], systems, strict=True)
        ids = [pm.prompt_ids(model, [p], system)[0] for p, system in pairs]
        assert ids == rec["request"]["prompt_token_ids"]


def test_vllm_tokens_equal_the_course_scheduler(model):
    rec = recording(CHAPTER)
    engine = V.generate(
        rec["request"]["prompt_token_ids"], 48, live=False, **options(rec["request"])
    )
    ours = pm.generate(
        model,
        rec["prompts"],
        48,
        policy="paged",
        block_size=32,
        kv_slots=engine.num_usable_blocks * 32,
    )
    assert ours.tokens == engine.tokens  # 24 of 24 answers, token by token
    assert ours.peak_batch == engine.peak_batch


# ---- with vLLM's environment: live equals the recording ------------------------------------
def need_vllm() -> None:
    try:
        python = vllm_process.vllm_python()
    except vllm_process.VLLMNotFound as exc:
        python, reason = None, str(exc)
    else:
        reason = f"vLLM's environment is not built ({vllm_process.FIX})"
    if python is None:
        if REQUIRE_VLLM:
            pytest.fail(f"PAGED_REQUIRE_VLLM is set but {reason}")
        pytest.skip(reason)


@pytest.mark.parametrize("name", ALL)
def test_live_run_equals_its_recording(name, monkeypatch):
    need_vllm()
    rec, recorded = recording(name), run_recorded(name)
    q = rec["request"]
    seen = []  # the child's progress lines, as the bars get them
    show = vllm_process.show_progress
    monkeypatch.setattr(vllm_process, "show_progress", lambda e, n: show(seen.extend(e) or seen, n))
    live = V.generate(
        q["prompt_token_ids"], q["max_new_tokens"], live=True, **options(rec["request"])
    )
    assert live.source == "live" and live.tokens == recorded.tokens
    tokens = [n for kind, n in seen if kind == "tokens"]
    assert seen[:2] == [("start", 1), ("start", 2)] and tokens == sorted(tokens)
    assert len(tokens) == len(live.trace) and tokens[-1] == sum(map(len, live.tokens))
    for a, b in zip(live.trace, recorded.trace, strict=True):
        assert (a.num_running, a.admitted, a.preempted, a.finished) == (
            b.num_running,
            b.admitted,
            b.preempted,
            b.finished,
        )
        assert a.layout == b.layout  # the same block ids: vLLM's free queue is deterministic
    assert live.num_free_blocks == recorded.num_free_blocks
    assert live.cached_prompt_tokens == recorded.cached_prompt_tokens
    assert live.cached_tokens == recorded.cached_tokens and live.resumed == recorded.resumed
    if q["prefix_caching"]:
        assert live.cached_prompt_tokens > 0
    # the live run times its steps; a recording made before step times says so by name
    assert len(live.step_seconds) == live.steps and min(live.step_seconds) > 0
    assert sorted(live.first_token_step) == list(range(len(live.tokens)))
    if not recorded.step_seconds:
        with pytest.raises(ValueError, match="recorded run has no step times"):
            recorded.time_to_first_token(0)


def test_one_at_a_time_sends_each_prompt_after_the_last_and_times_its_first_token():
    q = recording(CHAPTER12[0])["request"]  # chapter 12's tenants: one system prompt
    ids = q["prompt_token_ids"][:2]
    plain = vllm_request.make_request(ids, 3, kv_blocks=16)
    assert "one_at_a_time" not in plain  # absent unless asked: old recordings still match
    assert vllm_request.make_request(ids, 3, kv_blocks=16, one_at_a_time=True) == plain | {
        "one_at_a_time": True
    }
    need_vllm()
    run = V.generate(ids, 3, kv_blocks=16, prefix_caching=True, one_at_a_time=True, live=True)
    a_done = next(t for t, s in enumerate(run.trace) if 0 in s.finished)
    assert [t for t, s in enumerate(run.trace) if s.admitted] == [0, a_done + 1]
    assert run.first_token_step == {0: 0, 1: a_done + 1}
    assert run.num_cached_tokens == (0, 64)  # B takes A's system prompt: 2 blocks of 32
    assert run.time_to_first_token(1) == run.step_seconds[a_done + 1] > 0


# ---- what chapter 11 prints: the library's lines, in either edition -----------------------
def test_chapter_lines_come_from_the_catalogue_in_both_languages(monkeypatch):
    from types import SimpleNamespace

    from paged.engines import summary

    engine = run_recorded(CHAPTER)
    v1 = SimpleNamespace(tokens=engine.tokens, rules="vllm-v1")
    own = SimpleNamespace(tokens=[t[:-1] for t in engine.tokens], rules="course")
    for lang in ("en", "ko"):
        monkeypatch.setenv("PAGED_LANG", lang)
        lines = [
            *summary.engine_header(engine, 24, 48),
            summary.same_answers(engine, v1, own),
            summary.cached_tokens(1472, engine, 2485),
            summary.speed(engine, 60.0),
        ]
        text = "\n".join(lines)
        assert "24" in lines[0] and "48" in lines[0] and str(engine.kv_blocks) in lines[0]
        assert "vllm.v1.core.block_pool.BlockPool" in text
        assert "1472" in text and "2485" in text
        if lang == "ko":
            assert "코스 (V1 규칙) 24개 중 24개" in text and "코스 (자체 규칙) 24개 중 0개" in text
            assert "requests" not in text and "tokens/s" not in text
        else:
            assert "course (V1 rules) 24 of 24" in text and "course (own rules) 0 of 24" in text
    # a run that recorded its torch threads names them; one recorded before that, only the cores
    assert "thread" not in summary.speed(engine, 60.0)
    threaded = dataclasses.replace(engine, machine=engine.machine | {"threads": 1})
    assert "스레드 1개" in summary.speed(threaded, 60.0)
    monkeypatch.setenv("PAGED_LANG", "en")
    assert summary.rules_name(v1) == "course (V1 rules)"
    assert "torch threads per side: 1, cores: " in summary.speed(threaded, 60.0)
    assert summary.rules_name(own) == "course (own rules)"


# ---- compare: two runs side by side ---------------------------------------------------------
def fake_run(victim_orders, **fields):
    """A three-step paged run whose step 1 preempts requests 1 and 2, listed in `victim_order`."""
    from types import SimpleNamespace

    from paged.trace import PagedLayout, StepRecord, Usage

    tables = [((0, (1,), 8), (1, (2,), 8), (2, (3,), 8)), ((0, (1, 2), 40),), ((0, (1, 2), 41),)]
    trace = tuple(
        StepRecord(
            step=t,
            usage=Usage(0, 0, 0, 0),
            num_running=len(tab),
            num_waiting=0,
            preempted=victim_orders[t],
            layout=PagedLayout(8, 32, tab, (0,)),
        )
        for t, tab in enumerate(tables)
    )
    return SimpleNamespace(
        tokens=[[5], [6], [7]], trace=trace, num_usable_blocks=7, peak_batch=3, **fields
    )


def test_compare_takes_a_steps_victims_as_a_set():
    from paged.engines import compare

    popped = fake_run(((), (2, 1), ()), rules="vllm-v1")  # the course: in the order it popped
    listed = fake_run(((), (1, 2), ()), engine="vLLM")  # vLLM: a set, kept in running's order
    side = compare.compare(popped, listed)
    assert side.first_difference is None and side.agreeing_steps == 3
    assert side.preempted == (((1, (1, 2)),), ((1, (1, 2)),))
    assert "1:1,2" in "\n".join(side.summary_lines())
    other = fake_run(((), (0, 1), ()), engine="vLLM")  # another victim: a difference
    assert compare.compare(popped, other).first_difference == 1


def test_recorded_admissions_and_cache_hits_agree_with_vllms_own_counts():
    for name in ALL:
        run, steps = run_recorded(name), recording(name)["result"]["steps"]
        for s, hits, resumed in zip(run.trace, run.cached_tokens, run.resumed, strict=True):
            assert list(hits) == list(s.admitted) and set(resumed) <= set(s.admitted)
        first = [
            n
            for hits, res in zip(run.cached_tokens, run.resumed, strict=True)
            for i, n in hits.items()
            if i not in res
        ]
        assert len(first) == len(run.tokens)  # each request is new once
        assert sum(first) == run.cached_prompt_tokens == run.metrics["vllm:prefix_cache_hits"]
        assert run.resumed_cached_tokens == sum(
            run.cached_tokens[t][i] for t, res in enumerate(run.resumed) for i in res
        )
        for s, step in zip(run.trace, steps, strict=True):  # waiting: vLLM's own count
            assert s.num_waiting == step["num_waiting"] >= 0


def fake_core(**config):
    """An engine core with every attribute vllm_child reads, settings as given."""
    from types import SimpleNamespace as NS

    from paged.engines import vllm_engine_checks as checks

    core = NS()
    for path in (*checks.NEEDED, *checks.SETTINGS.values()):
        obj, *parents, leaf = [core, *path.split(".")]
        for name in parents:
            if not hasattr(obj, name):
                setattr(obj, name, NS())
            obj = getattr(obj, name)
        setattr(obj, leaf, config.get(leaf, 0))
    return core


def fake_classes(*dropped: str):
    """`check_engine`'s class finder over stand-ins for vLLM's classes, each with the fields
    vllm_child reads but the `dropped` ones ("Class.field"); a class named alone is absent."""
    import dataclasses

    from paged.engines import vllm_engine_checks as checks

    def find(path):
        name = path.rsplit(".", 1)[1]
        if name in dropped:
            return None
        keep = [f for f in checks.FIELDS[path] if f"{name}.{f}" not in dropped]
        return dataclasses.make_dataclass(name, keep)

    return find


def test_the_child_checks_vllms_attributes_before_the_first_step():
    from paged.engines import vllm_engine_checks as checks

    check = checks.check_engine
    ok = fake_core(async_scheduling=False, policy="fcfs")
    config = check(ok, "0.32.0", classes=fake_classes())
    assert config["async_scheduling"] is False and config["policy"] == "fcfs"
    core = fake_core()
    del core.scheduler.kv_cache_manager.block_pool.get_num_free_blocks
    del core.vllm_config.scheduler_config.max_num_batched_tokens
    del core.vllm_config.scheduler_config.watermark  # optional: read as None
    gone = fake_classes("CachedRequestData.resumed_req_ids", "Request")
    with pytest.raises(checks.EngineMismatch, match="0.33.0 lacks") as err:
        check(core, "0.33.0", classes=gone)
    assert "engine_core.scheduler.kv_cache_manager.block_pool.get_num_free_blocks" in str(err.value)
    assert "scheduler_config.max_num_batched_tokens" in str(err.value)
    # the fields each step reads of a scheduler output and a request: checked up front too
    assert "vllm.v1.core.sched.output.CachedRequestData.resumed_req_ids" in str(err.value)
    assert "vllm.v1.request.Request.request_id" in str(err.value)
    assert "watermark" not in str(err.value)
    with pytest.raises(checks.EngineMismatch, match="async_scheduling"):
        check(fake_core(async_scheduling=True), "0.32.0", classes=fake_classes())
    with pytest.raises(checks.EngineMismatch, match="use_v2_model_runner"):
        check(fake_core(use_v2_model_runner=True), "0.32.0", classes=fake_classes())


def test_a_field_counts_where_the_class_declares_it_or_its_init_assigns_it():
    from paged.engines.vllm_engine_checks import has_field

    class Request:
        def __init__(self):
            self.request_id = "r"

        @property
        def num_output_tokens(self):
            return 0

    assert has_field(Request, "request_id") and has_field(Request, "num_output_tokens")
    assert not has_field(Request, "num_computed_tokens") and not has_field(None, "request_id")


# ---- the watermark as vLLM keeps it: only while a request runs ----------------------------
def test_vllm_keeps_the_watermark_only_while_a_request_runs_and_so_does_the_course():
    run, q = run_recorded(WATERMARK), recording(WATERMARK)["request"]
    assert (q["kv_blocks"], q["watermark"]) == (8, 0.3) and run.config["watermark_blocks"] == 2
    # prompt 0 (147 tokens: 5 blocks, 6 with its answer) is admitted with nothing running: with
    # the watermark kept it could never run in 7 usable blocks; prompt 1 (34 tokens: 2 blocks)
    # then waits, 2 blocks free, until prompt 0 has finished: the watermark kept while it runs
    assert [len(p) for p in q["prompt_token_ids"]] == [147, 34]
    assert run.trace[0].admitted == (0,) and run.num_free_blocks[0] == 2
    first_of_1 = next(t for t, s in enumerate(run.trace) if 1 in s.admitted)
    assert first_of_1 == next(t for t, s in enumerate(run.trace) if 0 in s.finished) + 1
    s, steps, engine = replay(WATERMARK)  # the course's vllm-v1 rules, the same watermark
    for (ours, free, _), theirs, their_free in zip(
        steps, engine.trace, engine.num_free_blocks, strict=True
    ):
        assert sorted(ours.layout.tables) == sorted(theirs.layout.tables), ours.step
        assert (free, ours.admitted) == (their_free, theirs.admitted), ours.step
    assert compare.compare(as_result(s, steps, engine), engine).first_difference is None
    # without the watermark prompt 1 would start at once; under the course's own rules (the
    # watermark always kept) prompt 0 could never run in the same 7 usable blocks
    _, unkept, _ = replay(WATERMARK, watermark=0.0)
    assert unkept[0][0].admitted == (0, 1)
    reqs = [Request(i, len(p), 24, 0.0, tuple(p)) for i, p in enumerate(q["prompt_token_ids"])]
    with pytest.raises(KVBudgetTooSmall, match=r"needs 6 blocks \(\+ 2 kept free\)"):
        Scheduler(reqs, "paged", kv_slots=7 * 32, block_size=32, watermark=0.3)


# ---- the request: the model's context, the watermark and the token budget -------------------
def test_max_model_len_stops_at_the_models_context():
    ids = [[1, 2, 3] * 10]
    assert (
        vllm_request.make_request(ids, 4, kv_blocks=300)["max_model_len"]
        == vllm_request.MODEL_CONTEXT
        == 8192
    )
    assert (
        vllm_request.make_request(ids, 4, kv_blocks=8)["max_model_len"] == 7 * 32
    )  # the pool, below it
    with pytest.raises(ValueError, match="max_model_len=9000 is longer than the model's context"):
        vllm_request.make_request(ids, 4, kv_blocks=300, max_model_len=9000)


def test_the_model_holds_the_context_the_adapter_assumes(model):
    assert model.config.context_length == vllm_request.MODEL_CONTEXT


def test_the_watermark_and_the_token_budget_join_the_request_only_where_given():
    ids = [[1, 2, 3] * 10]
    plain = vllm_request.make_request(ids, 4, kv_blocks=8)
    assert "watermark" not in plain and "max_num_batched_tokens" not in plain
    given = vllm_request.make_request(
        ids, 4, kv_blocks=8, watermark=0.25, max_num_batched_tokens=64
    )
    assert given == plain | {"watermark": 0.25, "max_num_batched_tokens": 64}
    for bad in (1.0, -0.1, "0.2", True):
        with pytest.raises(ValueError, match="watermark must be a number in \\[0, 1\\)"):
            vllm_request.make_request(ids, 4, kv_blocks=8, watermark=bad)
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        vllm_request.make_request(ids, 4, kv_blocks=8, max_num_batched_tokens=0)


def test_a_resumed_requests_cache_hits_are_counted_apart(monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "en")
    run = run_recorded(PREEMPTED)
    assert run.preemptions > 0 and run.prefix_caching
    resumed = [
        (t, i, hits[i])
        for t, (res, hits) in enumerate(zip(run.resumed, run.cached_tokens, strict=True))
        for i in res
    ]
    assert resumed and all(n % run.block_size == 0 for _, _, n in resumed)  # full blocks only
    assert run.resumed_cached_tokens == sum(n for _, _, n in resumed) > 0
    for t, i, n in resumed:  # the step computes the rest after the hit
        ends = {r: k for r, _, k in run.trace[t].layout.tables}
        assert ends[i] == n + run.num_scheduled_tokens[t][i]
    # vLLM's prefix_cache_hits counts first admissions only; so does cached_prompt_tokens
    assert run.cached_prompt_tokens == run.metrics["vllm:prefix_cache_hits"]
    line = summary_line(run)
    assert f"{run.resumed_cached_tokens} more found cached by requests resumed" in line
    assert "resumed" not in summary_line(run_recorded(PREFIX))


def summary_line(run) -> str:
    from paged.engines import summary

    return summary.cached_tokens(run.cached_prompt_tokens, run, sum(run.prompt_lens))
