"""ag.onnx.export: the ONNX model passes the checker and onnxruntime gives autograph's
numbers (float64 to 1e-12, integers exactly) for graphs with cond, while_loop,
TensorArray and Variables; what cannot be exported is refused by name and line."""

import numpy as np
import pytest

import autograph as ag

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def run_onnx(fn, *args):
    model = ag.onnx.export(fn)
    session = ort.InferenceSession(model.SerializeToString())
    feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), args)}
    return session.run(None, feeds)


def check(fn, *args):
    expected = fn(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_onnx(fn, *args)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
        else:
            np.testing.assert_array_equal(g, e)


@ag.function
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("n", [1, 6, 27, 97])
def test_collatz_loop_and_conditional(n):
    collatz(np.int64(27))
    check(collatz, np.int64(n))


@ag.function
def rnn(x, w, h):
    steps = x.shape[0]
    states = ag.TensorArray(np.float64, size=steps)
    for t in ag.range(steps):
        h = np.tanh(h @ w + x[t])
        states = states.write(t, h)
    return states.stack(), h


def test_rnn_tensor_array_fill():
    rng = np.random.default_rng(0)
    args = rng.normal(size=(7, 2, 4)), rng.normal(size=(4, 4)) * 0.5, np.zeros((2, 4))
    rnn(*args)
    check(rnn, *args)


@ag.function
def branches_in_loop(x, n):
    ta = ag.TensorArray(np.float64, size=n)
    s = x
    for i in ag.range(n):
        if np.sum(s) > 0:
            s = np.tanh(s) * 2.0
        else:
            s = s - 1.0
        ta = ta.write(i, s)
    return ta.stack(), s


def test_conds_inside_loops():
    x = np.array([0.3, -1.2, 0.4])
    branches_in_loop(x, np.int64(5))
    check(branches_in_loop, x, np.int64(5))
    check(branches_in_loop, -x, np.int64(5))


@ag.function
def mixed(x, k):
    a = x[1:]
    b = x[k]
    c = x[None, ::-1]
    d = np.sum(x, axis=0, keepdims=True)
    e = x.reshape(3, 1).T
    g = np.concatenate([x, x])
    h = np.stack([x, x], axis=1)
    i = np.where(x > 0, x, 0.0)
    j = x // 2
    m = x % 2.0
    p = k // -3
    q = k % -3
    r = np.mean(x) + np.max(x) - np.min(x)
    s = np.arange(k) * 2
    t = (x ** 2).astype(np.float32)
    u = np.argmax(x) + (x >= 1).sum()
    return a, b, c, d, e, g, h, i, j, m, p, q, r, s, t, u


@pytest.mark.parametrize("k", [0, 2, -1])
def test_numpy_semantics_survive_lowering(k):
    x = np.array([1.5, -2.25, 3.0])
    mixed(x, np.int64(1))
    check(mixed, x, np.int64(k))


@pytest.mark.parametrize("a,b", [(7, 3), (-7, 3), (7, -3), (-7, -3)])
def test_floor_division_and_remainder_round_toward_minus_infinity(a, b):
    @ag.function
    def f(a, b):
        return a // b, a % b, a * 1.0 // b, a * 1.0 % b
    f(np.int64(1), np.int64(1))
    check(f, np.int64(a), np.int64(b))


def test_variables_become_initializers():
    v = ag.Variable(np.array([1.0, 2.0, 3.0]))

    @ag.function
    def f(x):
        return x * v + 1.0

    f(np.ones(3))
    model = ag.onnx.export(f)
    assert len(model.graph.initializer) == 1
    check(f, np.array([2.0, 0.5, -1.0]))


def test_maximum_iterations_bounds_the_loop():
    @ag.function
    def f(x):
        return ag.while_loop(lambda v: True, lambda v: (v * v,), (x,), maximum_iterations=2)

    f(np.float64(3.0))
    check(f, np.float64(3.0))


def test_writes_file_that_loads(tmp_path):
    collatz(np.int64(27))
    path = tmp_path / "collatz.onnx"
    ag.onnx.export(collatz, str(path))
    session = ort.InferenceSession(str(path))
    assert session.run(None, {session.get_inputs()[0].name: np.asarray(27, np.int64)})[0] == 111


def test_assigning_a_variable_is_refused_with_the_line():
    v = ag.Variable(np.zeros(2))

    @ag.function
    def f(x):
        v.assign(x)   # the line the error names
        return x + 1

    f(np.ones(2))
    with pytest.raises(ValueError) as info:
        ag.onnx.export(f)
    message = str(info.value)
    assert "assign_variable" in message and "test_export.py" in message
    assert "v.assign(x)" in message


def test_a_primitive_without_mapping_is_named():
    @ag.function
    def f(x):
        return np.linalg.qr(x)[0]

    f(np.eye(3))
    with pytest.raises(ValueError, match="'qr'.*ONNX has no mapping|ONNX has no mapping.*'qr'"):
        ag.onnx.export(f)


def test_a_function_with_several_traces_asks_for_one():
    @ag.function
    def f(x):
        return x + 1

    f(np.ones(2))
    f(np.ones(3))
    with pytest.raises(ValueError, match="2 traces"):
        ag.onnx.export(f)
    model = ag.onnx.export(f.get_concrete_function(ag.TensorSpec([3], np.float64)))
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE


def test_untraced_function_says_what_to_do():
    @ag.function
    def f(x):
        return x + 1

    with pytest.raises(ValueError, match="get_concrete_function"):
        ag.onnx.export(f)


def _op_types(graph):
    for node in graph.node:
        yield node.op_type
        for attr in node.attribute:
            if attr.g is not None and attr.g.node:
                yield from _op_types(attr.g)


def test_an_in_order_fill_becomes_a_loop_scan_output():
    rng = np.random.default_rng(0)
    args = rng.normal(size=(7, 2, 4)), rng.normal(size=(4, 4)) * 0.5, np.zeros((2, 4))
    rnn(*args)
    ops = set(_op_types(ag.onnx.export(rnn).graph))
    assert "Loop" in ops and not any(op.startswith("Sequence") for op in ops), ops
    check(rnn, *args)


@ag.function
def fill_then_read(x, n):
    ta = ag.TensorArray(np.float64, size=n)
    for i in ag.range(n):
        ta = ta.write(i, x * i)
    return ta.read(n - 1) + ta.stack()[0]


@ag.function
def conditional_writes(x, n):
    ta = ag.TensorArray(np.float64, size=n)
    for i in ag.range(n):
        if np.sum(x) > i:
            ta = ta.write(i, x + i)
        else:
            ta = ta.write(i, x - i)
    return ta.stack()


@pytest.mark.parametrize("fn", [fill_then_read, conditional_writes])
def test_other_tensor_arrays_stay_sequences(fn):
    x = np.array([0.5, 1.5])
    fn(x, np.int64(4))
    ops = set(_op_types(ag.onnx.export(fn).graph))
    assert "SequenceInsert" in ops
    check(fn, x, np.int64(4))
