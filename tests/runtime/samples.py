"""Explicit-control-flow programs, each with an independent NumPy/Python reference.

Every sample is run in every mode by tests/runtime/test_executors.py: eagerly (ag.cond and
ag.while_loop just run Python), traced into a graph and run by the interpreter, by codegen,
and by both after optimize. All must agree with the reference, output and printed text.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

import autograph as ag


@dataclass
class Sample:
    name: str
    fn: Callable          # written with ag.cond / ag.while_loop / ag.TensorArray / ag.print
    args: tuple           # NumPy arguments
    reference: Callable   # plain Python + NumPy: (result, printed text)

    def __repr__(self):
        return self.name


# -- collatz: while_loop + cond --------------------------------------------------------------

def collatz(n):
    def body(n, steps):
        n = ag.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
        return n, steps + 1
    _, steps = ag.while_loop(lambda n, steps: n != 1, body, (n, 0))
    return steps


def collatz_ref(n):
    n, steps = int(n), 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return np.int64(steps), ""


# -- the guide's dynamic RNN, with a TensorArray -----------------------------------------------

def rnn_step(inp, state):
    return np.tanh(inp + state)


def seed_rnn_step(inp, state):     # the guide's own step
    return inp + state


def dynamic_rnn(input_data, initial_state, rnn_step=rnn_step):
    input_data = np.transpose(input_data, (1, 0, 2))      # [batch, time, f] -> [time, batch, f]
    max_seq_len = input_data.shape[0]
    states = ag.TensorArray(np.float32, size=max_seq_len)

    def body(i, state, states):
        state = rnn_step(input_data[i], state)
        return i + 1, state, states.write(i, state)

    _, _, states = ag.while_loop(lambda i, state, states: i < max_seq_len, body,
                                 (0, initial_state, states))
    return np.transpose(states.stack(), (1, 0, 2))


def dynamic_rnn_ref(input_data, initial_state):
    state, out = initial_state, []
    for t in range(input_data.shape[1]):
        state = np.tanh(input_data[:, t] + state)
        out.append(state)
    return np.stack(out, axis=1), ""


def seed_dynamic_rnn(input_data, initial_state):
    return dynamic_rnn(input_data, initial_state, seed_rnn_step)


def seed_dynamic_rnn_ref(input_data, initial_state):
    return np.cumsum(input_data, axis=1) + initial_state[:, None, :], ""


# -- nested loops with a cond inside ------------------------------------------------------------

def nested_loops(n, m):
    def outer_body(i, total):
        def inner_body(j, total):
            term = ag.cond((i + j) % 3 == 0, lambda: i * j, lambda: -1 * j)
            return j + 1, total + term
        _, total = ag.while_loop(lambda j, total: j < m, inner_body, (0, total))
        return i + 1, total
    _, total = ag.while_loop(lambda i, total: i < n, outer_body, (0, 0))
    return total


def nested_loops_ref(n, m):
    total = 0
    for i in range(int(n)):
        for j in range(int(m)):
            total += i * j if (i + j) % 3 == 0 else -j
    return np.int64(total), ""


# -- maximum_iterations ---------------------------------------------------------------------------

def capped_loop(x):
    i, x = ag.while_loop(lambda i, x: x < 1000.0, lambda i, x: (i + 1, x * 2.0), (0, x),
                         maximum_iterations=5)
    return i, x


def capped_loop_ref(x):
    i = 0
    while x < 1000.0 and i < 5:
        i, x = i + 1, x * 2.0
    return (np.int64(i), x), ""


# -- a loop variable whose shape changes ---------------------------------------------------------

def doubling(x, k):
    _, x = ag.while_loop(lambda i, x: i < k, lambda i, x: (i + 1, np.concatenate([x, x + 1])),
                         (0, x))
    return x, np.sum(x)


def doubling_ref(x, k):
    for _ in range(int(k)):
        x = np.concatenate([x, x + 1])
    return (x, np.sum(x)), ""


# -- nested conds capturing outer tensors ---------------------------------------------------------

def nested_conds(x, y):
    scale = x * 2.0

    def positive():
        return ag.cond(y > 0, lambda: x + y + scale, lambda: x - y)

    def negative():
        return ag.cond(y > x, lambda: y * scale, lambda: np.float64(-1.0))
    return ag.cond(x > 0, positive, negative)


def nested_conds_ref(x, y):
    scale = x * 2.0
    if x > 0:
        r = x + y + scale if y > 0 else x - y
    else:
        r = y * scale if y > x else np.float64(-1.0)
    return np.float64(r), ""


# -- print happens every run, in program order -----------------------------------------------------

def print_order(n):
    ag.print("start", n)

    def body(i):
        ag.cond(i % 2 == 0, lambda: ag.print("even", i), lambda: ag.print("odd", i))
        return i + 1
    i = ag.while_loop(lambda i: i < n, body, (0,))
    ag.print("done", i[0], np.arange(3))
    return i[0]


def print_order_ref(n):
    lines = [f"start {n}"]
    for i in range(int(n)):
        lines.append(f"{'even' if i % 2 == 0 else 'odd'} {i}")
    lines.append(f"done {n} [0 1 2]")
    return np.int64(n), "\n".join(lines) + "\n"


# -- a while loop with a TensorArray of dynamic size ------------------------------------------------

def fizzbuzz_codes(n):
    ta = ag.TensorArray(np.int64, size=0, dynamic_size=True)

    def body(i, ta):
        code = ag.cond(i % 15 == 0, lambda: np.int64(3),
                       lambda: ag.cond(i % 5 == 0, lambda: np.int64(2),
                                       lambda: ag.cond(i % 3 == 0, lambda: np.int64(1),
                                                       lambda: np.int64(0))))
        return i + 1, ta.write(i - 1, code)
    _, ta = ag.while_loop(lambda i, ta: i <= n, body, (1, ta))
    return ta.stack(), ta.size()


def fizzbuzz_codes_ref(n):
    codes = [3 if i % 15 == 0 else 2 if i % 5 == 0 else 1 if i % 3 == 0 else 0
             for i in range(1, int(n) + 1)]
    return (np.array(codes, dtype=np.int64), np.int64(len(codes))), ""


_rng = np.random.default_rng(0)

SAMPLES = [
    Sample("collatz_27", collatz, (np.int64(27),), collatz_ref),
    Sample("collatz_6", collatz, (np.int64(6),), collatz_ref),
    Sample("dynamic_rnn", dynamic_rnn,
           (_rng.uniform(size=(2, 3, 4)).astype(np.float32), np.zeros((2, 4), np.float32)),
           dynamic_rnn_ref),
    Sample("seed_dynamic_rnn", seed_dynamic_rnn,
           (_rng.uniform(size=(2, 3, 4)).astype(np.float32), np.zeros((2, 4), np.float32)),
           seed_dynamic_rnn_ref),
    Sample("nested_loops", nested_loops, (np.int64(5), np.int64(7)), nested_loops_ref),
    Sample("capped_loop", capped_loop, (np.float64(3.0),), capped_loop_ref),
    Sample("capped_loop_uncapped", capped_loop, (np.float64(300.0),), capped_loop_ref),
    Sample("doubling", doubling, (np.array([1, 2]), np.int64(3)), doubling_ref),
    Sample("nested_conds_pp", nested_conds, (np.float64(2.0), np.float64(3.0)), nested_conds_ref),
    Sample("nested_conds_pn", nested_conds, (np.float64(2.0), np.float64(-3.0)), nested_conds_ref),
    Sample("nested_conds_np", nested_conds, (np.float64(-2.0), np.float64(3.0)), nested_conds_ref),
    Sample("nested_conds_nn", nested_conds, (np.float64(-2.0), np.float64(-3.0)), nested_conds_ref),
    Sample("print_order", print_order, (np.int64(4),), print_order_ref),
    Sample("fizzbuzz_codes", fizzbuzz_codes, (np.int64(16),), fizzbuzz_codes_ref),
]
