"""TensorFlow AutoGraph's `loop_basic_test`, ported to NumPy (issue 31).

Basic `while` and `for` loops over counts, lists, arrays, datasets and dataset iterators:
no loop variables (an ag.Variable), one, two, loops that create a variable, successive and
nested loops (collecting into an ag.TensorArray). Each case is checked against the same
function run as plain Python on Python values (TF's eager reference): converted and run
eagerly, and traced by ag.function with NumPy arguments (its loops staged).

Where TF refuses: `for`/`else` and `while`/`else` (TF: NotImplementedError) give Python's
answer here, break or no break. A loop that creates a variable and runs zero times raises
UnboundLocalError naming it (TF: InvalidArgumentError "loop must iterate at least once").
TF's XLA variants (jit_compile) and ragged tensors are left out: jit_compile=True is
covered by tests/running, and NumPy has no ragged arrays (a Python list of lists is the
`list` case).
"""

import itertools
from collections.abc import Iterator

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters.test_list_corpus import same


def while_no_vars(n, v):
    v.assign(0)
    while v.read_value() < n:
        v.assign_add(1)
    return v.read_value()


def for_no_vars(l, v):
    v.assign(0)
    for _ in l:
        v.assign_add(1)
    return v.read_value()


def while_one_var(n):
    i = 0
    while i < n:
        i = i * 10 + 1
    return i


def for_one_var(l):
    i = 0
    for i in l:
        pass
    return i


def while_two_vars(n):
    s = 0
    i = 0
    while i < n:
        s = s * 10 + i
        i += 1
    return s


def for_two_vars(l):
    s = 0
    for i in l:
        s = s * 10 + i
    return s


def while_else(x, y):
    s = 0
    while x > 0:
        x -= 1
        if x > y:
            break
        s += x
    else:
        s = -100
    return s


def for_else(l1, l2):
    s = 0
    for c in l1:
        if c in l2:
            break
        s = s * 10 + c
    else:
        s = -1000
    return s


def while_creates_var(n):
    i = 0
    while i < n:
        i = n + 1
        j = i + 1
    return i, j


def for_creates_var(l):
    for i in l:
        pass
    return i  # noqa: F821 (bound by the loop)


def successive_while_loops(n1, n2):
    s = 0
    i = 0
    while i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    while i < n2:
        s = s * 10 + i
        i += 1
    return s


def successive_for_loops(l1, l2):
    s = 0
    for i in l1:
        s = s * 10 + i
    for i in l2:
        s = s * 10 + i
    return s


def nested_while_loops(n1, n2):
    i = 0
    l = ag.TensorArray(np.int32, size=0, dynamic_size=True, element_shape=())
    while i < n1:
        j = 0
        s = 0
        while j < n2:
            s = s * 10 + i * j
            j += 1
        l = l.write(i, s)
        i += 1
    return l.stack()


def nested_for_loops(m):
    l = ag.TensorArray(np.int32, size=0, dynamic_size=True, element_shape=())
    for i in m:
        s = 0
        for j in i:
            s = s * 10 + j
        l = l.write(l.size(), s)
    return l.stack()


def _array(l):
    return np.array(l, dtype=np.int32)


def _dataset(l):
    return ag.data.Dataset.from_tensor_slices(np.array(l, dtype=np.int32))


def _iterator(l):
    return iter(_dataset(l))


COUNTS = (0, 1, 2)
LISTS = ([], [1], [1, 2])
ARRAYS = {"list": list, "array": _array, "dataset": _dataset, "iterator": _iterator}


def _agree(fn, python_args, traced_args):
    """Python's answer, from the converted code run eagerly (on Python values, and on the
    NumPy ones unless an iterator would be used up) and traced by ag.function."""
    want = fn(*python_args)
    same(api.to_graph(fn)(*python_args), want)
    if not any(isinstance(a, Iterator) for a in traced_args):
        same(api.to_graph(fn)(*traced_args), want)
    same(ag.function(fn)(*traced_args), want)


@pytest.mark.parametrize("n,kind", list(itertools.product(COUNTS, (int, np.int32))))
def test_while_no_vars(n, kind):
    v = ag.Variable(0)
    assert ag.function(while_no_vars)(kind(n), v) == while_no_vars(n, ag.Variable(0)) == n
    assert v.read_value() == n


@pytest.mark.parametrize("l", LISTS)
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_for_no_vars(l, kind):
    v = ag.Variable(0)
    assert ag.function(for_no_vars)(ARRAYS[kind](l), v) == len(l)
    assert v.read_value() == len(l)


@pytest.mark.parametrize("fn", [while_one_var, while_two_vars])
@pytest.mark.parametrize("n,kind", list(itertools.product(COUNTS, (int, np.int32))))
def test_while_vars(fn, n, kind):
    _agree(fn, (n,), (kind(n),))


@pytest.mark.parametrize("fn", [for_one_var, for_two_vars])
@pytest.mark.parametrize("l", LISTS)
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_for_vars(fn, l, kind):
    _agree(fn, (l,), (ARRAYS[kind](l),))


@pytest.mark.parametrize("l1,l2,kind", list(itertools.product(([], [1, 2]), ([], [1, 2]),
                                                             (list, _array))))
def test_for_else_gives_pythons_answer(l1, l2, kind):
    # TF: NotImplementedError "for/else"
    _agree(for_else, (l1, l2), (kind(l1), kind(l2)))


@pytest.mark.parametrize("x,y,kind", list(itertools.product((0, 2), (0, 2), (int, np.int32))))
def test_while_else_gives_pythons_answer(x, y, kind):
    # TF: NotImplementedError "while/else"
    _agree(while_else, (x, y), (kind(x), kind(y)))


@pytest.mark.parametrize("n,kind", list(itertools.product((1, 2), (int, np.int32))))
def test_while_creates_var(n, kind):
    _agree(while_creates_var, (n,), (kind(n),))


def test_while_creates_var_that_never_runs():
    for n in (0, np.int32(0)):
        with pytest.raises(UnboundLocalError, match="'j'"):
            ag.function(while_creates_var)(n)


@pytest.mark.parametrize("l", ([1], [1, 2]))
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_for_creates_var(l, kind):
    _agree(for_creates_var, (l,), (ARRAYS[kind](l),))


@pytest.mark.parametrize("kind", list(ARRAYS))
def test_for_creates_var_that_never_runs(kind):
    with pytest.raises(UnboundLocalError, match="'i'"):
        ag.function(for_creates_var)(ARRAYS[kind]([]))


@pytest.mark.parametrize("n1,n2", list(itertools.product(COUNTS, COUNTS)))
@pytest.mark.parametrize("fn", [successive_while_loops, nested_while_loops])
def test_successive_and_nested_while_loops(fn, n1, n2):
    for kind in (int, np.int32):
        _agree(fn, (n1, n2), (kind(n1), kind(n2)))


@pytest.mark.parametrize("l1,l2", list(itertools.product(LISTS, LISTS)))
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_successive_for_loops(l1, l2, kind):
    _agree(successive_for_loops, (l1, l2), (ARRAYS[kind](l1), ARRAYS[kind](l2)))


@pytest.mark.parametrize("m", ([[]], [[], []], [[1]], [[1], [2]], [[1, 2]], [[1, 2], [3, 4]]))
@pytest.mark.parametrize("kind", ["array", "dataset"])
def test_nested_for_loops_dense(m, kind):
    _agree(nested_for_loops, (m,), (ARRAYS[kind](m),))


@pytest.mark.parametrize("m", ([[]], [[], [1]], [[], [1], [1, 2]]))
def test_nested_for_loops_over_lists(m):
    _agree(nested_for_loops, (m,), (m,))


def test_nested_for_loops_mixed_list():
    m = [[], _array([]), [1], _array([1]), [1, 2]]
    _agree(nested_for_loops, ([list(r) for r in m],), (m,))
