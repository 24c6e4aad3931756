"""What `ag.config.check_numerics(True)` costs (issue 34), on the benchmark suite's loops.

    python -m benchmarks.check_numerics [--quick]

Each program runs as `ag.function` with the switch off and on, rounds interleaved (best of
N, wall time), and the table gives the time per call and the overhead. With the switch off
the generated code holds no check (tests/runtime/test_check_numerics.py reads the source),
so "off" is the plain compiled graph.

- dynamic_rnn: case 5 (batch 32, length 100, features 256; `state = inp + state` and a
  TensorArray write per step): one memory-bound add per step, which the check reads again;
- rnn_tanh: a tanh RNN step (`h = tanh(x[t] @ W + h @ U)`, batch 32, 128 units, 100 steps):
  the check's pass is small beside the matmuls;
- collatz: case 3's scalar loop (NumPy integers: nothing to check, no float results);
- newton: a float scalar loop (`x = x - f(x)/f'(x)`): one math.isfinite per operation.
"""

import argparse
import functools
import time

import numpy as np

import autograph as ag
from benchmarks.cases.dynamic_rnn import make_dynamic_rnn, rnn_step


def rnn_tanh(xs, W, U, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return h


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def newton(a, n):
    x = a
    for _ in ag.range(n):
        x = x - (x * x - a) / (2.0 * x)
    return x


def programs(quick):
    rng = np.random.default_rng(0)
    batch, length, features = (4, 10, 16) if quick else (32, 100, 256)
    data = rng.uniform(size=(batch, length, features)).astype(np.float32)
    h0 = np.zeros((batch, features), np.float32)
    units, steps = (16, 10) if quick else (128, 100)
    xs = rng.normal(size=(steps, 32, units)) / np.sqrt(units)
    W, U = rng.normal(size=(2, units, units)) / np.sqrt(units)
    return [
        ("dynamic_rnn", functools.partial(ag.function(make_dynamic_rnn(ag)), rnn_step),
         (data, h0)),
        ("rnn_tanh", ag.function(rnn_tanh), (xs, W, U, np.zeros((32, units)))),
        ("collatz", ag.function(collatz), (np.int64(27),)),
        ("newton", ag.function(newton), (np.float64(2.0), np.int64(100))),
    ]


def _time(fn, args, repeat):
    t = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - t) / repeat


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else 15
    print(f"{'program':<12} {'off (us)':>10} {'on (us)':>10} {'overhead':>9}")
    for name, fn, args in programs(options.quick):
        off = fn(*args)
        with ag.config.check_numerics(True):
            on = fn(*args)
        np.testing.assert_array_equal(on, off)
        start = time.perf_counter()
        fn(*args)
        repeat = max(1, int(0.02 / max(time.perf_counter() - start, 1e-7)))
        best = {False: float("inf"), True: float("inf")}
        for _ in range(rounds):
            for checked in (False, True):
                with ag.config.check_numerics(checked):
                    best[checked] = min(best[checked], _time(fn, args, repeat))
        print(f"{name:<12} {1e6 * best[False]:>10.1f} {1e6 * best[True]:>10.1f} "
              f"{100 * (best[True] / best[False] - 1):>8.1f}%")


if __name__ == "__main__":
    main()
