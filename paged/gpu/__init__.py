"""The GPU harness: what measures and checks the kernel on a CUDA machine, beside the kernel itself.

`kernel_sweep` times the kernel on the cases of `kernel_inputs` against its baselines (`baselines`:
SDPA on gathered K/V, FlexAttention, FlashAttention-2's paged path) and reports GB/s against the
device's peak (`bandwidth`); `kernel_bench` is its command line (`bench`, the name chapter 7
uses, leads there); `bench_report` prints and plots its rows; `aot` compiles the kernel ahead of
time for other GPUs and `registers` reads the same resources from this GPU's launches;
`check` runs every GPU step in one go and writes a report after each (`python -m
paged.gpu.check --out DIR`); `pytest_plugin` shards the GPU tests for it. Nothing in the course
imports this folder; chapter 7 reads a benchmark's CSV if one exists.
"""

# First, before any module here imports Triton: where kernels run (GPU or CPU interpreter) is
# chosen by paged.attention.triton_mode, whichever harness module a command starts from.
from ..attention import triton_mode  # noqa: F401
