"""What a preemption costs in time: swapping blocks over PCIe vs recomputing their KV.

A cost model, not a measurement (label: SIMULATED). Every number it uses is a named, overridable
field of `CostModel`, with where it comes from:

- Swapping copies each block of each layer's K and V with its own transfer: vLLM's `swap_blocks`
  issues one `cudaMemcpyAsync` per block, per layer, for K and for V (DOCS: `csrc/cache_kernels.cu`
  and V0's cache engine, read 2026-11-30; the code notes "This can be slow if the number of blocks
  is large"). A transfer costs a fixed latency plus its bytes over the PCIe bandwidth, so small
  blocks mean many small, latency-bound transfers.
- Recomputation runs the preempted tokens through one prefill ("in one prompt phase iteration",
  PAPER §4.5), at a prefill rate that does not depend on the block size.

The paper measured both on an A100 (§7.3, Fig. 19); its conclusions are quoted in chapter 9
beside what this model gives. Where the curves cross comes out of these assumptions.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import require_int
from .kv import OPT_13B, bytes_per_token
from .paging import num_blocks_for


@dataclass(frozen=True)
class CostModel:
    """Assumptions behind swap and recompute times; every default is named and can be replaced."""

    bytes_per_token: int = bytes_per_token(OPT_13B)  # 819,200 B (PAPER §3: "800 KB")
    num_layers: int = OPT_13B.num_layers  # 40: one transfer per block, layer and K/V
    # PCIe 4.0 x16 carries about 31.5 GB/s each way (DOCS: PCI-SIG, PCIe 4.0: 16 GT/s x 16
    # lanes, 128b/130b coding); 25 GB/s effective is an ASSUMPTION for pinned host memory.
    pcie_bytes_per_s: float = 25e9
    # Fixed cost of one small cudaMemcpyAsync (launch, DMA set-up): ASSUMPTION, ~10 us.
    transfer_latency_s: float = 10e-6
    # OPT-13B prefill on an A100: ASSUMPTION, 2 x 13e9 FLOP per token at ~130 TFLOP/s (about 40 %
    # of the A100's 312 TFLOP/s fp16 dense peak, DOCS: NVIDIA A100 datasheet) = 5,000 tokens/s.
    prefill_tokens_per_s: float = 5_000.0

    def __post_init__(self) -> None:
        for name in ("pcie_bytes_per_s", "transfer_latency_s", "prefill_tokens_per_s"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and value > 0):
                raise ValueError(f"{name} must be a number > 0, got {value!r}")
        require_int("bytes_per_token", self.bytes_per_token, at_least=1)
        require_int("num_layers", self.num_layers, at_least=1)

    def transfers(self, num_blocks: int) -> int:
        """cudaMemcpyAsync calls to move `num_blocks` blocks one way (per layer, K and V)."""
        return require_int("num_blocks", num_blocks, at_least=0) * 2 * self.num_layers

    def swap_time(self, num_blocks: int, block_size: int) -> float:
        """Seconds to copy `num_blocks` blocks of `block_size` tokens one way over PCIe."""
        block_size = require_int("block_size", block_size, at_least=1)
        num_bytes = num_blocks * block_size * self.bytes_per_token
        latency = self.transfers(num_blocks) * self.transfer_latency_s
        return latency + num_bytes / self.pcie_bytes_per_s

    def recompute_time(self, num_tokens: int) -> float:
        """Seconds to prefill `num_tokens` tokens again."""
        return require_int("num_tokens", num_tokens, at_least=0) / self.prefill_tokens_per_s

    def per_token(self, block_size: int) -> tuple[float, float]:
        """(swap out + in, recompute) seconds per preempted token, for a long sequence."""
        tokens = 1 << 16  # long enough that the last block's rounding does not matter
        blocks = num_blocks_for(tokens, block_size)
        return 2 * self.swap_time(blocks, block_size) / tokens, self.recompute_time(tokens) / tokens


def preemption_time(result, model: CostModel = CostModel()) -> float:
    """Seconds a serving run spent recovering from preemptions, by `model` (SIMULATED).

    Swapped blocks travel out and back in; recomputed tokens are prefilled once more.
    """
    if result.block_size is None:
        raise ValueError("preemption_time needs a paged run (policy='paged')")
    swap = 2 * model.swap_time(result.swapped_blocks, result.block_size)
    return swap + model.recompute_time(result.recomputed_tokens)
