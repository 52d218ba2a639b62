"""Slips of chapter 2's first fit over a list of holes."""

from __future__ import annotations

from .base import slip


def _best_fit(holes, size):
    fits = [(length, start) for start, length in holes if length >= size]
    return min(fits)[1] if fits else None


def _last_fit(holes, size):
    fits = [start for start, length in holes if length >= size]
    return fits[-1] if fits else None


def _worst_fit(holes, size):
    fits = [(-length, start) for start, length in holes if length >= size]
    return min(fits)[1] if fits else None


def _zero_skipped(holes, size):
    found = None
    for start, length in holes:
        if length >= size and not found:
            found = start
    return found


def _stops_early(holes, size):
    for start, length in holes:
        return start if length >= size else None
    return None


FIRST_FIT = {
    "first_fit.best_fit": slip(
        _best_fit,
        "you picked the smallest hole that is large enough (best fit); first fit takes the "
        "first one in address order.",
        "충분히 큰 구멍 중 가장 작은 것을 골랐습니다(best fit). 최초 적합(first fit)은 주소 순서로 처음 "
        "나오는 구멍을 씁니다.",
    ),
    "first_fit.worst_fit": slip(
        _worst_fit,
        "you picked the largest hole (worst fit); first fit takes the first one large enough, "
        "in address order.",
        "가장 큰 구멍을 골랐습니다(worst fit). 최초 적합은 주소 순서로 처음 나오는, 충분히 큰 "
        "구멍을 씁니다.",
    ),
    "first_fit.hole_end": slip(
        lambda holes, size: next((s + n - size for s, n in holes if n >= size), None),
        "you placed the request at the end of its hole; first fit places it where the hole starts.",
        "요청을 구멍의 끝에 붙여 놓았습니다. 최초 적합은 구멍이 시작하는 곳에 놓습니다.",
    ),
    "first_fit.zero_skipped": slip(
        _zero_skipped,
        "when the first hole that fits starts at address 0 you returned a later one: a start of "
        "0 is a hole found, not none found.",
        "처음 맞는 구멍이 주소 0에서 시작하면 그 뒤의 구멍을 반환했습니다. 시작 주소 0도 찾은 "
        "구멍이지, 못 찾은 것이 아닙니다.",
    ),
    "first_fit.last_fit": slip(
        _last_fit,
        "you returned the last hole that is large enough; first fit stops at the first one.",
        "충분히 큰 구멍 중 마지막 것을 반환했습니다. 최초 적합은 처음 맞는 구멍에서 멈춥니다.",
    ),
    "first_fit.strictly_larger": slip(
        lambda holes, size: next((start for start, length in holes if length > size), None),
        "you skipped a hole exactly as long as the request: an exact fit fits too.",
        "요청과 길이가 똑같은 구멍을 건너뛰었습니다. 딱 맞는 구멍도 들어갈 수 있는 구멍입니다.",
    ),
    "first_fit.index": slip(
        lambda holes, size: next((i for i, (_, n) in enumerate(holes) if n >= size), None),
        "you returned the hole's position in the list; return the address where it starts.",
        "구멍의 리스트 안 위치(인덱스)를 반환했습니다. 구멍이 시작하는 주소를 반환하세요.",
    ),
    "first_fit.pair": slip(
        lambda holes, size: next(((s, n) for s, n in holes if n >= size), None),
        "you returned the whole (start, length) pair; return only its start.",
        "(시작, 길이) 쌍 전체를 반환했습니다. 시작 주소만 반환하세요.",
    ),
    "first_fit.stops_early": slip(
        _stops_early,
        "you gave up at the first hole that was too small; a later hole may still fit.",
        "처음 만난 구멍이 작다고 거기서 멈췄습니다. 뒤에 있는 구멍이 맞을 수도 있습니다.",
    ),
    "first_fit.zero_for_none": slip(
        lambda holes, size: next((start for start, length in holes if length >= size), 0),
        "when no hole fits, return None: 0 is a real address (the start of the arena).",
        "맞는 구멍이 없으면 None을 반환하세요. 0은 실제 주소(영역의 시작)입니다.",
    ),
    "first_fit.length_as_end": slip(
        lambda holes, size: next((start for start, end in holes if end - start >= size), None),
        "holes that start far from address 0 were passed over although they are long enough: "
        "your test reads a hole's second number as the address where it ends, and it is the "
        "hole's length.",
        "주소 0에서 멀리 떨어져 시작하는 구멍을, 길이가 충분한데도 지나쳤습니다. 구멍의 두 번째 "
        "수를 끝나는 주소로 읽었는데, 그 수는 구멍의 길이입니다.",
    ),
    "first_fit.returned_none": slip(
        lambda holes, size: None,
        "you returned None although a hole fits: did you forget to `return` its start?",
        "맞는 구멍이 있는데 None을 반환했습니다. 시작 주소를 `return`하는 것을 잊지 않았나요?",
    ),
}
