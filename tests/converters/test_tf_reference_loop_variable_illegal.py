"""TensorFlow AutoGraph's `loop_with_variable_type_illegal_cases_test`, ported to NumPy
(issue 31).

TF refuses every one of these loops. Here each test asserts what we do instead:
- Python's answer (better) where NumPy on the host can follow Python: a loop variable whose
  shape changes (`[1]` -> `[1, 1]`, or a data-dependent length: "shape erasure"), a list that
  grows by `+` (also in test_tf_list_reference.py), a `while` whose condition starts as a
  Python value and becomes an array;
- a clear refusal (StagingError naming the variable and the loop's file:line) where a staged
  loop would need one dtype or structure for two: `n` int32 before the loop and float32 after
  (TF: "'n' has dtype int32 before the loop, but dtype float32 after"), `s` a dict before and
  a number after (TF: "'s' does not have the same nested structure").
TF's loops never end (`while tf.constant(True)`); the ports end after `k` iterations, `k` an
array, so that Python has an answer to compare with. TF's `shape_invariants` hint has no
counterpart (none is needed): `ag.set_loop_options` refuses it as an unknown keyword, and the
case without it is shape erasure. TF's distributed datasets have no counterpart here.
"""

import numpy as np
import pytest

import autograph as ag
from autograph import api
from autograph.errors import StagingError
from tests.converters.test_list_corpus import same


def while_with_variable_py_type(k):
    n = 0
    c = True
    while c:
        n += 1
        c = n < k
    return n


def while_with_variable_dtype(k):
    n = np.int32(0)
    i = 0
    while i < k:
        n = np.float32(0)
        i += 1
    return n


def while_with_variable_dtype_and_early_stopping(k):
    n = np.int32(0)
    while k > 0:
        n = np.float32(0)
        break
    return n


def for_with_variable_dtype(l):
    n = np.int32(0)
    for _ in l:
        n = np.float32(0)
    return n


def for_with_variable_dtype_and_early_stopping(l):
    n = np.int32(0)
    for _ in l:
        n = np.float32(0)
        break
    return n


def while_with_variable_shape(k):
    t = np.array([1])
    i = 0
    while i < k:
        t = np.array([1, 1])
        i += 1
    return t


def for_with_variable_shape(l):
    t = np.array([1])
    for _ in l:
        t = np.array([1, 1])
    return t


def while_with_shape_erasure(k):
    t = np.array([1])
    i = 0
    while i < k:
        t = np.arange(np.random.randint(2, 3))
        i += 1
    return t


def for_with_shape_erasure(l):
    t = np.array([1])
    for _ in l:
        t = np.arange(np.random.randint(2, 3))
    return t


def while_with_variable_structure(k):
    s = {"a": np.int64(0)}
    i = 0
    while i < k:
        s = np.float64(7.0)
        i += 1
    return s


def for_with_variable_structure(l):
    s = [np.int64(0)]
    for _ in l:
        s = s + [np.int64(0)]
    return s


def _line(fn, offset):
    return f"{__file__}:{fn.__code__.co_firstlineno + offset}"


# TF's iterables, each staged: an array of unknown length, ag.range of a tensor, a dataset,
# and an iterator over a dataset (which runs the loop as Python, over its NumPy elements)
def _over_array(fn, items):
    return ag.function(fn, input_signature=[ag.TensorSpec([None], np.int64)])(items)


def _over_range(fn, items):
    def over(k):
        return fn(ag.range(k))
    return ag.function(over)(np.int64(len(items)))


def _over_dataset(fn, items):
    return ag.function(fn)(ag.data.Dataset.from_tensor_slices(items))


def _over_iterator(fn, items):
    return ag.function(fn)(iter(ag.data.Dataset.from_tensor_slices(items)))


ITERABLES = {"array": _over_array, "ag.range": _over_range, "dataset": _over_dataset,
             "iterator": _over_iterator}
STAGED = ["array", "ag.range", "dataset"]
LISTS = [np.array([1, 2, 3]), np.zeros(0, np.int64)]


@pytest.mark.parametrize("k", (1, 3))
def test_while_with_variable_py_type_gives_pythons_answer(k):
    # TF: "condition of while loop started as non-Tensor, then changed to Tensor"; here the
    # loop runs as Python until its condition is an array, then is staged
    assert ag.function(while_with_variable_py_type)(np.int64(k)) == k


@pytest.mark.parametrize("fn,offset", [(while_with_variable_dtype, 3),
                                       (while_with_variable_dtype_and_early_stopping, 2)])
@pytest.mark.parametrize("k", (0, 2))
def test_while_with_variable_dtype_is_refused(fn, offset, k):
    with pytest.raises(StagingError, match="'n' changes dtype inside the loop: it enters the "
                                           "loop as int32 but the loop body makes it float32") as e:
        ag.function(fn)(np.int64(k))
    assert _line(fn, offset) in str(e.value)
    assert api.to_graph(fn)(k) == fn(k)   # on Python values: Python's answer


@pytest.mark.parametrize("fn", [for_with_variable_dtype, for_with_variable_dtype_and_early_stopping])
@pytest.mark.parametrize("kind", STAGED)
def test_for_with_variable_dtype_is_refused(fn, kind):
    with pytest.raises(StagingError, match="'n' changes dtype inside the loop") as e:
        ITERABLES[kind](fn, LISTS[0])
    assert _line(fn, 2) in str(e.value)


@pytest.mark.parametrize("fn", [for_with_variable_dtype, for_with_variable_dtype_and_early_stopping])
@pytest.mark.parametrize("items", LISTS)
def test_for_with_variable_dtype_over_an_iterator_gives_pythons_answer(fn, items):
    same(_over_iterator(fn, items), fn(list(items)))
    assert np.asarray(_over_iterator(fn, items)).dtype == np.asarray(fn(list(items))).dtype


@pytest.mark.parametrize("fn", [while_with_variable_shape, while_with_shape_erasure])
@pytest.mark.parametrize("k", (0, 1, 3))
def test_while_with_variable_shape_gives_pythons_answer(fn, k):
    # TF: "'t' has shape (1,) before the loop, but shape (2,) (or (None,)) after"
    same(ag.function(fn)(np.int64(k)), fn(k))


@pytest.mark.parametrize("fn", [for_with_variable_shape, for_with_shape_erasure,
                                for_with_variable_structure])
@pytest.mark.parametrize("kind", list(ITERABLES))
@pytest.mark.parametrize("items", LISTS, ids=["three", "empty"])
def test_for_with_variable_shape_or_list_gives_pythons_answer(fn, kind, items):
    # TF: "'t' has shape (1,) before the loop, but shape (2,) after", "... (None,) after",
    # "'s' does not have the same nested structure"
    same(ITERABLES[kind](fn, items), fn(list(items)))


def test_shape_invariants_are_not_an_option():
    # TF's while_with_shape_invariant_violation: the hint is refused as an unknown keyword
    # (no loop needs one here); without it, the loop is the shape-erasure case above
    with pytest.raises(TypeError, match="shape_invariants"):
        ag.set_loop_options(shape_invariants=[])


@pytest.mark.parametrize("k", (0, 2))
def test_while_with_variable_structure_is_refused(k):
    with pytest.raises(StagingError, match="'s' changes structure in the `while` loop") as e:
        ag.function(while_with_variable_structure)(np.int64(k))
    assert _line(while_with_variable_structure, 3) in str(e.value)
    same(api.to_graph(while_with_variable_structure)(k), while_with_variable_structure(k))
