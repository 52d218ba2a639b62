"""paged: a hands-on course library for PagedAttention (Kwon et al., SOSP 2023).

The modules at this level are what the course teaches: `kv` (bytes per token), `workloads`,
`contiguous` and `paging` (the two allocators), `pool` (one interface to both), `prefix_cache`
and `block_pool` (prefix caching: block hashes, the free queue that keeps cached blocks), `scheduler`
(admission, decode, preemption) and `step` (what it hands its caller to compute),
`simulator` (the scheduler over synthetic workloads), `trace`, `preemption_cost`, `facts`.
Beside them: `experiments/` (what the chapters run, one module per chapter), `attention/`
(reference and Triton kernel), `model/` (a real model on the paged cache), `exercises/`
(checkers), `viz/` (drawings and widgets) and `course/` (tooling a learner never needs to read).

Data flows one way: workloads -> allocators -> scheduler trace -> drawings and widgets.
"""

from .contiguous import ContiguousAllocator, Extent, next_pow2
from .errors import AllocationError, NoContiguousSpace, OutOfBlocks, UnknownSequence
from .kv import LLAMA_3_8B, OPT_13B, PRESETS, TINY, ModelSpec, bytes_per_token, kv_slots
from .paging import PagedAllocator, num_blocks_for
from .scheduler import Scheduler
from .simulator import SimResult, simulate
from .trace import CATEGORIES, StepRecord, Usage
from .workloads import Request, alpaca_like, sharegpt_like, with_prompt_ids

__all__ = [
    "AllocationError",
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
    "StepRecord",
    "TINY",
    "UnknownSequence",
    "Usage",
    "alpaca_like",
    "bytes_per_token",
    "kv_slots",
    "next_pow2",
    "num_blocks_for",
    "sharegpt_like",
    "simulate",
    "with_prompt_ids",
]
