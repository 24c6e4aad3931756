"""examples/reusable_saved_model.py runs as a script and does what it prints; the first
fine-tuning loss is checked against plain NumPy on the same initial values."""

import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_reusable_saved_model_example():
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                        "reusable_saved_model.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "defining code importable: False" in out
    assert "encoder: encoder" in out and "trainable: ['out', 'b', 'w']" in out
    assert "training changes the output: True" in out
    assert "fine-tuned Variables changed: [True, True, True]" in out
    assert "non-trainable mask unchanged: True" in out
    first, last = map(float, re.search(r"fine-tuning loss: ([\d.]+) -> ([\d.]+)", out).groups())
    assert last < first / 10
    # the first loss, from the initial values, in plain NumPy
    w = np.random.default_rng(0).normal(scale=0.5, size=(3, 8))
    out_w = np.random.default_rng(1).normal(size=(8, 1))
    keep = np.tile([1.0, 0.0], 4)
    x = np.linspace(-1, 1, 24).reshape(8, 3)
    y = np.sum(x, axis=1, keepdims=True)
    ref = np.mean((np.tanh(x @ w) * keep * 2.0 @ out_w - y) ** 2) + 1e-3 * np.sum(w ** 2)
    assert abs(first - ref) < 1e-6
