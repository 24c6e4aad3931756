"""What `ag.config.check_numerics(True)` costs (issue 34), on the benchmark suite's loops.

    python -m benchmarks.check_numerics [--quick] [--rounds N] [--json PATH]

Each program's graph runs compiled three ways, rounds interleaved in one process: "off"
(the switch off: the generated code holds no check, tests/runtime/test_check_numerics.py
reads the source), "full" (every operation's result tested: what the switch did before
watch mode, and what it still does for graphs that cannot be run again) and "on" (what
`check_numerics(True)` compiles: watch mode, numerics_plan.py). Times are CPU time
(`time.process_time`, BLAS/OpenMP pinned to one thread before NumPy loads), medians over
the rounds, per call; overheads are against "off". The last column times the whole call
through `ag.function` (argument checks, the cache, the runner) with the switch on against
off: what a user sees.

- dynamic_rnn: case 5 (batch 32, length 100, features 256; `state = inp + state` and a
  TensorArray write per step): one memory-bound add per step, which the check reads again;
- rnn_tanh: a tanh RNN step (`h = tanh(x[t] @ W + h @ U)`, batch 32, 128 units, 100 steps):
  the check's pass is small beside the matmuls;
- rnn_grad: the gradient of rnn_tanh's sum of squares with respect to W and U (ag.grad in
  ag.function: the forward loop, its tape, the backward loop);
- collatz: case 3's scalar loop (NumPy integers: nothing to check, no float results);
- newton: a float scalar loop (`x = x - f(x)/f'(x)`): one math.isfinite per operation.
"""

import argparse
import functools
import json
import os
import statistics
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np    # noqa: E402 (after the thread pins)

import autograph as ag    # noqa: E402
from autograph.runtime.exec import codegen    # noqa: E402
from benchmarks.cases.dynamic_rnn import make_dynamic_rnn, rnn_step    # noqa: E402


def rnn_tanh(xs, W, U, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return h


def rnn_loss(W, U, xs, h):
    return np.sum(rnn_tanh(xs, W, U, h) ** 2)


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
        ("rnn_grad", ag.function(ag.grad(rnn_loss, argnums=(0, 1))),
         (W, U, xs, np.zeros((32, units)))),
        ("collatz", ag.function(collatz), (np.int64(27),)),
        ("newton", ag.function(newton), (np.float64(2.0), np.int64(100))),
    ]


def _compiled(fn, args):
    """The three compiled functions of `fn`'s graph for `args` ("off", "full", "on")."""
    if isinstance(fn, functools.partial):
        fn, args = fn.func, fn.args + args
    conc = fn.get_concrete_function(*args)
    flat = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    return {mode: codegen.compile_graph(conc.graph, None, flag)
            for mode, flag in (("off", False), ("full", "full"), ("on", True))}, flat


def _time(fn, args, repeat):
    t = time.process_time()
    for _ in range(repeat):
        fn(*args)
    return (time.process_time() - t) / repeat


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--json", help="write every sample here")
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else options.rounds
    record = {"load_before": os.getloadavg(), "rounds": rounds, "programs": {}}
    print(f"{'program':<12} {'off (us)':>10} {'full (us)':>10} {'on (us)':>10} "
          f"{'full':>8} {'on':>8} {'on, call':>9}")
    for name, fn, args in programs(options.quick):
        fns, flat = _compiled(fn, args)
        expected = fns["off"](*flat)
        for mode in ("full", "on"):
            for got, want in zip(fns[mode](*flat), expected):
                np.testing.assert_array_equal(got, want)
        start = time.perf_counter()
        fns["off"](*flat)
        repeat = max(1, int(0.05 / max(time.perf_counter() - start, 1e-7)))
        samples = {mode: [] for mode in (*fns, "call off", "call on")}
        for _ in range(rounds):
            for mode, f in fns.items():
                samples[mode].append(_time(f, flat, repeat))
            for checked in (False, True):
                with ag.config.check_numerics(checked):
                    samples[f"call {'on' if checked else 'off'}"].append(
                        _time(fn, args, repeat))
        med = {mode: statistics.median(v) for mode, v in samples.items()}
        record["programs"][name] = {"repeat": repeat, "median_s": med, "samples_s": samples}
        print(f"{name:<12} {1e6 * med['off']:>10.1f} {1e6 * med['full']:>10.1f} "
              f"{1e6 * med['on']:>10.1f} {100 * (med['full'] / med['off'] - 1):>7.1f}% "
              f"{100 * (med['on'] / med['off'] - 1):>7.1f}% "
              f"{100 * (med['call on'] / med['call off'] - 1):>8.1f}%")
    record["load_after"] = os.getloadavg()
    print(f"load average before/after: {record['load_before'][0]:.2f} / "
          f"{record['load_after'][0]:.2f}")
    if options.json:
        with open(options.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
