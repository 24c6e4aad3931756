"""tf.data's kernel tests of the sources (range_test, from_tensors_test,
from_tensor_slices_test, from_generator_test), ported: each case eagerly and traced.

Dtypes follow NumPy (a Python int is int64, a float float64; tf.data picks int32/float32):
docs/data.md lists this and the other documented differences.
"""

import collections

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset

from tests.data.tfport import MODES, fails, produces, take_traced


# -- range_test --------------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("args", [(5,), (2, 5), (2, 10, 2), (2, 10, -1), (10, 2), (10, 2, 2),
                                  (10, 2, -1), (0,), (-4, -4, 2), (0, 1, -3)])
def test_range(args, mode):
    produces(Dataset.range(*args), list(range(*args)), mode)


@MODES
def test_range_zero_step(mode):
    fails(lambda: Dataset.range(2, 10, 0), ValueError, mode)


@MODES
def test_range_output_type(mode):
    ds = Dataset.range(5, output_type=np.int32)
    assert ds.element_spec.dtype == np.int32
    produces(ds, [np.int32(i) for i in range(5)], mode)


# -- from_tensors_test -------------------------------------------------------------------------

COMPONENTS = (np.array(1), np.array([1, 2, 3]), np.array(37.0))


@MODES
def test_from_tensors(mode):
    ds = Dataset.from_tensors(COMPONENTS)
    assert [s.shape for s in ds.element_spec] == [c.shape for c in COMPONENTS]
    produces(ds, [COMPONENTS], mode)


NESTED = (np.array([1, 2, 3], dtype=np.int64), (np.array([4., 5.]), np.array([6., 7.])),
          np.array([8, 9, 10], dtype=np.int64))


def _shapes(spec):
    return tuple(_shapes(s) if isinstance(s, tuple) else s.shape for s in spec)


def test_nested_structure_specs_through_transformations():
    ds = Dataset.from_tensors(NESTED)
    want = ((3,), ((2,), (2,)), (3,))
    for step in (lambda d: d.shuffle(10, 10), lambda d: d.repeat(-1),
                 lambda d: d.filter(lambda x, y, z: True), lambda d: d.take(5)):
        ds = step(ds)
        assert _shapes(ds.element_spec) == want
        assert ds.element_spec[1][0].dtype == np.float64 and ds.element_spec[0].dtype == np.int64
    ds = ds.map(lambda x, y, z: ((x, z), (y[0], y[1])))
    assert _shapes(ds.element_spec) == (((3,), (3,)), ((2,), (2,)))
    assert _shapes(ds.batch(32).element_spec) == (((None, 3), (None, 3)), ((None, 2), (None, 2)))
    slices = Dataset.from_tensor_slices((np.array([1, 2, 3]), (np.array([4., 5., 6.]),
                                         np.array([7., 8., 9.])), np.array([10, 11, 12])))
    assert _shapes(slices.element_spec) == ((), ((), ()), ())


@MODES
def test_nested_structure_produces(mode):
    ds = Dataset.from_tensors(NESTED).shuffle(10, 10).repeat(-1).filter(
        lambda x, y, z: True).take(5).map(lambda x, y, z: ((x, z), (y[0], y[1])))
    one = ((NESTED[0], NESTED[2]), (NESTED[1][0], NESTED[1][1]))
    produces(ds, [one] * 5, mode, check_cardinality=False)


def test_nested_dict_specs():
    ds = Dataset.from_tensors({"a": {"aa": 1, "ab": [2.0, 2.0]}, "b": [3, 3, 3]})
    spec = ds.element_spec
    assert spec["a"]["aa"].shape == () and spec["a"]["ab"].shape == (2,)
    assert spec["b"].shape == (3,) and spec["b"].dtype == np.int64


@MODES
def test_non_sequence_structure(mode):
    c = np.array([1, 2, 3], dtype=np.int64)
    ds = Dataset.from_tensors(c)
    assert ds.element_spec.shape == (3,)
    ds = ds.filter(lambda x: np.all(x == c))
    assert ds.element_spec.shape == (3,)
    ds = ds.map(lambda x: np.stack([x, x]))
    assert ds.element_spec.shape == (2, 3) and ds.element_spec.dtype == np.int64
    produces(ds, [np.stack([c, c])], mode)


@MODES
def test_from_tensors_repeat_batch_has_static_rows(mode):
    """The issue's reproducer: a from_tensors element has its exact shape, so a batch of
    its repeats is stackable (element_spec (2,), not (None,))."""
    ds = Dataset.from_tensors(np.array([1, 2]))
    assert ds.element_spec.shape == (2,)
    ds = ds.repeat(3).batch(2)
    assert ds.element_spec.shape == (None, 2)
    produces(ds, [np.array([[1, 2], [1, 2]]), np.array([[1, 2]])], mode)


# -- from_tensor_slices_test -------------------------------------------------------------------

def test_from_tensor_slices_empty_component():
    with pytest.raises(ValueError):
        Dataset.from_tensor_slices(())


@MODES
def test_from_tensor_slices(mode):
    comps = (np.tile(np.array([[1], [2], [3], [4]]), 20),
             np.tile(np.array([[12], [13], [14], [15]]), 22),
             np.array([37.0, 38.0, 39.0, 40.0]))
    ds = Dataset.from_tensor_slices(comps)
    assert [s.shape for s in ds.element_spec] == [c.shape[1:] for c in comps]
    produces(ds, [tuple(c[i] for c in comps) for i in range(4)], mode)


@MODES
def test_from_tensor_slices_with_dict(mode):
    comps = {"foo": [1, 2, 3], "bar": [[4.0], [5.0], [6.0]]}
    ds = Dataset.from_tensor_slices(comps)
    assert ds.element_spec["foo"].shape == () and ds.element_spec["bar"].shape == (1,)
    assert ds.element_spec["foo"].dtype == np.int64
    produces(ds, [{"foo": comps["foo"][i], "bar": comps["bar"][i]} for i in range(3)], mode)


@MODES
def test_from_tensor_slices_ordered_dict_and_namedtuple(mode):
    Point = collections.namedtuple("Point", "x y")
    ds = Dataset.from_tensor_slices(Point(np.arange(3), np.arange(3) * 2.0))
    assert isinstance(ds.element_spec, Point)
    produces(ds, [Point(i, 2.0 * i) for i in range(3)], mode)


@MODES
def test_from_tensor_slices_uint_dtypes(mode):
    comps = (np.tile(np.array([[0], [1]], dtype=np.uint8), 2),
             np.tile(np.array([[2], [256]], dtype=np.uint16), 2),
             np.tile(np.array([[4], [65536]], dtype=np.uint32), 2),
             np.tile(np.array([[8], [4294967296]], dtype=np.uint64), 2))
    ds = Dataset.from_tensor_slices(comps)
    assert tuple(s.dtype for s in ds.element_spec) == (np.uint8, np.uint16, np.uint32, np.uint64)
    produces(ds, [tuple(c[i] for c in comps) for i in range(2)], mode)


@MODES
@pytest.mark.parametrize("tensor", [[1, 2, 3], [[1, 2], [3, 4]], [[[1, 2], [3, 4]]]])
def test_from_tensor_slices_python_list_is_one_array(tensor, mode):
    """A Python list is one array, as tf.data reads it: slices are its rows."""
    produces(Dataset.from_tensor_slices(tensor), [np.asarray(t) for t in tensor], mode)


@MODES
def test_from_tensor_slices_empty(mode):
    produces(Dataset.from_tensor_slices(np.zeros((0, 3))), [], mode)


def test_from_tensor_slices_unequal_lengths():
    with pytest.raises(ValueError, match="different lengths"):
        Dataset.from_tensor_slices((np.arange(3), np.arange(4)))


# -- from_generator_test -----------------------------------------------------------------------

def _ragged():
    for i in range(1, 30):
        yield [i] * i


@MODES
@pytest.mark.parametrize("repeats", [1, 5])
@pytest.mark.parametrize("source", ["fn", "list", "ndarray", "expression"])
def test_from_generator(source, repeats, mode):
    gen = {"fn": _ragged, "list": lambda: [[i] * i for i in range(1, 30)],
           "ndarray": lambda: np.arange(30, dtype=np.int64),
           "expression": lambda: ([i] * i for i in range(1, 30))}[source]
    shape = () if source == "ndarray" else (None,)
    ds = Dataset.from_generator(gen, output_signature=ag.TensorSpec(shape, np.int64))
    ds = ds.repeat(repeats).prefetch(5)
    expected = [np.asarray(x) for x in gen()] * repeats
    if mode == "traced" and source != "ndarray":
        # ragged elements: the traced loop sees one spec of an unknown length
        n, values = take_traced(ds, 10**6)
        assert n == len(expected)
        np.testing.assert_array_equal(values, np.concatenate(expected).astype(np.float64))
        return
    produces(ds, expected, mode)


@MODES
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_from_generator_implicit_conversion(dtype, mode):
    def gen():
        yield [1]
        yield [2]
        yield [3]
    ds = Dataset.from_generator(gen, output_signature=ag.TensorSpec([1], dtype))
    assert ds.element_spec.dtype == dtype
    produces(ds, [np.array([k], dtype) for k in (1, 2, 3)], mode)


def _with_bad(bad):
    def gen():
        yield np.array([1, 2, 3], dtype=np.int64)
        yield np.array([4, 5, 6], dtype=np.int64)
        yield bad
        yield np.array([7, 8, 9], dtype=np.int64)
    return gen


@pytest.mark.parametrize("bad, error", [("ERROR", TypeError),
                                        (np.array([7, 8, 9, 10]), ValueError),
                                        (np.array([[7, 8, 9]]), ValueError)])
def test_from_generator_type_and_shape_errors_eager(bad, error):
    """A bad element raises at its next(); the iterator then goes on with the next one."""
    ds = Dataset.from_generator(_with_bad(bad), output_signature=ag.TensorSpec([3], np.int64))
    it = iter(ds)
    assert next(it).tolist() == [1, 2, 3] and next(it).tolist() == [4, 5, 6]
    with pytest.raises(error, match="generator"):
        next(it)
    assert next(it).tolist() == [7, 8, 9]
    with pytest.raises(StopIteration):
        next(it)


@pytest.mark.parametrize("bad, error", [("ERROR", TypeError), (np.array([7, 8, 9, 10]), ValueError)])
def test_from_generator_type_and_shape_errors_traced(bad, error):
    ds = Dataset.from_generator(_with_bad(bad), output_signature=ag.TensorSpec([3], np.int64))

    @ag.function
    def total(dataset):
        s = np.int64(0)
        for x in dataset:
            s += np.sum(x)
        return s
    with pytest.raises(error, match="yielded an element"):
        total(ds)


@MODES
def test_from_generator_shape_mismatch_reproducer(mode):
    """The issue's reproducer: a [2] element for a [3] spec raises (it passed)."""
    make = lambda: Dataset.from_generator(  # noqa: E731
        lambda: iter([np.zeros(2)]), output_signature=ag.TensorSpec([3], np.float64))
    fails(make, ValueError, mode, match=r"shape \(2,\) where an element of shape \(3,\)")


def test_from_generator_structure_error():
    def gen():
        yield 1, 2
        yield 3, 4
        yield 5
        yield 6, 7, 8
        yield 9, 10
    sig = (ag.TensorSpec(None, np.int64), ag.TensorSpec(None, np.int64))
    it = iter(Dataset.from_generator(gen, output_signature=sig))
    assert [int(x) for x in next(it)] == [1, 2] and [int(x) for x in next(it)] == [3, 4]
    with pytest.raises(TypeError, match="expected structure"):
        next(it)
    with pytest.raises(TypeError, match="expected structure"):
        next(it)
    assert [int(x) for x in next(it)] == [9, 10]
    with pytest.raises(StopIteration):
        next(it)


@MODES
def test_from_generator_heterogeneous(mode):
    def gen():
        yield 1
        yield [2, 3]
    ds = Dataset.from_generator(gen, output_signature=ag.TensorSpec(None, np.int64))
    if mode == "eager":
        produces(ds, [1, [2, 3]], mode)
    else:
        assert take_traced(ds, 5)[0] == 2


@MODES
def test_from_generator_stop_short(mode):
    def gen():
        yield 0
        yield 1
        yield 2
    ds = Dataset.from_generator(gen, output_signature=ag.TensorSpec((), np.int64))
    produces(ds.take(2), [0, 1], mode)


def test_from_generator_destructor_called():
    import gc
    import threading
    event = threading.Event()

    class Wrapper:
        def __iter__(self):
            return self

        def __next__(self):
            return 42

        def __del__(self):
            event.set()
    ds = Dataset.from_generator(Wrapper, output_signature=ag.TensorSpec((), np.int64)).take(2)
    it = iter(ds)
    assert int(next(it)) == 42 and int(next(it)) == 42
    with pytest.raises(StopIteration):
        next(it)
    del it
    gc.collect()
    assert event.is_set()


def test_from_generator_signature_must_be_specs():
    with pytest.raises(TypeError, match="TensorSpec"):
        Dataset.from_generator(lambda: iter([1]), output_signature=np.int64)
