"""Hessian-vector product of the RNN loss (issue 33): `ag.hvp` against a hand-written
forward-over-reverse HVP in NumPy, timed in the same run.

    python -m benchmarks.hvp_rnn [--steps 1000] [--hidden 64] [--batch 32] [--repeat 5]

The loss is benchmarks/cases/rnn_grad.py's: `h = tanh(h @ W + x_t)` for T steps (a staged
`ag.range` loop), `sum(h_T)`; the HVP is with respect to W along V. The hand-written one
carries the tangent of every state forward beside the state (2 more matmuls per step),
stores both, and walks back with the cotangent and its tangent (6 matmuls per step): the
nine matmuls per step any forward-over-reverse HVP does. `ag.hvp` is
`jvp(grad(loss))` staged as one graph (the reverse pass's loops copied with tangents).
Both results are compared (to 1e-9), and each is timed best of `repeat` (wall clock, after
a warm-up call that traces). Goal: ag.hvp <= 1.5x the hand-written one.
"""

import argparse
import json
import time

import numpy as np

import autograph as ag
from benchmarks.cases.rnn_grad import make_loss


def hand_hvp(W, V, xs, h0):
    """H(W) V of sum(h_T) by forward-over-reverse, by hand."""
    n = xs.shape[0]
    hs = np.empty((n + 1,) + h0.shape)
    dhs = np.empty_like(hs)
    hs[0], dhs[0] = h0, 0.0
    h, dh = h0, np.zeros_like(h0)
    for t in range(n):
        hp, dhp = h, dh
        h = np.tanh(hp @ W + xs[t])
        dh = (1.0 - h * h) * (dhp @ W + hp @ V)
        hs[t + 1], dhs[t + 1] = h, dh
    g, dg = np.ones_like(h), np.zeros_like(h)
    dgW = np.zeros_like(W)
    for t in range(n, 0, -1):
        h, dh, hp, dhp = hs[t], dhs[t], hs[t - 1], dhs[t - 1]
        s = 1.0 - h * h
        d = g * s
        dd = dg * s - 2.0 * g * h * dh
        dgW += dhp.T @ d + hp.T @ dd
        g, dg = d @ W.T, dd @ W.T + d @ V.T
    return dgW


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def run(steps=1000, hidden=64, batch=32, repeat=5):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    V = rng.standard_normal((hidden, hidden))
    xs = 0.5 * rng.standard_normal((steps, batch, hidden))
    h0 = np.zeros((batch, hidden))
    loss = make_loss(ag)
    forward = ag.function(loss)

    def of_w(w):      # (xs and h0 are constants of the trace)
        return loss(w, ag.constant(xs), h0)

    def ours():
        return ag.hvp(of_w, (W,), (V,))
    start = time.perf_counter()
    first = ours()
    trace = time.perf_counter() - start
    forward(W, xs, h0)
    t_hand, ref = _best(lambda: hand_hvp(W, V, xs, h0), repeat)
    t_ours, got = _best(ours, repeat)
    t_fwd, _ = _best(lambda: forward(W, xs, h0), repeat)
    err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    assert np.allclose(first, ref, rtol=1e-9, atol=1e-9 * np.max(np.abs(ref))), err
    return {"steps": steps, "hidden": hidden, "batch": batch,
            "hand_written_s": round(t_hand, 4), "ag_hvp_s": round(t_ours, 4),
            "forward_s": round(t_fwd, 4), "ratio": round(t_ours / t_hand, 2),
            "hand_over_forward": round(t_hand / t_fwd, 1),
            "first_call_with_trace_s": round(trace, 2), "max_rel_error": err,
            "goal_ratio": 1.5}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(json.dumps(run(args.steps, args.hidden, args.batch, args.repeat), indent=1))


if __name__ == "__main__":
    main()
