"""Reading the benchmark's rows: ratios between variants, a text table, the CSV and the figure.

`kernel_sweep.run` measures; this module only compares and draws what it measured. Each kernel
variant (`launch.VARIANTS`) gets, per shape, its speed-up over the baseline kernel on the same inputs
(`speedup_vs_baseline` = baseline time / variant time, > 1 is faster) and over FlexAttention's
paged path where that was timed at the same shape and block size (`speedup_vs_flex`). The
launcher's default (`launch.DEFAULT_VARIANT`) changes only after a GPU run has shown which
variant is best; `summary_lines` names the best per shape so the next step can be decided.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..attention.launch import DEFAULT_VARIANT
from ..text import msg

ROW = msg(
    "{what:30s} {shape:8s} block {block:>4s}  {result}",
    "{what:30s} {shape:8s} 블록 {block:>4s}  {result}",
)
TIMED = msg(
    "{ms:8.4f} ms {gbs:8.1f} GB/s, {peak}{copy}% of copy",
    "{ms:8.4f} ms {gbs:8.1f} GB/s, {peak}복사의 {copy} %",
)
OF_PEAK = msg("{pct}% of peak, ", "피크의 {pct} %, ")
HEADER = msg(
    "kernel variants ({label}; default today: {default!r})",
    "커널 변형 ({label}; 현재 기본값: {default!r})",
)
COLUMNS = msg(
    "  variant    shape         GB/s  % copy  x base  x flex",
    "  변형       형상          GB/s  복사 %   ×기준   ×flex",
)
BEST = msg(
    "  best on {shape}: {kernel} ({gbs} GB/s)",
    "  {shape}에서 가장 빠른 변형: {kernel} ({gbs} GB/s)",
)


def _timed(row: dict) -> bool:
    return row.get("time_ms") not in (None, "")


def add_ratios(rows: list[dict]) -> list[dict]:
    """Add speed-ups over the baseline variant and over FlexAttention (same shape, block size)."""
    base = {
        (r.get("shape"), r["block_size"]): r["time_ms"]
        for r in rows
        if _timed(r) and r["variant"] == "triton_variant" and r.get("kernel") == "baseline"
    }
    flex = {
        (r.get("shape"), r["block_size"]): r["time_ms"]
        for r in rows
        if _timed(r) and r["variant"] == "flex_paged"
    }
    for r in rows:
        if not _timed(r) or not r["variant"].startswith("triton"):
            continue
        key = (r.get("shape"), r["block_size"])
        if r["variant"] == "triton_variant" and key in base:
            r["speedup_vs_baseline"] = round(base[key] / r["time_ms"], 3)
        if key in flex:
            r["speedup_vs_flex"] = round(flex[key] / r["time_ms"], 3)
    return rows


def variant_rows(rows: list[dict]) -> list[dict]:
    """The side-by-side rows: one per variant and shape, timed or with the reason why not."""
    return [r for r in rows if r["variant"] == "triton_variant"]


def row_lines(rows: list[dict]) -> list[str]:
    """One line per row: what ran, where, and its time and bandwidth or why it did not run."""
    lines = []
    for r in rows:
        result = r.get("note", "")
        if _timed(r):
            peak = OF_PEAK.format(pct=r["pct_of_peak"]) if r.get("pct_of_peak") else ""
            result = TIMED.format(
                ms=r["time_ms"], gbs=r["gb_per_s"], peak=peak, copy=r["pct_of_copy"]
            )
        what = f"{r['variant']} {r.get('kernel', '')}".strip()
        lines.append(
            ROW.format(what=what, shape=r["shape"], block=str(r["block_size"]), result=result)
        )
    return lines


def summary_lines(rows: list[dict]) -> list[str]:
    """The variant table as text: GB/s, % of copy, speed-ups; the best variant per shape."""
    found = variant_rows(rows)
    if not found:
        return []
    lines = [HEADER.format(label=found[0]["label"], default=DEFAULT_VARIANT), str(COLUMNS)]
    for r in found:
        if _timed(r):
            lines.append(
                f"  {r['kernel']:10s} {r['shape']:9s} {r['gb_per_s']:8.1f} {r['pct_of_copy']:7}"
                f" {r.get('speedup_vs_baseline', ''):>7} {r.get('speedup_vs_flex', ''):>7}"
            )
        else:
            lines.append(f"  {r['kernel']:10s} {r['shape']:9s} {r['note']}")
    for shape in dict.fromkeys(r["shape"] for r in found):
        timed = [r for r in found if r["shape"] == shape and _timed(r)]
        if timed:
            best = min(timed, key=lambda r: r["time_ms"])
            lines.append(BEST.format(shape=shape, kernel=best["kernel"], gbs=best["gb_per_s"]))
    return lines


def write_csv(rows: list[dict], path: Path) -> None:
    """All rows, with the union of their columns (a skipped variant has no time)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def plot(rows: list[dict], path: Path, caption: str) -> None:
    """Block sizes (GB/s) with baselines and ceilings; variants by shape; the launch sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .bandwidth import peak_bandwidth

    timed = [r for r in rows if _timed(r)]
    fig, (ax, ax1, ax2) = plt.subplots(1, 3, figsize=(15, 4.6), dpi=120, width_ratios=(3, 2, 2))
    headline = [r for r in timed if r.get("shape", "uniform") == "uniform"]
    for variant, style in (
        ("triton_paged_shuffled", "o-"),
        ("triton_paged_identity", "s--"),
        ("flex_paged", "D"),
        ("fa2_paged_varlen", "*"),
    ):
        pts = sorted((r["block_size"], r["gb_per_s"]) for r in headline if r["variant"] == variant)
        if pts:
            ax.plot(*zip(*pts, strict=True), style, label=variant.replace("_", " "))
    for r in timed:
        if r["variant"] == "torch_sdpa_contiguous":
            ax.axhline(r["gb_per_s"], color="gray", ls=":", label="SDPA (flash), contiguous K/V")
    peak = peak_bandwidth(rows[0]["device"])
    if peak:
        ax.axhline(peak / 1e9, color="black", lw=0.8, label="spec peak bandwidth (DOCS)")
    copies = [r for r in timed if r.get("pct_of_copy")]
    if copies:
        copy_gbps = copies[0]["gb_per_s"] * 100 / copies[0]["pct_of_copy"]
        ax.axhline(copy_gbps, color="black", ls="--", lw=0.8, label="device copy (MEASURED)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (tokens)")
    ax.set_ylabel("K/V bytes read / time (GB/s)")
    ax.set_title(f"{rows[0]['label']}: paged decode attention", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    found = variant_rows(timed)
    shapes = list(dict.fromkeys(r["shape"] for r in found))
    kernels = list(dict.fromkeys(r["kernel"] for r in found))
    width = 0.8 / max(1, len(kernels))
    for i, name in enumerate(kernels):
        pts = [
            (shapes.index(r["shape"]) + i * width, r["gb_per_s"])
            for r in found
            if r["kernel"] == name
        ]
        ax1.bar(*zip(*pts, strict=True), width=width, label=name)
    ax1.set_xticks([i + (len(kernels) - 1) * width / 2 for i in range(len(shapes))], shapes)
    ax1.set_ylabel("GB/s at block size 16")
    ax1.set_title("kernel variants, same inputs", fontsize=10)
    if kernels:
        ax1.legend(fontsize=7)
    configs = sorted((r["gb_per_s"], _config_name(r)) for r in timed if "config" in r["variant"])
    if configs:
        ax2.barh([n for _, n in configs], [g for g, _ in configs], color="#0072B2")
        ax2.tick_params(axis="y", labelsize=5)
    ax2.set_xlabel("GB/s at block size 16")
    ax2.set_title("launch options (tile / warps / stages)", fontsize=10)
    fig.text(0.01, 0.01, caption, fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def _config_name(row: dict) -> str:
    return f"t{row.get('tile', '-')} w{row.get('num_warps', '-')} s{row.get('num_stages', '-')}"


def device_slug(device: str) -> str:
    """A device name as a file name's part: "NVIDIA H100 80GB HBM3" -> "NVIDIA_H100_80GB_HBM3"."""
    return re.sub(r"[^A-Za-z0-9]+", "_", device).strip("_")


def caption_for(rows: list[dict], dtype: str) -> str:
    """Device, versions and shape: what a MEASURED figure must name."""
    import torch
    import triton

    r = rows[0]
    return (
        f"{r['label']}; torch {torch.__version__}, triton {triton.__version__}; batch "
        f"{r['batch']} x {r['seq_len']} tokens, {r['num_q_heads']} q / {r['num_kv_heads']} kv "
        f"heads, d={r['head_dim']}, {dtype}"
    )
