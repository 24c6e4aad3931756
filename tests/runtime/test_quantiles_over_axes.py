"""median, quantile, percentile, nanmedian, nanquantile and nanpercentile over a tuple of
axes (refused while tracing before): staged by moving the axes last and merging them into
one (runtime/numpy/merged_axes.py). Checked against NumPy run eagerly for every order of
axes, keepdims, `axis=()`, NaNs, a length unknown while tracing, and the errors NumPy
gives; gradients against central differences in every mode."""

import warnings

import numpy as np
import pytest

import autograph as ag
from tests.autodiff import modes

AxisError = np.exceptions.AxisError

FUNCS = [
    ("median", lambda x, a, k: np.median(x, axis=a, keepdims=k)),
    ("quantile", lambda x, a, k: np.quantile(x, 0.3, axis=a, keepdims=k)),
    ("quantile q vector", lambda x, a, k: np.quantile(x, [0.1, 0.5, 0.9], axis=a,
                                                       keepdims=k)),
    ("percentile q matrix", lambda x, a, k: np.percentile(x, [[25, 50], [75, 100]], axis=a,
                                                           keepdims=k)),
    ("nanmedian", lambda x, a, k: np.nanmedian(x, axis=a, keepdims=k)),
    ("nanquantile", lambda x, a, k: np.nanquantile(x, [0.2, 0.7], axis=a, keepdims=k)),
    ("nanpercentile", lambda x, a, k: np.nanpercentile(x, 60, axis=a, keepdims=k)),
]
IDS = [n for n, _ in FUNCS]
# (axes, keepdims): several in any order, one in a tuple, none
AXES = [((0, 2), False), ((2, -3, 1), True), ((1,), True), ((), False), ((0, 1, 2), False)]

X = np.random.default_rng(0).normal(size=(3, 4, 5))
XNAN = X.copy()
XNAN[0, 1, :] = np.nan          # lanes with some NaNs ...
XNAN[:, 2, :] = np.nan          # ... and lanes that are all NaN (axis (0, 2))


def _compare(got, expected):
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis,keepdims", AXES, ids=str)
@pytest.mark.parametrize("name,fn", FUNCS, ids=IDS)
def test_several_axes_reduce_as_numpy_does(name, fn, axis, keepdims):
    x = XNAN if name.startswith("nan") else X
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's all-NaN slice warning
        expected = fn(x, axis, keepdims)
        _compare(ag.function(lambda x: fn(x, axis, keepdims))(x), expected)


@pytest.mark.parametrize("name,fn", FUNCS, ids=IDS)
def test_an_integer_input_and_a_length_unknown_while_tracing(name, fn):
    """The kept axis has a length known when the graph runs only; integers give float64."""
    x = np.arange(60).reshape(3, 4, 5) % 7
    f = ag.function(lambda x: fn(x, (0, 2), True),
                    input_signature=[ag.TensorSpec([3, None, 5], np.int64)])
    _compare(f(x), fn(x, (0, 2), True))


@pytest.mark.parametrize("name,fn", FUNCS, ids=IDS)
def test_a_bad_tuple_of_axes_is_numpys_error(name, fn):
    with pytest.raises(AxisError):
        fn(X, (0, 3), False)
    with pytest.raises(AxisError):
        ag.function(lambda x: fn(x, (0, 3), False))(X)
    with pytest.raises(ValueError):
        fn(X, (0, -3), False)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        ag.function(lambda x: fn(x, (0, -3), False))(X)


# -- gradients: central differences in every mode --------------------------------------------

# distinct values (ties make the median's gradient depend on the sort's order)
XG = np.random.default_rng(1).permutation(24).reshape(2, 3, 4) / 7.0 + 0.1
W = np.random.default_rng(2).normal(size=(2, 3))
GRADS = [
    ("median", lambda x: np.sum(W[:, :, None] * np.median(x, axis=(0, 2), keepdims=True))),
    ("quantile", lambda x: np.sum(W[:, :2] * np.quantile(x, [0.3, 0.8], axis=(1, 2)))),
    ("percentile", lambda x: np.sum(np.percentile(x, 35, axis=(2, 0)) ** 2)),
    ("nanmedian", lambda x: np.sum(np.nanmedian(x, axis=(0, 1)) * W[0, 0])),
    ("nanquantile", lambda x: np.sum(np.nanquantile(x, 0.4, axis=(-1, 0), keepdims=True)
                                     ** 2)),
    ("nanpercentile", lambda x: np.sum(np.nanpercentile(x, [10, 90], axis=(0, 1)))),
]
GIDS = [n for n, _ in GRADS]


@pytest.mark.parametrize("mode", modes.MODES)
@pytest.mark.parametrize("name,f", GRADS, ids=GIDS)
def test_gradients_match_central_differences(name, f, mode):
    np.testing.assert_allclose(modes.grad(mode, f, XG), modes.fd(f, XG), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name,f", GRADS[:2] + GRADS[4:5], ids=GIDS[:2] + GIDS[4:5])
def test_a_second_gradient_of_a_persistent_tape(name, f, traced):
    """The tape's second gradient() call (of f squared) is central differences too."""
    def both(x):
        with ag.GradientTape(persistent=True) as tape:
            x = tape.watch(x) if not traced else (tape.watch(x), x)[1]
            y = f(x)
            y2 = y * y
        return tape.gradient(y, x), tape.gradient(y2, x)
    first, second = (ag.function(both) if traced else both)(XG)
    np.testing.assert_allclose(first, modes.fd(f, XG), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(second, modes.fd(lambda x: f(x) ** 2, XG), rtol=1e-6,
                               atol=1e-8)
