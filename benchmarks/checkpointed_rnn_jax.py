"""The checkpointed-RNN benchmark's loop in JAX, for comparison (run it where JAX is
installed: the `bench` extra's separate virtualenv).

    /work/benchvenv/bin/python -m benchmarks.checkpointed_rnn_jax            # T=100,000
    /work/benchvenv/bin/python -m benchmarks.checkpointed_rnn_jax --T 10000

JAX reverses only loops of a known length (`lax.scan`; a `while_loop` has no reverse
mode), so the data-dependent stop is a mask inside a scan of the full length. Variants,
each in a fresh process (XLA's buffers are not seen by tracemalloc: the memory is the
process's peak resident size during the gradient call, minus its size before the call,
after compiling):
- `store-all`: grad of the scan (XLA keeps what the backward pass needs per step);
- `remat-body`: `jax.checkpoint` around the step (the carry per step is still kept);
- `sqrt-segments`: a scan over sqrt(T) segments, each an inner scan wrapped in
  `jax.checkpoint`: about 2 sqrt(T) states (the usual JAX recipe; JAX has no binomial
  schedule).
Same sizes, input and loss as benchmarks/checkpointed_rnn.py; CPU seconds of the call.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
os.environ.setdefault("JAX_ENABLE_X64", "1")

K = 256


def _run(variant, T, H, B):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    rng = np.random.default_rng(0)
    W = jnp.asarray(rng.normal(size=(H, H)) / np.sqrt(H))
    h0 = jnp.asarray(rng.normal(size=(B, H)))
    xs = jnp.asarray(rng.normal(size=(K, B, H)) * 0.5)

    def step(carry, i):
        h, total, live = carry
        new = jnp.tanh(h @ W_ + xs[i % K])
        h = jnp.where(live, new, h)
        total = total + jnp.where(live, jnp.sum(h[:, 0]), 0.0)
        live = jnp.logical_and(live, jnp.sum(h * h) > 1e-9)
        return (h, total, live), None

    W_ = None

    def loss(W, h0):
        nonlocal W_
        W_ = W
        carry = (h0, jnp.zeros((), h0.dtype), jnp.array(True))
        if variant == "store-all":
            carry, _ = lax.scan(step, carry, jnp.arange(T))
        elif variant == "remat-body":
            carry, _ = lax.scan(jax.checkpoint(step), carry, jnp.arange(T))
        else:
            k = int(math.ceil(math.sqrt(T)))
            idx = jnp.arange(k * k).reshape(k, k)

            @jax.checkpoint
            def segment(c, ids):
                def masked(c, i):
                    out, _ = step(c, i)
                    keep = i < T
                    return jax.tree_util.tree_map(lambda a, b: jnp.where(keep, a, b),
                                                  out, c), None
                return lax.scan(masked, c, ids)[0], None
            carry, _ = lax.scan(segment, carry, idx)
        return carry[1] / B

    g = jax.jit(jax.grad(loss, argnums=(0, 1)))
    compiled = g.lower(W, h0).compile()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c0 = time.process_time()
    out = compiled(W, h0)
    jax.block_until_ready(out)
    cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(json.dumps({"cpu": cpu, "peak_kib": peak, "gW0": float(out[0][0, 0])}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--T", type=int, default=100_000)
    p.add_argument("--H", type=int, default=128)
    p.add_argument("--B", type=int, default=32)
    p.add_argument("--variant")
    p.add_argument("--variants", default="store-all,remat-body,sqrt-segments",
                   help="comma-separated (store-all at T=100,000 needs ~9 GB)")
    a = p.parse_args(argv)
    if a.variant:
        return _run(a.variant, a.T, a.H, a.B)
    run_variants("benchmarks.checkpointed_rnn_jax", "JAX", a)


def run_variants(module, label, a):
    """Run each of `a.variants` in a fresh process of `module` and print its line (the
    TensorFlow script's driver too)."""
    state_kib = a.B * a.H * 8 / 1024
    print(f"{label} {a.T:,} steps, H={a.H} B={a.B}, float64; one state = {state_kib:.0f} KiB")
    for v in a.variants.split(","):
        r = subprocess.run([sys.executable, "-m", module,
                            "--variant", v, "--T", str(a.T), "--H", str(a.H), "--B", str(a.B)],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"  {v}: failed: {r.stderr.strip().splitlines()[-1:]}")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"  {v:14s} {d['cpu']:8.1f} s CPU   peak RSS growth {d['peak_kib'] / 1024:9.1f} MiB"
              f" = {d['peak_kib'] / state_kib:9.1f} states   dL/dW[0,0] = {d['gW0']:.12g}",
              flush=True)


if __name__ == "__main__":
    main()
