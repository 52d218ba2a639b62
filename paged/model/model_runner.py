"""The real model runs what the course's scheduler schedules: schedule, run, postprocess.

The scheduler (`paged.scheduler.Scheduler`) decides who runs and which slots each request
holds, exactly as it does when it simulates, and hands out each phase of a step as data
(`paged.step.Step`). `ModelRunner.run` computes it on SmolLM2: the shared prefix first (once),
then the copy-on-write block copies, then one forward pass over every sequence's new positions,
writing their K and V into the slots of its block table; it returns the next token (greedy,
argmax) of each run that samples. `serve` is the whole loop:
    step = scheduler.schedule(); tokens = runner.run(step); scheduler.postprocess(step, tokens)
Nothing flows back except those tokens: the runner never reads the scheduler, and the scheduler
never sees the model (nano-vllm's shape). Greedy sampling, so a run is deterministic and
comparable with transformers'.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..progress import progress
from ..scheduler import Scheduler
from ..step import SeqRun, Step
from ..text import msg
from ..trace import StepRecord
from .attention_backend import AttentionBackend
from .cache import Chunk, KVCache, run_chunks, slots_of
from .llama import Llama


def _chunk(run: SeqRun) -> Chunk:
    return Chunk(list(run.token_ids), run.start, list(run.block_table))


class ModelRunner:
    """Computes a scheduler's steps on `model`, with K and V in `cache`."""

    def __init__(self, model: Llama, cache: KVCache, attention: AttentionBackend, slots=slots_of):
        """`slots`: the slot mapping of a run's new tokens (`cache.slots_of`, or a learner's)."""
        self.model, self.cache, self.attention, self.slots = model, cache, attention, slots

    def run(self, step: Step) -> dict:
        """Compute `step`; return {req_id: next token id} for each run that samples."""
        model, cache, attention, slots = self.model, self.cache, self.attention, self.slots
        if step.prefix is not None:  # the shared prefix's K and V, once, into its own blocks
            run_chunks(model, cache, attention, [_chunk(step.prefix)], slots)
        if step.copies:
            cache.copy_blocks(list(step.copies))
        if not step.runs:
            return {}
        logits = run_chunks(model, cache, attention, [_chunk(r) for r in step.runs], slots)
        next_ids = logits.argmax(dim=-1).tolist()
        return {r.req_id: t for r, t in zip(step.runs, next_ids, strict=True) if r.sample}


ANSWERED = msg("{policy}: requests answered", "{policy}: 답을 마친 요청")


@dataclass(frozen=True)
class Served:
    """What serving a whole run left: the trace, and what the computing side counted."""

    trace: tuple[StepRecord, ...]
    peak_batch: int  # most requests holding KV cache while a phase computed
    copies: int  # blocks copied on write
    decode_seconds: tuple[tuple[int, float], ...]  # (batch size, seconds) of each decode phase
    seconds: float  # wall time of the whole run


def serve(scheduler: Scheduler, runner: ModelRunner, policy: str) -> Served:
    """Schedule, run, postprocess until every request has finished (`policy` labels the bar)."""
    trace, decode_seconds, peak, copies = [], [], 0, 0
    start = time.perf_counter()
    with progress(len(scheduler.sequences), ANSWERED.format(policy=policy)) as bar:
        while not scheduler.done:
            step = scheduler.schedule()
            begin = time.perf_counter()
            tokens = runner.run(step)
            if step.phase == "decode" and step.runs:
                decode_seconds.append((len(step.runs), time.perf_counter() - begin))
            if step.runs:
                peak = max(peak, step.num_running)
            copies += len(step.copies)
            record = scheduler.postprocess(step, tokens)
            if record is not None:
                trace.append(record)
                bar.update(len(record.finished))
    seconds = time.perf_counter() - start
    return Served(tuple(trace), peak, copies, tuple(decode_seconds), seconds)
