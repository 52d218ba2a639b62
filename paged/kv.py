"""KV-cache sizing: bytes per token for model presets, and how many token slots fit a budget.

Kwon et al. (SOSP 2023) §3: OPT-13B keeps 2 (K and V) x 5120 x 40 layers x 2 bytes = 819,200
bytes (800 KiB) of KV cache per token.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSpec:
    """The shape facts of a decoder that fix its KV-cache size."""

    name: str
    num_layers: int
    num_kv_heads: int
    head_dim: int
    dtype_bytes: int = 2  # fp16 / bf16
    num_q_heads: int | None = None  # None: same as num_kv_heads (no GQA)

    def __post_init__(self) -> None:
        for field in ("num_layers", "num_kv_heads", "head_dim", "dtype_bytes"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"ModelSpec.{field} must be a positive int, got {value!r}")
        q = self.num_q_heads
        if q is not None and (q < 1 or q % self.num_kv_heads):
            raise ValueError(
                f"num_q_heads={q!r} must be a positive multiple of num_kv_heads={self.num_kv_heads}"
            )

    @property
    def bytes_per_token(self) -> int:
        """K and V, every layer, every KV head."""
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * self.dtype_bytes


def _spec(spec) -> ModelSpec:
    if not isinstance(spec, ModelSpec):
        raise ValueError(f"spec must be a ModelSpec (e.g. paged.OPT_13B), got {spec!r}")
    return spec


def bytes_per_token(spec: ModelSpec) -> int:
    """Bytes of KV cache one token occupies in `spec`."""
    return _spec(spec).bytes_per_token


def kv_slots(spec: ModelSpec, budget_bytes: int) -> int:
    """How many tokens' K and V fit in `budget_bytes` (whole tokens only)."""
    spec = _spec(spec)
    if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, (int, float)):
        raise ValueError(f"budget_bytes must be a number of bytes, got {budget_bytes!r}")
    if not budget_bytes >= 0:
        raise ValueError(f"budget_bytes must be >= 0, got {budget_bytes!r}")
    return int(budget_bytes) // spec.bytes_per_token


# OPT-13B: hidden 5120 = 40 heads x 128, 40 layers, multi-head attention (PAPER §3).
OPT_13B = ModelSpec("OPT-13B", num_layers=40, num_kv_heads=40, head_dim=128)
# Llama-3-8B: 32 layers, 32 query heads sharing 8 KV heads (GQA), head_dim 128 (DOCS: model card).
LLAMA_3_8B = ModelSpec("Llama-3-8B", num_layers=32, num_kv_heads=8, head_dim=128, num_q_heads=32)
# A toy model small enough to run a real decode loop on a laptop CPU.
TINY = ModelSpec("tiny", num_layers=2, num_kv_heads=2, head_dim=16, dtype_bytes=4, num_q_heads=4)

PRESETS: dict[str, ModelSpec] = {s.name: s for s in (OPT_13B, LLAMA_3_8B, TINY)}

# PAPER Table 1: OPT-13B on one A100-40GB leaves 12 GB for KV cache, "15.7K" KV slots (as
# Table 1 prints it).
A100_40GB_KV_BUDGET = 12 * 1024**3
