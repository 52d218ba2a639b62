"""The checkers' engine, apart from what the chapters ask: it runs any exercise's spec.

`core` (a `Spec` and `check`, which runs it; `checker` makes a chapter's `check_<name>` and
registers its spec in `core.REGISTRY`), `verdicts` (what a verdict says), `contract` (arguments a
function must not change, the types an answer must have), `guard` (what an exercise may not call);
for the Triton puzzles `kernel_runner` (a puzzle's `KernelSpec` and its check), `kernel_cases` and
`triton_checks` (buffers, guards and the memory watch), `kernel_launch`, `kernel_try` (what each
program touched), `kernel_child` and `interpret` (a puzzle judged under the interpreter on a GPU
machine); `workspace` and `answer_file` (where a correct answer is kept, as a file of its own).
The chapters' specs live one level up (`paged.exercises`); the engine never imports them.
"""
