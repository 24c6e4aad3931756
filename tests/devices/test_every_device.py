"""Every sample program on every device that is not NumPy, compared with NumPy's answer.

This is the proof of pluggability: the runtime takes every kernel, dtype and constant from
the device's array namespace, so the strict device (array-api-strict, which rejects anything
outside the array API standard) must give exactly the answers the cpu device gives. Torch
(CPU) runs when installed, and the GPU devices when a GPU is visible; otherwise they skip
with the reason.

Three layers of programs:
- tests/runtime/samples.py: explicit ag.cond / ag.while_loop programs, traced and run by the
  interpreter and by codegen, against their plain-Python references;
- tests/converters/samples.py: plain Python control flow compiled by ag.function, against
  the original Python;
- the teaching demos (collatz, fizzbuzz, the seed's dynamic RNN) on a device registered in
  the test itself from a namespace that is not NumPy.
"""

import contextlib
import inspect
import io

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.devices import DeviceUnavailable, get_device
from tests.converters import samples as compiler_samples
from tests.runtime import samples as runtime_samples
from tests.runtime import tracing

DEVICES = ["strict", "torch", "cuda", "torch:cuda"]


def _available(names):
    found = []
    for name in names:
        try:
            get_device(name)
            found.append(name)
        except DeviceUnavailable:
            pass
    return found


# parametrize with the devices present here; each missing one is one skip, with its reason
AVAILABLE = _available(DEVICES)
MISSING = [name for name in DEVICES if name not in AVAILABLE]


@pytest.fixture(params=AVAILABLE)
def device(request):
    return get_device(request.param)


@pytest.mark.parametrize("name", MISSING)
def test_missing_device_runs_nothing(name):
    with pytest.raises(DeviceUnavailable) as info:
        get_device(name)
    pytest.skip(f"every sample would run on {name!r} here, but: {info.value}")


def test_strict_is_always_compared():
    """array-api-strict is a test dependency: the proof of pluggability never skips."""
    assert "strict" in AVAILABLE


def host(device, value):
    """A device result as NumPy (Python values pass through)."""
    return value if isinstance(value, (int, float, bool, str)) else device.to_host(value)


def assert_matches(got, want):
    """Same value and dtype as NumPy's answer (floats to 1e-6)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got, want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# -- runtime samples: interpreter and codegen on the device ------------------------------------

@pytest.mark.parametrize("mode", ["interpreter", "codegen"])
@pytest.mark.parametrize("sample", runtime_samples.SAMPLES, ids=repr)
def test_runtime_samples(device, sample, mode):
    want, want_text = sample.reference(*sample.args)
    graph, _ = tracing.trace(sample.fn, *sample.args, name=sample.name)
    args = [device.to_device(a) for a in sample.args]
    got, text = tracing.capture_stdout(tracing.run, graph, args, mode, device)
    device.synchronize()
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        assert device.owns(g), f"{sample.name}: an output left {device.name}: {type(g)}"
        assert_matches(device.to_host(g), w)
    assert text == want_text


# -- compiler samples: ag.function on the device ------------------------------------------------

def _compiler_cases():
    for fn, arg_sets, static in compiler_samples.SAMPLES:
        for args in arg_sets:
            yield pytest.param(fn, args, static, id=f"{fn.__name__}{args}")


@pytest.mark.parametrize("fn,args,static", list(_compiler_cases()))
def test_compiler_samples(device, fn, args, static):
    want = fn(*args)
    params = list(inspect.signature(fn).parameters)
    call_args = [a if p in static else compiler_samples.as_array(a) for p, a in zip(params, args)]
    got = ag.function(fn, device=device.name)(*call_args)
    flat_got = got if isinstance(got, tuple) else (got,)
    flat_want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(flat_got, flat_want):
        assert device.owns(g) or type(g) in (int, float, bool), \
            f"{fn.__name__}: a result left {device.name}: {type(g)}"
        g = host(device, g)
        if isinstance(w, float) or np.asarray(g).dtype.kind == "f":
            np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=1e-9)
        else:
            assert np.asarray(g).item() == w, (g, w)


# -- the demos, on a device registered here from a namespace that is not NumPy -------------------

def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def fizzbuzz(n):
    for i in ag.range(1, n + 1):
        if i % 15 == 0:
            ag.print("fizzbuzz")
        elif i % 3 == 0:
            ag.print("fizz")
        elif i % 5 == 0:
            ag.print("buzz")
        else:
            ag.print(i)


def rnn_step(inp, state):
    return np.tanh(inp + state)


def dynamic_rnn(input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = np.transpose(input_data, (1, 0, 2))
    max_seq_len = input_data.shape[0]
    states = ag.TensorArray(np.float32, size=max_seq_len)
    state = initial_state
    for i in ag.range(max_seq_len):
        state = rnn_step(input_data[i], state)
        states = states.write(i, state)
    return np.transpose(states.stack(), (1, 0, 2))


def dynamic_rnn_numpy(input_data, initial_state):
    state, states = initial_state, []
    for t in range(input_data.shape[1]):
        state = np.tanh(input_data[:, t] + state)
        states.append(state)
    return np.stack(states, axis=1)


@pytest.fixture
def lab(clean_registry):
    """A device registered the public way, backed by array-api-strict, counting its moves."""
    xps = pytest.importorskip("array_api_strict")
    moves = {"in": 0, "out": 0}

    def to_device(a):
        moves["in"] += 1
        return xps.asarray(np.asarray(a))

    def to_host(a):
        moves["out"] += 1
        return np.asarray(a)

    dev = ag.register_device("lab", xps, to_device=to_device, to_host=to_host)
    dev.moves = moves
    return dev


def _printed(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn(*args)
    return result, buf.getvalue()


def test_demos_on_a_registered_device(lab):
    assert lab.xp is not np
    f = ag.function(collatz, device="lab")
    for n in (1, 6, 27, 97):
        got = f(np.int64(n))
        assert lab.owns(got)
        assert_matches(lab.to_host(got), np.int64(collatz(n)))
    assert lab.moves["in"] > 0

    _, want = _printed(fizzbuzz, 16)
    assert want.split()[:5] == ["1", "2", "fizz", "4", "buzz"]
    g = ag.function(fizzbuzz, device="lab")
    _printed(g, np.int64(16))            # the first call traces
    _, got = _printed(g, np.int64(16))   # the second only runs the graph
    assert got == want

    rng = np.random.default_rng(1)
    data = rng.uniform(size=(2, 3, 4)).astype(np.float32)
    init = np.zeros((2, 4), np.float32)
    out = ag.function(dynamic_rnn, device="lab", outputs="host")(data, init)
    assert type(out) is np.ndarray
    assert_matches(out, dynamic_rnn_numpy(data, init))


def test_demos_on_each_device(device):
    f = ag.function(collatz, device=device.name, outputs="host")
    assert_matches(f(np.int64(27)), np.int64(111))
    _, want = _printed(fizzbuzz, 15)
    g = ag.function(fizzbuzz, device=device.name)
    _printed(g, np.int64(15))
    assert _printed(g, np.int64(15))[1] == want
    rng = np.random.default_rng(2)
    data = rng.uniform(size=(3, 5, 2)).astype(np.float32)
    init = rng.uniform(size=(3, 2)).astype(np.float32)
    out = ag.function(dynamic_rnn, device=device.name, outputs="host")(data, init)
    assert_matches(out, dynamic_rnn_numpy(data, init))


# -- state on the device: Variables made in the scope, constants of the graph ------------------

def test_variables_and_constants_live_on_the_device(device):
    with ag.device(device.name):
        v = ag.Variable(np.float64(1.0), name="v")
    assert device.owns(v._value)
    table = np.array([0.5, 2.0, 4.0])

    def step(x):
        v.assign(v * x + table[1])       # `table` becomes a Const of the graph
        return v + 0.0

    f = ag.function(step, device=device.name)
    got = [f(np.float64(3.0)) for _ in range(3)]
    assert all(device.owns(g) for g in got) and device.owns(v._value)
    want, value = [], 1.0
    for _ in range(3):
        value = value * 3.0 + 2.0
        want.append(np.float64(value))
    for g, w in zip(got, want):
        assert_matches(device.to_host(g), w)


# -- unknown dimensions: shapes read at run time on the device ------------------------------------

def running_stats(x):
    best = x[0]
    total = np.zeros_like(x[0])
    for i in ag.range(np.size(x)):
        if x[i] > best:
            best = x[i]
        total += x[i]
    return best, total / np.size(x)


def test_unknown_dimensions_on_each_device(device):
    f = ag.function(running_stats, device=device.name, outputs="host",
                    input_signature=[ag.TensorSpec([None], np.float64)])
    for x in (np.array([3.0, 1.0, 7.0, 2.0]), np.arange(6.0), np.array([-1.0])):
        got, want = f(x), running_stats(x)
        for g, w in zip(got, want):
            assert_matches(g, w)
    assert f.experimental_get_tracing_count() == 1
