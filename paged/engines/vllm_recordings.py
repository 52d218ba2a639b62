"""Recorded vLLM runs (`recordings/*.json`): which one holds a request, and how one is kept.

A recording is the child's JSON beside its request (and the prompts' text, where given), so a
run of the very same request stands in where vLLM's environment is absent; `tests/test_vllm.py`
keeps the recordings equal to live runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from .vllm_process import FIX, live_python, run_child
from .vllm_request import make_request
from .vllm_result import EngineResult, from_record

RECORDINGS = Path(__file__).with_name("recordings")


class RecordingNotFound(LookupError):
    """vLLM is not here to run live, and no recording holds this exact request."""


def recordings() -> list[dict]:
    """Every recorded run: {"name", "prompts", "system", "request", "result"}."""
    return [json.loads(p.read_text()) | {"name": p.stem} for p in sorted(RECORDINGS.glob("*.json"))]


def find_recording(request: dict) -> dict:
    """The recording of exactly `request` (token ids, max_new_tokens, pool, block size, caching,
    salts)."""
    have = recordings()
    for rec in have:
        if rec["request"] == request:
            return rec
    names = ", ".join(
        f"{r['name']} ({len(r['request']['prompt_token_ids'])} prompts, "
        f"kv_blocks={r['request']['kv_blocks']})"
        for r in have
    )
    raise RecordingNotFound(
        f"vLLM's environment is not built and no recording holds this request "
        f"({len(request['prompt_token_ids'])} prompts, max_new_tokens={request['max_new_tokens']}, "
        f"kv_blocks={request['kv_blocks']}, block_size={request['block_size']}, prefix_caching="
        f"{request['prefix_caching']}, cache_salts={request.get('cache_salts')}); recorded: "
        f"{names or 'none'}. To run it live: {FIX}"
    )


def recording(name: str) -> dict:
    """The recorded run called `name`: its prompts, system prompt, request and result."""
    for rec in recordings():
        if rec["name"] == name:
            return rec
    have = ", ".join(r["name"] for r in recordings())
    raise RecordingNotFound(f"no recording named {name!r}; there are: {have}")


def record(
    name: str,
    prompt_token_ids,
    max_new_tokens: int,
    *,
    prompts=None,
    system=None,
    threads: int = 1,
    **options,
) -> EngineResult:
    """Run live and keep the run as recordings/`name`.json (with the prompts' text, if given)."""
    request = make_request(prompt_token_ids, max_new_tokens, **options)
    rec = {
        "prompts": prompts,
        "system": system,
        "request": request,
        "result": run_child(live_python(), request, threads),
    }
    RECORDINGS.mkdir(exist_ok=True)
    (RECORDINGS / f"{name}.json").write_text(json.dumps(rec, separators=(",", ":")) + "\n")
    return from_record(rec, "live")
