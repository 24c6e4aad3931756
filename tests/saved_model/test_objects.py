"""The loaded object: dispatch among saved traces (dtype/shape with None dims, Python
values such as `training`), clear errors, children, Variables, regularization losses,
use inside a new ag.function, re-saving, the single-bytes form, and fine-tuning."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.variables import Variable
from tests.saved_model.models import Model, data, trained_model


@pytest.fixture
def saved(tmp_path):
    m = trained_model()
    ag.saved_model.save(m, str(tmp_path / "m"))
    return m, ag.saved_model.load(str(tmp_path / "m"))


def test_dispatch_by_shape_dtype_and_python_values(saved):
    m, lo = saved
    x, _ = data()
    for n in (1, 5, 8):                       # the saved trace has a None batch dimension
        assert np.array_equal(lo(x[:n]), m(x[:n]))
        assert np.array_equal(lo(x[:n], training=True), m(x[:n], training=True))
    assert not np.array_equal(lo(x, training=True), lo(x, training=False))
    assert np.array_equal(lo.encoder(x), m.encoder(x))


def test_no_matching_trace_lists_the_saved_signatures(saved):
    _, lo = saved
    with pytest.raises(TypeError) as e:
        lo(np.ones((2, 3), np.float32))
    msg = str(e.value)
    assert "float32" in msg and "shape=(None, 3)" in msg and "training: True" in msg \
        and "training: False" in msg
    with pytest.raises(TypeError, match="`training` must be True, got Python int 1"):
        lo(np.ones((2, 3)), training=1)        # 1 is not a saved Python value (True is)
    with pytest.raises(TypeError, match=r"shape=\(None, 3\)"):
        lo(np.ones((2, 4)))


def test_variables_children_and_regularization_losses(saved):
    m, lo = saved
    assert [v.name for v in lo.variables] == [v.name for v in m.variables]
    assert all(isinstance(v, Variable) for v in lo.variables)
    assert [v.name for v in lo.trainable_variables] == [v.name for v in m.trainable_variables]
    assert len(lo.trainable_variables) == 4 and len(lo.variables) == 5
    for a, b in zip(lo.variables, m.variables):
        assert np.array_equal(a.numpy(), b.numpy()) and a.trainable == b.trainable
    assert [v.name for v in lo.encoder.variables] == ["b", "w"]
    assert lo.name == "model" and lo.encoder.name == "encoder"
    (reg,) = lo.regularization_losses
    assert np.float64(reg()) == m.regularization_losses[0]()


def test_untraced_function_is_a_clear_error(tmp_path):
    @ag.function
    def f(x):
        return x + 1
    with pytest.raises(ValueError, match="never been traced.*input_signature"):
        ag.saved_model.save(f, str(tmp_path / "f"))
    with pytest.raises(ValueError, match="plain Python function.*@ag.function"):
        ag.saved_model.to_bytes(f.python_function)


def test_inside_a_new_function_and_resave(saved, tmp_path):
    m, lo = saved
    x, _ = data()

    @ag.function
    def bigger(x):
        return 2.0 * lo(x) + np.sum(lo.encoder(x))
    assert np.array_equal(bigger(x), 2.0 * m(x) + np.sum(m.encoder(x)))
    ag.saved_model.save(lo, str(tmp_path / "again"))
    lo2 = ag.saved_model.load(str(tmp_path / "again"))
    assert lo2.calls.numpy() == lo.calls.numpy() == m.calls.numpy() == 1
    assert np.array_equal(lo2(x, training=True), m(x, training=True))


def test_single_bytes_form_of_a_function():
    @ag.function
    def f(x, n):
        i = 0
        while i < n:
            x = np.sin(x) + i
            i += 1
        return x
    x = np.linspace(0, 1, 5)
    f(x, np.int64(3))
    g = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f))
    assert np.array_equal(g(x, np.int64(4)), f(x, np.int64(4)))


def _grads(model, x, y):
    @ag.function
    def g(x, y):
        with ag.GradientTape() as tape:
            loss = np.mean((model(x, training=True) - y) ** 2)
        return tape.gradient(loss, model.trainable_variables)
    return g(x, y)


def test_fine_tuning_gradients_steps_and_round_trip(saved, tmp_path):
    m, lo = saved
    x, y = data()
    for a, b in zip(_grads(m, x, y), _grads(lo, x, y)):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
    with ag.GradientTape() as tape:           # eagerly, too
        loss = np.mean((lo(x, training=True) - y) ** 2)
    for a, b in zip(_grads(m, x, y), tape.gradient(loss, lo.trainable_variables)):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
    opt = ag.optimizers.SGD(0.1)

    @ag.function
    def step(x, y):
        with ag.GradientTape() as tape:
            loss = np.mean((lo(x, training=True) - y) ** 2) + lo.regularization_losses[0]()
        vs = lo.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, vs), vs))
        return loss
    before = [v.numpy().copy() for v in lo.trainable_variables]
    losses = [step(x, y) for _ in range(10)]
    assert losses[-1] < losses[0]
    assert all(not np.array_equal(a, v.numpy()) for a, v in zip(before, lo.trainable_variables))
    ag.saved_model.save(lo, str(tmp_path / "tuned"))
    lo2 = ag.saved_model.load(str(tmp_path / "tuned"))
    for a, b in zip(lo.variables, lo2.variables):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    assert np.array_equal(lo2(x), lo(x))


def test_gradients_with_respect_to_inputs_through_loops():
    @ag.function
    def f(x, n):
        i = 0
        while i < n:
            x = np.sin(x) * 1.5
            i += 1
        return np.sum(x)
    x = np.linspace(0.1, 1.0, 4)
    f(x, np.int64(3))
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f))

    def grad_of(fn):
        @ag.function
        def g(x, n):
            with ag.GradientTape() as tape:
                tape.watch(x)
                y = fn(x, n)
            return tape.gradient(y, x)
        return g(x, np.int64(3))
    np.testing.assert_allclose(grad_of(loaded), grad_of(f), rtol=0, atol=1e-12)
    eps = 1e-6
    fd = [(f(x + eps * e, np.int64(3)) - f(x - eps * e, np.int64(3))) / (2 * eps)
          for e in np.eye(4)]
    np.testing.assert_allclose(grad_of(loaded), fd, rtol=1e-6)


def test_the_tree_keeps_what_holds_variables_or_functions():
    import logging

    class Config:
        pass

    class Holder(ag.Module):
        def __init__(self):
            super().__init__()
            self.v = ag.Variable(1.0)
            self.log = logging.getLogger("autograph.test")     # holds neither: dropped
            self.config = Config()                             # empty: dropped
            self.numbers = list(range(5))                      # plain list: dropped
            self.label = "hello"                               # plain value: kept
            self.layers = [Config(), ag.Variable(2.0)]

        @ag.function
        def __call__(self, x):
            return x * self.v
    h = Holder()
    h(np.float64(2.0))
    import json
    from autograph.saved_model.save import serialize
    doc = json.loads(serialize(h)["saved_model.json"])
    kinds = sorted(o["kind"] for o in doc["objects"])     # nothing of the logger is written
    assert kinds == ["function", "list", "object", "value", "variable", "variable"]
    lo = ag.saved_model.from_bytes(ag.saved_model.to_bytes(h))
    assert sorted(lo._children) == ["__call__", "label", "layers", "v"]
    assert lo.label == "hello" and len(lo.layers) == 1 and lo(np.float64(2.0)) == 2.0


def test_repeated_calls_take_the_fast_path_and_still_check(saved):
    m, lo = saved
    x, _ = data()
    for _ in range(3):                           # the second call on hits the fast path
        for n in (2, 5):
            assert np.array_equal(lo(x[:n]), m(x[:n]))
    fn = lo._children["__call__"]
    assert len(fn._fast) == 2
    with pytest.raises(TypeError, match="no saved trace"):
        lo(x[:2].astype(np.float32))             # a new dtype: the checked path
    with ag.device("cpu"):                       # a device scope: the general path
        assert np.array_equal(lo(x[:2]), m(x[:2]))


@ag.custom_gradient
def _clipped_square(x):
    def grad(dy):
        return np.clip(dy * 2 * x, -1.0, 1.0)
    return x * x, grad


def test_custom_gradients_survive_saving():
    """A custom_gradient node holds its gradient as a graph that reads the forward pass
    (captures of its parent, saved explicitly); here inside a loop body."""
    @ag.function
    def f(x):
        i, s = 0, 0.0
        while i < 2:
            s = s + np.sum(_clipped_square(x * (i + 1)))
            i += 1
        return s
    x = np.array([0.1, 0.3, 2.0])
    f(x)
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f))

    def grad_of(fn):
        @ag.function
        def g(x):
            with ag.GradientTape() as tape:
                tape.watch(x)
                y = fn(x)
            return tape.gradient(y, x)
        return g(x)
    want = [0.2 + 2 * 0.4, 0.6 + 2 * 1.0, 1.0 + 2 * 1.0]     # clipped at each use
    for fn in (f, loaded, loaded):
        np.testing.assert_allclose(grad_of(fn), want, rtol=0, atol=1e-12)


def test_a_dataset_argument_is_a_clear_error():
    from autograph.data import Dataset

    @ag.function
    def total(ds):
        s = np.float64(0.0)
        for x in ds:
            s = s + np.sum(x)
        return s
    ds = Dataset.from_tensor_slices(np.arange(6.0)).batch(2)
    total(ds)
    with pytest.raises(ValueError, match="argument `ds` is an object \\(Dataset\\).*cannot be "
                                         "saved yet.*takes the arrays"):
        ag.saved_model.to_bytes(total)
