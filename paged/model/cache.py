"""The KV cache of the real model, and one forward pass over chunks of sequences that live in it.

`KVCache` is the memory the allocators hand out: for every layer, K and V tensors of `num_slots`
slots, viewed as (num_blocks, block_size, num_kv_heads, head_dim) for attention. Slot s is
token s % block_size of physical block s // block_size (the paper's slot mapping). A contiguous
arena is the same cache viewed with block_size 1: its "block table" lists one slot per token.

`run_chunks` is one model call. Each `Chunk` is a run of new tokens of one sequence (a whole
prompt in a prefill, a single token in a decode step) with the block table that covers the
sequence up to its last new token. Every layer writes the new tokens' K and V to their slots,
then reads the whole sequence back through the block table (`paged.model.attention_backend`): so the
tokens a sequence already held (generated earlier, or a prefix shared with another sequence)
are never recomputed, and where they live in the cache does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .attention_backend import AttentionBackend
from .llama import Llama


@dataclass(frozen=True)
class Chunk:
    """New tokens at positions start .. start + len(token_ids) - 1 of one sequence."""

    token_ids: list[int]
    start: int  # tokens of this sequence already in the cache
    block_table: list[int]  # physical blocks covering positions 0 .. start + len - 1

    @property
    def seq_len(self) -> int:
        return self.start + len(self.token_ids)


class KVCache:
    """K and V for every layer: (num_layers, num_slots, num_kv_heads, head_dim) each."""

    def __init__(self, model: Llama, num_slots: int, block_size: int):
        if num_slots % block_size:
            raise ValueError(f"num_slots {num_slots} is not a multiple of block_size {block_size}")
        c = model.config
        shape = (c.num_layers, num_slots, c.num_kv_heads, c.head_dim)
        self.k = torch.zeros(shape, device=model.device, dtype=model.dtype)
        self.v = torch.zeros(shape, device=model.device, dtype=model.dtype)
        self.block_size = block_size

    def caches(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One layer's K and V as (num_blocks, block_size, num_kv_heads, head_dim) views."""
        shape = (-1, self.block_size, *self.k.shape[2:])
        return self.k[layer].view(shape), self.v[layer].view(shape)

    def write(self, layer: int, slot_mapping: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        """Store new tokens' K and V, (num_tokens, num_kv_heads, head_dim), at their slots."""
        self.k[layer].index_copy_(0, slot_mapping, k)
        self.v[layer].index_copy_(0, slot_mapping, v)

    def copy_blocks(self, copies: list[tuple[int, int]]) -> None:
        """Copy-on-write: physical block src's K and V (every layer) into block dst."""
        bs = self.block_size
        for src, dst in copies:
            self.k[:, dst * bs : (dst + 1) * bs] = self.k[:, src * bs : (src + 1) * bs]
            self.v[:, dst * bs : (dst + 1) * bs] = self.v[:, src * bs : (src + 1) * bs]


def slots_of(chunk: Chunk, block_size: int) -> list[int]:
    """Slot of each new token: block_table[p // block_size] * block_size + p % block_size."""
    t = chunk.block_table
    return [
        t[p // block_size] * block_size + p % block_size for p in range(chunk.start, chunk.seq_len)
    ]


class Attend:
    """What `Llama.forward` calls in each layer: write K/V to the cache, attend through tables."""

    def __init__(
        self, cache: KVCache, attention: AttentionBackend, chunks: list[Chunk], slots=slots_of
    ):
        """`slots(chunk, block_size)`: where each new token's K and V go (a learner's engine
        passes its own slot mapping)."""
        device = cache.k.device
        self.cache, self.attention, self.chunks = cache, attention, chunks
        slots = [s for c in chunks for s in slots(c, cache.block_size)]
        self.slot_mapping = torch.tensor(slots, dtype=torch.long, device=device)  # (num_tokens,)
        ends = torch.tensor([len(c.token_ids) for c in chunks]).cumsum(0)
        self.last_token_index = (ends - 1).to(device)  # (num_seqs,)
        self.is_decode = all(len(c.token_ids) == 1 for c in chunks)
        width = max(len(c.block_table) for c in chunks)
        padded = [c.block_table + [0] * (width - len(c.block_table)) for c in chunks]
        self.block_table = torch.tensor(padded, dtype=torch.int32, device=device)  # (seqs, width)
        self.seq_lens = torch.tensor([c.seq_len for c in chunks], dtype=torch.int32, device=device)
        if self.is_decode:  # what every layer's decode reads through the tables, planned once
            shape = cache.caches(0)[0].shape
            self.decode = attention.decode_step(self.block_table, self.seq_lens, shape)

    def __call__(self, layer: int, q, k, v) -> torch.Tensor:
        """q (num_tokens, num_q_heads, head_dim), k and v (num_tokens, num_kv_heads, head_dim)."""
        self.cache.write(layer, self.slot_mapping, k, v)
        k_cache, v_cache = self.cache.caches(layer)
        if self.is_decode:  # one query per sequence: the batched decode path (or the kernel)
            return self.decode(q, k_cache, v_cache)
        out, first = torch.empty_like(q), 0
        for i, c in enumerate(self.chunks):  # prefill: each sequence attends to its own tokens
            n = len(c.token_ids)
            out[first : first + n] = self.attention.prefill(
                q[first : first + n], k_cache, v_cache, self.block_table[i], c.seq_len
            )
            first += n
        return out


def run_chunks(
    model: Llama, cache: KVCache, attention: AttentionBackend, chunks: list[Chunk], slots=slots_of
) -> torch.Tensor:
    """One forward pass over `chunks`; logits of each chunk's last token, (num_chunks, vocab);
    `slots` as `Attend` takes it."""
    ids = [t for c in chunks for t in c.token_ids]
    positions = [p for c in chunks for p in range(c.start, c.seq_len)]
    device = cache.k.device
    token_ids = torch.tensor(ids, dtype=torch.long, device=device)  # (num_tokens,)
    return model.forward(
        token_ids, torch.tensor(positions, device=device), Attend(cache, attention, chunks, slots)
    )
