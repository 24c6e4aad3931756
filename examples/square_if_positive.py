"""square_if_positive: the smallest `if` on a tensor, and the code autograph writes for it.

What it teaches:
- `if x > 0` on a tensor becomes a cond node with both branches traced; `x = 0` in one
  branch is a Python int that adopts the tensor's dtype (as NumPy does with Python scalars);
- with a Python argument the `if` is plain Python, run while tracing: one trace per value;
- `ag.to_code` shows the rewritten `if` as a call to `ag__.if_stmt` with the branches as
  functions.

Run it: python examples/square_if_positive.py
"""

import numpy as np

import autograph as ag


@ag.function
def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0
    return x


def main():
    print("== tensor arguments: one trace, a cond node picks the branch at run time ==")
    for value in (3, -2, 0, 7):
        print(f"square_if_positive(np.int64({value})) = {square_if_positive(np.int64(value))}")
    print(f"traces: {square_if_positive.experimental_get_tracing_count()}")
    print("== float32 arguments: a new dtype, a new trace ==")
    print(f"square_if_positive(np.float32(1.5)) = {square_if_positive(np.float32(1.5))}")
    print(f"traces: {square_if_positive.experimental_get_tracing_count()}")
    print("== Python ints: the `if` runs in Python while tracing, one trace per value ==")
    for value in (4, -4, 4):
        print(f"square_if_positive({value}) = {square_if_positive(value)}")
    print(f"traces: {square_if_positive.experimental_get_tracing_count()}")
    print("== the converted code ==")
    print(ag.to_code(square_if_positive))


if __name__ == "__main__":
    main()
