"""Straight-line reverse mode: grad, value_and_grad, vjp against closed forms."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff.transform import NonDifferentiableError


def f(x, y):
    return np.sum(np.sin(x) * y + x * x)


X = np.array([0.1, 0.2, 0.3])
Y = np.array([1.0, 2.0, 3.0])


def test_value_and_grad_matches_closed_form():
    value, g = ag.value_and_grad(f)(X, Y)
    assert np.isclose(value, np.sum(np.sin(X) * Y + X * X))
    np.testing.assert_allclose(g, np.cos(X) * Y + 2 * X, rtol=1e-14)


def test_grad_argnums_tuple_and_broadcasting():
    gx, gy = ag.grad(lambda x, y: np.sum(x * y), argnums=(0, 1))(X, np.float64(2.0))
    np.testing.assert_allclose(gx, np.full(3, 2.0))
    assert np.isclose(gy, X.sum())


def test_has_aux_and_cache():
    def h(x):
        return np.sum(x * x), x * 2.0
    vg = ag.value_and_grad(h, has_aux=True)
    (value, aux), g = vg(X)
    np.testing.assert_allclose(aux, X * 2)
    np.testing.assert_allclose(g, 2 * X)
    vg(X + 1.0)
    assert vg.__wrapped_function__.experimental_get_tracing_count() == 1


def test_vjp():
    out, fn = ag.vjp(lambda a: np.sin(a) * 2.0, X)
    np.testing.assert_allclose(out, 2 * np.sin(X))
    (ct,) = fn(np.array([1.0, 0.0, 2.0]))
    np.testing.assert_allclose(ct, 2 * np.cos(X) * [1.0, 0.0, 2.0])


def test_unconnected_argument_gets_zeros():
    g = ag.grad(lambda x, y: np.sum(x * 3.0), argnums=1)(X, Y)
    np.testing.assert_array_equal(g, np.zeros(3))


def test_integer_input_is_an_error():
    with pytest.raises(NonDifferentiableError, match="int64"):
        ag.grad(lambda n: np.sum(n * 2))(np.arange(3))


def test_stop_gradient():
    g = ag.grad(lambda x: np.sum(ag.stop_gradient(x * x) + x))(X)
    np.testing.assert_allclose(g, np.ones(3))
