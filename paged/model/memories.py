"""`generate`'s two memories: how each policy checks its options, sizes a pool that lets every
request run at once, and which scheduler policy and options it stands for.

- "paged" (`_Paging`): the scheduler's paging, blocks of `block_size` taken as sequences grow;
  a power-of-two block size where the attention back-end needs one (`AttentionBackend`);
- "max_new_tokens" (`_MaxNewTokens`): one contiguous range per request of prompt +
  max_new_tokens slots, what it may reach (the scheduler's "oracle" rule, the cap being the
  output length); nothing shared, nothing cached.
"""

from __future__ import annotations

from ..errors import require_int
from ..paging import num_blocks_for
from ..scheduler_config import has_null_block
from ..scheduler_options import DEFAULT_WATERMARK


def blocks_for_all(final_lens: list[int], block_size: int) -> int:
    """Blocks that let every request run at once: its blocks plus admission's watermark."""
    need = sum(num_blocks_for(n, block_size) for n in final_lens)
    num_blocks = need
    while num_blocks - int(DEFAULT_WATERMARK * num_blocks) < need:
        num_blocks += 1
    return num_blocks


class _Paging:
    """`policy="paged"`: the scheduler's paging, blocks of `block_size` taken as sequences grow."""

    scheduler_policy = "paged"

    def check(self, block_size: int, share_prefix: bool, attention) -> int:
        block_size = require_int("block_size", block_size, at_least=1)
        if attention.pow2_block_size and (block_size & (block_size - 1) or block_size > 256):
            raise ValueError(f"block_size must be a power of two <= 256 here, got {block_size}")
        return block_size

    def check_caching(self, prefix_caching: bool) -> None:
        pass  # the scheduler's settle checks the rest (a bool, no shared_prefix with it)

    def slots_for_all(self, final_lens: list[int], block_size: int, rules: str) -> int:
        null = has_null_block(rules)  # vLLM's null block is one of the pool's blocks
        return (blocks_for_all(final_lens, block_size) + null) * block_size

    def options(self, block_size: int, shared_prefix: int, rules: str) -> dict:
        shared = dict(shared_prefix=shared_prefix) if shared_prefix else {}
        return dict(block_size=block_size, rules=rules, **shared)


class _MaxNewTokens:
    """`policy="max_new_tokens"`: one contiguous range per request of prompt + max_new_tokens
    slots, what it may reach; the scheduler's "oracle" rule, the cap being the output length."""

    scheduler_policy = "oracle"

    def check(self, block_size: int, share_prefix: bool, attention) -> int:
        if share_prefix:
            raise ValueError(
                "share_prefix=True needs policy 'paged', got 'max_new_tokens': a contiguous "
                "range cannot hold another request's tokens"
            )
        return block_size

    def check_caching(self, prefix_caching: bool) -> None:
        if prefix_caching:
            raise ValueError(
                "prefix_caching=True needs policy 'paged', got 'max_new_tokens': cached blocks "
                "are named whole blocks, and a contiguous range has none"
            )

    def slots_for_all(self, final_lens: list[int], block_size: int, rules: str) -> int:
        return sum(final_lens)

    def options(self, block_size: int, shared_prefix: int, rules: str) -> dict:
        return dict(placement="first_fit", rules=rules)


MEMORIES = {"paged": _Paging(), "max_new_tokens": _MaxNewTokens()}  # generate's policies
POLICIES = tuple(MEMORIES)
