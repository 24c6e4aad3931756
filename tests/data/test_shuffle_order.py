"""The vectorized buffered shuffle equals the buffer loop it replaces, draw for draw."""

import numpy as np
import pytest

from autograph.data import buffered
from autograph.data.shuffle import Draws, shuffle_order


def loop_order(u, buffer_size):
    """The reference: the buffered shuffle as the sequential loop (tf.data's semantics)."""
    n = len(u)
    out = np.empty(n, dtype=np.int64)
    buf = list(range(min(max(buffer_size, 1), n)))
    nxt = len(buf)
    for k in range(n):
        r = int(u[k] * len(buf))
        out[k] = buf[r]
        if nxt < n:
            buf[r] = nxt
            nxt += 1
        else:
            buf[r] = buf[-1]
            buf.pop()
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 333])
def test_equals_the_loop_for_every_buffer_size(n):
    for b in sorted({1, 2, 3, 5, n // 2, n - 1, n, n + 4}):
        if b < 1:
            continue
        for seed in range(4):
            u = Draws(seed, b, n).block(n)
            assert buffered.permutation(u, b).tolist() == loop_order(u, b).tolist(), (n, b, seed)


def test_equals_the_loop_on_adversarial_draws():
    """Draws that hit the same slot again and again, the last slot, and slot 0."""
    rng = np.random.default_rng(0)
    for n, b in [(50, 8), (50, 50), (50, 80), (200, 1), (40, 39)]:
        for u in (np.zeros(n), np.full(n, 1 - 2**-53), rng.choice([0.0, 0.5, 0.99], n),
                  rng.random(n) ** 8, np.minimum(1 - rng.random(n) ** 8, 1 - 2**-53)):
            assert buffered.permutation(u, b).tolist() == loop_order(u, b).tolist(), (n, b)


def test_large_orders_equal_the_loop_and_are_permutations():
    for n, b in [(20_000, 20_000), (20_000, 1000), (20_000, 3)]:
        got = shuffle_order(n, b, seed=9, epoch=1, iteration=2)
        assert got.tolist() == loop_order(Draws(9, 1, 2).block(n), b).tolist()
        assert np.array_equal(np.sort(got), np.arange(n))
        if b < n:   # still a buffered shuffle: output k is one of the first k + b inputs
            assert np.all(got < np.arange(n) + b)
