"""Slips of prefix caching's free queue and cache hits (chapter 12): freeing a request's blocks,
taking new ones (and the hashes that leaves behind), and the blocks a new request finds cached."""

from __future__ import annotations

from ...text import msg
from .base import slip


def _free(order=reversed, where="split", swapped=False, shared=False, one_by_one=False):
    """free_blocks with one slip, as a learner would write it."""

    def wrong(free_queue, block_table, ref_counts, hashed):
        freed = [b for b in order(block_table) if shared or ref_counts[b] == 1]
        if where == "front":
            return freed + list(free_queue)
        if where == "tail":
            return list(free_queue) + freed
        unhashed = [b for b in freed if b not in hashed]
        cached = [b for b in freed if b in hashed]
        front, tail = (cached, unhashed) if swapped else (unhashed, cached)
        if one_by_one:  # each put at the front in turn: the group comes out reversed once more
            front = front[::-1]
        return front + list(free_queue) + tail

    return wrong


FREE_QUEUE = {
    "free_queue.all_front": slip(
        _free(where="front"),
        "every block you freed went to the front of the queue, the cached ones too: the next "
        "allocation takes them first and evicts their hashes, while blocks no request can "
        "find again wait behind them.",
        "해제한 블록이 캐시된 것까지 모두 큐의 맨 앞으로 갔습니다. 그러면 다음 할당이 그 "
        "블록들을 먼저 가져가 해시를 축출하고, 어느 요청도 다시 찾을 수 없는 블록들은 그 뒤에서 "
        "기다립니다.",
    ),
    "free_queue.all_tail": slip(
        _free(where="tail"),
        "every block you freed went to the tail of the queue, the uncached ones too: a block "
        "no request can find again is then reused only after cached blocks have been evicted.",
        "해제한 블록이 캐시되지 않은 것까지 모두 큐의 꼬리로 갔습니다. 그러면 어느 요청도 다시 "
        "찾을 수 없는 블록이, 캐시된 블록들이 축출된 다음에야 재사용됩니다.",
    ),
    "free_queue.forward": slip(
        _free(order=list),
        "your freed blocks keep the block table's order, first block first. The free queue "
        "gets a request's blocks last block first, so that its first block, the prefix other "
        "requests share most, is reused or evicted last.",
        "해제한 블록이 블록 테이블 순서(첫 블록 먼저) 그대로입니다. 빈 블록 큐는 요청의 블록을 "
        "마지막 블록부터 받습니다. 그래야 다른 요청과 가장 많이 공유되는 접두사인 첫 블록이 "
        "가장 늦게 재사용되거나 축출됩니다.",
    ),
    "free_queue.shared_freed": slip(
        _free(shared=True),
        "a block another request still holds (its ref count is above 1) went into the free "
        "queue: an allocation could hand it out and overwrite K and V that request still reads.",
        "다른 요청이 아직 쥐고 있는 블록(참조 카운트가 1보다 큰 블록)이 빈 블록 큐에 "
        "들어갔습니다. 그러면 할당이 그 블록을 내주어, 그 요청이 아직 읽는 K와 V를 덮어쓸 수 "
        "있습니다.",
    ),
    "free_queue.swapped": slip(
        _free(swapped=True),
        "the cached blocks went to the front and the uncached ones to the tail: the queue "
        "then evicts hashes that a later request could hit, and keeps blocks nobody can find.",
        "캐시된 블록이 앞으로, 캐시되지 않은 블록이 뒤로 갔습니다. 그러면 큐가 뒤에 올 요청이 "
        "적중할 수 있는 해시를 먼저 축출하고, 아무도 찾을 수 없는 블록은 남겨 둡니다.",
    ),
    "free_queue.front_one_by_one": slip(
        _free(one_by_one=True),
        "the uncached blocks at the front of your queue come in the block table's order (its "
        "first block first), the reverse of the expected order; the cached ones at the tail "
        "are in the expected order.",
        "큐 앞쪽의 캐시되지 않은 블록이 블록 테이블 순서(첫 블록 먼저)로 놓여, 기대한 순서와 "
        "거꾸로입니다. 꼬리의 캐시된 블록은 기대한 순서대로입니다.",
    ),
}


def _take(tail=False, report="hash", check="value_error"):
    """take_blocks with one slip, as a learner would write it."""

    def wrong(free_queue, n, block_hash):
        queue = list(free_queue)
        if check == "value_error" and n > len(queue) or check == "all_raises" and n >= len(queue):
            raise ValueError(f"cannot take {n} blocks: {len(queue)} free")
        if check == "slice":
            taken = queue[:n]  # fewer blocks when the queue runs out
        else:  # pop one at a time (an empty list raises IndexError)
            taken = [queue.pop() if tail else queue.pop(0) for _ in range(n)]
        if report == "none":
            return taken, []
        if report == "get":
            return taken, [block_hash.get(b) for b in taken]
        if report == "ids":
            return taken, [b for b in taken if b in block_hash]
        return taken, [block_hash[b] for b in taken if b in block_hash]

    return wrong


NO_ERROR = msg(
    "asking for more blocks than the queue holds must raise ValueError, as the contract says; "
    "your function returned fewer blocks or failed another way.",
    "큐에 있는 것보다 많은 블록을 요청하면, 계약대로 ValueError를 일으켜야 합니다. 함수는 "
    "블록을 덜 돌려주었거나 다른 방식으로 실패했습니다.",
)

EVICTION = {
    "eviction.from_tail": slip(
        _take(tail=True),
        "you took blocks from the tail of the queue: those are the cached blocks freed most "
        "recently, the last ones to evict. Allocation takes the blocks that waited longest.",
        "블록을 큐의 꼬리에서 가져갔습니다. 그 블록들은 가장 최근에 해제된 캐시 블록으로, 가장 "
        "늦게 축출할 것들입니다. 할당은 가장 오래 기다린 블록을 가져갑니다.",
    ),
    "eviction.not_reported": slip(
        _take(report="none"),
        "some blocks you took were cached, and you reported no evicted hash: once a cached "
        "block is reused, its hash leaves the cache.",
        "가져간 블록 가운데 캐시된 것이 있는데, 축출된 해시를 하나도 알리지 않았습니다. 캐시된 "
        "블록이 재사용되면 그 해시는 캐시에서 빠집니다.",
    ),
    "eviction.uncached_reported": slip(
        _take(report="get"),
        "your evicted list has an entry for a block that was not cached: only a block that "
        "has a hash gives one up.",
        "축출 목록에 캐시되지 않은 블록의 항목이 들어 있습니다. 해시를 잃는 것은 해시가 있던 "
        "블록뿐입니다.",
    ),
    "eviction.block_ids": slip(
        _take(report="ids"),
        "your evicted list holds block ids; the spec asks for the hashes those blocks had.",
        "축출 목록에 블록 id가 들어 있습니다. 명세가 요구하는 것은 그 블록들이 갖고 있던 "
        "해시입니다.",
    ),
    "eviction.all_raises": slip(
        _take(check="all_raises"),
        "you raised ValueError when n equals the number of free blocks, where the expected "
        "answer takes every block of the queue.",
        "n이 빈 블록 수와 같을 때 ValueError를 일으켰습니다. 기대한 답은 그때 큐의 블록을 모두 "
        "가져갑니다.",
    ),
    "eviction.fewer": (_take(check="slice"), NO_ERROR),
    "eviction.index_error": (_take(check="pop"), NO_ERROR),
}


def _lookup(cap=lambda n, bs: (n - 1) // bs, skip=False, give="blocks"):
    """computed_blocks with one slip, as a learner would write it."""

    def wrong(hashes, num_tokens, block_size, cached):
        limit = len(hashes) if cap is None else max(0, cap(num_tokens, block_size))
        hits, found = [], []
        for h in hashes[:limit]:
            if h not in cached:
                if skip:
                    continue
                break
            hits.append(cached[h])
            found.append(h)
        if give == "tokens":
            return len(hits) * block_size
        if give == "count":
            return len(hits)
        return found if give == "hashes" else hits

    return wrong


A_NUMBER = msg(
    "your answer is a number, how much of the prompt is cached; the spec asks which physical "
    "blocks: a list of block ids, first block first, for the new request's block table.",
    "답이 수(프롬프트가 얼마나 캐시되어 있는지)입니다. 명세가 요구하는 것은 어느 물리 "
    "블록인지, 곧 새 요청의 블록 테이블에 들어갈 블록 id를 첫 블록부터 담은 list입니다.",
)

CACHE_HIT = {
    "cache_hit.no_cap": slip(
        _lookup(cap=None),
        "you took cached blocks up to the end of the prompt (or past it): the prompt's last "
        "token is always computed, since its logits give the first new token, so the block "
        "that holds it is never a hit.",
        "프롬프트 끝까지(또는 그 너머까지) 캐시된 블록을 가져갔습니다. 프롬프트의 마지막 토큰은 "
        "그 로짓이 첫 새 토큰을 정하므로 언제나 계산합니다. 그래서 그 토큰이 든 블록은 적중이 "
        "될 수 없습니다.",
    ),
    "cache_hit.cap_floor": slip(
        _lookup(cap=lambda n, bs: n // bs),
        "a prompt that ends exactly at a block boundary took its last full block from the "
        "cache; that block holds the last token, which is always computed.",
        "블록 경계에서 딱 끝나는 프롬프트가 마지막 꽉 찬 블록까지 캐시에서 가져갔습니다. 그 "
        "블록에는 언제나 계산하는 마지막 토큰이 들어 있습니다.",
    ),
    "cache_hit.skip_misses": slip(
        _lookup(skip=True),
        "you kept looking after the first miss: the request computes its prompt from the "
        "first block it does not find onward, so a hit further on is computed again anyway.",
        "첫 적중 실패 뒤에도 계속 찾았습니다. 요청은 찾지 못한 첫 블록부터 프롬프트를 계산하므로, "
        "그 뒤의 적중은 어차피 다시 계산됩니다.",
    ),
    "cache_hit.hashes": slip(
        _lookup(give="hashes"),
        "you returned the hashes that hit; the new request's block table needs the physical "
        "blocks the cache maps them to.",
        "적중한 해시를 반환했습니다. 새 요청의 블록 테이블에는 캐시가 그 해시에 대응시킨 물리 "
        "블록이 필요합니다.",
    ),
    "cache_hit.tokens": (_lookup(give="tokens"), A_NUMBER),
    "cache_hit.count": (_lookup(give="count"), A_NUMBER),
}
