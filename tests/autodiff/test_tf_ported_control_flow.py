"""TensorFlow's gradient tests of control flow, ported to autograph: while_v2_test.py,
cond_v2_test.py and control_flow_ops_py_test.py's gradient tests (TensorArrays and custom
gradients: test_tf_ported_tensor_arrays.py).

Every case is a function of NumPy values, differentiated in the three modes of
tests/autodiff/modes.py (eager tape, tape inside ag.function, ag.grad), and compared with
TensorFlow's numbers (the comments give the calculus) and with central differences.
"""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff.modes import MODES, fd, fd2, grad, second


def check(mode, f, x, expected, *args, rtol=1e-6):
    """The gradient in `mode` is TF's number and, where `f` is smooth at x (central
    differences at two step sizes agree; some of TF's cases sit where a loop's trip count
    changes), central differences."""
    got = grad(mode, f, x, *args)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12)
    near, far = fd(f, x, *args), fd(f, x, *args, h=1e-4)
    if np.allclose(near, far, rtol=1e-4, atol=1e-6):
        np.testing.assert_allclose(got, near, rtol=1e-5, atol=1e-7)


# -- while_v2_test ---------------------------------------------------------------------------

def single_loop_var(x):                       # testSingleLoopVar: 2 -> 4 -> 16 = x**4
    return ag.while_loop(lambda v: v < 8.0, lambda v: v * v, [x])[0]


def multiple_loop_vars_basic(x, y):           # testMultipleLoopVarsBasic: x*y**2
    return ag.while_loop(lambda v, _: v < 45.0, lambda v, w: (v * w, w), [x, y])[0]


def multiple_loop_vars(x, y, which):          # testMultipleLoopVars
    r = ag.while_loop(lambda v, _: v < 45.0, lambda v, w: (v * w, v + w), [x, y])
    return r[0] * which[0] + r[1] * which[1]


def gradient_tape_loop(x):                    # testGradientTape: 2 -> 4 = x**2
    return ag.while_loop(lambda v: v < 4.0, lambda v: v * v, [x])[0]


def two_loops(x):                             # testMultipleWhileLoops: x**4
    r1 = ag.while_loop(lambda v: v < 4.0, lambda v: v * v, [x])[0]
    return ag.while_loop(lambda v: v < 16.0, lambda v: v * v, [r1])[0]


def double_derivative(x):                     # testDoubleDerivative: v**2 until >= 8
    return ag.while_loop(lambda v: v < 8.0, lambda v: v ** 2, [x])[0]


def iterated_cos(x):                          # testIteratedGradients: cos(cos(x))
    return ag.while_loop(lambda i, _: i < 2, lambda i, y: (i + 1, np.cos(y)),
                         [np.int64(0), x])[1]


def iterated_with_list(x):                    # testIteratedGradientsWithList
    ta = ag.TensorArray(np.float64, size=2)
    _, z, ta = ag.while_loop(lambda i, _, h: i < 2,
                             lambda i, y, h: (i + 1, np.cos(y), h.write(i, y)),
                             [np.int64(0), x, ta])
    return z + np.sum(ta.stack())


def three_nest_with_lists(x):                 # testThreeNestWithLists
    def wrap(f):
        def wrapped(x):
            ta = ag.TensorArray(np.float64, size=2)
            _, z, ta = ag.while_loop(lambda i, _, h: i < 2,
                                     lambda i, y, h: (i + 1, f(np.cos(y)), h.write(i, y)),
                                     [np.int64(0), x, ta])
            return z + np.sum(ta.stack())
        return wrapped
    return wrap(wrap(wrap(np.sin)))(x)


@pytest.mark.parametrize("mode", MODES)
def test_while_single_loop_var(mode):
    assert float(np.asarray(single_loop_var(np.float64(2.0)))) == 16.0
    check(mode, single_loop_var, 2.0, 32.0)


@pytest.mark.parametrize("mode", MODES)
def test_while_multiple_loop_vars_basic(mode):
    check(mode, multiple_loop_vars_basic, 5.0, 9.0, np.float64(3.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which,dx,dy", [((1.0, 0.0), 39.0, 55.0), ((0.0, 1.0), 4.0, 6.0),
                                         ((1.0, 1.0), 43.0, 61.0)])
def test_while_multiple_loop_vars(mode, which, dx, dy):
    w = np.array(which)
    check(mode, multiple_loop_vars, 5.0, dx, np.float64(3.0), w)
    check(mode, lambda y, x, w: multiple_loop_vars(x, y, w), 3.0, dy, np.float64(5.0), w)


@pytest.mark.parametrize("mode", MODES)
def test_while_gradient_tape(mode):
    check(mode, gradient_tape_loop, 2.0, 4.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [two_loops, double_derivative])
def test_while_double_derivative(mode, f):
    check(mode, f, 2.0, 32.0)
    assert float(second(mode, f, 2.0)) == pytest.approx(48.0, rel=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [iterated_cos, iterated_with_list, three_nest_with_lists])
def test_while_iterated_gradients(mode, f):
    x = 1.0
    check(mode, f, x, fd(f, x), rtol=1e-5)
    np.testing.assert_allclose(second(mode, f, x), fd2(f, x), rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_while_gradient_wrt_variable(mode):
    # testGradientTapeResourceVariable: x * v * v with v = 1, x = 2: d/dv = 4
    v = ag.Variable(1.0)

    def f():
        with ag.GradientTape() as tape:
            _, x = ag.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, x * v.read_value()),
                                 [np.int64(0), np.float64(2.0)])
        return tape.gradient(x, v)
    if mode == "eager":
        out = f()
    elif mode == "traced":
        out = ag.function(f)()
    else:   # the Variable's value as an argument
        out = ag.grad(lambda w: ag.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, x * w),
                                              [np.int64(0), np.float64(2.0)])[1])(np.float64(1.0))
    assert float(out) == 4.0


@pytest.mark.parametrize("mode", MODES)
def test_grad_while_grad_while_with_variable(mode):
    # testGradWhileGradWhileWithVariable: a tape's gradient inside a loop body, differentiated
    v = ag.Variable(1.0)

    def inner(a):
        with ag.GradientTape() as tape:
            a = tape.watch(a)
            _, b = ag.while_loop(lambda i, _: i < 2,
                                 lambda i, y: (i + 1, np.cos(v.read_value() + y)),
                                 [np.int64(0), a])
        return tape.gradient(b, a)

    def func(x):
        return ag.while_loop(lambda i, _: i < 2, lambda i, y: (i + 1, inner(y)),
                             [np.int64(0), x])[1]
    x = 1.0
    expected = fd(lambda x: ag.function(func)(x), x, h=1e-5)
    np.testing.assert_allclose(grad(mode, func, x), expected, rtol=1e-5)


# -- cond_v2_test ------------------------------------------------------------------------------

def _basic(pred):        # testBasic: x * 2 or y * 3
    return lambda x, y: ag.cond(pred, lambda: x * 2.0, lambda: y * 3.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pred", [True, False])
def test_cond_basic(mode, pred):
    f = _basic(np.bool_(pred))
    check(mode, f, 1.0, 2.0 if pred else 0.0, np.float64(2.0))
    check(mode, lambda y, x: f(x, y), 2.0, 0.0 if pred else 3.0, np.float64(1.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pred", [True, False])
def test_cond_basic2(mode, pred):
    # testBasic2: x * y * 2 or the constant 2
    def f(x, y):
        return ag.cond(np.bool_(pred), lambda: x * y * 2.0, lambda: np.float64(2.0) + 0 * x)
    check(mode, f, 1.0, 4.0 if pred else 0.0, np.float64(2.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("outer,inner,expected", [(True, True, (0.0, 0.0)),
                                                  (True, False, (0.0, 0.0)),
                                                  (False, True, (4.0, 2.0)),
                                                  (False, False, (5.0, 0.0))])
def test_cond_nested_gradient(mode, outer, inner, expected):
    # testBuildCondAndGradientInsideDefun / testGradientFromInsideNestedDefun
    def f(x, y):
        return ag.cond(np.bool_(outer), lambda: 2.0 + 0 * x * y,
                       lambda: ag.cond(np.bool_(inner), lambda: x * y * 2.0, lambda: x * 5.0))
    check(mode, f, 1.0, expected[0], np.float64(2.0))
    check(mode, lambda y, x: f(x, y), 2.0, expected[1], np.float64(1.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pred,d1,d2", [(True, 27.0, 18.0), (False, 1.0, 0.0)])
def test_cond_second_derivative(mode, pred, d1, d2):
    # testSecondDerivative: x ** 3 or x, at 3
    def f(x):
        return ag.cond(np.bool_(pred), lambda: x ** 3, lambda: x)
    check(mode, f, 3.0, d1)
    assert float(second(mode, f, 3.0)) == d2


@pytest.mark.parametrize("mode", MODES)
def test_cond_on_the_value(mode):
    # the reproducer: a data-dependent cond (eagerly this hung)
    def f(x):
        return ag.cond(x > 0.0, lambda: x ** 3, lambda: x)
    check(mode, f, 3.0, 27.0)
    check(mode, f, -3.0, 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_cond_gradient_computed_twice(mode):
    # testForwardPassRewrite: the second gradient of one cond reuses its exported outputs
    def f(x):
        with ag.GradientTape(persistent=True) as g:
            x = g.watch(x)
            y = ag.cond(np.bool_(True), lambda: x * 2.0, lambda: x)
            y2 = y * y
        return g.gradient(y, x), g.gradient(y2, x)
    if mode == "grad":
        out = (ag.grad(lambda x: x * 2.0)(np.float64(1.0)),
               ag.grad(lambda x: (x * 2.0) ** 2)(np.float64(1.0)))
    else:
        out = f(np.float64(1.0)) if mode == "eager" else ag.function(f)(np.float64(1.0))
    assert [float(v) for v in out] == [2.0, 8.0]


# -- control_flow_ops_py_test: while/cond gradient cases --------------------------------------

def while_grad_square(x):       # testWhileGrad_Square: square until >= 100, then sum
    return ag.while_loop(lambda v: v < 100.0, lambda v: v * v, [x])[0]


def while_grad_mul(x, y):       # testWhileGrad_Mul: multiply by y twice
    return ag.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * y),
                         [np.int64(0), x])[1]


def while_grad_in_cond(x):      # testWhileGradInCond
    return ag.cond(x < 100.0, lambda: ag.while_loop(lambda v: v < 10.0,
                                                    lambda v: v + x, [np.float64(1.0)])[0],
                   lambda: x)


def cond_grad_in_while(x):      # testCondGradInNestedWhiles-like: a cond in a loop body
    return ag.while_loop(lambda i, v: i < 3,
                         lambda i, v: (i + 1, ag.cond(v < 5.0, lambda: v * 2.0,
                                                      lambda: v + 1.0)),
                         [np.int64(0), x])[1]


def nested_while_grad(x):       # testNestedWhileLoopGrad-like: an inner loop per iteration
    def body(i, v):
        inner = ag.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * 1.5),
                              [np.int64(0), v])[1]
        return i + 1, inner + np.sin(v)
    return ag.while_loop(lambda i, v: i < 2, body, [np.int64(0), x])[1]


def maximum_iterations(x):      # testWhileWithMaximumIterations gradient
    return ag.while_loop(lambda v: v < 1e9, lambda v: v * 2.0, [x],
                         maximum_iterations=3)[0]


@pytest.mark.parametrize("mode", MODES)
def test_while_grad_square(mode):
    # 2 -> 4 -> 16 -> 256 = x**8: 8 x**7 = 1024
    check(mode, while_grad_square, 2.0, 1024.0)


@pytest.mark.parametrize("mode", MODES)
def test_while_grad_mul(mode):
    check(mode, while_grad_mul, 1.0, 4.0, np.float64(2.0))        # x * y**2
    check(mode, lambda y, x: while_grad_mul(x, y), 2.0, 4.0, np.float64(1.0))   # 2xy


@pytest.mark.parametrize("mode", MODES)
def test_while_grad_in_cond(mode):
    # x = 2: 1 + 2k >= 10 after 5 steps: 1 + 5x, d/dx = 5
    check(mode, while_grad_in_cond, 2.0, 5.0)


@pytest.mark.parametrize("mode", MODES)
def test_cond_grad_in_while(mode):
    # 1 -> 2 -> 4 -> 8: 8x
    check(mode, cond_grad_in_while, 1.0, 8.0)


@pytest.mark.parametrize("mode", MODES)
def test_nested_while_grad(mode):
    check(mode, nested_while_grad, 0.5, fd(nested_while_grad, 0.5), rtol=1e-6)
    np.testing.assert_allclose(second(mode, nested_while_grad, 0.5),
                               fd2(nested_while_grad, 0.5), rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_while_maximum_iterations(mode):
    check(mode, maximum_iterations, 1.0, 8.0)
