"""vmap under jit_compile=True: a loop or `if` whose condition differs from lane to lane is
one loop over the lanes, each running its own (batching/lane_loops.py).

The form is checked where it is cheap: traced as a jit_compile trace traces it
(`tracing_for_native()`), run by the interpreter and codegen, against the per-element
results, with the body's executions counted. One test compiles it with Numba."""


import numpy as np
import pytest

import autograph as ag
from autograph.operators import jit_ranges
from autograph.runtime.exec import interpreter
from benchmarks.differential import vmaprun
from benchmarks.kernel_counts import collatz, counting


def native_form(fn, *args, **vmap_kwargs):
    """The concrete function jit_compile=True would compile for ag.vmap(fn)(*args)."""
    traced = ag.function(ag.vmap(fn, **vmap_kwargs))
    with jit_ranges.tracing_for_native():
        return traced.get_concrete_function(*args)


def ops_of(graph):
    return {node.op for node in graph.walk()}


def test_collatz_lane_loop_equals_the_elements_and_runs_exactly_their_trip_counts():
    starts = np.arange(1, 61, dtype=np.int64)
    trips = np.array([collatz(int(n)) for n in starts])
    conc = native_form(collatz, starts)
    assert "nonzero" not in ops_of(conc.graph)      # no compaction, no mask
    np.testing.assert_array_equal(conc(starts), trips)
    with counting("remainder") as seen:             # once per step of the body
        (out,) = interpreter.run(conc.graph, [starts])
    np.testing.assert_array_equal(out, trips)
    assert sum(seen) == trips.sum()                 # exactly, each lane alone (size 1)
    assert set(seen) == {1}


def test_the_2947_pattern_terminates_per_lane():
    def f(x):
        total = 0
        while x > 0:
            k = x
            while k != 0:       # never ends on a finished lane's x (odd after x - 2 < 0)
                k = k - 2
                total += 1
            x = x - 2
        return total
    xs = np.arange(0, 24, 2, dtype=np.int64)
    np.testing.assert_array_equal(native_form(f, xs)(xs), [f(int(x)) for x in xs])


def test_per_lane_ranges_captures_vectors_and_breaks():
    def f(x, n, w, v):
        acc = np.zeros(3)
        for i in range(n):                  # a per-lane trip count
            acc = acc * 0.5 + x * w + v     # w unbatched, v batched: captured per lane
            if np.sum(acc) > 40.0:
                break
        return acc, n * 2
    rng = np.random.default_rng(1)
    x, n = rng.standard_normal((9, 3)), np.arange(9, dtype=np.int64) % 5 * 3
    w, v = rng.standard_normal(3), rng.standard_normal((9, 3)) * 10
    got = native_form(f, x, n, w, v, in_axes=(0, 0, None, 0))(x, n, w, v)
    want = [f(x[k], int(n[k]), w, v[k]) for k in range(9)]
    np.testing.assert_allclose(got[0], np.stack([a for a, _ in want]), rtol=1e-12)
    np.testing.assert_array_equal(got[1], [b for _, b in want])


def test_a_per_lane_if_runs_one_branch_per_lane():
    def f(x, y):
        if x > 0:
            r = np.sqrt(x) + y      # never runs on a lane with x <= 0
        else:
            r = -x * y
        return r
    xs, ys = np.linspace(-2, 2, 11), np.arange(11.0)
    conc = native_form(f, xs, ys)
    assert "nonzero" not in ops_of(conc.graph)
    with np.errstate(invalid="raise"):
        got = conc(xs, ys)
    np.testing.assert_allclose(got, [f(a, b) for a, b in zip(xs, ys)], rtol=1e-12)


def test_a_batch_size_known_only_when_it_runs():
    def f(x, n):
        if x > 0:
            x = np.sqrt(x)
        while n > 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            x = x + 0.5
        return x
    traced = ag.function(ag.vmap(f), input_signature=[
        ag.TensorSpec((None,), np.float64), ag.TensorSpec((None,), np.int64)])
    with jit_ranges.tracing_for_native():
        conc = traced.get_concrete_function()
    assert "nonzero" not in ops_of(conc.graph)
    xs, ns = np.linspace(-2, 2, 7), np.arange(1, 8, dtype=np.int64)
    np.testing.assert_allclose(conc(xs, ns), [f(a, int(b)) for a, b in zip(xs, ns)],
                               rtol=1e-12)
    assert conc(xs[:0], ns[:0]).shape == (0,)


@pytest.mark.parametrize("index", range(4))
def test_generated_programs_in_the_native_form_equal_the_elements(index):
    outcome, detail = vmaprun.run_one("ci-native", index, native_form=True)
    assert outcome in ("pass", "both raise", "refused"), (outcome, detail)
    if outcome == "refused":
        assert "ragged" in detail or "one value" in detail, detail


def test_jit_compile_of_a_vmapped_collatz_is_native_and_exact():
    pytest.importorskip("numba")
    starts = np.arange(1, 500, dtype=np.int64)
    h = ag.function(ag.vmap(collatz), jit_compile=True)
    np.testing.assert_array_equal(h(starts), [collatz(int(n)) for n in starts])


def test_the_gradient_of_the_lane_loop_form_equals_the_compacted_forms():
    # (run by codegen: native code has no lowering of the gradient's `index_get` yet)
    def f(x):
        while x < 10.0:
            x = x * 1.5 + np.sin(x)
        return x

    def loss(x):
        return np.sum(ag.vmap(f)(x) ** 2)
    xs = np.linspace(0.5, 3, 6)
    want = ag.grad(loss)(xs)
    traced = ag.function(lambda x: ag.grad(loss)(x))
    with jit_ranges.tracing_for_native():
        conc = traced.get_concrete_function(xs)
    assert "nonzero" not in ops_of(conc.graph)
    np.testing.assert_allclose(conc(xs), want, rtol=1e-12)
    eps = 1e-6     # and both against central differences, one lane at a time
    for k in range(len(xs)):
        e = np.zeros_like(xs)
        e[k] = eps
        numeric = (loss(xs + e) - loss(xs - e)) / (2 * eps)
        np.testing.assert_allclose(want[k], numeric, rtol=1e-5)
