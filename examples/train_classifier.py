"""train_classifier: a small multilayer classifier trained with Adam in one ag.function step.

What it teaches:
- a model is an `ag.Module` whose layers hold `ag.Variable`s; `model.trainable_variables`
  finds them (through the list of layers), in a fixed order;
- one training step is one `ag.function`: the forward pass under `ag.GradientTape`, the
  gradients from `tape.gradient`, the update from `ag.optimizers.Adam.apply_gradients`.
  The step traces once; the optimizer's slots are created in that first trace;
- debugging mode does not change training: under `ag.config.run_functions_eagerly(True)`
  the same step runs as plain Python on NumPy (the tape records eagerly) and gives the same
  loss curve;
- the data are generated here (two interleaved spirals), nothing is downloaded.

Run it: python examples/train_classifier.py
"""

import numpy as np

import autograph as ag

STEPS = 300
LOG_EVERY = 50
HIDDEN = 32


def make_spirals(n_per_class=100, turns=1.25, noise=0.05, seed=0):
    """Two interleaved spirals in the plane: points (n, 2) and labels (n,) in {0, 1}."""
    rng = np.random.default_rng(seed)
    points, labels = [], []
    for k in range(2):
        t = np.sqrt(rng.uniform(0.02, 1.0, n_per_class)) * turns * 2 * np.pi
        angle = t + k * np.pi
        xy = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) / (turns * np.pi)
        points.append(xy + noise * rng.standard_normal((n_per_class, 2)))
        labels.append(np.full(n_per_class, k))
    return np.concatenate(points), np.concatenate(labels)


class Dense(ag.Module):
    def __init__(self, n_in, n_out, rng, activation=None, name=None):
        super().__init__(name=name)
        scale = np.sqrt(2.0 / (n_in + n_out))          # Glorot normal
        with self.name_scope:
            self.w = ag.Variable(rng.standard_normal((n_in, n_out)) * scale, name="w")
            self.b = ag.Variable(np.zeros(n_out), name="b")
        self.activation = activation

    def __call__(self, x):
        y = x @ self.w + self.b
        return y if self.activation is None else self.activation(y)


class MLP(ag.Module):
    def __init__(self, sizes, seed=1):
        super().__init__()
        rng = np.random.default_rng(seed)
        last = len(sizes) - 2
        self.layers = [Dense(a, b, rng, None if i == last else np.tanh, name=f"dense_{i}")
                       for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def cross_entropy(logits, onehot):
    """Mean softmax cross-entropy, computed stably (shifted by the row maximum)."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * log_probs, axis=1))


def make_train_step(model, optimizer):
    @ag.function
    def train_step(x, onehot):
        with ag.GradientTape() as tape:
            logits = model(x)
            loss = cross_entropy(logits, onehot)
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        accuracy = np.mean(np.argmax(logits, axis=1) == np.argmax(onehot, axis=1))
        return loss, accuracy
    return train_step


def train(steps=STEPS, eagerly=False, log=print):
    """Train a fresh model; returns the (loss, accuracy) of every step and the step."""
    x, labels = make_spirals()
    onehot = np.eye(2)[labels]
    model = MLP([2, HIDDEN, HIDDEN, 2])
    optimizer = ag.optimizers.Adam(learning_rate=0.02)
    train_step = make_train_step(model, optimizer)
    curve = []
    ag.config.run_functions_eagerly(eagerly)
    try:
        for step in range(steps):
            loss, accuracy = train_step(x, onehot)
            curve.append((float(loss), float(accuracy)))
            if step % LOG_EVERY == 0 or step == steps - 1:
                log(f"step {step:4d}  loss {float(loss):.10g}  accuracy {float(accuracy):.3f}")
    finally:
        ag.config.run_functions_eagerly(False)
    return curve, train_step, model


def main():
    x, labels = make_spirals()
    print(f"== data: two spirals, {len(x)} points ==")
    print(f"== traced: one ag.function train step, {STEPS} steps ==")
    traced, step_fn, model = train()
    print(f"parameters: {', '.join(v.name for v in model.trainable_variables)}")
    print(f"traces: {step_fn.experimental_get_tracing_count()}")
    print("== the same under ag.config.run_functions_eagerly(True) ==")
    eager, _, _ = train(eagerly=True)
    diff = max(abs(a[0] - b[0]) for a, b in zip(traced, eager))
    print(f"largest loss difference, traced vs eager: {diff:.3g}")
    print(f"final training accuracy: {traced[-1][1]:.3f}")


if __name__ == "__main__":
    main()
