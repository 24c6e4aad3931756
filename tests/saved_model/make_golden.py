"""Writes the golden saved models of format 1.0 under tests/saved_model/golden/ (run once,
by hand: `python -m tests.saved_model.make_golden`). The files stay in the repository for
good: every later autograph must load them and give the recorded outputs. It refuses to
overwrite a golden model that exists already (a new format version gets new ones)."""

import os
import sys

import numpy as np

import autograph as ag

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def collatz_steps():
    @ag.function
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps
    inputs = {"n": np.int64(27)}
    collatz(**inputs)
    return collatz, inputs, ""


def rnn_tensor_array():
    @ag.function(input_signature=[ag.TensorSpec([None, 4, 3], np.float32),
                                  ag.TensorSpec([None, 3], np.float32)])
    def rnn(x, state):
        x = np.transpose(x, (1, 0, 2))
        states = ag.TensorArray(np.float32, size=x.shape[0])
        for i in ag.range(x.shape[0]):
            state = np.tanh(x[i] + state)
            states = states.write(i, state)
        return np.transpose(states.stack(), (1, 0, 2)), state
    rng = np.random.default_rng(0)
    inputs = {"x": rng.normal(size=(2, 4, 3)).astype(np.float32),
              "state": np.zeros((2, 3), np.float32)}
    return rnn, inputs, ""


def module_with_state():
    from tests.saved_model.models import data, trained_model
    m = trained_model()
    x, _ = data()
    return m, {"x": x, "training": True}, "__call__"


GOLDEN = {"collatz_steps": collatz_steps, "rnn_tensor_array": rnn_tensor_array,
          "module_with_state": module_with_state}


def main():
    for name, make in GOLDEN.items():
        d = os.path.join(HERE, name)
        if os.path.exists(d):
            print(f"{d} exists: kept")
            continue
        obj, inputs, attr = make()
        ag.saved_model.save(obj, d)
        result = (getattr(obj, attr) if attr else obj)(**inputs)
        leaves = list(result) if isinstance(result, tuple) else [result]
        arrays = {f"input_{k}": np.asarray(v) for k, v in inputs.items()
                  if not isinstance(v, bool)}
        arrays.update({f"output_{i}": np.asarray(v) for i, v in enumerate(leaves)})
        np.savez(os.path.join(d, "expected.npz"), **arrays)
        print(f"wrote {d}")


if __name__ == "__main__":
    sys.exit(main())
