"""Model answers for the memory exercises (chapters 1-4, 8 and 9), one function per exercise.

Each uses only its arguments and builtins, so its source runs as typed into a chapter.
"""

from __future__ import annotations

__all__ = [
    "append_slot",
    "blocks_after_fork",
    "breakdown",
    "bytes_per_token",
    "first_fit",
    "pick_victims",
    "pow2_reservation",
    "slot",
    "swap_time",
    "wasted_slots",
    "write_slot",
]


def bytes_per_token(num_layers, num_kv_heads, head_dim, dtype_bytes):
    """K and V (2), in every layer, for every KV head: head_dim numbers of dtype_bytes each."""
    return 2 * num_layers * num_kv_heads * head_dim * dtype_bytes


def pow2_reservation(prompt_len, output_len, max_seq_len):
    """The prompt plus the output rounded up to a power of two, capped at max_seq_len."""
    rounded = 1
    while rounded < output_len:
        rounded *= 2
    return min(prompt_len + rounded, max_seq_len)


def first_fit(holes, size):
    """The start of the first hole, in address order, with room for `size` slots; else None."""
    for start, length in holes:
        if length >= size:
            return start
    return None


def slot(block_table, block_size, position):
    """The physical block that holds the token's logical block, and the offset inside it."""
    block = block_table[position // block_size]
    return block * block_size + position % block_size


def wasted_slots(num_tokens, block_size):
    """Empty slots left in the last block (none when it is full or there is no block)."""
    num_blocks = (num_tokens + block_size - 1) // block_size
    return num_blocks * block_size - num_tokens


def append_slot(table, num_tokens, block_size, free):
    """Store one more token: a new block only when the last one is full (or there is none)."""
    if num_tokens == len(table) * block_size:
        table.append(free.pop())
    return table[-1] * block_size + num_tokens % block_size


def breakdown(steps, kv_slots):
    """Average each category over the steps in which someone waits, else over the busy steps."""
    chosen = [usage for usage, waiting, _ in steps if waiting]
    if not chosen:
        chosen = [usage for usage, _, running in steps if running]
    return [sum(usage[c] for usage in chosen) / (len(chosen) * kv_slots) for c in range(4)]


def blocks_after_fork(prompt_len, num_samples, block_size):
    """The prompt's full blocks stay shared; each sample ends with one last block of its own."""
    return prompt_len // block_size + num_samples


def write_slot(table, num_tokens, block_size, free, refs):
    """append_slot with copy-on-write of a shared, partly filled last block."""
    offset = num_tokens % block_size
    copied = None
    if num_tokens == len(table) * block_size:  # the last block is full, or there is none
        table.append(free.pop())
        refs[table[-1]] = 1
    elif refs[table[-1]] > 1:  # the token goes into a block another sequence also holds
        old, new = table[-1], free.pop()
        refs[old] -= 1
        refs[new] = 1
        table[-1] = new
        copied = (old, new)
    return table[-1] * block_size + offset, copied


def pick_victims(running, blocks_needed, free_blocks, blocks_held):
    """Walk the running requests in arrival order; preempt the latest until each one fits."""
    running = list(running)
    victims = []
    i = 0
    while i < len(running):
        request = running[i]
        while blocks_needed[request] > free_blocks:
            victim = running.pop()  # the latest arrival, possibly `request` itself
            victims.append(victim)
            free_blocks += blocks_held[victim]  # all-or-nothing: every block comes back
            if victim == request:
                break
        else:
            free_blocks -= blocks_needed[request]
            i += 1
    return victims


def swap_time(num_blocks, block_size, bytes_per_token, num_layers, bytes_per_s, latency_s):
    """One transfer per block, layer and K/V, each paying the latency; the bytes cross once."""
    transfers = num_blocks * 2 * num_layers
    num_bytes = num_blocks * block_size * bytes_per_token
    return transfers * latency_s + num_bytes / bytes_per_s
