"""`break`, `continue`, `return` and `not` flags cost no kernel call per iteration: the
generated code of loops using them calls no kernel (no bool->bool `astype`, no `~` ufunc on
a bool scalar), and computes what the original Python computes."""

import re

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen


def search_while(x, target):
    found = -1
    i = 0
    n = x.shape[0]
    while i < n:
        if x[i] == target:
            found = i
            break
        i += 1
    return found


def search_range(x, target):
    found = -1
    for t in ag.range(x.shape[0]):
        if x[t] == target:
            found = t
            break
    return found


def first_over(x, target):
    for t in ag.range(x.shape[0]):
        if x[t] > target:
            return t
    return -1


def sum_skipping(x, target):
    total = 0.0
    for t in ag.range(x.shape[0]):
        if x[t] < 0:
            continue
        if not x[t] < target:
            break
        total += x[t]
    return total


def negated(x, target):
    count = 0
    for v in x:
        done = v > target
        if not done:
            count += 1
    return count


CASES = [search_while, search_range, first_over, sum_skipping, negated]


def _source(f, *args):
    conc = f.get_concrete_function(*args)
    return codegen.source_of(conc._graph_to_run())


@pytest.mark.parametrize("fn", CASES)
def test_flag_loops_call_no_kernel(fn):
    x = np.linspace(-2.0, 6.0, 9)
    source = _source(ag.function(fn), x, np.float64(1.0))
    assert "k_astype" not in source and not re.search(r"\bk_\w+\(", source), source
    assert "~" not in source, source


@pytest.mark.parametrize("fn", CASES)
@pytest.mark.parametrize("n", [0, 1, 5, 30])
def test_flag_loops_match_python(fn, n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    f = ag.function(fn)
    for target in (-1.0, 0.0, 0.5, 10.0):
        got = f(x, np.float64(target))
        want = fn(x, target)
        assert np.asarray(got).item() == pytest.approx(want)
        assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind


def test_not_of_bool_array_stays_elementwise():
    @ag.function
    def f(x):
        return np.logical_not(x > 0), not_scalar(x[0] > 0)

    def not_scalar(b):
        return np.logical_not(b)

    x = np.array([-1.0, 2.0, 0.0])
    a, b = f(x)
    np.testing.assert_array_equal(a, [True, False, True])
    assert b.dtype == np.bool_ and bool(b) is True


def test_break_flag_of_a_counter_loop_is_tested_directly():
    x = np.arange(50.0)
    source = _source(ag.function(search_range), x, np.float64(7.0))
    lines = [line.strip() for line in source.splitlines()]
    assert "if break_:" in lines, source
    assert not any("ag_true" in line for line in lines), source


@pytest.mark.parametrize("fn", [search_range, first_over])
def test_a_counter_read_as_a_value_only_in_a_branch_iterates_python_ints(fn):
    """The counter indexes every step and is a value only where the loop finds: Python
    ints index (no NumPy integer per step), and the NumPy value is made in that branch."""
    x = np.linspace(-2.0, 6.0, 200)
    source = _source(ag.function(fn), x, np.float64(1.0))
    assert "in range(" in source and "counter_values(" not in source, source
    assert "(ag_int64 + (" in source, source   # the NumPy integer, made in the branch
    f = ag.function(fn)
    for target in (-3.0, 1.0, x[57], 5.99):
        got = f(x, np.float64(target))
        assert np.asarray(got).item() == fn(x, target)
        assert np.asarray(got).dtype == np.int64
