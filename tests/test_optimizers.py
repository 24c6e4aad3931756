"""ag.optimizers against hand-written NumPy update rules, eagerly, traced and under
run_functions_eagerly; slot creation; the seeds' two-optimizers story and its fixes."""

import re
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir.graph import Graph  # noqa: F401  (the graph's node listing)


# -- references: the update rules written out in NumPy ---------------------------------------

def ref_sgd(w, grads, lr, momentum=0.0, nesterov=False):
    w = w.copy()
    m = np.zeros_like(w)
    for g in grads:
        if momentum == 0 and not nesterov:
            w = w - lr * g
            continue
        m = momentum * m - lr * g
        w = w + (momentum * m - lr * g if nesterov else m)
    return w


def ref_adam(w, grads, lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    """The paper's form with bias-corrected moments; Keras adds eps to sqrt(v) before the
    correction, which is the paper's rule with eps_hat = eps / sqrt(1 - b2**t)."""
    w = w.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        eps_hat = eps / np.sqrt(1 - b2 ** t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps_hat)
    return w


OPTIMIZERS = {
    "sgd": (lambda: ag.optimizers.SGD(0.1), lambda w, gs: ref_sgd(w, gs, 0.1)),
    "momentum": (lambda: ag.optimizers.SGD(0.05, momentum=0.9),
                 lambda w, gs: ref_sgd(w, gs, 0.05, 0.9)),
    "nesterov": (lambda: ag.optimizers.SGD(0.05, momentum=0.8, nesterov=True),
                 lambda w, gs: ref_sgd(w, gs, 0.05, 0.8, True)),
    "adam": (lambda: ag.optimizers.Adam(0.01), lambda w, gs: ref_adam(w, gs, 0.01)),
    "adam_betas": (lambda: ag.optimizers.Adam(0.2, beta_1=0.5, beta_2=0.7, epsilon=1e-3),
                   lambda w, gs: ref_adam(w, gs, 0.2, 0.5, 0.7, 1e-3)),
}
STEPS = 6


def _grads(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for _ in range(STEPS)]


def _run(make, w0, grads, mode):
    w = ag.Variable(w0, name="w")
    opt = make()
    if mode == "eager":
        step = lambda g: opt.apply_gradients(zip([g], [w]))   # noqa: E731
    else:
        @ag.function
        def step(g):
            opt.apply_gradients(zip([g], [w]))
    if mode == "run_eagerly":
        ag.config.run_functions_eagerly(True)
    try:
        for g in grads:
            step(g)
    finally:
        ag.config.run_functions_eagerly(False)
    if mode == "traced":
        assert step.experimental_get_tracing_count() == 1
    assert int(opt.iterations.numpy()) == STEPS
    return w.numpy()


@pytest.mark.parametrize("mode", ["eager", "traced", "run_eagerly"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_matches_numpy_reference_float64(name, mode):
    make, ref = OPTIMIZERS[name]
    w0 = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]])
    grads = _grads(w0.shape, np.float64)
    np.testing.assert_allclose(_run(make, w0, grads, mode), ref(w0, grads), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_float32_variables_stay_float32(name):
    make, ref = OPTIMIZERS[name]
    w0 = np.array([1.0, -2.0, 0.5], np.float32)
    grads = _grads(w0.shape, np.float32, seed=1)
    eager = _run(make, w0, grads, "eager")
    traced = _run(make, w0, grads, "traced")
    assert eager.dtype == traced.dtype == np.float32
    expected = ref(w0.astype(np.float64), [g.astype(np.float64) for g in grads])
    np.testing.assert_allclose(eager, expected, rtol=1e-5)
    np.testing.assert_allclose(traced, eager, rtol=1e-6)


def test_the_reference_rules_are_not_trivial():
    # the references themselves: nesterov differs from plain momentum, Adam's first step
    # moves every weight by about lr (bias correction), SGD by lr * g
    w0, gs = np.zeros(3), [np.array([1.0, -2.0, 4.0])] * 2
    assert not np.allclose(ref_sgd(w0, gs, 0.1, 0.9), ref_sgd(w0, gs, 0.1, 0.9, True))
    np.testing.assert_allclose(ref_adam(w0, gs[:1], 0.01), [-0.01, 0.01, -0.01], rtol=1e-5)
    np.testing.assert_allclose(ref_sgd(w0, gs[:1], 0.1), [-0.1, 0.2, -0.4])


# -- state ---------------------------------------------------------------------------------------

def test_slots_are_created_on_the_first_call_and_reused():
    a = ag.Variable(np.zeros(2), name="a")
    b = ag.Variable(np.zeros((2, 2), np.float32), name="b")
    opt = ag.optimizers.Adam()
    assert opt.variables == ()
    opt.apply_gradients(zip([np.ones(2), np.ones((2, 2))], [a, b]))
    names = [v.name for v in opt.variables]
    assert names == ["Adam/iterations", "a/m", "a/v", "b/m", "b/v"]
    assert not any(v.trainable for v in opt.variables)
    assert opt.get_slot(b, "m").dtype == np.float32 and opt.get_slot(b, "m").shape == (2, 2)
    first = list(opt.variables)
    opt.apply_gradients(zip([np.ones(2), np.ones((2, 2))], [a, b]))
    assert all(x is y for x, y in zip(opt.variables, first)) and len(opt.variables) == 5
    assert int(opt.iterations.numpy()) == 2
    assert [v.name for v in ag.optimizers.SGD(0.1).variables] == []
    plain = ag.optimizers.SGD(0.1)
    plain.apply_gradients([(np.ones(2), a)])
    assert [v.name for v in plain.variables] == ["SGD/iterations"]   # no momentum: no slot
    with pytest.raises(KeyError, match="no slot 'momentum'"):
        plain.get_slot(a, "momentum")


def test_traced_updates_are_variable_nodes_and_slots_come_from_the_first_trace():
    w = ag.Variable(np.ones(3), name="w")
    opt = ag.optimizers.SGD(0.1, momentum=0.9)

    @ag.function
    def step(g):
        opt.apply_gradients([(g, w)])

    conc = step.get_concrete_function(ag.TensorSpec([3], np.float64))
    ops = [n.op for n in conc.graph.as_graph_def().node]
    assert ops.count("assign_variable") == 1       # the momentum slot
    assert ops.count("update_variable") == 2       # the weight and the counter
    assert [v.name for v in opt.variables] == ["SGD/iterations", "w/momentum"]
    assert np.allclose(w.numpy(), 1.0)             # tracing ran nothing
    step(np.ones(3))
    np.testing.assert_allclose(w.numpy(), 0.9)


def test_learning_rate_variable_is_read_when_the_graph_runs():
    w = ag.Variable(np.zeros(1))
    lr = ag.Variable(0.5)
    opt = ag.optimizers.SGD(lr)

    @ag.function
    def step(g):
        opt.apply_gradients([(g, w)])

    step(np.ones(1))
    lr.assign(0.25)
    step(np.ones(1))
    np.testing.assert_allclose(w.numpy(), [-0.75])
    assert step.experimental_get_tracing_count() == 1
    calls = []
    sched = ag.optimizers.SGD(lambda: calls.append(1) or 0.5)
    sched.apply_gradients([(np.ones(1), w)])
    assert calls == [1]
    np.testing.assert_allclose(w.numpy(), [-1.25])


def test_bad_arguments():
    w = ag.Variable(np.zeros(2), name="w")
    opt = ag.optimizers.Adam()
    with pytest.raises(TypeError, match="not an ag.Variable"):
        opt.apply_gradients([(np.ones(2), np.zeros(2))])
    with pytest.raises(TypeError, match="pairs"):
        opt.apply_gradients([np.ones(2)])
    with pytest.raises(ValueError, match="no gradients provided for any variable.*w"):
        opt.apply_gradients([(None, w)])
    v = ag.Variable(np.zeros(2), name="v")
    with pytest.warns(UserWarning, match=r"do not exist for variables \['v'\]"):
        opt.apply_gradients([(np.ones(2), w), (None, v)])
    assert np.all(v.numpy() == 0) and np.all(w.numpy() < 0)
    with pytest.raises(ValueError, match="momentum"):
        ag.optimizers.SGD(0.1, momentum=1.5)
    with pytest.raises(TypeError, match="learning_rate"):
        ag.optimizers.SGD("fast")


# -- the seeds' story: two optimizers in one function ------------------------------------------

def _loss_grad(w, x, y):
    # d/dw sum((w*x - y)**2), written out (the seed computes it with a GradientTape)
    return np.sum(2 * (w * x - y) * x)


def _seed_train_step(w, x, y, optimizer):
    gradients = [_loss_grad(w, x, y)]
    optimizer.apply_gradients(zip(gradients, [w]))


def _seed_data():
    return ag.Variable(np.float32(2.0), name="w"), np.float32([-1.0]), np.float32([2.0])


def test_two_optimizers_in_one_function_raise_the_clear_error():
    opt1 = ag.optimizers.Adam(learning_rate=1e-2)
    opt2 = ag.optimizers.Adam(learning_rate=1e-3)
    train_step = ag.function(_seed_train_step)
    w, x, y = _seed_data()
    train_step(w, x, y, opt1)
    with pytest.raises(ValueError) as info:
        train_step(w, x, y, opt2)
    message = str(info.value)
    assert "'Adam/iterations'" in message and "trace #2" in message
    assert "first trace" in message and "optimizer.build(variables)" in message
    assert opt2.variables == ()            # nothing half-made is left behind in opt2
    assert int(opt1.iterations.numpy()) == 1


def _alternating_reference(steps):
    w, x, y = 2.0, -1.0, 2.0
    state = [dict(m=0.0, v=0.0, t=0), dict(m=0.0, v=0.0, t=0)]
    for i in range(steps):
        lr, s = (1e-2, state[0]) if i % 2 == 0 else (1e-3, state[1])
        g = 2 * (w * x - y) * x
        s["t"] += 1
        s["m"] = 0.9 * s["m"] + 0.1 * g
        s["v"] = 0.999 * s["v"] + 0.001 * g * g
        w -= lr * np.sqrt(1 - 0.999 ** s["t"]) / (1 - 0.9 ** s["t"]) * s["m"] / \
            (np.sqrt(s["v"]) + 1e-7)
    return w


def test_fix_build_the_optimizers_before_the_function_runs():
    opt1 = ag.optimizers.Adam(learning_rate=1e-2)
    opt2 = ag.optimizers.Adam(learning_rate=1e-3)
    train_step = ag.function(_seed_train_step)
    w, x, y = _seed_data()
    opt1.build([w])
    opt2.build([w])
    for i in range(10):
        train_step(w, x, y, opt1 if i % 2 == 0 else opt2)
    assert train_step.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(w.numpy(), _alternating_reference(10), rtol=1e-6)


def test_fix_the_seeds_one_concrete_function_per_optimizer():
    opt1 = ag.optimizers.Adam(learning_rate=1e-2)
    opt2 = ag.optimizers.Adam(learning_rate=1e-3)
    w, x, y = _seed_data()
    # the seed's fix, as written there: a new Function (and ConcreteFunction) per optimizer
    train_step_1 = ag.function(_seed_train_step).get_concrete_function(w, x, y, opt1)
    train_step_2 = ag.function(_seed_train_step).get_concrete_function(w, x, y, opt2)
    for i in range(10):
        if i % 2 == 0:
            train_step_1(w, x, y)   # `opt1` is not passed: the trace holds it
        else:
            train_step_2(w, x, y)
    np.testing.assert_allclose(w.numpy(), _alternating_reference(10), rtol=1e-6)
    assert int(opt1.iterations.numpy()) == int(opt2.iterations.numpy()) == 5


def test_fix_create_state_on_the_first_call_of_a_module_method():
    # the guarded-creation pattern: the optimizer is made outside, its slots in trace #1
    class Trainer(ag.Module):
        def __init__(self):
            self.w = ag.Variable(np.float32(2.0), name="w")
            self.opt = ag.optimizers.Adam(learning_rate=1e-2)

        @ag.function
        def step(self, x, y):
            self.opt.apply_gradients([(_loss_grad(self.w, x, y), self.w)])

    t = Trainer()
    _, x, y = _seed_data()
    for _ in range(3):
        t.step(x, y)
    assert t.step.experimental_get_tracing_count() == 1
    assert [v.name for v in t.variables] == ["w", "Adam/iterations", "w/m", "w/v"]
    assert [v.name for v in t.trainable_variables] == ["w"]
    assert int(t.opt.iterations.numpy()) == 3


def test_warning_free_in_the_steady_state():
    w = ag.Variable(np.zeros(2))
    opt = ag.optimizers.Adam(0.1)

    @ag.function
    def step(g):
        opt.apply_gradients([(g, w)])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            step(np.ones(2))
    assert re.match(r"<ag.optimizers.Adam 'Adam'>", repr(opt))


# -- with the gradient tape: the seed's code as written -----------------------------------------

def test_seed_train_step_with_gradient_tape():
    opt1 = ag.optimizers.Adam(learning_rate=1e-2)
    opt2 = ag.optimizers.Adam(learning_rate=1e-3)

    @ag.function
    def train_step(w, x, y, optimizer):
        with ag.GradientTape() as tape:
            L = np.sum(np.square(w * x - y))
        gradients = tape.gradient(L, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w, x, y = _seed_data()
    train_step(w, x, y, opt1)
    with pytest.raises(ValueError, match="tracing again"):
        train_step(w, x, y, opt2)
    opt2.build([w])
    for i in range(1, 10):
        train_step(w, x, y, opt1 if i % 2 == 0 else opt2)
    np.testing.assert_allclose(w.numpy(), _alternating_reference(10), rtol=1e-6)


@pytest.mark.parametrize("eagerly", [False, True])
def test_module_training_with_tape_matches_numpy(eagerly):
    class Linear(ag.Module):
        def __init__(self):
            super().__init__()
            self.w = ag.Variable(np.array([0.5, -0.5]), name="w")
            self.b = ag.Variable(0.0, name="b")
            self.frozen = ag.Variable(1.0, name="frozen", trainable=False)

        def __call__(self, x):
            return (np.sum(x * self.w, axis=1) + self.b) * self.frozen

    model = Linear()
    opt = ag.optimizers.SGD(0.1, momentum=0.5)
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]])
    y = np.array([1.0, 2.0, 0.5])

    @ag.function
    def step():
        with ag.GradientTape() as tape:     # trainable Variables are watched automatically
            loss = np.mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    ag.config.run_functions_eagerly(eagerly)
    try:
        losses = [float(step()) for _ in range(5)]
    finally:
        ag.config.run_functions_eagerly(False)
    w, b, mw, mb, ref_losses = np.array([0.5, -0.5]), 0.0, 0.0, 0.0, []
    for _ in range(5):
        err = x @ w + b - y
        ref_losses.append(np.mean(err ** 2))
        gw, gb = 2 * x.T @ err / len(y), 2 * np.mean(err)
        mw, mb = 0.5 * mw - 0.1 * gw, 0.5 * mb - 0.1 * gb
        w, b = w + mw, b + mb
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-12)
    np.testing.assert_allclose(model.w.numpy(), w, rtol=1e-12)
    np.testing.assert_allclose(model.b.numpy(), b, rtol=1e-12)
    assert float(model.frozen.numpy()) == 1.0
    assert [v.name for v in opt.variables] == ["SGD/iterations", "b/momentum", "w/momentum"]


@pytest.mark.parametrize("name", ["nesterov", "adam"])
def test_updates_inside_a_staged_loop(name):
    # many steps in one call: the updates are effectful nodes of the while_loop's body, and
    # the slots made while tracing the body hold their values across iterations
    make, ref = OPTIMIZERS[name]
    w = ag.Variable(np.array([1.0, -1.0, 0.5]), name="w")
    opt = make()

    @ag.function
    def fit(n, g):
        for _ in ag.range(n):
            opt.apply_gradients([(g * w, w)])      # the gradient of sum(g * w**2) / 2

    fit(np.int64(STEPS), np.array([1.0, 2.0, 3.0]))
    assert len(fit.get_concrete_function(np.int64(1), np.zeros(3)).graph.nodes) < 20
    expected, g = np.array([1.0, -1.0, 0.5]), np.array([1.0, 2.0, 3.0])
    one = make()
    check = ag.Variable(expected.copy())
    for _ in range(STEPS):
        one.apply_gradients([(g * check.numpy(), check)])
    np.testing.assert_allclose(w.numpy(), check.numpy(), rtol=1e-12)
    assert int(opt.iterations.numpy()) == STEPS
    # and the eager run follows the written-out rule, fed the same gradients
    ws, gs = [np.array([1.0, -1.0, 0.5])], []
    for _ in range(STEPS):
        gs.append(g * ws[-1])
        ws.append(ref(np.array([1.0, -1.0, 0.5]), gs))
    np.testing.assert_allclose(check.numpy(), ws[-1], rtol=1e-12)
