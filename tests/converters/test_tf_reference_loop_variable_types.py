"""TensorFlow AutoGraph's `loop_with_variable_type_test`, ported to NumPy (issue 31).

Loop variables whose shape changes across iterations: a vector that grows, a matrix that
gains rows or columns, one padded on every side, a COO sparse triple whose rank grows, inside
an `if`, with a `break`. TF needs `set_loop_options(shape_invariants=...)` for each; here no
hint is needed (the varying dimension is staged as None), so the ports leave them out. Each
case is checked against the same function run as plain Python: converted on Python values,
and traced by ag.function with a NumPy count, an ag.range or an ag.data.Dataset (its loop
staged). TF's `tf.SparseTensor` / `tf.sparse.expand_dims` are a COO triple (indices, values,
dense shape) and the NumPy that expands it.
"""

import collections
import itertools

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters.test_list_corpus import same


def while_with_variable_shape_growing_vector(n):
    v = np.array([0, 0])
    i = 0
    while i < n:
        v = np.concatenate((v, [i]), 0)
        i += 1
    return v


def for_with_variable_shape_growing_vector(l):
    v = np.array([0, 0])
    for i in l:
        v = np.concatenate((v, [i]), 0)
    return v


def while_with_variable_shape_growing_matrix_rows(n):
    m = np.array([[0]])
    i = 0
    while i < n:
        m = np.concatenate((m, [[i]]), 0)
        i += 1
    return m


def for_with_variable_shape_growing_matrix_rows(l):
    m = np.array([[0]])
    for i in l:
        m = np.concatenate((m, [[i]]), 0)
    return m


def while_with_variable_shape_growing_matrix_cols(n):
    m = np.array([[0, 0]])
    i = 0
    while i < n:
        m = np.concatenate((m, [[i]]), 1)
        i += 1
    return m


def for_with_variable_shape_growing_matrix_cols(l):
    m = np.array([[0, 0]])
    for i in l:
        m = np.concatenate((m, [[i]]), 1)
    return m


def while_with_variable_shape_growing_matrix(n):
    m = np.array([[0, 0], [0, 0]])
    i = 0
    while i < n:
        m = np.pad(m, [[1, 1], [1, 1]], constant_values=i)
        i += 1
    return m


def for_with_variable_shape_growing_matrix(l):
    m = np.array([[0, 0], [0, 0]])
    for i in l:
        m = np.pad(m, [[1, 1], [1, 1]], constant_values=i)
    return m


def while_with_variable_shape_inside_if(n):
    v = np.array([0, 0])
    i = 0
    if n > 1:
        while i < n:
            v = np.concatenate((v, [i]), 0)
            i += 1
    else:
        v = np.array([1, 2, 3])
    return v


def for_with_variable_shape_inside_if(n):
    v = np.array([0, 0])
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            i += 1
    else:
        v = np.array([1, 2, 3])
    return v


Holder = collections.namedtuple("Test", ["var"])   # (TF names it Test; pytest would collect that)


def for_with_nested_variable_shape_inside_if(n):
    t = Holder(var=np.array([0]))
    v = np.array([0, 0])
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            t = Holder(var=t.var + 1)
            i += 1
    else:
        v = np.array([1, 2, 3])
        t = Holder(var=np.array([3]))
    return v


def while_with_variable_shape_and_break(n):
    v = np.array([0, 0])
    i = 0
    if n > 1:
        while i < n:
            v = np.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = np.array([1, 2, 3])
    return v


def for_with_variable_shape_and_break(n):
    v = np.array([0, 0])
    if n > 1:
        for i in range(n):
            v = np.concatenate((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = np.array([1, 2, 3])
    return v


def _sparse():
    """tf.SparseTensor(indices=[[0, 0], [1, 1]], values=[1, 2], dense_shape=[3, 3])"""
    return np.array([[0, 0], [1, 1]]), np.array([1, 2]), np.array([3, 3])


def _expand_dims(indices, values, shape):
    """tf.sparse.expand_dims(v): a new leading axis of size 1."""
    zeros = np.zeros((indices.shape[0], 1), dtype=indices.dtype)
    return np.concatenate((zeros, indices), 1), values, np.concatenate(([1], shape), 0)


def while_with_composite_tensor_shape_invariant(n):
    indices, values, shape = _sparse()
    i = 0
    while i < n:
        indices, values, shape = _expand_dims(indices, values, shape)
        i += 1
    return indices, values, shape


def for_with_composite_tensor_shape_invariant(l):
    indices, values, shape = _sparse()
    for _ in l:
        indices, values, shape = _expand_dims(indices, values, shape)
    return indices, values, shape


def _check(fn, python_arg, traced_arg):
    want = fn(python_arg)
    same(api.to_graph(fn)(python_arg), want)
    same(api.to_graph(fn)(traced_arg), want)   # eager, on the NumPy values
    same(ag.function(fn)(traced_arg), want)


def _int_dataset_range(n):
    return ag.data.Dataset.range(n).map(lambda x: x.astype(np.int32))


COUNTED = [while_with_variable_shape_growing_vector, while_with_variable_shape_growing_matrix_rows,
           while_with_variable_shape_growing_matrix_cols, while_with_variable_shape_growing_matrix,
           while_with_variable_shape_inside_if, for_with_variable_shape_inside_if,
           for_with_nested_variable_shape_inside_if, while_with_variable_shape_and_break,
           for_with_variable_shape_and_break, while_with_composite_tensor_shape_invariant]

ITERATED = [for_with_variable_shape_growing_vector, for_with_variable_shape_growing_matrix_rows,
            for_with_variable_shape_growing_matrix_cols, for_with_variable_shape_growing_matrix,
            for_with_composite_tensor_shape_invariant]


@pytest.mark.parametrize("fn", COUNTED)
@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2, 5), (int, np.int64))))
def test_counted(fn, n, kind):
    _check(fn, n, kind(n))


@pytest.mark.parametrize("fn", ITERATED)
@pytest.mark.parametrize("n", (0, 1, 2))
@pytest.mark.parametrize("iterable", ("range", "ag.range", "dataset", "int dataset"))
def test_iterated(fn, n, iterable):
    make = {"range": range, "ag.range": lambda k: ag.range(np.int64(k)),
            "dataset": ag.data.Dataset.range, "int dataset": _int_dataset_range}[iterable]
    _check(fn, range(n), make(n))
