"""The kernel chapter's split-K merge puzzle, as a `KernelSpec` (exported by `kernels.py`).

Partitions of one row of attention come with their outputs and log-sum-exps; the merge weighs
them by softmax over the LSEs. The cases hold empty partitions (lse -inf), BLOCK_P above
num_parts, LSEs in the hundreds and near ±1000, and rows whose LSEs lie 100 to 3000 apart, with
the largest in a different partition in each row: a merge that subtracts one partition's lse,
or the mean, instead of the largest leaves the float range there, in float64 too.
"""

from __future__ import annotations

import numpy as np
import torch

from .engine.core import checker
from .engine.kernel_cases import element, output
from .engine.kernel_runner import Case, KernelSpec
from .engine.triton_checks import Watch, device, same
from .engine.verdicts import UNMASKED_LOAD
from .slips.kernels_paged import MERGE

__all__: list[str] = []  # exported by kernels.py

PART = 8  # tokens per partition
SPREAD = (0.0, -100.0, -3000.0, -7.0, -250.0)  # LSE offsets of a row's partitions, rotated per row


def _merge_case(params, seed):
    """Partial outputs and LSEs of `rows` rows of attention split into `parts` partitions."""
    rows, parts, block_p, empty, shift, spread, head_dim = params
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, parts * PART, generator=g).double() * 2 + shift
    if spread:
        for r in range(rows):
            offsets = torch.tensor([SPREAD[(p + r + 1) % len(SPREAD)] for p in range(parts)])
            scores[r] += offsets.double().repeat_interleave(PART)
    values = torch.randn(rows, parts * PART, head_dim, generator=g).double()
    scores[0, (parts - empty) * PART :] = float("-inf")  # row 0 is a shorter sequence
    s = scores.view(rows, parts, PART)
    lse = torch.logsumexp(s, -1).float()  # (rows, parts): -inf for an empty partition
    weights = torch.softmax(s, -1).nan_to_num(0.0)  # an empty partition: all -inf, weights 0
    o = (weights[..., None] * values.view(rows, parts, PART, -1)).sum(2).float()
    o_flat = torch.full((o.numel() + block_p * head_dim,), float("nan"))
    o_flat[: o.numel()] = o.flatten()
    l_flat = torch.full((lse.numel() + block_p,), float("nan"))
    l_flat[: lse.numel()] = lse.flatten()
    o_flat, l_flat = o_flat.to(device()), l_flat.to(device())
    out_flat, out = output((rows, head_dim), device(), head_dim)
    watch = Watch()
    shapes = {
        "part_out": (rows, parts, head_dim),
        "part_lse": (rows, parts),
        "out": (rows, head_dim),
    }
    for (buf, shape), flat in zip(shapes.items(), (o_flat, l_flat, out_flat), strict=True):
        idx, w = np.arange(flat.numel()), int(np.prod(shape[1:]))

        def mine(pid, idx=idx, w=w):  # program r reads and writes row r only
            return (idx >= pid[0] * w) & (idx < (pid[0] + 1) * w)

        watch.add(
            buf,
            flat,
            load=mine if buf != "out" else False,
            store=mine if buf == "out" else False,
            where=lambda i, b=buf, s=shape: element(b, s, i),
        )
    lse64, o64 = lse.double(), o.double()  # the truth of the numbers the kernel reads
    want = torch.einsum("rp,rpd->rd", torch.softmax(lse64, 1), o64)
    extra = (f", lse around {shift:+.0f}" if shift else "") + (", LSEs far apart" if spread else "")
    return Case(
        where=f"{rows} rows, num_parts {parts}, BLOCK_P {block_p}, HEAD_DIM {head_dim}" + extra,
        watch=watch,
        run=lambda k: k[(rows,)](
            o_flat, l_flat, out_flat, parts, HEAD_DIM=head_dim, BLOCK_P=block_p
        ),
        outputs=[("out", out_flat, np.arange(out_flat.numel()) < out.numel())],
        got=lambda: out.cpu().double(),
        want=want,
        views=[
            ("part_lse", "load", 0, rows, parts, parts, 1),
            ("out", "store", 0, rows, 1, head_dim, head_dim),
        ],
        data={"o": o64, "lse": lse64, "block_p": block_p, "big": bool(shift or spread)},
    )


def _merge_draw(rng):
    parts = rng.choice((1, 2, 3, 4, 5))
    block_p = max(1, 1 << (parts - 1).bit_length()) * rng.choice((1, 2))
    return (
        rng.choice((1, 2, 3)),
        parts,
        block_p,
        rng.randrange(parts),
        rng.choice((0.0, 300.0, 1000.0, -1000.0)),
        rng.random() < 0.5,
        rng.choice((4, 8, 16, 32, 64)),
    )


def _weighted(f, w):
    return torch.einsum("rp,rpd->rd", w, f.o)


def _pad_zero(f):
    pad = f.lse.new_zeros(f.lse.shape[0], f.block_p - f.lse.shape[1])
    return torch.softmax(torch.cat([f.lse, pad], 1), 1)[:, : f.lse.shape[1]]


MERGE_SPEC = KernelSpec(
    name="merge_kernel",
    # (rows, num_parts, BLOCK_P, empty, shift, spread, HEAD_DIM): `empty` trailing partitions
    # of row 0 hold no token (lse -inf, output 0, as the split kernel leaves them); `shift`
    # moves the LSEs to the hundreds or thousands; `spread` puts a row's LSEs 100 to 3000 apart.
    fixed=(
        (3, 3, 4, 1, 0.0, False, 16),
        (2, 1, 2, 0, 0.0, False, 8),
        (2, 5, 8, 2, 0.0, False, 32),
        (2, 4, 4, 1, 300.0, False, 4),
        (3, 4, 16, 0, 1000.0, True, 16),
        (2, 3, 4, 0, -1000.0, True, 64),
    ),
    build=_merge_case,
    draw=_merge_draw,
    tol=1e-4,
    summary="empty partitions, BLOCK_P above num_parts, HEAD_DIM 4-64, LSEs near ±1000 and "
    "3000 apart",
    store_hints=((lambda f: True, MERGE["store"]),),
    value_hints=(
        (lambda f: not bool(torch.isfinite(f.got).all()) and f.big, MERGE["overflow"]),
        (lambda f: same(f.got, _weighted(f, _pad_zero(f)), 1e-4), MERGE["pad_zero"]),
        (
            lambda f: same(
                f.got, _weighted(f, torch.exp(f.lse - f.lse.max(1, keepdim=True).values)), 1e-4
            ),
            MERGE["no_norm"],
        ),
        (lambda f: same(f.got, f.o.mean(1), 1e-4), MERGE["mean"]),
        (lambda f: bool(f.watch.describe("load")), UNMASKED_LOAD),
    ),
)


check_merge_kernel = checker(
    MERGE_SPEC,
    """kernel[(rows,)](part_out, part_lse, out, num_parts, HEAD_DIM=, BLOCK_P=): out[r] =
    sum_p w_p part_out[r, p], w = softmax over p of part_lse[r, p]; BLOCK_P >= num_parts.
    """,
)
