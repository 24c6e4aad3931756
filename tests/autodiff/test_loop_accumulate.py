"""A loop's cotangent of an array it reads by index (`xs[t]`) is accumulated row by row:
exact (central differences, orders 1 and 2; the interpreter), and linear work — the
number of full-size arrays made does not grow with the trip count."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, loop_inplace
from autograph.runtime.ir import primitives

RTOL = 1e-6


def rnn(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def unrolled(W, xs, h0):            # a Python loop over a static length: unrolled by tracing
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def two_reads(W, xs, h0):          # two rows of xs per step: a sum of two scatters
    h = h0
    for t in ag.range(1, xs.shape[0]):
        h = np.tanh(h @ W + xs[t] - 0.5 * xs[t - 1])
    return np.sum(h * h)


def embedding(E, ids):              # an advanced index whose rows repeat (np.add.at)
    s = np.zeros(E.shape[1])
    for t in ag.range(ids.shape[0]):
        s = np.sin(s + np.take(E, ids[t], axis=0).sum(axis=0))
    return np.sum(s)


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((3, 3)) / 2
    xs = 0.5 * rng.standard_normal((n, 2, 3))
    return W, xs, np.zeros((2, 3))


def _fd(fn, x, d, eps=1e-5):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


@pytest.mark.parametrize("f", [rnn, two_reads, unrolled])
def test_first_and_second_order_against_finite_differences(f):
    W, xs, h0 = _data(7)
    rng = np.random.default_rng(1)
    d, u = rng.standard_normal(xs.shape), rng.standard_normal(xs.shape)
    g = ag.grad(f, argnums=1)
    expected = _fd(lambda x: f(W, x, h0), xs, d)
    np.testing.assert_allclose(np.sum(g(W, xs, h0) * d), expected, rtol=RTOL)
    hvp = ag.grad(lambda W, x, h0: np.sum(g(W, x, h0) * d), argnums=1)(W, xs, h0)
    expected2 = _fd(lambda x: np.sum(g(W, x, h0) * u), xs, d)
    np.testing.assert_allclose(np.sum(hvp * u), expected2, rtol=RTOL, atol=1e-9)


def test_repeated_rows_add_up():
    rng = np.random.default_rng(2)
    E = rng.standard_normal((5, 3))
    ids = np.array([[0, 0], [3, 1], [0, 4], [3, 3]])
    g = ag.grad(embedding)(E, ids)
    d = rng.standard_normal(E.shape)
    np.testing.assert_allclose(np.sum(g * d), _fd(lambda e: embedding(e, ids), E, d), rtol=RTOL)


def test_indexed_variable_in_a_loop():
    W, xs, h0 = _data(6)
    v = ag.Variable(xs)

    @ag.function
    def step(W, h0):
        with ag.GradientTape() as tape:
            value = rnn(W, v.read_value(), h0)
        return tape.gradient(value, v)
    expected = ag.grad(rnn, argnums=1)(W, xs, h0)
    np.testing.assert_allclose(step(W, h0), expected, rtol=1e-12)


def _gradient_graph(n, f=rnn):
    W, xs, h0 = _data(n)

    @ag.function
    def step(W, xs, h0):
        with ag.GradientTape() as tape:
            tape.watch(xs)
            value = f(W, xs, h0)
        return tape.gradient(value, xs)
    return step.get_concrete_function(W, xs, h0)._graph_to_run(), (W, xs, h0)


def test_codegen_updates_in_place_and_agrees_with_the_interpreter():
    graph, args = _gradient_graph(6)
    loops = [nd for nd in graph.nodes if nd.op == "while_loop"]
    backward = loops[-1]
    chains = loop_inplace.plan(backward)
    assert [nd.op for chain in chains.values() for nd in chain] == ["ufunc_at"]
    # no node of the backward body makes an array of xs's shape but the row update
    full = [nd.op for nd in backward.attrs["body_graph"].nodes
            if nd.op != "Placeholder" and nd.outputs[0].shape == args[1].shape]
    assert full == ["ufunc_at"]
    src = codegen.source_of(graph)      # `acc[t] += row`: in place, as NumPy code writes it
    assert "] += " in src and "k_ufunc_at(" not in src
    before = [a.copy() for a in args]
    fast = codegen.compile_graph(graph)(*args)
    np.testing.assert_allclose(fast[0], interpreter.run(graph, list(args))[0], rtol=1e-13)
    for a, b in zip(args, before):      # the caller's arrays are not written
        np.testing.assert_array_equal(a, b)
    again = codegen.compile_graph(graph)(*args)   # nor the graph's constants
    np.testing.assert_array_equal(again[0], fast[0])


def _full_size_arrays(n, monkeypatch, f=rnn):
    """How many arrays of xs's size the kernels make while computing the gradient."""
    graph, args = _gradient_graph(n, f)
    size, made = args[1].size, [0]

    def counting(kernel):
        def run(*a, **k):
            out = kernel(*a, **k)
            if getattr(out, "size", 0) == size and not any(out is x for x in a):
                made[0] += 1
            return out
        return run
    for name in list(primitives.PRIMITIVES):
        prim = primitives.PRIMITIVES[name]
        if callable(prim.kernel):
            monkeypatch.setitem(primitives.PRIMITIVES, name,
                                primitives.replace(prim, kernel=counting(prim.kernel)))
    monkeypatch.setattr(loop_inplace, "_copy", counting(loop_inplace._copy))
    monkeypatch.setitem(loop_inplace.KERNELS, "ufunc_at",
                        counting(loop_inplace.KERNELS["ufunc_at"]))
    codegen.compile_graph(graph)(*args)
    return made[0]


@pytest.mark.parametrize("f", [rnn, unrolled])
def test_full_size_arrays_do_not_grow_with_the_trip_count(monkeypatch, f):
    short = _full_size_arrays(5, monkeypatch, f)
    long = _full_size_arrays(40, monkeypatch, f)
    assert short == long <= 2     # the accumulator (or zeros) made once, none per step


def test_unrolled_reads_are_one_chain_of_row_updates_in_place():
    graph, args = _gradient_graph(6, unrolled)
    updates = loop_inplace.straight_line(graph)
    # six rows: the first copies the zeros (a constant once folded), the rest write in place
    assert len(updates) >= 5 and {nd.op for nd in updates} <= {"ufunc_at", "setitem"}
    assert not any(nd.op == "add" and nd.outputs[0].shape == args[1].shape
                   for nd in graph.nodes)
    fast = codegen.compile_graph(graph)(*args)
    np.testing.assert_allclose(fast[0], interpreter.run(graph, list(args))[0], rtol=1e-13)


def test_a_state_and_its_next_value_share_one_stack():
    """The rules of h = tanh(h @ W + x_t) read h (for W's cotangent) and tanh(...), the
    next h: one stack of the N + 1 states, one push per step (and the initial state)."""
    from benchmarks.cases.rnn_grad import hand_value_and_grad
    W, xs, h0 = _data(9)

    @ag.function
    def step(W, xs, h0):
        with ag.GradientTape() as tape:
            tape.watch(W)
            value = rnn(W, xs, h0)
        return value, tape.gradient(value, W)
    graph = step.get_concrete_function(W, xs, h0).graph
    forward = next(nd for nd in graph.nodes if nd.op == "while_loop")
    body_pushes = [nd for nd in forward.attrs["body_graph"].nodes if nd.op == "ad_stack_push"]
    assert len(body_pushes) == 1
    assert sum(nd.op == "ad_stack_new" for nd in graph.walk()) == 1
    value, g = step(W, xs, h0)
    hand_value, hand_g = hand_value_and_grad(W, xs, h0)
    np.testing.assert_allclose(value, hand_value, rtol=1e-13)
    np.testing.assert_allclose(g, hand_g, rtol=1e-12)
