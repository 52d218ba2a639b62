"""Exercises: checkers that say "correct" or why not, and model answers shown only on request.

Each chapter's exercise is a stub the learner fills in; the chapter's next cell hands it to a
checker here (`check_first_fit(first_fit)`), whose ground truth is the library itself. A stub
that still raises NotImplementedError gets a friendly "not yet", so a notebook runs top to bottom
before anything is solved; a wrong answer gets the case it failed on and, when it matches a
typical mistake, a hint that names the mistake without giving the answer away. After an
attempt, `solution("first_fit")` prints a model answer (they live in `answers/`). Before a Triton
puzzle's verdict, `paged.viz.kernel_reads.try_kernel(my_kernel)` runs it once and draws what each
program touched (`kernel_try` records it).

By chapter topic: `memory` (KV sizes, allocators, slots, sharing, preemption), `attention`
(PyTorch: gather and merge), `basics` (the Triton on-ramp puzzles), `kernels` (the paged
kernel's Triton puzzles), `serving` (the real model's chapter), `prefix` (chapter 11's block
hashes), `block_pool` (chapter 12: prefix caching's free queue and cache hits). Every checker is
listed in its module's `__all__`, and is `engine.core.checker(spec)` of a `Spec` (or a Triton
puzzle's `KernelSpec`) that the engine runs (`engine/`, which never imports these modules);
`SPECS` maps each exercise's name to its spec, registered as each checker is made. The typical
mistakes and their hints are named once, by concept, in the `slips` catalogue; the verdicts and
the symptoms in `engine/verdicts.py`.
"""

from . import attention, basics, block_pool, decode, engine, kernels, memory, prefix, serving
from .answers import solution
from .attention import *  # noqa: F403
from .basics import *  # noqa: F403
from .block_pool import *  # noqa: F403
from .decode import *  # noqa: F403
from .kernels import *  # noqa: F403
from .memory import *  # noqa: F403
from .prefix import *  # noqa: F403
from .serving import *  # noqa: F403

__all__ = [
    "solution",
    *attention.__all__,
    *basics.__all__,
    *block_pool.__all__,
    *decode.__all__,
    *kernels.__all__,
    *memory.__all__,
    *prefix.__all__,
    *serving.__all__,
]

# Every exercise's spec, by name (the name `solution` and the checker's verdicts use): the
# engine's registry, which every checker above filled as it was made.
SPECS = engine.core.REGISTRY
