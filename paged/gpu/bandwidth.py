"""The benchmark's yardsticks: bytes a decode step must read, spec peaks, and a measured copy.

Decode attention is memory-bound: its floor is (bytes of K and V read) / (memory bandwidth).
`kv_bytes` counts those bytes; `peak_bandwidth` gives a GPU's spec peak (DOCS: vendor data
sheets) by exact device name; `copy_bandwidth` measures a device-to-device copy (MEASURED), the
realistic ceiling any kernel that reads memory can approach. `kernel_sweep` reports every time as
GB/s and as % of both.
"""

from __future__ import annotations

import re

import torch

# Spec peak memory bandwidth, bytes/s (DOCS: vendor data sheets), matched as whole words against
# torch.cuda.get_device_name(); the first match wins, so specific names come first.
PEAK_BANDWIDTH = (
    (r"GH200", 4.0e12),
    (r"H200", 4.8e12),
    (r"H100 PCIe", 2.0e12),
    (r"H100 NVL", 3.9e12),
    (r"H100( 80GB HBM3| SXM)", 3.35e12),
    (r"A100-SXM4-80GB", 2.039e12),
    (r"A100 80GB PCIe", 1.935e12),
    (r"A100-(SXM4|PCIE)-40GB", 1.555e12),
    (r"L40S?", 864e9),
    (r"L4", 300e9),
    (r"A10G?", 600e9),
    (r"T4", 320e9),
    (r"V100", 900e9),
    (r"RTX 4090", 1008e9),
    (r"RTX 3090", 936e9),
    (r"RTX A6000", 768e9),
    (r"B200", 8.0e12),
)


def peak_bandwidth(device_name: str) -> float | None:
    """Spec peak bandwidth for an exact device name, or None when unknown."""
    for pattern, value in PEAK_BANDWIDTH:
        if re.search(rf"\b{pattern}\b", device_name):
            return value
    return None


def kv_bytes(batch: int, seq_len: int, num_kv_heads: int, head_dim: int, dtype) -> int:
    """Bytes of K and V one decode step must read."""
    itemsize = torch.empty(0, dtype=dtype).element_size()
    return 2 * batch * seq_len * num_kv_heads * head_dim * itemsize


def copy_bandwidth(device, timer, nbytes: int = 1 << 30) -> float:
    """Bytes/s of a device-to-device copy (read + write), the realistic ceiling."""
    src = torch.empty(nbytes // 2, dtype=torch.float16, device=device)
    dst = torch.empty_like(src)
    ms = timer(lambda: dst.copy_(src))
    return 2 * nbytes / (ms * 1e-3)
