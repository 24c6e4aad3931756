"""The eager tape's gradient runs the transform's nodes on demand and updates its own
accumulators in place: a Python loop reading `xs[t]` costs one row per read (counted
here as full-size copies, which must not grow with the loop), and nested tapes that read
what an update overwrote still get exact values (compared with closed forms)."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import eager
from autograph.runtime.exec import interpreter

UPDATES = ("zeros", "setitem", "ufunc_at")


@pytest.fixture
def copies(monkeypatch):
    """How many full-size scatters and updates the eager tape ran by copying."""
    seen = []
    real = interpreter._eval

    def counting(node, values, device, check=False):
        if node.op in UPDATES:
            seen.append(node.op)
        return real(node, values, device, check)
    monkeypatch.setattr(interpreter, "_eval", counting)
    return seen


@pytest.mark.parametrize("n", [10, 200])
def test_indexed_reads_in_a_python_loop_copy_nothing_per_read(copies, n):
    data = np.random.default_rng(n).standard_normal((n, 8))
    xs = ag.Variable(data)
    with ag.GradientTape() as tape:
        total = 0.0
        for t in range(n):
            total = total + np.sum(xs[t] ** 2) * (t + 1)
    before = len(copies)
    grad = tape.gradient(total, xs)
    np.testing.assert_allclose(grad, 2 * data * np.arange(1, n + 1)[:, None])
    assert len(copies) - before <= 2   # the first scatter: the same for 10 and 200 reads


def test_gathers_and_repeated_rows_accumulate_like_add_at():
    data = np.random.default_rng(1).standard_normal((5, 3))
    rows = [0, 3, 3, 1, 0, 0]
    x0 = data.copy()
    with ag.GradientTape() as tape:
        x = tape.watch(x0)
        total = 0.0
        for k, r in enumerate(rows):
            total = total + np.sum(x[r] * (k + 1.0)) + np.sum(x[r:r + 2] ** 2)
    expected = np.zeros_like(data)
    for k, r in enumerate(rows):
        expected[r] += k + 1.0
        expected[r:r + 2] += 2 * data[r:r + 2]
    np.testing.assert_allclose(tape.gradient(total, x), expected)


def test_nested_tapes_read_values_an_update_wrote_over():
    # the inner gradient's accumulator is updated in place; the outer tape differentiates
    # through that chain: d/dx sum(w * 3 x^2) = 6 w x
    data = np.random.default_rng(2).standard_normal((6, 2))
    w = np.random.default_rng(3).standard_normal((6, 2))
    x = ag.Variable(data)
    with ag.GradientTape() as outer:
        with ag.GradientTape() as inner:
            total = 0.0
            for t in range(6):
                total = total + np.sum(x[t] ** 3)
        g = inner.gradient(total, x)
        np.testing.assert_allclose(g, 3 * data ** 2)
        loss = np.sum(g * w)
    np.testing.assert_allclose(outer.gradient(loss, x), 6 * w * data)


def test_persistent_tape_gives_the_same_gradient_twice():
    data = np.random.default_rng(4).standard_normal((7, 3))
    x = ag.Variable(data)
    with ag.GradientTape(persistent=True) as tape:
        total = 0.0
        for t in range(7):
            total = total + np.sum(np.sin(x[t]))
    first = tape.gradient(total, x)
    second = tape.gradient(total, x)
    np.testing.assert_allclose(first, np.cos(data))
    np.testing.assert_allclose(second, first)


def test_an_overwritten_value_is_recomputed_when_read_later():
    from autograph.runtime.numpy.updates import ufunc_at
    graph = eager.LiveGraph()
    with graph.as_default():
        base = graph.source(np.arange(1.0, 5.0))
    graph._deferred = set()   # as while `gradient` stages
    with graph.as_default():
        mid = ufunc_at(np.add, np.multiply(base[:3], 0.0), 0, 2.0)
        end = ufunc_at(np.add, mid, 1, 5.0)   # the only reader of mid: writes into it
        np.testing.assert_allclose(graph.live_value(end), [2.0, 5.0, 0.0])
        assert id(mid) not in graph.values
        late = np.multiply(mid, 10.0)         # a reader added afterwards
    np.testing.assert_allclose(graph.live_value(late), [20.0, 0.0, 0.0])
    np.testing.assert_allclose(graph.live_value(end), [2.0, 5.0, 0.0])
