"""vLLM's own environment and the child process that runs it (`vllm_child.py`), from this side.

vLLM pins its own torch, so it lives in its own environment (`make vllm-venv` builds
`.venv-vllm`; `$PAGED_VLLM_PYTHON` names another Python). `run_child` starts `vllm_child.py` by
path with that Python: the request goes in as a JSON file, the result comes back as one, and
the child's output is kept only to quote when it fails. While it runs, the child's progress lines
(a pipe, `$PAGED_PROGRESS_FD`) move two bars in a Jupyter kernel (`paged.progress`): vLLM
starting, then its new tokens. This module imports no vLLM.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..progress import progress
from ..text import msg

ROOT = Path(__file__).resolve().parents[2]  # the checkout, where `make vllm-venv` puts .venv-vllm
CHILD = Path(__file__).with_name("vllm_child.py")
FIX = "`make vllm-venv` builds it (a few minutes, 3.4 GB)"
STARTING = msg("vLLM starting: import, model", "vLLM 시작: 불러오기, 모델")
NEW_TOKENS = msg("vLLM: new tokens", "vLLM: 새 토큰")


class VLLMNotFound(FileNotFoundError):
    """No vLLM environment: `.venv-vllm` is not built, or `$PAGED_VLLM_PYTHON` is bad."""


class EngineFailed(RuntimeError):
    """The vLLM child process exited without a result."""


def vllm_python() -> Path | None:
    """The vLLM environment's Python: `$PAGED_VLLM_PYTHON`, else .venv-vllm's, else None."""
    override = os.environ.get("PAGED_VLLM_PYTHON")
    if override:
        path = Path(override).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise VLLMNotFound(
                f"PAGED_VLLM_PYTHON={override!r} is not an executable Python; "
                f"unset it to use .venv-vllm, which {FIX}"
            )
        return path
    path = ROOT / ".venv-vllm" / "bin" / "python"
    return path if (path.parent.parent / ".installed-stamp").is_file() else None


def live_python() -> Path:
    """The vLLM environment's Python, for a run that must be live; raises VLLMNotFound."""
    python = vllm_python()
    if python is None:
        raise VLLMNotFound(
            f"live=True needs vLLM's environment, and {ROOT / '.venv-vllm'} is not "
            f"built: {FIX}; or pass live=None to use a recording"
        )
    return python


def progress_lines(proc: subprocess.Popen, fd: int) -> Iterator[tuple[str, int]]:
    """(kind, count) from the child's progress pipe `fd` ("start", 1), ("tokens", 96), ...,
    until the pipe closes or the child has ended."""
    buffer = b""
    while True:
        if select.select([fd], [], [], 0.5)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:  # the child closed its end
                return
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                kind, count = line.decode().split()
                yield kind, int(count)
        elif proc.poll() is not None:  # ended, though something of its kept the pipe open
            return


def show_progress(events, num_tokens: int) -> None:
    """Two bars, one after the other: vLLM starting (2 steps), then its new tokens."""
    events, shown = iter(events), 0
    with progress(2, str(STARTING)) as bar:
        for kind, count in events:
            if kind == "tokens":
                break
            bar.update(count - shown)
            shown = count
        else:
            return
    with progress(num_tokens, str(NEW_TOKENS)) as bar:
        bar.update(count)
        shown = count
        for _, count in events:
            bar.update(count - shown)
            shown = count


def run_child(python: Path, request: dict, threads: int = 1) -> dict:
    """Run `vllm_child.py` with `python` on `request`; its JSON result."""
    import fcntl  # live runs are Linux only, where vLLM's CPU build runs

    from .convert import ensure_converted

    model_dir = ensure_converted()
    # One live engine at a time on this machine: two (e.g. two test workers) would share its
    # cores, its memory and vLLM's caches. The lock is released when the process ends.
    lock = open(model_dir.parent / "vllm-run.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    read_end, write_end = os.pipe()
    env = dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        HF_HUB_OFFLINE="1",
        VLLM_ENABLE_V1_MULTIPROCESSING="0",
        TOKENIZERS_PARALLELISM="false",
        PAGED_PROGRESS_FD=str(write_end),
    )
    num_tokens = len(request["prompt_token_ids"]) * request["max_new_tokens"]
    with tempfile.TemporaryDirectory(prefix="paged-vllm-") as tmp:
        req, out, log = (Path(tmp) / n for n in ("request.json", "result.json", "child.log"))
        req.write_text(json.dumps(dict(request, model_dir=str(model_dir))))
        with open(log, "w") as f, lock:
            try:
                child = subprocess.Popen(
                    [str(python), str(CHILD), str(req), str(out)],
                    env=env,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    pass_fds=(write_end,),
                )
            finally:
                os.close(write_end)  # the child holds the only writing end now
            try:
                show_progress(progress_lines(child, read_end), num_tokens)
                returncode = child.wait()
            except BaseException:  # the learner stopped the cell: so does vLLM (as run() does)
                child.kill()
                child.wait()
                raise
            finally:
                os.close(read_end)
        if returncode != 0 or not out.is_file():
            tail = log.read_text(errors="replace")[-3000:]
            raise EngineFailed(
                f"vLLM ({python}) exited with status {returncode} and no "
                f"result; its last words:\n{tail}"
            )
        return json.loads(out.read_text())
