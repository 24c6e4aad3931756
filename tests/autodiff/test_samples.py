"""Every sample's gradient (order 1) and Hessian-vector product (order 2) against float64
central differences along random directions, traced (ag.grad) and eagerly (GradientTape
on NumPy values)."""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff import samples

RTOL = 1e-6
X = np.array([0.3, 0.2, 0.4])
W = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.2], [-0.3, 0.2, 0.6]])


def _args(f):
    return (X, W) if f in samples.MATRIX else (X,)


def _fd(fn, x, d, eps=1e-5):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


def _eager_grad(f, *args):
    with ag.GradientTape() as tape:
        x = tape.watch(args[0])
        y = f(x, *args[1:])
    return tape.gradient(y, x)


ALL = samples.VECTOR + samples.MATRIX


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_first_order(f):
    rng = np.random.default_rng(0)
    args = _args(f)
    d = rng.normal(size=X.shape)
    expected = _fd(lambda x: f(x, *args[1:]), X, d)
    traced = ag.grad(f)(*args)
    np.testing.assert_allclose(np.dot(traced, d), expected, rtol=RTOL)
    eager = _eager_grad(f, *args)
    np.testing.assert_allclose(eager, traced, rtol=1e-12)




SECOND = ALL


@pytest.mark.parametrize("f", SECOND, ids=lambda f: f.__name__)
def test_second_order(f):
    rng = np.random.default_rng(1)
    args = _args(f)
    d, u = rng.normal(size=X.shape), rng.normal(size=X.shape)
    g = ag.grad(f)
    hvp = ag.grad(lambda x, *rest: np.sum(g(x, *rest) * d))(*args)
    expected = _fd(lambda x: np.dot(g(x, *args[1:]), u), X, d)
    np.testing.assert_allclose(np.dot(hvp, u), expected, rtol=RTOL, atol=1e-9)

    with ag.GradientTape() as outer:
        x = outer.watch(X)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x, *args[1:])
        gx = inner.gradient(y, x)
        gd = np.sum(gx * d)
    # a Hessian that is zero because the gradient does not depend on x is None by default
    # (TF's unconnected gradients); the traced one is zeros
    eager = outer.gradient(gd, x, unconnected_gradients="zero")
    np.testing.assert_allclose(eager, hvp, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_backward_nodes_name_the_users_lines(f):
    # a rule's nodes carry the forward operation's origin, so an error in the backward
    # graph (jit_compile=True refusing an op, a shape error) names the user's line, not
    # autograph's own code (ag.grad's converted wrapper used to count as the user's)
    concrete = ag.function(ag.grad(f)).get_concrete_function(*_args(f))
    files = {node.origin[0] for node in concrete.graph.walk() if node.origin is not None}
    assert files and all("autograph/" not in name or "tests/" in name for name in files), files
    assert any(name.endswith("samples.py") for name in files)
