"""The NumPy surface of traced code on every device: operators and functions over every
pair of dtypes (and Python scalars), unary functions, reductions and shape operations.
Each result must equal eager NumPy's in value and dtype, on cpu and on each other device:
NumPy's promotion rules (NEP 50) are applied while tracing, so a namespace with stricter
rules (array-api-strict refuses int + float) must get explicit casts in the graph."""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.devices import DeviceError, DeviceUnavailable, get_device


def _present(names):
    found = []
    for name in names:
        try:
            get_device(name)
            found.append(name)
        except DeviceUnavailable:
            pass
    return found


DEVICES = ["cpu"] + _present(["strict", "torch"])
DTYPES = [np.int64, np.int32, np.float64, np.float32, np.bool_]
SCALARS = [2, 2.5, True]

BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "true_divide": lambda a, b: a / b,
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "power": lambda a, b: a ** b,
    "maximum": lambda a, b: np.maximum(a, b),
    "where": lambda a, b: np.where(a > b, a, b),
    "less": lambda a, b: a < b,
    "equal": lambda a, b: a == b,
}

UNARY = {
    "negative": lambda a: -a,
    "abs": lambda a: np.abs(a),
    "tanh": lambda a: np.tanh(a),
    "sqrt": lambda a: np.sqrt(a),
    "exp": lambda a: np.exp(a),
    "floor": lambda a: np.floor(a),
    "square": lambda a: np.square(a),
    "logical_not": lambda a: np.logical_not(a),
    "sign": lambda a: np.sign(a),
}

STRUCTURAL = {
    "sum": lambda a: np.sum(a),
    "sum_axis": lambda a: np.sum(a, axis=1),
    "mean": lambda a: np.mean(a, axis=0),
    "max": lambda a: np.max(a),
    "argmax": lambda a: np.argmax(a, axis=1),
    "cumsum": lambda a: np.cumsum(a, axis=1),
    "transpose": lambda a: a.T,
    "reshape": lambda a: np.reshape(a, (3, 2)),
    "concatenate": lambda a: np.concatenate([a, a], axis=0),
    "stack": lambda a: np.stack([a, a]),
    "index": lambda a: a[1],
    "slice": lambda a: a[:, 1:],
    "matmul": lambda a: a @ a.T,
    "astype": lambda a: a.astype(np.float32),
}

_rng = np.random.default_rng(0)


def _array(dtype, shape=(3,)):
    return _rng.integers(1, 5, size=shape).astype(dtype)


def _check(fn, args, device):
    with np.errstate(all="ignore"):
        try:
            want = np.asarray(fn(*args))
        except (TypeError, ValueError):
            return None   # NumPy refuses it too (e.g. bool - bool): nothing to compare
        f = ag.function(fn, device=device, outputs="host")
        if want.dtype == np.float16 and not hasattr(get_device(device).xp, "float16"):
            # NumPy computes on bool in float16, which the standard does not define
            with pytest.raises(DeviceError, match="has no dtype 'float16'"):
                f(*args)
            return None
        got = f(*args)
    got = np.asarray(got)
    assert got.dtype == want.dtype, (device, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    return got


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_operations_over_every_dtype_pair(device, name):
    op = BINARY[name]
    compared = 0
    for da, db in itertools.product(DTYPES, DTYPES + SCALARS):
        a = _array(da)
        if isinstance(db, type):
            result = _check(lambda x, y: op(x, y), (a, _array(db)), device)
        else:
            result = _check(lambda x, b=db: op(x, b), (a,), device)
        compared += result is not None
    assert compared >= 20


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_over_every_dtype(device, name):
    compared = sum(_check(UNARY[name], (_array(dt),), device) is not None for dt in DTYPES)
    assert compared >= 3


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_reductions_and_shape_operations(device, name):
    for dt in (np.int64, np.float32):
        assert _check(STRUCTURAL[name], (_array(dt, (2, 3)),), device) is not None
