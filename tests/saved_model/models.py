"""Small Modules for the saved-model tests (a layer, a model with a named child, a
`training` switch and a regularization loss)."""

import numpy as np

import autograph as ag


class Dense(ag.Module):
    def __init__(self, n, m, seed, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(seed)
        self.w = ag.Variable(rng.normal(size=(n, m)), name="w")
        self.b = ag.Variable(np.zeros(m), name="b")

    @ag.function
    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class Model(ag.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Dense(3, 4, 0, name="encoder")
        self.head = Dense(4, 1, 1, name="head")
        self.calls = ag.Variable(np.int64(0), name="calls", trainable=False)

        @ag.function
        def l2():
            return 1e-3 * (np.sum(self.encoder.w ** 2) + np.sum(self.head.w ** 2))
        self.regularization_losses = [l2]

    @ag.function
    def __call__(self, x, training=False):
        self.calls.assign_add(1)
        h = self.encoder(x)
        if training:
            h = h * 0.9
        return self.head(h)


def trained_model():
    """A Model traced for float64 inputs of any batch size, both `training` values."""
    m = Model()
    spec = ag.TensorSpec([None, 3], np.float64)
    m.__call__.get_concrete_function(spec, training=False)
    m.__call__.get_concrete_function(spec, training=True)
    m.encoder.__call__.get_concrete_function(spec)
    m.head.__call__.get_concrete_function(ag.TensorSpec([None, 4], np.float64))
    return m


def data(n=8, seed=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), rng.normal(size=(n, 1))
