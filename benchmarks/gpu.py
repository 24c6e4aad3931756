"""CPU vs GPU in one run: where a GPU device wins, and what data-dependent loops cost on it.

    python benchmarks/gpu.py            # sizes where a GPU should win (slow on a small CPU)
    python benchmarks/gpu.py --quick    # small sizes: checks the script and the CPU column
    python benchmarks/gpu.py --devices cpu,cuda,torch:cuda

Programs (each an `ag.function`, traced once, then timed on arrays already on the device):
- dynamic_rnn: the seed's RNN loop (`for i in ag.range(T)` writing a TensorArray) with a
  tanh(x W + s U) cell, [batch, time, features] in and out;
- matmul_loop: `n` steps of `x = tanh(x @ w) + 0.5 * x` on a square matrix;
- host_reads: a data-dependent `while` on a tiny array, so each iteration is dominated by
  reading the loop condition on the host (a device-to-host copy and a synchronisation on a
  GPU). Reported as microseconds per iteration.

Each device column is the compiled function on that device; `numpy eager` is the plain
Python function on NumPy arrays (and `cupy eager` the same on CuPy arrays when CuPy is
there). Devices that are missing are listed with the reason and skipped.
"""

import argparse
import sys
import time

import numpy as np

import autograph as ag
from autograph.runtime.devices import DeviceError, get_device


# -- the programs ------------------------------------------------------------------------------

def dynamic_rnn(input_data, initial_state, w, u):
    # [batch, time, features] -> [time, batch, features]
    x = np.transpose(input_data, (1, 0, 2))
    max_seq_len = x.shape[0]
    states = ag.TensorArray(input_data.dtype, size=max_seq_len)
    state = initial_state
    for i in ag.range(max_seq_len):
        state = np.tanh(x[i] @ w + state @ u)
        states = states.write(i, state)
    return np.transpose(states.stack(), (1, 0, 2))


def matmul_loop(x, w, n):
    for _ in ag.range(n):
        x = np.tanh(x @ w) + 0.5 * x
    return x


def host_reads(x, threshold):
    steps = 0
    while np.max(np.abs(x)) > threshold:
        x = x * 0.5
        steps += 1
    return steps


def make_cases(quick):
    rng = np.random.default_rng(0)
    if quick:
        b, t, f, m, n, small = 8, 16, 32, 128, 4, 2.0 ** 200
    else:
        b, t, f, m, n, small = 256, 64, 512, 2048, 10, 2.0 ** 1000
    rnn_args = (rng.standard_normal((b, t, f)).astype(np.float32),
                np.zeros((b, f), np.float32),
                (rng.standard_normal((f, f)) / np.sqrt(f)).astype(np.float32),
                (rng.standard_normal((f, f)) / np.sqrt(f)).astype(np.float32))
    mm_args = ((rng.standard_normal((m, m)) / np.sqrt(m)).astype(np.float32),
               (rng.standard_normal((m, m)) / np.sqrt(m)).astype(np.float32), n)
    iterations = int(np.log2(small))  # halving 2**k down to 1 takes k iterations
    reads_args = (np.full((4,), small), 1.0)
    return [
        ("dynamic_rnn", dynamic_rnn, rnn_args, f"batch {b}, time {t}, features {f}", None),
        ("matmul_loop", matmul_loop, mm_args, f"{m}x{m}, {n} steps", None),
        ("host_reads", host_reads, reads_args, f"{iterations} data-dependent iterations",
         iterations),
    ]


# -- timing ------------------------------------------------------------------------------------

def timed(call, sync, budget):
    """Best time of repeated calls, repeating until `budget` seconds are used (at least 2)."""
    call()
    sync()  # warm: trace, compile, allocate
    best, spent, runs = float("inf"), 0.0, 0
    while runs < 2 or spent < budget:
        start = time.perf_counter()
        call()
        sync()
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
        if runs >= 50:
            break
    return best


def on_device(args, dev):
    return tuple(dev.to_device(a) if isinstance(a, np.ndarray) else a for a in args)


def columns(names):
    """[(label, runner)] for the eager baselines and each available device."""
    cols = [("numpy eager", lambda fn, args: (lambda: fn(*args), lambda: None))]
    try:
        import cupy

        def cupy_eager(fn, args):
            placed = tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
            return (lambda: fn(*placed)), cupy.cuda.Device().synchronize
        cupy.cuda.runtime.getDeviceCount()
        cols.append(("cupy eager", cupy_eager))
    except Exception:  # noqa: BLE001 - no CuPy or no GPU: no such column
        pass
    for name in names:
        try:
            dev = get_device(name)
        except DeviceError as e:
            print(f"# {name}: skipped, {e}")
            continue

        def compiled(fn, args, dev=dev):
            f = ag.function(fn, device=dev.name)
            placed = on_device(args, dev)
            return (lambda: f(*placed)), dev.synchronize
        cols.append((dev.name, compiled))
    return cols


def check(reference, result):
    host = np.asarray(result.get() if hasattr(result, "get") else
                      (result.cpu().numpy() if hasattr(result, "cpu") else result))
    np.testing.assert_allclose(host, reference, rtol=2e-3, atol=2e-3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a CPU smoke run)")
    parser.add_argument("--devices", default="cpu,cuda,torch:cuda",
                        help="comma-separated device names (default: cpu,cuda,torch:cuda)")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timing per cell")
    args = parser.parse_args(argv)

    print("# devices:")
    for row in ag.list_devices():
        print(f"#   {row}")
    cols = columns([n for n in args.devices.split(",") if n])
    header = f"{'program':<12} {'size':<36}" + "".join(f"{label:>14}" for label, _ in cols)
    print(header)
    rows = {}
    for name, fn, fargs, size, iterations in make_cases(args.quick):
        reference = np.asarray(fn(*fargs))
        cells = []
        for label, runner in cols:
            try:
                call, sync = runner(fn, fargs)
                check(reference, call())
                seconds = timed(call, sync, args.budget)
                cells.append(f"{seconds * 1e6 / iterations:8.1f} us/it" if iterations
                             else f"{seconds * 1e3:11.2f} ms")
            except Exception as e:  # noqa: BLE001 - one failing cell must not hide the rest
                cells.append("error")
                print(f"# {name} on {label}: {type(e).__name__}: {e}", file=sys.stderr)
        print(f"{name:<12} {size:<36}" + "".join(f"{c:>14}" for c in cells))
        rows[name] = dict(zip((label for label, _ in cols), cells))
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
