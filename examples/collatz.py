"""Collatz: a `while` loop with an `if` inside, both on tensors.

What it teaches:
- `while n != 1` on a tensor `n` becomes a while_loop node, and the `if n % 2 == 0` inside it a
  cond node nested in the loop body (draw it: `autograph graph examples/collatz.py::collatz
  --arg 'int64[]' -o collatz.svg`);
- one trace serves every starting value of the same dtype and shape;
- a vectorised step with `np.where` and an `input_signature`, which pins the accepted
  arguments: a vector of int64 of any length, and nothing else.

Run it: python examples/collatz.py
"""

import numpy as np

import autograph as ag


@ag.function
def collatz(n):
    """The number of Collatz steps from n down to 1."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@ag.function(input_signature=[ag.TensorSpec([None], np.int64)])
def next_collatz(x):
    print("Tracing with", x)
    return np.where(x % 2 == 0, x // 2, 3 * x + 1)


def main():
    print("== steps to reach 1, for n = 1..30 ==")
    for n in range(1, 31):
        print(f"collatz({n}) = {int(collatz(np.int64(n)))}")
    print(f"collatz(27) = {int(collatz(np.int64(27)))}")
    print(f"traces: {collatz.experimental_get_tracing_count()}")
    print("draw it: autograph graph examples/collatz.py::collatz --arg 'int64[]' -o collatz.svg")

    print("== next_collatz: one vectorised step, pinned by input_signature ==")
    x = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.int64)
    for _ in range(3):
        x = np.asarray(next_collatz(x))
        print("next:", " ".join(str(v) for v in x))
    for bad in (np.array([[1, 2], [3, 4]], dtype=np.int64), np.array([1.0, 2.0])):
        try:
            next_collatz(bad)
            print("accepted", bad.dtype, bad.shape)
        except (TypeError, ValueError) as e:
            print(f"rejected {bad.dtype.name} {bad.shape}: {type(e).__name__}: {e}")
    print(f"traces: {next_collatz.experimental_get_tracing_count()}")


if __name__ == "__main__":
    main()
