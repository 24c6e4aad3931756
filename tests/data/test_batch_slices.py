"""A batch of an array pipeline is a slice with bounds known at run time; the generated
code writes it as a NumPy subscript, which must mean what the getitem kernel means."""

import numpy as np
import pytest

import autograph as ag


@ag.function
def slices(x, a, b):
    return x[a:b], x[b:a:-1], x[a - 20:b + 20], x[::-2], x[a:], x[:b:2]


@pytest.mark.parametrize("a,b", [(2, 7), (0, 0), (-3, 9), (8, 2), (12, 15)])
def test_dynamic_slices_match_numpy(a, b):
    x = np.arange(10.0)
    got = slices(x, np.int64(a), np.int64(b))
    ref = (x[a:b], x[b:a:-1], x[a - 20:b + 20], x[::-2], x[a:], x[:b:2])
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


def test_iterating_a_dataset_in_unconverted_code_says_what_to_do():
    ds = ag.data.Dataset.range(3)

    @ag.function(autograph=False)
    def f():
        s = 0
        for x in ds:
            s += x
        return s
    with pytest.raises(TypeError, match="autograph"):
        f()
