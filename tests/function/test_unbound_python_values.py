"""A variable that one branch of a tensor `if` gives its first value, where that value is a
Python number (`u = b // 6` with `b` a Python int): the graph must still raise Python's
UnboundLocalError where the program reads it after the other branch ran.

Found by `benchmarks/differential/run.py --seed 11` (8 of 10,000 programs): `cond` passed
the Python number through (the other branch's placeholder equals it), so it carried no
flag, the read was not checked, and the traced function returned a value where Python
raises. Each case runs as Python and traced, for inputs where Python raises and where it
does not."""

import numpy as np
import pytest

import autograph as ag
from autograph import errors


def break_before_assign(x, n):      # the fuzzer's program, reduced
    b = 1
    for i0 in range(3):
        if n != 4:
            break
        u = b // 6
    return b * (4 + u)


def continue_before_assign(x, n):
    b = 2.5
    for i0 in range(2):
        if n > 3:
            continue
        u = b * 2
    return x + u


def plain_if(x, n):
    k = 3
    if n > 0:
        u = k + 1
    return x * u


def nested_if(x, n):
    flag = True
    if n > 0:
        if x > 0:
            u = flag
    return np.where(u, x, -x)


def read_in_a_later_branch(x, n):
    k = 4
    if n > 0:
        u = k
    if x > 0:
        x = x + u
    return x


CASES = [break_before_assign, continue_before_assign, plain_if, nested_if,
         read_in_a_later_branch]


def _python(f, x, n):
    try:
        return f(x, n)
    except UnboundLocalError:
        return UnboundLocalError


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x,n", [(5, 4), (5, 2), (-3, 1), (5, -1), (-3, 5)])
def test_traced_raises_where_python_raises_and_agrees_elsewhere(f, x, n):
    expected = _python(f, x, n)
    traced = ag.function(f)
    if expected is UnboundLocalError:
        with pytest.raises(UnboundLocalError, match="'u'"):
            traced(np.int64(x), np.int64(n))
    else:
        got = traced(np.int64(x), np.int64(n))
        np.testing.assert_allclose(np.asarray(got, dtype=float), float(expected))


@pytest.mark.parametrize("value", ['"long"', "None", "(1, 2)"])   # a structure: one
def test_a_value_that_cannot_carry_the_flag_is_refused_at_the_users_line(tmp_path, value):
    # (no tensor holds a string or None; a structure would need a flag per array)
    message = "'u' has a value after one branch"
    from tests.conftest import load_module
    text = f"def f(x, n):\n    if n > 0:\n        u = {value}\n    return x, u\n"
    f = load_module(tmp_path, text, "unflaggable").f
    with pytest.raises(errors.StagingError, match=message) as info:
        ag.function(f)(np.int64(1), np.int64(2))
    assert "unflaggable.py:2" in str(info.value)


def test_converted_code_run_eagerly_keeps_pythons_behaviour():
    for f in CASES:
        converted = ag.to_graph(f)
        for x, n in [(5, 4), (5, 2), (-3, 1), (5, -1)]:
            assert _python(converted, x, n) == _python(f, x, n), f.__name__


def reads_in_a_nested_function(x, n):
    a = x
    for i in range(3):
        if 2 < n <= 9:
            u = n

        def h(z):
            return z + u
        a = h(a)
    return a


def reads_in_a_lambda(x, n):
    if n > 3:
        u = 2
    g = lambda: u * 2   # noqa: E731
    return x + g()


@pytest.mark.parametrize("f", [reads_in_a_nested_function, reads_in_a_lambda],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 5])
def test_a_nested_functions_read_of_an_unassigned_variable_raises_pythons_name_error(f, n):
    """A nested function or lambda reads the enclosing function's variable when it runs,
    which no analysis places: converted code leaves the read as written, and the
    Undefined it may find raises Python's NameError (not a TypeError about `Undefined`)."""
    try:
        expected = f(7, n)
    except NameError as e:
        expected = e
    converted = ag.to_graph(f)
    if isinstance(expected, NameError):
        with pytest.raises(NameError) as info:
            converted(7, n)
        assert type(info.value) is type(expected) and str(info.value) == str(expected)
    else:
        assert converted(7, n) == expected
        assert ag.function(f)(np.int64(7), n) == expected   # (n a Python value: unrolled)
