"""A tiny random-weight decoder that keeps its KV cache either contiguously or in paged blocks.

Chapter 5 decodes the same prompt both ways and checks the logits agree: paging changes where
K and V live, not the attention math. The paged path writes each new token's K/V at its slot
(`PagedAllocator.slot`) and reads them back with `paged_attention_ref` (or the Triton kernel).
"""

from __future__ import annotations

import torch

from ..paging import PagedAllocator
from .reference import paged_attention_ref


class TinyDecoder(torch.nn.Module):
    """Embedding, `num_layers` single-block attention layers (GQA), and an output projection."""

    def __init__(self, vocab=64, dim=32, num_layers=2, num_q_heads=4, num_kv_heads=2, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.head_dim = dim // num_q_heads
        self.num_q_heads, self.num_kv_heads = num_q_heads, num_kv_heads
        kv = num_kv_heads * self.head_dim

        def w(*shape):
            return torch.randn(*shape, generator=g) / shape[0] ** 0.5

        self.embed = w(vocab, dim)
        self.layers = [
            (w(dim, dim), w(dim, kv), w(dim, kv), w(dim, dim)) for _ in range(num_layers)
        ]
        self.unembed = w(dim, vocab)

    def _qkv(self, layer, x):
        wq, wk, wv, _ = self.layers[layer]
        q = (x @ wq).view(-1, self.num_q_heads, self.head_dim)
        k = (x @ wk).view(-1, self.num_kv_heads, self.head_dim)
        return q, k, (x @ wv).view(-1, self.num_kv_heads, self.head_dim)

    @torch.no_grad()
    def generate_contiguous(self, prompt: list[int], steps: int):
        """Greedy decoding with one growing (tokens, kv_heads, head_dim) tensor per layer."""
        caches = [[None, None] for _ in self.layers]
        tokens, logits_seen = list(prompt), []
        for t in range(len(prompt) + steps - 1):
            x = self.embed[tokens[t]][None]
            for i, cache in enumerate(caches):
                q, k, v = self._qkv(i, x)
                cache[0] = k if cache[0] is None else torch.cat([cache[0], k])
                cache[1] = v if cache[1] is None else torch.cat([cache[1], v])
                g = self.num_q_heads // self.num_kv_heads
                kk, vv = (c.repeat_interleave(g, 1).transpose(0, 1) for c in cache)
                att = torch.softmax(q.transpose(0, 1) @ kk.transpose(1, 2) / self.head_dim**0.5, -1)
                x = x + ((att @ vv).transpose(0, 1).reshape(1, -1) @ self.layers[i][3])
            if t >= len(prompt) - 1:
                logits = (x @ self.unembed)[0]
                logits_seen.append(logits)
                tokens.append(int(logits.argmax()))
        return tokens, torch.stack(logits_seen)

    @torch.no_grad()
    def generate_paged(
        self,
        prompt: list[int],
        steps: int,
        num_blocks=32,
        block_size=4,
        seed=0,
        attention=paged_attention_ref,
    ):
        """The same decoding, with K/V written to slots of a shared block pool per layer."""
        alloc = PagedAllocator(num_blocks, block_size, seed=seed)
        shape = (num_blocks, block_size, self.num_kv_heads, self.head_dim)
        k_caches = [torch.zeros(shape) for _ in self.layers]
        v_caches = [torch.zeros(shape) for _ in self.layers]
        alloc.allocate("seq", 0)
        tokens, logits_seen = list(prompt), []
        for t in range(len(prompt) + steps - 1):
            alloc.append("seq", 1)
            slot = alloc.slot("seq", t)
            table = torch.tensor([alloc.block_table("seq")], dtype=torch.int32)
            lens = torch.tensor([t + 1], dtype=torch.int32)
            x = self.embed[tokens[t]][None]
            for i in range(len(self.layers)):
                q, k, v = self._qkv(i, x)
                k_caches[i].view(-1, self.num_kv_heads, self.head_dim)[slot] = k[0]
                v_caches[i].view(-1, self.num_kv_heads, self.head_dim)[slot] = v[0]
                out = attention(q, k_caches[i], v_caches[i], table, lens)
                x = x + out.reshape(1, -1) @ self.layers[i][3]
            if t >= len(prompt) - 1:
                logits = (x @ self.unembed)[0]
                logits_seen.append(logits)
                tokens.append(int(logits.argmax()))
        return tokens, torch.stack(logits_seen), alloc.block_table("seq")
