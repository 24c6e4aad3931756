"""Cost per element of a Python list appended to in a loop the graph runs (issue 31).

    python -m benchmarks.list_append

The same loop three ways, per appended element (best of 5, CPU time): plain Python on NumPy
values, ag.function with `l.append(v)` (operators.lists.TensorList), and ag.function with
the hand-written `ag.TensorArray` it stands for. The per-element cost should not grow with
n (appending is O(n) in all; tests/operators/test_lists.py counts the stores and copies).
"""

import numpy as np

import autograph as ag
from benchmarks.cpu_time import best


def with_list(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return np.stack(out)


def with_tensor_array(x, n):
    out = ag.TensorArray(np.float64, size=0, dynamic_size=True)
    for i in ag.range(n):
        out = out.write(i, x * i)
    return out.stack()


def main():
    x = np.arange(4.0)
    traced_list, traced_ta = ag.function(with_list), ag.function(with_tensor_array)
    print(f"{'n':>8} {'python':>12} {'list':>12} {'TensorArray':>12}   (microseconds per element)")
    for n in (1_000, 10_000, 100_000):
        m = np.int64(n)
        np.testing.assert_allclose(traced_list(x, m), with_list(x, n))
        traced_ta(x, m)
        cols = [best(fn, x, k, rounds=5) for fn, k in
                ((with_list, n), (traced_list, m), (traced_ta, m))]
        print(f"{n:>8} " + " ".join(f"{1e6 * c / n:>12.2f}" for c in cols))


if __name__ == "__main__":
    main()
