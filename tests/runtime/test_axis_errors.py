"""An axis out of range, named twice or not an integer, in a traced function: the error
NumPy raises eagerly (AxisError, a ValueError and an IndexError; ValueError for a repeated
axis; TypeError for a float), raised while tracing (shape rules: runtime/ir/shapes.py's
normalize_axis), naming the user's file and line, never a wrong shape or an internal
IndexError. Every reduction is checked against NumPy run eagerly on the same input; the
other axis-taking functions share the rule and a sample of them is checked too. NumPy
integers are axes like Python ints (`axis=np.int64(1)` was refused)."""

import os

import numpy as np
import pytest

import autograph as ag

AxisError = np.exceptions.AxisError
HERE = os.path.basename(__file__)


def _by_name(name):
    """(name, f(x, axis)) calling numpy's function `name` (dots: a ufunc's method)."""
    fn = np
    for part in name.split("."):
        fn = getattr(fn, part)
    return name, lambda x, a: fn(x, axis=a)


# one per reduction the NumPy surface stages, functions and methods
REDUCTIONS = [_by_name(n) for n in (
    "sum", "mean", "max", "min", "prod", "std", "var", "ptp", "count_nonzero", "average",
    "median", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd", "nanvar",
    "nanmedian", "add.reduce", "maximum.reduce", "logaddexp.reduce", "linalg.norm")] + [
    ("any", lambda x, a: np.any(x > 0, axis=a)),
    ("all", lambda x, a: np.all(x > 0, axis=a)),
    ("quantile", lambda x, a: np.quantile(x, 0.25, axis=a)),
    ("percentile", lambda x, a: np.percentile(x, 75, axis=a)),
    ("x.sum", lambda x, a: x.sum(axis=a)),
    ("x.mean", lambda x, a: x.mean(a)),
    ("x.max", lambda x, a: x.max(axis=a, keepdims=True)),
    ("x.prod", lambda x, a: x.prod(axis=a)),
    ("x.std", lambda x, a: x.std(axis=a)),
]
# one axis only (NumPy refuses a tuple for these); from sort on, the same shape rule
# outside the reductions
SINGLE_AXIS = [_by_name(n) for n in (
    "argmax", "argmin", "nanargmax", "nanargmin", "cumsum", "cumprod", "add.accumulate",
    "sort", "argsort", "diff", "flip")] + [
    ("x.argmax", lambda x, a: x.argmax(axis=a)),
    ("x.cumsum", lambda x, a: x.cumsum(a)),
    ("take", lambda x, a: np.take(x, [0], axis=a)),
    ("concatenate", lambda x, a: np.concatenate([x, x], axis=a)),
]
ALL = REDUCTIONS + SINGLE_AXIS

X = np.arange(1.0, 7.0).reshape(2, 3)


def _traced(fn, axis):
    """fn(x, axis) in a function ag.function traces for inputs of shape (None, 3): only
    traced, never run, so an error comes from the trace."""
    def f(x):
        return fn(x, axis)
    return ag.function(f).get_concrete_function(ag.TensorSpec([None, 3], np.float64))


def _names_user_line(exc, fn):
    msg = str(exc)
    assert f"{HERE}:{fn.__code__.co_firstlineno}" in msg, msg


@pytest.mark.parametrize("axis", [2, -3, np.int64(2)], ids=["2", "-3", "np.int64(2)"])
@pytest.mark.parametrize("name,fn", ALL, ids=[n for n, _ in ALL])
def test_an_axis_out_of_range_is_numpys_axis_error_at_trace_time(name, fn, axis):
    with pytest.raises(AxisError):
        fn(X, axis)                       # NumPy, eagerly
    with pytest.raises(AxisError) as info:
        _traced(fn, axis)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    assert f"axis {int(axis)} is out of bounds" in str(info.value)
    _names_user_line(info.value, fn)


@pytest.mark.parametrize("name,fn", REDUCTIONS, ids=[n for n, _ in REDUCTIONS])
def test_an_axis_out_of_range_in_a_tuple(name, fn):
    with pytest.raises(AxisError):
        fn(X, (0, 2))
    with pytest.raises(AxisError) as info:
        _traced(fn, (0, 2))
    _names_user_line(info.value, fn)


@pytest.mark.parametrize("name,fn", REDUCTIONS, ids=[n for n, _ in REDUCTIONS])
def test_an_axis_named_twice(name, fn):
    with pytest.raises(ValueError):       # (NumPy's words differ between functions)
        fn(X, (1, -1))
    with pytest.raises(ValueError, match="duplicate value in 'axis'") as info:
        _traced(fn, (1, -1))
    assert not isinstance(info.value, IndexError)
    _names_user_line(info.value, fn)


FLOAT_AXIS = [c for c in ALL if c[0] in ("sum", "max", "argmax", "cumsum", "x.mean", "median",
                                         "sort")]


@pytest.mark.parametrize("name,fn", FLOAT_AXIS, ids=[n for n, _ in FLOAT_AXIS])
def test_a_float_axis_is_a_type_error(name, fn):
    with pytest.raises(TypeError):
        fn(X, 1.0)
    with pytest.raises(TypeError, match="axis must be an integer") as info:
        _traced(fn, 1.0)
    _names_user_line(info.value, fn)


@pytest.mark.parametrize("axis", [np.int64(-1), np.int32(0), np.uint8(1)], ids=repr)
@pytest.mark.parametrize("name,fn", ALL, ids=[n for n, _ in ALL])
def test_a_numpy_integer_axis_reduces_as_numpy_does(name, fn, axis):
    expected = fn(X, axis)
    got = ag.function(lambda x: fn(x, axis))(X)
    np.testing.assert_allclose(np.asarray(got), expected)
    assert np.shape(got) == np.shape(expected)


@pytest.mark.parametrize("uf", [np.add, np.multiply, np.maximum, np.logaddexp],
                         ids=lambda uf: uf.__name__)
@pytest.mark.parametrize("axis", [(0, 2), (2, 0), (0, 1, 2), (1,), ()], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_a_reorderable_ufunc_reduces_over_several_axes(uf, axis, keepdims):
    """ufunc.reduce over a tuple of axes (refused before), as NumPy computes it."""
    x = np.arange(1.0, 25.0).reshape(2, 3, 4) / 8
    expected = uf.reduce(x, axis=axis, keepdims=keepdims)
    got = ag.function(lambda x: uf.reduce(x, axis=axis, keepdims=keepdims))(x)
    assert np.asarray(got).dtype == expected.dtype and np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_reduction_over_several_axes_of_a_non_reorderable_ufunc_is_numpys_error():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="not reorderable") as eager:
        np.subtract.reduce(x, axis=(0, 1))
    with pytest.raises(ValueError, match="not reorderable") as traced:
        ag.function(lambda x: np.subtract.reduce(x, axis=(0, 1)))(x)
    assert type(traced.value) is type(eager.value)


def test_order_statistics_take_a_tuple_of_axes_and_check_it():
    """np.median over several axes is staged (tests/runtime/test_quantiles_over_axes.py);
    an axis out of range in the tuple is NumPy's AxisError, naming the line."""
    def several(x):
        return np.median(x, axis=(0, 1))

    def out_of_range(x):
        return np.median(x, axis=(0, 2))
    np.testing.assert_allclose(ag.function(several)(X), several(X))
    with pytest.raises(AxisError) as info:
        ag.function(out_of_range)(X)
    assert f"{HERE}:{out_of_range.__code__.co_firstlineno + 1}" in str(info.value)


@pytest.mark.parametrize("name,fn", SINGLE_AXIS, ids=[n for n, _ in SINGLE_AXIS])
def test_a_tuple_of_one_axis_is_taken_or_refused_as_numpy_does(name, fn):
    """argmax, cumsum, sort, take... take one integer axis: NumPy's TypeError for (1,),
    even with one element (it was taken as its element); flip takes a tuple."""
    try:
        expected = fn(X, (1,))
    except TypeError:
        with pytest.raises(TypeError, match="axis must be an integer") as info:
            _traced(fn, (1,))
        _names_user_line(info.value, fn)
        return
    np.testing.assert_allclose(ag.function(lambda x: fn(x, (1,)))(X), expected)


@pytest.mark.parametrize("fn", [lambda x, a: np.add.accumulate(x, axis=a),
                                lambda x, a: np.cumulative_sum(x, axis=a)],
                         ids=["add.accumulate", "cumulative_sum"])
@pytest.mark.parametrize("axis", [(0, 1), ()], ids=str)
def test_an_accumulation_over_several_axes_or_none_is_numpys_value_error(fn, axis):
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        fn(X, axis)
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes") as info:
        _traced(fn, axis)
    assert not isinstance(info.value, IndexError)
    assert HERE in str(info.value)
