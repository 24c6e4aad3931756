"""TensorFlow's while_v2 closed-form loop gradients, exactly; graph size independent of the
trip count; only what the rules read is stored; errors name the primitive and line."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff.transform import NonDifferentiableError
from autograph.runtime.ir import primitives


def square_until_8(x):
    v = x
    while v < 8.0:
        v = v * v
    return v


def multiply_until_45(x):
    v, w = x, 3.0
    while v < 45.0:
        v, w = v * w, w
    return v


def test_square_until_8():
    value, g = ag.value_and_grad(square_until_8)(np.float64(2.0))
    assert (value, g) == (16.0, 32.0)


def test_two_loop_vars():
    value, g = ag.value_and_grad(multiply_until_45)(np.float64(5.0))
    assert (value, g) == (45.0, 9.0)


def test_maximum_iterations_always_true():
    def f(x):
        return ag.while_loop(lambda v: True, lambda v: v * v, [x], maximum_iterations=2)[0]
    value, g = ag.value_and_grad(f)(np.float64(2.0))
    assert (value, g) == (16.0, 32.0)


v_twice = ag.Variable(1.0)


@ag.function
def variable_twice(x):
    with ag.GradientTape() as tape:
        y = x
        i = 0
        while i < 1:
            y = y * v_twice + v_twice
            i += 1
    return tape.gradient(y, v_twice)


def test_variable_used_twice_in_loop_body():
    assert variable_twice(np.float64(3.0)) == 4.0


def sin_loop(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * x
    return y


def _grad_graph(n):
    vg = ag.value_and_grad(sin_loop)
    value, g = vg(np.float64(0.5), np.int64(n))
    conc = vg.__wrapped_function__.get_concrete_function(np.float64(0.5), np.int64(n))
    return conc.graph, g


def test_gradient_graph_size_does_not_depend_on_trip_count():
    g10, _ = _grad_graph(10)
    g100k, grad = _grad_graph(100_000)
    assert sum(1 for _ in g10.walk()) == sum(1 for _ in g100k.walk())
    assert np.isfinite(grad)


def test_only_read_values_are_stored():
    """y = sin(y) * x: the rules read y (for cos) and sin(y) (for the product rule), never
    x (a capture) or the constant: two stacks."""
    graph, _ = _grad_graph(10)
    stacks = [n for n in graph.walk() if n.op == "ad_stack_new"]
    pushes = [n for n in graph.walk() if n.op == "ad_stack_push"]
    assert len(stacks) == len(pushes) == 2


def test_stacks_preallocated_with_maximum_iterations():
    def f(x):
        return ag.while_loop(lambda v: v < 1e9, lambda v: np.sin(v) * x, [x],
                             maximum_iterations=50)[0]
    vg = ag.value_and_grad(f)
    vg(np.float64(0.5))
    graph = vg.__wrapped_function__.get_concrete_function(np.float64(0.5)).graph
    stacks = [n for n in graph.walk() if n.op == "ad_stack_new"]
    assert stacks and all(len(n.inputs) == 1 for n in stacks)


def test_data_dependent_trip_count_grows_stacks():
    def f(x):
        y = x
        while y < 100.0:
            y = y * 1.5
        return y
    value, g = ag.value_and_grad(f)(np.float64(2.0))
    n = int(np.ceil(np.log(50) / np.log(1.5)))
    assert np.isclose(value, 2.0 * 1.5 ** n) and np.isclose(g, 1.5 ** n)


def test_differentiating_integer_input_names_it():
    with pytest.raises(NonDifferentiableError, match="int64"):
        ag.grad(lambda n: n * 2.0)(np.int64(3))


primitives.register("test_no_rule", lambda x: [(x.dtype, x.shape, False)],
                    kernel=lambda xp, x: x)


def test_missing_rule_names_primitive_and_line():
    def f(x):
        y = x
        while y < 3.0:
            y = primitives.bind1("test_no_rule", [y]) * 2.0
        return y
    with pytest.raises(NonDifferentiableError,
                       match=r"(?s)'test_no_rule'.*test_loops\.py:\d+ \(`y = primitives"):
        ag.grad(f)(np.float64(1.0))


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0, 4.5])
def test_early_return_second_order_whichever_iteration_returns(scale):
    # the loop returns early at iteration 3..8, or never (scale 0.5: the Hessian is zero and
    # does not depend on x: eager gives None by default, like TF, zeros when asked)
    from tests.autodiff import samples
    f = samples.early_return
    x0 = np.array([0.3, 0.2, 0.4]) * scale / 0.9
    d, u = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 0.25])
    g = ag.grad(f)
    hvp = ag.grad(lambda x: np.sum(g(x) * d))(x0)
    eps = 1e-5
    expected = (np.dot(g(x0 + eps * u), d) - np.dot(g(x0 - eps * u), d)) / (2 * eps)
    np.testing.assert_allclose(np.dot(hvp, u), expected, rtol=1e-6, atol=1e-8)
    with ag.GradientTape() as outer:
        x = outer.watch(x0)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        gd = np.sum(inner.gradient(y, x) * d)
    eager = outer.gradient(gd, x, unconnected_gradients="zero")
    np.testing.assert_allclose(eager, hvp, rtol=1e-10, atol=1e-12)


def test_second_order_of_a_loop_is_four_loops_whatever_the_trip_count():
    # the Hessian-vector product of a loop: the forward loop, its backward loop, and the
    # backward loops of those two (stacks of the first gradient are read by rules with
    # rules of their own); correct for a long loop
    g = ag.grad(sin_loop)
    hvp = ag.value_and_grad(lambda x, n: g(x, n))
    for n in (3, 2000):
        _, h = hvp(np.float64(0.5), np.int64(n))
        eps = 1e-5
        fd = (g(np.float64(0.5 + eps), np.int64(n)) - g(np.float64(0.5 - eps), np.int64(n))) \
            / (2 * eps)
        np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-10)
    conc = hvp.__wrapped_function__.get_concrete_function(np.float64(0.5), np.int64(3))
    loops = [nd for nd in conc.graph.walk() if nd.op == "while_loop"]
    assert len(loops) == 4
