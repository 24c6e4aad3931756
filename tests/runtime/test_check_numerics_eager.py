"""`ag.config.check_numerics(True)` in code that runs no graph: a function called under
`run_functions_eagerly(True)` and a Dataset's map/filter function the host runs
(autograph/runtime/exec/eager_numerics.py). Each program runs three ways: traced with the
switch on (the graph path, the reference), eagerly with it on (the same kind of error,
naming the same line of this file, or the same result), and eagerly with it off (NumPy's
own answer, no error, nothing of the check on the way: counted)."""

import inspect
import os
import re

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset
from autograph.runtime.exec import eager_numerics

HERE = os.path.basename(__file__)


@pytest.fixture(autouse=True)
def quiet():
    with np.errstate(all="ignore"):
        yield
    assert not ag.config.numerics_checked() and not ag.config.functions_run_eagerly()


# -- programs: (x -> value); the marked line makes the NaN or infinity, or none does -------------

def log_of_negative(x):
    y = x - 3.0
    return np.log(y)          # made


def sqrt_in_a_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sqrt(x[i] - 2.5)          # made
    return s


def zero_over_zero(x):
    z = x * 0.0
    return np.sum(z / z)          # made


def divide_by_zero(x):
    return 1.0 / (x - x)          # made


def exp_overflow(x):
    return np.exp(x * 1000.0)          # made


def masked_log(x):
    return np.where(x > 2.0, np.log(x - 2.0), 0.0)          # made


def finite(x):
    return np.sum(np.log(x)) * np.tanh(x)


MADE = [log_of_negative, sqrt_in_a_loop, zero_over_zero, divide_by_zero, exp_overflow,
        masked_log]
X = np.array([1.0, 2.0, 3.0, 4.0])

# NaN or infinity brought in by the argument: the graph reports the first operation that
# computes with it (not a move, not tanh/sin...), "an input held NaN or infinity already"


def input_added(x):
    y = x[1:]
    return y + 1.0          # made


def input_summed(x):
    return np.sum(np.tanh(x))          # made


def input_moved(x):
    return np.maximum(np.flip(x)[1:], 0.0)


def input_masked(x):
    return np.where(np.isfinite(x), x, 0.0) * 2.0


def input_bounded(x):
    return np.max(np.tanh(-x))


def input_scalar(x):
    s = x[3]
    return s * 3.0          # made


FROM_INPUT = [input_added, input_summed, input_scalar]
NOT_FROM_INPUT = [input_moved, input_masked, input_bounded]
XNAN = np.array([1.0, np.nan, 3.0, -np.inf])


def _made_line(fn):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if "# made" in line)


def _line_named(error):
    return int(re.search(re.escape(HERE) + r":(\d+)", str(error)).group(1))


def _eagerly(fn, x, check=True):
    with ag.config.check_numerics(check):
        ag.config.run_functions_eagerly(True)
        try:
            return ag.function(fn)(x)
        finally:
            ag.config.run_functions_eagerly(False)


def _graph(fn, x):
    with ag.config.check_numerics(True):
        return ag.function(fn)(x)


@pytest.mark.parametrize("fn,x", [(f, X) for f in MADE] + [(f, XNAN) for f in FROM_INPUT],
                         ids=[f.__name__ for f in MADE + FROM_INPUT])
def test_an_eager_call_raises_where_the_graph_does_naming_the_same_line(fn, x):
    with pytest.raises(ag.errors.NonFiniteError) as graph:
        _graph(fn, x)
    with pytest.raises(ag.errors.NonFiniteError) as eager:
        _eagerly(fn, x)
    assert isinstance(eager.value, FloatingPointError)
    assert _line_named(eager.value) == _line_named(graph.value) == _made_line(fn)
    source = "from finite inputs" if fn in MADE else "an input held NaN or infinity already"
    assert source in str(graph.value) and source in str(eager.value), str(eager.value)
    assert "run eagerly" in str(eager.value)


@pytest.mark.parametrize("fn,x", [(finite, X)] + [(f, XNAN) for f in NOT_FROM_INPUT],
                         ids=["finite"] + [f.__name__ for f in NOT_FROM_INPUT])
def test_what_the_graph_lets_pass_an_eager_call_returns_as_numpy_does(fn, x):
    expected = fn(x)
    np.testing.assert_array_equal(_graph(fn, x), expected)
    got = _eagerly(fn, x)
    assert type(got) is type(expected)   # plain arrays out, never the check's Carrier
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fn", MADE + FROM_INPUT, ids=lambda f: f.__name__)
def test_off_an_eager_call_is_numpys_own_and_runs_nothing_of_the_check(fn, monkeypatch):
    calls = []
    monkeypatch.setattr(eager_numerics, "call", lambda *a, **k: calls.append(a))
    x = XNAN if fn in FROM_INPUT else X
    np.testing.assert_array_equal(_eagerly(fn, x, check=False), fn(x))
    assert calls == []


def test_the_arguments_of_an_eager_call_are_the_callers_own():
    """Lists passed in are not copied (a function may fill them); NumPy's error state is
    the caller's again afterwards."""
    def fill(out, x):
        out.append(np.log(x))
        return x
    out = []
    with ag.config.check_numerics(True):
        ag.config.run_functions_eagerly(True)
        try:
            ag.function(fill)(out, X)
        finally:
            ag.config.run_functions_eagerly(False)
    assert len(out) == 1 and np.geterr()["invalid"] == "ignore"


# -- Dataset.map / filter on the host ---------------------------------------------------------

def log_each(v):
    return np.log(v - 2.0)          # made


def keep_sqrt(v):
    return np.sqrt(v - 2.5) > 0          # made


@pytest.mark.parametrize("kind,fn", [("map", log_each), ("filter", keep_sqrt)])
def test_a_dataset_function_run_on_the_host_is_checked(kind, fn):
    ds = getattr(Dataset.from_tensor_slices(X), kind)(fn)
    expected = [np.asarray(v) for v in ds]                      # off: NumPy's NaN/-inf
    assert len(expected) == (4 if kind == "map" else 2)
    with ag.config.check_numerics(True):
        with pytest.raises(ag.errors.NonFiniteError) as info:
            list(ds)
        assert _line_named(info.value) == _made_line(fn), str(info.value)
        # finite elements only: the same elements as unchecked
        fine = Dataset.from_tensor_slices(X[3:]).map(log_each)
        np.testing.assert_array_equal(list(fine), [np.log(2.0)])


def test_a_dataset_function_with_a_nan_element_reports_the_element_s_nan():
    ds = Dataset.from_tensor_slices(XNAN).map(lambda v: v * 2.0)
    with ag.config.check_numerics(True):
        with pytest.raises(ag.errors.NonFiniteError, match="an input held NaN"):
            list(ds)


def test_a_nan_number_passed_in_is_reported_where_the_graph_reports_it():
    """A NumPy scalar is an input of the graph: reported where it is computed with; a
    Python float is a constant of the trace (Python's arithmetic): neither reports it."""
    def scaled(s):
        return s * 2.0
    for arg in (np.float64(np.nan), np.float64(np.inf)):
        with pytest.raises(ag.errors.NonFiniteError, match="an input held NaN"):
            _graph(scaled, arg)
        with pytest.raises(ag.errors.NonFiniteError, match="an input held NaN"):
            _eagerly(scaled, arg)
        assert np.geterr()["invalid"] == "ignore"   # the caller's error state again
    assert np.isnan(_graph(scaled, float("nan"))) and np.isnan(_eagerly(scaled, float("nan")))


def test_off_a_dataset_function_runs_nothing_of_the_check(monkeypatch):
    calls = []
    real = eager_numerics.call
    monkeypatch.setattr(eager_numerics, "call", lambda *a, **k: calls.append(a) or real(*a, **k))
    ds = Dataset.from_tensor_slices(X).map(log_each)
    assert np.isnan(list(ds)[0]) and calls == []
    with ag.config.check_numerics(True):
        assert len(list(Dataset.from_tensor_slices(X[2:]).map(log_each))) == 2
    assert len(calls) == 2   # one per element, while on
