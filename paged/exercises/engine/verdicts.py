"""The verdicts every checker prints, plain-Python (`core.check`) and Triton (`kernel_runner`),
and the symptoms the engine names when no slip explains a wrong answer.

Each is a bilingual `paged.text.msg`; the Triton ones name a kernel and where a launch failed.
A symptom says what a wrong output got wrong (NaN where the answer is finite, a constant factor
per row, float16's precision, wrong only in one region), never how to fix it; it belongs to the
engine, once, for every exercise (`core.check` tries a spec's `symptoms`, `kernel_runner` calls
`symptom`).
"""

from __future__ import annotations

import math
import numbers
from collections import Counter, deque

from ...text import msg

__all__: list[str] = []  # used by the checkers

# ---- plain-Python checkers ----
CORRECT = msg("{name}: correct ({n} cases).", "{name}: 정답입니다 (사례 {n}개).")
NOT_YET = msg(
    "{name}: not yet: replace the stub's `raise NotImplementedError` with your code and run the "
    "cell again.",
    "{name}: 아직입니다. 스텁의 `raise NotImplementedError`를 여러분의 코드로 바꾸고 셀을 다시 "
    "실행하세요.",
)
NOTHING = msg(
    "{name}: you returned nothing — did you forget `return`? (for {case})",
    "{name}: 아무것도 반환하지 않았습니다. `return`을 빠뜨리지 않았나요? ({case})",
)
NOT_QUITE = msg(
    "{name}: not quite: for {case} you returned {got}, expected {want}.",
    "{name}: 아직 아닙니다. {case}일 때 반환값은 {got}, 기대한 값은 {want}입니다.",
)
RAISED = msg(
    "{name}: not quite: for {case} your function raised {error}.",
    "{name}: 아직 아닙니다. {case}일 때 함수에서 예외가 발생했습니다: {error}",
)
RAISED_OTHER = msg(
    "{name}: not quite: for {case} your function raised {error}, where {want} is expected.",
    "{name}: 아직 아닙니다. {case}일 때 함수에서 예외가 발생했습니다: {error}. 기대한 예외: {want}",
)
HINT = msg("  hint: {hint}", "  힌트: {hint}")
RANDOM = msg(
    "  (a random case: `check_{name}(your_function, seed={seed})` draws the same cases again)",
    "  (무작위 사례입니다. `check_{name}(your_function, seed={seed})`로 같은 사례를 다시 뽑을 수 "
    "있습니다)",
)

# ---- Triton puzzles ----
NOT_A_KERNEL = msg(
    "{name}: not yet: pass your @triton.jit kernel (got {got}).",
    "{name}: 아직입니다. @triton.jit 커널을 넘겨 주세요(받은 것: {got}).",
)
WROTE_NOTHING = msg(
    "{name}: not yet: your kernel wrote nothing. Write its body and run again.",
    "{name}: 아직입니다. 커널이 아무것도 쓰지 않았습니다. 본문을 채우고 다시 실행하세요.",
)
KERNEL_CORRECT = msg("{name}: correct ({what}).", "{name}: 정답입니다 ({what}).")
KERNEL_NOT_QUITE = msg(
    "{name}: not quite ({where}): {what}", "{name}: 아직 아닙니다 ({where}). {what}"
)
KERNEL_RANDOM = msg(
    "  (a random case: `check_{name}(your_kernel, seed={seed})` draws the same cases again)",
    "  (무작위 사례입니다. `check_{name}(your_kernel, seed={seed})`로 같은 사례를 다시 뽑을 수 "
    "있습니다)",
)

# ---- what the kernel runner and the memory watch say (`kernel_runner`, `triton_checks`) ----
INPUT_WRITTEN = msg(
    "your kernel wrote into {what}, an input", "커널이 입력인 {what} 위치에 썼습니다"
)
INPUT_HINT = msg(
    "the inputs ({inputs}) belong to the caller: the kernel reads them and leaves them as they "
    "were. Only {outputs} is the kernel's to write.",
    "입력({inputs})은 호출한 쪽의 것입니다. 커널은 입력을 읽기만 하고 그대로 두어야 합니다. "
    "커널이 쓸 수 있는 출력: {outputs}.",
)
STORE_PAST = msg(
    "a store landed outside the output's elements", "출력 원소 밖에 저장한 값이 있습니다"
)
RIGHT = msg("the values are right", "값은 맞습니다")
NO_DOT = msg(
    "the puzzle asks for this result from tl.dot, and your kernel has no tl.dot call that "
    "runs: the values may be right, but the tensor cores would sit idle.",
    "이 퍼즐은 이 결과를 tl.dot으로 구하라고 합니다. 그런데 커널에서 실행되는 tl.dot 호출이 "
    "없습니다. 값은 맞을 수 있어도 텐서 코어는 쉬게 됩니다.",
)
DOTS = msg(
    "program {pid} ran {count} tl.dot calls where the puzzle asks for {want}",
    "프로그램 {pid}의 tl.dot 호출: {count}번(퍼즐이 요구하는 횟수: {want}번)",
)
DOTS_HINT = msg(
    "the values are right, but a program multiplied in several small tl.dot calls where the "
    "puzzle asks for one product over its whole group: the tensor cores get a few rows at a "
    "time.",
    "값은 맞지만, 한 프로그램이 그룹 전체에 대한 곱 하나를 요구하는 곳에서 작은 tl.dot을 여러 "
    "번 실행했습니다. 텐서 코어가 한 번에 몇 행씩만 받습니다.",
)
DOT_UNCHANGED = msg(
    "with every tl.dot result changed, your kernel stored the same values",
    "모든 tl.dot 결과를 바꿔도 커널이 같은 값을 저장했습니다",
)
DOT_UNUSED = msg(
    "the puzzle asks for this result from tl.dot: your tl.dot runs, but its result never reaches "
    "the output.",
    "이 퍼즐은 이 결과를 tl.dot으로 구하라고 합니다. 커널의 tl.dot은 실행되지만, 그 결과가 "
    "출력까지 가지 않습니다.",
)
TF32_DOT = msg(
    "a tl.dot multiplies float32 operands in TF32 here, Triton's default on NVIDIA GPUs: about "
    "three significant digits per product, where the puzzle asks for float32 products. The "
    "interpreter multiplies in full float32 whatever the precision, so the values look right "
    "here; compiled for a GPU, they would be off in the fourth digit.",
    "tl.dot이 float32 피연산자를 TF32로 곱합니다. TF32는 NVIDIA GPU에서 Triton의 기본값이며, 곱마다 "
    "유효숫자가 세 자리 정도뿐입니다. 이 퍼즐은 float32 곱을 요구합니다. 인터프리터는 정밀도 "
    "설정과 상관없이 완전한 float32로 곱하므로 여기서는 값이 맞아 보이지만, GPU용으로 컴파일하면 "
    "네 번째 자리에서 어긋납니다.",
)
UNREAD = msg(
    "the values are right, but program {pid} never read {what}",
    "값은 맞지만 프로그램 {pid}의 load 중 {what} 위치를 읽은 것이 하나도 없습니다",
)
UNREAD_HINT = msg(
    "the puzzle hands each program its own element of this input to use, and your kernel got "
    "its numbers without reading it (another element, or none).",
    "이 퍼즐은 각 프로그램에 이 입력에서 자기 몫의 원소를 건네는데, 커널은 그 원소를 읽지 않고(다른 "
    "원소를 읽었거나 아무것도 읽지 않고) 값을 구했습니다.",
)
SHARE = msg(
    "a program wrote elements of another program's share: the grid's programs did not each "
    "write their own part of the output.",
    "한 프로그램이 다른 프로그램 몫의 원소에 썼습니다. 그리드의 프로그램들이 출력에서 각자 "
    "자기 몫만 쓰지 않았습니다.",
)
STRAY_LOAD = msg(
    "program {pid} loaded {what} (stray lanes in this case: {count})",
    "프로그램 {pid}의 읽기 위치: {what}(이 사례에서 범위를 벗어난 레인: {count}개)",
)
STRAY_STORE = msg(
    "program {pid} wrote {what} (stray lanes in this case: {count})",
    "프로그램 {pid}의 쓰기 위치: {what}(이 사례에서 범위를 벗어난 레인: {count}개)",
)
AT = msg("{at} holds {got}, expected {want}", "{at}의 값은 {got}, 기대값은 {want}입니다")
NEVER = msg("{at} was never written", "{at}에는 아무것도 쓰이지 않았습니다")
STRAY_ATOMIC = msg(
    "program {pid} ran an atomic, which reads and writes, on {what} (stray lanes in this case: "
    "{count})",
    "프로그램 {pid}의 원자적 연산(읽고 쓰기) 위치: {what}(이 사례에서 범위를 벗어난 레인: "
    "{count}개)",
)
ATOMIC = msg(
    "an atomic (tl.atomic_add, atomic_max, atomic_xchg, atomic_cas ...) reads an element and "
    "writes it back, mask or not: on an input it writes into the caller's data, and a lane past "
    "the end reads and writes memory that belongs to nothing.",
    "원자적 연산(tl.atomic_add, atomic_max, atomic_xchg, atomic_cas 등)은 마스크가 있든 없든 "
    "원소를 읽고 다시 씁니다. 입력에 쓰면 호출한 쪽의 데이터에 쓰게 되고, 끝 너머의 레인은 "
    "아무것에도 속하지 않는 메모리를 읽고 씁니다.",
)
UNMASKED_LOAD = msg(
    "an unmasked load: a tl.load let lanes through whose addresses belong to nothing, either "
    "because its mask (or its lack of one) admits lanes past the data, or because the addresses "
    "themselves (a stride, an offset, where a row starts) run past it. Masking the store is not "
    "enough: on a GPU that load reads another tensor's memory, stale values or unmapped addresses.",
    "마스크 없는 load(unmasked load)입니다. tl.load가 아무것에도 속하지 않는 주소의 레인을 "
    "통과시켰습니다. 마스크가(또는 마스크가 없어서) 데이터 너머의 레인을 허용했거나, 주소 "
    "자체(스트라이드, 오프셋, 행이 시작하는 위치)가 데이터 밖으로 나갔기 때문입니다. 저장만 "
    "마스크해서는 부족합니다. GPU에서는 그 load가 다른 텐서의 메모리나 오래된 값, 매핑되지 "
    "않은 주소를 읽습니다.",
)
OUTSIDE = msg(
    "memory outside every tensor of the case", "이 사례의 어떤 텐서에도 속하지 않는 메모리"
)


# ---- symptoms: what a wrong output got wrong, for a hint when no slip explains it ----
# A Triton puzzle's (`kernel_runner.symptom` picks one, element by element and row by row):
KERNEL_SYMPTOMS = {
    "nonfinite": msg(
        "the output holds NaN or inf where the answer is finite.",
        "답이 유한한 자리에 출력이 NaN이나 inf를 담고 있습니다.",
    ),
    "factor": msg(
        "every wrong row is off by a constant factor: each row has the right shape, scaled by "
        "one number.",
        "틀린 행마다 일정한 배수만큼 어긋났습니다. 행의 모양은 맞지만 수 하나가 곱해져 있습니다.",
    ),
    "precision": msg(
        "close, but only to about three significant digits (float16's precision): somewhere the "
        "numbers lost bits that float32 keeps.",
        "가깝지만 유효숫자 세 자리 정도(float16의 정밀도)까지만 맞습니다. 어딘가에서 float32라면 "
        "남았을 비트를 잃었습니다.",
    ),
    "zero": msg(
        "every wrong element of the output is 0: nothing was added into those elements.",
        "출력에서 틀린 원소는 모두 0입니다. 그 원소들에는 아무것도 더해지지 않았습니다.",
    ),
    "only": msg(
        "the output is wrong only {region}; everywhere else it is right.",
        "출력은 {region}에서만 틀렸고, 나머지는 모두 맞습니다.",
    ),
}


# A plain-Python exercise's, case by case (`Spec.symptoms` pairs them with the exercise's words):
def on_every(test):
    """A `Spec.symptoms` predicate: test(got, want) holds on every case the learner got wrong."""
    return lambda triples: all(test(g, w) for g, w, _ in triples)


def nan_where_finite(got, want) -> bool:
    """NaN or inf (or an overflow raised) where the answer is finite."""
    import torch

    if hasattr(got, "error"):  # core.Raised: the call raised
        overflowed = isinstance(got.error, OverflowError | ZeroDivisionError)
    else:
        overflowed = isinstance(got, torch.Tensor) and not bool(torch.isfinite(got).all())
    return overflowed and bool(torch.isfinite(want).all())


def constant_factor(got, want) -> bool:
    """Every number of got is the same number times want's."""
    import torch

    if not isinstance(got, torch.Tensor) or got.shape != want.shape or not got.numel():
        return False
    ratio = got.double() / want.double()
    return bool(torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-3))


def constant_factor_by_row(got, want, bad) -> bool:
    """A kernel's output: every wrong row of got is one number times the same row of want (that
    number not 1)."""
    import torch

    rows_g, rows_w = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    rows_bad = bad.reshape(-1, bad.shape[-1]).any(1)
    if not bool(rows_bad.any()):
        return False
    for g, w in zip(rows_g[rows_bad], rows_w[rows_bad], strict=True):
        ok = torch.isfinite(w) & (w.abs() > 1e-9)
        if not bool(ok.any()) or not bool(torch.isfinite(g[ok]).all()):
            return False
        ratio = g[ok] / w[ok]
        if not bool(torch.isclose(ratio, ratio[0].expand_as(ratio), rtol=1e-4).all()):
            return False
        if abs(float(ratio[0]) - 1) < 1e-3 or not bool(
            torch.isclose(g[~ok], w[~ok] * ratio[0], equal_nan=True).all()
        ):
            return False
    return True


def symptom(got, want, tol, regions=None):
    """What a kernel's output got wrong, in words (never the fix), or None when nothing stands out."""
    import torch

    got, want = got.double().cpu(), want.double().cpu()
    bad = ~torch.isclose(got, want, rtol=max(tol, 1e-12), atol=max(tol, 1e-12), equal_nan=True)
    finite = torch.isfinite(want)
    if bool((~torch.isfinite(got) & finite).any()):
        return KERNEL_SYMPTOMS["nonfinite"]
    if tol < 1e-3 and bool(torch.isclose(got, want, rtol=2e-3, atol=2e-3, equal_nan=True).all()):
        return KERNEL_SYMPTOMS["precision"]
    for region, mask in (regions or {}).items():
        if bool(bad.any()) and not bool((bad & ~mask).any()):
            return KERNEL_SYMPTOMS["only"].format(region=region)
    if bool(bad.any()) and bool((got[bad] == 0).all()):
        return KERNEL_SYMPTOMS["zero"]
    if got.dim() and constant_factor_by_row(got, want, bad):
        return KERNEL_SYMPTOMS["factor"]
    return None


# Any plain-Python exercise's, when neither a slip nor the exercise's own symptoms explain the
# wrong answers (`core.check` asks `plain_symptom` last): what they share, never the fix.
PLAIN_SYMPTOMS = {
    "type": msg(
        "your answers have another type than the expected ones: {got} where {want} is due.",
        "답의 타입이 기대한 것과 다릅니다. 기대한 타입: {want}, 여러분의 타입: {got}.",
    ),
    "order": msg(
        "the right items, in another order: the order is part of the answer.",
        "항목은 맞지만 순서가 다릅니다. 순서도 답의 일부입니다.",
    ),
    "short": msg(
        "each wrong answer is the start of the expected one, and stops too early.",
        "틀린 답마다 기대한 답의 앞부분이지만, 너무 일찍 끝납니다.",
    ),
    "long": msg(
        "each wrong answer begins with the expected one, and goes on past its end.",
        "틀린 답마다 기대한 답으로 시작하지만, 그 끝을 넘어 더 이어집니다.",
    ),
    "items": msg(
        "your answer holds other items than the expected ones. On the first such case, missing: "
        "{missing}; not expected: {extra}.",
        "답에 든 항목이 기대한 항목과 다릅니다. 항목이 다른 첫 번째 사례에서 빠진 항목: {missing}, "
        "기대하지 않은 항목: {extra}.",
    ),
    "shape": msg(
        "your output's shape is {got}; the expected one's is {want}.",
        "출력의 형상과 기대한 형상이 다릅니다. 출력의 형상: {got}, 기대한 형상: {want}.",
    ),
    "factors": msg(
        "off by a constant factor in each case: every number of your output is the answer times "
        "the same amount.",
        "사례마다 상수배만큼 어긋납니다. 출력의 모든 숫자가 답에 같은 값을 곱한 것입니다.",
    ),
    "zero": msg(
        "every value you returned is 0 where the answer is not.",
        "답이 0이 아닌 자리에서 여러분이 돌려준 값이 모두 0입니다.",
    ),
    "factor": msg(
        "every wrong answer is the expected one times {factor}, the same factor on every case.",
        "틀린 답마다 기대값에 같은 수를 곱한 값입니다(곱한 수: {factor}).",
    ),
    "offset": msg(
        "every wrong answer is the expected one {offset:+d}, the same on every case.",
        "틀린 답마다 기대값보다 똑같이 {offset:+d}만큼 다릅니다.",
    ),
    "parts": msg(
        "right in every case: {right}; wrong: {wrong}.",
        "모든 사례에서 맞은 부분: {right}. 틀린 부분: {wrong}.",
    ),
    "in_part": msg(
        "right in every case: {right}; in {part}, {what}",
        "모든 사례에서 맞은 부분: {right}. {part} 부분: {what}",
    ),
}


def _scalar_kind(value) -> str:
    if value is None or isinstance(value, bool):
        return "None" if value is None else "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    return type(value).__name__


def _kind(value) -> str | None:
    """'int', 'None', 'tuple of int', 'list of str', 'list of tuple' ...; None for a tuple that
    holds containers (a record of several results, as some exercises compare) or a dict."""
    if isinstance(value, list | tuple | deque | set | frozenset):
        if isinstance(value, tuple) and any(
            isinstance(x, list | tuple | set | dict) for x in value
        ):
            return None
        inner = sorted({_scalar_kind(x) for x in value})
        return f"{type(value).__name__} of {'/'.join(inner)}" if inner else type(value).__name__
    return None if isinstance(value, dict) else _scalar_kind(value)


def _same_kind(got: str, want: str) -> bool:
    """A list, a tuple and a deque of the same items are one kind: the checkers take any; an
    empty one ("list": no items to name) is of every kind its container holds."""

    def family(kind):
        head, _, items = kind.partition(" of ")
        return ("sequence" if head in ("list", "tuple", "deque") else head), items

    (g_head, g_items), (w_head, w_items) = family(got), family(want)
    return g_head == w_head and (g_items == w_items or not g_items or not w_items)


def _items(value) -> list | None:
    """value's items when it is a list, a tuple or a deque, else None."""
    return list(value) if isinstance(value, list | tuple | deque) else None


def _sequence_symptom(seqs) -> str | None:
    """What every wrong (got, want) pair of item lists shares: their order, or a prefix."""
    if all(sorted(map(repr, g)) == sorted(map(repr, w)) for g, w in seqs):
        return PLAIN_SYMPTOMS["order"]
    if all(len(g) < len(w) and g == w[: len(g)] for g, w in seqs):
        return PLAIN_SYMPTOMS["short"]
    if all(len(g) > len(w) and g[: len(w)] == w for g, w in seqs):
        return PLAIN_SYMPTOMS["long"]
    return None


def _other_items(seqs) -> str | None:
    """The ids (ints or strings) that the first answer with other items than the expected ones
    lacks and has beyond them."""
    for got, want in seqs:
        if not all(isinstance(x, int | str) and not isinstance(x, bool) for x in got + want):
            return None
        missing = sorted((Counter(want) - Counter(got)).elements())
        extra = sorted((Counter(got) - Counter(want)).elements())
        if missing or extra:
            return PLAIN_SYMPTOMS["items"].format(missing=missing, extra=extra)
    return None


def _numbers(value) -> list | None:
    """value's real numbers, flat (a number, or a list, tuple or deque of them), else None."""
    items = _items(value)
    items = [value] if items is None else items
    real = all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in items)
    return [float(x) for x in items] if real and items else None


def _factor(pairs) -> float | None:
    """The one number c with got = c x want on every pair (zeros where want is 0), or None."""
    ratios = []
    for got, want in pairs:
        if len(got) != len(want) or any(g and not w for g, w in zip(got, want, strict=True)):
            return None
        ratios += [g / w for g, w in zip(got, want, strict=True) if w]
    if ratios and all(math.isclose(r, ratios[0], rel_tol=1e-6) for r in ratios):
        return ratios[0]
    return None


def plain_symptom(triples, parts=()) -> str | None:
    """A hint for what every wrong (got, want, args) triple that returned shares, or None. The
    factor and the offset need two wrong cases with different answers: one alone always fits
    some factor. `parts` names the parts of an answer that is a record (`Spec.parts`)."""
    triples = [t for t in triples if not hasattr(t[0], "error")]  # core.Raised: no answer
    if not triples:
        return None
    kinds = [(_kind(g), _kind(w)) for g, w, _ in triples]
    if all(g and w and not _same_kind(g, w) for g, w in kinds):
        return PLAIN_SYMPTOMS["type"].format(got=kinds[0][0], want=kinds[0][1])
    if all(_is_tensor(g) and _is_tensor(w) for g, w, _ in triples):
        return _tensor_symptom(triples)
    seqs = [(_items(g), _items(w)) for g, w, _ in triples]
    in_sequences = all(g is not None and w is not None for g, w in seqs)
    hint = _sequence_symptom(seqs) if in_sequences else None
    pairs = [(_numbers(g), _numbers(w)) for g, w, _ in triples]
    if hint is None and all(g is not None and w is not None for g, w in pairs):
        hint = _number_symptom(triples, pairs)
    if hint is None and parts:
        hint = _parts_symptom(triples, parts)
    if hint is None and in_sequences:
        hint = _other_items(seqs)
    return hint


def _plain(value):
    """value with its lists, tuples and deques as lists, for comparing one part of a record."""
    if isinstance(value, list | tuple | deque):
        return [_plain(x) for x in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _same_part(got, want) -> bool:
    if isinstance(got, numbers.Real) and isinstance(want, numbers.Real):
        both_nan = math.isnan(got) and math.isnan(want)
        return both_nan or math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    return _plain(got) == _plain(want)


def _parts_symptom(triples, parts) -> str | None:
    """Which parts of a record are right on every wrong case and which are not; when one alone
    is wrong, what its wrong values share."""
    n = len(parts)
    if not all(isinstance(g, list | tuple) and len(g) == len(w) == n for g, w, _ in triples):
        return None
    right = [all(_same_part(g[k], w[k]) for g, w, _ in triples) for k in range(n)]
    if all(right) or not any(right):
        return None
    wrong = [k for k in range(n) if not right[k]]
    named = ", ".join(str(parts[k]) for k in range(n) if right[k])
    if len(wrong) == 1:
        k = wrong[0]
        what = plain_symptom([(g[k], w[k], a) for g, w, a in triples if not _same_part(g[k], w[k])])
        if what is not None:
            return PLAIN_SYMPTOMS["in_part"].format(right=named, part=parts[k], what=what)
    return PLAIN_SYMPTOMS["parts"].format(
        right=named, wrong=", ".join(str(parts[k]) for k in wrong)
    )


def _is_tensor(value) -> bool:
    return type(value).__name__ == "Tensor" and type(value).__module__.startswith("torch")


def _tensor_symptom(triples) -> str | None:
    """Another shape, NaN or inf where the answer is finite, or one factor per case."""
    if all(tuple(g.shape) != tuple(w.shape) for g, w, _ in triples):
        got, want = triples[0][:2]
        return PLAIN_SYMPTOMS["shape"].format(got=tuple(got.shape), want=tuple(want.shape))
    if all(nan_where_finite(g, w) for g, w, _ in triples):
        return KERNEL_SYMPTOMS["nonfinite"]
    if all(constant_factor(g, w) for g, w, _ in triples):
        return PLAIN_SYMPTOMS["factors"]
    return None


def _number_symptom(triples, pairs) -> str | None:
    """All zero, one factor or one offset on every wrong case (the last two need two answers)."""
    if all(not any(g) and any(w) for g, w in pairs):
        return PLAIN_SYMPTOMS["zero"]
    if len({tuple(w) for _, w in pairs}) < 2:
        return None
    factor = _factor(pairs)
    if factor is not None and abs(factor) > 1e-12 and not math.isclose(factor, 1):
        inverse = 1 / factor
        words = f"1/{inverse:g}" if abs(factor) < 1 and inverse == round(inverse) else f"{factor:g}"
        return PLAIN_SYMPTOMS["factor"].format(factor=words)
    if all(
        isinstance(g, numbers.Integral) and isinstance(w, numbers.Integral) for g, w, _ in triples
    ):
        offset = {int(g) - int(w) for g, w, _ in triples}
        if len(offset) == 1 and offset != {0}:
            return PLAIN_SYMPTOMS["offset"].format(offset=offset.pop())
    return None
