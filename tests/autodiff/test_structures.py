"""Second order through loop and branch structures beyond the shared samples, traced and
eager, against central differences (and exact Hessians for nested staged loops)."""

import numpy as np
import pytest

import autograph as ag

X = np.array([0.1, 0.2, 0.15])
D = np.array([1.0, -2.0, 0.5])
U = np.array([0.3, 0.1, -1.0])
V = ag.Variable(np.array([0.7, -0.4, 1.1]))


def swapped_loop_variables(x):
    a, b = x, x * 2.0
    for _ in ag.range(3):
        a, b = b * np.sin(a), a
    return np.sum(a * b)


def unchanged_loop_variable(x):
    a, b = x, x * 0.5
    for _ in ag.range(3):
        a = np.sin(a) * b
    return np.sum(a * b)


def branch_passes_a_value_through(x):
    y = x * 2.0
    if np.sum(x) > 0:
        z = y
        w = np.sin(y)
    else:
        z = x
        w = y
    return np.sum(z * w * x)


def while_with_break(x):
    y = x
    i = 0
    while i < 10:
        y = np.tanh(y * 1.7 + x)
        if np.sum(y) > 1.5:
            break
        i += 1
    return np.sum(y * x)


def gather_in_a_branch(x):
    ta = ag.TensorArray(np.float64, size=4)
    for t in ag.range(4):
        ta = ta.write(t, x * (t + 1.0))
    if np.sum(x) > 0:
        g = ta.gather(np.array([0, 2, 2]))
    else:
        g = ta.stack()
    return np.sum(np.sin(g) * g)


def variable_in_a_loop(x):
    y = x
    for _ in ag.range(3):
        y = np.sin(y * V) + x
    return np.sum(y)


def loops_and_conds_four_deep(x):
    y = x
    for i in ag.range(2):
        if np.sum(y) > 0.3:
            z = y
            k = 0
            while np.sum(z * z) < 2.0 and k < 5:
                if np.sum(z) > 1.0:
                    z = z * 1.3 + np.sin(x)
                else:
                    z = z + 0.4 * x
                k += 1
            y = np.tanh(z) * x + y
        else:
            y = y + 0.2
    return np.sum(y * y)


def data_dependent_while_in_while(x):
    y = x
    while np.sum(y) < 3.0:
        z = y
        while np.sum(z) < np.sum(y) + 0.5:
            z = z + 0.2 * np.sin(x) + 0.05
        y = z * 1.1
    return np.sum(y * x)


SAMPLES = [loops_and_conds_four_deep, data_dependent_while_in_while, swapped_loop_variables, unchanged_loop_variable, branch_passes_a_value_through,
           while_with_break, gather_in_a_branch, variable_in_a_loop]


def _fd(fn, x, d, eps=1e-5):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


@pytest.mark.parametrize("f", SAMPLES, ids=lambda f: f.__name__)
def test_second_order_traced_and_eager(f):
    g = ag.grad(f)
    np.testing.assert_allclose(np.dot(g(X), D), _fd(f, X, D), rtol=1e-6)
    hvp = ag.grad(lambda x: np.sum(g(x) * D))(X)
    np.testing.assert_allclose(np.dot(hvp, U), _fd(lambda x: np.dot(g(x), D), X, U),
                               rtol=1e-6, atol=1e-9)
    with ag.GradientTape() as outer:
        x = outer.watch(X)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        gd = np.sum(inner.gradient(y, x) * D)
    np.testing.assert_allclose(outer.gradient(gd, x), hvp, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("outer, inner", [(1, 1), (2, 1), (1, 3), (2, 2), (3, 2)])
@pytest.mark.parametrize("through", ["capture", "loop_variable"])
def test_nested_staged_loops_exact_hessian(outer, inner, through):
    # y = x^(k+1), k = outer * inner: x reaches the inner loop as a capture, or as a loop
    # variable (the inner loop's stacks are kept per outer iteration: a stack of stacks)
    def f(x):
        y = x
        for _ in ag.range(outer):
            z = x
            for _ in ag.range(inner):
                y = y * (x if through == "capture" else z)
                z = z * 1.0
        return y
    k = outer * inner + 1
    g = ag.grad(f)
    assert g(np.float64(1.5)) == pytest.approx(k * 1.5 ** (k - 1), rel=1e-12)
    assert ag.grad(g)(np.float64(1.5)) == pytest.approx(k * (k - 1) * 1.5 ** (k - 2),
                                                         rel=1e-12)
