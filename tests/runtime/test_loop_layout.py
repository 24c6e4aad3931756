"""runtime/exec/loop_layout.py: a loop-invariant transpose that a loop's matmuls read is
copied into C order once before the loop. Where it fires (the RNN gradient's backward loop,
a user's `W.T` before a loop) and where not (other readers, transposes that keep the
matrix axes, unknown shapes); nothing is added per iteration; the values stay those of the
interpreter on the unoptimised graph, of eager NumPy, and gradients those of central
differences in every mode, for 0, 1 and many iterations. Native code (jit_compile=True)
reads the copy in tests/runtime/test_native_grad.py's RNN gradient (the pass runs in
`optimize`, before lowering); compiling a loop with a matmul takes Numba ~7 s CPU, so no
second one here: benchmarks/loop_gradient_layout.py --native checks case 11's gradient."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, loop_layout
from tests.autodiff import modes


def rnn(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def user_transpose(W, v, n):         # the user's W.T, made before the loop
    WT = np.transpose(W)
    s = v
    for i in ag.range(n):
        s = np.tanh(s @ WT)
    return s


def elementwise_reader(W, n):        # W.T read by an add: no matmul, no copy
    s = np.zeros_like(W)
    for i in ag.range(n):
        s = s + np.transpose(W)
    return s


def batched(A, v, n):                # (k, m, n) -> (k, n, m): the matrix axes swap
    s = v
    for i in ag.range(n):
        s = np.tanh(np.swapaxes(A, 1, 2) @ s)
    return s


def kept_axes(A, v, n):              # (k, m, n) -> (m, k, n): rows stay contiguous
    s = v
    for i in ag.range(n):
        s = np.tanh(np.transpose(A, (1, 0, 2)) @ s)
    return s


def nested(W, v, n):                 # W.T hoisted out of both loops, copied once per run
    s = v
    for i in ag.range(n):
        for j in ag.range(n):
            s = np.tanh(np.transpose(W) @ s)
    return s


def _data(n, batch=3, hidden=4):
    rng = np.random.default_rng(n)
    return (rng.standard_normal((hidden, hidden)) / 2,
            0.5 * rng.standard_normal((n, batch, hidden)),
            0.1 * rng.standard_normal((batch, hidden)))


def _copies(graph):
    """The inputs of graph's while_loops that are the pass's C-ordered copies."""
    return [t for nd in graph.walk() if nd.op == "while_loop" for t in nd.inputs
            if t.node.op == "reshape" and t.node.inputs[0].node.op == "reshape"
            and t.node.inputs[0].node.inputs[0].node.op == "permute_dims"]


def _loop_bodies(graph):
    return [[nd.op for nd in loop.attrs["body_graph"].nodes if nd.op != "Placeholder"]
            for loop in graph.walk() if loop.op == "while_loop"]


def _optimised(f, *args, layout=True):
    real = loop_layout.contiguous_operands
    if not layout:
        loop_layout.contiguous_operands = lambda graph: 0
    try:
        conc = ag.function(f).get_concrete_function(*args)
        return conc.graph, conc._graph_to_run()
    finally:
        loop_layout.contiguous_operands = real


def _agree(f, *args, rtol=1e-13):
    raw, opt = _optimised(f, *args)
    arrays = [np.asarray(a) for a in args]
    fast = codegen.compile_graph(opt)(*arrays)
    for x, y in zip(fast, interpreter.run(raw, arrays)):
        np.testing.assert_allclose(x, y, rtol=rtol)
    np.testing.assert_allclose(fast[0], f(*args), rtol=rtol)
    return opt


def test_the_mechanism_gives_a_c_ordered_copy_of_the_same_values():
    x = np.arange(12.0).reshape(3, 4).T
    flat = np.reshape(x, (-1,))
    back = np.reshape(flat, x.shape)
    assert not x.flags.c_contiguous and back.flags.c_contiguous
    assert not np.shares_memory(back, x)
    np.testing.assert_array_equal(back, x)


def test_it_fires_on_the_rnn_gradient_and_adds_no_work_per_iteration():
    W, xs, h0 = _data(5)
    vg = lambda W, xs, h0: ag.value_and_grad(rnn)(W, xs, h0)   # noqa: E731
    _, with_pass = _optimised(vg, W, xs, h0)
    _, without = _optimised(vg, W, xs, h0, layout=False)
    copies = _copies(with_pass)
    assert len(copies) == 1 and copies[0].shape == (4, 4)
    assert not _copies(without)
    # the loops' bodies are the same node for node: one copy before the loop, not per step
    assert _loop_bodies(with_pass) == _loop_bodies(without)
    assert [b.count("matmul") for b in _loop_bodies(with_pass)] == [1, 2]
    # the loop reading the copy is the backward loop, and its matmul reads it
    loop = next(nd for nd in with_pass.walk() if nd.op == "while_loop"
                and any(t is copies[0] for t in nd.inputs))
    bg = loop.attrs["body_graph"]
    ph = bg.inputs[[k for k, t in enumerate(loop.inputs) if t is copies[0]][0]]
    assert any(nd.op == "matmul" and any(t is ph for t in nd.inputs) for nd in bg.nodes)
    value, grad = ag.value_and_grad(rnn)(W, xs, h0)
    np.testing.assert_allclose(grad, modes.fd(lambda w: rnn(w, xs, h0), W), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(value, rnn(W, xs, h0), rtol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_users_transpose_before_the_loop(n):
    W, _, h0 = _data(3)
    opt = _agree(user_transpose, W, h0, np.int64(n))
    assert len(_copies(opt)) == 1


@pytest.mark.parametrize("n", [0, 1, 3])
def test_nested_loops(n):
    W, _, h0 = _data(2)
    opt = _agree(nested, W, h0.T, np.int64(n))
    assert len(_copies(opt)) == 1
    assert [nd.op for nd in opt.nodes].count("reshape") == 2   # before both loops


@pytest.mark.parametrize("f", [elementwise_reader, kept_axes])
def test_other_readers_and_contiguous_rows_are_left_alone(f):
    rng = np.random.default_rng(1)
    if f is elementwise_reader:
        opt = _agree(f, rng.standard_normal((3, 3)), np.int64(4))
    else:
        opt = _agree(f, rng.standard_normal((3, 3, 3)), rng.standard_normal((3, 3, 3)), np.int64(4))
    assert not _copies(opt)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_batched_matrices_swap_their_last_axes(n):
    rng = np.random.default_rng(2)
    opt = _agree(batched, rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 2)),
                 np.int64(n))
    assert len(_copies(opt)) == 1


def test_unknown_shapes_are_left_alone():
    spec = ag.TensorSpec([None, None], np.float64)
    conc = ag.function(user_transpose).get_concrete_function(
        spec, spec, ag.TensorSpec([], np.int64))
    assert not _copies(conc._graph_to_run())
    W, _, h0 = _data(2)
    np.testing.assert_allclose(ag.function(user_transpose)(W, h0, np.int64(3)),
                               user_transpose(W, h0, 3), rtol=1e-13)


@pytest.mark.parametrize("mode", modes.MODES)
@pytest.mark.parametrize("n", [0, 1, 6])
def test_rnn_gradients_match_central_differences_in_every_mode(mode, n):
    W, xs, h0 = _data(n)
    got = modes.grad(mode, rnn, W, xs, h0)
    np.testing.assert_allclose(got, modes.fd(rnn, W, xs, h0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_second_gradient_of_a_persistent_tape(n):
    W, xs, h0 = _data(n, batch=2, hidden=3)
    f = lambda w: rnn(w, xs, h0)   # noqa: E731

    @ag.function
    def hess_rows(w, xs, h0):
        with ag.GradientTape(persistent=True) as outer:
            outer.watch(w)
            with ag.GradientTape() as inner:
                inner.watch(w)
                y = rnn(w, xs, h0)
            g = inner.gradient(y, w, unconnected_gradients="zero")
            s = np.sum(g)
        first = outer.gradient(y, w, unconnected_gradients="zero")
        return outer.gradient(s, w, unconnected_gradients="zero"), first

    rows, first = hess_rows(W, xs, h0)
    np.testing.assert_allclose(first, modes.fd(f, W), rtol=1e-6, atol=1e-9)
    sum_of_grad = lambda w: np.sum(modes.fd(f, w, h=1e-5))   # noqa: E731
    np.testing.assert_allclose(rows, modes.fd(sum_of_grad, W, h=1e-3), rtol=1e-4, atol=1e-6)


def reshaped(W, v, n):               # a static reshape of a capture: hoisted, cannot raise
    s = v
    for i in ag.range(n):
        s = s + np.reshape(W, (-1,))
    return s


@pytest.mark.parametrize("n", [0, 2])
def test_static_reshapes_leave_loops_that_may_not_run(n):
    W = np.arange(6.0).reshape(2, 3)
    opt = _agree(reshaped, W, np.ones(6), np.int64(n))
    assert "reshape" not in _loop_bodies(opt)[0]
    spec = ag.TensorSpec([None, 3], np.float64)      # its size unknown: it stays
    conc = ag.function(reshaped).get_concrete_function(
        spec, ag.TensorSpec([None], np.float64), ag.TensorSpec([], np.int64))
    assert "reshape" in _loop_bodies(conc._graph_to_run())[0]


def test_the_copy_runs_on_the_strict_array_api_device():
    """The copy is two reshapes from the device's namespace: the strict array API gives
    the values NumPy gives, for a user's loop and the RNN gradient."""
    pytest.importorskip("array_api_strict")
    from autograph.runtime.devices import get_device
    dev = get_device("strict")
    W, xs, h0 = _data(4)
    vg = lambda W, xs, h0: ag.value_and_grad(rnn)(W, xs, h0)   # noqa: E731
    for f, args in ((user_transpose, (W, h0, np.int64(3))), (vg, (W, xs, h0))):
        opt = ag.function(f).get_concrete_function(*args)._graph_to_run()
        assert _copies(opt)
        got = codegen.compile_graph(opt, dev)(*[dev.to_device(np.asarray(a)) for a in args])
        for a, b in zip(got, interpreter.run(opt, [np.asarray(a) for a in args])):
            np.testing.assert_allclose(dev.to_host(a), b, rtol=1e-13)
