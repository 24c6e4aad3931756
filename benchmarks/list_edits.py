"""Cost per step of pops and inserts on a Python list in a loop the graph runs (issue 31).

    python -m benchmarks.list_edits

Two loops, per step (best of 3, CPU time), as plain Python on NumPy values and traced by
ag.function (operators.tensor_list.TensorList): a stack (`append`, then `pop()` of the last
element: O(1) per step, so the cost per step should not grow with n) and a queue (`append`,
then `pop(0)`: the later elements move, O(length) per step in Python and here alike; the
queue is kept at 64 elements so both stay flat). Also the gradient of the stack loop
(ag.grad), whose backward pass stages no gradient-list shift for `pop()`.
"""

import numpy as np

import autograph as ag
from benchmarks.cpu_time import best


def stack(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
        out.append(out.pop() + out.pop())
    return np.stack(out)


def queue(x, n):
    q = [x] * 64
    acc = x * 0
    for i in range(n):
        q.append(x + i)
        acc = acc + q.pop(0)
    return acc


def main():
    x = np.arange(4.0)
    grad_stack = ag.grad(lambda x, n: np.sum(stack(x, n)))
    print(f"{'n':>8} {'stack py':>10} {'stack ag':>10} {'queue py':>10} {'queue ag':>10} "
          f"{'stack grad':>10}   (microseconds per step)")
    for n in (1_000, 10_000, 50_000):
        m = np.int64(n)
        traced_stack, traced_queue = ag.function(stack), ag.function(queue)
        np.testing.assert_allclose(traced_stack(x, m), stack(x, n))
        np.testing.assert_allclose(traced_queue(x, m), queue(x, n))
        grad_stack(x, m)
        cols = [best(stack, x, n), best(traced_stack, x, m), best(queue, x, n),
                best(traced_queue, x, m), best(grad_stack, x, m)]
        print(f"{n:>8} " + " ".join(f"{1e6 * c / n:>10.2f}" for c in cols))


if __name__ == "__main__":
    main()
