"""The learner's engine (chapter 13): the course's scheduler and model, made of the learner's pieces.

Every answer a checker called correct is kept in the learner's workspace
(`paged.exercises.engine.workspace`). `pieces.load()` reads it: each engine piece kept there is the
learner's (`pieces.ROLES`: the chapter that teaches it, its job), the rest are the course's.
`generate` serves real prompts on SmolLM2 with them (`engine.py`), `simulate` a simulated
workload, both in lock-step with the course's own scheduler: every piece's call is judged as its
checker judges a case (`referee.py`), every step compared, and the first difference named with
its piece, step, inputs and both answers. The pieces do their jobs inside the course's
allocators (`allocators.py`), scheduler (`scheduler.py`) and attention (`attention.py`).
"""

from .engine import YourResult, YourSimulation, generate, simulate
from .pieces import Piece, load, table
from .referee import Difference

__all__ = [
    "Difference",
    "Piece",
    "YourResult",
    "YourSimulation",
    "generate",
    "load",
    "simulate",
    "table",
]
