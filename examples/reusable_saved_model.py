"""reusable_saved_model: save a model, load it where its code is absent, fine-tune, save.

What it teaches (the Reusable SavedModel interface):
- a Module whose `__call__` takes `training` (a dropout-like mask is applied only when
  training), with a regularization loss and a named child (`encoder`);
- `ag.saved_model.save` writes every trace of every ag.function, the Variables and the
  object tree as JSON + .npz; nothing in it is pickled code;
- a fresh Python process that does not have this file loads it: `obj(x, training=...)`
  picks the saved trace, `obj.encoder(x)` is the named child, `obj.trainable_variables`
  are real Variables, `obj.regularization_losses` the saved loss functions;
- there it is fine-tuned with an ag.GradientTape and an SGD optimizer inside a new
  ag.function (the loaded graphs become part of the new one), then saved again;
- back here, the fine-tuned model is loaded and compared with the original.

Run it: python examples/reusable_saved_model.py
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

import autograph as ag


class Encoder(ag.Module):
    def __init__(self, n_in, n_out, seed):
        super().__init__(name="encoder")
        rng = np.random.default_rng(seed)
        self.w = ag.Variable(rng.normal(scale=0.5, size=(n_in, n_out)), name="w")
        self.b = ag.Variable(np.zeros(n_out), name="b")

    @ag.function
    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class Regressor(ag.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(3, 8, seed=0)
        self.out = ag.Variable(np.random.default_rng(1).normal(size=(8, 1)), name="out")
        self.keep = ag.Variable(np.tile([1.0, 0.0], 4), trainable=False, name="keep")

        @ag.function
        def l2():
            return 1e-3 * np.sum(self.encoder.w ** 2)
        self.regularization_losses = [l2]

    @ag.function
    def __call__(self, x, training=False):
        h = self.encoder(x)
        if training:                # dropout-like: a fixed mask, rescaled, when training
            h = h * self.keep * 2.0
        return h @ self.out


FINE_TUNE = r"""
import importlib.util, sys
import numpy as np
import autograph as ag
print("defining code importable:", importlib.util.find_spec("reusable_saved_model") is not None)
obj = ag.saved_model.load(sys.argv[1])
x = np.linspace(-1, 1, 24).reshape(8, 3)
y = np.sum(x, axis=1, keepdims=True)
print("loaded:", obj, "| encoder:", obj.encoder.name,
      "| trainable:", [v.name for v in obj.trainable_variables])
print("training changes the output:", not np.allclose(obj(x, training=True), obj(x)))
opt = ag.optimizers.SGD(learning_rate=0.1)

@ag.function
def step(x, y):
    with ag.GradientTape() as tape:
        loss = np.mean((obj(x, training=True) - y) ** 2) + obj.regularization_losses[0]()
    variables = obj.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

losses = [float(step(x, y)) for _ in range(20)]
print(f"fine-tuning loss: {losses[0]:.6f} -> {losses[-1]:.6f}")
ag.saved_model.save(obj, sys.argv[2])
print("saved the fine-tuned model")
"""


def main():
    model = Regressor()
    spec = ag.TensorSpec([None, 3], np.float64)
    model.__call__.get_concrete_function(spec, training=False)     # trace both modes
    model.__call__.get_concrete_function(spec, training=True)
    model.encoder.__call__.get_concrete_function(spec)
    with tempfile.TemporaryDirectory() as tmp:
        first, tuned = os.path.join(tmp, "model"), os.path.join(tmp, "tuned")
        ag.saved_model.save(model, first)
        print("== saved ==")
        print("files:", sorted(os.listdir(first)))
        print("== fresh process ==")
        done = subprocess.run([sys.executable, "-c", FINE_TUNE, first, tuned], cwd=tmp,
                              capture_output=True, text=True)
        print(done.stdout.rstrip())
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return 1
        print("== back here ==")
        again = ag.saved_model.load(tuned)
        x = np.linspace(-1, 1, 24).reshape(8, 3)
        changed = [not np.array_equal(a.numpy(), b.numpy())
                   for a, b in zip(model.trainable_variables, again.trainable_variables)]
        print("fine-tuned Variables changed:", changed)
        print("non-trainable mask unchanged:",
              np.array_equal(again.keep.numpy(), model.keep.numpy()))
        print("prediction before/after:", float(model(x)[0, 0]), float(again(x)[0, 0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
