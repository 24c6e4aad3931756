"""Checkpointed loop gradients (autodiff/checkpointed.py, revolve.py): equal to the
store-all gradient and to central differences in every mode, re-running exactly Revolve's
optimal number of body steps, keeping at most `c` snapshots."""

import math
from functools import lru_cache

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import revolve
from autograph.runtime.ir import primitives

from tests.autodiff.modes import MODES, fd, fd2

RNG = np.random.default_rng(7)
H, B = 3, 2
W = RNG.normal(size=(H, H)) * 0.6
XS = RNG.normal(size=(12, B, H))
H0 = RNG.normal(size=(B, H))


# -- counting body executions: a test-only identity primitive with a counter -----------------

CALLS = [0]


def _count_kernel(xp, x):
    CALLS[0] += 1
    return x


if "test_count_calls" not in primitives.PRIMITIVES:
    primitives.register(
        "test_count_calls", lambda x: [(x.dtype, x.shape, x.weak)], _count_kernel,
        # (its rule reads its input, so the taping step runs it too: one per step)
        vjp=lambda cts, node: [cts[0] + 0.0 * node.inputs[0]])


def counted(x):
    return primitives.bind1("test_count_calls", [primitives.convert(x)])


# -- the optimum, computed independently of revolve.py ---------------------------------------

def binomial_optimum(l, c):
    """Griewank's t(l, c) = r l - C(c + r, r - 1), r the least with C(c + r, c) >= l."""
    if l <= 1:
        return 0
    r = 0
    while math.comb(c + r, c) < l:
        r += 1
    return r * l - (math.comb(c + r, r - 1) if r >= 1 else 0)


@lru_cache(None)
def brute_force(l, c):
    if l <= 1:
        return 0
    if c == 1:
        return l * (l - 1) // 2
    return min(m + brute_force(l - m, c - 1) + brute_force(m, c) for m in range(1, l))


def test_binomial_formula_is_the_recursions_optimum():
    for c in range(1, 6):
        for l in range(1, 40):
            assert binomial_optimum(l, c) == brute_force(l, c) == revolve.optimal_advances(l, c)


# -- programs ----------------------------------------------------------------------------------

def rnn_counted(h0, xs, T):
    """A known trip count: `i < T`."""
    xs = ag.constant(xs)      # (a tensor: indexed by the loop counter)
    def body(i, h):
        return i + 1, np.tanh(counted(h) @ W + xs[i])
    return np.sum(ag.while_loop(lambda i, h: i < T, body, (np.int64(0), h0))[1] ** 2)


def rnn_until(h0, xs):
    """A data-dependent stop: run until the state's norm is small or the data ends."""
    xs = ag.constant(xs)      # (a tensor: indexed by the loop counter)
    def cond(i, h):
        return np.logical_and(i < xs.shape[0], np.sum(h * h) > 0.3)

    def body(i, h):
        return i + 1, np.tanh(h @ W + xs[i]) * 0.8
    i, h = ag.while_loop(cond, body, (np.int64(0), h0))
    return np.sum(h ** 3) + 0.1 * i.astype(np.float64)


def with_cond(h0, xs):
    xs = ag.constant(xs)      # (a tensor: indexed by the loop counter)
    def body(i, h):
        a = np.tanh(h @ W + xs[i])
        h = ag.cond(np.sum(a) > 0, lambda: a * np.sin(h), lambda: a - 0.5 * h)
        return i + 1, h
    return np.sum(ag.while_loop(lambda i, h: i < 9, body, (np.int64(0), h0))[1] ** 2)


def with_tensor_array(h0, xs):
    xs = ag.constant(xs)      # (a tensor: indexed by the loop counter)
    def body(i, h, ta):
        h = np.tanh(h @ W + xs[i])
        ta = ta.write(i, np.sum(h * h, axis=1))
        return i + 1, h, ta
    ta = ag.TensorArray(np.float64, size=7)
    _, h, ta = ag.while_loop(lambda i, h, ta: i < 7, body, (np.int64(0), h0, ta))
    return np.sum(ta.stack() * np.arange(1.0, 8.0)[:, None]) + np.sum(h)


V = ag.Variable(RNG.normal(size=(H, H)) * 0.5)


def with_variable(h0, xs):
    xs = ag.constant(xs)      # (a tensor: indexed by the loop counter)
    def body(i, h):
        return i + 1, np.tanh(h @ V.read_value() + xs[i]) + 0.1 * h
    return np.sum(ag.while_loop(lambda i, h: i < 8, body, (np.int64(0), h0))[1] ** 2)


def nested(h0, xs):
    """An inner loop whose length depends on the outer counter and the data."""
    def outer_body(i, h):
        def inner_body(k, g):
            return k + 1, np.sin(g @ W) + 0.1 * g
        _, h2 = ag.while_loop(lambda k, g: np.logical_and(k < i + 1, np.sum(g) < 50.0),
                              inner_body, (np.int64(0), h))
        return i + 1, np.tanh(h2) * 1.1
    return np.sum(ag.while_loop(lambda i, h: i < 5, outer_body, (np.int64(0), h0))[1] ** 2)


PROGRAMS = [rnn_until, with_cond, with_tensor_array, with_variable, nested]


def _tape(f, x, c, traced):
    with ag.GradientTape(checkpoints=c) as tape:
        if traced:
            tape.watch(x)
        else:
            x = tape.watch(x)
        y = f(x, XS)
    return tape.gradient(y, x)


def gradient(mode, f, x, c):
    if mode == "eager":
        return _tape(f, x, c, False)
    if mode == "traced":
        return ag.function(lambda x: _tape(f, x, c, True))(x)
    return ag.grad(lambda x: f(x, XS), checkpoints=c)(x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_equals_store_all_and_central_differences(mode, f):
    store_all = ag.grad(lambda x: f(x, XS))(H0)
    reference = fd(lambda x: f(x, XS), H0)
    np.testing.assert_allclose(store_all, reference, rtol=1e-6, atol=1e-8)
    for c in (1, 3):
        g = gradient(mode, f, H0, c)
        np.testing.assert_allclose(g, store_all, rtol=1e-12, atol=1e-13)


def test_variable_gradient_through_a_checkpointed_loop():
    def loss():
        return with_variable(H0, XS)
    with ag.GradientTape() as tape:
        y = loss()
    store_all = tape.gradient(y, V)
    with ag.GradientTape(checkpoints=2) as tape:
        y = loss()
    np.testing.assert_allclose(tape.gradient(y, V), store_all, rtol=1e-12)

    @ag.function
    def traced():
        with ag.GradientTape(checkpoints=3) as tape:
            y = loss()
        return tape.gradient(y, V)
    np.testing.assert_allclose(traced(), store_all, rtol=1e-12)


@pytest.mark.parametrize("T,c", [(1, 1), (2, 1), (10, 1), (10, 2), (12, 3), (12, 4), (12, 20)])
def test_known_trip_count_reruns_revolves_optimum(T, c):
    g = ag.grad(lambda h: rnn_counted(h, XS, T), checkpoints=c)
    expected = ag.grad(lambda h: rnn_counted(h, XS, T))(H0)
    g(H0)                       # (trace once: tracing runs no kernels, but keep it out)
    CALLS[0] = 0
    np.testing.assert_allclose(g(H0), expected, rtol=1e-12)
    # forward: T steps; backward: one taping run per step plus the advances. Revolve's
    # t(T, c) counts its forward sweep's T - 1 advances, which our forward pass made
    assert CALLS[0] == T + T + binomial_optimum(T, c) - (T - 1)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_reruns_revolves_optimum(mode):
    """The body runs a checkpointed gradient adds to a store-all one: one taping run per
    step and Revolve's advances (the eager tape runs the forward loop twice: recording,
    then again once the gradient has augmented it; both gradients do)."""
    T, c = 11, 3

    def f(x, xs):
        return rnn_counted(x, xs, T)
    runs = {}
    for budget in (None, c):
        g = (lambda: gradient(mode, f, H0, budget)) if mode != "traced" else \
            ag.function(lambda x: _tape(f, x, budget, True))
        call = g if mode != "traced" else (lambda g=g: g(H0))
        call()
        CALLS[0] = 0
        result = call()
        runs[budget] = (CALLS[0], result)
    np.testing.assert_allclose(runs[c][1], runs[None][1], rtol=1e-12)
    assert runs[c][0] - runs[None][0] == T + binomial_optimum(T, c) - (T - 1)


def test_snapshots_never_exceed_the_budget():
    for n in (1, 7, 50, 150):
        for c in (1, 2, 5, 32):
            for length in (n, None):
                st = revolve.Checkpoints(c, length)
                for p in range(n):
                    st.offer(p, p)
                    assert len(st.slots) <= c
                for i in range(n - 1, -1, -1):
                    s, x = st.restore(i)
                    assert x == s or (x == i and s == i)
                    for p in range(s, i):
                        st.offer(p, p)
                        assert len(st.slots) <= c


def test_set_loop_options_in_converted_code():
    def f(h0, xs):
        xs = ag.constant(xs)
        h = h0
        i = 0
        while i < xs.shape[0] and np.sum(h * h) > 0.3:
            ag.set_loop_options(checkpoints=2)
            h = np.tanh(h @ W + xs[i]) * 0.8
            i += 1
        return np.sum(h ** 3)
    store_all = ag.grad(f)(H0, XS)
    np.testing.assert_allclose(store_all, fd(f, H0, XS), rtol=1e-6, atol=1e-8)
    conc = ag.function(f).get_concrete_function(H0, XS)
    loops = [n for n in conc.graph.as_graph_def().node if n.op == "while_loop"]
    assert loops and all(getattr(n.attr["body_graph"], "loop_options", None) ==
                         {"checkpoints": 2} for n in loops)
    with ag.GradientTape() as tape:          # the loop's own option applies: checkpointed
        x = tape.watch(H0)
        y = ag.function(f)(x, XS)
    np.testing.assert_allclose(tape.gradient(y, x), store_all, rtol=1e-12)


def test_set_loop_options_picks_the_schedule():
    def f(h0, xs):
        h = h0
        for i in ag.range(12):
            ag.set_loop_options(checkpoints=3)
            h = np.tanh(counted(h) @ W + xs[i])
        return np.sum(h ** 2)
    g = ag.grad(f)
    g(H0, XS)
    CALLS[0] = 0
    g(H0, XS)
    assert CALLS[0] == 12 + 12 + binomial_optimum(12, 3) - 11


def test_bad_budgets_are_refused():
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="checkpoints must be a positive int"):
            ag.GradientTape(checkpoints=bad)
        with pytest.raises(ValueError, match="checkpoints must be a positive int"):
            ag.grad(np.sum, checkpoints=bad)
        with pytest.raises(ValueError, match="checkpoints must be a positive int"):
            ag.set_loop_options(checkpoints=bad)


def test_a_body_assigning_a_variable_is_refused():
    v = ag.Variable(0.0)

    def f(x):
        def body(i, h):
            v.assign_add(1.0)
            return i + 1, h * 2.0
        return ag.while_loop(lambda i, h: i < 3, body, (np.int64(0), x))[1]
    assert ag.grad(f)(np.float64(1.0)) == 8.0
    with pytest.raises(TypeError, match="must not assign a Variable"):
        ag.grad(f, checkpoints=2)(np.float64(1.0))


def test_second_derivative_is_refused_clearly():
    def inner(z):
        return rnn_until(z, XS)

    def outer(x):
        return np.sum(ag.grad(inner, checkpoints=2)(x))
    with pytest.raises(NotImplementedError, match="cannot be differentiated again"):
        ag.grad(outer)(H0)


def test_converted_loop_with_item_assignment():
    """Converted code writing into an array loop variable (an update the generated code
    may do in place): each snapshot must keep the value it was offered."""
    def f(x):
        y = np.zeros(6) + x[0] * 0.0
        i = 0
        s = x
        while i < 6:
            y[i] = np.sum(s) * 0.5
            s = np.sin(s) + y[i] * 0.1
            i += 1
        return np.sum(y ** 2) + np.sum(s)
    x = np.array([0.3, -0.2, 0.5])
    store_all = ag.grad(f)(x)
    np.testing.assert_allclose(store_all, fd(f, x), rtol=1e-6)
    for c in (1, 2, 3):
        np.testing.assert_allclose(ag.grad(f, checkpoints=c)(x), store_all, rtol=1e-12)


def test_a_saved_checkpointed_gradient_loads_and_runs():
    w = np.array([[0.5, -0.3], [0.2, 0.4]])

    @ag.function
    def step(h0, n):
        with ag.GradientTape(checkpoints=2) as tape:
            tape.watch(h0)
            h = h0
            i = 0
            while i < n:
                h = np.tanh(h @ w) + 0.1
                i += 1
            y = np.sum(h ** 2)
        return tape.gradient(y, h0)
    h0 = np.array([[0.3, -0.1]])
    expected = ag.grad(lambda h: np.sum(_run(h, w, 9) ** 2))(h0)
    np.testing.assert_allclose(step(h0, np.int64(9)), expected, rtol=1e-12)
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(step))
    np.testing.assert_allclose(loaded(h0, np.int64(9)), expected, rtol=1e-12)


def _run(h, w, n):
    for _ in range(n):
        h = np.tanh(h @ w) + 0.1
    return h


K = 16


def loss(w, h0, xs, n):
    """benchmarks/checkpointed_rnn.py's loop: an RNN stopped by its length or its data."""
    h = h0
    i = 0
    total = np.float64(0.0)
    while i < n and np.sum(h * h) > 1e-9:
        h = np.tanh(h @ w + xs[i % K])
        total = total + np.sum(h[:, 0])
        i += 1
    return total / h.shape[0]


def test_memory_is_the_snapshots_not_the_steps():
    """tracemalloc: with `c` snapshots the gradient's peak beyond a 2-step loop's (the
    backward pass's own working set) is about c states, not one per step (the full size,
    T = 100,000, is benchmarks/checkpointed_rnn.py)."""
    import tracemalloc
    hidden, batch, T, c = 64, 8, 200, 6
    rng = np.random.default_rng(0)
    w = rng.normal(size=(hidden, hidden)) / np.sqrt(hidden)
    h0 = rng.normal(size=(batch, hidden))
    xs = rng.normal(size=(K, batch, hidden)) * 0.5
    state = batch * hidden * 8

    def peak(fn, n):
        fn(w, h0, xs, np.int64(2))
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            out = fn(w, h0, xs, np.int64(n))
            return out, tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    store_all, checkpointed = ag.grad(loss, (0, 1)), ag.grad(loss, (0, 1), checkpoints=c)
    _, base = peak(store_all, 2)
    g_all, p_all = peak(store_all, T)
    g_ck, p_ck = peak(checkpointed, T)
    for a, b in zip(g_ck, g_all):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert (p_all - base) / state > 0.95 * T
    # c snapshots, the forward's last state, the re-run's few temporaries (and small
    # Python objects per step, which weigh more against a 4 KiB state)
    assert (p_ck - base) / state <= c + 16, (p_ck - base) / state


def _loop6(h0):
    def body(i, h):
        return i + 1, np.tanh(h @ W[:2, :2]) + 0.3 * np.sin(h)
    return np.sum(ag.while_loop(lambda i, h: i < 6, body, (np.int64(0), h0))[1] ** 2)


def test_a_persistent_tape_differentiates_a_checkpointed_loop_again():
    x = np.array([[0.3, -0.1]])

    def grads(x, c):
        with ag.GradientTape(persistent=True, checkpoints=c) as tape:
            tape.watch(x)
            y = _loop6(x)
            z = np.sum(np.sin(y))
        return tape.gradient(y, x), tape.gradient(z, x), tape.gradient(y, x)
    expected = ag.function(lambda x: grads(x, None))(x)
    for a, b in zip(ag.function(lambda x: grads(x, 2))(x), expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("mode", ["traced", "grad"])
def test_second_derivative_with_checkpointed_outer_gradient(mode):
    """Outer gradient checkpointed, inner store-all: the outer differentiates the inner
    backward loop and the forward loop's stacks (store-all's rule then applies there)."""
    x = np.array([[0.3, -0.1]])
    expected = ag.grad(lambda x: np.sum(ag.grad(_loop6)(x)))(x)
    np.testing.assert_allclose(expected, fd2(_loop6, x), rtol=1e-6, atol=1e-8)
    if mode == "grad":
        got = ag.grad(lambda x: np.sum(ag.grad(_loop6)(x)), checkpoints=2)(x)
    else:
        def second(x):
            with ag.GradientTape(checkpoints=2) as outer:
                outer.watch(x)
                with ag.GradientTape() as inner:
                    inner.watch(x)
                    y = _loop6(x)
                dy = inner.gradient(y, x)
            return outer.gradient(dy, x)
        got = ag.function(second)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
