"""Slips of chapter 9's preemption: choosing the victims, the time a swap takes."""

from __future__ import annotations

from .base import slip


def _walk(
    earliest=False, self_only=False, free_all=True, consume=True, need_check=True, skip_victims=True
):
    """The preemption walk with one slip, as a learner might write it."""

    def wrong(running, needed, free, held):
        alive, victims = list(running), []
        for r in running:
            if skip_victims and r not in alive:
                continue
            gone = False
            while alive and (needed[r] > free if need_check else free == 0):
                victim = r if self_only else alive[0] if earliest else alive[-1]
                alive.remove(victim)
                victims.append(victim)
                free += held[victim] if free_all else 1
                if victim == r:
                    gone = True
                    break
            if not gone and consume:
                free -= needed[r]
        return victims

    return wrong


VICTIMS = {
    "victims.earliest": slip(
        _walk(earliest=True),
        "you preempted the earliest arrival; the paper preempts the latest one first (the end "
        "of running).",
        "가장 먼저 도착한 요청을 선점했습니다. 논문은 가장 늦게 도착한 요청(running의 끝)부터 "
        "선점합니다.",
    ),
    "victims.self_only": slip(
        _walk(self_only=True),
        "the victim is the latest-arrived running request, which need not be the one that needs "
        "the block.",
        "선점되는 것은 가장 늦게 도착한 실행 중 요청이고, 블록이 필요한 요청과 다를 수 있습니다.",
    ),
    "victims.one_block_freed": slip(
        _walk(free_all=False),
        "a victim gives back every block it holds (all-or-nothing), not just one.",
        "선점된 요청은 가진 블록을 하나가 아니라 전부 돌려줍니다(all-or-nothing).",
    ),
    "victims.no_consume": slip(
        _walk(consume=False),
        "each request that takes a block leaves one fewer free block for those after it.",
        "블록을 가져간 요청이 있으면 뒤의 요청에게 남는 빈 블록이 하나 줄어듭니다.",
    ),
    "victims.needs_always": slip(
        _walk(need_check=False),
        "a request whose last block still has room needs no new block: it never causes a "
        "preemption, even when nothing is free.",
        "마지막 블록에 자리가 남은 요청은 새 블록이 필요 없습니다. 빈 블록이 없어도 선점을 "
        "일으키지 않습니다.",
    ),
    "victims.not_skipped": slip(
        _walk(skip_victims=False),
        "a preempted request leaves the running requests: it stores no token in this step, so "
        "it takes no block and is not preempted twice.",
        "선점된 요청은 실행 중 목록에서 빠집니다. 이번 단계에는 토큰을 저장하지 않으므로 블록을 "
        "가져가지 않고, 두 번 선점되지도 않습니다.",
    ),
}


SWAP = {
    "swap.one_transfer": slip(
        lambda nb, bs, bpt, layers, bw, lat: nb * lat + nb * bs * bpt / bw,
        "each block moves as 2 x num_layers transfers (K and V of every layer), not one.",
        "블록 하나는 한 번이 아니라 2 × num_layers번(모든 레이어의 K와 V) 전송됩니다.",
    ),
    "swap.no_latency": slip(
        lambda nb, bs, bpt, layers, bw, lat: nb * bs * bpt / bw,
        "you left out the fixed latency that every transfer pays.",
        "전송마다 드는 고정 지연 시간을 빠뜨렸습니다.",
    ),
    "swap.latency_only": slip(
        lambda nb, bs, bpt, layers, bw, lat: nb * 2 * layers * lat,
        "you counted only the fixed latencies: the bytes themselves also take time to cross PCIe.",
        "고정 지연 시간만 셌습니다. 바이트 자체가 PCIe를 건너는 데도 시간이 걸립니다.",
    ),
    "swap.half_latencies": slip(
        lambda nb, bs, bpt, layers, bw, lat: nb * layers * lat + nb * bs * bpt / bw,
        "your time pays half the latencies: a layer's K and V do not move in one transfer.",
        "지연 시간을 절반만 치렀습니다. 한 레이어의 K와 V는 한 번의 전송으로 옮겨지지 않습니다.",
    ),
    "swap.bytes_twice": slip(
        lambda nb, bs, bpt, layers, bw, lat: nb * 2 * layers * (lat + bs * bpt / bw),
        "your time moves every block's bytes 2 x num_layers times; bytes_per_token already "
        "covers K and V of every layer.",
        "블록의 바이트를 2 × num_layers번 옮겼습니다. bytes_per_token에는 이미 모든 레이어의 K와 V가 들어 있습니다.",
    ),
}
