"""vmap composes with the other transforms: per-example gradients (vmap of grad), the
gradient of a vmapped function (against central differences), ag.function of vmap,
jit_compile, nested vmap, and saving a vmapped function."""

import numpy as np
import pytest

import autograph as ag

rng = np.random.default_rng(3)


def mlp_loss(params, x, y):
    """A small MLP whose depth depends on the example: it iterates its hidden layer until
    the activation's norm settles (a data-dependent loop), at most 6 times."""
    w1, w2 = params
    h = np.tanh(x @ w1)
    i = 0
    while np.sum(h * h) > 0.5 and i < 6:
        h = np.tanh(h @ w2) * 0.9
        i += 1
    return np.sum((h - y) ** 2)


def mlp_params():
    return [rng.standard_normal((3, 4)) * 0.8, rng.standard_normal((4, 4)) * 0.8]


def test_per_example_gradients_equal_a_loop_of_grad_calls():
    params = mlp_params()
    xs, ys = rng.standard_normal((6, 3)), rng.standard_normal((6, 4))
    per_example = ag.vmap(ag.grad(mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    g = ag.grad(mlp_loss)
    for k in range(len(xs)):
        want = g(params, xs[k], ys[k])
        for a, b in zip(per_example, want):
            np.testing.assert_allclose(a[k], b, rtol=1e-10, atol=1e-12)


def test_per_example_gradients_of_several_arguments_with_aux_and_out_axes():
    def loss(w, x, scale):
        y = x @ w
        while np.sum(y * y) > 1.0:
            y = y * 0.5
        return np.sum(y) * scale, y
    w, xs, scales = rng.standard_normal((3, 2)), rng.standard_normal((4, 3)), rng.random(4)
    (gw, gx), aux = ag.vmap(ag.grad(loss, argnums=(0, 1), has_aux=True), in_axes=(None, 0, 0),
                            out_axes=((2, 0), 0))(w, xs, scales)
    assert gw.shape == (3, 2, 4) and gx.shape == (4, 3)
    for k in range(4):
        (wk, xk), yk = ag.grad(loss, argnums=(0, 1), has_aux=True)(w, xs[k], scales[k])
        np.testing.assert_allclose(gw[:, :, k], wk, rtol=1e-10)
        np.testing.assert_allclose(gx[k], xk, rtol=1e-10)
        np.testing.assert_allclose(aux[k], yk, rtol=1e-12)


def test_a_gradient_called_inside_the_function_runs_lane_by_lane():
    # not vmap(grad(f)) itself: the gradient's loop stacks run one lane at a time (exact)
    def f(x):
        return ag.grad(_sum_grown)(x) * 2.0
    xs = rng.random((3, 2)) + 0.5
    got = ag.vmap(f)(xs)
    for k in range(3):
        np.testing.assert_allclose(got[k], f(xs[k]), rtol=1e-12)


def _sum_grown(v):
    while np.sum(v) < 10.0:
        v = v * 1.7
    return np.sum(v)


def test_per_example_gradients_without_loops_are_batched_natively():
    def loss(w, x):
        h = np.tanh(x @ w)
        if np.sum(h) > 0:
            h = h * 2.0
        return np.sum(h ** 2)
    w, xs = rng.standard_normal((3, 2)), rng.standard_normal((5, 3))
    got = ag.vmap(ag.grad(loss), in_axes=(None, 0))(w, xs)
    for k in range(5):
        np.testing.assert_allclose(got[k], ag.grad(loss)(w, xs[k]), rtol=1e-12)
    graph = ag.function(ag.vmap(ag.grad(loss), in_axes=(None, 0))).get_concrete_function(
        w, xs).graph
    assert not any(n.op == "ta_new" for n in graph.walk())     # no per-lane loop


def _central(f, x, eps=1e-6):
    v = rng.standard_normal(x.shape)
    return v, (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def test_grad_of_a_vmapped_function_with_loops_and_conds():
    def f(x):
        s = x
        while np.sum(s * s) < 4.0:
            s = s * 1.3 + 0.1
        if s[0] > 0:
            s = np.sin(s)
        return s

    def total(xs):
        return np.sum(ag.vmap(f)(xs) ** 2)
    xs = rng.standard_normal((9, 2)) * 0.5
    g = ag.grad(total)(xs)
    v, numeric = _central(lambda z: float(np.sum(np.stack([f(r) for r in z]) ** 2)), xs)
    np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-5)
    # and per lane: the gradient of lane k's term is the gradient of f alone
    gk = ag.grad(lambda r: np.sum(f(r) ** 2))(xs[4])
    np.testing.assert_allclose(g[4], gk, rtol=1e-10)


def test_function_of_vmap_jit_compile_and_nested_vmap():
    def f(x, y):
        return np.sum(x * y) if np.sum(x) > 0 else np.max(x - y)
    x, y = rng.standard_normal((4, 5, 3)), rng.standard_normal(3)
    want = np.array([[f(a, y) for a in row] for row in x])
    nested = ag.vmap(ag.vmap(f, in_axes=(0, None)), in_axes=(0, None))
    np.testing.assert_allclose(nested(x, y), want, rtol=1e-12)
    traced = ag.function(nested)
    np.testing.assert_allclose(traced(x, y), want, rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 1
    inner_axis = ag.vmap(ag.vmap(f, in_axes=(1, None)), in_axes=(0, None))
    np.testing.assert_allclose(inner_axis(x.transpose(0, 2, 1), y), want, rtol=1e-12)


def test_a_vmapped_function_saves_and_loads(tmp_path):
    def f(x):
        while np.sum(x) < 10.0:
            x = x * 2.0
        return x
    m = ag.Module()
    m.f = ag.function(ag.vmap(f), input_signature=[ag.TensorSpec([5, 2], np.float64)])
    xs = rng.random((5, 2)) + 0.1
    ag.saved_model.save(m, str(tmp_path / "m"))
    loaded = ag.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.f(xs), [f(r) for r in xs])


def test_per_example_gradients_trace_once():
    traced = []

    def loss(w, x):
        traced.append(1)
        return np.sum(np.tanh(x @ w))
    g = ag.vmap(ag.grad(loss), in_axes=(None, 0))
    w, xs = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    first = g(w, xs)
    for _ in range(3):
        np.testing.assert_array_equal(g(w, xs), first)
    assert len(traced) == 1


def test_a_vmap_call_node_runs_on_its_own_and_refuses_a_gradient():
    # what an outer vmap batches; traced by hand here, it runs through its kernel
    from autograph.batching import nested
    from autograph.runtime.exec import interpreter

    def f(x):
        while np.sum(x) < 5.0:
            x = x * 2.0
        return x
    with nested.element_trace():
        conc = ag.function(lambda x: ag.vmap(f)(x)).get_concrete_function(
            ag.TensorSpec([3, 2], np.float64))
    assert any(n.op == "vmap_call" for n in conc.graph.walk())
    xs = rng.random((3, 2)) + 0.1
    (out,) = interpreter.run(conc.graph, [xs])
    np.testing.assert_allclose(out, [f(r) for r in xs])
    with nested.element_trace():
        with pytest.raises(NotImplementedError, match="nested inside another vmap"):
            ag.grad(lambda x: np.sum(ag.vmap(f)(x)))(xs)
