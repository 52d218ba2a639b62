"""Registers, spills and shared memory of the kernels as this GPU compiles them, per launch.

`gpu_check`'s registers step (MEASURED): for each launch configuration worth knowing (every
kernel variant, both kernel paths split and unsplit at head_dim 64/128/256 in fp16 and, from
sm_80, bf16, then the benchmark's launch-option sweep) it launches the kernel once on a small
case and reads what Triton compiled: `n_regs`, `n_spills` and the shared memory in its metadata.
A configuration larger than this GPU's shared memory is recorded as not fitting, not as a
failure; the budget's deadline turns the rest into skipped rows. These are the numbers `aot.py`
predicts for GPUs that are not here; the dry run launches tiny fp16 cases on the interpreter,
where the plumbing runs but nothing is compiled.
"""

from __future__ import annotations

import time

import torch
from triton.runtime.errors import OutOfResources

from ..attention.kernel import launch
from ..attention.launch import VARIANTS
from .kernel_inputs import make_inputs
from .kernel_sweep import default_sweep, sweep_configs


def launch_configs(capability, dry_run: bool) -> list[dict]:
    """Launch configurations whose compiled kernels to record: variants, paths, the sweep."""
    f16 = torch.float16
    if dry_run:  # head_dim 16: every path, split, variant and one swept config, tiny
        paths = [dict(path=p, split=s) for p in (None, "cuda_core") for s in (False, True)]
        others = [dict(variant=v) for v in VARIANTS] + [dict(tile=16, num_warps=2)]
        return [dict(head_dim=16, dtype=f16) | c for c in paths + others]
    dtypes = [f16] + ([torch.bfloat16] if capability >= (8, 0) else [])
    configs = [
        dict(head_dim=d, dtype=t, path=p, split=s)
        for d in (64, 128, 256)
        for t in dtypes
        for p in (None, "cuda_core")
        for s in (False, True)
    ]
    sweep = sweep_configs(default_sweep(capability))
    variants = [dict(head_dim=128, dtype=f16, variant=v) for v in VARIANTS]
    # Most telling first (the budget may stop the list): variants, paths, then the sweep, whose
    # compiled kernels the benchmark then finds in Triton's cache.
    return variants + configs + [dict(head_dim=128, dtype=f16, split=False, **c) for c in sweep]


def launch_rows(deadline: float, label: str, dry_run: bool = False) -> list[dict]:
    """Registers, spills and shared memory of each compiled kernel, per launch configuration."""
    device = "cpu" if dry_run else "cuda"
    capability = None if dry_run else torch.cuda.get_device_capability(0)
    shape = (2, 24) if dry_run else (4, 1000)
    rows = []
    for config in launch_configs(capability, dry_run):
        config = dict(config)
        head_dim, dtype = config.pop("head_dim"), config.pop("dtype")
        row = dict(
            label=label, head_dim=head_dim, dtype=str(dtype).removeprefix("torch."), **config
        )
        if time.monotonic() > deadline:
            rows.append(row | dict(note="skipped: the time budget ran out"))
            continue
        case = make_inputs(
            *shape, 16, 4 if dry_run else 32, 2 if dry_run else 8, head_dim, dtype, device
        )
        try:
            ran = launch(*case, **config)
        except OutOfResources as exc:  # larger than this GPU's shared memory: filtered out
            rows.append(row | dict(note=f"skipped: does not fit this GPU: {exc}"[:300]))
            continue
        except Exception as exc:
            rows.append(row | dict(error=f"{type(exc).__name__}: {exc}"[:300]))
            continue
        cfg = ran.config
        for name, compiled in zip(("attention", "merge"), ran.compiled or [None], strict=False):
            rows.append(
                row
                | dict(
                    kernel=name,
                    path=cfg.path,
                    tile=cfg.tile,
                    variant=cfg.variant,
                    num_warps=cfg.num_warps,
                    num_stages=cfg.num_stages,
                    registers=getattr(compiled, "n_regs", ""),
                    spills=getattr(compiled, "n_spills", ""),
                    shared_bytes=getattr(getattr(compiled, "metadata", None), "shared", ""),
                )
            )
    return rows


__all__ = ["launch_configs", "launch_rows"]
