"""TensorFlow AutoGraph's reference tests for lists, ported to NumPy (issue 31).

TF's `basic_list_test` needs `ag.set_element_type` / `ag.stack` annotations and refuses an
unannotated list; here the plain Python program is the test: each function is checked
against itself run as Python, converted on Python values, and traced by ag.function with
its arguments as NumPy values (its loops staged). The list cases of TF's
`composite_names_in_control_flow_test` (items of a list written in `if`s and loops) and
`loop_with_variable_type_illegal_cases_test`'s growing list (which TF refuses:
"'s' does not have the same nested structure") are here too. Where TF expects an error
for an empty list stacked, NumPy raises too, and so do we (ValueError).
"""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters.test_list_corpus import same


def _agree(fn, *args, tensors=True):
    """fn's Python answer, converted on Python values and traced with NumPy arguments."""
    want = fn(*args)
    same(api.to_graph(fn)(*args), want)
    if tensors:
        args = tuple(np.int64(a) if isinstance(a, (bool, int)) and not isinstance(a, bool)
                     else np.bool_(a) if isinstance(a, bool) else a for a in args)
    same(ag.function(fn)(*args), want)
    return want


# -- basic_list_test ---------------------------------------------------------------------------

def type_not_annotated(n):
    l = []
    for i in range(n):
        l.append(i)
    return np.stack(l)


def element_access():
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    return 2 * l[1]


def element_update():
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    l[1] = 5
    return np.stack(l)


def simple_fill(n):
    l = []
    for i in range(n):
        l.append(i)
    return np.stack(l)


def nested_fill(m, n):
    mat = []
    for _ in range(m):
        l = []
        for j in range(n):
            l.append(j)
        mat.append(np.stack(l))
    return np.stack(mat)


def read_write_loop(n):
    l = []
    l.append(1)
    l.append(1)
    for i in range(2, n):
        l.append(l[i - 1] + l[i - 2])
        l[i - 2] = -l[i - 2]
    return np.stack(l)


def simple_empty(n):
    l = []
    l.append(1)
    l.append(2)
    l.append(3)
    l.append(4)
    s = 0
    for _ in range(n):
        s += l.pop()
    return np.stack(l), s


def mutation(t, n):
    for i in range(n):
        t[i] = i
    return t


def test_tensor_mutation():
    # a list argument whose items a loop writes: Python's answer, on Python values
    assert api.to_graph(mutation)([0] * 10, 10) == mutation([0] * 10, 10)


def test_basic():
    _agree(element_access)
    _agree(element_update)
    _agree(type_not_annotated, 3)   # TF refuses it ("use set_element_type"); not needed
    _agree(simple_fill, 5)
    _agree(nested_fill, 5, 3)
    _agree(read_write_loop, 4)
    _agree(read_write_loop, 9)
    for n in (0, 2):
        _agree(simple_empty, n)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        simple_empty(4)   # (TF's strict=False stack gives an empty tensor; NumPy raises)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        ag.function(simple_empty)(np.int64(4))


@pytest.mark.parametrize("fn,args", [(simple_fill, (0,)), (nested_fill, (0, 3))])
def test_an_empty_list_stacked_raises_as_numpy_does(fn, args):
    with pytest.raises(ValueError, match="need at least one array to stack"):
        fn(*args)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        ag.function(fn)(*[np.int64(a) for a in args])


def test_popping_more_than_the_list_holds_raises_as_python_does():
    with pytest.raises(IndexError, match="pop from empty list"):
        simple_empty(5)
    with pytest.raises(IndexError, match="pop from empty list"):
        ag.function(simple_empty)(np.int64(5))


# -- composite_names_in_control_flow_test: the list cases --------------------------------------

def if_basic_list(a):
    x = [a, 0]
    if x[0] > 0:
        x[1] = 1
    else:
        x[1] = -1
    return x


def while_basic_list(x, a, b):
    y = [a, b]
    while x > 0:
        x -= 1
        y[0] += 1
    return y


def while_state_only_list(a, b):
    y = [a, b]
    while y[1] <= 10:
        y[0] += 1
        y[1] *= 2
    return y


def for_basic_list(n, x, a, b):
    y = [a, b]
    for i in range(n):
        x -= 1
        y[0] += i
    return y


def for_state_only_list(n, a, b):
    y = [a, b]
    for _ in range(n):
        y[0] += 1
    return y


@pytest.mark.parametrize("a,kind", list(itertools.product((0, 1), (bool, np.int64))))
def test_if_basic(a, kind):
    _agree(if_basic_list, kind(a), tensors=False)


@pytest.mark.parametrize("x,kind,a",
                         list(itertools.product((0, 1, 2), (bool, np.int64), (3, 7))))
def test_while_basic(x, kind, a):
    _agree(while_basic_list, kind(x), a, 0, tensors=False)


@pytest.mark.parametrize("kind,b", list(itertools.product((bool, np.int64), (3, 4, 5, 6))))
def test_while_state_only(kind, b):
    _agree(while_state_only_list, 0, kind(b), tensors=False)


@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2), (bool, np.int64))))
def test_for_basic(n, kind):
    _agree(for_basic_list, kind(n), 1, 1, 1, tensors=False)


@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2), (bool, np.int64))))
def test_for_state_only(n, kind):
    _agree(for_state_only_list, kind(n), 1, 1, tensors=False)


# -- loop_with_variable_type_illegal_cases_test: a list that grows by `+` ----------------------

def for_with_variable_structure(l):
    s = [np.int64(0)]
    for _ in l:
        s = s + [np.int64(0)]
    return s


def test_a_list_growing_by_concatenation_is_a_list_of_tensors():
    # TF: "'s' does not have the same nested structure"; here Python's answer
    _agree(for_with_variable_structure, np.array([1, 2, 3]), tensors=False)
    _agree(for_with_variable_structure, np.zeros(0, np.int64), tensors=False)
