"""autodiff/loop_reads.py: a Variable a loop reads and nothing in it writes is read once
before the loop for the backward pass (no per-step stack of it). Where it applies and where
not (a loop assigning a Variable, a loop nested in another); gradients equal central
differences for 0, 1 and many steps, with the tape eagerly, inside ag.function, and a
second gradient of a persistent tape; a Variable assigned after the loop does not change
the gradient (the value read before the loop is the one the loop used)."""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff.modes import fd


def rnn(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def _data(n, batch=2, hidden=3):
    rng = np.random.default_rng(n + 10)
    return (rng.standard_normal((hidden, hidden)) / 2,
            0.5 * rng.standard_normal((n, batch, hidden)),
            0.1 * rng.standard_normal((batch, hidden)))


def _stacked_reads(fn, *args):
    """How many values the forward loops of fn's optimised graph push per step that are
    Variable reads (an `ad_stack_push` of a `read_variable`'s output)."""
    graph = fn.get_concrete_function(*args)._graph_to_run()
    return sum(1 for nd in graph.walk() if nd.op == "ad_stack_push"
               and nd.inputs[2].node.op == "read_variable")


def _befores(fn, *args):
    return sum(1 for nd in fn.get_concrete_function(*args).graph.nodes
               if nd.op == "read_variable" and nd.name.endswith("_before_loop"))


def _traced_tape_gradient(loss, var):
    """An ag.function: loss(xs, h0) on a tape, and its gradient with respect to `var`."""
    @ag.function
    def step(xs, h0):
        with ag.GradientTape() as tape:
            value = loss(xs, h0)
        return tape.gradient(value, var)
    return step


@pytest.mark.parametrize("n", [0, 1, 6])
@pytest.mark.parametrize("traced", [False, True])
def test_gradient_of_a_variable_read_in_a_loop(n, traced):
    W, xs, h0 = _data(n)
    var = ag.Variable(W, name="W")

    def step(xs, h0):
        with ag.GradientTape() as tape:
            value = rnn(var, xs, h0)
        return value, tape.gradient(value, var, unconnected_gradients="zero")

    fn = ag.function(step) if traced else step
    value, grad = fn(xs, h0)
    np.testing.assert_allclose(value, rnn(W, xs, h0), rtol=1e-12)
    np.testing.assert_allclose(grad, fd(rnn, W, xs, h0), rtol=1e-6, atol=1e-9)
    if traced:
        assert _befores(fn, xs, h0) == 1 and _stacked_reads(fn, xs, h0) == 0


def test_a_loop_assigning_a_variable_keeps_its_reads_per_step():
    W, xs, h0 = _data(4)
    var, count = ag.Variable(W, name="W"), ag.Variable(0.0, name="count")

    def loss(xs, h0):
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ var + xs[t])
            count.assign_add(1.0)
        return np.sum(h)

    step = _traced_tape_gradient(loss, var)

    grad = step(xs, h0)
    np.testing.assert_allclose(grad, fd(rnn, W, xs, h0), rtol=1e-6, atol=1e-9)
    assert _befores(step, xs, h0) == 0 and _stacked_reads(step, xs, h0) == 1


def test_a_variable_assigned_after_the_loop_does_not_change_the_gradient():
    W, xs, h0 = _data(5)
    var = ag.Variable(W, name="W")

    @ag.function
    def step(xs, h0):
        with ag.GradientTape() as tape:
            value = rnn(var, xs, h0)
        var.assign(var * 3.0)          # after the loop, before the backward pass
        return tape.gradient(value, var)

    grad = step(xs, h0)
    np.testing.assert_allclose(grad, fd(rnn, W, xs, h0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(var.numpy(), 3.0 * W)


def test_a_loop_inside_a_loop_keeps_its_reads_per_step():
    W, xs, h0 = _data(3)
    var = ag.Variable(W, name="W")

    def loss(xs, h0):
        h = h0
        for r in ag.range(2):
            for t in ag.range(xs.shape[0]):
                h = np.tanh(h @ var + xs[t])
        return np.sum(h)

    def reference(W, xs, h0):
        h = h0
        for r in range(2):
            for t in range(xs.shape[0]):
                h = np.tanh(h @ W + xs[t])
        return np.sum(h)

    step = _traced_tape_gradient(loss, var)

    np.testing.assert_allclose(step(xs, h0), fd(reference, W, xs, h0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_second_gradient_of_a_persistent_tape(n):
    W, xs, h0 = _data(n)
    var = ag.Variable(W, name="W")

    @ag.function
    def rows(xs, h0):
        with ag.GradientTape(persistent=True) as outer:
            with ag.GradientTape() as inner:
                value = rnn(var, xs, h0)
            s = np.sum(inner.gradient(value, var, unconnected_gradients="zero"))
        return outer.gradient(s, var, unconnected_gradients="zero")

    def sum_of_grad(w):
        return np.sum(fd(rnn, w, xs, h0, h=1e-5))
    np.testing.assert_allclose(rows(xs, h0), fd(sum_of_grad, W, h=1e-3), rtol=1e-4, atol=1e-6)
