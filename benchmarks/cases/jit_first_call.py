"""Case 13e (issue 30, goal 6): the first call of the RNN gradient under `jit_compile=True`.

`value_and_grad` of `h = tanh(h @ W + x_t)` (case 11's sizes: T = 1000, H = 64, B = 32,
float64) with respect to W, a never-seen function each call (its name differs, in every
run, so Numba's disk cache cannot answer for the function; the shared helpers and fused
loops, the same text in every program, load from it after the warm-up: native.md). Contenders:

- `numpy_hand`: the hand-written forward and backward pass (steady state: the reference and
  the floor, so the column reads "first calls per steady call");
- `autograph`: the first call without `jit_compile` (convert, trace, differentiate, codegen);
- `autograph_jit`: the first call with `jit_compile=True` (the same, then Numba compiles the
  differentiated graph);
- `autograph_jit_steady`: later calls of a compiled one (what the compile buys);
- `autograph_jit_new_process`: a new interpreter that imports autograph, defines the same
  loss in its own file and calls it once: the machine code comes from Numba's disk cache
  (the warm-up run wrote it); the whole process is timed (CPU of the child);
- `jax`: the first call of `jax.jit(jax.value_and_grad(loss))` through `lax.scan`, a new
  function object each call.

With `--quick` the compiling contenders are left out (tens of seconds each)."""

import functools
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import autograph, jax_contender
from benchmarks.cases.rnn_grad import hand_value_and_grad
from benchmarks.harness import Case, Contender, Goal, Unavailable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LOSS = """
def {name}(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)
"""

PROCESS = """import numpy as np
import autograph as ag
{loss}
d = np.load({data!r})
v, g = ag.function(ag.value_and_grad(rnn_loss_cached), jit_compile=True)(d["W"], d["xs"], d["h0"])
assert np.allclose(v, d["v"], rtol=1e-9) and np.allclose(g, d["g"], rtol=1e-9), "wrong result"
print(float(v))
"""


def _flat(value):
    v, g = value
    return np.concatenate([np.ravel(np.asarray(v)), np.ravel(np.asarray(g))])


def _data(quick):
    n, hidden, batch = (50, 8, 4) if quick else (1000, 64, 32)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    return W, xs, np.zeros((batch, hidden))


def _numba():
    try:
        import numba  # noqa: F401
        return True
    except ImportError:
        return False


def build(quick):
    ag = autograph()
    W, xs, h0 = _data(quick)
    counter = iter(range(1 << 62))
    run = os.urandom(4).hex()

    def fresh_loss():
        # (a token of this run in the name: the names of an earlier run on this machine
        # would find their machine code in Numba's disk cache and time a load)
        name = f"rnn_loss_{run}_{next(counter)}"
        return programs.fresh_function(LOSS.format(name=name), name, {"np": np, "ag": ag})

    def first_call(jit):
        def make():
            fn = ag.function(ag.value_and_grad(fresh_loss()), jit_compile=jit)
            return functools.partial(fn, W, xs, h0)
        return make

    def steady():
        fn = ag.function(ag.value_and_grad(fresh_loss()), jit_compile=True)
        fn(W, xs, h0)
        return functools.partial(fn, W, xs, h0)

    def new_process():
        folder = tempfile.mkdtemp(prefix="ag_jit_process_")
        data = os.path.join(folder, "data.npz")
        v, g = hand_value_and_grad(W, xs, h0)
        np.savez(data, W=W, xs=xs, h0=h0, v=v, g=g)
        script = os.path.join(folder, "jit_rnn.py")
        with open(script, "w") as f:
            f.write(PROCESS.format(loss=LOSS.format(name="rnn_loss_cached"), data=data))
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

        def call():
            out = subprocess.run([sys.executable, script], cwd=ROOT, env=env,
                                 capture_output=True, text=True)
            if out.returncode:
                raise RuntimeError(out.stderr.strip().splitlines()[-1])
            return float(out.stdout.split()[-1])
        return call

    def make_jax(jax, jnp, lax):
        jax.config.update("jax_enable_x64", True)
        args = (jnp.asarray(W), jnp.asarray(xs), jnp.asarray(h0))

        def first():
            def loss(W, xs, h0):       # a new function object: jax.jit's cache cannot answer
                def body(h, x):
                    return jnp.tanh(h @ W + x), None
                h, _ = lax.scan(body, h0, xs)
                return jnp.sum(h)
            fn = jax.jit(jax.value_and_grad(loss))

            def call():
                v, g = fn(*args)
                return v.block_until_ready(), g.block_until_ready()
            return call
        return first()

    contenders = [
        Contender("numpy_hand", lambda: functools.partial(hand_value_and_grad, W, xs, h0),
                  result=_flat),
        Contender("autograph", first_call(False), fresh=True, result=_flat),
    ]
    if quick:
        note = "--quick: a native compile per call"
        contenders += [Unavailable(n, note) for n in
                       ("autograph_jit", "autograph_jit_steady", "autograph_jit_new_process")]
        jx = jax_contender(make_jax, fresh=True)    # (says "not importable" without JAX)
        contenders.append(Unavailable("jax", "--quick: left out")
                          if isinstance(jx, Contender) else jx)
    elif not _numba():
        contenders += [Unavailable(n, "numba is not installed (pip install -e '.[native]')")
                       for n in ("autograph_jit", "autograph_jit_steady",
                                 "autograph_jit_new_process")]
    else:
        contenders += [
            Contender("autograph_jit", first_call(True), fresh=True, result=_flat, warmup=1),
            Contender("autograph_jit_steady", steady, result=_flat, warmup=1),
            Contender("autograph_jit_new_process", lambda: new_process(), check=False,
                      warmup=1),
        ]
    if not quick:
        jx = jax_contender(make_jax, fresh=True)
        if isinstance(jx, Contender):
            jx.result, jx.warmup = _flat, 1
        contenders.append(jx)
    return {"N": xs.shape[0], "H": W.shape[0], "B": h0.shape[0], "dtype": "float64"}, contenders


CASES = [Case(
    "13e_rnn_grad_jit_first_call", "jit_compile=True first call: value_and_grad of the tanh "
    "RNN, N=1000 H=64 B=32 f64", build, reference="numpy_hand", rtol=1e-9,
    goals=[Goal("[30.6] jit_compile=True first call <= 2 s", "autograph_jit", max_ns=2e9)])]
