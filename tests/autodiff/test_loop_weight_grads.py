"""autodiff/loop_weight_grads.py: a captured weight's gradient `sum_t X_t.T @ G_t` made
after the backward loop as one product over two TensorArrays, where that pays. Gradients
equal central differences in every mode and the per-step accumulation's; where the
pattern does not hold (the weight written in the loop, the product the other way round,
the weight used twice) nothing changes; work is counted (matmuls in the backward loop's
body and after it), not timed."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import loop_weight_grads
from tests.autodiff.modes import MODES, fd, fd2, grad, second


@pytest.fixture
def always(monkeypatch):
    """Deferred at every size (the rule `_pays` is about speed; these test the result).
    Counts the weights deferred."""
    monkeypatch.setattr(loop_weight_grads, "_pays", lambda *a: True)
    seen = {"deferred": 0}
    real = loop_weight_grads.factors

    def factors(ct, like):
        out = real(ct, like)
        seen["deferred"] += out is not None
        return out
    monkeypatch.setattr(loop_weight_grads, "factors", factors)
    return seen


def _never(monkeypatch):
    monkeypatch.setattr(loop_weight_grads, "_pays", lambda *a: False)


def rnn_for(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h * h)


def rnn_while_bias(W, xs, h0, b, n):
    h = h0
    t = 0
    while t < n:
        h = np.sin(h @ W + b) + xs[t]
        t += 1
    return np.sum(np.cos(h))


def rnn_two_inputs(W, xs, h0, U):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t] @ U)     # (W's is deferred; U's is not asked for)
    return np.sum(h)


def _data(n, batch, hidden, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((hidden, hidden)) / 2,
            0.5 * rng.standard_normal((n, batch, hidden)),
            0.1 * rng.standard_normal((batch, hidden)))


def _args(f, n, batch, hidden, seed=0):
    W, xs, h0 = _data(n, batch, hidden, seed)
    if f is rnn_while_bias:
        return W, (xs, h0, 0.1 * np.arange(hidden, dtype=float), np.int64(n))
    if f is rnn_two_inputs:
        return W, (xs, h0, np.eye(hidden) * 0.7 + 0.05)
    return W, (xs, h0)


CASES = [(rnn_for, 5, 1, 3), (rnn_for, 4, 2, 4), (rnn_while_bias, 4, 1, 3),
         (rnn_while_bias, 3, 3, 2), (rnn_two_inputs, 4, 1, 3), (rnn_for, 0, 1, 3)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, n, batch, hidden", CASES)
def test_gradients_equal_finite_differences(always, mode, f, n, batch, hidden):
    W, extra = _args(f, n, batch, hidden)
    np.testing.assert_allclose(grad(mode, f, W, *extra), fd(f, W, *extra),
                               rtol=1e-6, atol=1e-8)
    # (an eager tape runs the loop in Python: there is no backward loop to change)
    assert always["deferred"] >= (0 if mode == "eager" else 1)


@pytest.mark.parametrize("f, n, batch, hidden", CASES)
def test_equal_to_the_per_step_accumulation(monkeypatch, f, n, batch, hidden):
    W, extra = _args(f, n, batch, hidden, seed=2)
    _never(monkeypatch)
    before = ag.value_and_grad(f)(W, *extra)
    monkeypatch.setattr(loop_weight_grads, "_pays", lambda *a: True)
    after = ag.value_and_grad(f)(W, *extra)
    assert before[0] == after[0]
    np.testing.assert_allclose(after[1], before[1], rtol=1e-12, atol=1e-15)


def _matmuls(vg, *args):
    """(matmuls in the backward loops' bodies, matmuls at the top level) of vg's
    optimised graph."""
    graph = vg.__wrapped_function__.get_concrete_function(*args)._graph_to_run()
    loops = [nd for nd in graph.nodes if nd.op == "while_loop" and "grad" in nd.name]
    inside = sum(1 for lp in loops for nd in lp.attrs["body_graph"].walk()
                 if nd.op == "matmul")
    return inside, sum(1 for nd in graph.nodes if nd.op == "matmul")


def test_work_moves_out_of_the_backward_loop(monkeypatch):
    """Counted: the backward step does one product (the state's cotangent) instead of
    two, and one product after the loop gives the weight's; batch 1 is deferred by the
    rule itself, batch 32 of 64 (benchmark case 11, where it does not pay) is not."""
    W, xs, h0 = _data(6, 1, 4)
    _never(monkeypatch)
    assert _matmuls(ag.value_and_grad(rnn_for), W, xs, h0) == (2, 0)
    monkeypatch.undo()
    assert _matmuls(ag.value_and_grad(rnn_for), W, xs, h0) == (1, 1)
    W, xs, h0 = _data(3, 32, 64)
    assert _matmuls(ag.value_and_grad(rnn_for), W, xs, h0) == (2, 0)
    W, xs, h0 = _data(3, 4, 256)       # a 512 KiB accumulator, batch 4: deferred
    assert _matmuls(ag.value_and_grad(rnn_for), W, xs, h0) == (1, 1)
    W, xs, h0 = _data(3, 8, 128)       # 128 KiB: the per-step products stay
    assert _matmuls(ag.value_and_grad(rnn_for), W, xs, h0) == (2, 0)


def weight_written(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
        W = W * 0.9                     # a loop variable, not a capture
    return np.sum(h)


def product_swapped(W, xs, h0):
    h = np.transpose(h0)                # (H, B): the cotangent of W is G @ X.T
    for t in ag.range(xs.shape[0]):
        h = np.tanh(W @ h + np.transpose(xs[t]))
    return np.sum(h)


def used_twice(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t]) @ W   # two terms in W's cotangent
    return np.sum(h)


@pytest.mark.parametrize("f, inside", [(weight_written, 2), (product_swapped, 2),
                                       (used_twice, 4)])
def test_where_the_pattern_does_not_hold(always, f, inside):
    W, xs, h0 = _data(4, 1, 3, seed=4)
    vg = ag.value_and_grad(f)
    assert _matmuls(vg, W, xs, h0) == (inside, 0)
    assert always["deferred"] == 0
    for mode in MODES:
        np.testing.assert_allclose(grad(mode, f, W, xs, h0), fd(f, W, xs, h0),
                                   rtol=1e-6, atol=1e-8)


def test_second_gradients(always):
    xs, h0 = _data(3, 1, 2, seed=7)[1:]

    x = xs[0]

    def f(W):
        h = h0
        for _ in ag.range(3):
            h = np.tanh(h @ W + x)
        return np.sum(h * h)
    W = np.array([[0.3, -0.2], [0.1, 0.4]])
    want = fd2(f, W)

    @ag.function
    def persistent(W):
        with ag.GradientTape(persistent=True) as outer:
            outer.watch(W)
            with ag.GradientTape() as inner:
                inner.watch(W)
                y = f(W)
            s = np.sum(inner.gradient(y, W))
        return outer.gradient(s, W), outer.gradient(s, W)
    for got in persistent(W):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for mode in MODES:
        np.testing.assert_allclose(second(mode, f, W), want, rtol=1e-5, atol=1e-6)
    assert always["deferred"] >= 2


def test_two_weights_deferred(always):
    W, (xs, h0, U) = _args(rnn_two_inputs, 4, 1, 3, seed=9)
    gW, gU = ag.grad(rnn_two_inputs, argnums=(0, 3))(W, xs, h0, U)
    assert always["deferred"] == 2
    np.testing.assert_allclose(gW, fd(rnn_two_inputs, W, xs, h0, U), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gU, fd(lambda U, W, xs, h0: rnn_two_inputs(W, xs, h0, U),
                                      U, W, xs, h0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("batch", [1, 3])
def test_a_variable_weight_inside_a_function(always, batch):
    """TF's idiom: the weight an ag.Variable, the tape inside ag.function; its gradient
    is deferred the same way (also with the loop reading it once before, loop_reads.py)."""
    W, xs, h0 = _data(5, batch, 3, seed=11)
    var = ag.Variable(W)

    @ag.function
    def step(xs, h0):
        with ag.GradientTape() as tape:
            value = rnn_for(var, xs, h0)
        return tape.gradient(value, var)
    got = step(xs, h0)
    assert always["deferred"] == 1
    np.testing.assert_allclose(got, fd(rnn_for, W, xs, h0), rtol=1e-6, atol=1e-8)


def nested(W, xs, h0):
    total = 0.0
    for k in ag.range(3):                # the inner backward loop runs per outer step
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t] * (1.0 + 0.1 * k))
        total = total + np.sum(h * h)
    return total


def in_a_branch(W, xs, h0):
    h = h0
    if np.sum(h0) > -10.0:
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
    return np.sum(h)


@pytest.mark.parametrize("f", [nested, in_a_branch])
@pytest.mark.parametrize("mode", ("traced", "grad"))
def test_loops_in_loops_and_branches(always, f, mode):
    W, xs, h0 = _data(4, 1, 3, seed=12)
    np.testing.assert_allclose(grad(mode, f, W, xs, h0), fd(f, W, xs, h0),
                               rtol=1e-6, atol=1e-8)
    assert always["deferred"] >= 1


def test_vmap_of_the_gradient(always):
    W, xs, h0 = _data(4, 1, 3, seed=13)
    xs = np.stack([xs, 2 * xs, -xs])
    got = ag.vmap(ag.grad(rnn_for), in_axes=(None, 0, None))(W, xs, h0)
    for i in range(3):
        np.testing.assert_allclose(got[i], fd(rnn_for, W, xs[i], h0), rtol=1e-6, atol=1e-8)
    # (ag.vmap differentiates the batched loop: its factors are 3-D, not matched, so the
    # per-step accumulation stays; the result is what counts here)
    assert always["deferred"] == 0
