"""Checker for chapter 11: the block hashes behind prefix caching (`block_hashes`).

The truth is `paged.prefix_cache.block_hashes`, but not its values: a learner may hash with
`hash_block` or with a hash of their own (`hash((parent, tuple(block)))`), so the checker compares
which hashes are *equal*. Each case is a family of one to three related prompts (a prompt and the
same prompt with one token changed, shifted by a block, cut short, its blocks repeated or
reordered); the learner's hashes of the whole family must be equal exactly where the library's
are, position by position and across the prompts, with one hash per full block. Messages show
that pattern with letters: `[A, B] and [A, C]` is two prompts whose first blocks share a hash
and whose second blocks do not. The last teaching case is a wide family (`wide_case`): more
distinct prefixes than a 16-bit hash has values, compared only by whether two of them share a
hash (`Collision`), so that a hash narrowed to 16 or 20 bits is caught on every call.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .. import prefix_cache
from ..text import msg
from .answers import prefix as answers
from .engine.contract import each
from .engine.core import Spec, checker, draws
from .slips import of

__all__ = ["check_block_hashes"]

PARAMS = ("token_ids", "block_size")
FORBID = [  # hash_block is the learner's to call
    ("paged.prefix_cache.block_hashes", prefix_cache.block_hashes),
    ("paged.prefix_cache.cached_tokens", prefix_cache.cached_tokens),
    ("paged.prefix_cache.predict_cached", prefix_cache.predict_cached),
    ("paged.exercises.solution", answers.block_hashes),
    "paged.pool",
    "paged.sequence",  # a request's own hash chain
]

AND = msg("{a} and {b}", "{a} 및 {b}")
LEGEND = msg("{pattern} (the same letter: the same hash)", "{pattern} (같은 글자는 같은 해시)")
NOT_A_LIST = msg("a {kind}, not a list", "list가 아닌 {kind}")
WIDE = msg(
    "{n} prompts of {length} tokens, each with a first token of its own ({prefixes:,} distinct "
    "prefixes), block_size={block_size}",
    "첫 토큰이 저마다 다른 {length}토큰짜리 프롬프트 {n}개(서로 다른 접두사 {prefixes:,}개), "
    "block_size={block_size}",
)
OWN_HASHES = msg("a hash of its own for every prefix", "접두사마다 서로 다른 해시")
SHARED = msg(
    "one hash, {hash}, for two different prefixes: {a} ({m} tokens) and {b} ({n} tokens)",
    "서로 다른 두 접두사에 같은 해시 {hash}: {a}({m}토큰), {b}({n}토큰)",
)
UNHASHABLE = msg(
    "the hash {got} is a {kind}, which cannot be a dict key, and the cache looks blocks up by "
    "their hash",
    "해시 {got}의 타입은 {kind}입니다. 이 타입은 dict의 키가 될 수 없는데, 캐시는 해시로 블록을 "
    "찾습니다",
)


@dataclass(frozen=True)
class Pattern:
    """Which hashes of a family are equal: a label per hash, equal labels for equal hashes."""

    labels: tuple = ()  # one tuple of labels per prompt
    kind: str | None = None  # the type returned, when it is not a list or a tuple
    mine: bool = field(default=False, compare=False)  # the learner's: shown with a legend

    def __str__(self) -> str:
        if self.kind is not None:
            return NOT_A_LIST.format(kind=self.kind)
        text = "[]"
        for i, labels in enumerate(self.labels):
            part = "[" + ", ".join(_letter(n) for n in labels) + "]"
            text = part if i == 0 else AND.format(a=text, b=part)
        return LEGEND.format(pattern=text) if self.mine else text


class Wide(tuple):
    """The prompts of a wide family (`wide_case`): too many to show, compared by `Collision`."""

    def __deepcopy__(self, memo):  # lists of ints: copying the lists is copying it all, faster
        return Wide(list(ids) for ids in self)


@dataclass(frozen=True)
class Collision:
    """Whether two distinct prefixes of a wide family got one hash; which two, when they did."""

    found: bool
    hash: object = field(default=None, compare=False)
    prefixes: tuple = field(default=(), compare=False)  # the two token lists

    def __str__(self) -> str:
        if not self.found:
            return str(OWN_HASHES)
        (a, b), h = self.prefixes, _cut(self.hash, 40)
        return SHARED.format(hash=h, a=_cut(a, 60), m=len(a), b=_cut(b, 60), n=len(b))


def wide_case(num_prompts: int = 257, length: int = 256):
    """(prompts, 1): prompt i starts with token i, so all 257 x 256 = 65,792 prefixes differ,
    more than the 65,536 values of a 16-bit hash (a 20-bit one collides ~2,000 times)."""
    rng = random.Random(11)
    tails = ([rng.getrandbits(17) for _ in range(length - 1)] for _ in range(num_prompts))
    return Wide([i, *tail] for i, tail in enumerate(tails)), 1


def collision(prompts, block_size, results):
    """`Collision` over the hashes of a wide family (a dict: the family is too large for
    `pattern`); a `Pattern` naming the type when a result is not a list."""
    other = next((r for r in results if not isinstance(r, list | tuple)), None)
    if other is not None:
        return Pattern(kind=type(other).__name__, mine=True)
    flat = [h for hashes in results for h in hashes]
    try:
        if len(set(flat)) == len(flat):  # the usual answer, found fast
            return Collision(False)
    except TypeError:  # an unhashable hash: the walk below keys it by its repr
        pass
    seen = {}
    for ids, hashes in zip(prompts, results, strict=True):
        for k, h in enumerate(hashes):
            key, end = _key(h), (k + 1) * block_size
            if key in seen:
                first = seen[key]
                return Collision(True, h, (first[0][: first[1]], ids[:end]))
            seen[key] = (ids, end)
    return Collision(False)


def _key(h):
    """h as a dict key: itself, or its repr when it cannot be one (the contract names that)."""
    try:
        hash(h)
    except TypeError:
        return ("unhashable", repr(h))
    return h


def _letter(n: int) -> str:
    return chr(ord("A") + n % 26) + (str(n // 26 + 1) if n >= 26 else "")


def pattern(results, mine: bool = False) -> Pattern:
    """The equality pattern of the hashes in `results` (one answer per prompt)."""
    seen, labels = [], []
    for result in results:
        if not isinstance(result, list | tuple):
            return Pattern(kind=type(result).__name__, mine=mine)
        row = []
        for h in result:
            label = next((i for i, s in enumerate(seen) if _equal(s, h)), None)
            if label is None:
                label = len(seen)
                seen.append(h)
            row.append(label)
        labels.append(tuple(row))
    return Pattern(tuple(labels), mine=mine)


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value that cannot compare equals nothing
        return False


def observe(fn, args):
    """Call fn on every prompt of the family; compare the pattern of all the hashes."""
    prompts, block_size = args
    results = [fn(ids, block_size) for ids in prompts]
    raw = None if any(r is None for r in results) else results
    if isinstance(prompts, Wide):
        return raw, collision(prompts, block_size, results)
    return raw, pattern(results, mine=True)


def truth(prompts, block_size):
    results = [prefix_cache.block_hashes(ids, block_size) for ids in prompts]
    if isinstance(prompts, Wide):
        return collision(prompts, block_size, results)
    return pattern(results)


def describe(args) -> str:
    prompts, block_size = args
    if isinstance(prompts, Wide):
        n, length = len(prompts), len(prompts[0])
        prefixes = n * (length // block_size)
        return WIDE.format(n=n, length=length, prefixes=prefixes, block_size=block_size)
    text = ""
    for i, ids in enumerate(prompts):
        part = f"token_ids={_cut(ids)}"
        text = part if i == 0 else AND.format(a=text, b=part)
    return f"{text}, block_size={block_size}"


def _cut(ids, limit: int = 160) -> str:
    text = repr(ids)
    return text if len(text) <= limit else text[: limit - 4] + "...]"


def _hashable(value) -> str | None:
    try:
        hash(value)
    except TypeError:
        return UNHASHABLE.format(got=_cut(value, 60), kind=type(value).__name__)
    return None


def contract(raw, args) -> str | None:
    """Right pattern: every hash must also be usable as a key."""
    return next((why for result in raw if (why := each(_hashable)(result))), None)


# The teaching cases: (prompts, block_size).
CASES = [
    (([10, 11, 12, 13, 14, 15, 16, 17],), 4),  # two full blocks
    (([10, 11, 12, 13, 14, 15, 16, 17, 18],), 4),  # and a partly filled one
    (([], [1, 2, 3]), 4),  # no full block
    (([5, 5, 5, 5],), 2),  # the same tokens twice: two positions, two hashes
    (([1, 2, 3, 4, 5, 6], [9, 2, 3, 4, 5, 6]), 2),  # differ in block 0: every hash differs
    (([1, 2, 3, 4, 5, 6], [1, 2, 7, 4, 5, 6]), 2),  # differ in block 1: block 0 shared
    (([1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 5, 6, 7, 0]), 4),
    (([7, 1, 2, 3, 4], [8, 1, 2, 3, 4]), 1),  # block size 1: a difference reaches every block
    (([1, 2, 3, 4, 1, 2],), 2),  # a block again after other blocks
    (([3, 3, 4, 4, 5, 5], [6, 6, 4, 4, 5, 5]), 2),  # equal blocks after a difference 2 blocks back
    (([50000, 3, 127999, 42], [3, 50000, 127999, 42]), 2),  # order inside a block counts
    (([1, 2, 3], [1, 2, 3, 4]), 4),  # block size past the prompt, then exactly one block
    (([1, 2, 3, 4, 5, 6], [3, 4, 1, 2, 5, 6], [5, 6, 3, 4, 1, 2]), 2),  # the same blocks reordered
    (([5, 6, 5, 6], [7, 8, 7, 8]), 2),  # a block repeated: each prompt's own, twice over
    ((list(range(200)),), 1),  # 200 prefixes, 200 hashes: a hash of a few bits collides here
    (([1, 23, 4, 5], [12, 3, 4, 5]), 2),  # the same digits, split into other tokens
]


def _prompt(rng):
    bs = rng.choice((1, 1, 2, 2, 3, 4, 5, 8))
    n = max(0, rng.randint(0, 5) * bs + rng.choice((-1, 0, 0, 1, rng.randint(0, bs))))
    vocab = rng.choice((2, 3, 50, 10**6))  # a small vocabulary repeats whole blocks
    return [rng.randrange(vocab) for _ in range(n)], bs


def _relative(rng, ids, bs):
    """A prompt related to ids: one token changed, shifted by a block, cut, blocks repeated, two
    blocks swapped, or two neighbours in a block split at another digit (12, 3 for 1, 23)."""
    kinds = ("change", "change", "shift", "cut", "repeat", "swap", "extend", "split", "split")
    kind, out = rng.choice(kinds), list(ids)
    pairs = [i for i in range(len(out) - 1) if bs > 1 and i % bs < bs - 1]
    if kind == "split" and pairs:
        i = rng.choice(pairs)
        digits = str(out[i]) + str(out[i + 1])
        cuts = [c for c in range(1, len(digits)) if digits[c] != "0" and c != len(str(out[i]))]
        if cuts:
            c = rng.choice(cuts)
            out[i : i + 2] = int(digits[:c]), int(digits[c:])
    elif kind == "change" and out:
        i = rng.randrange(len(out))
        out[i] += rng.randint(1, 3)
    elif kind == "shift":
        out = rng.choice((out[bs:], [rng.randrange(9)] * bs + out))
    elif kind == "cut":
        out = out[: rng.randint(0, len(out))]
    elif kind == "repeat" and len(out) >= bs:
        j = rng.randrange(len(out) // bs)
        out = out[: (j + 1) * bs] + out[j * bs :]
    elif kind == "swap" and len(out) >= 2 * bs:
        i, j = sorted(rng.sample(range(len(out) // bs), 2))
        blocks = [out[k * bs : (k + 1) * bs] for k in range(len(out) // bs)]
        blocks[i], blocks[j] = blocks[j], blocks[i]
        out = [t for block in blocks for t in block] + out[len(blocks) * bs :]
    else:
        out += [rng.randrange(9) for _ in range(rng.randint(1, 2 * bs))]
    return out


def _family(rng):
    ids, bs = _prompt(rng)
    prompts = [ids]
    for _ in range(rng.choice((0, 1, 1, 2))):
        prompts.append(_relative(rng, rng.choice(prompts), bs))
    return tuple(prompts), bs


def _equal_pairs(p: Pattern) -> set:
    flat = [label for row in p.labels for label in row]
    return {(i, j) for i in range(len(flat)) for j in range(i) if flat[i] == flat[j]}


def _patterns(triples) -> bool:
    """Every wrong answer is a pattern of hashes in lists (not a `Collision`, not another type)."""
    return all(isinstance(g, Pattern) and g.kind is None for g, _, _ in triples)


def _counts_right(triples) -> bool:
    return _patterns(triples) and all(
        [len(r) for r in g.labels] == [len(r) for r in w.labels] for g, w, _ in triples
    )


def _merged(got, want) -> bool:
    """Equal hashes where the library's differ, and no other slip."""
    if isinstance(want, Collision):
        return isinstance(got, Collision) and got.found and not want.found
    return _counts_right([(got, want, None)]) and _equal_pairs(got) > _equal_pairs(want)


def _merges(triples) -> bool:
    return all(_merged(g, w) for g, w, _ in triples)


def _splits(triples) -> bool:
    """Every wrong answer has different hashes where the library's are equal, and no other."""
    return _counts_right(triples) and all(_equal_pairs(g) < _equal_pairs(w) for g, w, _ in triples)


SYMPTOMS = (
    (
        lambda triples: _patterns(triples) and not _counts_right(triples),
        msg(
            "the number of hashes is not the number of full blocks in the prompt.",
            "해시의 개수가 프롬프트의 꽉 찬 블록 개수와 다릅니다.",
        ),
    ),
    (
        _merges,
        msg(
            "two blocks that differ, in their own tokens or in what comes before them, got equal "
            "hashes: a request would find a block that is not its own.",
            "자기 토큰이 다르거나 그 앞의 내용이 다른 두 블록이 같은 해시를 받았습니다. 요청이 자기 "
            "것이 아닌 블록을 찾게 됩니다.",
        ),
    ),
    (
        _splits,
        msg(
            "the same prefix got different hashes: a block's hash may depend only on the tokens up "
            "to the end of that block, so another request with that prefix finds it.",
            "같은 접두사가 서로 다른 해시를 받았습니다. 블록의 해시는 그 블록 끝까지의 토큰에만 "
            "달려 있어야, 같은 접두사를 가진 다른 요청이 그 블록을 찾을 수 있습니다.",
        ),
    ),
)


BLOCK_HASHES = Spec(
    "block_hashes",
    params=PARAMS,
    cases=lambda: [*CASES, wide_case()],
    answer=truth,
    draw=draws(_family, truth),
    slips=of("hash_chain"),
    describe=describe,
    observe=observe,
    show=str,
    forbid=FORBID,
    contract=contract,
    symptoms=SYMPTOMS,
    doc="""fn(token_ids, block_size) -> one hash per full block, each over its parent (chapter 11).

    Any hash function will do: the hashes must be equal where the library's are equal and
    different where they differ, across the related prompts of each case.
    """,
)
check_block_hashes = checker(BLOCK_HASHES)
