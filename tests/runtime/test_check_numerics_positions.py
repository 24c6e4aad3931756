"""check_numerics reports a NaN or an infinity wherever the program puts the value that holds
it, not only in a variable: an item (`a[i] = log(x)`, in straight-line code and in a staged
loop, which writes the buffer in place), an attribute, one of several unpacked values, a
returned expression or one of several returned values, an argument of another call, a list
or dict element, an augmented assignment, a loop-carried value, a branch of a tensor `if`,
a value `where` then masks. Each is run in watch mode (the default for a graph that can be
run again), full mode (every result tested) and with jit_compile=True (whose native code
has no tests: under the switch it runs the checked generated code), and the error must
name the operation and the user's line that made the value (numerics.py, numerics_plan.py).

Not checked, by design: code that runs no graph (ag.config.run_functions_eagerly(True), a
Dataset.map function run on the host): NumPy computes it directly; see the last test."""

import inspect
import os

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import numerics_plan

HERE = os.path.basename(__file__)


@pytest.fixture(autouse=True)
def quiet():
    with np.errstate(all="ignore"):
        yield
    assert not ag.config.numerics_checked()


class Box:
    pass


def named(x):
    y = np.log(x)   # NaN
    return y * 2.0


def item_straight_line(x):
    a = np.zeros(3)
    a[1] = np.log(x[0])   # NaN
    return a


def item_in_a_staged_loop(x):
    a = np.zeros(3)
    for i in ag.range(3):
        a[i] = np.log(x[i]) + 1.0   # NaN
    return a


def item_augmented(x):
    a = np.ones(3)
    a[0] += np.sqrt(x[0])   # NaN
    return a


def attribute(x):
    b = Box()
    b.value = np.log(x)   # NaN
    return b.value + 1.0


def unpacked(x):
    p, q = x + 1.0, np.log(x)   # NaN
    return p * q


def returned_expression(x):
    return np.log(x) * 2.0 + 1.0   # NaN


def one_of_returned_values(x):
    return x + 1.0, np.log(x)   # NaN


def argument_of_a_call(x):
    return np.sum(np.log(x))   # NaN


def list_element(x):
    values = [x, np.log(x)]   # NaN
    return values


def dict_value(x):
    return {"a": x, "b": np.sqrt(x)}   # NaN


def augmented(x):
    y = x + 0.0
    y += np.log(x)   # NaN
    return y


def loop_carried(x):
    s = x * 0.0
    for i in ag.range(3):
        s = s + np.log(x + 3.0 - i)   # NaN
    return s


def branch_of_a_tensor_if(x):
    if np.sum(x) < 0:
        r = np.log(x)   # NaN
    else:
        r = x
    return r


def masked_by_where(x):
    return np.where(x > 0, np.sqrt(x), 0.0)   # NaN


def hidden_by_tanh_in_an_item(x):
    a = np.zeros(3)
    a[2] = np.tanh(np.log(x[1]))   # NaN
    return a


POSITIONS = [named, item_straight_line, item_in_a_staged_loop, item_augmented, attribute,
             unpacked, returned_expression, one_of_returned_values, argument_of_a_call,
             list_element, dict_value, augmented, loop_carried, branch_of_a_tensor_if,
             masked_by_where, hidden_by_tanh_in_an_item]

X = np.array([-1.0, -2.0, -3.0])


def leaves(value):
    """A result's arrays: a dict's values, a tuple's or list's items, or the value."""
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, (tuple, list)) else [value]


def marked_line(fn):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if "# NaN" in line)


def call(fn, mode, monkeypatch):
    """fn(X) under check_numerics in `mode`: 'watch' (the planned tests), 'full' (every
    result: as for a graph that cannot be run again) or 'jit' (jit_compile=True)."""
    if mode == "full":
        monkeypatch.setattr(numerics_plan, "replayable", lambda graph: False)
    compiled = ag.function(fn, jit_compile=(mode == "jit"))
    with ag.config.check_numerics(True):
        return compiled(X)


@pytest.mark.parametrize("mode", ["watch", "full", "jit"])
@pytest.mark.parametrize("fn", POSITIONS, ids=lambda f: f.__name__)
def test_a_nan_is_reported_with_the_users_line_wherever_it_is_put(fn, mode, monkeypatch):
    plain = leaves(fn(X))   # the program does make a value that is not finite (NumPy)
    assert not all(np.isfinite(v).all() for v in plain) or fn is masked_by_where
    with pytest.raises(ag.errors.NonFiniteError) as info:
        call(fn, mode, monkeypatch)
    message = str(info.value)
    assert message.startswith("check_numerics: "), message
    assert f"{HERE}:{marked_line(fn)}" in message, message


@pytest.mark.parametrize("fn", POSITIONS, ids=lambda f: f.__name__)
def test_finite_values_pass_and_equal_numpy(fn, monkeypatch):
    """The same programs on inputs that make no NaN: no error, NumPy's values."""
    x = np.array([0.5, 2.0, 3.0])
    expected = fn(x)
    with ag.config.check_numerics(True):
        got = ag.function(fn)(x)
    expected, got = leaves(expected), leaves(got)
    assert len(got) == len(expected)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_code_that_runs_no_graph_is_checked_too():
    """run_functions_eagerly: NumPy runs the Python function itself, under the switch's
    errstate (runtime/exec/eager_numerics.py; tests/runtime/test_check_numerics_eager.py
    has the rest): the same error, naming the same line."""
    with ag.config.check_numerics(True):
        ag.config.run_functions_eagerly(True)
        try:
            with pytest.raises(ag.errors.NonFiniteError, match="log made NaN") as info:
                ag.function(named)(X)
        finally:
            ag.config.run_functions_eagerly(False)
    assert "np.log(x)" in str(info.value) and "run eagerly" in str(info.value)