"""Compile the kernels ahead of time for GPUs that are not here, and read their resource use.

    TRITON_INTERPRET=0 python -m paged.attention.aot [--sm 75 80 90] [--head-dim 128 --group 4]

Triton's Linux wheel ships `ptxas` and `cuobjdump`, so compiling for sm_75, sm_80 or sm_90 needs
no GPU. This shows what the CPU interpreter cannot: whether the kernels compile for that GPU at
all, and the registers, shared memory and local memory (spills) each launch configuration of
`launch.launch_config` costs. These are properties of the compiled code, not timings; the
occupancy they imply still has to be confirmed on the GPU (`gpu_check` records the same
numbers from real launches, MEASURED).

Compiling needs a process where TRITON_INTERPRET is not 1; `report` starts one when needed.
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

COLUMNS = ("kernel", "sm", "path", "dtype", "head_dim", "group", "split", "tile", "num_warps",
           "num_stages", "registers", "shared_bytes", "local_bytes")  # fmt: skip


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


def _resources(compiled) -> dict:
    """Registers and local (spill) bytes from cuobjdump; shared memory from Triton's metadata."""
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(compiled.asm["cubin"])
        f.flush()
        text = subprocess.run(
            [str(tool), "--dump-resource-usage", f.name], capture_output=True, text=True, check=True
        ).stdout
    found = dict(re.findall(r"(REG|LOCAL):(\d+)", text))
    shared = compiled.metadata.shared  # dynamic shared memory: the pipeline's buffers
    return dict(registers=int(found["REG"]), shared_bytes=shared, local_bytes=int(found["LOCAL"]))


def compile_rows(sm: int, head_dim=128, group=4, dtype="fp16", block_size=16, **overrides):
    """Compile the attention kernel (unsplit, split) and the merge for one GPU; one row each."""
    import triton

    from . import kernel
    from .launch import launch_config

    if kernel.INTERPRETED:
        raise RuntimeError("TRITON_INTERPRET=1 is set: compile in a process without it")
    cfg = launch_config((sm // 10, sm % 10), head_dim, group, 512, **overrides)
    block_d = max(16, triton.next_power_of_2(head_dim))
    ptr, rows = "*" + dtype, []
    types = dict(out_ptr=ptr, q_ptr=ptr, k_ptr=ptr, v_ptr=ptr, part_out_ptr="*fp32",
                 part_lse_ptr="*fp32", block_table_ptr="*i32", seq_lens_ptr="*i32",
                 scale="fp32")  # fmt: skip
    types = {n: types.get(n, "i32") for n in kernel._paged_attention_kernel.arg_names} | types
    base = dict(kernel="attention", sm=sm, path=cfg.path, dtype=dtype, head_dim=head_dim,
                group=group, tile=cfg.tile, num_warps=cfg.num_warps,
                num_stages=cfg.num_stages)  # fmt: skip
    for split in (False, True):
        constexprs = dict(
            HEAD_DIM=head_dim, BLOCK_D=block_d, BLOCK_SIZE=block_size, GROUP=group,
            BLOCK_G=cfg.block_g, TILE=cfg.tile, SPLIT=split,
            TENSOR_CORES=cfg.path == "tensor_core", PRECISION="tf32",
        )  # fmt: skip
        fn = kernel._paged_attention_kernel
        compiled = _compile(fn, sm, types, constexprs, cfg.num_warps, cfg.num_stages)
        rows.append(base | dict(split=split) | _resources(compiled))
    merge = kernel._merge_segments_kernel
    types = {n: "i32" for n in merge.arg_names} | dict(
        out_ptr=ptr, part_out_ptr="*fp32", part_lse_ptr="*fp32", seq_lens_ptr="*i32"
    )
    constexprs = dict(HEAD_DIM=head_dim, BLOCK_D=block_d, CHUNK=kernel.MERGE_CHUNK)
    compiled = _compile(merge, sm, types, constexprs, 4, 1)
    merge_row = base | dict(kernel="merge", split=True, tile="", num_warps=4, num_stages=1)
    rows.append(merge_row | _resources(compiled))
    return rows


def report(sms=(75, 80, 90), timeout=300, **shape) -> list[dict]:
    """`compile_rows` for each sm, in a fresh process with TRITON_INTERPRET=0."""
    args = [sys.executable, "-m", "paged.attention.aot", "--json", "--sm", *map(str, sms)]
    for key, value in shape.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    env = os.environ | {"TRITON_INTERPRET": "0"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"ahead-of-time compile failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sm", type=int, nargs="+", default=[75, 80, 90])
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--dtype", default="fp16", choices=("fp16", "bf16", "fp32"))
    ap.add_argument("--json", action="store_true", help="print one JSON line (for `report`)")
    args = ap.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 warns when unset
    rows = [
        row for sm in args.sm for row in compile_rows(sm, args.head_dim, args.group, args.dtype)
    ]
    if args.json:
        print(json.dumps(rows))
        return
    print("  ".join(f"{c:>12s}" for c in COLUMNS))
    for row in rows:
        print("  ".join(f"{str(row[c]):>12s}" for c in COLUMNS))


if __name__ == "__main__":
    main()
