"""How the course itself runs; a learner never needs to read this package.

`colab` (the repository name, Colab badges and setup cells: `python -m paged.course --repo`),
`editions` (the Korean edition kept in step with the English one), `runner` (re-executes
notebooks), `fonts` (a Hangul font for figures), `moved` (old module paths keep working),
`sim_bench` and `widget_bench` (time the simulator and the widgets).
"""

from .colab import runtime_hint  # chapters 0 and 7 call it as paged.course.runtime_hint

__all__ = ["runtime_hint"]
