"""Slips of the sizing chapters: KV bytes per token (1), the Pow2 reservation (2), Fig. 2's
memory breakdown (4)."""

from __future__ import annotations

import math

from ...contiguous import next_pow2
from .base import slip

KV_BYTES = {
    "kv_bytes.one_of_k_and_v": slip(
        lambda n, h, d, b: n * h * d * b,
        "K and V are both cached: you counted only one of them.",
        "K와 V를 모두 저장합니다. 둘 중 하나만 셌습니다.",
    ),
    "kv_bytes.numbers_not_bytes": slip(
        lambda n, h, d, b: 2 * n * h * d,
        "you counted numbers, not bytes: each number takes dtype_bytes bytes.",
        "바이트가 아니라 숫자 개수를 셌습니다. 숫자 하나는 dtype_bytes 바이트를 차지합니다.",
    ),
    "kv_bytes.one_layer": slip(
        lambda n, h, d, b: 2 * h * d * b,
        "every layer keeps its own K and V: you counted one layer.",
        "레이어마다 자기 K와 V를 따로 저장합니다. 한 레이어만 셌습니다.",
    ),
    "kv_bytes.bits": slip(
        lambda n, h, d, b: 16 * n * h * d * b,
        "dtype_bytes is already in bytes: no factor of 8 for bits.",
        "dtype_bytes는 이미 바이트 단위입니다. 비트로 바꾸는 8을 곱하지 마세요.",
    ),
}


POW2 = {
    "pow2.prompt_rounded": slip(
        lambda p, o, m: min(next_pow2(p + o), m),
        "you rounded prompt + output; the paper rounds the output only: a true output of 25 "
        "reserves 32 positions for outputs, on top of the prompt.",
        "프롬프트 + 출력을 올림했습니다. 논문은 출력만 올림합니다. 실제 출력이 25이면 "
        "프롬프트와 별도로 출력 자리 32개를 예약합니다.",
    ),
    "pow2.power_bumped": slip(
        lambda p, o, m: min(p + (1 << o.bit_length()), m),
        "an output length that is already a power of two needs no rounding; yours moved it "
        "up to the next one (64 → 128).",
        "출력 길이가 이미 2의 거듭제곱이면 올릴 필요가 없습니다. 여러분의 코드는 다음 거듭제곱"
        "으로 올렸습니다(64 → 128).",
    ),
    "pow2.output_capped": slip(
        lambda p, o, m: p + min(next_pow2(o), m),
        "you capped the rounded output alone; the cap applies to the whole reservation, "
        "prompt included.",
        "올림한 출력만 상한으로 잘랐습니다. 상한은 프롬프트를 포함한 예약 전체에 적용됩니다.",
    ),
    "pow2.no_cap": slip(
        lambda p, o, m: p + next_pow2(o),
        "your reservation came out above max_seq_len: a reservation is at most max_seq_len "
        "slots, whatever the rounding gives.",
        "예약이 max_seq_len보다 큽니다. 올림 결과가 무엇이든 예약은 최대 max_seq_len 슬롯입니다.",
    ),
    "pow2.no_prompt": slip(
        lambda p, o, m: min(next_pow2(o), m),
        "you left out the prompt: its slots are reserved too.",
        "프롬프트를 빠뜨렸습니다. 프롬프트의 슬롯도 예약됩니다.",
    ),
    "pow2.doubled": slip(
        lambda p, o, m: min(p + 2 * o, m),
        "'at most 2x' is a bound, not the rule: the output is rounded up to a power of two.",
        "'최대 2배'는 상한일 뿐 규칙이 아닙니다. 출력을 2의 거듭제곱으로 올림합니다.",
    ),
    "pow2.nearest": slip(
        lambda p, o, m: min(p + (1 << round(math.log2(o))), m),
        "you rounded the output to the nearest power of two, so some went down (20 → 16); Pow2 "
        "always rounds up (20 → 32).",
        "출력을 가장 가까운 2의 거듭제곱으로 반올림해서 일부는 내려갔습니다(20 → 16). Pow2는 항상 "
        "올림합니다(20 → 32).",
    ),
    "pow2.rounded_down": slip(
        lambda p, o, m: min(p + (1 << (o.bit_length() - 1)), m),
        "you rounded the output down; Pow2 rounds it up (25 → 32, not 16).",
        "출력을 내림했습니다. Pow2는 올림합니다(25 → 16이 아니라 32).",
    ),
}


def _loaded(steps, waited=True, busy=True):
    chosen = [s for s in steps if s[1]] if waited else []
    return chosen or ([s for s in steps if s[2]] if busy else steps)


def _average(steps, kv_slots, divide_by=None):
    return [
        sum(u[c] for u, _, _ in steps) / ((divide_by or len(steps)) * kv_slots) for c in range(4)
    ]


BREAKDOWN = {
    "breakdown.every_step": slip(
        lambda steps, kv: _average(steps, kv),
        "average only over the steps in which some request waits (memory is the limit then), "
        "not over every step.",
        "모든 단계가 아니라, 어떤 요청이 기다리는 단계(그때는 메모리가 한계입니다)만으로 "
        "평균하세요.",
    ),
    "breakdown.every_busy_step": slip(
        lambda steps, kv: _average(_loaded(steps, waited=False), kv),
        "when some request waits, only the steps in which one waits count; you averaged over "
        "every busy step.",
        "기다리는 요청이 있으면 기다린 단계만 셉니다. 여러분은 요청이 실행 중인 단계를 모두 "
        "평균했습니다.",
    ),
    "breakdown.every_step_fallback": slip(
        lambda steps, kv: _average(_loaded(steps, busy=False), kv),
        "when nobody ever waits, fall back to the busy steps (some request running); you fell "
        "back to every step, idle ones included.",
        "아무도 기다리지 않았다면 요청이 실행 중인 단계로 평균합니다. 여러분은 쉬는 단계까지 "
        "포함한 모든 단계로 평균했습니다.",
    ),
    "breakdown.no_fallback": slip(
        lambda steps, kv: _average([s for s in steps if s[1]], kv),
        "in a run where nobody ever waits your shares came out empty or NaN: there is no "
        "waiting step to average over.",
        "아무도 기다리지 않는 실행에서 비율이 비었거나 NaN입니다. 평균할 대기 단계가 없기 때문입니다.",
    ),
    "breakdown.last_step_only": slip(
        lambda steps, kv: _average(_loaded(steps[:-1]), kv),
        "right while the last step is idle, wrong when a request waits in it: the last step "
        "of `steps` never reaches your average.",
        "마지막 단계가 쉬는 단계면 맞고, 그 단계에서 요청이 기다리면 틀립니다. `steps`의 "
        "마지막 단계가 평균에 들어가지 않습니다.",
    ),
    "breakdown.slot_counts": slip(
        lambda steps, kv: [kv * f for f in _average(_loaded(steps), kv)],
        "your shares are slot counts, kv_slots times too large.",
        "비율이 아니라 슬롯 수가 나왔습니다. kv_slots배만큼 큽니다.",
    ),
    "breakdown.mismatched_count": slip(
        lambda steps, kv: _average(_loaded(steps), kv, divide_by=len(steps)),
        "your shares are too small: the steps you summed and the steps you counted are not "
        "the same ones.",
        "비율이 너무 작습니다. 더한 단계와 개수를 센 단계가 서로 다릅니다.",
    ),
}
