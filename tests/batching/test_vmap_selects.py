"""A per-lane `if` of small warning-free integer branches runs both and selects
(batching/selects.py); every other per-lane `if` partitions, so a branch never runs on a
lane whose own value would not run it (checked with NumPy's warnings raised as errors)."""

import numpy as np
import pytest

import autograph as ag
from autograph.batching import selects


def ops_of(fn, *args):
    conc = ag.function(ag.vmap(fn)).get_concrete_function(*args)
    return [node.op for node in conc.graph.walk()]


def collatz_step(n):
    return n // 2 if n % 2 == 0 else 3 * n + 1


def test_an_integer_if_selects_and_equals_the_elements():
    xs = np.array([-7, -2, -1, 0, 1, 2, 3, 9, 2**62, -(2**63)], dtype=np.int64)
    assert "nonzero" not in ops_of(collatz_step, xs)
    with np.errstate(all="raise"):
        got = ag.vmap(collatz_step)(xs)
        want = [collatz_step(x) for x in xs]     # (array scalars wrap, as arrays do)
    np.testing.assert_array_equal(got, want)


def test_ints_and_bools_with_negative_divisors_and_two_outputs():
    def f(a, b):
        if a > b:
            q, r = a // -3, a % -3 == 1
        else:
            q, r = (a * b) & 7, a != b
            r = r | (b < 0)
        return q, r
    a = np.arange(-6, 6, dtype=np.int32)
    b = np.int32(2) - a[::-1]
    assert "nonzero" not in ops_of(f, a, b)
    got = ag.vmap(f)(a, b)
    want = [f(x, y) for x, y in zip(a, b)]
    np.testing.assert_array_equal(got[0], [q for q, _ in want])
    np.testing.assert_array_equal(got[1], [bool(r) for _, r in want])


@pytest.mark.parametrize("fn", [
    lambda x, y: x // y if y != 0 else x,           # a division by a per-lane value
    lambda x, y: np.sqrt(x * 1.0) if x >= 0 else y * 1.0,   # floating point
    lambda x, y: x % y if y != 0 else 0,
])
def test_other_branches_partition_and_never_run_on_the_other_lanes(fn):
    x = np.array([4, -9, 7, 0, 12], dtype=np.int64)
    y = np.array([2, 0, 0, 3, -5], dtype=np.int64)
    assert "nonzero" in ops_of(fn, x, y)
    with np.errstate(all="raise"):      # a branch on a lane it is not for would warn
        got = ag.vmap(fn)(x, y)
    np.testing.assert_allclose(got, [fn(a, b) for a, b in zip(x, y)])


def test_the_rule_counts_operations():
    def long_branch(n):
        if n > 0:
            for _ in range(selects.SELECT_MAX_NODES + 1):
                n = n + 1
        return n
    xs = np.arange(-3, 3, dtype=np.int64)
    assert "nonzero" in ops_of(long_branch, xs)
    np.testing.assert_array_equal(ag.vmap(long_branch)(xs), [long_branch(x) for x in xs])
