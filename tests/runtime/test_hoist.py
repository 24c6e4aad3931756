"""Loop-invariant code motion (runtime/exec/optimize.py: hoist_invariants): what moves out of a
loop body and what stays; the same values as the interpreter on the unoptimised graph and
as eager Python, zero-trip loops included; nested loops; gradients' backward loops."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, optimize


def transposed(W, v, n):            # W.T is invariant and safe: hoisted for any trip count
    s = np.zeros_like(v)
    for i in ag.range(n):
        s = s + np.transpose(W) @ v + i
    return s


def product(A, B, n):               # A @ B may raise: hoisted only if the loop surely runs
    s = np.zeros((np.size(A, 0), np.size(B, 1)))
    for i in ag.range(n):
        s = s + A @ B
    return s


def nested(W, v, n):
    s = np.zeros_like(v)
    for i in ag.range(n):
        u = v * i
        for j in ag.range(n):
            s = s + np.transpose(W) @ u + np.transpose(-W) @ v
    return s


def printing(W, n):
    s = np.zeros(W.shape[0])
    for i in ag.range(n):
        ag.print("T", np.transpose(W)[0, 0])
        s = s + np.transpose(W)[0]
    return s


def _graphs(f, *args, **kw):
    conc = ag.function(f, **kw).get_concrete_function(*args)
    return conc.graph, conc._graph_to_run()


def _body_ops(graph):
    """Per while_loop (outer first): the ops of its body (nested bodies counted apart)."""
    return [[nd.op for nd in loop.attrs["body_graph"].nodes if nd.op != "Placeholder"]
            for loop in graph.walk() if loop.op == "while_loop"]


def _agree(f, *args, eager=True, **kw):
    raw, opt = _graphs(f, *args, **kw)
    arrays = [np.asarray(a) for a in args]
    fast = codegen.compile_graph(opt)(*arrays)
    for x, y in zip(fast, interpreter.run(raw, arrays)):
        np.testing.assert_allclose(x, y, rtol=1e-13)
    if eager:
        np.testing.assert_allclose(fast[0], f(*args), rtol=1e-13)
    return raw, opt


W = np.array([[1.0, 2.0], [3.0, 4.0]])
V = np.array([0.5, -1.0])
SIG = [ag.TensorSpec([None, None], np.float64), ag.TensorSpec([None, None], np.float64),
       ag.TensorSpec([], np.int64)]


@pytest.mark.parametrize("n", [3, 0])
def test_safe_invariants_leave_the_body_whatever_the_trip_count(n):
    raw, opt = _agree(transposed, W, V, np.int64(n))
    assert "permute_dims" in _body_ops(raw)[0]
    assert "permute_dims" not in _body_ops(opt)[0]
    assert len(_body_ops(opt)[0]) < len(_body_ops(raw)[0])


def test_a_node_that_may_raise_stays_when_the_loop_may_not_run():
    A, B = np.ones((2, 3)), np.ones((4, 2))      # A @ B would raise
    f = ag.function(product, input_signature=SIG)
    np.testing.assert_array_equal(f(A, B, np.int64(0)), np.zeros((2, 2)))
    _, opt = _graphs(product, A, B, np.int64(0), input_signature=SIG)
    assert "matmul" in _body_ops(opt)[0]
    with pytest.raises(ValueError):
        f(A, B, np.int64(1))


def test_any_pure_node_leaves_a_loop_known_to_run():
    A, B = np.ones((2, 3)), np.ones((3, 2))
    raw, opt = _agree(lambda A, B: product(A, B, 4), A, B, eager=False)
    assert "matmul" in _body_ops(raw)[0] and "matmul" not in _body_ops(opt)[0]
    np.testing.assert_allclose(codegen.compile_graph(opt)(A, B)[0], 4 * A @ B)
    loop = next(nd for nd in raw.walk() if nd.op == "while_loop")
    assert optimize.runs_at_least_once(loop)


def test_nested_loops_hoist_as_far_as_each_value_is_invariant():
    for n in (3, 0):
        raw, opt = _agree(nested, W, V, np.int64(n))
        outer, inner = _body_ops(opt)
        assert "permute_dims" not in inner + outer      # W.T and (-W).T: before both loops
        assert "negative" not in inner + outer
        assert "multiply" in outer                      # v * i varies with the outer loop
        raw_outer, raw_inner = _body_ops(raw)
        assert len(inner) < len(raw_inner)


def test_effects_stay_in_order(capsys):
    raw, opt = _agree(printing, W, np.int64(2))
    assert "print" in _body_ops(opt)[0]
    out = capsys.readouterr().out
    assert out.count("T 1.0") == 3 * 2      # (codegen, interpreter, eager: twice each)


def test_a_gradients_backward_loop_does_not_transpose_every_step():
    def loss(W, xs, h0):
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
        return np.sum(h)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((3, 3)), rng.standard_normal((4, 2, 3)), np.zeros((2, 3)))

    @ag.function
    def step(W, xs, h0):
        with ag.GradientTape() as tape:
            tape.watch(W)
            value = loss(W, xs, h0)
        return tape.gradient(value, W)
    conc = step.get_concrete_function(*args)
    raw, opt = conc.graph, conc._graph_to_run()
    backward_raw, backward_opt = _body_ops(raw)[-1], _body_ops(opt)[-1]
    assert backward_opt.count("permute_dims") == backward_raw.count("permute_dims") - 1
    np.testing.assert_allclose(codegen.compile_graph(opt)(*args)[0],
                               interpreter.run(raw, list(args))[0], rtol=1e-13)
    assert len(optimize.optimize(raw).nodes) == len(opt.nodes)


def limited(W, v, m):               # maximum_iterations given as a tensor: the last input
    out = ag.while_loop(lambda s: np.sum(s) < 1e9, lambda s: [s + np.transpose(W) @ v], [v],
                        maximum_iterations=m)
    return out[0] if isinstance(out, (list, tuple)) else out


@pytest.mark.parametrize("m", [3, 0])
def test_a_tensor_maximum_iterations_stays_the_last_input(m):
    raw, opt = _agree(limited, W, V, np.int64(m), eager=False)
    loop = next(nd for nd in opt.nodes if nd.op == "while_loop")
    assert loop.attrs["maximum_iterations"] == "input"
    assert loop.inputs[-1].dtype == np.int64
    assert "permute_dims" not in _body_ops(opt)[0]
    expected = V + m * (W.T @ V)
    np.testing.assert_allclose(codegen.compile_graph(opt)(W, V, np.int64(m))[0], expected)
