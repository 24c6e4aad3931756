"""`jit_compile=True` gives NumPy's maximum/minimum bit for bit, signs of zeros included.

Of two equal values NumPy returns the second and Numba's `np.maximum` the first, so
`np.maximum(-0.0, 0.0)` was `-0.0` in native code and `0.0` in NumPy (native/ops.py now
swaps the arguments for Numba). Each case compares the native result with eager NumPy
by bits: values, NaNs and the sign bit of every zero; `clip`, which keeps its input on
a tie in NumPy, must keep doing so. `fmax`/`fmin` are compared by value only: NumPy's
own sign of a zero tie there changes with the array's length (its vector loop and its
scalar tail disagree), as C leaves it unspecified."""

import numpy as np
import pytest

import autograph as ag

pytest.importorskip("numba")

X = [-0.0, 0.0, -0.0, 0.0, np.nan, 1.0, np.nan, -2.0, 3.0, -np.inf]
Y = [0.0, -0.0, -0.0, 0.0, 1.0, np.nan, np.nan, -2.0, 1.0, np.inf]


def _same_bits(got, want, signs=True):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    if signs:
        assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


def _extrema(x, y):
    return (np.maximum(x, y), np.minimum(x, y),
            np.maximum(x[0], y[0]), np.minimum(x[1], y[1]), np.maximum(x[2], y[2]),
            np.fmax(x, y), np.fmin(x, y))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_maximum_minimum_match_numpy_bit_for_bit(dtype):
    x, y = np.array(X, dtype), np.array(Y, dtype)
    got = ag.function(_extrema, jit_compile=True)(x, y)
    for k, (g, w) in enumerate(zip(got, _extrema(x, y))):
        _same_bits(g, w, signs=k < 5)


def test_extrema_in_a_loop_and_of_integers():
    def f(x, y, k):
        m = np.zeros_like(x)
        for i in range(3):
            m = np.maximum(m, x * k) + np.minimum(y, x)
        return m, np.maximum(k, 2), np.minimum(k, -1)

    x, y = np.array(X[:4]), np.array(Y[:4])
    got = ag.function(f, jit_compile=True)(x, y, np.int64(1))
    for g, w in zip(got, f(x, y, np.int64(1))):
        _same_bits(g, w)


def test_clip_keeps_its_input_on_a_tie():
    def f(x):
        return np.clip(x, 0.0, 1.0), np.clip(x, -1.0, -0.0), np.clip(x, -0.0, 0.0)

    x = np.array([-0.0, 0.0, 0.5, -3.0, 2.0, np.nan])
    got = ag.function(f, jit_compile=True)(x)
    for g, w in zip(got, f(x)):
        _same_bits(g, w)
