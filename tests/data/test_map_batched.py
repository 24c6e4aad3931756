"""`map` before `batch` in a traced loop: one call of the map function per batch when it is
proven row-independent (autograph/data/batching.py), per element otherwise.

Every case compares the traced loop with batching on, the traced loop with it off (the
per-element path) and eager iteration (which always runs the function per element), and
counts the runs of the map function's graph with a counting primitive.
"""

import collections

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset, batching
from autograph.runtime.ir import primitives
from autograph.runtime.ir.tensor import Tensor

RUNS = collections.Counter()


def _count_kernel(xp, x):
    RUNS["map"] += 1
    return x


primitives.register("test_count_runs", lambda x: [(x.dtype, x.shape, x.weak)], _count_kernel,
                    doc="identity that counts its runs (tests)")
primitives.nondifferentiable("test_count_runs")
batching.register_rowwise("test_count_runs")


def counted(v):
    """v, counting one run of the map function's graph (eagerly: nothing to count)."""
    if isinstance(v, Tensor):
        return primitives.bind1("test_count_runs", [v])
    return v


rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 8)).astype(np.float32)
Y = rng.integers(0, 10, 1000)
MU, SD = X.mean(0), X.std(0) + 0.5


def collect(ds, out):
    """Every batch's rows written in order into `out` (exact: no arithmetic on them)."""
    lo = np.int64(0)
    for b in ds:
        out[lo:lo + len(b)] = b
        lo = lo + len(b)
    return out, lo


def _rows(make, n, shape=(8,), dtype=np.float32):
    # (a new Function each time: the switch below is not part of a trace's key)
    return ag.function(collect)(make(), np.zeros((n,) + shape, dtype))


def _eager(make):
    return np.concatenate([np.asarray(b) for b in make()])


def _both(make, n, **kw):
    """(batched graph, per-element graph, eager), with the runs each traced call made."""
    RUNS.clear()
    got, k = _rows(make, n, **kw)
    runs_on = RUNS["map"]
    batching.enabled = False
    try:
        RUNS.clear()
        ref, k2 = _rows(make, n, **kw)
        runs_off = RUNS["map"]
    finally:
        batching.enabled = True
    eager = _eager(make)
    assert k == k2 == len(eager)
    return got[:k], ref[:k], eager, runs_on, runs_off


def normalise(v):
    return (counted(v) - MU) / SD


@pytest.mark.parametrize("drop", [False, True])
def test_the_workload_runs_once_per_batch_and_equals_the_per_element_path(drop):
    make = lambda: Dataset.from_tensor_slices(X).shuffle(1000, seed=3).map(normalise) \
        .batch(128, drop_remainder=drop)   # noqa: E731
    got, ref, eager, on, off = _both(make, 1000)
    assert np.array_equal(got, ref) and np.array_equal(got, eager)   # bitwise, same order
    assert got.shape[0] == (896 if drop else 1000)
    assert on == (7 if drop else 8)                # one run per batch (the last is partial)
    assert off == got.shape[0]                      # one per element before
    assert not np.array_equal(got, (X[:len(got)] - MU) / SD)   # (it was shuffled)


def test_unshuffled_slices_and_other_indexed_stages_batch_too():
    for make, n in [
            (lambda: Dataset.from_tensor_slices(X).map(normalise).batch(100), 1000),
            (lambda: Dataset.from_tensor_slices(X).map(normalise).shuffle(50, seed=1)
             .batch(64), 1000),
            (lambda: Dataset.from_tensor_slices(X).skip(5).map(normalise).take(300)
             .shard(2, 1).batch(32), 150),
            (lambda: Dataset.from_tensor_slices(X).map(normalise).map(lambda v: v * 2.0)
             .batch(300), 1000)]:
        got, ref, eager, on, off = _both(make, n)
        assert np.array_equal(got, ref) and np.array_equal(got, eager)
        assert off == n and on < n / 10


def test_filter_between_map_and_batch_keeps_the_per_element_path():
    make = lambda: Dataset.from_tensor_slices(X).map(normalise) \
        .filter(lambda v: v[0] > 0).batch(16)   # noqa: E731
    got, ref, eager, on, off = _both(make, 1000)
    assert np.array_equal(got, ref) and np.array_equal(got, eager)
    assert on == off >= 1000   # (per element; seeking a filter reads an element again)


def test_tuple_and_dict_elements_and_results():
    make = lambda: Dataset.from_tensor_slices((X, Y)).shuffle(1000, seed=0) \
        .map(lambda x, y: {"x": counted(x) * 2.0 + 1.0, "y": y + 1, "z": np.sqrt(np.abs(x))}) \
        .batch(100)   # noqa: E731

    @ag.function
    def parts(ds):
        xs, ys, zs = np.zeros((1000, 8), np.float32), np.zeros(1000, np.int64), \
            np.zeros((1000, 8), np.float32)
        lo = np.int64(0)
        for b in ds:
            hi = lo + len(b["y"])
            xs[lo:hi] = b["x"]
            ys[lo:hi] = b["y"]
            zs[lo:hi] = b["z"]
            lo = hi
        return xs, ys, zs

    RUNS.clear()
    got = parts(make())
    assert RUNS["map"] == 10
    eager = [np.concatenate([b[k] for b in make()]) for k in "xyz"]
    for a, b in zip(got, eager):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_scalar_elements_of_a_range():
    make = lambda: Dataset.range(100).map(lambda i: counted(i) * 3 + 1).batch(7)  # noqa: E731
    got, ref, eager, on, off = _both(make, 100, shape=(), dtype=np.int64)
    assert np.array_equal(got, eager) and np.array_equal(ref, eager)
    assert on == 15 and off == 100


def test_two_dimensional_elements_reduced_over_their_own_axes():
    x2 = rng.standard_normal((300, 4, 6))
    fn = lambda v: counted(v) - v.max(axis=-2, keepdims=True) + v.sum(axis=(-2, -1), keepdims=True)  # noqa
    make = lambda: Dataset.from_tensor_slices(x2).shuffle(300, seed=5).map(fn).batch(32)  # noqa
    got, ref, eager, on, off = _both(make, 300, shape=(4, 6), dtype=np.float64)
    assert np.array_equal(got, ref) and np.array_equal(got, eager)
    assert on == 10 and off == 300


W = rng.standard_normal((8, 3)).astype(np.float32)

# Row-independent functions: batched, and bitwise the per-element results (matmul: close).
ROWWISE = {
    "divide by a constant": lambda v: counted(v) / 255.0,
    "where": lambda v: np.where(counted(v) > 0, v, 0.0),
    "clip": lambda v: np.clip(counted(v), -0.5, 0.5),
    "astype": lambda v: counted(v).astype(np.float64) * 2,
    "reduce the element's last axis": lambda v: counted(v) - v.max(-1, keepdims=True),
    "mean of the element's axes, counted from the end": lambda v: counted(v) - v.mean(axis=-1, keepdims=True),
    "comparison and logic": lambda v: np.logical_and(counted(v) > 0, v < 1).astype(np.float32),
    "tanh and exp": lambda v: np.tanh(counted(v)) + np.exp(-v * v),
}


@pytest.mark.parametrize("name", sorted(ROWWISE))
def test_row_independent_functions_run_per_batch(name):
    fn = ROWWISE[name]
    make = lambda: Dataset.from_tensor_slices(X).shuffle(1000, seed=2).map(fn).batch(64)  # noqa
    dtype = np.asarray(fn(X[0])).dtype
    got, ref, eager, on, off = _both(make, 1000, dtype=dtype)
    assert np.array_equal(got, ref) and np.array_equal(got, eager), name
    assert on == 16 and off == 1000


def test_matmul_by_a_constant_runs_per_batch_close_to_per_element():
    make = lambda: Dataset.from_tensor_slices(X).map(lambda v: counted(v) @ W).batch(64)  # noqa
    got, ref, eager, on, off = _both(make, 1000, shape=(3,))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-5)
    assert on == 16 and off == 1000


def _sorted_axis0(v):
    return np.sort(v, axis=0)


def _shape_branch(v):
    if v.ndim == 1:
        return v * 2.0
    return v * 3.0


def _value_branch(v):
    if np.sum(v) > 0:
        return v
    return -v


VAR = ag.Variable(np.float32(1.5))

# Functions that mix rows or depend on the shape: the per-element path, same answers.
MIXING = {
    "sum over axis 0": lambda v: counted(v) - v.sum(0),
    "mean of everything": lambda v: counted(v) - np.mean(v),
    "norm of everything": lambda v: counted(v) / np.linalg.norm(v),
    "sort along axis 0": lambda v: _sorted_axis0(counted(v)),
    "cumsum flattened": lambda v: np.cumsum(counted(v)),
    "first entry": lambda v: counted(v) * v[0],
    "len": lambda v: counted(v) * len(v),
    "shape[0]": lambda v: counted(v) * v.shape[0],
    "ndim branch": lambda v: _shape_branch(counted(v)),
    "tensor branch": lambda v: _value_branch(counted(v)),
    "transpose": lambda v: counted(v).T,
    "reshape": lambda v: np.reshape(counted(v), (2, 4)).reshape(8),
    "random at trace time": lambda v: counted(v) + np.float32(np.random.default_rng().random()),
    "constant result": lambda v: np.ones(8, np.float32),
    "a variable": lambda v: counted(v) * VAR,
    "matrix on the left": lambda v: (W.T @ counted(v)).sum() * v,
    "dot with itself": lambda v: counted(v) * (v @ v),
    "a per-row scalar broadcast (no keepdims)": lambda v: counted(v) - v.mean(axis=-1),
    "the row broadcast against a matrix": lambda v: (counted(v) * np.ones((3, 8))).sum(0),
    "outer product": lambda v: np.outer(counted(v), v).sum(1),
}


@pytest.mark.parametrize("name", sorted(MIXING))
def test_functions_that_mix_rows_keep_the_per_element_path(name):
    fn = MIXING[name]
    spec = Dataset.from_tensor_slices(X).element_spec
    assert batching.plan(fn, spec) is None, name
    if name == "random at trace time":   # (each trace draws anew: no reference to compare)
        return
    make = lambda: Dataset.from_tensor_slices(X[:200]).map(fn).batch(64)  # noqa: E731
    got, ref, eager, on, off = _both(make, 200)
    np.testing.assert_allclose(got, eager, rtol=1e-6)
    assert np.array_equal(got, ref)
    assert on == off


def test_the_batched_plan_is_the_function_traced_on_the_batched_spec():
    spec = Dataset.from_tensor_slices(X).element_spec
    plan = batching.plan(normalise, spec)
    assert plan is not None
    assert [n.op for n in plan.graph.nodes if n.op != "Const"] == \
        ["Placeholder", "test_count_runs", "subtract", "divide"]
    assert plan.inputs[0].shape == (None, 8)


# -- random compositions: the decision and the answers, against eager per-element runs --------

M8 = rng.standard_normal((8, 8))
ROW_STEPS = [lambda v: v * 2.0, lambda v: v + MU, np.tanh, lambda v: np.where(v > 0, v, -v),
             lambda v: v - v.max(-1, keepdims=True), lambda v: np.clip(v, -1.0, 1.0),
             lambda v: v / (np.abs(v).sum(-1, keepdims=True) + 1.0), lambda v: v @ M8 * 0.1]
MIX_STEPS = [lambda v: v - v.sum(0), lambda v: v - np.mean(v), lambda v: np.sort(v, axis=0),
             lambda v: v * v[0], lambda v: np.cumsum(v), lambda v: v[::-1],
             lambda v: np.roll(v, 1), lambda v: v - v.sum(0, keepdims=True),
             lambda v: v * np.max(v), lambda v: np.concatenate([v[4:], v[:4]])]


def _program(seed):
    r = np.random.default_rng(seed)
    steps = [(ROW_STEPS[i], True) for i in r.integers(0, len(ROW_STEPS), r.integers(1, 4))]
    if r.random() < 0.5:
        steps.insert(int(r.integers(0, len(steps) + 1)),
                     (MIX_STEPS[int(r.integers(0, len(MIX_STEPS)))], False))

    def fn(v):
        v = counted(v)
        for step, _ in steps:
            v = step(v)
        return v
    return fn, all(row for _, row in steps)


@pytest.mark.parametrize("seed", range(24))
def test_random_compositions_batch_exactly_when_every_step_is_row_wise(seed):
    fn, rowwise = _program(seed)
    x = X.astype(np.float64)[:300]
    assert (batching.plan(fn, Dataset.from_tensor_slices(x).element_spec) is not None) \
        == rowwise
    make = lambda: Dataset.from_tensor_slices(x).shuffle(300, seed=seed).map(fn).batch(64)  # noqa
    got, ref, eager, on, off = _both(make, 300, dtype=np.float64)
    np.testing.assert_allclose(got, eager, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ref, eager, rtol=1e-12, atol=1e-12)
    assert on == (5 if rowwise else 300) and off == 300


def test_a_stack_of_matrices_on_the_right_keeps_the_per_element_path():
    x2, w3 = rng.standard_normal((40, 4, 8)), rng.standard_normal((4, 8, 3))
    spec = Dataset.from_tensor_slices(x2).element_spec
    assert batching.plan(lambda v: v @ w3, spec) is None      # (it would pair rows with w3's)
    assert batching.plan(lambda v: v @ w3[0], spec) is not None


def test_without_the_proof_the_counter_examples_give_wrong_answers(monkeypatch):
    """The checks are what keeps these right: batching them blindly changes the answers."""
    monkeypatch.setattr(batching, "_same_program", lambda e, b: True)
    for name in ("sum over axis 0", "mean of everything", "first entry", "sort along axis 0"):
        fn = MIXING[name]
        make = lambda: Dataset.from_tensor_slices(X[:200]).map(fn).batch(64)  # noqa: E731
        got, _ = _rows(make, 200)
        assert not np.allclose(got, _eager(make)), name


def test_a_function_reading_tensors_of_the_enclosing_trace_runs_per_batch():
    def epoch(x, w, c):
        ds = Dataset.from_tensor_slices(x).map(lambda v: counted(v) * w + c).batch(3)
        out = np.zeros(x.shape)
        lo = np.int64(0)
        for b in ds:
            out[lo:lo + len(b)] = b
            lo = lo + len(b)
        return out

    x = rng.standard_normal((10, 4))
    f = ag.function(epoch)
    for w, c in [(np.float64(2.0), np.ones(4)), (np.float64(-0.5), np.arange(4.0))]:
        RUNS.clear()
        got = f(x, w, c)
        assert RUNS["map"] == 4        # ceil(10 / 3) batches: the captures are per batch too
        assert np.array_equal(got, x * w + c)
    assert f.experimental_get_tracing_count() == 1
