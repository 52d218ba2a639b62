import math

import torch

from paged import exercises as ex


def stub(*args):
    raise NotImplementedError


def test_checkers_accept_right_reject_wrong_and_greet_stubs(capsys):
    right_wrong = [
        (
            ex.check_bytes_per_token,
            lambda n, h, d, b: 2 * n * h * d * b,
            lambda n, h, d, b: n * h * d * b,
        ),
        (
            ex.check_pow2_reservation,
            lambda p, o, m: min(p + 2 ** math.ceil(math.log2(o)), m),
            lambda p, o, m: p + o,
        ),
        (ex.check_slot, lambda t, bs, p: t[p // bs] * bs + p % bs, lambda t, bs, p: p),
        (ex.check_wasted_slots, lambda n, bs: -n % bs, lambda n, bs: bs - n % bs),
    ]
    for check, right, wrong in right_wrong:
        assert check(right) is True
        assert check(wrong) is False
        assert "not quite" in capsys.readouterr().out
        assert check(stub) is False
        assert "not yet" in capsys.readouterr().out


def test_merge_partitions_checker():
    def right(parts):
        lse = torch.stack([s for _, s in parts])
        w = torch.softmax(lse, 0)
        return sum(wi * o for wi, (o, _) in zip(w, parts, strict=True))

    assert ex.check_merge_partitions(right) is True
    assert ex.check_merge_partitions(lambda parts: sum(o for o, _ in parts) / len(parts)) is False
    assert ex.check_merge_partitions(stub) is False


def pow2(n):
    return 1 << (n - 1).bit_length()


def test_pow2_checker_names_each_typical_mistake(capsys):
    mistakes = {
        "a true output of 25 reserves 32 positions": lambda p, o, m: min(pow2(p + o), m),
        "cap it": lambda p, o, m: p + pow2(o),
        "prompt's slots are reserved too": lambda p, o, m: min(pow2(o), m),
        "next power of two": lambda p, o, m: min(p + 2 * o, m),
    }
    for hint, wrong in mistakes.items():
        assert ex.check_pow2_reservation(wrong) is False
        out = capsys.readouterr().out
        assert "hint:" in out and hint in out, out
    assert ex.check_pow2_reservation(lambda p, o, m: min(p + pow2(o), m)) is True
