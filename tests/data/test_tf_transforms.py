"""tf.data's kernel tests of the transformations ag.data has (repeat_test, take_test,
skip_test, shard_test, batch_test, shuffle_test, map_test, filter_test, prefetch_test,
enumerate_test), ported: each case eagerly and traced (tests/data/tfport.py).
"""

import collections

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset

from tests.data.tfport import MODES, eager, fails, produces, take_traced, traced

COMPONENTS = (np.array(1), np.array([1, 2, 3]), np.array(37.0))


# -- repeat_test -------------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("count", [0, 3, 7])
def test_finite_repeat(count, mode):
    ds = Dataset.from_tensors(COMPONENTS).repeat(count)
    assert [s.shape for s in ds.element_spec] == [c.shape for c in COMPONENTS]
    produces(ds, [COMPONENTS] * count, mode)


@MODES
@pytest.mark.parametrize("count", [-1, None, -2])
def test_infinite_repeat(count, mode):
    ds = Dataset.from_tensors(COMPONENTS).repeat(count)
    assert int(ds.cardinality()) == ag.data.INFINITE_CARDINALITY
    if mode == "eager":
        got = eager(ds, limit=17)
        assert len(got) == 17 and all(int(g[0]) == 1 and g[1].tolist() == [1, 2, 3] for g in got)
    else:
        n, values = take_traced(ds, 17)
        assert n == 17 and values.tolist() == [1, 1, 2, 3, 37] * 17


@MODES
def test_repeat_repeat(mode):
    produces(Dataset.from_tensors(COMPONENTS).repeat(7).repeat(14), [COMPONENTS] * 98, mode)


@MODES
@pytest.mark.parametrize("elements, count", [(10, 10), (10, 0), (0, 3), (0, 0), (5, 1)])
def test_repeat_range(elements, count, mode):
    produces(Dataset.range(elements).repeat(count), list(range(elements)) * count, mode)


@MODES
@pytest.mark.parametrize("make", [lambda: Dataset.range(0).repeat(),
                                  lambda: Dataset.range(0).repeat(-1),
                                  lambda: Dataset.range(5).filter(lambda x: x > 9).repeat(),
                                  lambda: Dataset.from_generator(
                                      lambda: iter([]), ag.TensorSpec((), np.int64)).repeat()])
def test_infinite_repeat_of_empty_ends(make, mode):
    """repeat() ends when a pass yields nothing (tf.data's ForeverIterator), eagerly and in
    the graph: `range(0).repeat().take(5)` is empty (it spun for ever)."""
    produces(make().take(5), [], mode)


@MODES
def test_repeat_zero_is_empty_reproducer(mode):
    ds = Dataset.range(3).repeat(0)
    assert len(ds) == 0
    produces(ds, [], mode)


def test_repeat_zero_and_take_zero_never_read_the_input():
    calls = []

    def gen():
        calls.append(1)
        yield 1
    for ds in (Dataset.from_generator(gen, ag.TensorSpec((), np.int64)).repeat(0),
               Dataset.from_generator(gen, ag.TensorSpec((), np.int64)).take(0),
               Dataset.from_generator(gen, ag.TensorSpec((), np.int64)).skip(-1)):
        assert list(ds) == [] and calls == []


# -- take_test / skip_test ---------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("count", [-1, -5, 0, 4, 10, 25, 2**62])
def test_take(count, mode):
    comps = (np.arange(10),)
    ds = Dataset.from_tensor_slices(comps).take(count)
    assert [s.shape for s in ds.element_spec] == [c.shape[1:] for c in comps]
    n = min(count, 10) if count >= 0 else 10
    produces(ds, [(i,) for i in range(n)], mode)


@MODES
@pytest.mark.parametrize("count", [50, 200, 100, -1, 0])
def test_take_range(count, mode):
    produces(Dataset.range(100).take(count), list(range(100))[:count if count >= 0 else None],
             mode)


@MODES
@pytest.mark.parametrize("count", [-1, -7, 0, 4, 10, 25, 2**62])
def test_skip(count, mode):
    comps = (np.arange(10),)
    ds = Dataset.from_tensor_slices(comps).skip(count)
    assert [s.shape for s in ds.element_spec] == [c.shape[1:] for c in comps]
    start = min(count, 10) if count >= 0 else 10
    produces(ds, [(i,) for i in range(start, 10)], mode)


@MODES
def test_skip_negative_reproducers(mode):
    produces(Dataset.range(5).skip(-1), [], mode)
    produces(Dataset.from_tensor_slices([10, 20, 30]).skip(-1), [], mode)


@MODES
def test_take_and_skip_of_a_stream(mode):
    """The same counts after filter() (a stream: counted, not indexed)."""
    evens = lambda: Dataset.range(20).filter(lambda x: x % 2 == 0)  # noqa: E731
    for count in (-1, 0, 3, 10, 2**62):
        want = list(range(0, 20, 2))
        produces(evens().take(count), want[:count] if count >= 0 else want, mode)
        produces(evens().skip(count), want[count:] if count >= 0 else [], mode)


def test_take_reads_no_element_past_its_count():
    pulled = []

    def gen():
        for i in range(100):
            pulled.append(i)
            yield i
    ds = Dataset.from_generator(gen, ag.TensorSpec((), np.int64)).take(3)
    assert [int(x) for x in ds] == [0, 1, 2] and pulled == [0, 1, 2]


@MODES
def test_take_of_infinite(mode):
    ds = Dataset.range(5).repeat().take(12)
    assert len(ds) == 12
    produces(ds, (list(range(5)) * 3)[:12], mode)


# -- shard_test --------------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("n, num, index, want", [
    (10, 5, 2, [2, 7]), (10, 5, 0, [0, 5]), (1, 5, 2, []), (10, 7, 5, [5]), (10, 5, 4, [4, 9]),
    (10, 4, 3, [3, 7]), (10, 20, 5, [5]), (7, 8, 3, [3]), (13, 23, 21, []),
    (10, 2**62, 3, [3]), (0, 3, 1, [])])
def test_shard(n, num, index, want, mode):
    produces(Dataset.range(n).shard(num, index), want, mode)


@MODES
def test_shard_nested(mode):
    ds = Dataset.from_tensor_slices((np.arange(10), np.arange(10, 0, -1))).shard(5, 2)
    produces(ds, [(2, 8), (7, 3)], mode)


@MODES
@pytest.mark.parametrize("num, index", [(5, 7), (5, -3), (-3, 1), (0, 1), (5, 5)])
def test_shard_invalid(num, index, mode):
    fails(lambda: Dataset.range(10).shard(num, index), ValueError, mode)


@MODES
@pytest.mark.parametrize("elements", [0, 10, 50])
@pytest.mark.parametrize("num", [5, 7, 10])
@pytest.mark.parametrize("index", [0, 1, 4])
def test_shard_combinations(elements, num, index, mode):
    ds = Dataset.range(elements).shard(num, index)
    assert len(ds) == len(range(index, elements, num))
    produces(ds, list(range(index, elements, num)), mode)


@MODES
def test_shard_of_a_stream(mode):
    ds = Dataset.range(30).filter(lambda x: x % 3 != 0).shard(4, 3)
    produces(ds, [x for x in range(30) if x % 3][3::4], mode)


# -- batch_test --------------------------------------------------------------------------------

BATCH_COMPONENTS = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis],
                    np.array(37.0) * np.arange(7))


@MODES
@pytest.mark.parametrize("count", [0, 28])
@pytest.mark.parametrize("batch_size", [14, 15])
@pytest.mark.parametrize("drop_remainder", [True, False])
def test_batch(count, batch_size, drop_remainder, mode):
    ds = Dataset.from_tensor_slices(BATCH_COMPONENTS).map(
        lambda x, y, z: (x * x, y * y, z * z)).repeat(count).batch(batch_size, drop_remainder)
    dim0 = batch_size if drop_remainder else None
    assert [s.shape for s in ds.element_spec] == [(dim0,) + c.shape[1:] for c in BATCH_COMPONENTS]
    rows = [tuple(c[i % 7] ** 2 for c in BATCH_COMPONENTS) for i in range(count * 7)]
    full = len(rows) // batch_size
    cut = full * batch_size if drop_remainder else len(rows)
    batches = [rows[k:k + batch_size] for k in range(0, cut, batch_size)]
    expected = [tuple(np.stack(col) for col in zip(*b)) for b in batches]
    produces(ds, expected, mode)


@MODES
@pytest.mark.parametrize("size", [0, -1, -10])
def test_invalid_batch_size(size, mode):
    fails(lambda: Dataset.range(10).batch(size), ValueError, mode)


@MODES
@pytest.mark.parametrize("count", [0, 10, 20, 50])
@pytest.mark.parametrize("batch_size", [1, 3, 7, 20])
@pytest.mark.parametrize("drop_remainder", [True, False])
def test_batch_range_combinations(count, batch_size, drop_remainder, mode):
    ds = Dataset.from_tensor_slices(list(range(count))).batch(batch_size, drop_remainder)
    full = count // batch_size
    want = [np.arange(i * batch_size, i * batch_size + batch_size) for i in range(full)]
    if not drop_remainder and count % batch_size:
        want.append(np.arange(full * batch_size, count))
    produces(ds, want, mode)


@MODES
@pytest.mark.parametrize("stream", [False, True])
def test_huge_batch_size(stream, mode):
    """batch(2**40) allocates the rows it gets, not 2**40 (indexed and stream pipelines)."""
    ds = Dataset.range(10)
    if stream:
        ds = ds.filter(lambda x: x % 2 == 0)
    want = [np.arange(0, 10, 2)] if stream else [np.arange(10)]
    produces(ds.batch(2**40), want, mode)
    produces(ds.batch(2**40, drop_remainder=True), [], mode)


def test_batch_drop_remainder_spec_reproducer():
    assert Dataset.range(10).batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert Dataset.range(10).filter(lambda x: x > 0).batch(3, True).element_spec.shape == (3,)


def test_traced_dropped_remainder_batch_has_static_rows():
    """In the graph too, a batch with drop_remainder has n rows statically."""
    for ds in (Dataset.range(10).batch(3, True),
               Dataset.range(10).map(lambda x: x * 2).batch(3, True),
               Dataset.range(10).filter(lambda x: x > 0).batch(3, True)):
        n, values, seen = traced(ds)
        assert n == 3 and all(shapes == [(3,)] for shapes in seen)


def test_batch_shape_error():
    """Elements of different shapes cannot be stacked (tf.data: InvalidArgumentError)."""
    def gen():
        yield [1.0, 2.0, 3.0]
        yield [4.0, 5.0, 6.0]
        yield [7.0, 8.0, 9.0, 10.0]
    ds = Dataset.from_generator(gen, ag.TensorSpec([None], np.float32)).batch(3)
    with pytest.raises(ValueError, match=r"first element has shape \(3,\) and element 2 has "
                                         r"shape \(4,\)"):
        list(ds)


@MODES
def test_batch_of_unknown_length_elements_from_a_generator(mode):
    def gen():
        for i in range(5):
            yield np.arange(3) + i
    ds = Dataset.from_generator(gen, ag.TensorSpec([None], np.int64)).batch(2)
    want = [np.stack([np.arange(3) + i for i in ks]) for ks in ([0, 1], [2, 3], [4])]
    if mode == "eager":
        produces(ds, want, mode)
    else:
        n, values = take_traced(ds, 10)
        assert n == 3 and values.tolist() == np.concatenate([w.ravel() for w in want]).tolist()


@MODES
def test_batch_name_case(mode):
    produces(Dataset.range(5).batch(5, num_parallel_calls=1), [np.arange(5)], mode)


# -- shuffle_test ------------------------------------------------------------------------------

SHUFFLE_COMPONENTS = (np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8]), np.array([9.0, 10.0, 11.0, 12.0]))


def _shuffle_ds(count=5, buffer_size=None, seed=0):
    ds = Dataset.from_tensor_slices(SHUFFLE_COMPONENTS).repeat(count)
    return ds.shuffle(buffer_size, seed) if buffer_size else ds


def _rows(elements):
    return [tuple(float(v) for v in e) for e in elements]


def test_shuffle_basic():
    plain = _rows(_shuffle_ds())
    assert len(plain) == 20
    a = _rows(_shuffle_ds(buffer_size=100, seed=37))
    assert sorted(a) == sorted(plain)
    assert a == _rows(_shuffle_ds(buffer_size=100, seed=37))
    b = _rows(_shuffle_ds(buffer_size=100, seed=137))
    assert b != a and sorted(b) == sorted(a)
    assert sorted(_rows(_shuffle_ds(buffer_size=2, seed=37))) == sorted(plain)
    assert list(_shuffle_ds(count=0, buffer_size=100, seed=37)) == []
    spec = _shuffle_ds(buffer_size=100).element_spec
    assert tuple(s.shape for s in spec) == ((), (), ())


@pytest.mark.parametrize("buffer_size", [100, 2])
@pytest.mark.parametrize("seed", [37, 137])
def test_shuffle_traced_equals_eager(buffer_size, seed):
    """The k-th traced iteration yields the k-th eager iteration's order (a twin dataset)."""
    ds, twin = _shuffle_ds(buffer_size=buffer_size, seed=seed), \
        _shuffle_ds(buffer_size=buffer_size, seed=seed)
    for _ in range(2):
        n, values, _ = traced(ds)
        want = np.concatenate([np.array(r) for r in _rows(twin)])
        assert n == 20 and values.tolist() == want.tolist()


@MODES
def test_shuffle_default_arguments(mode):
    ds = Dataset.from_tensor_slices([0, 1, 2, 3, 4]).shuffle(5).repeat()
    if mode == "eager":
        got = [int(x) for x in eager(ds, limit=50)]
    else:
        got = [int(v) for v in take_traced(ds, 50)[1]]
    assert collections.Counter(got) == {i: 10 for i in range(5)}
    for k in range(10):    # every pass is a permutation
        assert sorted(got[5 * k:5 * k + 5]) == list(range(5))


@MODES
@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("seed", [None, 42])
def test_reshuffle_repeat_epochs(reshuffle, seed, mode):
    ds = Dataset.range(10).shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle).repeat(2)
    if mode == "eager":
        got = [int(x) for x in ds]
    else:
        got = [int(v) for v in traced(ds)[1]]
    assert (got[:10] == got[10:]) == (not reshuffle)


@MODES
@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("seed", [None, 42])
def test_reshuffle_iteration_epochs(reshuffle, seed, mode):
    ds = Dataset.range(10).shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle)
    if mode == "eager":
        first, second = [int(x) for x in ds], [int(x) for x in ds]
    else:
        first, second = [[int(v) for v in traced(ds)[1]] for _ in range(2)]
    assert (first == second) == (not reshuffle)


@MODES
@pytest.mark.parametrize("size", [0, -1, -2])
def test_shuffle_invalid_buffer_size(size, mode):
    fails(lambda: Dataset.range(10).shuffle(size), ValueError, mode, match="buffer_size")


@MODES
def test_shuffle_huge_buffer(mode):
    ds = Dataset.range(10).shuffle(2**62, seed=3)
    got = [int(x) for x in ds] if mode == "eager" else [int(v) for v in traced(ds)[1]]
    assert sorted(got) == list(range(10))


@MODES
def test_shuffle_in_function_counts_every_element(mode):
    ds = Dataset.range(10).shuffle(1)
    produces(ds, list(range(10)), mode)   # a buffer of 1 keeps the order


# -- map_test ----------------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("count", [0, 1, 14])
def test_map_dataset(count, mode):
    comps = (np.arange(7), np.array([[1, 2, 3]]) * np.arange(7)[:, np.newaxis],
             np.array(37.0) * np.arange(7))
    ds = Dataset.from_tensor_slices(comps).map(lambda x, y, z: (x * x, y * y, z * z)).repeat(count)
    assert [s.shape for s in ds.element_spec] == [c.shape[1:] for c in comps]
    produces(ds, [tuple(c[i] ** 2 for c in comps) for i in range(7)] * count, mode)


@MODES
def test_map_dict(mode):
    ds = Dataset.range(10).map(lambda x: {"foo": x * 2, "bar": x ** 2}).map(
        lambda d: d["foo"] + d["bar"])
    produces(ds, [i * 2 + i ** 2 for i in range(10)], mode)


@MODES
def test_map_namedtuple(mode):
    Example = collections.namedtuple("Example", ["label", "feature"])

    def preprocess_tuple(label, feature):
        return feature, label

    def preprocess_namedtuple(example):
        return example._replace(feature=example.feature * 2)
    ds = Dataset.range(10).map(lambda x: Example(x, 2 * x))
    assert isinstance(ds.element_spec, Example)
    produces(ds.map(preprocess_namedtuple), [Example(i, 4 * i) for i in range(10)], mode)
    pairs = Dataset.range(10).map(lambda x: (x, 2 * x))     # a plain tuple is unpacked
    produces(pairs.map(preprocess_tuple), [(2 * i, i) for i in range(10)], mode)


@MODES
def test_map_python_control_flow(mode):
    def collatz(n):
        steps = np.int64(0)
        while n > 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    def ref(n):
        s = 0
        while n > 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            s += 1
        return s
    produces(Dataset.range(1, 20).map(collatz), [ref(n) for n in range(1, 20)], mode)


@MODES
def test_map_returns_constant(mode):
    produces(Dataset.range(3).map(lambda x: np.float32(1.5)), [np.float32(1.5)] * 3, mode)


@MODES
def test_map_parallel_calls_accepted(mode):
    ds = Dataset.range(20).map(lambda x: x * 3, num_parallel_calls=ag.data.AUTOTUNE,
                               deterministic=True)
    produces(ds, [3 * i for i in range(20)], mode)


@MODES
def test_map_of_a_stream(mode):
    ds = Dataset.range(10).filter(lambda x: x % 3 == 0).map(lambda x: (x, -x))
    produces(ds, [(x, -x) for x in range(0, 10, 3)], mode)


# -- filter_test -------------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("count, modulus", [(14, 2), (4, 18), (0, 1)])
def test_filter_dataset(count, modulus, mode):
    comps = (np.arange(7, dtype=np.int64),
             np.array([[1, 2, 3]], dtype=np.int64) * np.arange(7, dtype=np.int64)[:, np.newaxis],
             np.array(37.0, dtype=np.float64) * np.arange(7))
    ds = Dataset.from_tensor_slices(comps).map(lambda x, y, z: (x * x, y * y, z * z)).repeat(count)
    ds = ds.filter(lambda x, _y, _z: x % modulus == 0)
    assert [s.shape for s in ds.element_spec] == [c.shape[1:] for c in comps]
    want = [tuple(c[i] ** 2 for c in comps) for i in range(7) if i ** 2 % modulus == 0] * count
    produces(ds, want, mode)


@MODES
def test_filter_range(mode):
    produces(Dataset.range(4).filter(lambda x: x % 3 != 2), [0, 1, 3], mode)


@MODES
def test_filter_dict(mode):
    ds = Dataset.range(10).map(lambda x: {"foo": x * 2, "bar": x ** 2}).filter(
        lambda d: d["bar"] % 2 == 0).map(lambda d: d["foo"] + d["bar"])
    produces(ds, [i * 2 + i ** 2 for i in range(10) if not (i ** 2) % 2], mode)


@MODES
def test_filter_with_inner_loop_predicate(mode):
    def predicate(xs):
        total = np.int64(0)
        for x in xs:
            total += x * x
        return total == 1 + 4 + 9
    ds = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]]).filter(predicate)
    produces(ds, [np.array([1, 2, 3])], mode)


@MODES
def test_filter_from_tensors(mode):
    produces(Dataset.from_tensors(42).filter(lambda x: True), [42], mode)
    produces(Dataset.from_tensors(42).filter(lambda x: False), [], mode)


def test_parallel_filters():
    ds = Dataset.range(10).filter(lambda x: x % 2 == 0)
    assert [int(next(iter(ds))) for _ in range(10)] == [0] * 10


# -- prefetch_test -----------------------------------------------------------------------------

@MODES
@pytest.mark.parametrize("buffer_size", [-1, None, 0, 42])
def test_prefetch_buffer_size(buffer_size, mode):
    produces(Dataset.range(10).prefetch(buffer_size=buffer_size), list(range(10)), mode)


@MODES
@pytest.mark.parametrize("buffer_size", [-2, -42])
def test_prefetch_invalid_buffer_size(buffer_size, mode):
    fails(lambda: Dataset.range(10).prefetch(buffer_size), ValueError, mode)


@MODES
@pytest.mark.parametrize("elements", [10, 50])
@pytest.mark.parametrize("buffer_size", [0, 5, 10])
def test_prefetch_combinations(elements, buffer_size, mode):
    produces(Dataset.range(elements).prefetch(buffer_size), list(range(elements)), mode)


@MODES
def test_prefetch_of_a_generator(mode):
    ds = Dataset.from_generator(lambda: iter(range(30)), ag.TensorSpec((), np.int64)).prefetch(3)
    produces(ds, list(range(30)), mode)


# -- enumerate_test ----------------------------------------------------------------------------

@MODES
def test_enumerate(mode):
    comps = (["a", "b"], [1, 2], [37.0, 38])
    start = 2**33
    ds = Dataset.from_tensor_slices(comps[1:]).enumerate(start)
    assert ds.element_spec[0].dtype == np.int64 and ds.element_spec[0].shape == ()
    produces(ds, [(start, (1, 37.0)), (start + 1, (2, 38.0))], mode)


@MODES
def test_enumerate_of_a_stream(mode):
    ds = Dataset.range(10).filter(lambda x: x > 6).enumerate(-3)
    produces(ds, [(-3, 7), (-2, 8), (-1, 9)], mode)


# -- element_spec of every transformation (tf.data's rules), and of datasets built in a trace ----

SPEC_BASE = lambda: Dataset.from_tensors((np.zeros((2, 3), np.float32), np.arange(4)))  # noqa: E731
SPEC_CASES = {
    "from_tensors": (lambda d: d, ((2, 3), (4,))),
    "map": (lambda d: d.map(lambda a, b: (a.T, b[:2])), ((3, 2), (2,))),
    "filter": (lambda d: d.filter(lambda a, b: True), ((2, 3), (4,))),
    "shuffle": (lambda d: d.shuffle(3), ((2, 3), (4,))),
    "repeat": (lambda d: d.repeat(3), ((2, 3), (4,))),
    "repeat_forever": (lambda d: d.repeat(), ((2, 3), (4,))),
    "take": (lambda d: d.take(-1), ((2, 3), (4,))),
    "skip": (lambda d: d.skip(0), ((2, 3), (4,))),
    "shard": (lambda d: d.shard(2, 1), ((2, 3), (4,))),
    "prefetch": (lambda d: d.prefetch(2), ((2, 3), (4,))),
    "batch": (lambda d: d.repeat(5).batch(2), ((None, 2, 3), (None, 4))),
    "batch_drop": (lambda d: d.repeat(5).batch(2, drop_remainder=True), ((2, 2, 3), (2, 4))),
    "batch_batch": (lambda d: d.repeat(9).batch(2, True).batch(2), ((None, 2, 2, 3), (None, 2, 4))),
    "enumerate": (lambda d: d.enumerate(), ((), ((2, 3), (4,)))),
}


def _spec_shapes(spec):
    return tuple(_spec_shapes(s) if isinstance(s, tuple) else s.shape for s in spec)


@MODES
@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_element_spec_of_every_transformation(name, mode):
    make, want = SPEC_CASES[name]
    ds = make(SPEC_BASE())
    assert _spec_shapes(ds.element_spec) == want
    if "forever" in name:
        ds = ds.take(3)
    if mode == "eager":   # every element fits the spec (produces() checks it too)
        for e in eager(ds):
            got = _spec_shapes(tuple(e)) if isinstance(e, tuple) else None
            assert got is not None
    else:                 # the traced body's static shapes fit it (checked in traced())
        traced(ds)


def test_dataset_built_from_traced_arguments():
    @ag.function
    def total(x):
        s = np.float64(0.0)
        for v in Dataset.from_tensor_slices(x).batch(2):
            s += np.sum(v)
        return s
    assert total(np.arange(5.0)) == 10.0 and total(np.arange(7.0)) == 21.0


@pytest.mark.parametrize("stream", [False, True])
def test_map_error_drops_the_element_and_iteration_goes_on(stream):
    """tf.data: an element whose map function fails raises at its next(); the next next()
    reads the element after it."""
    def f(x):
        if int(x) == 2:
            raise ZeroDivisionError("element 2")
        return x * 10
    ds = Dataset.range(5)
    if stream:
        ds = ds.filter(lambda x: True)
    it = iter(ds.map(ag.do_not_convert(f)))
    assert int(next(it)) == 0 and int(next(it)) == 10
    with pytest.raises(ZeroDivisionError, match="element 2"):
        next(it)
    assert [int(x) for x in it] == [30, 40]
