"""A training step (GradientTape + ag.optimizers inside one ag.function) gives the same
numbers traced and under ag.config.run_functions_eagerly(True): debugging mode must not
change training."""

import numpy as np
import pytest

import autograph as ag

RNG = np.random.default_rng(7)
DATA = RNG.normal(size=(16, 3))
LABELS = (DATA[:, 0] * DATA[:, 1] > 0).astype(np.float64)


def _train(make_optimizer, steps=5):
    rng = np.random.default_rng(0)
    w1 = ag.Variable(rng.normal(size=(3, 8)) * 0.5, name="w1")
    b1 = ag.Variable(np.zeros(8), name="b1")
    w2 = ag.Variable(rng.normal(size=(8,)) * 0.5, name="w2")
    opt = make_optimizer()
    python_runs = []

    @ag.function
    def step(x, y):
        python_runs.append(isinstance(x, np.ndarray))
        with ag.GradientTape() as tape:
            h = np.tanh(x @ w1 + b1)
            for _ in range(3):                  # a loop and a cond in the loss
                h = np.tanh(h * 0.8 + b1)
            logits = h @ w2
            if np.mean(logits) > 10.0:
                logits = logits * 0.5
            p = 1.0 / (1.0 + np.exp(-logits))
            loss = -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
        grads = tape.gradient(loss, [w1, b1, w2])
        opt.apply_gradients(zip(grads, [w1, b1, w2]))
        return loss

    losses = [float(step(DATA, LABELS)) for _ in range(steps)]
    return losses, [np.array(v.numpy()) for v in (w1, b1, w2)], python_runs


@pytest.mark.parametrize("make_optimizer", [
    lambda: ag.optimizers.Adam(0.05),
    lambda: ag.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
], ids=["adam", "sgd_nesterov"])
def test_eager_debugging_mode_trains_like_traced(make_optimizer):
    traced_losses, traced_weights, runs = _train(make_optimizer)
    assert runs == [False]                              # traced once, on placeholders
    ag.config.run_functions_eagerly(True)
    try:
        eager_losses, eager_weights, runs = _train(make_optimizer)
    finally:
        ag.config.run_functions_eagerly(False)
    assert runs == [True] * 5                           # Python ran each step on arrays
    assert traced_losses[-1] < traced_losses[0]        # it trains
    np.testing.assert_allclose(eager_losses, traced_losses, rtol=1e-12)
    for a, b in zip(eager_weights, traced_weights):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
