"""What `ag.range(n, progress=True)` costs a staged loop (issue 34).

    python -m benchmarks.progress [--quick]

The same loop with and without a bar, as `ag.function`, rounds interleaved (best of N,
wall time; the bar writes to a stream thrown away). The bar's node runs once per iteration:
its kernel compares the counter with the next value worth drawing and returns, so ~100
redraws happen per run (UPDATES) and the cost per iteration is one Python call.

- rnn_tanh: a tanh RNN step (`h = tanh(x[t] @ W + h @ U)`, batch 32, 128 units, 1,000 steps);
- rnn_add: case 5's step (`state = inp + state`, 32 x 256 float32, 1,000 steps);
- scalar: a float scalar loop of 10,000 steps (the worst case: ~100 ns of work a step).
"""

import argparse
import contextlib
import io
import time

import numpy as np

import autograph as ag


def rnn_tanh(xs, W, U, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return h


def rnn_tanh_bar(xs, W, U, h):
    for t in ag.range(xs.shape[0], progress=True):
        h = np.tanh(xs[t] @ W + h @ U)
    return h


def rnn_add(xs, h):
    for t in ag.range(xs.shape[0]):
        h = xs[t] + h
    return h


def rnn_add_bar(xs, h):
    for t in ag.range(xs.shape[0], progress=True):
        h = xs[t] + h
    return h


def scalar(x, n):
    for _ in ag.range(n):
        x = x * 0.999 + 0.001
    return x


def scalar_bar(x, n):
    for _ in ag.range(n, progress=True):
        x = x * 0.999 + 0.001
    return x


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    options = parser.parse_args(argv)
    rounds, steps = (3, 100) if options.quick else (11, 1000)
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(steps, 32, 128)) / np.sqrt(128)
    W, U = rng.normal(size=(2, 128, 128)) / np.sqrt(128)
    cases = [
        ("rnn_tanh", rnn_tanh, rnn_tanh_bar, (xs, W, U, np.zeros((32, 128)))),
        ("rnn_add", rnn_add, rnn_add_bar,
         (rng.uniform(size=(steps, 32, 256)).astype(np.float32), np.zeros((32, 256), np.float32))),
        ("scalar", scalar, scalar_bar, (np.float64(0.5), np.int64(10 * steps))),
    ]
    print(f"{'loop':<10} {'steps':>7} {'no bar (ms)':>12} {'bar (ms)':>10} {'overhead':>9}")
    sink = io.StringIO()
    for name, without, with_bar, args in cases:
        f, g = ag.function(without), ag.function(with_bar)
        with contextlib.redirect_stderr(sink):
            np.testing.assert_allclose(g(*args), f(*args))
            best = [float("inf"), float("inf")]
            for _ in range(rounds):
                for k, fn in enumerate((f, g)):
                    t = time.perf_counter()
                    fn(*args)
                    best[k] = min(best[k], time.perf_counter() - t)
        n = int(args[-1]) if name == "scalar" else steps
        print(f"{name:<10} {n:>7} {1e3 * best[0]:>12.2f} {1e3 * best[1]:>10.2f} "
              f"{100 * (best[1] / best[0] - 1):>8.1f}%")


if __name__ == "__main__":
    main()
