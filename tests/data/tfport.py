"""The harness of the tf.data kernel tests ported to ag.data (tests/data/test_tf_*.py).

Every ported case runs in two modes, and both must give tf.data's answer:

- `eager`: iterate the dataset in Python; the elements (structure, dtype, values) must equal
  the expected ones, each must fit `element_spec`, and a known `cardinality()` must be the
  number of elements;
- `traced`: loop over the dataset inside an `ag.function` (the loop is one while_loop node);
  the loop returns the count and every leaf's values in order, which must equal the expected
  ones, and the static shapes of the elements the traced body saw must fit `element_spec`.

`produces(ds, expected, mode)` checks both ways; `fails(make, error, mode)` checks that
building or iterating raises `error` (eagerly, or while tracing / running the function).
"""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir import nest

MODES = pytest.mark.parametrize("mode", ["eager", "traced"])


def _fits(spec, shape, dtype=None):
    if dtype is not None and np.dtype(spec.dtype) != np.dtype(dtype):
        return False
    if spec.shape is None:
        return True
    return shape is not None and len(shape) == len(spec.shape) and all(
        d is None or d == n for d, n in zip(spec.shape, shape))


def _same(expected, got):
    """Equal structure (tuples, dicts), and equal arrays leaf by leaf."""
    assert nest.structure_of(_arrays(expected)) == nest.structure_of(got), (expected, got)
    for e, g in zip(nest.flatten(_arrays(expected)), nest.flatten(got)):
        e = np.asarray(e)
        assert np.shape(g) == e.shape, (e, g)
        np.testing.assert_array_equal(g, e)


def _arrays(x):
    """Expected values as tf.data reads them: a list is one array, tuples/dicts structure."""
    if isinstance(x, list) or not nest.is_nested(x):
        return np.asarray(x)
    return nest.rebuild(x, [_arrays(k) for k in nest.children(x)])


def _flat_values(elements):
    parts = [np.ravel(np.asarray(leaf)).astype(np.float64)
             for e in elements for leaf in nest.flatten(_arrays(e))]
    return np.concatenate(parts) if parts else np.zeros(0)


def eager(ds, limit=None):
    """The elements of an eager iteration (at most `limit`)."""
    out = []
    for x in ds:
        out.append(x)
        if limit is not None and len(out) >= limit:
            break
    return out


def traced(ds):
    """(number of elements, every leaf's values in order as float64, the static shapes the
    traced loop body saw) from a loop over `ds` inside ag.function."""
    seen = []

    @ag.do_not_convert
    def flat(x):
        leaves = nest.flatten(x)
        seen.append([leaf.shape for leaf in leaves])
        return np.concatenate([np.ravel(leaf).astype(np.float64) for leaf in leaves])

    @ag.function
    def run(dataset):
        acc = np.zeros(0)
        n = np.int64(0)
        for x in dataset:
            acc = np.concatenate([acc, flat(x)])
            n += 1
        return n, acc
    n, acc = run(ds)
    return int(n), np.asarray(acc), seen


def produces(ds, expected, mode, *, check_cardinality=True):
    """`ds` yields `expected` (a list of elements) in `mode`; specs and lengths agree."""
    spec = nest.flatten(ds.element_spec)
    if mode == "eager":
        got = eager(ds)
        assert len(got) == len(expected), (len(got), len(expected))
        for e, g in zip(expected, got):
            _same(e, g)
            for s, leaf in zip(spec, nest.flatten(g)):
                assert _fits(s, np.shape(leaf), np.asarray(leaf).dtype), (s, leaf)
        card = int(ds.cardinality())
        if check_cardinality and card >= 0:
            assert card == len(expected) == len(ds)
    else:
        n, values, seen = traced(ds)
        assert n == len(expected), (n, len(expected))
        np.testing.assert_array_equal(values, _flat_values(expected))
        for shapes in seen:
            assert len(shapes) == len(spec)
            for s, shape in zip(spec, shapes):
                assert _fits(s, shape), (s, shape)


def fails(make, error, mode, match=None):
    """Building and iterating `make()` raises `error`: eagerly, or inside an ag.function
    (built there, iterated by the traced loop)."""
    if mode == "eager":
        with pytest.raises(error, match=match):
            for _ in make():
                pass
        return

    @ag.function
    def run():
        n = np.int64(0)
        for _ in make():
            n += 1
        return n
    with pytest.raises(error, match=match):
        run()


def take_traced(ds, k):
    """The first k elements' values of a (possibly infinite) dataset, from a traced loop."""
    n, values, _ = traced(ds.take(k))
    return n, values
