"""A request to vLLM, checked before anything starts: the form the child runs and a recording keeps.

The pool, counted as the course counts it: vLLM's pool has `kv_blocks` blocks of `block_size`
slots, and block 0 is its null block, never handed to a request. So `kv_blocks=32` leaves 31
usable blocks, the pool of `paged.model.generate(..., block_size=32, kv_slots=31 * 32)`.
"""

from __future__ import annotations

from ..errors import require_int
from ..model.errors import KVBudgetTooSmall, PromptTooLong, check_salts
from ..paging import num_blocks_for

BLOCK_MULTIPLE = 32  # vLLM's CPU attention takes block sizes that are multiples of 32
NUM_NULL_BLOCKS = 1  # block 0: vLLM's null block
# The positions SmolLM2-135M-Instruct was trained for (DOCS: its GGUF's llama.context_length,
# the converted folder's max_position_embeddings; tests/test_vllm.py checks it with the model):
# vLLM refuses to start with a longer max_model_len.
MODEL_CONTEXT = 8192


def check_request(ids, max_new_tokens, kv_blocks, block_size, max_model_len) -> dict:
    """The request as the child and the recordings take it; every bad value raises here."""
    ok = isinstance(ids, list | tuple) and len(ids) > 0
    if not ok or not all(
        isinstance(p, list | tuple) and p and all(type(t) is int for t in p) for p in ids
    ):
        raise ValueError(
            f"prompt_token_ids must be a non-empty list of non-empty lists of "
            f"int ids (paged.model.prompt_ids), got {ids!r:.60}"
        )
    max_new_tokens = require_int("max_new_tokens", max_new_tokens, at_least=1)
    block_size = require_int("block_size", block_size, at_least=1)
    if block_size % BLOCK_MULTIPLE:
        raise ValueError(
            f"block_size={block_size}: vLLM's CPU attention needs a multiple of "
            f"{BLOCK_MULTIPLE}; use 32 or 64"
        )
    kv_blocks = require_int("kv_blocks", kv_blocks, at_least=2)
    usable = kv_blocks - NUM_NULL_BLOCKS
    lens = [len(p) + max_new_tokens for p in ids]
    i = lens.index(max(lens))
    need = num_blocks_for(lens[i], block_size)
    if need > usable:
        raise KVBudgetTooSmall(
            f"kv_blocks={kv_blocks} ({usable} usable: block 0 is vLLM's null block) cannot hold "
            f"prompt {i} alone: {len(ids[i])} + max_new_tokens={max_new_tokens} = {lens[i]} tokens "
            f"need {need} blocks of {block_size}; use kv_blocks >= {need + NUM_NULL_BLOCKS}"
        )
    longest = usable * block_size
    if max_model_len is None:
        max_model_len = min(longest, MODEL_CONTEXT)
    max_model_len = require_int("max_model_len", max_model_len, at_least=1)
    if max_model_len > longest:
        raise ValueError(
            f"max_model_len={max_model_len} is longer than the pool holds: "
            f"({kv_blocks} - 1) x {block_size} = {longest}; lower it or raise "
            "kv_blocks"
        )
    if max_model_len > MODEL_CONTEXT:
        raise ValueError(
            f"max_model_len={max_model_len} is longer than the model's context of "
            f"{MODEL_CONTEXT} positions; lower it"
        )
    if max_model_len < lens[i]:
        raise PromptTooLong(
            f"prompt {i} + max_new_tokens = {lens[i]} tokens > max_model_len="
            f"{max_model_len}; raise max_model_len"
        )
    sizes = {"kv_blocks": kv_blocks, "block_size": block_size, "max_model_len": max_model_len}
    return {"prompt_token_ids": [list(p) for p in ids], "max_new_tokens": max_new_tokens} | sizes


def make_request(
    prompt_token_ids,
    max_new_tokens,
    *,
    kv_blocks,
    block_size=32,
    prefix_caching=False,
    max_num_seqs=None,
    max_model_len=None,
    cache_salts=None,
    one_at_a_time=False,
    watermark=None,
    max_num_batched_tokens=None,
) -> dict:
    """The request as the child runs it and a recording keeps it (all of `generate`'s checks).

    `cache_salts` (one str or None per prompt), `one_at_a_time`, `watermark` and
    `max_num_batched_tokens` become part of the request only where given, so a request without
    them is the one recorded before they existed."""
    request = check_request(prompt_token_ids, max_new_tokens, kv_blocks, block_size, max_model_len)
    salts = check_salts(cache_salts, len(request["prompt_token_ids"]))
    request["prefix_caching"] = bool(prefix_caching)
    request["max_num_seqs"] = (
        None if max_num_seqs is None else require_int("max_num_seqs", max_num_seqs, at_least=1)
    )
    if any(salt is not None for salt in salts):
        request["cache_salts"] = salts
    if one_at_a_time:
        request["one_at_a_time"] = True
    if watermark is not None:
        ok = isinstance(watermark, int | float) and not isinstance(watermark, bool)
        if not ok or not 0 <= watermark < 1:
            raise ValueError(f"watermark must be a number in [0, 1), got {watermark!r}")
        request["watermark"] = float(watermark)
    if max_num_batched_tokens is not None:
        request["max_num_batched_tokens"] = require_int(
            "max_num_batched_tokens", max_num_batched_tokens, at_least=1
        )
    return request
