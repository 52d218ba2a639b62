"""SmolLM2-135M-Instruct as a Hugging Face folder, the form vLLM reads: converted once, cached.

vLLM's CPU build cannot read the course's GGUF file (4-bit Q4_1), so transformers converts it once:
it loads the file with `gguf_file=` (dequantizing to fp32), forgets that it came from a quantized
file (the quantizer marker would make vLLM look for a GGUF reader) and saves the model (517 MB of
safetensors) and the tokenizer with its chat template. The folder lives beside the course's own
dequantized weights (`paged.model.weights.cache_dir()`), named by the GGUF file's content and by
`FORMAT`, so a folder made from another file is never used; a new folder replaces older ones.

It is written the way the weights cache is: into a temporary folder that is renamed into place
only after the marker file `paged-convert.json` (the key) has been written last. A conversion
killed half-way leaves a temporary folder that no later run trusts; a folder without the marker,
or with another key, is stale and converted again.

    python -m paged.engines.convert        # prints the folder (about 25 s the first time)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FORMAT = 1  # bump when what the folder holds changes
MARKER = "paged-convert.json"


class ConversionFailed(RuntimeError):
    """transformers could not turn the GGUF file into a Hugging Face folder."""


def _paths(path: Path | None, directory: Path | None) -> tuple[Path, Path, str]:
    from ..model.weights import cache_dir, cache_key, weights_path

    path = weights_path() if path is None else Path(path)
    directory = cache_dir() if directory is None else Path(directory)
    key = f"{cache_key(path)}-f{FORMAT}"
    return path, directory / f"hf-{key}", key


def model_dir(path: Path | None = None, directory: Path | None = None) -> Path:
    """Where the converted folder of the GGUF file at `path` lives (it may not exist yet)."""
    return _paths(path, directory)[1]


def is_converted(folder: Path, key: str) -> bool:
    """True when `folder` is a finished conversion for `key` (its marker, written last, says so)."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return False
    files = marker.get("files", [])
    return (
        marker.get("key") == key
        and all((Path(folder) / f).is_file() for f in files)
        and bool(files)
    )


def _write(path: Path, out: Path, key: str) -> None:
    """Convert the GGUF file at `path` into the empty folder `out` (fp32 weights, tokenizer)."""
    import torch
    from transformers import AutoModelForCausalLM

    from ..model.weights import load_tokenizer

    model = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    )
    # The weights are plain fp32 now; the marker would make readers look for a GGUF quantizer.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    load_tokenizer(path).save_pretrained(out)
    files = sorted(p.name for p in out.iterdir())
    (out / MARKER).write_text(json.dumps({"key": key, "gguf": path.name, "files": files}))


def convert(path: Path | None = None, directory: Path | None = None) -> Path:
    """The converted folder for the GGUF file at `path`, converting it here first if needed."""
    path, final, key = _paths(path, directory)
    if is_converted(final, key):
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        _write(path, tmp, key)
        if final.exists():  # stale or half-made by an older version: replaced, never trusted
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from ..model.weights import prune

    prune(final.parent, "hf-", final.name)
    return final


def ensure_converted(path: Path | None = None, directory: Path | None = None) -> Path:
    """`convert` in a child process (this one keeps none of transformers' half gigabyte)."""
    path, final, key = _paths(path, directory)
    if is_converted(final, key):
        return final
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    args = [
        sys.executable,
        "-m",
        "paged.engines.convert",
        "--gguf",
        str(path),
        "--cache",
        str(final.parent),
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not is_converted(final, key):
        raise ConversionFailed(
            f"converting {path} into {final} failed (exit status {done.returncode}); nothing was "
            f"kept, the next run converts again. Its last words:\n{done.stderr[-2000:]}"
        )
    return final


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gguf", type=Path, default=None, help="the GGUF file")
    parser.add_argument("--cache", type=Path, default=None, help="the cache directory")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(convert(args.gguf, args.cache))


if __name__ == "__main__":
    main()
