"""`x in array` and `x not in array` under ag.function: NumPy's meaning (any element equal
to x), staged as np.any(array == x), where Python's own `in` would call bool() on a tensor; a scalar array in a list or tuple
of numbers compares with each
(TF's loop_basic_test `for_else` checks `c in l2` with `l2` a tensor). Each program gives
Python's answer converted on Python values and traced with NumPy arguments."""

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters.test_list_corpus import same


def first_shared(a, b):
    s = 0
    for c in a:
        if c in b:
            break
        s = s * 10 + c
    else:
        s = -1
    return s


def count_missing(a, b):
    n = 0
    for c in a:
        if c not in b:
            n += 1
    return n


def chained(x, b):
    return 0 < x in b


def in_while(x, b):
    while x in b:
        x = x + 1
    return x


def mixed(x, b):
    # Python containers keep Python's `in`
    return (x in b) and ("k" in {"k": 1}) and (2 not in [1, 3]) and ("b" in "abc")


def in_a_list(x):
    if x in [1, 3, 5.0]:
        return x * 2
    return x if x not in (0, 7) else -x


CASES = [
    *[(in_a_list, (np.int64(v),)) for v in (0, 1, 2, 5, 7)],
    (in_a_list, (np.float64(3.0),)),
    (first_shared, (np.array([1, 2, 3]), np.array([3, 4]))),
    (first_shared, (np.array([1, 2, 3]), np.array([7]))),
    (first_shared, (np.array([1, 2]), np.zeros(0, np.int64))),
    (count_missing, (np.array([1, 2, 3, 4]), np.array([2, 4]))),
    (chained, (np.int64(3), np.array([1, 3]))),
    (chained, (np.int64(0), np.array([0, 3]))),
    (chained, (np.int64(2), np.array([1, 3]))),
    (in_while, (np.int64(1), np.array([1, 2, 3, 5]))),
    (in_while, (np.float64(4.0), np.array([[1.0, 2.0], [5.0, 6.0]]))),
    (mixed, (np.int64(2), np.array([1, 2]))),
    (mixed, (np.int64(5), np.array([1, 2]))),
]


@pytest.mark.parametrize("fn,args", CASES)
def test_membership_gives_pythons_answer(fn, args):
    want = fn(*args)
    same(api.to_graph(fn)(*args), want)
    same(ag.function(fn)(*args), want)


def test_membership_code_reads_as_written():
    code = ag.to_code(count_missing)
    assert "ag__.not_(ag__.in_(c, b))" in code
