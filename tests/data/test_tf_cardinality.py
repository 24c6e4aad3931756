"""tf.data's cardinality_test and len_test, ported, and a sweep of every negative, zero and
huge count of every transformation with a count: `len()`/`cardinality()` must agree with
what eager and traced iteration yield, and both with a plain-Python model of tf.data's rules.
"""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph.data import INFINITE_CARDINALITY as INF
from autograph.data import UNKNOWN_CARDINALITY as UNKNOWN
from autograph.data import Dataset

from tests.data.tfport import MODES, eager, traced

R = Dataset.range
ANY = lambda _: True  # noqa: E731

CASES = [
    ("Batch1", lambda: R(5).batch(2, drop_remainder=True), 2),
    ("Batch2", lambda: R(5).batch(2, drop_remainder=False), 3),
    ("Batch3", lambda: R(5).filter(ANY).batch(2), UNKNOWN),
    ("Batch4", lambda: R(5).repeat().batch(2), INF),
    ("Filter", lambda: R(5).filter(ANY), UNKNOWN),
    ("FromTensors1", lambda: Dataset.from_tensors(0), 1),
    ("FromTensors2", lambda: Dataset.from_tensors((0, 1)), 1),
    ("FromTensorSlices1", lambda: Dataset.from_tensor_slices([0, 0, 0]), 3),
    ("FromTensorSlices2", lambda: Dataset.from_tensor_slices(([0, 0, 0], [1, 1, 1])), 3),
    ("Generator", lambda: Dataset.from_generator(lambda: iter([1]), ag.TensorSpec((), np.int64)),
     UNKNOWN),
    ("Map", lambda: R(5).map(lambda x: x), 5),
    ("Prefetch", lambda: R(5).prefetch(buffer_size=1), 5),
    ("Range1", lambda: R(0), 0),
    ("Range2", lambda: R(5), 5),
    ("Range3", lambda: R(5, 10), 5),
    ("Range4", lambda: R(10, 5), 0),
    ("Range5", lambda: R(5, 10, 2), 3),
    ("Range6", lambda: R(10, 5, -2), 3),
    ("Range7", lambda: R(0, 0, -2), 0),
    ("Range8", lambda: R(3, 3, 1), 0),
    ("Range9", lambda: R(-4, -4, 2), 0),
    ("Range10", lambda: R(1, 0, 3), 0),
    ("Range11", lambda: R(0, 1, -3), 0),
    ("Repeat1", lambda: R(0).repeat(0), 0),
    ("Repeat2", lambda: R(1).repeat(0), 0),
    ("Repeat3", lambda: R(0).repeat(5), 0),
    ("Repeat4", lambda: R(1).repeat(5), 5),
    ("Repeat5", lambda: R(0).repeat(), 0),
    ("Repeat6", lambda: R(1).repeat(), INF),
    ("Shuffle", lambda: R(5).shuffle(buffer_size=1), 5),
    ("Shard1", lambda: R(5).shard(2, 0), 3),
    ("Shard2", lambda: R(5).shard(8, 7), 0),
    ("Shard3", lambda: R(5).filter(ANY).shard(2, 0), UNKNOWN),
    ("Shard4", lambda: R(5).repeat().shard(2, 0), INF),
    ("Skip1", lambda: R(5).skip(2), 3),
    ("Skip2", lambda: R(5).skip(8), 0),
    ("Skip3", lambda: R(5).filter(ANY).skip(2), UNKNOWN),
    ("Skip4", lambda: R(5).repeat().skip(2), INF),
    ("Take1", lambda: R(5).take(2), 2),
    ("Take2", lambda: R(5).take(8), 5),
    ("Take3", lambda: R(5).filter(ANY).take(2), UNKNOWN),
    ("Take4", lambda: R(5).repeat().take(2), 2),
    ("Enumerate", lambda: R(5).enumerate(), 5),
]


@pytest.mark.parametrize("name, make, want", CASES, ids=[c[0] for c in CASES])
def test_cardinality(name, make, want):
    ds = make()
    card = ds.cardinality()
    assert isinstance(card, np.int64) and int(card) == want
    if want >= 0:
        assert len(ds) == want
    else:
        with pytest.raises(TypeError, match="infinite" if want == INF else "not known"):
            len(ds)


@MODES
@pytest.mark.parametrize("name, make, want", [c for c in CASES if c[2] >= 0],
                         ids=[c[0] for c in CASES if c[2] >= 0])
def test_cardinality_is_what_iteration_yields(name, make, want, mode):
    ds = make()
    n = len(eager(ds)) if mode == "eager" else traced(ds)[0]
    assert n == want


# -- every count of every transformation, against a model of tf.data's rules -----------------

def _model(items, op, count):
    """What tf.data yields for `op(count)` of a finite list (None: infinite)."""
    if op == "take":
        return items if count < 0 else items[:count]
    if op == "skip":
        return [] if count < 0 else items[count:]
    if op == "repeat":
        if count is None or count < 0:
            return [] if not items else None
        return items * count
    if op == "shard":
        return items[1::count]
    if op == "batch":
        return [items[k:k + count] for k in range(0, len(items), count)]
    if op == "batch_drop":
        return [items[k:k + count] for k in range(0, len(items) - count + 1, count)]
    raise AssertionError(op)


def _apply(ds, op, count):
    if op == "batch_drop":
        return ds.batch(count, drop_remainder=True)
    if op == "shard":
        return ds.shard(count, 1)
    return getattr(ds, op)(count)


COUNTS = {"take": [-2**63, -5, -1, 0, 1, 3, 7, 2**62, 2**63 - 1],
          "skip": [-2**63, -5, -1, 0, 1, 3, 7, 2**62, 2**63 - 1],
          "repeat": [None, -2**63, -5, -1, 0, 1, 3],
          "shard": [2, 3, 7, 2**62, 2**63 - 1],
          "batch": [1, 2, 3, 7, 2**40, 2**63 - 1],
          "batch_drop": [1, 2, 3, 7, 2**40, 2**63 - 1]}
SOURCES = {"range0": (lambda: R(0), []),
           "range6": (lambda: R(6), list(range(6))),
           "stream6": (lambda: R(12).filter(lambda x: x % 2 == 0), list(range(0, 12, 2))),
           "generator4": (lambda: Dataset.from_generator(lambda: iter(range(4)),
                                                         ag.TensorSpec((), np.int64)),
                          list(range(4)))}
SWEEP = [(src, op, c) for src in SOURCES for op in COUNTS for c in COUNTS[op]]


def _values(items):
    return np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in items]) \
        if items else np.zeros(0)


@pytest.mark.parametrize("src, op, count", SWEEP, ids=[f"{s}-{o}-{c}" for s, o, c in SWEEP])
def test_every_count_eager_traced_and_len_agree(src, op, count):
    make, items = SOURCES[src]
    ds = _apply(make(), op, count)
    want = _model(items, op, count)
    card = int(ds.cardinality())
    if want is None:                                         # infinite
        assert card in (INF, UNKNOWN)
        got = [int(x) for x in eager(ds, limit=20)]
        assert got == (items * 20)[:20]
        n, values, _ = traced(ds.take(20))
        assert n == 20 and values.tolist() == _values((items * 20)[:20]).tolist()
        return
    if card != UNKNOWN:
        assert card == len(want) == len(ds)
    got = eager(ds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.asarray(w))
    n, values, _ = traced(ds)
    assert n == len(want) and values.tolist() == _values(want).tolist()


@pytest.mark.parametrize("op, bad", [("take", 2**63), ("skip", -2**63 - 1), ("repeat", 2**64),
                                     ("batch", 2**63), ("take", 1.5), ("skip", "3"),
                                     ("batch", True), ("shuffle", None)])
def test_counts_that_are_not_int64_integers_are_refused(op, bad):
    with pytest.raises((TypeError, ValueError), match=op):
        getattr(R(5), op)(bad)


@pytest.mark.parametrize("a, b", list(itertools.product([-1, 0, 2, 9], repeat=2)))
def test_nested_take_skip_repeat_lengths(a, b):
    """Chains of counted transformations: len() is what iteration yields."""
    for ds in (R(7).take(a).skip(b), R(7).skip(a).repeat(max(b, 0)).take(a),
               R(7).shard(3, 2).repeat(max(a, 0)).skip(b), R(7).batch(max(a, 1)).take(b)):
        assert len(ds) == len(eager(ds))


# -- len_test ----------------------------------------------------------------------------------

def test_len_known():
    assert len(R(5)) == 5
    assert len(Dataset.from_tensor_slices(np.zeros((3, 2)))) == 3


def test_len_infinite_and_unknown():
    with pytest.raises(TypeError, match="infinite"):
        len(R(5).repeat())
    with pytest.raises(TypeError, match="not known"):
        len(R(5).filter(ANY))
