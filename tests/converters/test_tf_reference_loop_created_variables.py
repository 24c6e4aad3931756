"""TensorFlow AutoGraph's `loop_created_variables_test`, ported to NumPy (issue 31).

Loops that create a variable (plain, or a dict of arrays) which the code after the loop reads,
with static, dynamic (data-dependent) and dynamic-rank shapes. Every case is checked against
the same function run as plain Python: converted on Python values, and traced by ag.function
with a NumPy count (the `while` staged).

Where TF refuses: TF needs the loop to run at least once and raises InvalidArgumentError when a
tensor count is 0; Python raises UnboundLocalError (a Python 0 in TF too). Here both raise
UnboundLocalError naming the variable, as Python does. The data-dependent sizes TF draws with
`tf.random.uniform((), i, i + 1)` (always `i`) are `np.random.randint(i, i + 1)` here.
"""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters.test_list_corpus import same


def while_creates_var_static_shape(n):
    i = 0
    while i < n:
        v = np.zeros([1, 2, 3])
        i += 1
    return v


def while_creates_var_dynamic_shape(n):
    i = 0
    while i < n:
        v = np.zeros([1, np.random.randint(i, i + 1), 2])
        i += 1
    return v


def while_creates_var_dynamic_rank(n):
    i = 0
    while i < n:
        v = np.zeros(np.arange(np.random.randint(i, i + 1)))
        i += 1
    return v


def while_creates_var_dynamic_shape_py_init_var(n):
    i = 0
    while i < n:
        v = np.arange(i)
        i += 1
    return v


def while_creates_nested_var_static_shape(n):
    i = 0
    while i < n:
        v = {"a": np.zeros([1, 2, 3]), "b": np.ones([1, 2, 3])}
        i += 1
    return v["a"], v["b"]


def while_creates_nested_var_dynamic_shape(n):
    i = 0
    while i < n:
        v = {
            "a": np.zeros([1, np.random.randint(i, i + 1)]),
            "b": np.ones([np.random.randint(i, i + 1), 2]),
        }
        i += 1
    return v["a"], v["b"]


def while_creates_nested_var_dynamic_rank(n):
    i = 0
    while i < n:
        v = {
            "a": np.ones(np.arange(np.random.randint(i, i + 1))),
            "b": np.ones([1, 2, 3]),
        }
        i += 1
    return v["a"], v["b"]


CASES = [while_creates_var_static_shape, while_creates_var_dynamic_shape,
         while_creates_var_dynamic_rank, while_creates_var_dynamic_shape_py_init_var,
         while_creates_nested_var_static_shape, while_creates_nested_var_dynamic_shape,
         while_creates_nested_var_dynamic_rank]


@pytest.mark.parametrize("fn", CASES)
@pytest.mark.parametrize("kind", (int, np.int64))
def test_a_loop_that_never_runs_leaves_the_variable_unbound(fn, kind):
    # TF: InvalidArgumentError for a tensor count, UnboundLocalError for a Python one
    with pytest.raises(UnboundLocalError, match="'v'"):
        fn(kind(0))
    with pytest.raises(UnboundLocalError, match="'v'"):
        ag.function(fn)(kind(0))


@pytest.mark.parametrize("n,kind,fn", list(itertools.product((1, 2, 3), (int, np.int64), CASES)))
def test_while_creates_var(n, kind, fn):
    want = fn(n)
    same(api.to_graph(fn)(kind(n)), want)
    same(ag.function(fn)(kind(n)), want)


# -- the class: a loop that gives a variable its first value as a constant ------------------
# (a constant body value once carried no "bound" flag: a loop that ran zero times returned
# the placeholder instead of raising, a wrong answer without an error)

CONSTANTS = {"array": lambda: np.zeros([2, 3]), "int": lambda: 7, "float": lambda: 1.5,
             "bool": lambda: True, "numpy scalar": lambda: np.float32(2),
             "dict": lambda: {"a": 1, "b": np.ones(2)}, "tuple": lambda: (np.ones(1), 3)}


def _while_making(make):
    def fn(n):
        i = 0
        while i < n:
            v = make()
            i += 1
        return v
    return fn


def _for_making(make):
    def fn(n):
        for _ in range(n):
            v = make()
        return v
    return fn


@pytest.mark.parametrize("loop", [_while_making, _for_making])
@pytest.mark.parametrize("what", list(CONSTANTS))
def test_a_constant_made_in_a_loop_that_never_runs_is_unbound(loop, what):
    fn = loop(CONSTANTS[what])
    with pytest.raises(UnboundLocalError, match="'v'"):
        fn(0)
    with pytest.raises(UnboundLocalError, match="'v' is first assigned inside the `(while|for)`"):
        ag.function(fn)(np.int64(0))
    same(ag.function(fn)(np.int64(2)), fn(2))
