"""Model answer for the serving exercise (chapter 10), one function per exercise.

It uses only its arguments and builtins, so its source runs as typed into the chapter.
"""

from __future__ import annotations

__all__ = ["admit"]


def admit(waiting, free_blocks, block_size, watermark_blocks):
    """First come, first served: each takes its prompt's blocks; the first misfit stops the rest."""
    admitted = []
    for req_id, prompt_len, _ in waiting:  # no blocks for max_new_tokens yet
        need = (prompt_len + block_size - 1) // block_size
        if need + watermark_blocks > free_blocks:
            break  # the requests behind it wait too
        free_blocks -= need
        admitted.append(req_id)
    return admitted
