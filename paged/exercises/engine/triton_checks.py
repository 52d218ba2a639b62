"""What every Triton checker shares: guarded buffers, the addresses a kernel touched, verdicts.

`kernel_runner.check_kernel` runs every puzzle on these, always under Triton's CPU interpreter
(on a GPU in `kernel_child`'s process). It launches the learner's @triton.jit kernel on small
cases whose outputs start filled with a sentinel (a kernel that writes nothing is "not yet") and
whose inputs sit inside guarded buffers. Two ways make an out-of-range access visible:

- under Triton's CPU interpreter (`TRITON_INTERPRET=1`), `Watch.run()` wraps, for one launch,
  every `InterpreterBuilder` entry point that touches memory (`ACCESSES`: masked load and store,
  which plain loads and stores reach too, and the atomics; the same hook points in Triton 3.5
  and 3.9), and checks every lane that goes through against the elements its program may touch
  (a rule per buffer, or per program: `Buffer`). Lanes that point outside every buffer of the
  case are switched off before they reach memory, so a wild pointer cannot crash the notebook.
  It also counts tl.dot calls, and can perturb their results (`Watch.perturb`);
- by value: guards and the slots that hold no token are poisoned (NaN, huge numbers,
  sentinels), so that an unmasked read or write changes what the kernel stores. (Run compiled on
  a GPU, only a test's own spec does that, and only this way tells.)
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import torch

from .verdicts import AT, NEVER, OUTSIDE, STRAY_ATOMIC, STRAY_LOAD, STRAY_STORE

__all__: list[str] = []  # helpers for basics.py and kernels.py, which export the checkers

# Outputs start as this: a value no puzzle's right answer takes (0.5 was one: a 1 x 1 dot of
# quarters, a softmax row of two equal scores). Exact in float32, float16 and bfloat16 (-3 x 2^-20);
# negative, so never a probability; not a multiple of 1/16, so never a sum of products of
# integers or quarters; and a copy of random data meets it with no real chance.
SENTINEL = -3 * 2.0**-20
MAX_REPORTED = 1  # a verdict names the first stray address; the count says how many more


def is_kernel(obj) -> bool:
    """A @triton.jit kernel (JITFunction, or InterpretedFunction under the interpreter)."""
    return callable(getattr(obj, "__getitem__", None)) and hasattr(obj, "fn")


def interpreted() -> bool:
    """Whether kernels run under Triton's CPU interpreter here."""
    from ...attention import backend

    return backend() == "interpreter"


def device() -> str:
    return "cpu" if interpreted() else "cuda"


@dataclasses.dataclass
class Buffer:
    """One allocation of a case: which of its elements a program may load or store."""

    name: str
    flat: torch.Tensor  # the whole allocation, 1-D, guards included
    load: object  # bool array over flat's elements, or pid -> such an array
    store: object
    where: object  # flat element index -> words for a verdict


# Interpreter entry points that touch memory: (kind, index of the pointers, index of the mask or
# None) among their arguments after the builder. Atomics read and write: "atomic". The atomic
# load and store reach create_masked_load/store in Triton 3.9; hooked too, they are checked once.
ACCESSES = {
    "create_masked_load": ("load", 0, 1),
    "create_masked_store": ("store", 0, 2),
    "create_atomic_rmw": ("atomic", 1, 3),  # atomic_add, _max, _min, _and, _or, _xor, _xchg
    "create_atomic_cas": ("atomic", 0, None),
    "create_atomic_load": ("load", 0, 1),
    "create_atomic_store": ("store", 0, 2),
}


class Watch:
    """The buffers of one case; under the interpreter, what one launch touched and how.

    `stray[kind]` holds the first lanes that touched an element their program may not (a load
    outside `Buffer.load`, a store outside `Buffer.store`, an atomic outside both); with
    `record=True`, `accesses` lists every (kind, buffer name, elements, pid) that reached a
    buffer; with `perturb` set (a numpy Generator), every tl.dot result gets a large random
    offset, so that a launch shows whether its dots reach the output; `dots[pid]` counts each
    program's tl.dot calls. `count["tf32"]` counts the dots on float32 operands at TF32
    precision (Triton's default on NVIDIA GPUs; the interpreter multiplies them in full float32
    all the same).
    """

    def __init__(self, record: bool = False):
        self.buffers: list[Buffer] = []
        self.stray = {"load": [], "store": [], "atomic": []}  # (buffer or None, element, pid)
        self.count = {"load": 0, "store": 0, "atomic": 0, "dot": 0, "tf32": 0}
        self.dots: dict[tuple, int] = {}  # program -> its tl.dot calls
        self.dims = 1  # grid dimensions in use, to name a program as the learner launched it
        self.accesses = [] if record else None
        self.grid = None  # the launch's grid (x, y, z), under the interpreter
        self.perturb = None
        self._inside = False  # in a hooked entry point: what it calls is checked already

    def add(self, name, flat, load=True, store=False, where=None) -> torch.Tensor:
        n = flat.numel()
        load = np.full(n, load) if isinstance(load, bool) else load
        store = np.full(n, store) if isinstance(store, bool) else store
        self.buffers.append(Buffer(name, flat, load, store, where or (lambda i: f"{name}[{i}]")))
        return flat

    @contextlib.contextmanager
    def run(self):
        """Check every load, store and atomic while the body launches a kernel (interpreter
        only), and count (or perturb) its tl.dot calls."""
        if not interpreted():
            yield self
            return
        from triton.runtime.interpreter import InterpreterBuilder as builder

        saved = {n: getattr(builder, n) for n in [*ACCESSES, "create_dot"] if hasattr(builder, n)}
        for name, original in saved.items():
            hook = (
                self._hook(original, *ACCESSES[name]) if name in ACCESSES else self._dot(original)
            )
            setattr(builder, name, hook)
        try:
            yield self
        finally:
            for name, original in saved.items():
                setattr(builder, name, original)

    def _hook(self, original, kind, at_ptrs, at_mask):
        def hooked(b, *args, **kw):
            if self._inside:
                return original(b, *args, **kw)
            args = list(args)
            ptrs = args[at_ptrs]
            mask = None if at_mask is None else args[at_mask]
            on = self._check(b, ptrs, mask, kind)
            if at_mask is not None:
                args[at_mask] = dataclasses.replace(mask, data=on)
            elif not on.all():  # no mask to switch a lane off: point it at a scratch word
                data = np.asarray(ptrs.data).copy()
                data[~on] = self._scratch.ctypes.data
                args[at_ptrs] = dataclasses.replace(ptrs, data=data)
            self._inside = True
            try:
                return original(b, *args, **kw)
            finally:
                self._inside = False

        return hooked

    def _dot(self, original):
        def counted(b, *args, **kw):
            self.count["dot"] += 1
            pid = tuple(getattr(b, "grid_idx", None) or (0, 0, 0))
            self.dots[pid] = self.dots.get(pid, 0) + 1
            a, b_, precision = args[0], args[1], args[3] if len(args) > 3 else None
            if str(precision).endswith(".TF32") and "fp32" in (str(a.dtype), str(b_.dtype)):
                self.count["tf32"] += 1
            out = original(b, *args, **kw)
            if self.perturb is None or not out.data.size:
                return out
            data = out.data
            finite = np.abs(data[np.isfinite(data)])
            size = 1.0 + float(finite.max(initial=0.0))
            noise = self.perturb.uniform(1.0, 2.0, data.shape) * size
            return dataclasses.replace(out, data=(data + noise).astype(data.dtype))

        return counted

    _scratch = np.zeros(2, np.float64)  # where a stray lane of an unmasked atomic lands

    def _check(self, b, ptrs, mask, kind) -> np.ndarray:
        """The lanes that may go on: those that point into a buffer (each checked against its
        rule and recorded); lanes outside every buffer are recorded and switched off."""
        addr = np.asarray(ptrs.data).astype(np.int64)
        on = np.ones(addr.shape, bool)
        if mask is not None:
            on = np.broadcast_to(np.asarray(mask.data, dtype=bool), addr.shape).copy()
        pid = tuple(getattr(b, "grid_idx", None) or (0, 0, 0))
        self.dims = max([1] + [i + 1 for i, n in enumerate(getattr(b, "grid_dim", ())) if n > 1])
        self.grid = tuple(getattr(b, "grid_dim", None) or (1, 1, 1))
        known = np.zeros(addr.shape, dtype=bool)
        for buf in self.buffers:
            size = buf.flat.element_size()
            lo = buf.flat.data_ptr()
            inside = on & (addr >= lo) & (addr < lo + buf.flat.numel() * size)
            known |= inside
            if not inside.any():
                continue
            elems = (addr[inside] - lo) // size
            ok = np.ones(len(elems), bool)
            for rule in ("load", "store") if kind == "atomic" else (kind,):
                allowed = getattr(buf, rule)
                ok &= (allowed(pid) if callable(allowed) else allowed)[elems]
            self._record(kind, buf, elems[~ok], pid)
            if self.accesses is not None:
                self.accesses.append((kind, buf.name, elems, pid))
        outside = on & ~known
        if outside.any():
            self._record(kind, None, addr[outside], pid)
            on &= known  # never touch memory that belongs to no buffer
        return on

    def _record(self, kind, buf, elems, pid):
        self.count[kind] += len(elems)
        room = MAX_REPORTED - len(self.stray[kind])
        self.stray[kind] += [(buf, int(e), pid) for e in elems[: max(room, 0)]]

    def describe(self, kind: str) -> str | None:
        """The first stray lane of `kind` ("load", "store", "atomic") in words, or None."""
        if not self.stray[kind]:
            return None
        buf, elem, pid = self.stray[kind][0]
        what = str(OUTSIDE) if buf is None else buf.where(elem)
        template = {"load": STRAY_LOAD, "store": STRAY_STORE, "atomic": STRAY_ATOMIC}[kind]
        return template.format(pid=self.pid_name(pid), what=what, count=self.count[kind])

    def pid_name(self, pid) -> object:
        """A program as the learner launched it: 2, or (1, 0) on a 2-D grid."""
        return pid[0] if self.dims == 1 else pid[: self.dims]


def whole(t: torch.Tensor) -> torch.Tensor:
    """The whole allocation behind a view, as a 1-D tensor (t starts at t.storage_offset())."""
    storage = t.untyped_storage()
    return t.new_empty(0).set_(storage, 0, (storage.nbytes() // t.element_size(),))


def strays_in(flat: torch.Tensor, allowed: np.ndarray, fill: float) -> np.ndarray:
    """Indexes of `flat` outside `allowed` that no longer hold `fill` (seen on any device)."""
    values = flat.cpu().numpy()
    same = (values == fill) | (np.isnan(values) & np.isnan(fill))
    return np.nonzero(~allowed & ~same)[0]


def first_difference(name: str, got: torch.Tensor, want: torch.Tensor, tol: float = 0.0) -> str:
    """Words for the first element where got and want differ: "out[1, 6] holds nan, ..."."""
    bad = ~torch.isclose(
        got.double().cpu(), want.double().cpu(), rtol=tol, atol=tol, equal_nan=True
    )
    idx = tuple(
        int(i) for i in np.unravel_index(int(torch.nonzero(bad.flatten())[0]), tuple(got.shape))
    )
    at = f"{name}[{', '.join(map(str, idx))}]"
    g, w = got[idx].item(), want[idx].item()
    if g == SENTINEL:
        return NEVER.format(at=at)
    digits = next((d for d in (4, 6, 8, 17) if f"{g:.{d}g}" != f"{w:.{d}g}"), 17)
    return AT.format(at=at, got=f"{g:.{digits}g}", want=f"{w:.{digits}g}")


def same(got: torch.Tensor, want: torch.Tensor, tol: float = 0.0) -> bool:
    """Equal (within tol), NaN where NaN, inf where inf."""
    got, want = got.double().cpu(), want.double().cpu()
    return got.shape == want.shape and bool(
        torch.isclose(got, want, rtol=tol, atol=tol, equal_nan=True).all()
    )


NAN = float("nan")


def grid_mask(numel: int, stride: int, M: int, N: int) -> np.ndarray:
    """Over a buffer of `numel` elements: True at the cells of a row-major (M, N) matrix."""
    may = np.zeros(numel, bool)
    may[(np.arange(M)[:, None] * stride + np.arange(N)).ravel()] = True
    return may


def cell_namer(name, stride, M, N):
    """Names element i of a row-major (M, N) buffer with row stride `stride`, with its edges."""

    def where(i):
        r, c = divmod(i, stride)
        return (
            f"{name}[{r}, {c}]" + (" (c >= N)" if c >= N else "") + (" (r >= M)" if r >= M else "")
        )

    return where
