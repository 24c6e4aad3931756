"""VJP rules of the elementwise primitives (ufuncs, astype) against float64 central
differences along random directions, with broadcasting, unknown lengths, complex inputs
(JAX's convention, see runtime/numpy/adjoint.py) and second order."""

import numpy as np
import pytest

from tests.autodiff.harness import Traced, check_vjp

rng = np.random.default_rng(0)
A = rng.uniform(0.2, 0.8, (3, 4))
B = rng.uniform(0.2, 0.8, (4,))
BIG = rng.uniform(1.5, 3.0, (3, 4))

UNARY = {
    "negative": np.negative, "positive": np.positive, "exp": np.exp, "expm1": np.expm1,
    "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sqrt": np.sqrt, "square": np.square, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "arcsin": np.arcsin,
    "arccos": np.arccos, "arctan": np.arctan, "arcsinh": np.arcsinh, "arctanh": np.arctanh,
    "abs": np.abs, "conj": np.conjugate, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg,
    "pow_scalar": lambda x: x ** 3.5, "rpow": lambda x: 2.0 ** x,
    "piecewise": lambda x: np.floor(x * 3) + np.sign(x) * x + np.round(x),
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax,
    "fmin": np.fmin, "hypot": np.hypot, "logaddexp": np.logaddexp,
    "arctan2": np.arctan2, "copysign": lambda a, b: np.copysign(a, b - 0.5),
    "remainder": lambda a, b: np.remainder(a * 5, b), "fmod": lambda a, b: np.fmod(a * 5 - 2, b),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    check_vjp(UNARY[name], A, order=2)


def test_arccosh():
    check_vjp(np.arccosh, BIG, order=2)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name):
    check_vjp(BINARY[name], A, B, order=2 if name not in ("remainder", "fmod") else 1)


@pytest.mark.parametrize("name", ["add", "multiply", "divide", "maximum"])
def test_binary_unknown_lengths(name):
    # lengths unknown while tracing: the broadcast sums are decided when the graph runs
    check_vjp(BINARY[name], A, B, dynamic=True, order=2)
    check_vjp(BINARY[name], A, A[:1], dynamic=True)


def test_weak_scalars_and_mixed_dtypes():
    f32 = A.astype(np.float32)
    g = check_vjp(lambda a, b: a * 2.0 + b, A, f32, rtol=1e-3, h=1e-2)
    assert g[1].dtype == np.float32
    check_vjp(lambda a: 3 * a - 1 / (a + 1), A, order=2)


def test_integer_inputs_get_no_cotangent():
    ints = np.arange(12).reshape(3, 4)
    g = check_vjp(lambda a, i: a * i + np.sqrt(i + 1.0), A, ints, wrt=[0])
    assert g[0].shape == A.shape


def test_ties_share_the_cotangent():
    x = np.array([1.0, 2.0, 3.0])
    tr = Traced(lambda a, b: np.maximum(a, b), [x, x])
    out = tr.run([x, x], [np.ones(3)])
    np.testing.assert_allclose(out[1], 0.5)
    np.testing.assert_allclose(out[2], 0.5)


C = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)))
D = (rng.standard_normal((4,)) + 1j * rng.standard_normal((4,)))


@pytest.mark.parametrize("f", [
    lambda z: np.exp(z), lambda z: np.sin(z) * z, lambda z: np.tanh(z), lambda z: np.log(z),
    lambda z: np.sqrt(z), lambda z: np.conj(z) * z, lambda z: np.abs(z),
    lambda z: np.real(z) * np.imag(z), lambda z: z ** 2 / (z + 3.0),
], ids=["exp", "sin", "tanh", "log", "sqrt", "conj", "abs", "real_imag", "rational"])
def test_complex(f):
    check_vjp(f, C, order=2)


def test_complex_broadcast_and_real_operand():
    check_vjp(lambda z, w, x: z * w + x, C, D, A, order=2)


def test_astype_round_trip():
    check_vjp(lambda a: (a.astype(np.float32).astype(np.float64)) * a, A, rtol=1e-4, h=1e-2)
    check_vjp(lambda a: a.astype(np.complex128) * (1 + 2j), A, order=2)
