"""vLLM's recorded runs, and the course's scheduler fed the same requests (tests' helpers).

`run_recorded(name)` loads a recording through `vllm.generate` (no vLLM needed); `replay(name)`
runs the course's scheduler (`rules="vllm-v1"`, the recorded pool, caching and watermark) on the
recorded request with vLLM's sampled tokens, step by step; `as_result` puts a replay in the shape
`paged.engines.compare` reads.
"""

from __future__ import annotations

from types import SimpleNamespace

from paged.engines import vllm as V
from paged.engines import vllm_recordings, vllm_result
from paged.scheduler import Scheduler
from paged.workloads import Request

# generate()'s keyword arguments a recorded request may hold (absent ones: their defaults)
OPTIONS = (
    *("kv_blocks", "block_size", "prefix_caching", "max_num_seqs", "max_model_len"),
    *("cache_salts", "watermark", "max_num_batched_tokens"),
)


def options(request: dict) -> dict:
    """generate()'s keyword arguments for a recorded request."""
    return {k: request[k] for k in OPTIONS if k in request}


def run_recorded(name: str) -> vllm_result.EngineResult:
    q = vllm_recordings.recording(name)["request"]
    return V.generate(q["prompt_token_ids"], q["max_new_tokens"], live=False, **options(q))


def replay(name: str, **course):
    """The course's scheduler fed the recorded request and vLLM's sampled tokens: per step its
    record, free blocks and {admitted: cached tokens}; the scheduler; vLLM's run. `course`
    overrides the course's options (a watermark vLLM did not run with, say)."""
    q, engine = vllm_recordings.recording(name)["request"], run_recorded(name)
    salts = q.get("cache_salts") or [None] * len(q["prompt_token_ids"])
    reqs = [
        Request(i, len(ids), q["max_new_tokens"], 0.0, tuple(ids), salts[i])
        for i, ids in enumerate(q["prompt_token_ids"])
    ]
    settings = dict(
        kv_slots=q["kv_blocks"] * q["block_size"],  # vLLM's null block is one of them
        block_size=q["block_size"],
        rules="vllm-v1",
        prefix_caching=q["prefix_caching"],
        watermark=q.get("watermark"),
        eos_token_id=engine.eos_token_id,
        record_layout=True,
    )
    s = Scheduler(reqs, "paged", **(settings | course))
    steps = []
    while not s.done:
        step = s.schedule()
        made = {r.req_id: len(s.sequences[r.req_id].output_ids) for r in step.runs if r.sample}
        record = s.postprocess(step, {i: engine.tokens[i][k] for i, k in made.items()})
        cached = {r: s.sequences[r].num_cached_tokens for r in record.admitted}
        steps.append((record, s.allocator.num_free_blocks, cached))
    return s, steps, engine


def as_result(s: Scheduler, steps, engine) -> SimpleNamespace:
    """The replay in the shape `compare` reads."""
    return SimpleNamespace(
        tokens=[q.output_ids for q in s.sequences],
        trace=tuple(r for r, _, _ in steps),
        num_usable_blocks=s.config.usable_blocks,
        peak_batch=max(len(r.layout.tables) for r, _, _ in steps),
        rules="vllm-v1",
    )
