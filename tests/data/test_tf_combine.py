"""tf.data's zip_test and concatenate_test, and their cardinality cases, ported: each case
eagerly and traced (tests/data/tfport.py), over indexed inputs, streams and generators."""

import collections

import numpy as np
import pytest

import autograph as ag
from autograph.data import INFINITE_CARDINALITY as INF
from autograph.data import UNKNOWN_CARDINALITY as UNKNOWN
from autograph.data import Dataset

from tests.data.tfport import MODES, eager, produces, take_traced, traced

R = Dataset.range
ANY = lambda _: True  # noqa: E731

EQUAL = [np.tile(np.array([[1], [2], [3], [4]]), 20), np.tile(np.array([[12], [13], [14], [15]]), 22),
         np.array([37.0, 38.0, 39.0, 40.0])]


def _zip_of(components):
    return Dataset.zip(tuple(Dataset.from_tensor_slices(c) for c in components))


# -- zip_test ----------------------------------------------------------------------------------

@MODES
def test_zip_equal(mode):
    produces(_zip_of(EQUAL), [tuple(c[i] for c in EQUAL) for i in range(4)], mode)


@MODES
def test_zip_unequal(mode):
    comps = [[1, 2, 3, 4], [1, 2, 3, 4, 5], [1.0, 2.0]]
    produces(_zip_of(comps), [tuple(c[i] for c in comps) for i in range(2)], mode)


@MODES
def test_zip_nested(mode):
    a, b, c = (Dataset.from_tensor_slices(x) for x in EQUAL)
    ds = Dataset.zip((a, (b, c)))
    spec = ds.element_spec
    assert (spec[0].shape, spec[1][0].shape, spec[1][1].shape) == ((20,), (22,), ())
    produces(ds, [(EQUAL[0][i], (EQUAL[1][i], EQUAL[2][i])) for i in range(4)], mode)


@MODES
def test_zip_namedtuple(mode):
    Foo = collections.namedtuple("Foo", ["x", "y"])
    ds = Dataset.zip(Foo(x=R(3), y=R(3, 6)))
    assert isinstance(ds.element_spec, Foo)
    produces(ds, [Foo(x=0, y=3), Foo(x=1, y=4), Foo(x=2, y=5)], mode)


@MODES
def test_zip_dict_and_positional(mode):
    produces(Dataset.zip({"a": R(3), "b": R(5, 9)}), [{"a": i, "b": 5 + i} for i in range(3)], mode)
    produces(Dataset.zip(R(2), R(4, 0, -1)), [(0, 4), (1, 3)], mode)
    produces(Dataset.zip(R(3)), [0, 1, 2], mode)


@MODES
def test_zip_of_streams_and_generators(mode):
    evens = R(20).filter(lambda x: x % 2 == 0)
    gen = Dataset.from_generator(lambda: iter(range(100, 106)), ag.TensorSpec((), np.int64))
    produces(Dataset.zip(evens, R(3, 100)), [(2 * i, 3 + i) for i in range(10)], mode)
    produces(Dataset.zip(R(4), gen), [(i, 100 + i) for i in range(4)], mode)


@MODES
def test_zip_then_map_unpacks_the_tuple(mode):
    produces(Dataset.zip(R(4), R(10, 14)).map(lambda a, b: a * b), [i * (10 + i) for i in range(4)],
             mode)


@MODES
def test_zip_then_shuffle_and_batch_keep_pairs(mode):
    ds = Dataset.zip(R(10), R(10).map(lambda x: x * x)).shuffle(10, seed=4).batch(3)
    got = eager(ds) if mode == "eager" else None
    if mode == "eager":
        for a, b in got:
            assert (a * a).tolist() == b.tolist()
        assert sorted(int(v) for a, _ in got for v in a) == list(range(10))
    else:
        n, values, seen = traced(ds)
        assert n == 4 and sorted(values.tolist()) == sorted(
            [float(i) for i in range(10)] + [float(i * i) for i in range(10)])


def test_zip_refuses_non_datasets():
    with pytest.raises(TypeError, match="datasets"):
        Dataset.zip((R(3), [1, 2, 3]))
    with pytest.raises(ValueError):
        Dataset.zip(())


# -- concatenate_test --------------------------------------------------------------------------

INPUT = (np.tile(np.array([[1], [2], [3], [4]]), 20), np.tile(np.array([[12], [13], [14], [15]]), 15),
         np.array([37.0, 38.0, 39.0, 40.0]))
MORE = (np.tile(np.array([[1], [2], [3], [4], [5]]), 20),
        np.tile(np.array([[12], [13], [14], [15], [16]]), 15), np.array([37.0, 38.0, 39.0, 40.0, 41.0]))


@MODES
def test_concatenate(mode):
    ds = Dataset.from_tensor_slices(INPUT).concatenate(Dataset.from_tensor_slices(MORE))
    assert [s.shape for s in ds.element_spec] == [(20,), (15,), ()]
    want = [tuple(c[i] for c in INPUT) for i in range(4)] + [tuple(c[i] for c in MORE) for i in range(5)]
    produces(ds, want, mode)


@MODES
def test_concatenate_different_shape(mode):
    a = (np.tile(np.array([[1], [2], [3], [4]]), 20), np.tile(np.array([[12], [13], [14], [15]]), 4))
    b = (np.tile(np.array([[1], [2], [3], [4], [5]]), 20),
         np.tile(np.array([[12], [13], [14], [15], [16]]), 15))
    ds = Dataset.from_tensor_slices(a).concatenate(Dataset.from_tensor_slices(b))
    assert [s.shape for s in ds.element_spec] == [(20,), (None,)]
    want = [tuple(c[i] for c in a) for i in range(4)] + [tuple(c[i] for c in b) for i in range(5)]
    produces(ds, want, mode)


@pytest.mark.parametrize("other", [
    (np.tile(np.array([[1], [2], [3], [4], [5]]), 20), np.tile(np.array([[12], [13], [14], [15], [16]]), 15),
     np.array([37.0, 38.0, 39.0, 40.0, 41.0])),                       # another structure
    (np.tile(np.array([[1.0], [2.0], [3.0], [4.0]]), 5),
     np.tile(np.array([[12], [13], [14], [15]]), 15))])               # another dtype
def test_concatenate_incompatible(other):
    a = (np.tile(np.array([[1], [2], [3], [4]]), 5), np.tile(np.array([[12], [13], [14], [15]]), 4))
    with pytest.raises(TypeError, match="different"):
        Dataset.from_tensor_slices(a).concatenate(Dataset.from_tensor_slices(other))


def test_concatenate_different_keys():
    a = Dataset.from_tensor_slices({"foo": np.array([[1], [2]]), "bar": np.array([[12], [13]])})
    b = Dataset.from_tensor_slices({"foo": np.array([[1], [2]]), "baz": np.array([[5], [6]])})
    with pytest.raises(TypeError, match="different"):
        a.concatenate(b)


@MODES
@pytest.mark.parametrize("left, right", [("range", "range"), ("range", "stream"),
                                         ("stream", "range"), ("stream", "stream"),
                                         ("generator", "range"), ("range", "empty"),
                                         ("empty", "stream")])
def test_concatenate_kinds(left, right, mode):
    make = {"range": lambda: (R(3), [0, 1, 2]),
            "stream": lambda: (R(10).filter(lambda x: x % 4 == 1), [1, 5, 9]),
            "generator": lambda: (Dataset.from_generator(lambda: iter([7, 8]),
                                                         ag.TensorSpec((), np.int64)), [7, 8]),
            "empty": lambda: (R(0), [])}
    (a, wa), (b, wb) = make[left](), make[right]()
    produces(a.concatenate(b), wa + wb, mode)


@MODES
def test_concatenate_batches_of_other_sizes(mode):
    ds = R(5).batch(2).concatenate(R(3).batch(3))
    assert ds.element_spec.shape == (None,)
    produces(ds, [[0, 1], [2, 3], [4], [0, 1, 2]], mode)


@MODES
def test_shuffle_of_a_concatenation_stays_in_the_graph(mode):
    ds = R(4).concatenate(R(10, 13)).shuffle(7, seed=2)
    if mode == "eager":
        assert sorted(int(x) for x in ds) == [0, 1, 2, 3, 10, 11, 12]
    else:
        assert not ds._host_only()
        assert sorted(traced(ds)[1].tolist()) == [0, 1, 2, 3, 10, 11, 12]


@MODES
def test_concatenate_with_infinite(mode):
    ds = R(2).concatenate(R(5, 7).repeat())
    want = [0, 1] + [5, 6] * 4
    if mode == "eager":
        assert [int(x) for x in eager(ds, limit=10)] == want
    else:
        assert take_traced(ds, 10)[1].tolist() == want


# -- cardinality_test (zip, concatenate) --------------------------------------------------------

CARD = [
    ("Concatenate1", lambda: R(5).concatenate(R(5)), 10),
    ("Concatenate2", lambda: R(5).filter(ANY).concatenate(R(5)), UNKNOWN),
    ("Concatenate3", lambda: R(5).repeat().concatenate(R(5)), INF),
    ("Concatenate4", lambda: R(5).concatenate(R(5).filter(ANY)), UNKNOWN),
    ("Concatenate5", lambda: R(5).filter(ANY).concatenate(R(5).filter(ANY)), UNKNOWN),
    ("Concatenate6", lambda: R(5).repeat().concatenate(R(5).filter(ANY)), INF),
    ("Concatenate7", lambda: R(5).concatenate(R(5).repeat()), INF),
    ("Concatenate8", lambda: R(5).filter(ANY).concatenate(R(5).repeat()), INF),
    ("Concatenate9", lambda: R(5).repeat().concatenate(R(5).repeat()), INF),
    ("Zip1", lambda: Dataset.zip(R(5)), 5),
    ("Zip2", lambda: Dataset.zip((R(5), R(3))), 3),
    ("Zip3", lambda: Dataset.zip((R(5), R(3).repeat())), 5),
    ("Zip4", lambda: Dataset.zip((R(5).repeat(), R(3).repeat())), INF),
    ("Zip5", lambda: Dataset.zip((R(5), R(3).filter(ANY))), UNKNOWN),
]


@pytest.mark.parametrize("name, make, want", CARD, ids=[c[0] for c in CARD])
def test_cardinality(name, make, want):
    ds = make()
    assert int(ds.cardinality()) == want
    if want >= 0:
        assert len(ds) == want == len(eager(ds)) == traced(ds)[0]


@pytest.mark.parametrize("make", [
    lambda: Dataset.zip(R(10), R(5, 20).shuffle(4, seed=1)).batch(2),
    lambda: R(4).concatenate(R(10).filter(lambda x: x % 2 == 0)).batch(3),
    lambda: R(3).concatenate(R(7, 9))])
def test_state_round_trip(make):
    """A zip's or concatenation's position is arrays: get_state/set_state resume exactly."""
    import json
    ds = make()
    it = iter(ds)
    next(it)
    state = json.loads(json.dumps(it.get_state()))
    assert state["position"] is not None
    rest = [[np.asarray(v).tolist() for v in (x if isinstance(x, tuple) else (x,))] for x in it]
    it2 = iter(ds)
    it2.set_state(state)
    assert [[np.asarray(v).tolist() for v in (x if isinstance(x, tuple) else (x,))] for x in it2] == rest
