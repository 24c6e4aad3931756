"""TensorFlow's GradientTape tests (eager/backprop_test.py), ported to autograph.

Each case runs its tape code eagerly (the tape's live graph) and inside `ag.function`, and
computes the same derivatives with `ag.grad`; the numbers are TensorFlow's (the comments
give the calculus). Deviations allowed by docs/gradients.md only: eagerly a NumPy value is
watched as `x = tape.watch(x)`.
"""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff.modes import MODES


def run(mode, tape_fn, grad_fn, *args):
    """tape_fn(*args) eagerly or traced; grad_fn(*args) for mode "grad"."""
    args = [np.asarray(a, dtype=np.float64) for a in args]
    if mode == "eager":
        return tape_fn(*args)
    if mode == "traced":
        return ag.function(tape_fn)(*args)
    return grad_fn(*args)


def _num(v):
    return None if v is None else np.asarray(v, dtype=np.float64)


# -- testHigherOrderGradient: gradient() inside a persistent tape's block is recorded --------

def _higher_order(x):
    with ag.GradientTape(persistent=True) as g:
        x = g.watch(x)
        y = x ** 3
        dy = g.gradient(y, x)          # 3x^2
        d2y = g.gradient(dy, x)        # 6x
    d3y = g.gradient(d2y, x)           # 6
    return y, dy, d2y, d3y


def _higher_order_grad(x):
    f = lambda x: x ** 3               # noqa: E731
    return (x ** 3, ag.grad(f)(x), ag.grad(ag.grad(f))(x),
            ag.grad(ag.grad(ag.grad(f)))(x))


@pytest.mark.parametrize("mode", MODES)
def test_higher_order_gradient(mode):
    out = run(mode, _higher_order, _higher_order_grad, 3.0)
    assert [float(v) for v in out] == [27.0, 27.0, 18.0, 6.0]


# -- testPersistentTape: two gradients of one tape ---------------------------------------------

def _persistent(x):
    with ag.GradientTape(persistent=True) as g:
        x = g.watch(x)
        y = x * x
        z = y * y
    return g.gradient(z, x), g.gradient(y, x)


@pytest.mark.parametrize("mode", MODES)
def test_persistent_tape(mode):
    out = run(mode, _persistent,
              lambda x: (ag.grad(lambda x: (x * x) ** 2)(x), ag.grad(lambda x: x * x)(x)), 3.0)
    assert [float(v) for v in out] == [4 * 27.0, 6.0]


# -- testPersistentNestedTape ------------------------------------------------------------------

def _persistent_nested(x):
    with ag.GradientTape(persistent=True) as g:
        x = g.watch(x)
        y = x * x
        with ag.GradientTape(persistent=True) as gg:
            y = gg.watch(y)
            z = 2 * y
        inner = gg.gradient(z, y)
        inner2 = gg.gradient(z, y)
        y2 = y + inner
    return inner, inner2, g.gradient(y2, x), g.gradient(z, x)


@pytest.mark.parametrize("mode", MODES)
def test_persistent_nested_tape(mode):
    def by_grad(x):
        return (ag.grad(lambda y: 2 * y)(x * x), ag.grad(lambda y: 2 * y)(x * x),
                ag.grad(lambda x: x * x + 2.0)(x), ag.grad(lambda x: 2 * x * x)(x))
    out = run(mode, _persistent_nested, by_grad, 3.0)
    assert [float(v) for v in out] == [2.0, 2.0, 6.0, 12.0]


# -- testGradientTape: an inner tape's gradient used in the outer tape's computation -----------

def _nested_use(x):
    with ag.GradientTape() as g:
        x = g.watch(x)
        y = x * x
        with ag.GradientTape() as gg:
            y = gg.watch(y)
            z = 2 * y
        inner = gg.gradient(z, y)
        y = y + inner
    return inner, g.gradient(y, x)


@pytest.mark.parametrize("mode", MODES)
def test_inner_gradient_used_by_outer_tape(mode):
    out = run(mode, _nested_use,
              lambda x: (ag.grad(lambda y: 2 * y)(x * x), ag.grad(lambda x: x * x + 2.0)(x)),
              3.0)
    assert [float(v) for v in out] == [2.0, 6.0]


# -- testNestedGradients: the gradient w.r.t. an intermediate ---------------------------------

def _intermediate(x):
    with ag.GradientTape() as g:
        x = g.watch(x)
        y = x * x
        z = y * y
    return tuple(g.gradient(z, [x, y]))


@pytest.mark.parametrize("mode", MODES)
def test_gradient_with_respect_to_an_intermediate(mode):
    out = run(mode, _intermediate, lambda x: (ag.grad(lambda x: (x * x) ** 2)(x),
                                              ag.grad(lambda y: y * y)(x * x)), 3.0)
    assert [float(v) for v in out] == [108.0, 18.0]


# -- testPersistentGradientTapeRepeatedSource --------------------------------------------------

def _repeated(x, y):
    with ag.GradientTape(persistent=True) as g:
        x = g.watch(x)
        y = g.watch(y)
        z = x * x + x * y
    return tuple(g.gradient(z, [x, x])) + tuple(g.gradient(z, [y, x]))


@pytest.mark.parametrize("mode", MODES)
def test_repeated_sources(mode):
    def by_grad(x, y):
        f = lambda x, y: x * x + x * y   # noqa: E731
        gx, gy = ag.grad(f, argnums=(0, 1))(x, y)
        return gx, gx, gy, gx
    out = run(mode, _repeated, by_grad, 3.0, 5.0)
    assert [float(v) for v in out] == [11.0, 11.0, 3.0, 11.0]


# -- testWatchingIsTapeLocal: a Variable watched by the inner tape only -------------------------

def test_watching_is_tape_local_eager_and_traced():
    for mode in ("eager", "traced"):
        x1 = ag.Variable(2.0, trainable=False)
        x2 = ag.Variable(2.0, trainable=False)

        def f():
            with ag.GradientTape() as t1:
                with ag.GradientTape() as t2:
                    t1.watch(x1)
                    t2.watch([x1, x2])
                    y = x1.read_value() ** 3
                    z = x2.read_value() ** 2
                    dy, dz = t2.gradient([y, z], [x1, x2])
                d2y, d2z = t1.gradient([dy, dz], [x1, x2])
            return d2y, d2z
        d2y, d2z = f() if mode == "eager" else ag.function(f)()
        # TF: [dy, dz] summed as targets; x1 is watched by t1, x2 is not: 6 * x1 = 12, None
        assert float(d2y) == 12.0 and d2z is None, mode
    # ag.grad: the same second derivative
    assert float(ag.grad(ag.grad(lambda a: a ** 3))(np.float64(2.0))) == 12.0


# -- testGradientWithinTapeBlock ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["eager", "traced"])
@pytest.mark.parametrize("persistent", [False, True])
def test_gradient_within_tape_block(mode, persistent):
    v = ag.Variable(1.0)

    def f():
        with ag.GradientTape(persistent=persistent) as t:
            loss = 2 * v.read_value()
            grad = t.gradient(loss, v)
        return grad
    out = f() if mode == "eager" else ag.function(f)()
    assert float(out) == 2.0


def test_gradient_within_tape_block_by_grad():
    assert float(ag.grad(lambda v: 2 * v)(np.float64(1.0))) == 2.0


# -- testUnconnectedGradients: None by default, zeros on request --------------------------------

def _unconnected(x, y):
    with ag.GradientTape(persistent=True) as g:
        x = g.watch(x)
        y = g.watch(y)
        z = y * 2
    return g.gradient(z, x), g.gradient(z, x, unconnected_gradients="zero")


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_unconnected_gradients(mode):
    x = np.ones((2, 2))
    none, zeros = _unconnected(x, 3.0) if mode == "eager" else \
        ag.function(_unconnected)(x, np.float64(3.0))
    assert none is None
    np.testing.assert_array_equal(zeros, np.zeros((2, 2)))


def test_unconnected_gradients_by_grad():
    # ag.grad's unconnected gradients are zeros (JAX's convention)
    np.testing.assert_array_equal(ag.grad(lambda x, y: y * 2)(np.ones((2, 2)), 3.0),
                                  np.zeros((2, 2)))


# -- testGradientTapeWithCond / WithWhileLoop (TF's tape through control flow) ------------------

def _tape_cond(x):
    with ag.GradientTape() as g:
        x = g.watch(x)
        y = ag.cond(x < x, lambda: x, lambda: x * x)
    return g.gradient(y, x)


def _tape_while(x):
    with ag.GradientTape() as g:
        x = g.watch(x)
        _, y = ag.while_loop(lambda i, _: i < 3, lambda i, x: (i + 1, x * 2),
                             [np.int64(1), x])
    return g.gradient(y, x)


@pytest.mark.parametrize("mode", MODES)
def test_tape_with_cond(mode):
    out = run(mode, _tape_cond,
              lambda x: ag.grad(lambda x: ag.cond(x < x, lambda: x, lambda: x * x))(x), 3.0)
    assert float(out) == 6.0


@pytest.mark.parametrize("mode", MODES)
def test_tape_with_while_loop(mode):
    def by_grad(x):
        return ag.grad(lambda x: ag.while_loop(lambda i, _: i < 3, lambda i, x: (i + 1, x * 2),
                                               [np.int64(1), x])[1])(x)
    out = run(mode, _tape_while, by_grad, 2.0)
    assert float(out) == 4.0


# -- testGradGrad / testGradGradExp / testMakeVJP ----------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_grad_grad(mode):
    from tests.autodiff.modes import second
    assert float(second(mode, lambda x: x * x, 3.0)) == 2.0
    assert float(second(mode, lambda x: np.exp(x), 0.0)) == 1.0


def test_make_vjp():
    value, pullback = ag.vjp(lambda x: x * x, np.float64(3.0))
    assert float(value) == 9.0
    assert float(pullback(np.float64(2.0))[0]) == 12.0
    assert float(pullback(np.float64(2.0))[0]) == 12.0     # (persistent: called twice)


# -- jacobians (TF's testJacobian family: GradientTape.jacobian) --------------------------------

def _jacobian(x):
    with ag.GradientTape() as g:
        x = g.watch(x)
        y = x * x * np.array([1.0, 2.0, 3.0])
    return g.jacobian(y, x)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_jacobian_of_elementwise(mode):
    x = np.array([1.0, 2.0, 3.0])
    out = _jacobian(x) if mode == "eager" else ag.function(_jacobian)(x)
    np.testing.assert_allclose(out, np.diag(2 * x * [1.0, 2.0, 3.0]))


def test_jacobian_by_grad_rows():
    x = np.array([1.0, 2.0, 3.0])
    _, pullback = ag.vjp(lambda x: x * x * np.array([1.0, 2.0, 3.0]), x)
    rows = np.stack([pullback(e)[0] for e in np.eye(3)])
    np.testing.assert_allclose(rows, np.diag(2 * x * [1.0, 2.0, 3.0]))
