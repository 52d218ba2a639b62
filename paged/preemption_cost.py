"""What a preemption costs in time: swapping blocks over PCIe vs recomputing their KV.

A cost model, not a measurement (label: SIMULATED). Every number it uses is a named, overridable
field of `CostModel`:

- Swapping copies each block of each layer's K and V with its own transfer: vLLM's `swap_blocks`
  issues one `cudaMemcpyAsync` per block, per layer, for K and for V (DOCS: `csrc/cache_kernels.cu`
  and V0's cache engine, read 2026-11-30; the code notes "This can be slow if the number of blocks
  is large"). A transfer costs a fixed latency plus its bytes over the PCIe bandwidth, so small
  blocks mean many small, latency-bound transfers.
- Recomputation runs the preempted tokens through one prefill ("in one prompt phase iteration",
  PAPER §4.5), at a prefill rate that does not depend on the block size.

Two parameter sets, labelled apart:
- `CostModel.fitted_to_paper()` (the default, "bandwidth fitted to PAPER §7.3"): given two
  ASSUMPTIONS (5 µs per transfer, 5,000 prefill tokens/s), the bandwidth is fitted so that the
  model makes §7.3's three statements about Fig. 19(a) true (`section_7_3` checks them;
  `bandwidth_window` gives the bandwidths that do, for a latency and a prefill rate).
- `CostModel.modern_host()` (ASSUMPTION): the same GPU class with pinned host memory on PCIe 4.0
  and a faster prefill, to show how the crossover moves with the hardware.

The course reads §7.3's "recomputation overhead is never higher than 20% of swapping's latency"
as: recomputing costs at most 1.2 x swapping at every block size of Fig. 19 (1 to 256). Read
literally (recompute <= 0.2 x swap) it would contradict the same sentence's "swapping is more
efficient when the block size is large".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import require_int, require_positive
from .kv import OPT_13B, bytes_per_token
from .paging import BLOCK_SIZES, num_blocks_for
from .text import msg

# The course's reading of "never higher than 20% of swapping's latency" (PAPER §7.3).
RECOMPUTE_OVER_SWAP_LIMIT = 1.2

FITTED = msg("bandwidth fitted to PAPER §7.3", "대역폭을 PAPER §7.3에 맞춘 값")
MODERN = msg("modern host (ASSUMPTION)", "요즘 호스트 (ASSUMPTION)")
CUSTOM = msg("custom", "직접 정한 값")
DESCRIBE = msg(
    "{name}: {gbps:.1f} GB/s, {latency_us:.0f} µs per transfer, prefill {rate:,.0f} tokens/s",
    "{name}: {gbps:.1f} GB/s, 전송당 {latency_us:.0f} µs, prefill 초당 {rate:,.0f} 토큰",
)


def _block_sizes(block_sizes) -> tuple[int, ...]:
    sizes = tuple(block_sizes)
    if len(sizes) < 2:
        raise ValueError(f"block_sizes needs at least two sizes, got {block_sizes!r}")
    for bs in sizes:
        require_int("block size", bs, at_least=1)
    if list(sizes) != sorted(set(sizes)):
        raise ValueError(f"block_sizes must be increasing, got {block_sizes!r}")
    return sizes


@dataclass(frozen=True)
class CostModel:
    """Assumptions behind swap and recompute times; the defaults are the fit to PAPER §7.3."""

    bytes_per_token: int = bytes_per_token(OPT_13B)  # 819,200 B (PAPER §3: "800 KB")
    num_layers: int = OPT_13B.num_layers  # 40: one transfer per block, layer and K/V
    # Fitted to PAPER §7.3. Effective host<->GPU rate of large copies, below PCIe 4.0 x16's
    # 31.5 GB/s per direction (DOCS: PCI-SIG, 16 GT/s x 16 lanes, 128b/130b coding): with 5 us
    # and 5,000 tokens/s, §7.3 holds for 8.3-10.0 GB/s only (`bandwidth_window`).
    pcie_bytes_per_s: float = 9.5e9
    # ASSUMPTION (chosen, not fitted): a fixed cost per cudaMemcpyAsync (launch, DMA set-up).
    transfer_latency_s: float = 5e-6
    # ASSUMPTION (chosen, not fitted): OPT-13B prefill on an A100, 2 x 13e9 FLOP per token at ~130 TFLOP/s,
    # about 40 % of the A100's 312 TFLOP/s fp16 dense peak (DOCS: NVIDIA A100 datasheet).
    prefill_tokens_per_s: float = 5_000.0

    def __post_init__(self) -> None:
        for name in ("pcie_bytes_per_s", "transfer_latency_s", "prefill_tokens_per_s"):
            require_positive(name, getattr(self, name))
        require_int("bytes_per_token", self.bytes_per_token, at_least=1)
        require_int("num_layers", self.num_layers, at_least=1)

    @classmethod
    def fitted_to_paper(cls) -> CostModel:
        """9.5 GB/s, 5 us per transfer, 5,000 tokens/s: meets §7.3's three statements."""
        return cls()

    @classmethod
    def modern_host(cls) -> CostModel:
        """ASSUMPTION: an A100 with pinned host memory on PCIe 4.0 and today's prefill.

        25 GB/s effective (of PCIe 4.0 x16's 31.5 GB/s per direction, DOCS: PCI-SIG) and
        7,200 tokens/s (OPT-13B at 60 % of the A100's 312 TFLOP/s fp16 dense peak, DOCS: NVIDIA
        A100 datasheet); the per-transfer cost stays 5 us. Neither rate is measured here.
        """
        return cls(pcie_bytes_per_s=25e9, prefill_tokens_per_s=7_200.0)

    def describe(self) -> str:
        """One line: which parameter set this is and its three fitted/assumed numbers."""
        name = {CostModel(): FITTED, CostModel.modern_host(): MODERN}.get(self, CUSTOM)
        return DESCRIBE.format(
            name=str(name),
            gbps=self.pcie_bytes_per_s / 1e9,
            latency_us=1e6 * self.transfer_latency_s,
            rate=self.prefill_tokens_per_s,
        )

    def transfers(self, num_blocks: int) -> int:
        """cudaMemcpyAsync calls to move `num_blocks` blocks one way (per layer, K and V)."""
        return require_int("num_blocks", num_blocks, at_least=0) * 2 * self.num_layers

    def swap_time(self, num_blocks: int, block_size: int) -> float:
        """Seconds to copy `num_blocks` blocks of `block_size` tokens one way over PCIe."""
        block_size = require_int("block_size", block_size, at_least=1)
        latency = self.transfers(num_blocks) * self.transfer_latency_s
        return latency + num_blocks * block_size * self.bytes_per_token / self.pcie_bytes_per_s

    def recompute_time(self, num_tokens: int) -> float:
        """Seconds to prefill `num_tokens` tokens again."""
        return require_int("num_tokens", num_tokens, at_least=0) / self.prefill_tokens_per_s

    def per_token(self, block_size: int) -> tuple[float, float]:
        """(swap out + in, recompute) seconds per preempted token, for a long sequence."""
        block_size = require_int("block_size", block_size, at_least=1)
        tokens = 1 << 16  # long enough that the last block's rounding does not matter
        blocks = num_blocks_for(tokens, block_size)
        return 2 * self.swap_time(blocks, block_size) / tokens, self.recompute_time(tokens) / tokens


@dataclass(frozen=True)
class Section73:
    """A cost model's per-token curves over Fig. 19's block sizes, read against PAPER §7.3."""

    block_sizes: tuple[int, ...]
    swap: tuple[float, ...]  # seconds per token, swap out + in
    recompute: tuple[float, ...]  # seconds per token

    @property
    def crossover(self) -> int | None:
        """The smallest block size at which swapping is cheaper than recomputing, if any."""
        return next((b for b, s, r in self._rows() if s < r), None)

    @property
    def max_ratio(self) -> float:
        """The largest recompute / swap ratio over the block sizes."""
        return max(r / s for _, s, r in self._rows())

    @property
    def swap_excessive_when_small(self) -> bool:
        """Statement 1: swapping's cost falls with the block size and is dearer at the smallest."""
        falling = all(a > b for a, b in zip(self.swap, self.swap[1:], strict=False))
        return falling and self.swap[0] > self.recompute[0]

    @property
    def recompute_constant(self) -> bool:
        """Statement 2: recomputation costs the same at every block size."""
        return all(math.isclose(r, self.recompute[0], rel_tol=1e-9) for r in self.recompute)

    @property
    def each_wins_where_said(self) -> bool:
        """Statement 3: recompute wins at small blocks, swap at large, recompute <= 1.2 x swap."""
        small, large = self.recompute[0] < self.swap[0], self.swap[-1] < self.recompute[-1]
        return small and large and self.max_ratio <= RECOMPUTE_OVER_SWAP_LIMIT

    @property
    def holds(self) -> bool:
        """All three statements of §7.3 hold for this model."""
        statements = (self.swap_excessive_when_small, self.recompute_constant)
        return all(statements) and self.each_wins_where_said

    def _rows(self):
        return zip(self.block_sizes, self.swap, self.recompute, strict=True)


def section_7_3(model: CostModel, block_sizes=BLOCK_SIZES) -> Section73:
    """`model`'s swap and recompute cost per token at each block size (SIMULATED)."""
    if not isinstance(model, CostModel):
        raise TypeError(f"model must be a CostModel, got {model!r}")
    sizes = _block_sizes(block_sizes)
    swap, recompute = zip(*(model.per_token(bs) for bs in sizes), strict=True)
    return Section73(sizes, swap, recompute)


def bandwidth_window(
    transfer_latency_s: float,
    prefill_tokens_per_s: float,
    *,
    bytes_per_token: int = CostModel.bytes_per_token,
    num_layers: int = CostModel.num_layers,
    block_sizes=BLOCK_SIZES,
) -> tuple[float, float]:
    """(low, high]: the effective bandwidths in bytes/s for which §7.3's statements hold.

    Per token, swapping out and in costs 4 L lat / bs + 2 B / bw and recomputing 1 / rate. Swap
    must be cheaper at the largest block (bw > low) but recompute at most 1.2x swap there, where
    swap is cheapest (bw <= high), and dearer than recompute at the smallest block. A window
    with low >= high means that no bandwidth fits this latency and prefill rate.
    """
    lat = require_positive("transfer_latency_s", transfer_latency_s)
    rate = require_positive("prefill_tokens_per_s", prefill_tokens_per_s)
    two_b = 2 * require_int("bytes_per_token", bytes_per_token, at_least=1)
    per_block = 4 * require_int("num_layers", num_layers, at_least=1) * lat
    sizes = _block_sizes(block_sizes)
    recompute = 1 / rate
    room_large = recompute - per_block / sizes[-1]  # what bytes may cost at the largest block
    room_ratio = recompute / RECOMPUTE_OVER_SWAP_LIMIT - per_block / sizes[-1]
    room_small = recompute - per_block / sizes[0]
    low = two_b / room_large if room_large > 0 else math.inf
    high = two_b / room_ratio if room_ratio > 0 else math.inf
    if room_small > 0:  # latency alone does not make small blocks dear: bytes must
        high = min(high, two_b / room_small)
    return low, high


def preemption_time(result, model: CostModel | None = None) -> float:
    """Seconds a serving run spent recovering from preemptions, by `model` (SIMULATED).

    Swapped blocks travel out and back in; recomputed tokens are prefilled once more. The
    default model is the fit to PAPER §7.3.
    """
    model = CostModel() if model is None else model
    if not isinstance(model, CostModel):
        raise TypeError(f"model must be a CostModel, got {model!r}")
    if getattr(result, "block_size", None) is None:
        raise ValueError(f"preemption_time needs a paged run (policy='paged'), got {result!r:.80}")
    swap = 2 * model.swap_time(result.swapped_blocks, result.block_size)
    return swap + model.recompute_time(result.recomputed_tokens)
