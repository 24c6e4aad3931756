"""Issue 26's gradient classes, tested as classes.

W1: differentiating one forward cond/loop more than once in a graph (a second gradient()
of a persistent tape, every row of a jacobian, a Hessian as the jacobian of a gradient)
through every kind of staged control flow.
C1: the eager tape through staged control flow (ag.while_loop, ag.cond, ag.range, an
ag.function called under the tape, Variable reads and effects in a loop body): right
numbers, effects once, and an unresolvable state is an error, never a spin.
R2: a gradient() called inside a recording tape is recorded (higher order in one tape).
"""

import numpy as np
import pytest

import autograph as ag

X = np.array([0.7, -0.4])


def while_fn(x):
    return ag.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [np.int64(0), x])[1]


def range_fn(x):
    z = x
    for _ in ag.range(2):
        z = np.sin(z) * x
    return z


def cond_fn(x):
    return ag.cond(np.sum(x) > 0.0, lambda: x ** 3, lambda: np.sin(x))


def ta_fn(x):
    ta = ag.TensorArray(np.float64, size=3)
    z = x
    for i in ag.range(3):
        z = np.tanh(z) * x
        ta = ta.write(i, z)
    return np.sum(ta.stack(), axis=0)


def data_while_fn(x):
    return ag.while_loop(lambda v: np.sum(v * v) < 4.0, lambda v: v * 1.5 + 0.1 * x, [x])[0]


FNS = [while_fn, range_fn, cond_fn, ta_fn, data_while_fn]


def _fd_jac(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=1)


def _watch(tape, x, traced):
    if traced:
        tape.watch(x)
        return x
    return tape.watch(x)


def _all_kinds(f, x, traced):
    with ag.GradientTape(persistent=True) as g:
        x = _watch(g, x, traced)
        y = f(x)
        s = np.sum(y)
        s2 = np.sum(y * y)
    first = g.gradient(s, x)
    second = g.gradient(s2, x)
    jac = g.jacobian(y, x)
    with ag.GradientTape() as outer:
        x2 = _watch(outer, x, traced)
        with ag.GradientTape() as inner:
            inner.watch(x2)
            t = np.sum(f(x2))
        d = inner.gradient(t, x2)
    hess = outer.jacobian(d, x2)
    return first, second, jac, hess


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("f", FNS, ids=lambda f: f.__name__)
def test_every_kind_through_control_flow(f, traced):
    got = _all_kinds(f, X, False) if not traced else \
        ag.function(lambda x: _all_kinds(f, x, True))(X)
    jac = _fd_jac(f, X)
    first, second, jacobian, hessian = (np.asarray(v) for v in got)
    np.testing.assert_allclose(first, jac.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(second, 2 * f(X) @ jac, rtol=1e-6)
    np.testing.assert_allclose(jacobian, jac, rtol=1e-6, atol=1e-9)
    grad_sum = lambda x: _fd_jac(f, x, 1e-5).sum(axis=0)     # noqa: E731
    np.testing.assert_allclose(hessian, _fd_jac(grad_sum, X, 1e-4), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f", FNS, ids=lambda f: f.__name__)
def test_ag_grad_agrees(f):
    eager = _all_kinds(f, X, False)
    np.testing.assert_allclose(ag.grad(lambda x: np.sum(f(x)))(X), eager[0], rtol=1e-10)
    def total(z):
        return np.sum(f(z))

    def row(x, e):
        return np.sum(ag.grad(total)(x) * e)
    h = ag.grad(row)
    rows = np.stack([h(X, e) for e in np.eye(2)])
    np.testing.assert_allclose(rows, eager[3], rtol=1e-9, atol=1e-12)


def test_issue_reproducers():
    @ag.function
    def J(x):
        with ag.GradientTape() as g:
            g.watch(x)
            z = ag.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x),
                              [np.int64(0), x])[1]
        return g.jacobian(z, x)
    np.testing.assert_array_equal(J(np.array([1.0, 2.0])), [[4.0, 0.0], [0.0, 32.0]])

    @ag.function
    def f(x):
        with ag.GradientTape(persistent=True) as g:
            g.watch(x)
            z = ag.cond(x > 0, lambda: x ** 3, lambda: x)
            z2 = z * 2.0
        return g.gradient(z, x), g.gradient(z2, x), g.gradient(z * 2.0, x)
    # the last target is computed after the block: not recorded, None (as in TensorFlow)
    assert f(np.float64(2.0)) == (12.0, 24.0, None)

    with ag.GradientTape() as t:
        x = t.watch(np.float64(2.0))
        y = ag.while_loop(lambda v: v < 8.0, lambda v: v * v, [x])[0]
    assert t.gradient(y, x) == 32.0
    with ag.GradientTape() as t:
        x = t.watch(np.float64(3.0))
        y = ag.cond(x > 0.0, lambda: x ** 3, lambda: x)
    assert t.gradient(y, x) == 27.0


@pytest.mark.parametrize("eagerly", [False, True])
def test_function_called_under_an_eager_tape(eagerly):
    @ag.function
    def grow(x):
        v = x
        while v < 8.0:
            v = v * v
        return v
    ag.config.run_functions_eagerly(eagerly)
    try:
        with ag.GradientTape() as t:
            x = t.watch(np.float64(2.0))
            y = grow(x)
        assert t.gradient(y, x) == 32.0
    finally:
        ag.config.run_functions_eagerly(False)


def test_effects_in_an_eager_loop_happen_once(capsys):
    v = ag.Variable(np.float64(2.0))

    def body(i, a):
        ag.print("step", i)
        v.assign_add(1.0)
        return i + 1, a * v.read_value()
    with ag.GradientTape(persistent=True) as g:
        y = ag.while_loop(lambda i, a: i < 3, body, [np.int64(0), np.float64(1.0)])[1]
        y2 = y * y
    # reads of v are 3, 4, 5: y = 60, dy/dv = 4*5 + 3*5 + 3*4 = 47 (each read depends on v)
    assert float(y) == 60.0
    assert g.gradient(y, v) == 47.0
    assert g.gradient(y2, v) == 2 * 60.0 * 47.0      # the loop runs again: replayed
    assert float(v.read_value()) == 5.0              # assigned three times, not six or nine
    assert capsys.readouterr().out.count("step") == 3


def test_variable_read_in_eager_loop_sees_its_first_value():
    v = ag.Variable(np.float64(2.0))
    with ag.GradientTape() as g:
        y = ag.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * v.read_value()),
                          [np.int64(0), np.float64(3.0)])[1]
    v.assign(100.0)          # changed before the gradient re-runs the loop
    assert float(y) == 12.0
    assert g.gradient(y, v) == 12.0                  # 3 * 2 * v at v = 2


def test_unresolvable_state_is_an_error_not_a_spin():
    v = ag.Variable(np.float64(2.0))
    with ag.GradientTape() as g:
        r = v.read_value()
    live = g._live
    del live.values[id(r)]   # an effect's value gone (what no path should ever do)
    with pytest.raises(RuntimeError, match=r"cannot compute .*read_variable.*test_repeated"):
        live.live_value(r)


def test_higher_order_in_one_tape_through_a_loop():
    def f(x):
        return ag.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * x),
                             [np.int64(0), x])[1]        # x ** 3

    def run(x, traced):
        with ag.GradientTape(persistent=True) as g:
            x = _watch(g, x, traced)
            y = f(x)
            dy = g.gradient(y, x)
            d2y = g.gradient(dy, x)
        return y, dy, d2y, g.gradient(d2y, x)
    for out in (run(np.float64(3.0), False),
                ag.function(lambda x: run(x, True))(np.float64(3.0))):
        assert [float(v) for v in out] == [27.0, 27.0, 18.0, 6.0]


def test_gradient_in_block_applied_after_block():
    w = ag.Variable(np.array([1.0, 2.0]))
    opt = ag.optimizers.SGD(0.5)
    with ag.GradientTape() as tape:
        loss = np.sum(w.read_value() ** 2)
        grads = tape.gradient(loss, [w])
    opt.apply_gradients(zip(grads, [w]))
    np.testing.assert_allclose(np.asarray(w.read_value()), [0.0, 0.0])


def test_stop_recording_range_survives_augmentation():
    @ag.function
    def f(x):
        with ag.GradientTape(persistent=True) as g:
            g.watch(x)
            y = while_fn(x)
            with g.stop_recording():
                z = y * 3.0
            w = y + z
        return g.gradient(y, x), g.gradient(w, x)
    a, b = f(X)
    np.testing.assert_allclose(a, 4 * X ** 3)           # y = x ** 4
    np.testing.assert_allclose(b, 4 * X ** 3)       # z is not recorded: w's gradient is y's
