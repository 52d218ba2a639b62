"""The Llama forward pass, written out: RMSNorm, RoPE, grouped-query attention, SwiGLU.

This is the whole model the course serves (SmolLM2-135M-Instruct is a small Llama). It holds no
KV cache of its own: each layer hands its new queries, keys and values to `attend`, a callable
from `paged.model.cache` that writes K/V into the `KVCache` and reads them back through the
block table. So the same forward runs a prefill (many tokens of one sequence) and a decode step
(one token from each of many sequences); which of the two is the `attend` object's business.

It follows Hugging Face's `modeling_llama.py` step by step (the tests compare the two, token for
token): RMSNorm in fp32 (Zhang & Sennrich 2019), rotary embeddings in the "rotate half" layout
(Su et al. 2021, RoFormer), query heads sharing K/V heads in groups (GQA, Ainslie et al. 2023),
and a SwiGLU MLP (Shazeer 2020). Weight names are the GGUF file's (`blk.N.attn_q.weight`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..text import msg
from .linear import Linear

SHAPE = msg(
    "Llama({layers} layers, hidden {hidden}, {q_heads} query / {kv_heads} KV heads of {head_dim}, "
    "{dtype}, {device})",
    "Llama(레이어 {layers}개, 은닉 크기 {hidden}, 쿼리 헤드 {q_heads}개 / KV 헤드 {kv_heads}개, "
    "헤드 차원 {head_dim}, {dtype}, {device})",
)


@dataclass(frozen=True)
class LlamaConfig:
    """The numbers that shape the network, read from the GGUF file's metadata."""

    num_layers: int
    hidden_size: int
    intermediate_size: int
    num_q_heads: int
    num_kv_heads: int
    vocab_size: int
    context_length: int  # longest sequence the model was trained for (RoPE positions)
    rope_theta: float
    rms_norm_eps: float
    bos_token_id: int
    eos_token_id: int

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_q_heads


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) * weight, computed in fp32 as Hugging Face does."""
    x32 = x.float()
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x32.to(x.dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype):
    """cos and sin of each position's rotation angles: two (num_tokens, head_dim) tensors."""
    inv_freq = 1.0 / theta ** (
        torch.arange(0, head_dim, 2, dtype=torch.int64, device=positions.device).float() / head_dim
    )
    angles = positions.float()[:, None] * inv_freq[None, :]  # (num_tokens, head_dim / 2)
    angles = torch.cat([angles, angles], dim=-1)  # (num_tokens, head_dim)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each head's (first half, second half) pairs; x is (num_tokens, heads, head_dim)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[:, None, :] + rotated * sin[:, None, :]


STACKED = {"attn_qkv": ("attn_q", "attn_k", "attn_v"), "ffn_gate_up": ("ffn_gate", "ffn_up")}


class Llama:
    """The network: weights in a dict, one `forward` over a flat run of tokens."""

    def __init__(self, config: LlamaConfig, weights: dict[str, torch.Tensor], tokenizer=None):
        self.config = config
        self.weights = weights
        self.tokenizer = tokenizer  # set by `paged.model.load`; the forward does not use it
        w = weights["token_embd.weight"]
        self.device, self.dtype = w.device, w.dtype
        # every weight matrix, laid out once for its products (`paged.model.linear`); those that
        # read the same input stacked: Q, K, V as "attn_qkv", gate and up as "ffn_gate_up"
        stacked = {name for parts in STACKED.values() for name in parts}
        self.linear = {
            name: Linear(t)
            for name, t in weights.items()
            if t.dim() == 2 and name.split(".")[-2] not in stacked
        }
        stacks = {}  # one buffer per stack, reused by every layer: no freed copies fragment the heap
        for i in range(config.num_layers):
            p = f"blk.{i}."
            for name, parts in STACKED.items():
                ws = [weights[f"{p}{part}.weight"] for part in parts]
                if name not in stacks:
                    stacks[name] = ws[0].new_empty(sum(t.shape[0] for t in ws), ws[0].shape[1])
                self.linear[p + name] = Linear(*ws, stacked=torch.cat(ws, out=stacks[name]))

    @property
    def kv_bytes_per_token(self) -> int:
        """Bytes of K and V one token takes: 2 x layers x KV heads x head_dim x dtype bytes."""
        c = self.config
        return 2 * c.num_layers * c.num_kv_heads * c.head_dim * self.dtype.itemsize

    def __repr__(self) -> str:
        c = self.config
        return SHAPE.format(
            layers=c.num_layers,
            hidden=c.hidden_size,
            q_heads=c.num_q_heads,
            kv_heads=c.num_kv_heads,
            head_dim=c.head_dim,
            dtype=self.dtype,
            device=self.device,
        )

    @torch.inference_mode()
    def forward(self, token_ids: torch.Tensor, positions: torch.Tensor, attend) -> torch.Tensor:
        """Logits of the last token of each sequence in the run: (num_seqs, vocab_size).

        token_ids and positions are (num_tokens,); `attend(layer, q, k, v)` returns the
        attention output (num_tokens, num_q_heads, head_dim) and knows where each sequence's
        tokens end (`attend.last_token_index`).
        """
        c, w, linear = self.config, self.weights, self.linear
        n, d = token_ids.shape[0], c.head_dim
        num_qk = c.num_q_heads + c.num_kv_heads
        cos, sin = rope_cos_sin(positions, d, c.rope_theta, self.dtype)
        x = w["token_embd.weight"][token_ids]  # (num_tokens, hidden_size)
        for i in range(c.num_layers):
            p = f"blk.{i}."
            h = rms_norm(x, w[p + "attn_norm.weight"], c.rms_norm_eps)
            qkv = linear[p + "attn_qkv"](h).view(n, -1, d)  # (num_tokens, q + 2 kv heads, d)
            qk = apply_rope(qkv[:, :num_qk], cos, sin)  # the query and key heads, rotated at once
            q, k, v = qk[:, : c.num_q_heads].contiguous(), qk[:, c.num_q_heads :], qkv[:, num_qk:]
            out = attend(i, q, k, v)  # (num_tokens, num_q_heads, head_dim)
            x = x + linear[p + "attn_output.weight"](out.reshape(n, c.hidden_size))
            h = rms_norm(x, w[p + "ffn_norm.weight"], c.rms_norm_eps)
            gate, up = linear[p + "ffn_gate_up"](h).split(c.intermediate_size, dim=-1)
            x = x + linear[p + "ffn_down.weight"](F.silu(gate) * up)  # (num_tokens, intermediate)
        x = x[attend.last_token_index]  # (num_seqs, hidden_size): only these are sampled from
        x = rms_norm(x, w["output_norm.weight"], c.rms_norm_eps)
        return linear["token_embd.weight"](x)  # the output head is tied to the embedding
