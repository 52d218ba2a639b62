"""Experiments the chapters and figures share, one module per chapter: `policies` (chapter 4:
the policies head to head, the block-size sweep), `sharing` (chapter 8: block sharing in parallel
sampling and beam search), `caching` (chapter 12: what prefix caching saves).

Keeping them here means a notebook and `python -m paged.viz.figures` can never disagree about
how a number was made. All results are SIMULATED. The chapters call them by this package's
names, `experiments.block_size_sweep(...)`.
"""

from .caching import caching_savings
from .policies import block_size_sweep, compare_policies
from .sharing import (
    SCORE_VOCAB,
    SURVIVOR_RULES,
    beam_search_sharing,
    beam_search_steps,
    blocks_held_by_samples,
    sampling_sharing,
    stand_in_top_probability,
)

__all__ = [
    "SCORE_VOCAB",
    "SURVIVOR_RULES",
    "beam_search_sharing",
    "beam_search_steps",
    "block_size_sweep",
    "blocks_held_by_samples",
    "caching_savings",
    "compare_policies",
    "sampling_sharing",
    "stand_in_top_probability",
]
