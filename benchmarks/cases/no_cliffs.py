"""Cases 13a-13d: the cliffs of issue 30 ("Performance III: no cliffs").

- 13a prefix sum `out[i] = out[i - 1] + x[i]` over `ag.range`, n = 25k, 50k, 100k, steady
  state (a series: the report fits the growth exponent), against the same loop in plain
  Python (`numpy_eager`) and `numba.njit`; `autograph_jit` is `jit_compile=True`. The
  recurrence is written in place (runtime/exec/inplace_reads.py); it used to copy `out`
  every iteration (quadratic).
- 13b the RNN gradient `value_and_grad` of `h = tanh(h @ W + x_t)`, T = 10,000, H = 128,
  B = 16, float64: the backward pass decays through a stretch of subnormal floats.
  `autograph_flush` runs the same call under `ag.config.flush_denormals(True)`; JAX's
  `lax.scan` with `jax.checkpoint` on the step (XLA flushes subnormals itself).
- 13c first call (convert + trace + compile + run, a never-seen function each time) of
  generated functions of 100, 300 and 1,000 statements, straight-line (`y = y * 0.5 + x *
  c`) and with a staged `if`/`else` per block (scaling.generated_source): two growth
  series; at 1,000 straight-line statements `jax.jit`'s first call of the same text.
  Samples run with the cyclic collector on, as in a user's program (the harness turns it
  off elsewhere); autograph pauses it while it traces (autograph/gc_pause.py). Growth goal:
  exponent <= 1.1 (13a's too).
- 13d first call with `jit_compile=True` of a vectorised Mandelbrot over a plain
  `range(100)` (200x200 complex128), a never-seen function each time (its name differs, so
  Numba's cache cannot answer), against `jax.jit` of the same with `lax.fori_loop`:
  the range is one staged loop for native code (operators/jit_ranges.py), not 100 copies.
"""

import functools

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import (autograph, autograph_jit_contender, jax_contender,
                                     numba_contender)
from benchmarks.cases.rnn_grad import make_loss
from benchmarks.harness import Case, Contender, Goal, Unavailable

PREFIX_N = [25_000, 50_000, 100_000]


def prefix_sum_eager(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def _prefix_sum(ag):
    def prefix_sum(x):
        out = np.zeros_like(x)
        out[0] = x[0]
        for i in ag.range(1, x.shape[0]):
            out[i] = out[i - 1] + x[i]
        return out
    return prefix_sum


def _prefix_case(n):
    def build(quick):
        size = n // 10 if quick else n
        x = np.random.default_rng(0).uniform(size=size)
        contenders = [
            Contender("numpy_eager", lambda: functools.partial(prefix_sum_eager, x)),
            Contender("autograph", lambda: functools.partial(
                autograph().function(_prefix_sum(autograph())), x)),
            autograph_jit_contender(lambda ag: functools.partial(
                ag.function(_prefix_sum(ag), jit_compile=True), x)),
            numba_contender(lambda numba: functools.partial(numba.njit(prefix_sum_eager), x)),
        ]
        if quick and n != PREFIX_N[-1]:      # (a native compile per size: the last only)
            contenders = contenders[:2]
        return {"n": size, "x": size}, contenders
    goals = []
    if n == PREFIX_N[-1]:
        goals = [Goal("[30.1] <= 2x the plain Python loop", "autograph", "numpy_eager",
                      max_ratio=2.0),
                 Goal("[30.1] jit_compile=True <= 1.5x numba.njit", "autograph_jit", "numba",
                      max_ratio=1.5)]
    return Case(f"13a_prefix_sum_{n // 1000}k", f"prefix sum out[i] = out[i-1] + x[i], n={n}",
                build, goals=goals, rtol=1e-9, series="prefix sum n", x=n,
                floor="numpy_eager", max_exponent=1.1)


def _build_rnn_long(quick):
    n, hidden, batch = (200, 16, 4) if quick else (10_000, 128, 16)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    xs = 0.5 * rng.standard_normal((n, batch, hidden))
    h0 = np.zeros((batch, hidden))
    ag = autograph()
    vg = ag.value_and_grad(make_loss(ag))
    forward = ag.function(make_loss(ag))

    def flushed():
        with ag.config.flush_denormals(True):
            return vg(W, xs, h0)

    def make_jax(jax, jnp, lax):
        jax.config.update("jax_enable_x64", True)

        def loss(W, xs, h0):
            @jax.checkpoint
            def body(h, x):
                return jnp.tanh(h @ W + x), None
            h, _ = lax.scan(body, h0, xs)
            return jnp.sum(h)
        fn = jax.jit(jax.value_and_grad(loss))
        args = (jnp.asarray(W), jnp.asarray(xs), jnp.asarray(h0))

        def call():
            v, g = fn(*args)
            return v.block_until_ready(), g.block_until_ready()
        return call

    def flat(value):
        v, g = value
        return np.concatenate([np.ravel(np.asarray(v)), np.ravel(np.asarray(g))])

    contenders = [
        Contender("autograph", lambda: functools.partial(vg, W, xs, h0), result=flat),
        Contender("autograph_flush", lambda: flushed, result=flat),
        Contender("autograph_forward", lambda: functools.partial(forward, W, xs, h0),
                  check=False),
        jax_contender(make_jax),
    ]
    if isinstance(contenders[-1], Contender):
        contenders[-1].result = flat
    return {"N": n, "H": hidden, "B": batch, "dtype": "float64"}, contenders


FIRST_CALL_LINES = [100, 300, 1000]


def straight_source(lines):
    """A straight-line function of `lines` lines (NumPy and jax.numpy alike)."""
    body = ["def generated(x):", "    y = x * 0.0"]
    body += [f"    y = y * 0.5 + x * {k % 7 * 0.1 + 0.1:.1f}" for k in range(lines - 3)]
    body.append("    return x + y")
    return "\n".join(body) + "\n"


def _first_call_case(lines, branches):
    from benchmarks.cases.scaling import generated_source
    source = generated_source(lines) if branches else straight_source(lines)
    count = source.count("\n")
    kind = "branches" if branches else "straight"

    def build(quick):
        x = np.float64(0.3)
        text = source if not quick else (
            generated_source(lines // 10) if branches else straight_source(lines // 10))

        def make_ag():
            ag = autograph()
            fn = programs.fresh_function(text, "generated", {})
            return lambda: ag.function(fn)(x)

        def eager():
            fn = programs.fresh_function(text, "generated", {})
            return lambda: fn(x)

        def make_jax(jax, jnp, lax):
            jax.config.update("jax_enable_x64", True)
            jx = jnp.float64(0.3)

            def first():
                fn = programs.fresh_function(text, "generated", {})
                return lambda: jax.jit(fn)(jx).block_until_ready()
            return first()

        contenders = [Contender("numpy_eager", eager, fresh=True),
                      Contender("autograph", make_ag, fresh=True)]
        if not branches and lines == FIRST_CALL_LINES[-1]:
            contenders.append(jax_contender(make_jax, fresh=True))
        return {"lines": count, "x": count}, contenders
    goals = []
    if not branches and lines == FIRST_CALL_LINES[-1]:
        goals = [Goal("[30.5] <= 0.5x jax.jit's first call", "autograph", "jax",
                      max_ratio=0.5)]
    return Case(f"13c_first_call_{kind}_{lines}",
                f"first call of a {count}-line function ({kind})", build, goals=goals,
                series=f"first call lines ({kind})", x=count, rtol=1e-9, gc_enabled=True,
                max_exponent=1.1)



def _build_mandelbrot(quick):
    side = 50 if quick else 200
    c = (np.linspace(-2, 1, side)[None, :] + 1j * np.linspace(-1.5, 1.5, side)[:, None])
    counter = iter(range(1_000_000))

    def fresh():
        k = next(counter)
        return programs.fresh_function(programs.MANDELBROT.format(k=k), f"mandelbrot_{k}",
                                       {"np": np})

    def make_jit():
        ag = autograph()
        fn = fresh()
        return lambda: ag.function(fn, jit_compile=True)(c)

    def make_jax(jax, jnp, lax):
        jc = jnp.asarray(c)

        def mandelbrot(c):
            def body(i, state):
                z, count = state
                z = jnp.where(jnp.abs(z) <= 2.0, z * z + c, z)
                return z, count + (jnp.abs(z) <= 2.0)
            z0 = jnp.zeros_like(c)
            return lax.fori_loop(0, 100, body, (z0, jnp.zeros(c.shape, jnp.int64)))[1]
        jax.config.update("jax_enable_x64", True)
        return lambda: jax.jit(lambda c: mandelbrot(c))(jc).block_until_ready()

    def make_codegen():      # the same first call without jit_compile (unrolled)
        ag = autograph()
        fn = fresh()
        return lambda: ag.function(fn)(c)

    eager = fresh()
    contenders = [Contender("numpy_eager", lambda: functools.partial(eager, c)),
                  Contender("autograph", make_codegen, fresh=True)]
    if quick:       # every sample compiles (seconds): not in a smoke run
        contenders.append(Unavailable("autograph_jit", "--quick: a native compile per call"))
        return {"side": side, "iterations": 100, "dtype": "complex128"}, contenders
    try:
        import numba  # noqa: F401
        contenders.append(Contender("autograph_jit", make_jit, fresh=True))
    except ImportError:
        contenders.append(Unavailable("autograph_jit", "numba is not installed"))
    contenders.append(jax_contender(make_jax, fresh=True))
    return {"side": side, "iterations": 100, "dtype": "complex128"}, contenders


CASES = [_prefix_case(n) for n in PREFIX_N] + [
    _first_call_case(n, b) for b in (False, True) for n in FIRST_CALL_LINES] + [
    Case("13b_rnn_grad_long", "value_and_grad of tanh RNN, T=10000 H=128 B=16 f64 "
         "(a stretch of subnormals)", _build_rnn_long, reference="autograph", rtol=1e-9,
         goals=[Goal("[30.4] flush_denormals <= JAX+checkpoint", "autograph_flush", "jax",
                     max_ratio=1.0)]),
    Case("13d_mandelbrot_jit_first_call", "jit_compile=True first call: Mandelbrot over "
         "range(100), 200x200 complex128", _build_mandelbrot,
         goals=[Goal("[30.6] <= 2 s", "autograph_jit", max_ns=2e9)]),
]
