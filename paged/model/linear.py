"""The model's matrix products, y = x @ W.T: F.linear, with the weight laid out once on the CPU.

A decode step multiplies a handful of rows (one per running request) by every weight matrix of
the network. On the CPU, F.linear repacks the weight into its kernel's layout at every call, and
for a few rows that repacking costs about as much as the product. `Linear` reorders each weight
once, at load, into oneDNN's layout, as PyTorch's own compiler does for inference
(`torch.ops.mkldnn._reorder_linear_weight` and `_linear_pointwise`, the operators
`torch.compile` emits on the CPU), and multiplies through it afterwards: chapter 10's batching
cell runs about 20 % faster on a 2-core Xeon with one thread (MEASURED; its timing cell shows a
decode step's time by batch size). A single row stays with F.linear, whose matrix-vector product
needs no repacking.

The same sums in another order: results agree with F.linear to float32 rounding (the tests
compare both, and the model's tokens with transformers'). Where that path is missing (a GPU, a
dtype other than float32, a PyTorch without oneDNN) or disagrees on a probe at load, `Linear`
is F.linear.

Weights that multiply the same input (a layer's Q, K and V; its gate and up projections) can
be stacked into one `Linear`, as vLLM's QKVParallelLinear does: one product over the stacked
matrix, their outputs side by side. Each output column is still the dot product of one weight row
with the input, and oneDNN sums it the same way whatever the other rows: chapter 10's logits are
the same to the bit (MEASURED on a Xeon with AVX-512), and the step's products take less time.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

PROBE_ROWS = 3  # rows of the product checked against F.linear when a weight is reordered
PROBE_TOLERANCE = 1e-4  # relative to the largest value of F.linear's result


def onednn_available(weight: torch.Tensor) -> bool:
    """Whether `weight` can be reordered for oneDNN: float32, on the CPU, in a build with it."""
    return (
        weight.device.type == "cpu"
        and weight.dtype == torch.float32
        and weight.dim() == 2
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    )


class Linear:
    """x @ weight.T for x of shape (rows, in_features) on the weight's device, for each weight
    given, the outputs side by side; `packed` is None where F.linear runs."""

    def __init__(self, *weights: torch.Tensor, stacked: torch.Tensor | None = None):
        # stacked: torch.cat(weights) if the caller has it (a buffer it reuses for every layer)
        self.weights = weights
        if not onednn_available(weights[0]):
            self.packed = None
        elif len(weights) == 1:
            self.packed = self._reorder(weights[0])
        else:
            self.packed = self._reorder(torch.cat(weights) if stacked is None else stacked)

    @staticmethod
    def _reorder(weight: torch.Tensor) -> torch.Tensor | None:
        try:
            packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
            probe = torch.linspace(-1, 1, PROBE_ROWS * weight.shape[1]).view(PROBE_ROWS, -1)
            got = torch.ops.mkldnn._linear_pointwise(probe, packed, None, "none", [], "")
        except RuntimeError:  # an operator this PyTorch does not have in this form
            return None
        want = F.linear(probe, weight)
        if got.shape != want.shape or not torch.allclose(
            got, want, rtol=0, atol=PROBE_TOLERANCE * float(want.abs().max())
        ):
            return None
        return packed

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # One row is a matrix-vector product, which F.linear streams without repacking anyway.
        if self.packed is None or x.shape[0] < 2 or x.dtype != torch.float32:
            if len(self.weights) == 1:
                return F.linear(x, self.weights[0])
            return torch.cat([F.linear(x, w) for w in self.weights], dim=-1)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, None, "none", [], "")
