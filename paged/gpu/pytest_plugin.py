"""Run the kernel's pytest files under a time limit, in parallel shards, keeping JUnit XML.

On a GPU the kernel and benchmark tests compile about 110 Triton kernels; compiling is CPU work,
so `run_tests` splits the tests into `shards` pytest processes (test i goes to shard i % shards,
by this module's own pytest plugin: `-p paged.gpu.pytest_plugin --shard i/n`). At the time
limit each process gets SIGINT, which pytest treats as Ctrl-C: it stops, still writes its
JUnit XML (`pytest-<i>.xml`) with the tests that ran, and exits; a process that does not stop
within `GRACE_S` is killed. `parse_junit` adds the files up. Used by `gpu_check`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

try:
    from pytest import hookimpl
except ImportError:  # the package itself does not need pytest

    def hookimpl(**_):
        return lambda fn: fn


# the kernel and the benchmark; and the puzzles' checkers sending kernels to the interpreter's
# child from a process that compiles for the GPU (a wild read named, CUDA still usable after)
TESTS = ("tests/test_attention.py", "tests/test_bench.py", "tests/test_exercises_kernel_child.py")
GRACE_S = 20  # after SIGINT: time to finish the test at hand and write the XML


def pytest_addoption(parser):
    """The plugin's one option (pytest calls this when loaded with -p)."""
    parser.addoption("--shard", default=None, help="i/n: run every n-th test, from the i-th")


@hookimpl(trylast=True)  # after -k and -m have deselected: the shards split what is left
def pytest_collection_modifyitems(config, items):
    """Keep only this shard's tests."""
    shard = config.getoption("--shard")
    if shard:
        i, n = map(int, shard.split("/"))
        config.hook.pytest_deselected(items=[t for k, t in enumerate(items) if k % n != i])
        items[:] = [item for k, item in enumerate(items) if k % n == i]


def parse_junit(paths) -> dict:
    """Totals and the names of failed tests from one or more pytest JUnit XML files."""
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    failed = []
    for path in [paths] if isinstance(paths, Path | str) else paths:
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        for key in totals:
            totals[key] += sum(int(s.get(key, 0)) for s in suites)
        failed += [
            f"{case.get('classname')}::{case.get('name')}"
            for case in root.iter("testcase")
            if case.find("failure") is not None or case.find("error") is not None
        ]
    return totals | dict(failed=failed)


def _default_sigint() -> None:
    """In the child: SIGINT back to its default. A process started in the background of a
    non-interactive shell inherits SIGINT ignored, and then the SIGINT below would not stop
    pytest, which would be killed without writing its XML."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_tests(
    out: Path, timeout: float, paths=TESTS, select: str | None = None, shards: int = 1
) -> dict:
    """pytest on `paths` (relative to the checkout) in `shards` processes, within `timeout` s."""
    root = Path(__file__).resolve().parents[2]
    out = Path(out).resolve()  # pytest runs in the checkout: its paths must not be relative
    files = [root / p for p in paths]
    if not all(p.exists() for p in files):
        return dict(failed=[f"tests not found under {root} (run from a source checkout)"])
    args = [sys.executable, "-m", "pytest", *map(str, files), "-q", "-rs", "-p", "no:cacheprovider"]
    args += ["-k", select] if select else []
    for old in out.glob("pytest-*.*"):
        old.unlink()
    procs = []
    for i in range(shards):
        log = open(out / f"pytest-{i}.log", "w")  # noqa: SIM115 (closed below)
        plugin = ["-p", "paged.gpu.pytest_plugin", "--shard", f"{i}/{shards}"]
        shard = plugin if shards > 1 else []  # one process needs no plugin
        cmd = [*args, *shard, f"--junitxml={out / f'pytest-{i}.xml'}"]
        procs.append(
            (
                subprocess.Popen(
                    cmd,
                    cwd=root,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_default_sigint if os.name == "posix" else None,
                ),
                log,
            )
        )
    deadline = time.monotonic() + max(1.0, timeout - GRACE_S)
    interrupted = False
    for proc, _ in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            interrupted = True
    for proc, log in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # pytest stops and still writes its XML
            try:
                proc.wait(timeout=GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
    xmls = sorted(out.glob("pytest-*.xml"))
    result = parse_junit(xmls) if xmls else dict(failed=[])
    if interrupted:
        result["failed"].append(f"pytest did not finish within {timeout:.0f} s (partial results)")
    codes = [proc.returncode for proc, _ in procs]
    if len(xmls) < shards:
        result["failed"].append(f"{shards - len(xmls)} pytest process(es) left no report")
    elif any(c not in (0, 5) for c in codes) and not result["failed"]:  # 5: shard had no tests
        result["failed"].append(f"pytest exited {codes}")
    return result | dict(shards=shards, exit_codes=codes)


def default_shards() -> int:
    """Parallel pytest processes: one per 4 CPUs, 1 to 4 (compiles are CPU-bound)."""
    return max(1, min(4, (os.cpu_count() or 1) // 4))
