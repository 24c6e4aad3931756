"""Array assignments, broadcasts and transposes lowered as loops (native/copies.py), and
complex elementwise runs fused (native/fuse.py): native results against the
interpreter's, bitwise, for the shapes NumPy's own assignment rules cover."""

import numpy as np
import pytest

pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec.native import copies  # noqa: E402
from autograph.runtime.exec.native import jit as native  # noqa: E402


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def both(fn, *args):
    """(interpreted, native) results of `fn`, each an array or an exception type."""
    out = []
    for jit in (None, True):
        try:
            out.append(ag.function(fn, jit_compile=jit)(*args))
        except Exception as exc:       # the same error type in both is the contract
            out.append(type(exc))
    return out


def assert_same(fn, *args):
    ref, got = both(fn, *args)
    if isinstance(ref, type):
        assert got is ref
        return
    ref, got = np.asarray(ref), np.asarray(got)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(got, ref, equal_nan=True)


RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 5))


def set_rows(x, v):
    y = x * 1.0
    y[1:3] = v
    return y


def set_row_dropping_a_leading_one(x, v):
    y = x * 1.0
    y[2] = v
    return y


def shift_in_place(x):
    y = x * 1.0
    y[1:] = y[:-1]          # source and destination overlap: NumPy copies the source
    return y


def shift_columns(x):
    y = x * 1.0
    y[:, 1:] = y[:, :-1]
    return y


def add_into_column(x, v):
    y = x * 1.0
    y[:, 1] += v
    return y


def strided_set(x, v):
    y = x * 1.0
    y[::2, ::-2] = v
    return y


def integer_into_float(x, v):
    y = x * 1.0
    y[1:3] = v              # int64 rows cast as NumPy casts them
    return y


@pytest.mark.parametrize("fn,args", [
    (set_rows, (X, RNG.standard_normal((2, 5)))),
    (set_rows, (X, RNG.standard_normal((1, 5)))),        # a dimension of 1 repeats
    (set_rows, (X, RNG.standard_normal(5))),             # a missing leading one repeats
    (set_rows, (X, RNG.standard_normal((2, 1)))),
    (set_row_dropping_a_leading_one, (X, RNG.standard_normal((1, 5)))),
    (shift_in_place, (X,)),
    (shift_columns, (X,)),
    (add_into_column, (X, RNG.standard_normal(4))),
    (add_into_column, (X, np.float64(2.5))),
    (strided_set, (X, RNG.standard_normal((2, 3)))),
    (integer_into_float, (X, np.arange(10).reshape(2, 5))),
    (set_rows, (X, RNG.standard_normal((3, 5)))),        # no broadcast: ValueError in both
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_assignments_match_the_interpreter(fn, args):
    assert_same(fn, *args)


def test_ufunc_at_with_repeated_indices_adds_each_row():
    def scatter(x, idx, rows):
        y = x * 1.0
        np.add.at(y, idx, rows)
        return y
    assert_same(scatter, X, np.array([0, 2, 0, 3]), RNG.standard_normal((4, 5)))


def test_broadcast_to_and_transposes():
    def f(v, t):
        b = np.broadcast_to(v, (3, 4)) + 0.0
        return b.sum() + np.transpose(t, (2, 1, 0))[0, 0, 0] * 2.0 + \
            np.transpose(t, (0, 2, 1))[1, 0, 1] + (t[0].T @ t[1])[1, 1]

    assert_same(f, RNG.standard_normal((1, 4)), RNG.standard_normal((2, 3, 3)))


def test_a_stack_of_rows_and_a_gradient_list_still_differentiate():
    def loss(W, xs):
        h = xs[0] * 0.0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
        return np.sum(h)

    W, xs = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((6, 2, 3))
    ref = ag.grad(loss, argnums=(0, 1))(W, xs)
    got = ag.function(ag.grad(loss, argnums=(0, 1)), jit_compile=True)(W, xs)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)


def mandelbrot(c):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for i in range(20):
        z = np.where(np.abs(z) <= 2.0, z * z + c, z)
        count = count + (np.abs(z) <= 2.0)
    return count, z


def test_complex_elementwise_runs_fuse_and_match():
    # the counts bitwise; z within rounding: Numba's complex product and NumPy's loop
    # round differently in the last place (so did the unfused native code before)
    c = np.linspace(-2, 1, 12)[None, :] + 1j * np.linspace(-1.5, 1.5, 9)[:, None]
    ref = mandelbrot(c)
    got = ag.function(mandelbrot, jit_compile=True)(c)
    assert got[0].dtype == ref[0].dtype and np.array_equal(got[0], ref[0])
    assert got[1].dtype == ref[1].dtype
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-13, atol=0)
    source = native.source_of(ag.function(mandelbrot, jit_compile=True)
                              .get_concrete_function(c).graph)
    assert source.count("def fused") >= 1 and "np.where(" not in source.split(
        "def native_")[1]       # the loop body is one kernel call, no array expressions


def test_complex_sums_products_and_abs_with_overflow_nans_and_subnormals():
    def f(z, c):
        return np.abs(z * z + c - z), z * c

    # (infinite complex operands left out: NumPy's product recovers infinities where the
    # naive formula gives NaN, and so did native code before fusion: docs/native.md)
    vals = np.array([0, 1, -1, -0.0, np.nan, 1e308, -1e300, 1e-320, 2.5])
    z = np.empty((9, 9), np.complex128)
    z.real, z.imag = vals[:, None], vals[None, :]
    c = z[::-1].copy()
    with np.errstate(all="ignore"):
        ref = f(z, c)
    got = ag.function(f, jit_compile=True)(z, c)
    for r, g in zip(ref, got):
        assert g.dtype == r.dtype
        assert np.array_equal(np.isnan(g), np.isnan(r)) and \
            np.array_equal(np.isinf(g), np.isinf(r))
        finite = np.isfinite(r)
        np.testing.assert_allclose(g[finite], r[finite], rtol=1e-15, atol=0)


def test_helper_source_broadcasts_by_strides():
    text = "\n".join(copies.source("put_add_2_1", "add", 2, 1))
    assert "d[i0, i1] += s[i1 * m0]" in text and "s = s.copy()" in text
    assert copies.view_rank((("i", 0), ("s", None, None, None)), 3) == 2
    assert copies.view_rank((("t", 0),), 2) is None
