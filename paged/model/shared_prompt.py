"""A shared system prompt held once: what prefix sharing saves on real prompts (§4.4, §6.3).

Chat requests that use the same system prompt start with the same tokens, so their K and V for
those tokens are the same too. `generate(..., share_prefix=True)` lets the course's scheduler
hold that common prefix once (`Scheduler(shared_prefix=...)`): the prefix is prefilled once,
every request forks it (each full block of the prefix gains a reference, none is copied), and a
request's first own token copies the prefix's partly filled last block on write. Full blocks
are never written again, so they stay shared until the run is done.

`generate_shared` runs that, recording the memory map of every step, and counts the blocks held
with sharing against the blocks each request would hold on its own. The paper's metric (§6.3)
is "the number of blocks we saved by sharing divided by the number of total blocks without
sharing", here summed over every step of the run (MEASURED on the real prompts; the block
counts do not depend on the machine, only on the prompts and the tokens the model writes).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..paging import num_blocks_for
from ..pool import PREFIX
from .generate import GenerateResult, generate
from .llama import Llama

# Chapter 10's system prompt (a library's help desk), the one chapters 11 and 12 send to vLLM too
LIBRARY_SYSTEM = (
    "You are the help desk assistant of a public library. Answer in plain, friendly words and "
    "keep every answer short. If a question is about opening hours, say that the library opens "
    "at nine in the morning and closes at six in the evening, every day except Sunday. If you "
    "are not sure of something, say so and suggest asking a librarian at the front desk."
)


@dataclass(frozen=True)
class SharingResult:
    """The answers, and the blocks they held with and without sharing the common prefix."""

    run: GenerateResult  # the shared run: tokens, texts, trace with every step's memory map
    prefix_len: int  # tokens all prompts start with (capped so each keeps one of its own)
    shared_full_blocks: int  # full blocks of the prefix, held once by every request
    copies: int  # copy-on-write block copies (the prefix's partly filled last block)
    held: tuple[tuple[int, int], ...]  # (with sharing, without) at each step holding any block

    @property
    def blocks_after_prefill(self) -> tuple[int, int]:
        """(with sharing, without) after the first prefill."""
        return self.held[0]

    @property
    def peak_blocks(self) -> tuple[int, int]:
        """(with sharing, without): most blocks held at once."""
        return max(s for s, _ in self.held), max(p for _, p in self.held)

    @property
    def block_steps(self) -> tuple[int, int]:
        """(with sharing, without): blocks held, summed over steps."""
        return sum(s for s, _ in self.held), sum(p for _, p in self.held)

    @property
    def tokens(self) -> list[list[int]]:
        return self.run.tokens

    @property
    def texts(self) -> list[str]:
        return self.run.texts

    @property
    def saved(self) -> float:
        """§6.3's metric: blocks saved by sharing / blocks without sharing (over all steps)."""
        shared, private = self.block_steps
        return 1 - shared / private


def blocks_held(layout) -> tuple[int, int]:
    """(blocks held now, blocks the requests would hold each on their own) in one memory map."""
    held = {b for _, table, _ in layout.tables for b in table}
    alone = sum(
        num_blocks_for(n, layout.block_size) for seq, _, n in layout.tables if seq != PREFIX
    )
    return len(held), alone


def generate_shared(
    model: Llama,
    prompts: list[str],
    max_new_tokens: int,
    *,
    system: str | None = None,
    block_size: int = 16,
) -> SharingResult:
    """Greedy answers to `prompts`, the common prefix (system prompt) prefilled once and shared."""
    run = generate(
        model,
        prompts,
        max_new_tokens,
        system=system,
        block_size=block_size,
        share_prefix=True,
        record_layout=True,
    )
    return SharingResult(
        run=run,
        prefix_len=run.shared_prefix,
        shared_full_blocks=run.shared_prefix // block_size,
        copies=run.copies,
        held=tuple(blocks_held(s.layout) for s in run.trace if s.layout.tables),
    )
