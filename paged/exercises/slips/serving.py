"""Slips of serving a real model: prefix caching's hash chain (chapter 11), the admission walk
(chapter 10)."""

from __future__ import annotations

import operator

from ...text import msg
from .base import slip


def _chain(parent_of=lambda h, block: h, block_of=None, partial=False, drop_full=False, kind=list):
    """block_hashes with one slip, as a learner would write it."""

    def wrong(token_ids, block_size):
        n = len(token_ids)
        count = -(-n // block_size) if partial else n // block_size
        if drop_full and n % block_size == 0:
            count -= 1
        hashes, parent = [], None
        for i in range(max(0, count)):
            block = tuple((block_of or _own)(token_ids, i, block_size))
            h = hash((parent, block))
            hashes.append(h)
            parent = parent_of(h, block)
        if kind is dict:
            return dict(enumerate(hashes))
        return (h for h in hashes) if kind == "generator" else hashes

    return wrong


def _folded(combine):
    """block_hashes whose chain folds the blocks' own hashes with `combine` (+, ^): a learner's
    chain that forgets which block came first."""

    def wrong(token_ids, block_size):
        hashes, h = [], 0
        for i in range(len(token_ids) // block_size):
            h = combine(h, hash(tuple(_own(token_ids, i, block_size))))
            hashes.append(h)
        return hashes

    return wrong


def _narrow(token_ids, block_size):
    """block_hashes cut to 20 bits (as a learner's `& 0xFFFFF`, a CRC cut short, a sum mod
    65,521): right on a few prompts, but tens of thousands of distinct prefixes share values."""
    hashes, h = [], 0
    for i in range(len(token_ids) // block_size):
        h = hash((h, tuple(_own(token_ids, i, block_size))))
        hashes.append(h % 2**20)
    return hashes


def _own(ids, i, bs):
    return ids[i * bs : (i + 1) * bs]


# Block i read one token off, as a learner slices it (a start below 0 wraps, or is clipped).
_NEIGHBOURS = (
    lambda ids, i, bs: ids[i * bs + 1 : (i + 1) * bs + 1],
    lambda ids, i, bs: ids[i * bs - 1 : (i + 1) * bs - 1],
    lambda ids, i, bs: ids[max(0, i * bs - 1) : max(0, i * bs - 1) + bs],
    lambda ids, i, bs: ids[max(0, i * bs - 1) : (i + 1) * bs - 1],
)

NEIGHBOUR = msg(
    "your hashes follow the tokens of a neighbouring block: changing one token of block j "
    "changes a hash before block j, or leaves block j's own hash as it was. Each hash covers "
    "the block_size tokens of its own block.",
    "해시가 이웃 블록의 토큰을 따라갑니다. 블록 j의 토큰 하나를 바꾸면 블록 j보다 앞의 해시가 "
    "바뀌거나, 블록 j 자신의 해시가 그대로입니다. 각 해시는 자기 블록의 토큰 block_size개를 "
    "덮어야 합니다.",
)


HASH_CHAIN = {
    "hash_chain.partial_hashed": slip(
        _chain(partial=True),
        "you gave the last, partly filled block a hash too; only full blocks get one (a partial "
        "block is still being written, so no other request can share it).",
        "덜 찬 마지막 블록에도 해시를 주었습니다. 해시는 꽉 찬 블록에만 붙습니다(덜 찬 블록은 "
        "아직 쓰이는 중이라 다른 요청과 나눌 수 없습니다).",
    ),
    "hash_chain.boundary_dropped": slip(
        _chain(drop_full=True),
        "when the prompt ends exactly at a block boundary, its last block is full, and it got no "
        "hash.",
        "프롬프트가 블록 경계에서 딱 끝나면 마지막 블록은 꽉 찬 블록인데, 그 블록에 해시가 "
        "없습니다.",
    ),
    "hash_chain.no_parent": slip(
        _chain(lambda h, block: None),
        "two blocks with the same tokens got the same hash although what comes before them "
        "differs; a block's hash has to name its whole prefix, not only its own tokens.",
        "토큰이 같은 두 블록이 앞선 내용이 다른데도 같은 해시를 받았습니다. 블록의 해시는 블록 "
        "자신의 토큰만이 아니라 그 앞의 접두사 전체를 나타내야 합니다.",
    ),
    "hash_chain.parent_tokens": slip(
        _chain(lambda h, block: block),
        "blocks that follow a difference two or more blocks back got equal hashes: a difference "
        "reaches only the next block. Every hash has to carry everything before it, down the "
        "whole chain.",
        "두 블록 이상 앞에서 달라진 뒤에 오는 블록들이 같은 해시를 받았습니다. 차이가 바로 다음 "
        "블록까지만 전해집니다. 모든 해시는 사슬을 따라 그 앞의 내용 전부를 담아야 합니다.",
    ),
    "hash_chain.folded_sum": slip(
        _folded(operator.add),
        "prompts that hold the same blocks in another order got equal hashes from the block "
        "where the same blocks have all come by: your chain does not see the order of the "
        "blocks before it.",
        "같은 블록들을 다른 순서로 담은 프롬프트들이, 같은 블록들이 모두 지나간 지점부터 같은 "
        "해시를 받았습니다. 사슬이 앞선 블록들의 순서를 보지 못합니다.",
    ),
    "hash_chain.folded_xor": slip(
        _folded(operator.xor),
        "prompts that hold the same blocks in another order got equal hashes, and so did two "
        "prompts that each repeat a block of their own ([x, x] and [y, y]): your chain does "
        "not see the order of the blocks before it, and a block seen twice cancels out.",
        "같은 블록들을 다른 순서로 담은 프롬프트들이 같은 해시를 받았고, 각자 자기 블록을 한 "
        "번 더 되풀이하는 두 프롬프트([x, x]와 [y, y])도 그랬습니다. 사슬이 앞선 블록들의 "
        "순서를 보지 못하고, 두 번 나온 블록은 서로 지워집니다.",
    ),
    "hash_chain.neighbour_ahead": (_chain(block_of=_NEIGHBOURS[0]), NEIGHBOUR),
    "hash_chain.neighbour_back": (_chain(block_of=_NEIGHBOURS[1]), NEIGHBOUR),
    "hash_chain.neighbour_back_clipped": (_chain(block_of=_NEIGHBOURS[2]), NEIGHBOUR),
    "hash_chain.neighbour_back_short": (_chain(block_of=_NEIGHBOURS[3]), NEIGHBOUR),
    "hash_chain.narrow": slip(
        _narrow,
        "two different prefixes got the same hash: among tens of thousands of prefixes that all "
        "differ, a hash came back twice, so a request would take a block that holds another "
        "prefix's K and V.",
        "서로 다른 두 접두사가 같은 해시를 받았습니다. 모두 다른 접두사 수만 개 가운데 같은 해시가 "
        "두 번 나왔으니, 요청이 다른 접두사의 K와 V를 담은 블록을 가져가게 됩니다.",
    ),
    "hash_chain.generator": slip(
        _chain(kind="generator"),
        "your function gives a generator; the caller counts the hashes and indexes them, so the "
        "spec asks for a list.",
        "함수가 generator를 돌려줍니다. 호출하는 쪽은 해시를 세고 인덱스로 꺼내므로, 명세는 "
        "list를 요구합니다.",
    ),
    "hash_chain.dict": slip(
        _chain(kind=dict),
        "your function returns a dict; the spec asks for a list, one hash per full block, in "
        "block order.",
        "함수가 dict를 반환합니다. 명세가 요구하는 것은 꽉 찬 블록마다 해시 하나씩, 블록 "
        "순서대로 담은 list입니다.",
    ),
}


def _rule(
    blocks=lambda p, n, bs: -(-p // bs),
    skip=False,
    watermark=True,
    take=True,
    strict=False,
    per_request=False,
):
    """The admission walk with one slip, as a learner might write it."""

    def wrong(waiting, free_blocks, block_size, watermark_blocks):
        wm = watermark_blocks if watermark else 0
        free, admitted = free_blocks, []
        for req_id, prompt_len, max_new_tokens in waiting:
            need = blocks(prompt_len, max_new_tokens, block_size)
            if need + wm > free or (strict and need + wm == free):
                if skip:
                    continue
                break
            admitted.append(req_id)
            if take:
                free -= need + (wm if per_request else 0)
        return admitted

    return wrong


ADMISSION = {
    "admission.reserved_max_new": slip(
        _rule(blocks=lambda p, n, bs: -(-(p + n) // bs)),
        "you reserved prompt + max_new_tokens, as the contiguous max_new_tokens reservation "
        "does; paging takes blocks only for the tokens a request holds now, its prompt.",
        "프롬프트 + max_new_tokens만큼 예약했습니다. 연속 할당의 max_new_tokens 예약이 "
        "그렇게 합니다. 페이징은 요청이 지금 가진 토큰, 곧 프롬프트만큼만 블록을 가져갑니다.",
    ),
    "admission.fcfs_skip": slip(
        _rule(skip=True),
        "admission is first come, first served: when the request at the head of the queue does "
        "not fit, the ones behind it wait too, even those that would fit.",
        "수락은 선착순입니다. 대기열 맨 앞의 요청이 들어가지 못하면, 그 뒤의 요청은 들어갈 수 "
        "있더라도 함께 기다립니다.",
    ),
    "admission.no_watermark": slip(
        _rule(watermark=False),
        "you admitted a request that leaves fewer than watermark_blocks free.",
        "요청을 수락한 뒤 빈 블록이 watermark_blocks보다 적게 남았습니다.",
    ),
    "admission.prompt_floor": slip(
        _rule(blocks=lambda p, n, bs: p // bs),
        "a prompt that ends partway into a block got one block too few.",
        "블록 중간에서 끝나는 프롬프트가 블록을 하나 덜 받았습니다.",
    ),
    "admission.no_take": slip(
        _rule(take=False),
        "each admitted request takes its blocks: the requests after it find fewer free blocks.",
        "수락된 요청은 블록을 가져갑니다. 그 뒤의 요청에게는 빈 블록이 그만큼 줄어듭니다.",
    ),
    "admission.strict_equal": slip(
        _rule(strict=True),
        "your walk stopped at a request whose blocks plus watermark_blocks come to exactly the "
        "free blocks; the expected answer admits that request.",
        "블록에 watermark_blocks를 더한 값이 빈 블록 수와 정확히 같은 요청에서 수락을 "
        "멈췄습니다. 기대한 답은 그 요청을 수락합니다.",
    ),
    "admission.watermark_per_request": slip(
        _rule(per_request=True),
        "the watermark is kept free once for the whole pool, not once per admitted request.",
        "워터마크는 수락한 요청마다가 아니라 풀 전체에 한 번만 비워 둡니다.",
    ),
    "admission.first_token_block": slip(
        _rule(blocks=lambda p, n, bs: -(-(p + 1) // bs)),
        "the first new token is sampled from the prompt's last position and stored in the next "
        "step: admission takes blocks for the prompt alone.",
        "첫 새 토큰은 프롬프트의 마지막 위치에서 샘플링되고 다음 단계에 저장됩니다. 수락할 때는 "
        "프롬프트만큼의 블록만 가져갑니다.",
    ),
}
