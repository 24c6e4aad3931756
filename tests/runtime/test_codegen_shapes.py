"""Scalar shape arithmetic in generated code (codegen_shapes): `len(x)`, `x.shape[k]`,
integer min/max, transposes and backward loops' stack reads are plain Python on NumPy,
with results identical to the interpreter's kernels: values, dtypes, and NumPy scalar vs
0-d array, so NEP 50 promotion after them is unchanged."""

from unittest import mock

import numpy as np
import pytest

import autograph as ag
from autograph.operators.py_builtins import len_
from autograph.runtime.exec import codegen, interpreter, optimize
from autograph.runtime.exec.codegen_shapes import ShapeArithmetic
from autograph.runtime.numpy.shape_ops import shape_of
from tests.runtime.test_codegen_fill import trace

# kernel calls on shapes and shape scalars that codegen_shapes writes as Python (an astype
# of an array keeps its kernel)
KERNELS = ("k_shape_of", "k_astype(xp, getitem", "k_minimum", "k_maximum", "k_permute_dims")


def exactly_same(a, b, types=True):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.shape(x) == np.shape(y), (x, y)
        assert type(x) is type(y) or not types, (x, y)
        np.testing.assert_array_equal(x, y)


def check(fn, *args, shapes=None):
    """Codegen (plain and optimised graph) against the interpreter (values and dtypes) and
    against codegen without codegen_shapes (and types: NumPy scalar or 0-d array, which
    the interpreter's getitem kernel and codegen's subscripts already differ in); the
    sources."""
    graph = trace(fn, *args, shapes=shapes)
    want = interpreter.run(graph, args, None, check=True)
    sources = []
    for g in (graph, optimize.optimize(graph)):
        compiled = codegen.compile_graph(g)
        got = list(compiled(*args))
        exactly_same(got, list(want), types=False)
        with mock.patch.object(ShapeArithmetic, "expression", lambda *a: None):
            codegen._cache.pop(g, None)
            before = codegen.compile_graph(g)
            codegen._cache.pop(g, None)
        assert not any(k in before.__source__ for k in ("ag_int64(", ".shape\n"))
        exactly_same(got, list(before(*args)))
        sources.append(compiled.__source__)
    return sources


def scale_by_len(x):   # (len_ is what converted code calls for len)
    n = shape_of(x)[0]
    return x / len_(x), x * n, x.T, len_(x), n


def int_extremes(a, b, x):
    n = len_(x)
    return np.minimum(a + n, b), np.maximum(a, b - n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8])
def test_len_and_shape_are_python_and_keep_promotion(dtype):
    x = np.arange(12, dtype=dtype).reshape(4, 3)
    for src in check(scale_by_len, x, shapes=[(None, 3)]):
        assert not any(k in src for k in KERNELS), src
        assert ".shape" in src and ".transpose((1, 0))" in src


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_min_max_are_python_with_numpy_scalars(dtype):
    x = np.zeros((5, 2))
    for a, b in [(1, 9), (9, 1), (7, 7)]:
        sources = check(int_extremes, dtype(a), dtype(b), x, shapes=[(), (), (None, 2)])
        for src in sources:
            assert "k_minimum" not in src and "k_maximum" not in src, src


def test_kernels_kept_where_python_would_differ():
    """Float min/max (NaN), a shape returned as an array, and an astype of a value that may
    be a 0-d array keep their kernels; results still equal the interpreter's."""
    def f(x, s):
        return np.minimum(s, len_(x) * np.float64(1)), shape_of(x), \
            np.astype(s, np.float32)
    for src in check(f, np.zeros((3, 2)), np.float64(np.nan), shapes=[(None, 2), ()]):
        assert "k_minimum" in src and "k_shape_of" in src and "k_astype(xp, arg1" in src


def train(dataset, w):
    for xb, yb in dataset:
        err = xb @ w - yb
        w = w - 0.01 * (xb.T @ err) / len(xb)
    return w


def test_dataset_loop_has_no_shape_kernels_and_matches_eager():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((70, 4)), rng.standard_normal(70)   # a short last batch
    ds = ag.data.Dataset.from_tensor_slices((x, y)).batch(16)
    f = ag.function(train)
    got = f(ds, np.zeros(4))
    np.testing.assert_allclose(got, train(ds, np.zeros(4)), rtol=1e-12)
    graph = f.get_concrete_function(ds, np.zeros(4))._graph_to_run()
    src = codegen.source_of(graph)
    assert not any(k in src for k in KERNELS), src
    exactly_same(list(codegen.compile_graph(graph)(x, y, np.zeros(4))),
                 list(interpreter.run(graph, [x, y, np.zeros(4)], None, check=True)),
                 types=False)


def _rnn(W, xs):
    h = xs[0]
    for t in ag.range(1, xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


@pytest.mark.parametrize("n", [1, 2, 6])
def test_stack_reads_are_list_lookups_with_the_interpreters_gradient(n):
    """A backward loop's reads of the forward's stored values (ad_stack_get) are
    `stack.items[i]`, and the gradient is the interpreter's, bit for bit."""
    rng = np.random.default_rng(n)
    W, xs = rng.standard_normal((3, 3)) / 2, rng.standard_normal((n, 2, 3))
    graph = ag.function(lambda W, xs: ag.value_and_grad(_rnn)(W, xs)) \
        .get_concrete_function(W, xs).graph
    opt = optimize.optimize(graph)
    source = codegen.source_of(opt)
    assert "k_ad_stack_get" not in source and ".items[" in source, source
    exactly_same(codegen.compile_graph(opt)(W, xs), interpreter.run(graph, [W, xs]),
                 types=False)
