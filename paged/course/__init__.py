"""How the course itself runs: a learner never needs to read it, and nothing in `paged` imports it.

`colab` (the repository name, Colab badges and setup cells: `python -m paged.course --repo`),
`editions` (the Korean edition kept in step with the English one), `glossary` (one Korean term per
concept), `runner` (re-executes notebooks), `sim_bench`, `widget_bench` and `ttft_bench` (time
the simulator, the widgets, a cached prefix's first token beside vLLM's). Importing the package
imports none of them.
"""
