"""A vLLM run in the course's shapes: `EngineResult`, made from the child's JSON, live or recorded.

Read from vLLM's objects (see `vllm_child.py` for where each comes from), per step: the admitted,
resumed and preempted ids, each admitted request's `num_computed_tokens` at admission (its prefix
cache hit), the tokens scheduled per request, `Scheduler.running` in order, the number waiting
(`Scheduler.get_request_counts()`: waiting requests, those holding KV blocks included), the
finished ids, every running request's block table and `num_computed_tokens`, and
`BlockPool.get_num_free_blocks()`; per request: its new token ids and `RequestOutput.
num_cached_tokens`; per run: vLLM's effective settings, class names, metrics and timings.
Derived here, from those: each step's `Usage` (the paper's Fig. 2 categories over the distinct
blocks the block tables hold), `num_running` (the length of `running`), `peak_batch` (most
requests scheduled in one step), `preemptions` (preempted ids counted), `cached_prompt_tokens`
(the sum of `num_cached_tokens`: prompt tokens found cached at each request's first admission,
what `vllm:prefix_cache_hits` counts) and `resumed_cached_tokens` (tokens found cached by
requests resumed after a preemption, which vLLM counts apart and `cached_prompt_tokens` leaves
out). Kept as recorded: `num_cached_tokens` (per prompt) and the request's `cache_salts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..text import msg
from ..trace import PagedLayout, StepRecord, Usage
from .vllm_request import NUM_NULL_BLOCKS


@dataclass(frozen=True)
class EngineResult:
    """A real engine's run, in the course's shapes (`paged.trace.StepRecord` per engine step)."""

    tokens: list[list[int]]  # new token ids per prompt, in prompt order (EOS kept when it came)
    trace: tuple[StepRecord, ...]  # layout = every running request's vLLM block table
    num_free_blocks: tuple[int, ...]  # BlockPool.get_num_free_blocks() at each step's end
    resumed: tuple[tuple[int, ...], ...]  # per step: the admitted ids that had been preempted
    cached_tokens: tuple[dict, ...]  # per step: {admitted prompt index: tokens found cached}
    num_scheduled_tokens: tuple[dict, ...]  # per step: {prompt index: tokens computed}
    prompt_lens: list[int]
    kv_blocks: int  # vLLM's num_gpu_blocks, its null block included
    block_size: int
    prefix_caching: bool
    peak_batch: int  # most requests scheduled in one step
    preemptions: int
    cached_prompt_tokens: int  # prompt tokens found cached at first admission, all requests
    resumed_cached_tokens: int  # tokens found cached again when resumed after a preemption
    eos_token_id: int
    engine: str
    version: str
    source: str  # "live" or "recorded"
    machine: dict = field(default_factory=dict)  # cpu, cores, os: where it ran
    date: str = ""
    versions: dict = field(default_factory=dict)  # vllm, torch, transformers
    config: dict = field(default_factory=dict)  # vLLM's effective scheduler settings
    objects: dict = field(default_factory=dict)  # vLLM's classes: module paths, block fields
    metrics: dict = field(default_factory=dict)  # llm.get_metrics(): preemptions, prefix hits
    seconds: dict = field(default_factory=dict)  # engine start, generation (MEASURED, there)
    # per prompt: RequestOutput.num_cached_tokens (prompt tokens cached at first admission)
    num_cached_tokens: tuple[int, ...] = ()
    cache_salts: tuple = ()  # per prompt, the salt it was sent with (None: none); () no salts
    # per step: seconds of the engine core's model run (MEASURED there; () in older recordings)
    step_seconds: tuple[float, ...] = ()
    first_token_step: dict = field(default_factory=dict)  # prompt index -> step of its 1st token

    @property
    def steps(self) -> int:
        return len(self.trace)

    @property
    def num_usable_blocks(self) -> int:
        return self.kv_blocks - NUM_NULL_BLOCKS

    @property
    def tokens_per_s(self) -> float:
        """New tokens per second of generation (MEASURED where the run was made)."""
        return sum(map(len, self.tokens)) / self.seconds["generate"]

    def time_to_first_token(self, i: int) -> float:
        """Seconds of the model run that sampled prompt `i`'s first token (MEASURED; the course's
        `paged.model.tenants` times its own steps the same way)."""
        if not self.step_seconds:
            raise ValueError(f"this {self.source} run has no step times (recorded before them)")
        return self.step_seconds[self.first_token_step[i]]


def _usage(tables, block_size: int, final_lens: list[int], usable: int) -> Usage:
    """Fig. 2's categories over distinct blocks (a prefix-cached block is counted once)."""
    filled: dict[int, int] = {}
    reserved = 0
    for req, table, n in tables:
        for j, b in enumerate(table):
            filled[b] = max(filled.get(b, 0), min(block_size, max(n - j * block_size, 0)))
        reserved += min(len(table) * block_size - n, max(final_lens[req] - n, 0))
    held, tokens = len(filled) * block_size, sum(filled.values())
    reserved = min(reserved, held - tokens)
    return Usage(tokens, reserved, held - tokens - reserved, usable * block_size - held)


def from_record(rec: dict, source: str) -> EngineResult:
    """The course's shapes from the child's JSON (live, or as a recording keeps it)."""
    request, r = rec["request"], rec["result"]
    bs, kv_blocks = request["block_size"], request["kv_blocks"]
    prompt_lens = [len(p) for p in request["prompt_token_ids"]]
    final_lens = [n + request["max_new_tokens"] for n in prompt_lens]
    null = (r["objects"]["null_block_id"],)
    trace = []
    for t, s in enumerate(r["steps"]):
        tables = tuple(
            (i, tuple(s["block_tables"][str(i)]), s["num_computed_tokens"][str(i)])
            for i in s["running"]
        )
        trace.append(
            StepRecord(
                step=t,
                usage=_usage(tables, bs, final_lens, kv_blocks - NUM_NULL_BLOCKS),
                num_running=len(s["running"]),
                num_waiting=s["num_waiting"],
                admitted=tuple(s["admitted"]),
                preempted=tuple(s["preempted"]),
                finished=tuple(s["finished"]),
                layout=PagedLayout(kv_blocks, bs, tables, null),
            )
        )
    steps = r["steps"]
    cached = tuple({int(k): n for k, n in s["cached_tokens"].items()} for s in steps)
    return EngineResult(
        tokens=[list(t) for t in r["tokens"]],
        trace=tuple(trace),
        num_free_blocks=tuple(s["num_free_blocks"] for s in steps),
        resumed=tuple(tuple(s["resumed"]) for s in steps),
        cached_tokens=cached,
        num_scheduled_tokens=tuple(
            {int(k): v for k, v in s["num_scheduled_tokens"].items()} for s in steps
        ),
        prompt_lens=prompt_lens,
        kv_blocks=kv_blocks,
        block_size=bs,
        prefix_caching=request["prefix_caching"],
        peak_batch=max((len(s["num_scheduled_tokens"]) for s in steps), default=0),
        preemptions=sum(len(s["preempted"]) for s in steps),
        cached_prompt_tokens=sum(r["num_cached_tokens"]),
        resumed_cached_tokens=sum(
            n[i] for n, s in zip(cached, steps, strict=True) for i in s["resumed"]
        ),
        eos_token_id=r["eos_token_id"],
        engine="vLLM",
        version=r["versions"]["vllm"],
        source=source,
        machine=r["machine"],
        date=r["date"],
        versions=r["versions"],
        config=r["config"],
        objects=r["objects"],
        metrics=r["metrics"],
        seconds={
            "engine_start": r["engine_seconds"],
            "generate": r["generate_seconds"],
            "peak_rss_mib": r["peak_rss_mib"],
        },
        num_cached_tokens=tuple(r["num_cached_tokens"]),
        cache_salts=tuple(request.get("cache_salts") or ()),
        step_seconds=tuple(s["seconds"] for s in steps) if steps and "seconds" in steps[0] else (),
        first_token_step={i: t for t, s in enumerate(steps) for i in s.get("first_token", ())},
    )


LIVE = msg(
    "live: vLLM {version} ran here, now",
    "직접 실행: 지금 이 기계에서 실행한 vLLM {version}",
)
RECORDED = msg(
    "recorded: vLLM {version} is not installed here (`make vllm-venv`), so this is its run of the "
    "same request on {date}, {cpu} ({cores} cores), torch {torch}",
    "기록본: 여기에는 vLLM {version} 미설치(`make vllm-venv`). {date}에 "
    "{cpu}(코어 {cores}개), torch {torch}에서 같은 요청을 실행한 기록을 읽음",
)


def describe_source(run: EngineResult) -> str:
    """Where `run` comes from: this machine now, or a recording (its date, machine, versions)."""
    if run.source == "live":
        return LIVE.format(version=run.version)
    m, v = run.machine, run.versions
    return RECORDED.format(
        version=run.version,
        date=run.date,
        cpu=m.get("cpu", "?"),
        cores=m.get("cores", "?"),
        torch=v.get("torch", "?"),
    )
