"""and/or and chained comparisons as conditions (issue 11 class 14): they work where
Python's meaning can be staged, and refusals describe the user's own expression."""

import numpy as np
import pytest

import autograph as ag
from autograph import api


def chain_with_expression(x, n):
    if n < x + 1 <= 8:
        return 1
    return 0


def chain_evaluated_once(x, calls):
    def bump(v):
        calls.append(v)
        return v
    return 0 < bump(x) < 10


def mixed_dtypes_in_test(a, b):
    if a % 2 or b > 0:
        return 1
    return 0


def mixed_dtypes_in_while(n, m):
    c = 0
    while n % 3 and m > c:
        c += 1
        n -= 1
    return c


def mixed_in_ifexp(a, b):
    return 1 if a % 2 and b else 0


@pytest.mark.parametrize("fn,arg_sets", [
    (chain_with_expression, [(3, 1), (9, 1), (0, 2)]),
    (mixed_dtypes_in_test, [(3, 0), (2, 1), (2, 0)]),
    (mixed_dtypes_in_while, [(7, 5), (9, 5), (8, 1)]),
    (mixed_in_ifexp, [(3, 1), (3, 0), (2, 1)]),
])
def test_conditions_python_and_traced(fn, arg_sets):
    conv, traced = api.to_graph(fn), ag.function(fn)
    for args in arg_sets:
        assert conv(*args) == fn(*args)
        assert traced(*[np.int64(a) for a in args]) == fn(*args), (fn.__name__, args)


def test_chained_middle_operand_evaluated_once():
    calls = []
    assert api.to_graph(chain_evaluated_once)(5, calls) is True
    assert calls == [5]
    assert "chain := " in ag.to_code(chain_with_expression)


def value_of_or(a, b):
    y = a % 2 or b > 0
    return y


def test_or_as_value_with_mixed_dtypes_names_the_expression():
    with pytest.raises(ag.errors.StagingError) as info:
        ag.function(value_of_or)(np.int64(3), np.int64(1))
    msg = str(info.value)
    assert "`or`" in msg and "y = a % 2 or b > 0" in msg and "output 0" not in msg
