"""What a progress bar costs a staged loop (issue 34: <= 2% at 100 updates).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.progress [--quick]
        [--rounds 15] [--bar line|tqdm] [--json FILE] [--only rnn_add ...]

The same loop with and without a bar, as `ag.function`: `ag.range(n)` against
`ag.range(n, progress=True)`, and a dataset loop against the same over `ds.progress()`.
Each sample is the CPU time (time.process_time) of enough calls to take ~50 ms, BLAS
threads pinned to 1, the garbage collector off; the two sides alternate (A B B A ...)
for `--rounds` rounds. The table gives each side's median per call and the median of the
per-round ratios (the overhead). The bar is updated ~100 times per call (UPDATES) and
drawn into a stream thrown away: the plain line (`--bar line`, the default) or tqdm's bar
(`--bar tqdm`).

- rnn_tanh: a tanh RNN step (`h = tanh(x[t] @ W + h @ U)`, batch 32, 128 units, 1,000 steps);
- rnn_add: case 5's step (`state = inp + state`, 32 x 256 float32, 1,000 steps);
- scalar: a float scalar loop of 10,000 steps (~100 ns of work a step): its difference
  per step is what the bar costs an iteration (the `if i >= bar:` test) plus the ~100
  updates spread over the steps;
- dataset: an SGD epoch over `from_tensor_slices((x, y)).batch(64)` (65,536 x 32, 1,024
  steps: benchmark 8's epoch without the shuffle);
- and the bar's own work, timed alone: one update (the kernel the generated code calls when
  one is due) and a bar opened and closed (what every run of a loop pays once).

What it measured (benchmarks/results/20261127-progress.txt; 2 cores shared with ~15 other
processes, load 13-17, so +-2-3% of noise between runs), the plain line:

    loop         steps  no bar (ms)   bar (ms)  overhead  per step (ns)
    rnn_tanh      1000       78.277     79.341      1.3%           1064
    rnn_add       1000        4.992      5.259      5.1%            267
    scalar       10000        1.265      1.474     16.6%             21
    dataset       1024       10.795     11.136      2.8%            333
    one update: 825 ns; a bar opened and closed: 4.3 us; so 100 updates a run: 87 us

(other runs: rnn_tanh 1.3-2.2%, rnn_add 3.3-5.2%, dataset 2.8-6.8%). With tqdm's bar
(`--bar tqdm`) an update costs ~1.1 us and tqdm's bar ~150 us to make and close. The
version that called the bar's kernel on every iteration measured +8-10% on rnn_tanh and
~2.5x on the scalar loop. benchmarks/progress_instructions.py counts the same in
instructions, which the load does not move.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402


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


def sgd(ds, w):
    for xb, yb in ds:
        w = w - 0.01 * (xb.T @ (xb @ w - yb)) / 64.0
    return w


def cases(quick):
    steps = 100 if quick else 1000
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(steps, 32, 128)) / np.sqrt(128)
    W, U = rng.normal(size=(2, 128, 128)) / np.sqrt(128)
    rows = 4096 if quick else 65536
    x = rng.normal(size=(rows, 32))
    y = x @ rng.normal(size=32)
    ds = ag.data.Dataset.from_tensor_slices((x, y)).batch(64)
    train = ag.function(sgd)
    return [
        ("rnn_tanh", steps, ag.function(rnn_tanh), ag.function(rnn_tanh_bar),
         (xs, W, U, np.zeros((32, 128))), None),
        ("rnn_add", steps, ag.function(rnn_add), ag.function(rnn_add_bar),
         (rng.uniform(size=(steps, 32, 256)).astype(np.float32),
          np.zeros((32, 256), np.float32)), None),
        ("scalar", 10 * steps, ag.function(scalar), ag.function(scalar_bar),
         (np.float64(0.5), np.int64(10 * steps)), None),
        ("dataset", rows // 64, train, train, (ds, np.zeros(32)), (ds.progress(), np.zeros(32))),
    ]


def sample(fn, args, number):
    """CPU seconds per call over `number` calls."""
    gc.disable()
    try:
        t = time.process_time()
        for _ in range(number):
            fn(*args)
        return (time.process_time() - t) / number
    finally:
        gc.enable()


def bar_alone(number=20000):
    """CPU seconds of one update (what the generated code calls when one is due) and of a bar's open and
    close, medians of 5 samples, the line drawn into a stream thrown away."""
    from autograph.runtime import progress
    updates, runs = [], []
    saved = progress.UPDATES
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            progress.UPDATES = 10 ** 12           # (every iteration is an update)
            for _ in range(5):
                at = progress._open_kernel(np, 0, 10 ** 9, 1, desc="", token=-1, known=True,
                                           counted=False)
                t = time.process_time()
                for i in range(number):
                    at = progress.update(np, i, at, -1)
                updates.append((time.process_time() - t) / number)
                progress._close_kernel(np, at, -1, token=-1)
                t = time.process_time()
                for _ in range(number // 10):
                    at = progress._open_kernel(np, 0, 1000, 1, desc="", token=-1, known=True,
                                               counted=False)
                    progress._close_kernel(np, at, -1, token=-1)
                runs.append((time.process_time() - t) / (number // 10))
        finally:
            progress.UPDATES = saved
    return statistics.median(updates), statistics.median(runs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--bar", choices=("line", "tqdm"), default="line")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--only", nargs="*", help="these loops only (by name)")
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else options.rounds
    if options.bar == "line":
        sys.modules["tqdm"] = None      # (`import tqdm` fails: the plain line)
    print(f"{'loop':<10} {'steps':>7} {'no bar (ms)':>12} {'bar (ms)':>10} {'overhead':>9} "
          f"{'per step (ns)':>14}")
    sink = io.StringIO()
    results = []
    for name, steps, without, with_bar, args, bar_args in cases(options.quick):
        if options.only and name not in options.only:
            continue
        bar_args = args if bar_args is None else bar_args
        with contextlib.redirect_stderr(sink):
            np.testing.assert_allclose(with_bar(*bar_args), without(*args))
            t = time.process_time()
            without(*args)
            number = max(1, int(0.05 / max(time.process_time() - t, 1e-6)))
            plain, bar, ratios = [], [], []
            for r in range(rounds):
                order = ((without, args, plain), (with_bar, bar_args, bar))
                for fn, a, into in (order if r % 2 == 0 else order[::-1]):
                    into.append(sample(fn, a, number))
                ratios.append(bar[-1] / plain[-1])
                sink.seek(0)
                sink.truncate()
        a, b, ratio = statistics.median(plain), statistics.median(bar), statistics.median(ratios)
        per_step = (b - a) / steps * 1e9
        results.append({"loop": name, "steps": steps, "no_bar_ms": 1e3 * a, "bar_ms": 1e3 * b,
                        "overhead_percent": 100 * (ratio - 1), "per_step_ns": per_step,
                        "calls_per_sample": number, "rounds": rounds})
        print(f"{name:<10} {steps:>7} {1e3 * a:>12.3f} {1e3 * b:>10.3f} "
              f"{100 * (ratio - 1):>8.1f}% {per_step:>14.0f}")
    per_update, per_run = bar_alone()
    print(f"one update: {per_update * 1e9:.0f} ns; a bar opened and closed: "
          f"{per_run * 1e6:.1f} us; so 100 updates a run: "
          f"{(100 * per_update + per_run) * 1e6:.0f} us")
    results.append({"loop": "bar alone", "update_ns": per_update * 1e9,
                    "open_close_us": per_run * 1e6})
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"bar": options.bar, "load": os.getloadavg(), "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
