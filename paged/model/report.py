"""Reading a real-model run (chapter 10): where it ran, its batch over time, and an oracle.

A MEASURED number means little without the machine it was measured on: `environment` names the
CPU (and the GPU, when the model is on one), the torch threads and the library versions in one
line. `batch_over_time` and `mean_batch` read a `GenerateResult`'s trace. `admitted_at_start`
asks the scheduler alone how many requests, queued at once, its first step admits: the
admission rule on the prompts' lengths, nothing computed (SIMULATED), to see what the output cap
and the budget do to the gap between paging and contiguous reservation without rerunning the
model. `transformers_model` and `transformers_greedy` are the independent check: transformers'
own Llama, loaded from the same GGUF file, decoding greedily without any paged cache.
"""

from __future__ import annotations

import contextlib
import statistics
from unittest import mock

import torch

from ..progress import progress
from ..scheduler import Scheduler
from ..text import msg
from ..workloads import Request
from .generate import GenerateResult, scheduler_options
from .llama import Llama
from .memories import POLICIES
from .timing import machine, peak_rss_mib
from .weights import weights_path


def environment(model: Llama) -> str:
    """The machine a MEASURED number comes from: the GPU if the model is on one, CPU, versions."""
    line = machine()
    if model.device.type == "cuda":
        line = f"{torch.cuda.get_device_name(model.device)} (CUDA {torch.version.cuda}); {line}"
    return line


def peak_memory_gib() -> float:
    """Peak resident memory of this process so far, in GiB."""
    return peak_rss_mib() / 1024


def batch_over_time(result: GenerateResult) -> list[int]:
    """Requests holding KV cache at the end of each scheduler step (admitted ones included)."""
    return [s.num_running for s in result.trace]


def mean_batch(result: GenerateResult) -> float:
    """Requests per decode step, averaged over the run's decode steps."""
    sizes = [b for b, _ in result.decode_seconds]
    return sum(sizes) / len(sizes) if sizes else 0.0


def decode_ms_by_batch(*results: GenerateResult) -> dict[int, float]:
    """Median milliseconds of one decode step, by batch size, over the decode steps of `results`
    (MEASURED: wall time on this machine)."""
    by_batch: dict[int, list[float]] = {}
    for result in results:
        for batch, seconds in result.decode_seconds:
            by_batch.setdefault(batch, []).append(seconds)
    return {b: 1000 * statistics.median(s) for b, s in sorted(by_batch.items())}


def admitted_at_start(
    prompt_lens: list[int],
    max_new_tokens: int,
    kv_slots: int,
    policy: str = "paged",
    block_size: int = 16,
    max_seq_len: int = 8192,
) -> int:
    """How many of these requests, all queued at once, the first step admits (`generate`'s rules).

    "paged": each takes the blocks its prompt fills, keeping the watermark free; "max_new_tokens":
    each reserves prompt_len + max_new_tokens contiguous slots. Only the scheduler runs (SIMULATED).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if isinstance(prompt_lens, int) or not prompt_lens:
        raise ValueError(f"prompt_lens must be a non-empty list of lengths, got {prompt_lens!r}")
    requests = [Request(i, n, max_new_tokens) for i, n in enumerate(prompt_lens)]
    sched_policy, options = scheduler_options(policy, block_size)
    scheduler = Scheduler(
        requests, sched_policy, kv_slots=kv_slots, max_seq_len=max_seq_len, **options
    )
    return len(scheduler.step().admitted)


def transformers_model(device: str = "cpu"):
    """transformers' own Llama from the same GGUF file, in fp32: the course's bar counts the
    tensors it dequantizes (transformers' own bars print text that changes every run)."""
    from transformers import AutoModelForCausalLM
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging

    logging.disable_progress_bar()
    ours = (  # the GGUF reader calls tqdm directly
        mock.patch.object(gguf_utils, "tqdm", _dequantizing)
        if hasattr(gguf_utils, "tqdm")
        else contextlib.nullcontext()
    )
    path = weights_path()
    with ours:
        hf = AutoModelForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, dtype=torch.float32
        )
    return hf.to(device).eval()


DEQUANTIZING = msg("transformers: GGUF tensors dequantized", "transformers: 양자화를 푼 GGUF 텐서")


def _dequantizing(iterable, *args, **kwargs):
    """Stands in for tqdm in transformers' GGUF reader: the items, and the course's bar."""
    items = list(iterable)
    with progress(len(items), DEQUANTIZING.format()) as bar:
        for item in items:
            yield item
            bar.update(1)


def transformers_greedy(hf_model, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    """transformers' greedy `generate` on one prompt: its new token ids (EOS kept, as ours)."""
    device = next(hf_model.parameters()).device
    ids = torch.tensor([prompt_ids], device=device)
    with torch.no_grad():
        out = hf_model.generate(
            ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=max_new_tokens
        )
    return out[0, len(prompt_ids) :].tolist()
