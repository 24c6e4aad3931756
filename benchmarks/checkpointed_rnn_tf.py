"""The checkpointed-RNN benchmark's loop in TensorFlow, for comparison (run it where
TensorFlow is installed, e.g. a virtualenv with `tensorflow-cpu`):

    /path/to/tf/venv/bin/python -m benchmarks.checkpointed_rnn_tf --T 10000

TensorFlow differentiates a `tf.while_loop` of unknown length (as autograph does) but
keeps what its backward pass needs at every step: it has no checkpointed loop gradient
(`tf.recompute_grad` re-runs one function's inside; wrapped around the step, each step's
carry is still kept). Variants, each in a fresh process; memory is the process's peak
resident size during the gradient call, minus its size before (after a first call that
traced it, at T = 10), since tracemalloc does not see TensorFlow's buffers:
- `store-all`: `tf.GradientTape` over the data-dependent `tf.while_loop`;
- `recompute-step`: the same with the step wrapped in `tf.recompute_grad`.
Same sizes, input and loss as benchmarks/checkpointed_rnn.py and checkpointed_rnn_jax.py;
CPU seconds of the call.
"""

import argparse
import json
import os
import resource
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

K = 256


def _run(variant, T, H, B):
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)

    rng = np.random.default_rng(0)
    W = tf.constant(rng.normal(size=(H, H)) / np.sqrt(H))
    h0 = tf.constant(rng.normal(size=(B, H)))
    xs = tf.constant(rng.normal(size=(K, B, H)) * 0.5)

    def step(h, W, i):
        return tf.tanh(h @ W + tf.gather(xs, i % K))

    if variant == "recompute-step":
        step = tf.recompute_grad(step)

    @tf.function
    def grad(W, h0, T):
        with tf.GradientTape() as tape:
            tape.watch([W, h0])

            def cond(i, h, total, live):
                return tf.logical_and(live, i < T)

            def body(i, h, total, live):
                h = step(h, W, i)
                total = total + tf.reduce_sum(h[:, 0])
                live = tf.reduce_sum(h * h) > 1e-9
                return i + 1, h, total, live

            _, _, total, _ = tf.while_loop(
                cond, body, (tf.constant(0), h0, tf.zeros((), h0.dtype), tf.constant(True)))
            loss = total / B
        return tape.gradient(loss, [W, h0])

    grad(W, h0, tf.constant(10))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c0 = time.process_time()
    out = grad(W, h0, tf.constant(T))
    gW0 = float(out[0][0, 0])
    cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(json.dumps({"cpu": cpu, "peak_kib": peak, "gW0": gW0}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--T", type=int, default=10_000)
    p.add_argument("--H", type=int, default=128)
    p.add_argument("--B", type=int, default=32)
    p.add_argument("--variant")
    p.add_argument("--variants", default="store-all,recompute-step")
    a = p.parse_args(argv)
    if a.variant:
        return _run(a.variant, a.T, a.H, a.B)
    from benchmarks.checkpointed_rnn_jax import run_variants
    run_variants("benchmarks.checkpointed_rnn_tf", "TensorFlow", a)


if __name__ == "__main__":
    main()
