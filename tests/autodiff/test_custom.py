"""ag.custom_gradient: the rule is traced into graph ops."""

import numpy as np

import autograph as ag


@ag.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1.0 - 1.0 / (1.0 + e))
    return np.log(1.0 + e), grad


@ag.custom_gradient
def scaled_identity(x):
    def grad(dy):
        return dy * 3.0     # a deliberately different gradient: it must be the one used
    return x * 1.0, grad


def test_custom_rule_replaces_the_primitive_rules():
    g = ag.grad(lambda x: np.sum(scaled_identity(x)))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [3.0, 3.0])


def test_custom_gradient_value_and_grad():
    x = np.array([0.0, 1.0, -2.0])
    value, g = ag.value_and_grad(lambda x: np.sum(log1pexp(x)))(x)
    np.testing.assert_allclose(value, np.sum(np.log1p(np.exp(x))))
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-x)))


def test_graph_holds_no_python_callback():
    vg = ag.value_and_grad(lambda x: np.sum(scaled_identity(x)))
    conc = vg.__wrapped_function__.get_concrete_function(np.ones(2))
    ops = {n.op for n in conc.graph.walk()}
    assert "custom_gradient" in ops and "multiply" in ops


def test_eager_tape_uses_the_custom_rule():
    with ag.GradientTape() as tape:
        x = tape.watch(np.array([1.0, 2.0]))
        y = np.sum(scaled_identity(x))
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 3.0])
