"""Where an ag.function runs: the explicit device, else the `with ag.device(...)` scope's,
else the inputs' device, else the CPU; outputs on that device or on the host. Checked on the
`strict` device (array-api-strict), compared with NumPy."""

import array_api_strict as xps
import numpy as np

import autograph as ag


def model(x, y):
    return np.tanh(x) * y + 1


x = np.linspace(-1.0, 1.0, 4)
y = np.arange(4.0)
expected = np.tanh(x) * y + 1


def is_strict(a):
    return type(a).__module__.startswith("array_api_strict")


def test_explicit_device_and_host_outputs():
    on_device = ag.function(model, device="strict")
    out = on_device(x, y)
    assert is_strict(out)
    np.testing.assert_allclose(np.asarray(out), expected)
    out = on_device(x, y)                # the steady-state (fast path) call moves inputs too
    assert is_strict(out)

    to_host = ag.function(model, device="strict", outputs="host")
    out = to_host(x, y)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, expected)
    np.testing.assert_allclose(to_host(x, y), expected)


def test_scope_device_wins_over_input_device_and_one_trace_serves_both():
    f = ag.function(model)
    with ag.device("strict"):
        assert is_strict(f(x, y))
        assert is_strict(f(x, y))
    out = f(x, y)                       # outside the scope: back on the CPU
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, expected)
    with ag.device("strict"):           # a fast-path entry made outside must not leak in
        assert is_strict(f(x, y))
    assert f.experimental_get_tracing_count() == 1
    conc = f.get_concrete_function(x, y)
    assert len(conc._runners) >= 2      # compiled once per device


def test_inputs_on_a_device_run_there():
    f = ag.function(model)
    out = f(xps.asarray(x), xps.asarray(y))
    assert is_strict(out)
    np.testing.assert_allclose(np.asarray(out), expected)
    assert type(f(x, y)) is np.ndarray
    assert f.experimental_get_tracing_count() == 1   # same dtype and shape: one trace


def test_outputs_argument_is_checked():
    import pytest
    with pytest.raises(ValueError, match="outputs must be 'device' or 'host'"):
        ag.function(model, outputs="gpu")
