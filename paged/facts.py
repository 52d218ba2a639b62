"""Numbers quoted from the paper (label: PAPER), kept in one place so every chapter agrees.

Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023, arXiv:2309.06180. See shared FACTS.md for the page of each.
"""

PAPER = "Kwon et al., SOSP 2023 (arXiv:2309.06180)"

# Fig. 2: average KV-cache usage (%) "during the experiment in §6.2" (the caption names no
# single model or trace).
# None: the paper shows no bar for that category. vLLM's remaining 3.7 % is not split.
FIG2_BREAKDOWN = {
    "max": {
        "token_states": 20.4,
        "reservation": 13.3,
        "internal_fragmentation": 57.3,
        "external_fragmentation": 8.9,
    },
    "pow2": {
        "token_states": 26.8,
        "reservation": 17.9,
        "internal_fragmentation": 13.6,
        "external_fragmentation": 41.6,
    },
    "oracle": {
        "token_states": 38.2,
        "reservation": 25.2,
        "internal_fragmentation": None,
        "external_fragmentation": 36.6,
    },
    "paged": {
        "token_states": 96.3,
        "reservation": None,
        "internal_fragmentation": None,
        "external_fragmentation": None,
    },
}
FIG2_SYSTEM_NAMES = {
    "max": "Orca (Max)",
    "pow2": "Orca (Pow2)",
    "oracle": "Orca (Oracle)",
    "paged": "vLLM",
}

# §6.2, OPT-13B on ShareGPT: vLLM batches this many times more requests than ...
BATCH_RATIO_VS_ORACLE = 2.2
BATCH_RATIO_VS_MAX = 4.3

# Fig. 13a: average number of batched requests, OPT-13B on ShareGPT at 2 reqs/s (the rate its
# caption names).
FIG13A_MEAN_BATCH = {"max": 7.00, "pow2": 9.81, "oracle": 13.62, "paged": 30.42}
# Fig. 15b (OPT-13B, Alpaca, beam search): memory saved by sharing (%), by beam width.
FIG15B_BEAM_SAVING = {2: 37.56, 4: 53.13, 6: 55.16}

# §6.1 workloads: mean prompt / output tokens.
SHAREGPT_MEANS = (161.31, 337.99)
ALPACA_MEANS = (19.31, 58.45)

# Table 1: OPT-13B on one A100-40GB: "12 GB" for KV cache, "15.7K" KV slots (as printed).
A100_40GB_KV_SLOTS_APPROX = 15_700

# §7.1 / Fig. 18a: PagedAttention kernel latency overhead vs FasterTransformer's kernel.
KERNEL_OVERHEAD_PCT = (20, 26)
# §7.2 / Fig. 18b: block sizes the paper found best.
BEST_BLOCK_SIZES = {"sharegpt": (16, 128), "alpaca": (16, 32)}
