"""The rules inside a loop body, through ag.grad: there a rule's primal reads become
per-iteration stack reads, so this checks that the rules read values only through the
lazily resolved node (static shapes and dtypes come free) and still give central
differences' numbers."""

import numpy as np
import pytest

import autograph as ag

rng = np.random.default_rng(4)
W = rng.standard_normal((4, 4)) / 2
XS = rng.standard_normal((6, 3, 4))


def body_mix(h, w, x):
    h = np.where(h > 0, h, 0.1 * h) @ w + x
    h = h - np.max(h, axis=1, keepdims=True)
    return np.clip(np.tanh(h), -0.9, 0.9) * np.exp(np.mean(h, axis=0))


def body_index(h, w, x):
    z = np.concatenate([h[:, :2] * 2.0, h[:, 2:]], axis=1) @ w
    return np.sort(z, axis=1) + np.take(x, np.array([1, 1, 0]), axis=0)


def body_shapes(h, w, x):
    z = np.reshape(np.transpose(h @ w), (4, 3))
    return np.sqrt(np.transpose(z) ** 2 + 1.0) + np.cumsum(x, axis=1) * np.prod(w[0])


@pytest.mark.parametrize("body", [body_mix, body_index, body_shapes])
def test_rules_inside_a_loop(body):
    def loss(w, xs):
        h = xs[0]
        for t in ag.range(1, xs.shape[0]):
            h = body(h, w, xs[t])
        return np.sum(h * h)

    def eager(w, xs):
        h = xs[0]
        for t in range(1, xs.shape[0]):
            h = body(h, w, xs[t])
        return np.sum(h * h)
    gw, gx = ag.grad(loss, argnums=(0, 1))(W, XS)
    for g, i in ((gw, 0), (gx, 1)):
        v = rng.standard_normal(g.shape)
        args = [W, XS]
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + 1e-6 * v, args[i] - 1e-6 * v
        numeric = (eager(*plus) - eager(*minus)) / 2e-6
        np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-6, atol=1e-9)
