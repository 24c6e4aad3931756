"""`axis=0` or `axis=-1` on a 0-d input: NumPy accepts it for some functions (the ufunc
reductions, the functions built on them and those that check the axis as `PyArray_CheckAxis`
does: sum, max, any, argmax, cumsum, argsort, take...) and refuses it for others (mean,
std, median, quantile, sort...). A traced function does what NumPy does for each, checked
against NumPy run eagerly on the same 0-d input for the version installed: the same value
and shape, or the same kind of error. A one-element tuple `(0,)` and `axis=1` are refused
by all of them."""

import numpy as np
import pytest

import autograph as ag


def _np(name):
    fn = np
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


def _plain(name):
    return name, lambda x, a: _np(name)(x, axis=a)


CASES = [_plain(n) for n in (
    "sum", "mean", "max", "min", "prod", "std", "var", "ptp", "count_nonzero", "average",
    "median", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd", "nanvar",
    "nanmedian", "amax", "amin", "argmax", "argmin", "nanargmax", "nanargmin", "cumsum",
    "cumprod", "nancumsum", "nancumprod", "sort", "argsort", "flip", "add.reduce",
    "maximum.reduce", "multiply.reduce", "logaddexp.reduce", "linalg.norm", "squeeze",
    "expand_dims")] + [
    ("any", lambda x, a: np.any(x > 0, axis=a)),
    ("all", lambda x, a: np.all(x > 0, axis=a)),
    ("quantile", lambda x, a: np.quantile(x, 0.25, axis=a)),
    ("percentile", lambda x, a: np.percentile(x, 75, axis=a)),
    ("nanquantile", lambda x, a: np.nanquantile(x, 0.25, axis=a)),
    ("nanpercentile", lambda x, a: np.nanpercentile(x, 75, axis=a)),
    ("take", lambda x, a: np.take(x, [0], axis=a)),
    ("repeat", lambda x, a: np.repeat(x, 2, axis=a)),
    ("compress", lambda x, a: np.compress([True], x, axis=a)),
    ("partition", lambda x, a: np.partition(x, 0, axis=a)),
    ("argpartition", lambda x, a: np.argpartition(x, 0, axis=a)),
    ("cumulative_sum", lambda x, a: np.cumulative_sum(x, axis=a)),
    ("minimum.reduce", lambda x, a: np.minimum.reduce(x, axis=a)),
    ("subtract.reduce", lambda x, a: np.subtract.reduce(x, axis=a)),
    ("logical_and.reduce", lambda x, a: np.logical_and.reduce(x > 0, axis=a)),
    ("x.var", lambda x, a: x.var(axis=a)),
    ("x.argsort", lambda x, a: x.argsort(axis=a)),
    ("nanargmax keepdims", lambda x, a: np.nanargmax(x, axis=a, keepdims=True)),
    ("ptp keepdims", lambda x, a: np.ptp(x, axis=a, keepdims=True)),
    ("max of bools", lambda x, a: np.max(x > 0, axis=a)),
    ("x.sum", lambda x, a: x.sum(axis=a)),
    ("x.mean", lambda x, a: x.mean(axis=a)),
    ("x.max", lambda x, a: x.max(axis=a, keepdims=True)),
    ("x.argmax", lambda x, a: x.argmax(axis=a)),
    ("x.cumsum", lambda x, a: x.cumsum(axis=a)),
    ("x.std", lambda x, a: x.std(axis=a)),
    ("sum keepdims", lambda x, a: np.sum(x, axis=a, keepdims=True)),
    ("argmax keepdims", lambda x, a: np.argmax(x, axis=a, keepdims=True)),
]

X = np.array(2.5)


def _eager(fn, axis):
    try:
        return fn(X, axis), None
    except Exception as e:   # noqa: BLE001 - the kind of error is what is compared
        return None, e


@pytest.mark.parametrize("axis", [0, -1, 1, (0,)], ids=str)
@pytest.mark.parametrize("name,fn", CASES, ids=[n for n, _ in CASES])
def test_an_axis_on_a_0d_input_is_taken_or_refused_as_numpy_does(name, fn, axis):
    expected, error = _eager(fn, axis)
    traced = ag.function(lambda x: fn(x, axis))
    if error is not None:
        # AxisError is a ValueError and an IndexError: a traced error of NumPy's class
        with pytest.raises(type(error)):
            traced(X)
        return
    got = traced(X)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(np.asarray(got), expected)


def test_numpy_takes_axis_0_on_a_0d_input_for_some_functions_only():
    """The table above covers both kinds (guards against a NumPy where all agree)."""
    taken = {n for n, fn in CASES if _eager(fn, 0)[1] is None}
    assert {"sum", "argmax", "cumsum", "argsort"} <= taken
    assert not {"mean", "std", "median", "quantile", "sort"} & taken
