"""On a CUDA GPU, a Triton puzzle is judged under the CPU interpreter, in a child process.

Two reasons. A learner's kernel that reads far past its tensors on a GPU does not just give a
wrong value: the launch fails with "an illegal memory access was encountered", and CUDA refuses
every later call in that process, so the notebook must be restarted and loses its state (seen on
an H200, the first GPU run of the checkers). And what the checker watches (which lanes each
program loaded and stored, whose share a store hit, whether the tl.dot fed the output) exists only
under the interpreter. So where this process compiles kernels for a GPU, `check_kernel` and
`trial` hand the kernel to `judge`: it writes the kernel's source, with the globals it names,
into a module in a temporary folder, and runs a fresh Python with TRITON_INTERPRET=1 on it
(`python -m paged.exercises.engine.interpret DIR`), which checks it exactly as a machine without a GPU
does and prints the same verdict; the parent relays that text and returns the child's result.
While the child starts (seconds: a fresh Python imports torch and Triton), a line on stderr
says what the learner is waiting for.

A kernel travels when it is a @triton.jit function itself (not a wrapper such as
@triton.autotune) whose source can be read, and each global its source names is a module,
something of Triton's language (a dtype, tl.exp, tl.sum), another @triton.jit function (its
source travels too), a `tl.constexpr`, or a plain constant (int, float, bool, str, None, or a
tuple of them): what a GPU compiles in a kernel anyway (Triton refuses other globals). Otherwise the learner is told which part could not travel, and
nothing runs on the GPU. Only a spec that is not the registry's (a test's variant of one; the
child knows a puzzle by its name) is checked in this process (`judge` returns `UNKNOWN_SPEC`).
"""

from __future__ import annotations

import ast
import inspect
import os
import pickle
import re
import subprocess
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from ...text import msg
from .triton_checks import interpreted

__all__: list[str] = []  # kernel_runner and kernel_try call judge

UNKNOWN_SPEC = object()  # judge's answer for a spec the child cannot look up by its name
MODULE = "learner_kernel"  # the module the child writes and imports
TIMEOUT_S = 600
TIMED_OUT = msg(
    "{name}: your kernel ran for more than {seconds} s under Triton's CPU interpreter on the "
    "puzzle's small cases and was stopped (a loop whose bound never ends?).",
    "{name}: 퍼즐의 작은 사례에서 여러분의 커널이 Triton의 CPU 인터프리터로 {seconds}초 넘게 실행되어 "
    "중단했습니다(끝나지 않는 반복문이 있나요?).",
)
NOT_SENT = msg(
    "{name}: the checker runs your kernel under Triton's CPU interpreter in a separate process, "
    "and could not send it there: {why}. Pass such a value as an argument, or make it a "
    "tl.constexpr.",
    "{name}: 채점기는 여러분의 커널을 별도 프로세스의 Triton CPU 인터프리터에서 실행하는데, 커널을 "
    "그곳에 보내지 못했습니다: {why}. 그런 값은 인자로 넘기거나 tl.constexpr로 만드세요.",
)
WHY_WRAPPED = msg(
    "it is not a @triton.jit function itself but wraps one ({kind})",
    "@triton.jit 함수 자체가 아니라 그것을 감싼 것입니다({kind})",
)
WHY_NO_SOURCE = msg("the source of {fn} cannot be read", "{fn}의 소스를 읽을 수 없습니다")
WHY_GLOBAL = msg(
    "{fn} reads the global {glob!r}, a {kind}",
    "{fn} 함수가 읽는 전역 값 {glob!r}의 타입: {kind}",
)
WAIT = msg(
    "({name}: checking your kernel under Triton's CPU interpreter, in a process of its own: a few "
    "seconds)",
    "({name}: Triton의 CPU 인터프리터로 별도 프로세스에서 커널을 검사하는 중입니다. 몇 초 "
    "걸립니다)",
)
CHILD_FAILED = msg(
    "{name}: the interpreter's process that checks your kernel stopped without a verdict "
    "(exit status {code}): {tail}",
    "{name}: 커널을 검사하는 인터프리터 프로세스가 판정 없이 멈췄습니다(종료 상태 {code}): {tail}",
)


def apart() -> bool:
    """Whether kernels are judged in a child: this process compiles them for a GPU."""
    return not interpreted()


def _source(fn) -> str:
    """fn's source from its `def` on, dedented (decorators dropped: the child adds its own)."""
    src = textwrap.dedent(inspect.getsource(fn))
    start = re.search(rf"^def\s+{re.escape(fn.__name__)}\s*\(", src, re.MULTILINE)
    if start is None:
        raise ValueError(f"no 'def {fn.__name__}(' in its source")
    return src[start.start() :]


def _literal(value) -> str | None:
    """value as Python source when it reads back as itself, else None."""
    try:
        text = repr(value)
        return text if ast.literal_eval(text) == value else None
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None


def _in_triton(value) -> str | None:
    """Source naming `value` where Triton's language defines it (a dtype such as tl.float16, a
    function such as tl.exp, a helper such as tl.sum), or None."""
    if type(value).__name__ == "dtype" and repr(value).startswith("triton.language."):
        return f"importlib.import_module('triton.language').{repr(value).rsplit('.', 1)[1]}"
    fn = getattr(value, "fn", value)
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", None)
    if module.startswith("triton.language") and name:
        return f"importlib.import_module({module!r}).{name}"
    return None


def _jitted(obj) -> bool:
    """A @triton.jit function itself (not a wrapper around one): its source can travel."""
    kinds = ("JITFunction", "InterpretedFunction")
    return type(obj).__name__ in kinds and isinstance(getattr(obj, "fn", None), types.FunctionType)


class CannotSend(Exception):
    """The kernel cannot travel to the child; the message says why, for the learner."""


def module_text(kernel) -> str:
    """The module the child imports: kernel's globals, its helpers' sources, its own source
    (decorated with @triton.jit), named as in the learner's code. Raises `CannotSend`."""
    if not _jitted(kernel):
        raise CannotSend(WHY_WRAPPED.format(kind=type(kernel).__name__))
    header, bodies, seen = ["import importlib", "import triton"], [], set()

    def add(fn) -> None:
        if fn.__name__ in seen:
            return
        seen.add(fn.__name__)
        try:
            src = _source(fn)
        except (OSError, TypeError, ValueError):
            raise CannotSend(WHY_NO_SOURCE.format(fn=fn.__name__)) from None
        # every name the source reads, its signature's annotations and defaults included
        names = {node.id for node in ast.walk(ast.parse(src)) if isinstance(node, ast.Name)}
        for name in sorted(names & set(fn.__globals__)):
            value = fn.__globals__[name]
            if isinstance(value, types.ModuleType):
                header.append(f"{name} = importlib.import_module({value.__name__!r})")
            elif in_triton := _in_triton(value):
                header.append(f"{name} = {in_triton}")
            elif _jitted(value):
                add(value.fn)
            elif type(value).__name__ == "constexpr" and (text := _literal(value.value)):
                header.append(f"{name} = triton.language.constexpr({text})")
            elif text := _literal(value):
                header.append(f"{name} = {text}")
            else:
                kind = type(value).__name__
                raise CannotSend(WHY_GLOBAL.format(fn=fn.__name__, glob=name, kind=kind))
        bodies.append("@triton.jit\n" + src)

    add(kernel.fn)
    return "\n".join(dict.fromkeys(header)) + "\n\n\n" + "\n\n".join(bodies)


def judge(op: str, spec, kernel, seed: int | None = None):
    """Run `op` ("check": check_kernel's bool; "try": trial's Trial or None) on `kernel` for the
    puzzle `spec` in a child under the interpreter; its printed verdict is printed here. A kernel
    that cannot travel is told why; a spec that is not the registry's gets UNKNOWN_SPEC."""
    from .core import REGISTRY

    if REGISTRY.get(spec.name) is not spec:
        return UNKNOWN_SPEC
    puzzle, failed = spec.name, False if op == "check" else None
    try:
        text = module_text(kernel)
    except CannotSend as why:
        print(NOT_SENT.format(name=puzzle, why=why))
        return failed
    with tempfile.TemporaryDirectory(prefix="paged-kernel-") as tmp:
        folder = Path(tmp)
        (folder / f"{MODULE}.py").write_text(text, encoding="utf-8")
        job = dict(op=op, puzzle=puzzle, kernel=kernel.fn.__name__, seed=seed)
        (folder / "job.pkl").write_bytes(pickle.dumps(job))
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONIOENCODING="utf-8")
        here = str(Path(__file__).resolve().parents[2])  # the folder that holds `paged`
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "paged.exercises.engine.interpret", str(folder)]
        print(WAIT.format(name=puzzle), file=sys.stderr, flush=True)  # the child's start is slow
        try:
            done = subprocess.run(
                cmd, env=env, capture_output=True, encoding="utf-8", timeout=TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            print(TIMED_OUT.format(name=puzzle, seconds=TIMEOUT_S))
            return failed
        print(done.stdout, end="")
        result = folder / "result.pkl"
        if done.returncode or not result.exists():
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            print(CHILD_FAILED.format(name=puzzle, code=done.returncode, tail=tail))
            return failed
        return pickle.loads(result.read_bytes())
