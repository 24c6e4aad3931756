"""python -m benchmarks.loop_gradient_layout [--rounds N] [--json PATH] [--native]

Where the backward loop of benchmark case 11 (an RNN `h = tanh(h @ W + x_t)`, T = 1000,
H = 64, B = 32, float64) spends its time, and what two changes to it are worth.

1. autograph itself, `value_and_grad` over the forward pass (the case-11 goal: <= 2.5x),
   with and without `runtime/exec/loop_layout.py` (the hoisted `W.T` that the backward
   loop's `ct @ W.T` reads copied into C order once before the loop). Without it is
   obtained by turning the pass off while the functions are first traced.
2. Hand-written NumPy backward loops over the same stored states, to price the structural
   rewrite proposed for issue 30 (accumulate the weight gradient `sum_t h[t-1].T @ dz[t]`
   as ONE matmul over stacked factors after the loop, instead of a 64x64 product and add
   per step):
   - `per_step`: what the generated code does (the product and add in the loop);
   - `no_weight_grad`: the loop without that product and add (the most the rewrite could
     save);
   - `stacked`: dz written into a preallocated (T, B, H) buffer, the saved states stacked,
     one (H, T*B) @ (T*B, H) matmul after the loop (the rewrite, with its copies);
   - `stacked_matmul_only`: just that one big matmul on ready stacks (its floor).

`--native` also checks (no timing) that case 11's gradient under `jit_compile=True`, whose
backward loop reads the C-ordered copy in Numba, equals codegen's (its compile takes ~15 s;
in the suite, tests/runtime/test_native_grad.py's RNN gradient runs through the pass).

CPU time (`time.process_time`), BLAS/OpenMP threads pinned to 1, medians of interleaved
rounds (the two autograph variants alternating which goes first); the load average is
recorded with the results. The trace cache is off, so both autograph variants are traced
and optimised in this process.
"""

import argparse
import json
import os
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ["AUTOGRAPH_TRACE_CACHE"] = "0"   # both variants traced and optimised here

import numpy as np  # noqa: E402

T, H, B = 1000, 64, 32


def _data():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((H, H)) / np.sqrt(H)
    xs = 0.5 * rng.standard_normal((T, B, H))
    return W, xs, np.zeros((B, H))


def _autograph_pair(layout):
    """(forward, value_and_grad) of case 11's loss, traced with the layout pass on/off."""
    import autograph as ag
    from autograph.runtime.exec import loop_layout
    from benchmarks.cases.rnn_grad import make_loss
    W, xs, h0 = _data()
    fwd, vg = ag.function(make_loss(ag)), ag.value_and_grad(make_loss(ag))
    real = loop_layout.contiguous_operands
    if not layout:
        loop_layout.contiguous_operands = lambda graph: 0
    try:
        fwd(W, xs, h0), vg(W, xs, h0)          # traced and optimised now
    finally:
        loop_layout.contiguous_operands = real
    return (lambda: fwd(W, xs, h0)), (lambda: vg(W, xs, h0))


def _hand():
    W, xs, h0 = _data()
    states = [h0]
    h = h0
    for t in range(T):
        m = h @ W
        h = np.tanh(np.add(m, xs[t], out=m), out=m)
        states.append(h)
    WT = W.T

    def backward(mode):
        ct, acc = np.ones((B, H)), np.zeros((H, H))
        buf = np.empty((T, B, H)) if mode == "stacked" else None
        for j in range(T, 0, -1):
            g = states[j]
            m = g * g
            d = np.multiply(ct, np.subtract(1.0, m, out=m), out=m)
            ct = d @ WT
            if mode == "per_step":
                p = states[j - 1].T @ d
                acc = np.add(acc, p, out=p)
            elif mode == "stacked":
                buf[j - 1] = d
        if mode == "stacked":
            acc = np.stack(states[:T]).reshape(-1, H).T @ buf.reshape(-1, H)
        return acc

    A = np.stack(states[:T]).reshape(-1, H)
    D = np.random.default_rng(1).standard_normal((T * B, H))
    assert np.allclose(backward("per_step"), backward("stacked"))
    return {"per_step": lambda: backward("per_step"),
            "no_weight_grad": lambda: backward("none"),
            "stacked": lambda: backward("stacked"),
            "stacked_matmul_only": lambda: A.T @ D}


def _check_native():
    import autograph as ag
    from benchmarks.cases.rnn_grad import make_loss
    W, xs, h0 = _data()
    xs = xs[:50]
    vg = ag.value_and_grad(make_loss(ag))
    native = ag.function(lambda W, xs, h0: vg(W, xs, h0), jit_compile=True)
    start = time.process_time()
    got, want = native(W, xs, h0), vg(W, xs, h0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    print(f"native value_and_grad (T=50) equals codegen's "
          f"(first call {time.process_time() - start:.1f} s CPU)")


def _cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.loop_gradient_layout")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--json", default=None)
    p.add_argument("--native", action="store_true")
    args = p.parse_args(argv)
    if args.native:
        _check_native()
    fwd_on, vg_on = _autograph_pair(True)
    fwd_off, vg_off = _autograph_pair(False)
    # the autograph pairs alternate which goes first, and run apart from the hand-written
    # loops: the first call after a large free pays the heap's page faults again (glibc
    # returns the 16 MB of a previous call's stored states to the system), which made
    # whichever ran first look 10% slower
    pairs = [{"forward": fwd_on, "value_and_grad (layout pass on)": vg_on},
             {"forward (traced with the pass off)": fwd_off,
              "value_and_grad (layout pass off)": vg_off}]
    hand = {f"hand backward: {k}": f for k, f in _hand().items()}
    samples = {k: [] for pair in pairs for k in pair}
    samples.update({k: [] for k in hand})
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for pair in (pairs if r % 2 == 0 else pairs[::-1]):
            for name, fn in pair.items():
                samples[name].append(_cpu(fn))
    for _ in range(args.rounds):
        for name, fn in hand.items():
            samples[name].append(_cpu(fn))
    load.append(os.getloadavg()[0])
    med = {k: float(np.median(v)) for k, v in samples.items()}
    print(f"T={T} H={H} B={B} float64, CPU medians of {args.rounds} interleaved rounds, "
          f"load average {load[0]:.2f} -> {load[1]:.2f}")
    for name, m in med.items():
        print(f"  {name:40s} {m * 1e3:8.2f} ms")
    on = med["value_and_grad (layout pass on)"] / med["forward"]
    off = med["value_and_grad (layout pass off)"] / med["forward (traced with the pass off)"]
    print(f"value_and_grad / forward: {on:.2f}x with the layout pass, {off:.2f}x without")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"T": T, "H": H, "B": B, "rounds": args.rounds, "load_average": load,
                       "median_cpu_s": med, "samples_cpu_s": samples,
                       "ratio_with_layout": on, "ratio_without_layout": off,
                       "numpy": np.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
