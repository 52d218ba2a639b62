"""How the course itself runs: a learner never needs to read it, and nothing in `paged` imports it.

`colab` (the repository name, Colab badges and setup cells: `python -m paged.course --repo`),
`editions` (the Korean edition kept in step with the English one), `glossary` (one Korean term per
concept), `runner` (re-executes notebooks), `sim_bench` and `widget_bench` (time the simulator and
the widgets). Importing the package imports none of them.
"""
