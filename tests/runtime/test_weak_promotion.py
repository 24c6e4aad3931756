"""A Python number meeting an array in the other branch of a cond follows NEP 50, as NumPy's
own `array + number` does: same kind -> the array's dtype, other kind -> promoted."""

import numpy as np
import pytest

import autograph as ag


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
@pytest.mark.parametrize("number", [7, 1.5, True, 2j])
@pytest.mark.parametrize("positive", [True, False])
def test_branch_dtype_matches_numpy_weak_promotion(dtype, number, positive):
    def pick(x):
        return ag.cond(x > 0, lambda: x * 2, lambda: number)

    x = dtype(3 if positive else 0)
    expected_dtype = (x + number).dtype if not isinstance(number, bool) else np.result_type(x, number)
    out = ag.function(pick, autograph=False)(x)
    assert np.asarray(out).dtype == expected_dtype
    expected = x * 2 if positive else number
    assert np.asarray(out) == np.asarray(expected).astype(expected_dtype)


@pytest.mark.parametrize("start", [0, 0.5, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("n", [0, 3])
def test_loop_variable_from_a_python_number_promotes_like_numpy(start, dtype, n):
    """`s = start; while i < n: s = i` with a typed `i`: `s` holds both the Python number
    and the body's values without truncating either (0.5 meeting int64 gives float64)."""
    def loop(limit):
        i0 = dtype(0)
        return ag.while_loop(lambda i, s: i < limit, lambda i, s: (i + dtype(1), i),
                             (i0, start))[1]

    out = np.asarray(ag.function(loop, autograph=False)(np.int64(n)))
    expected_dtype = np.result_type(dtype, type(start)(0)) if not isinstance(start, bool) \
        else np.dtype(dtype)
    assert out.dtype == expected_dtype
    assert out == (start if n == 0 else n - 1)
