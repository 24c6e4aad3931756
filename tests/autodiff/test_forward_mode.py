"""Forward mode (issue 33): ag.jvp, jacfwd, jacrev, hessian, hvp against central differences.

Programs through cond, data-dependent while loops, TensorArrays, Variables and custom
gradients; the transforms composed with ag.grad (both ways), ag.function and each other.
The full differential run (>= 1,000 generated programs, every shared sample) is
`python -m benchmarks.differential.fwdrun --count 1000 --jobs 2 --samples`; a small
sample of it runs here.
"""

import warnings

import numpy as np
import pytest

import autograph as ag
from benchmarks.differential import fwdcheck, gradcheck, gradrun
from tests.autodiff import samples

H = 1e-6


def fd(f, x, t, h=H):
    return (np.asarray(f(x + h * t)) - np.asarray(f(x - h * t))) / (2 * h)


def rnn_loss(x, w):
    h = np.zeros(3)
    i = 0
    while i < 4:
        h = np.tanh(w @ h + x * (i + 1))
        i += 1
    return np.sum(h ** 2)


def test_jvp_value_and_tangent_of_a_loop_with_a_data_dependent_stop():
    def f(x):
        s = x
        while np.sum(s * s) < 30.0:        # the trip count depends on x
            if np.sum(s) > 0:
                s = s * 1.5 + np.sin(s)
            else:
                s = s * 1.3 - 0.1
        return s
    x, t = np.array([0.3, -0.2, 0.4]), np.array([0.5, 0.1, -0.3])
    y, ty = ag.jvp(f, (x,), (t,))
    np.testing.assert_allclose(y, f(x), rtol=1e-12)
    np.testing.assert_allclose(ty, fd(f, x, t), rtol=1e-6)


def test_jvp_takes_and_returns_pytrees():
    def f(p, scale):
        return {"a": np.tanh(p["w"] @ p["b"]) * scale, "n": 3, "b": (p["b"] ** 2,)}
    rng = np.random.default_rng(0)
    p = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(3)}
    tp = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(3)}
    out, tout = ag.jvp(f, (p, 2.0), (tp, 0.5))
    assert set(tout) == {"a", "n", "b"} and tout["n"] == 0.0

    def along(e):
        q = {k: p[k] + e * tp[k] for k in p}
        return f(q, 2.0 + 0.5 * e)["a"]
    np.testing.assert_allclose(tout["a"], (along(H) - along(-H)) / (2 * H), rtol=1e-6)
    np.testing.assert_allclose(tout["b"][0], 2 * p["b"] * tp["b"], rtol=1e-12)


def test_jvp_refuses_mismatched_tangents():
    with pytest.raises(ValueError, match="tangent's shape"):
        ag.jvp(lambda z: np.sin(z), (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="tuples"):
        ag.jvp(lambda z: np.sin(z), np.ones(3), np.ones(3))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacfwd_equals_jacrev_and_differences(argnums):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(3), 0.5 * rng.standard_normal((3, 3))

    def f(x, w):
        h = np.zeros(3)
        i = 0
        while i < 3:
            h = np.tanh(w @ h + x)
            i += 1
        return h * np.sum(x)
    jf, jr = ag.jacfwd(f, argnums)(x, w), ag.jacrev(f, argnums)(x, w)
    jf, jr = (jf, jr) if isinstance(argnums, tuple) else ((jf,), (jr,))
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for k, a, b in zip(nums, jf, jr):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        arg = (x, w)[k]
        assert a.shape == (3,) + arg.shape
        t = rng.standard_normal(arg.shape)

        def along(z, k=k):
            return f(z, w) if k == 0 else f(x, z)
        expect = fd(along, arg, t)
        np.testing.assert_allclose(np.tensordot(a, t, axes=t.ndim), expect, rtol=1e-6)


def test_hessian_and_hvp_of_an_rnn_match_differences_of_the_gradient():
    rng = np.random.default_rng(2)
    x, w, v = rng.standard_normal(3), 0.4 * rng.standard_normal((3, 3)), rng.standard_normal(3)
    grad = ag.grad(rnn_loss)
    hess = ag.hessian(rnn_loss)(x, w)
    cols = np.stack([fd(lambda z: grad(z, w), x, e, 1e-5) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(hess, cols, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12)
    hv = ag.hvp(rnn_loss, (x, w), (v, np.zeros((3, 3))))
    np.testing.assert_allclose(hv[0], hess @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv[1], fd(lambda z: ag.grad(rnn_loss, 1)(z, w), x, v, 1e-5),
                               rtol=1e-6, atol=1e-9)


def test_forward_mode_composes_with_grad_and_function():
    f = samples.data_dependent_while
    x, t = np.array([0.3, 0.2, 0.4]), np.array([1.0, -0.5, 0.25])
    # reverse over forward: the gradient of a directional derivative is H t
    rof = ag.grad(lambda z: ag.jvp(f, (z,), (t,))[1])(x)
    np.testing.assert_allclose(rof, ag.hvp(f, (x,), (t,)), rtol=1e-9)
    # inside a traced function, the transforms inline
    traced = ag.function(lambda z: (ag.jvp(f, (z,), (t,))[1], ag.hessian(f)(z)))(x)
    np.testing.assert_allclose(traced[0], fd(f, x, t), rtol=1e-6)
    np.testing.assert_allclose(traced[1] @ t, ag.hvp(f, (x,), (t,)), rtol=1e-9)


def test_tangents_flow_through_variables():
    v = ag.Variable(np.zeros(2))

    def f(x):
        v.assign(np.sin(x))
        v.assign_add(x * 2.0)
        return v.read_value() * 3.0
    x, t = np.array([0.3, -0.4]), np.array([1.0, 2.0])
    _, tout = ag.jvp(f, (x,), (t,))
    np.testing.assert_allclose(tout, 3.0 * (np.cos(x) + 2.0) * t, rtol=1e-12)


def test_a_variable_assigned_a_tangent_inside_a_loop_is_refused():
    v = ag.Variable(0.0)

    def f(x):
        s = x
        while s < 3.0:                       # a staged loop
            v.assign(x * s)
            s = s + 1.0
        return v.read_value()
    with pytest.raises(NotImplementedError, match="assigned inside a branch or loop"):
        ag.jvp(f, (np.float64(1.0),), (np.float64(1.0),))


def test_custom_gradient_forward_mode_is_the_transpose_of_the_given_gradient():
    @ag.custom_gradient
    def clipped(x):
        def grad_fn(dy):
            return dy * 0.5 * np.cos(x)         # deliberately not the true derivative
        return np.sin(x), grad_fn

    x, t = np.array([0.2, 0.7]), np.array([1.0, 3.0])
    _, tout = ag.jvp(lambda z: clipped(z) * 2.0, (x,), (t,))
    np.testing.assert_allclose(tout, 2.0 * 0.5 * np.cos(x) * t, rtol=1e-12)
    g = ag.grad(lambda z: np.sum(clipped(z) * 2.0))(x)
    np.testing.assert_allclose(g, 2.0 * 0.5 * np.cos(x), rtol=1e-12)


@pytest.mark.parametrize("sample", [samples.cond_in_loop, samples.data_dependent_while,
                                    samples.tensor_array_rnn], ids=lambda f: f.__name__)
def test_shared_sample_forward_derivatives_agree(sample):
    w = gradrun.samples_matrix() if sample in samples.MATRIX else None
    p, f = gradcheck.sample_program(sample, w)
    findings, kinks = fwdcheck.check(p, f=f, modes=("direct",))
    assert not findings, findings
    assert kinks == 0


@pytest.mark.parametrize("index", range(2))
def test_generated_program_forward_derivatives_agree(index):
    p = gradrun.program("ci", index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        findings, _ = fwdcheck.check(p, modes=("direct",))   # (inside ag.function: fwdrun)
    assert not findings, (findings, p.source)


def test_the_checker_sees_a_wrong_tangent(monkeypatch):
    p = gradrun.program("ci", 0)
    real = fwdcheck.RUNNERS["direct"]

    def off(*args):
        out = real(*args)
        out["hvp"] = out["hvp"] * (1 + 1e-4)
        return out
    monkeypatch.setitem(fwdcheck.RUNNERS, "direct", off)
    findings, _ = fwdcheck.check(p, modes=("direct",))
    assert [(k, m) for k, m, *_ in findings] == [("hvp", "direct")]


def test_custom_jvp_rule_is_used_by_forward_and_reverse_mode():
    @ag.custom_jvp
    def f(x, y):
        return np.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), 2.0 * (np.cos(x) * tx * y + np.sin(x) * ty)   # twice the truth

    x, y = np.array([0.3, 0.5]), np.array([1.5, -0.5])
    tx, ty = np.array([1.0, -2.0]), np.array([0.5, 1.0])
    np.testing.assert_allclose(f(x, y), np.sin(x) * y)           # eagerly: the function
    out, tout = ag.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(out, np.sin(x) * y, rtol=1e-12)
    np.testing.assert_allclose(tout, 2.0 * (np.cos(x) * tx * y + np.sin(x) * ty), rtol=1e-12)
    gx, gy = ag.grad(lambda a, b: np.sum(f(a, b)), (0, 1))(x, y)
    np.testing.assert_allclose(gx, 2.0 * np.cos(x) * y, rtol=1e-12)
    np.testing.assert_allclose(gy, 2.0 * np.sin(x), rtol=1e-12)

    def loop(z):                       # inside a data-dependent loop, both modes agree
        s = z
        while np.sum(s) < 5.0:
            s = f(s, np.ones_like(s) * 1.1) + s + 1.0
        return np.sum(s)
    z, e = np.array([0.3, 0.4]), np.array([1.0, 0.0])
    np.testing.assert_allclose(ag.jvp(loop, (z,), (e,))[1], ag.grad(loop)(z) @ e, rtol=1e-12)


def test_a_gradient_tape_differentiates_a_jvp_eagerly_and_traced():
    def f(x):
        s = x
        while np.sum(s) < 4.0:
            s = s * 1.3 + np.sin(s)
        return s
    x, t = np.array([0.3, 0.4]), np.array([1.0, -1.0])
    # d/dx <J(x) t, f(x)> = (H of sum(f^2) / 2) t
    expect = ag.hvp(lambda z: np.sum(f(z) ** 2), (x,), (t,)) / 2

    @ag.function
    def traced(x):
        with ag.GradientTape() as tape:
            tape.watch(x)
            F = np.sum(ag.jvp(f, (x,), (t,))[1] * f(x))
        return tape.gradient(F, x)
    np.testing.assert_allclose(traced(x), expect, rtol=1e-10)
    with ag.GradientTape() as tape:
        xx = tape.watch(x)
        F = np.sum(ag.jvp(f, (xx,), (t,))[1] * f(xx))
    np.testing.assert_allclose(tape.gradient(F, xx), expect, rtol=1e-10)
