"""Compile the kernels ahead of time for GPUs that are not here, and read their resource use.

    TRITON_INTERPRET=0 python -m paged.gpu.aot [--sm 75 80 90] [--head-dim 128 --group 4]
                                                     [--variant all | baseline prefetch ...]

Triton's Linux wheel ships `ptxas` and `cuobjdump`, so compiling for sm_75, sm_80 or sm_90 needs
no GPU. This shows what the CPU interpreter cannot: whether the kernels compile for that GPU at
all, and the registers, shared memory and spills each launch configuration and variant of
`launch.launch_config` costs. Spills show up in cuobjdump's STACK (the per-thread stack frame
that ptxas spills registers to; sm_75 at tile 64: `REG:255 STACK:1408 LOCAL:0`), not only in
LOCAL, so `spills` counts both. These are properties of the compiled code, not timings; the
occupancy they imply still has to be confirmed on the GPU: `registers.launch_rows` records the
same numbers from real launches there (MEASURED, `gpu_check`'s registers step).

Compiling needs a process where TRITON_INTERPRET is not 1; `report_jobs` starts
one. Every variant at its default launch, for the three GPUs (head_dim 128, group 4):
    TRITON_INTERPRET=0 python -m paged.gpu.aot --variant all
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

COLUMNS = (
    "kernel",
    "sm",
    "variant",
    "path",
    "head_dim",
    "group",
    "split",
    "tile",
    "num_warps",
    "num_stages",
    "mma",
    "registers",
    "stack_bytes",
    "local_bytes",
    "shared_bytes",
)
BALANCED_BLOCK_S = 64  # the balanced kernel's vector of seq_lens, compiled for 64 sequences


def _compile(fn, sm: int, types: dict, constexprs: dict, num_warps: int, num_stages: int):
    """triton.compile for a target GPU; pointers and strides are declared 16-aligned."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature = {n: "constexpr" if n in constexprs else types[n] for n in fn.arg_names}
    aligned = [n for n in fn.arg_names if n.endswith("_ptr") or n.startswith("stride")]
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in aligned}
    return triton.compile(
        ASTSource(fn, signature, constexprs, attrs),
        target=GPUTarget("cuda", sm, 32),
        options=dict(num_warps=num_warps, num_stages=num_stages),
    )


def parse_resource_usage(text: str) -> dict:
    """Registers, stack and local bytes from `cuobjdump --dump-resource-usage` output."""
    found = dict(re.findall(r"\b(REG|STACK|LOCAL):(\d+)", text))
    if "REG" not in found:
        raise ValueError(f"no REG:<n> in cuobjdump output: {text[:200]!r}")
    return dict(
        registers=int(found["REG"]),
        stack_bytes=int(found.get("STACK", 0)),
        local_bytes=int(found.get("LOCAL", 0)),
    )


def spills(row: dict) -> bool:
    """Whether a compiled kernel spills registers (stack frame or local memory in use)."""
    return row["stack_bytes"] > 0 or row["local_bytes"] > 0


def _resources(compiled) -> dict:
    """cuobjdump's registers, stack and local bytes; shared memory from Triton's metadata."""
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(compiled.asm["cubin"])
        f.flush()
        text = subprocess.run(
            [str(tool), "--dump-resource-usage", f.name], capture_output=True, text=True, check=True
        ).stdout
    ptx = compiled.asm["ptx"]  # which matrix instructions: Hopper's wgmma needs >= 64 rows
    mma = "wgmma" if "wgmma" in ptx else "mma" if "mma.sync" in ptx else "fma"
    # Dynamic shared memory: the pipeline's buffers.
    return parse_resource_usage(text) | dict(shared_bytes=compiled.metadata.shared, mma=mma)


def compile_rows(
    sm: int,
    head_dim=128,
    group=4,
    dtype="fp16",
    block_size=16,
    variant="baseline",
    only_unsplit=False,
    **overrides,
) -> list[dict]:
    """Compile one variant's attention kernel(s) and its merge for one GPU; one row each.

    `only_unsplit`: the unsplit attention kernel alone (a quicker check of one configuration).
    """
    import triton

    from ..attention import balanced, kernel
    from ..attention.launch import MAX_SEGMENTS, VARIANTS, launch_config

    if kernel.INTERPRETED:
        raise RuntimeError("TRITON_INTERPRET=1 is set: compile in a process without it")
    cfg = launch_config((sm // 10, sm % 10), head_dim, group, 512, variant=variant, **overrides)
    chosen = VARIANTS[variant]
    block_d = max(16, triton.next_power_of_2(head_dim))
    ptr = "*" + dtype
    types = dict(
        out_ptr=ptr,
        q_ptr=ptr,
        k_ptr=ptr,
        v_ptr=ptr,
        part_out_ptr="*fp32",
        part_lse_ptr="*fp32",
        block_table_ptr="*i32",
        seq_lens_ptr="*i32",
        plan_ptr="*i32",
        scale="fp32",
    )
    base = dict(
        sm=sm,
        variant=variant,
        path=cfg.path,
        dtype=dtype,
        head_dim=head_dim,
        group=group,
        tile=cfg.tile,
        num_warps=cfg.num_warps,
        num_stages=cfg.num_stages,
    )
    common = dict(
        HEAD_DIM=head_dim,
        BLOCK_D=block_d,
        BLOCK_SIZE=block_size,
        GROUP=group,
        BLOCK_G=cfg.block_g,
        TILE=cfg.tile,
        TENSOR_CORES=cfg.path == "tensor_core",
        PRECISION="tf32",
        PREFETCH=chosen.prefetch,
        EXP2=chosen.exp2,
    )
    if chosen.balanced:
        fn = balanced._paged_attention_balanced_kernel
        launches = [
            ("balanced", True, common | dict(BLOCK_S=BALANCED_BLOCK_S, MAX_CHUNKS=MAX_SEGMENTS))
        ]
    else:
        fn = kernel._paged_attention_kernel
        splits = (False,) if only_unsplit else (False, True)
        launches = [("attention", split, common | dict(SPLIT=split)) for split in splits]
    rows = []
    for name, split, constexprs in launches:
        arg_types = {n: types.get(n, "i32") for n in fn.arg_names}
        compiled = _compile(fn, sm, arg_types, constexprs, cfg.num_warps, cfg.num_stages)
        rows.append(dict(kernel=name, split=split) | base | _resources(compiled))
    if only_unsplit:
        return rows
    merge = kernel._merge_segments_kernel
    constexprs = dict(
        HEAD_DIM=head_dim, BLOCK_D=block_d, CHUNK=kernel.MERGE_CHUNK, BALANCED=chosen.balanced
    )
    compiled = _compile(
        merge, sm, {n: types.get(n, "i32") for n in merge.arg_names}, constexprs, 4, 1
    )
    merge_row = base | dict(tile="", num_warps=4, num_stages=1)
    rows.append(dict(kernel="merge", split=True) | merge_row | _resources(compiled))
    return rows


def report_jobs(jobs: list[dict], timeout=300) -> list[list[dict]]:
    """`compile_rows(**job)` for each job, all in one fresh process with TRITON_INTERPRET=0."""
    args = [sys.executable, "-m", "paged.gpu.aot", "--jobs", json.dumps(jobs)]
    env = os.environ | {"TRITON_INTERPRET": "0"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"ahead-of-time compile failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None) -> None:
    from ..attention.launch import VARIANTS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sm", type=int, nargs="+", default=[75, 80, 90])
    ap.add_argument("--variant", nargs="+", default=["baseline"], choices=(*VARIANTS, "all"))
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--dtype", default="fp16", choices=("fp16", "bf16", "fp32"))
    for name in ("tile", "num-warps", "num-stages"):
        ap.add_argument(f"--{name}", type=int, default=None, help="override the launch default")
    ap.add_argument("--path", default=None, choices=("tensor_core", "cuda_core"))
    ap.add_argument("--only-unsplit", action="store_true", help="the unsplit kernel alone")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    ap.add_argument("--jobs", help="a JSON list of compile_rows keyword dicts; prints JSON rows")
    args = ap.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 warns when unset
    if args.jobs:  # one process for many configurations: Triton's start-up is paid once
        print(json.dumps([compile_rows(**job) for job in json.loads(args.jobs)]))
        return
    overrides = {k: getattr(args, k) for k in ("tile", "num_warps", "num_stages", "path")}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    overrides["only_unsplit"] = args.only_unsplit
    variants = list(VARIANTS) if "all" in args.variant else args.variant
    rows = [
        row
        for sm in args.sm
        for variant in variants
        for row in compile_rows(
            sm, args.head_dim, args.group, args.dtype, variant=variant, **overrides
        )
    ]
    if args.json:
        print(json.dumps(rows))
        return
    print("  ".join(f"{c:>12s}" for c in COLUMNS) + "  spills")
    for row in rows:
        print("  ".join(f"{str(row[c]):>12s}" for c in COLUMNS) + f"  {spills(row)!s:>6s}")


if __name__ == "__main__":
    main()
