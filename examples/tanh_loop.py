"""tanh_loop: a `while` loop whose condition is a reduction over a vector.

What it teaches:
- `while np.sum(x) > 1` becomes a while_loop node: the number of iterations is decided at run
  time, from the data, not while tracing;
- `ag.print(x)` inside the loop prints every iteration, every call (Python's print would not);
- NumPy calls (`np.sum`, `np.tanh`) work unchanged on symbolic tensors.

Run it: python examples/tanh_loop.py
"""

import numpy as np

import autograph as ag


@ag.function
def squash(x):
    while np.sum(x) > 1:
        ag.print(x)
        x = np.tanh(x)
    return x


def make_input(seed=0):
    return np.random.default_rng(seed).uniform(size=5).astype(np.float32)


def main():
    x = make_input()
    print("== the loop prints x on every iteration ==")
    result = squash(x)
    print("== result ==")
    print("result:", " ".join(f"{v:.6f}" for v in np.asarray(result)))
    print(f"sum: {float(np.sum(result)):.6f}")
    print(f"traces: {squash.experimental_get_tracing_count()}")


if __name__ == "__main__":
    main()
