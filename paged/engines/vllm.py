"""vLLM V1 on the course's model, handing back the course's own trace: live, or from a recording.

    from paged.engines import vllm
    run = vllm.generate(prompt_token_ids, 48, kv_blocks=32, block_size=32)
    run.tokens, run.trace, run.peak_batch, run.preemptions, run.source   # "live" or "recorded"

vLLM pins its own torch, so it lives in its own environment (`make vllm-venv` builds
`.venv-vllm`; `$PAGED_VLLM_PYTHON` names another Python) and runs in a child process
(`vllm_child.py`) on SmolLM2 converted once into a Hugging Face folder (`convert.py`). This module
imports no vLLM. Where that environment is absent, a recorded run (`recordings/*.json`) of the very
same request stands in; a test keeps the recordings equal to live runs.

The pool, counted as the course counts it: vLLM's pool has `kv_blocks` blocks of `block_size`
slots, and block 0 is its null block, never handed to a request. So `kv_blocks=32` leaves 31
usable blocks, the pool of `paged.model.generate(..., block_size=32, kv_slots=31 * 32)`.

Read from vLLM's objects in each step (see `vllm_child.py`): admitted, resumed and preempted ids,
tokens scheduled, `Scheduler.running` in order, the number waiting, finished ids, every running
request's block table and `num_computed_tokens`, `BlockPool.get_num_free_blocks()`, and the new
token ids and `num_cached_tokens` of every request. Derived here: each step's `Usage` (the paper's
Fig. 2 categories over the distinct blocks the block tables hold), `peak_batch` (most requests
scheduled in one step), `preemptions` (preempted ids counted), `cached_prompt_tokens` (the sum of
`num_cached_tokens`).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import require_int
from ..model.errors import KVBudgetTooSmall, PromptTooLong
from ..paging import num_blocks_for
from ..text import msg
from ..trace import PagedLayout, StepRecord, Usage

ROOT = Path(__file__).resolve().parents[2]  # the checkout, where `make vllm-venv` puts .venv-vllm
CHILD = Path(__file__).with_name("vllm_child.py")
RECORDINGS = Path(__file__).with_name("recordings")
FIX = "`make vllm-venv` builds it (a few minutes, 3.4 GB)"
BLOCK_MULTIPLE = 32  # vLLM's CPU attention takes block sizes that are multiples of 32
NUM_NULL_BLOCKS = 1  # block 0: vLLM's null block


class VLLMNotFound(FileNotFoundError):
    """No vLLM environment: `.venv-vllm` is not built, or `$PAGED_VLLM_PYTHON` is bad."""


class RecordingNotFound(LookupError):
    """vLLM is not here to run live, and no recording holds this exact request."""


class EngineFailed(RuntimeError):
    """The vLLM child process exited without a result."""


@dataclass(frozen=True)
class EngineResult:
    """A real engine's run, in the course's shapes (`paged.trace.StepRecord` per engine step)."""

    tokens: list[list[int]]  # new token ids per prompt, in prompt order (EOS kept when it came)
    trace: tuple[StepRecord, ...]  # layout = every running request's vLLM block table
    num_free_blocks: tuple[int, ...]  # BlockPool.get_num_free_blocks() at each step's end
    resumed: tuple[tuple[int, ...], ...]  # per step: the admitted ids that had been preempted
    num_scheduled_tokens: tuple[dict, ...]  # per step: {prompt index: tokens computed}
    prompt_lens: list[int]
    kv_blocks: int  # vLLM's num_gpu_blocks, its null block included
    block_size: int
    prefix_caching: bool
    peak_batch: int  # most requests scheduled in one step
    preemptions: int
    cached_prompt_tokens: int  # prompt tokens served from the prefix cache, all requests
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


def vllm_python() -> Path | None:
    """The vLLM environment's Python: `$PAGED_VLLM_PYTHON`, else .venv-vllm's, else None."""
    override = os.environ.get("PAGED_VLLM_PYTHON")
    if override:
        path = Path(override).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise VLLMNotFound(
                f"PAGED_VLLM_PYTHON={override!r} is not an executable Python; "
                f"unset it to use .venv-vllm, which {FIX}"
            )
        return path
    path = ROOT / ".venv-vllm" / "bin" / "python"
    return path if (path.parent.parent / ".installed-stamp").is_file() else None


def _live_python() -> Path:
    python = vllm_python()
    if python is None:
        raise VLLMNotFound(
            f"live=True needs vLLM's environment, and {ROOT / '.venv-vllm'} is not "
            f"built: {FIX}; or pass live=None to use a recording"
        )
    return python


def check_request(ids, max_new_tokens, kv_blocks, block_size, max_model_len) -> dict:
    """The request as the child and the recordings take it; every bad value raises here."""
    ok = isinstance(ids, list | tuple) and len(ids) > 0
    if not ok or not all(
        isinstance(p, list | tuple) and p and all(type(t) is int for t in p) for p in ids
    ):
        raise ValueError(
            f"prompt_token_ids must be a non-empty list of non-empty lists of "
            f"int ids (paged.model.prompt_ids), got {ids!r:.60}"
        )
    max_new_tokens = require_int("max_new_tokens", max_new_tokens, at_least=1)
    block_size = require_int("block_size", block_size, at_least=1)
    if block_size % BLOCK_MULTIPLE:
        raise ValueError(
            f"block_size={block_size}: vLLM's CPU attention needs a multiple of "
            f"{BLOCK_MULTIPLE}; use 32 or 64"
        )
    kv_blocks = require_int("kv_blocks", kv_blocks, at_least=2)
    usable = kv_blocks - NUM_NULL_BLOCKS
    lens = [len(p) + max_new_tokens for p in ids]
    i = lens.index(max(lens))
    need = num_blocks_for(lens[i], block_size)
    if need > usable:
        raise KVBudgetTooSmall(
            f"kv_blocks={kv_blocks} ({usable} usable: block 0 is vLLM's null block) cannot hold "
            f"prompt {i} alone: {len(ids[i])} + max_new_tokens={max_new_tokens} = {lens[i]} tokens "
            f"need {need} blocks of {block_size}; use kv_blocks >= {need + NUM_NULL_BLOCKS}"
        )
    longest = usable * block_size
    if max_model_len is None:
        max_model_len = longest
    max_model_len = require_int("max_model_len", max_model_len, at_least=1)
    if max_model_len > longest:
        raise ValueError(
            f"max_model_len={max_model_len} is longer than the pool holds: "
            f"({kv_blocks} - 1) x {block_size} = {longest}; lower it or raise "
            "kv_blocks"
        )
    if max_model_len < lens[i]:
        raise PromptTooLong(
            f"prompt {i} + max_new_tokens = {lens[i]} tokens > max_model_len="
            f"{max_model_len}; raise max_model_len"
        )
    sizes = {"kv_blocks": kv_blocks, "block_size": block_size, "max_model_len": max_model_len}
    return {"prompt_token_ids": [list(p) for p in ids], "max_new_tokens": max_new_tokens} | sizes


def make_request(
    prompt_token_ids,
    max_new_tokens,
    *,
    kv_blocks,
    block_size=32,
    prefix_caching=False,
    max_num_seqs=None,
    max_model_len=None,
) -> dict:
    """The request as the child runs it and a recording keeps it (all of `generate`'s checks)."""
    request = check_request(prompt_token_ids, max_new_tokens, kv_blocks, block_size, max_model_len)
    request["prefix_caching"] = bool(prefix_caching)
    request["max_num_seqs"] = (
        None if max_num_seqs is None else require_int("max_num_seqs", max_num_seqs, at_least=1)
    )
    return request


def generate(
    prompt_token_ids: list[list[int]],
    max_new_tokens: int,
    *,
    kv_blocks: int,
    block_size: int = 32,
    prefix_caching: bool = False,
    max_num_seqs: int | None = None,
    max_model_len: int | None = None,
    live: bool | None = None,
    threads: int = 1,
) -> EngineResult:
    """vLLM's greedy answers (fp32) to token-id prompts in a pool of `kv_blocks` blocks.

    kv_blocks: vLLM's whole pool, its null block included (kv_blocks - 1 are usable).
    block_size: a multiple of 32. prefix_caching: vLLM's automatic prefix caching.
    max_num_seqs: vLLM's cap on running requests (None: vLLM's default). max_model_len: None
    means the longest request the pool holds. live: None runs vLLM where its environment is,
    else the matching recording; True insists on vLLM; False on the recording. threads: torch
    threads in the child (1 is fastest on a busy 2-core machine).
    """
    request = make_request(
        prompt_token_ids,
        max_new_tokens,
        kv_blocks=kv_blocks,
        block_size=block_size,
        prefix_caching=prefix_caching,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
    )
    python = _live_python() if live else vllm_python() if live is None else None
    if python is None:
        return from_record(find_recording(request), "recorded")
    return from_record({"request": request, "result": run_child(python, request, threads)}, "live")


def run_child(python: Path, request: dict, threads: int = 1) -> dict:
    """Run `vllm_child.py` with `python` on `request`; its JSON result."""
    import fcntl  # live runs are Linux only, where vLLM's CPU build runs

    from .convert import ensure_converted

    model_dir = ensure_converted()
    # One live engine at a time on this machine: two (e.g. two test workers) would share its
    # cores, its memory and vLLM's caches. The lock is released when the process ends.
    lock = open(model_dir.parent / "vllm-run.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    env = dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        HF_HUB_OFFLINE="1",
        VLLM_ENABLE_V1_MULTIPROCESSING="0",
        TOKENIZERS_PARALLELISM="false",
    )
    with tempfile.TemporaryDirectory(prefix="paged-vllm-") as tmp:
        req, out, log = (Path(tmp) / n for n in ("request.json", "result.json", "child.log"))
        req.write_text(json.dumps(dict(request, model_dir=str(model_dir))))
        with open(log, "w") as f, lock:
            done = subprocess.run(
                [str(python), str(CHILD), str(req), str(out)],
                env=env,
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        if done.returncode != 0 or not out.is_file():
            tail = log.read_text(errors="replace")[-3000:]
            raise EngineFailed(
                f"vLLM ({python}) exited with status {done.returncode} and no "
                f"result; its last words:\n{tail}"
            )
        return json.loads(out.read_text())


def recordings() -> list[dict]:
    """Every recorded run: {"name", "prompts", "system", "request", "result"}."""
    return [json.loads(p.read_text()) | {"name": p.stem} for p in sorted(RECORDINGS.glob("*.json"))]


def find_recording(request: dict) -> dict:
    """The recording of exactly `request` (token ids, max_new_tokens, pool, block size, caching)."""
    have = recordings()
    for rec in have:
        if rec["request"] == request:
            return rec
    names = ", ".join(
        f"{r['name']} ({len(r['request']['prompt_token_ids'])} prompts, "
        f"kv_blocks={r['request']['kv_blocks']})"
        for r in have
    )
    raise RecordingNotFound(
        f"vLLM's environment is not built and no recording holds this request "
        f"({len(request['prompt_token_ids'])} prompts, max_new_tokens={request['max_new_tokens']}, "
        f"kv_blocks={request['kv_blocks']}, block_size={request['block_size']}, prefix_caching="
        f"{request['prefix_caching']}); recorded: {names or 'none'}. To run it live: {FIX}"
    )


def record(
    name: str,
    prompt_token_ids,
    max_new_tokens: int,
    *,
    prompts=None,
    system=None,
    threads: int = 1,
    **options,
) -> EngineResult:
    """Run live and keep the run as recordings/`name`.json (with the prompts' text, if given)."""
    request = make_request(prompt_token_ids, max_new_tokens, **options)
    rec = {
        "prompts": prompts,
        "system": system,
        "request": request,
        "result": run_child(_live_python(), request, threads),
    }
    RECORDINGS.mkdir(exist_ok=True)
    (RECORDINGS / f"{name}.json").write_text(json.dumps(rec, separators=(",", ":")) + "\n")
    return from_record(rec, "live")


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
                layout=PagedLayout(kv_blocks, bs, tables),
            )
        )
    steps = r["steps"]
    return EngineResult(
        tokens=[list(t) for t in r["tokens"]],
        trace=tuple(trace),
        num_free_blocks=tuple(s["num_free_blocks"] for s in steps),
        resumed=tuple(tuple(s["resumed"]) for s in steps),
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
    )


def recording(name: str) -> dict:
    """The recorded run called `name`: its prompts, system prompt, request and result."""
    for rec in recordings():
        if rec["name"] == name:
            return rec
    have = ", ".join(r["name"] for r in recordings())
    raise RecordingNotFound(f"no recording named {name!r}; there are: {have}")


LIVE = msg(
    "live: vLLM {version} ran here, now",
    "실시간: 지금 이 기계에서 실행한 vLLM {version}",
)
RECORDED = msg(
    "recorded: vLLM {version} is not installed here (`make vllm-venv`), so this is its run of the "
    "same request on {date}, {cpu} ({cores} cores), torch {torch}",
    "녹화본: 여기에는 vLLM {version} 미설치(`make vllm-venv`). {date}에 "
    "{cpu}({cores}코어), torch {torch}에서 같은 요청을 실행한 기록을 읽음",
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
