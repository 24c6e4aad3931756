"""Gradients flow through a dataset loop: it is an ordinary while_loop (the tf.data
regressions where they came back None: TensorFlow issues 36306, 38453, 41594)."""

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset

pytest.importorskip("autograph.autodiff")

D = np.array([1.5, -2.0, 0.5, 3.0, 0.75])


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def product_loop(x, dataset):
    for d in dataset:
        x = x * d
    return x


@pytest.mark.parametrize("make", [
    lambda: Dataset.from_tensor_slices(D),
    lambda: Dataset.from_tensor_slices(D).shuffle(5, seed=2).repeat(2),
    lambda: Dataset.from_tensor_slices(D).filter(lambda d: d > 0).map(lambda d: d * d),
    lambda: Dataset.from_generator(lambda: iter(D.tolist()),
                                   output_signature=ag.TensorSpec((), np.float64)),
], ids=["slices", "shuffle_repeat", "filter_map", "generator"])
def test_gradient_through_for_d_in_ds_equals_eager(make):
    ds = make()
    x = np.float64(1.3)
    eager = product_loop(x, ds)                           # plain Python over the dataset
    value, grad = ag.value_and_grad(product_loop)(x, ds)
    assert value == pytest.approx(eager)
    assert grad == pytest.approx(_fd(lambda v: product_loop(v, ds), x), rel=1e-6)


def test_gradient_reaches_the_arrays_a_dataset_is_built_from():
    def loss(v, w):
        s = 0.0
        for a, b in Dataset.from_tensor_slices((v, w)).batch(2):
            s = s + np.sum(a * a * b)
        return s
    v, w = np.arange(1.0, 6.0), np.linspace(-1, 1, 5)
    gv, gw = ag.grad(loss, argnums=(0, 1))(v, w)
    np.testing.assert_allclose(gv, 2 * v * w)
    np.testing.assert_allclose(gw, v * v)
