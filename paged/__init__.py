"""paged: a hands-on course library for PagedAttention (Kwon et al., SOSP 2023).

Data flows one way: workloads -> allocators -> simulator trace -> drawings and widgets.
"""

from .contiguous import ContiguousAllocator, Extent, next_pow2
from .errors import AllocationError, NoContiguousSpace, OutOfBlocks, UnknownSequence
from .kv import LLAMA_3_8B, OPT_13B, PRESETS, TINY, ModelSpec, bytes_per_token, kv_slots
from .paging import PagedAllocator, num_blocks_for
from .scheduler import Backend, Scheduler
from .simulator import SimResult, Simulator, simulate
from .trace import CATEGORIES, StepRecord, Usage
from .workloads import Request, alpaca_like, sharegpt_like

_LAZY = ("paged_attention", "paged_attention_ref")  # torch and triton load only when asked


def __getattr__(name):
    if name in _LAZY:
        from . import attention

        return getattr(attention, name)
    raise AttributeError(f"module 'paged' has no attribute {name!r}")


__all__ = [
    "AllocationError",
    "Backend",
    "CATEGORIES",
    "ContiguousAllocator",
    "Extent",
    "LLAMA_3_8B",
    "ModelSpec",
    "NoContiguousSpace",
    "OPT_13B",
    "OutOfBlocks",
    "PRESETS",
    "PagedAllocator",
    "Request",
    "Scheduler",
    "SimResult",
    "Simulator",
    "StepRecord",
    "TINY",
    "UnknownSequence",
    "Usage",
    "alpaca_like",
    "bytes_per_token",
    "kv_slots",
    "next_pow2",
    "num_blocks_for",
    "paged_attention",
    "paged_attention_ref",
    "sharegpt_like",
    "simulate",
]
