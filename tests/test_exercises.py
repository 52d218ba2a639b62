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
            lambda n, m: min(2 ** math.ceil(math.log2(n)), m),
            lambda n, m: 2 ** math.ceil(math.log2(n)),
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
