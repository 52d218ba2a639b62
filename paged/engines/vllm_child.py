"""Runs vLLM V1 on token ids and records its scheduler step by step (inside `.venv-vllm` only).

    .venv-vllm/bin/python paged/engines/vllm_child.py REQUEST.json RESULT.json

`paged.engines.vllm_process` starts this file as a script with the vLLM environment's Python: it
imports nothing from `paged` (that environment has vLLM, not the course). The engine runs in this
process (VLLM_ENABLE_V1_MULTIPROCESSING=0) with `async_scheduling=False`, so its engine core's
`Scheduler`, `KVCacheManager` and `BlockPool` are plain objects here and every `schedule` is
followed by its own `update_from_output` before the next `schedule` (the pairs this file reads).
Everything it needs of them is checked before the first step (`vllm_engine_checks`, a sibling
file it imports as a script): the engine core's attributes and the fields of vLLM's classes each
step reads; a missing one stops the run at once, named, instead of in the middle of it. `Scheduler.schedule` and
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

import json
import os
import platform
import resource
import sys
import time

from vllm_engine_checks import check_engine, describe  # a sibling: this folder is sys.path[0]


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


def build(req: dict):
    """vLLM's `LLM` on the request's pool: exactly `kv_blocks` blocks, fp32, in this process;
    and the seconds it took."""
    from vllm import LLM

    with open(os.path.join(req["model_dir"], "config.json")) as f:
        hf = json.load(f)
    head_dim = hf.get("head_dim") or hf["hidden_size"] // hf["num_attention_heads"]
    # K and V, fp32, every layer: exactly `kv_blocks` blocks (num_gpu_blocks_override fixes it).
    block_bytes = 2 * hf["num_hidden_layers"] * hf["num_key_value_heads"] * head_dim * 4
    block_bytes *= req["block_size"]
    start = time.perf_counter()
    llm = LLM(
        model=req["model_dir"],
        tokenizer=req["model_dir"],
        dtype="float32",
        seed=0,
        block_size=req["block_size"],
        num_gpu_blocks_override=req["kv_blocks"],
        kv_cache_memory_bytes=req["kv_blocks"] * block_bytes,
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
    return llm, time.perf_counter() - start


class Recorder:
    """Wraps a scheduler's `add_request`, `schedule` and `update_from_output`: each engine step
    leaves one record in `steps` (module docstring), ids mapped to prompt indices."""

    def __init__(self, sched, report):
        self.sched, self.kvm, self.report = sched, sched.kv_cache_manager, report
        self.index: dict[str, int] = {}  # vLLM's request id -> prompt index
        self.steps: list[dict] = []
        self.made: dict[str, int] = {}  # request id -> new tokens so far (for the progress bar)
        self.scheduled_at = 0.0  # when the last `schedule` returned
        self._add, self._schedule = sched.add_request, sched.schedule
        self._update = sched.update_from_output
        sched.add_request, sched.schedule = self.add_request, self.schedule
        sched.update_from_output = self.update

    def add_request(self, request):
        self.index.setdefault(request.request_id, len(self.index))
        return self._add(request)

    def schedule(self, *args, **kwargs):
        sched, index = self.sched, self.index
        before = [r.request_id for r in sched.running]
        out = self._schedule(*args, **kwargs)
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
        self.steps.append(
            {
                "admitted": [index[i] for i in admitted],
                "resumed": [index[i] for i in admitted if i in resumed],
                "cached_tokens": {index[i]: hits[i] for i in admitted},
                "preempted": [index[i] for i in preempted],
                "num_scheduled_tokens": {index[i]: n for i, n in out.num_scheduled_tokens.items()},
            }
        )
        self.scheduled_at = time.perf_counter()
        return out

    def update(self, scheduler_output, model_output, *args, **kwargs):
        sched, index, made = self.sched, self.index, self.made
        seconds = time.perf_counter() - self.scheduled_at  # the model ran in between
        stepped = list(sched.running)  # the objects outlive the step, finished or not
        result = self._update(scheduler_output, model_output, *args, **kwargs)
        first = [
            r.request_id for r in stepped if not made.get(r.request_id) and r.num_output_tokens
        ]
        made.update((r.request_id, r.num_output_tokens) for r in stepped)
        self.report(f"tokens {sum(made.values())}")
        running = [r.request_id for r in sched.running]
        self.steps[-1].update(
            running=[index[i] for i in running],
            num_waiting=sched.get_request_counts()[1],  # waiting + kv_holding_waiting
            finished=sorted(index[i] for i in sched.finished_req_ids if i in index),
            block_tables={index[i]: list(self.kvm.get_block_ids(i)[0]) for i in running},
            num_computed_tokens={index[i]: sched.requests[i].num_computed_tokens for i in running},
            num_free_blocks=self.kvm.block_pool.get_num_free_blocks(),
            first_token=[index[i] for i in first],
            seconds=seconds,
        )
        return result


def answer(llm, req: dict):
    """vLLM's greedy answers to the request's prompts (one `generate`, or one per prompt with
    `one_at_a_time`), and the seconds they took."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

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
    return outputs, time.perf_counter() - start


def run(req: dict) -> dict:
    """The child's whole run: vLLM built and checked, the prompts answered step by step, and
    the result (tokens, steps, vLLM's counts, objects, settings, versions, machine, times)."""
    import torch
    import transformers
    import vllm  # .venv-vllm's (the Makefile's VLLM_SPEC), never a dependency of `paged`

    report = reporter()
    report("start 1")
    llm, engine_seconds = build(req)
    report("start 2")
    core = llm.llm_engine.engine_core.engine_core
    config = check_engine(core, vllm.__version__)  # before the first step, not after the run
    sched = core.scheduler
    kvm, pool = sched.kv_cache_manager, sched.kv_cache_manager.block_pool
    recorder = Recorder(sched, report)
    outputs, generate_seconds = answer(llm, req)
    wanted = ("vllm:num_preemptions", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries")
    metrics = {m.name: getattr(m, "value", None) for m in llm.get_metrics() if m.name in wanted}
    block = pool.blocks[1]
    return {
        "tokens": [list(o.outputs[0].token_ids) for o in outputs],
        "eos_token_id": llm.get_tokenizer().eos_token_id,
        "num_cached_tokens": [o.num_cached_tokens or 0 for o in outputs],
        "steps": recorder.steps,
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
