"""The rest of jax.numpy's NumPy functions (issue 12's coverage target), traced vs eager
NumPy with tests/runtime/test_numpy_ops.check (inferred dtype and static shape against
NumPy's result, values on every executor on the CPU and array-api-strict): the ufuncs
beyond the array API, constructors given tensor lengths (unknown dimensions), the
composed functions, linalg.eig/eigvals, the in-place functions as statements, and the
coverage target itself (nothing of jax.numpy's list is missing but what is refused)."""

import numpy as np
import pytest

from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy import coverage, dispatch, packing
from tests.runtime.test_inplace import same_as_numpy
from tests.runtime.test_numpy_ops import check, run, trace

R = np.random.default_rng(1)
FLOATS = (np.float64, np.float32)


def tol(dtype, double=1e-12):
    return dict(rtol=1e-6 if np.dtype(dtype) in (np.float32, np.complex64) else double)


# -- ufuncs --------------------------------------------------------------------------------------

SPECIAL = [0, np.inf, -np.inf, np.nan, 8, -27, 1e-310, 2 - 1e-16, -0.5, 3.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("uf", [np.cbrt, np.fabs, np.reciprocal, np.frexp, np.modf,
                                np.spacing], ids=lambda u: u.__name__)
def test_unary_ufuncs(uf, dtype):
    a = np.concatenate([R.normal(size=12) * 3, SPECIAL]).astype(dtype)
    check(uf, a, **tol(dtype, 1e-13))
    check(uf, np.reshape(a[:12], (3, 4)), **tol(dtype, 1e-13))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("uf", [np.float_power, np.heaviside, np.logaddexp2, np.nextafter],
                         ids=lambda u: u.__name__)
def test_binary_ufuncs(uf, dtype):
    a = np.concatenate([R.normal(size=12) * 3, SPECIAL]).astype(dtype)
    b = R.normal(size=a.shape).astype(dtype)
    if uf is np.float_power:
        a = np.abs(a)
    check(uf, a, b, **tol(dtype))
    check(lambda x, y: uf(x[:, None], y[None, :4]), a[:6], b, **tol(dtype))   # broadcast
    check(lambda x: uf(x, 2), a, **tol(dtype))   # a Python scalar: NEP 50


def test_integer_ufuncs_and_ldexp():
    i = R.integers(-50, 50, size=(5, 4))
    j = R.integers(-50, 50, size=(4,))
    for uf in (np.gcd, np.lcm):
        check(uf, i, j)
        check(uf, i.astype(np.int32), 6)
        check(lambda a: uf.reduce(a, axis=0), i)
    for dt in (np.int64, np.int8, np.uint8, np.uint32):
        check(np.bitwise_count, (i % 100).astype(dt) if dt != np.int8 else i.astype(dt))
    check(np.reciprocal, i + (i == 0))
    check(np.cbrt, i, rtol=1e-13)
    for dt in FLOATS:
        x = R.normal(size=(5, 4)).astype(dt)
        check(np.ldexp, x, i % 20 - 10)
        check(lambda a: np.ldexp(a, 3), x)


def test_ufunc_methods_of_the_new_binary_ufuncs():
    x = R.normal(size=(3, 4))
    check(lambda a: np.logaddexp2.reduce(a, axis=1), x, rtol=1e-12)
    check(lambda a: np.heaviside.outer(a[0], a[1]), x)
    check(lambda a: np.float_power.accumulate(np.abs(a), axis=0), x, rtol=1e-12)


# -- constructors with tensor lengths ---------------------------------------------------------

def _call(f, *args, **kwargs):
    """f as converted code calls it: through packing.call; an int for eager NumPy."""
    def py(a):
        return a if isinstance(a, Tensor) or not isinstance(a, np.ndarray) else int(a)
    args = [tuple(py(y) for y in a) if isinstance(a, tuple) else py(a) for a in args]
    return packing.call(f, args, kwargs)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_constructors_with_a_tensor_length(n):
    m = np.array(n)
    for f in (np.hanning, np.hamming, np.blackman, np.bartlett, np.fft.fftfreq,
              np.fft.rfftfreq, np.eye, np.identity, np.tri):
        (t,) = check(lambda k: _call(f, k), m, exact=False, rtol=1e-12, atol=1e-15)
        assert None in t.shape, (f, t.shape)   # the length is known when the graph runs
    check(lambda k: _call(np.kaiser, k, 5.0), m, exact=False, rtol=1e-12)
    check(lambda k: _call(np.eye, k, 4, k=1, dtype=int), m, exact=False)
    check(lambda k: _call(np.tri, k, 3, -1), m, exact=False)
    check(lambda k: _call(np.fft.fftfreq, k, 0.3), m, exact=False, rtol=1e-14)
    check(lambda k: _call(np.tril_indices, k, 1), m, exact=False)
    check(lambda k: _call(np.triu_indices, k, -1, 4), m, exact=False)
    check(lambda k: _call(np.mask_indices, k, np.triu, 1), m, exact=False)
    check(lambda k: _call(np.diag_indices, k, 3), m, exact=False)
    check(lambda k: _call(np.indices, (k, 3)), m, exact=False)
    check(lambda k: _call(np.indices, (2, k), sparse=True), m, exact=False)


def test_i0_spaces_and_ix():
    x = np.array([-3.0, -0.5, 0, 1e-3, 2.5, 14.9, 15.1, 40, 700])
    check(np.i0, x, rtol=1e-13)
    check(np.i0, x[:6].astype(np.float32), rtol=1e-6)
    check(lambda a, b: np.ix_(a, b), np.array([0, 2]), np.array([True, False, True]),
          exact=False)
    s = np.array(1.0)
    check(lambda a: _call(np.logspace, a, 3.0, 7), s, rtol=1e-13)
    check(lambda a: _call(np.logspace, a, 3.0, 7, base=2, dtype=np.float32, endpoint=False),
          s, rtol=1e-6)
    check(lambda a: _call(np.geomspace, a, 1000.0, 5), np.array(2.0), rtol=1e-13)
    check(lambda a: _call(np.geomspace, a, -1000.0, 4, endpoint=False), np.array(-2.0),
          rtol=1e-13)


def test_native_names_work_unchanged():
    def fn(a):
        assert not np.isscalar(a) and np.iterable(a)
        assert np.issubdtype(a.dtype, np.floating) and np.isdtype(a.dtype, "real floating")
        assert np.promote_types(a.dtype, np.int8) == a.dtype
        assert np.broadcast_shapes(a.shape, (1, 4)) == (3, 4)
        return a + np.fromfunction(lambda i, j: i * 4 + j, (3, 4))
    check(fn, R.normal(size=(3, 4)))


# -- composed functions ------------------------------------------------------------------------

x = R.normal(size=(4, 5))
xi = R.integers(0, 6, size=(4, 5))
xn = x.copy()
xn.flat[::3] = np.nan
xn[1] = np.nan

CASES = [
 ("partition", lambda a: np.sort(np.partition(a, 2, axis=1), axis=1), [x], {}),
 ("argpartition", lambda a: np.take_along_axis(a, np.argpartition(a, 2), -1)[:, 2], [x], {}),
 ("nanquantile", lambda a: np.nanquantile(a, [0.1, 0.5, 0.9], axis=1), [xn], dict(rtol=1e-12)),
 ("nanquantile none", lambda a: np.nanquantile(a, 0.3), [xn], dict(rtol=1e-12)),
 ("nanpercentile", lambda a: np.nanpercentile(a, 30, axis=0, keepdims=True),
  [xn], dict(rtol=1e-12)),
 ("nanmedian", lambda a: np.nanmedian(a, axis=1), [xn], dict(rtol=1e-12)),
 ("nanmedian int", lambda a: np.nanmedian(a, axis=1), [xi], {}),
 ("union1d", np.union1d, [xi, xi[0] + 3], dict(exact=False)),
 ("intersect1d", np.intersect1d, [xi, xi[0].astype(np.int32) + 2], dict(exact=False)),
 ("setdiff1d", np.setdiff1d, [xi, xi[0]], dict(exact=False)),
 ("setxor1d", np.setxor1d, [xi, xi[0] + 2], dict(exact=False)),
 ("unique_values", lambda a: np.sort(np.unique_values(a)), [xi], dict(exact=False)),
 ("unique_counts", np.unique_counts, [xi], dict(exact=False)),
 ("unique_inverse", np.unique_inverse, [xi], dict(exact=False)),
 ("unique_all", np.unique_all, [xi[0]], dict(exact=False)),
 ("delete", lambda a: np.delete(a, [0, -1], axis=1), [x], {}),
 ("delete flat", lambda a: np.delete(a, slice(2, 7)), [x], {}),
 ("delete tensor", lambda a, i: np.delete(a, i, axis=0), [x, np.array([1, -1])], dict(exact=False)),
 ("insert", lambda a: np.insert(a, 2, 7.0, axis=1), [x], {}),
 ("insert seq", lambda a: np.insert(a, [1, 1, -1], a[0, :3]), [x], {}),
 ("insert rows", lambda a: np.insert(a, [0, 2], a[:1], axis=0), [x], {}),
 ("insert block", lambda a: np.insert(a, 1, a[:2], axis=0), [x], {}),
 ("resize", lambda a: np.resize(a, (3, 9)), [x], {}),
 ("trim_zeros", lambda a: np.trim_zeros(a), [np.array([0, 0, 1, 2, 0, 3, 0])], dict(exact=False)),
 ("trim_zeros f", lambda a: np.trim_zeros(a, "f"),
  [np.array([0, 0, 1, 2, 0, 3, 0])], dict(exact=False)),
 ("trim_zeros all", lambda a: np.trim_zeros(a), [np.zeros(4)], dict(exact=False)),
 ("block", lambda a, b: np.block([[a, b], [b, a]]), [x[:2, :2], x[2:, 2:4]], {}),
 ("block 1d", lambda a: np.block([a[0], 1.0, a[1]]), [x], {}),
 ("choose", lambda i, a: np.choose(i % 3, [a, -a, 2 * a]), [xi, x], {}),
 ("choose clip", lambda i, a: np.choose(i, [a, -a, 0.5], mode="clip"), [xi, x], {}),
 ("array_equiv", lambda a, b: np.array_equiv(a, b), [xi, xi[:1]], {}),
 ("sort_complex", np.sort_complex, [xi[0].astype(np.int16)], {}),
 ("sort_complex f", np.sort_complex, [x[0]], {}),
 ("unwrap", lambda a: np.unwrap(a * 4, axis=0), [x], dict(rtol=1e-12)),
 ("unwrap period", lambda a: np.unwrap(a * 4, period=3.0), [x], dict(rtol=1e-12)),
 ("gradient", np.gradient, [x], dict(rtol=1e-12)),
 ("gradient 2", lambda a: np.gradient(a, 0.5, edge_order=2, axis=1), [x], dict(rtol=1e-12)),
 ("gradient int", lambda a: np.gradient(a[0]), [xi], dict(rtol=1e-12)),
 ("vecdot", np.vecdot, [x, x[0]], dict(rtol=1e-12)),
 ("linalg.vecdot", lambda a, b: np.linalg.vecdot(a, b, axis=0), [x, x], dict(rtol=1e-12)),
 ("matvec", np.matvec, [x, x[0]], dict(rtol=1e-12)),
 ("vecmat", np.vecmat, [x[:, 0], x], dict(rtol=1e-12)),
 ("packbits", lambda a: np.packbits(a > 2, axis=1), [xi], {}),
 ("packbits flat little", lambda a: np.packbits(a, bitorder="little"), [xi], {}),
 ("unpackbits", lambda a: np.unpackbits(a.astype(np.uint8) * 37, axis=0), [xi], {}),
 ("unpackbits count", lambda a: np.unpackbits(a.astype(np.uint8) * 37, count=13, bitorder="little"),
  [xi], {}),
 ("apply_along_axis", lambda a: np.apply_along_axis(lambda r: r[:2] * np.sum(r), 1, a),
  [x], dict(rtol=1e-12)),
 ("apply_along_axis scalar", lambda a: np.apply_along_axis(np.max, 0, a), [x], {}),
 ("apply_over_axes", lambda a: np.apply_over_axes(np.sum, a, [0, 1]), [x], dict(rtol=1e-12)),
 ("piecewise", lambda a: np.piecewise(a, [a < 0, a > 1], [lambda v: -v, lambda v: v * 2, 0.5]),
  [x], {}),
 ("histogram2d", lambda a, b: np.histogram2d(a, b, 3), [x[0], x[1]], dict(rtol=1e-12)),
 ("histogram2d range w", lambda a, b, w: np.histogram2d(a, b, (2, 3), [[-1, 1], [-2, 2]], True, w),
  [x[0], x[1], np.abs(x[2])], dict(rtol=1e-12)),
 ("histogramdd", lambda a: (lambda h, e: (h, *e))(*np.histogramdd(a, 2)),
  [x[:, :3]], dict(rtol=1e-12)),
 ("poly", np.poly, [x[0]], dict(rtol=1e-12)),
 ("poly matrix", np.poly, [x[:3, :3]], dict(rtol=1e-10)),
 ("polydiv", np.polydiv, [x[0], x[1, :3]], dict(rtol=1e-10, exact=False)),
 ("polydiv exact", np.polydiv,
  [np.array([1., -3, 2]), np.array([1., -1])], dict(rtol=1e-10, exact=False)),
 ("polyfit", lambda a, b: np.polyfit(a, b, 2), [x[0], x[1]], dict(rtol=1e-9)),
 ("polyfit w", lambda a, b: np.polyfit(a, b, 1, w=np.abs(b)), [x[0], x[1]], dict(rtol=1e-9)),
 ("i0 f32", np.i0, [x.astype(np.float32)], dict(rtol=1e-6)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_composed(case):
    _, fn, args, kw = case
    check(fn, *args, **kw)


def test_set_operations_have_unknown_length():
    (t,) = check(np.union1d, xi, xi[0] + 3, exact=False)
    assert t.shape == (None,)
    (t,) = check(lambda a: np.trim_zeros(a), np.array([0, 1, 0]), exact=False)
    assert t.shape == (None,)


# -- linalg.eig ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + (np.complex128,))
def test_eig_and_eigvals(dtype):
    a = R.normal(size=(2, 4, 4))
    if dtype == np.complex128:
        a = a + 1j * R.normal(size=a.shape)
    a = a.astype(dtype)
    # always complex while tracing (NumPy's dtype would depend on the values)
    check(lambda m: np.linalg.eigvals(m).astype(np.result_type(m.dtype, np.complex64)), a,
          **tol(dtype, 1e-10))
    g, (w, v) = trace(np.linalg.eig, a)
    assert w.dtype.kind == v.dtype.kind == "c" and w.shape == (2, 4) and v.shape == (2, 4, 4)
    gw, gv = run(g, a)
    np.testing.assert_allclose(a @ gv, gv * gw[..., None, :], **tol(dtype, 1e-9), atol=1e-5)
    check(lambda p: np.roots(p).astype(complex), np.array([0, 1.0, -6, 11, -6, 0]),
          exact=False, rtol=1e-9)
    check(np.roots, np.array([1.0, 0, 1]), exact=False, rtol=1e-9)


def test_eig_gradient_rule_matches_finite_differences():
    from autograph.runtime.ir import primitives
    a = R.normal(size=(3, 3))
    c = R.normal(size=3) + 1j * R.normal(size=3)
    g = Graph("vjp")
    with g.as_default():
        m = g.placeholder("m", a.dtype, a.shape)
        ct = g.placeholder("ct", c.dtype, c.shape)
        node = np.linalg.eig(m)[0].node
        (grad,) = primitives.lookup("eig").vjp([ct, None], node)
        g.set_outputs([grad])
    (got,) = run(g, a, c)

    # the rule's cotangent pairs with the eigenvalues as Re <c, dw>
    eps, num = 1e-6, np.zeros_like(a)
    w0 = np.linalg.eigvals(a)
    for i in range(3):
        for j in range(3):
            d = np.zeros_like(a)
            d[i, j] = eps
            w1 = np.linalg.eigvals(a + d)
            # match each perturbed eigenvalue to the nearest unperturbed one
            w1 = np.array([w1[np.argmin(np.abs(w1 - w))] for w in w0])
            num[i, j] = np.real(np.sum(np.conj(c) * (w1 - w0))) / eps
    np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-5)


# -- in-place functions as statements ----------------------------------------------------------

def _fill(a):
    y = a * 1.0
    np.fill_diagonal(y, -1.0)
    return y


def _fill_wrap(a):
    y = a + 0
    np.fill_diagonal(y, [5, 6], wrap=True)
    return y


def _put(a):
    y = a * 2
    np.put(y, [0, -1, 5], [9, 8])
    return y


def _put_clip(a):
    y = a * 2
    np.put(y, [0, 100], 7, mode="clip")
    return y


def _place(a):
    y = a + 1
    np.place(y, y > 1, [10, 20, 30])
    return y


def _put_along(a):
    y = a + 1
    np.put_along_axis(y, np.argmax(y, axis=1)[:, None], -5, axis=1)
    return y


def _copyto(a):
    y = a + 1
    np.copyto(y, 3, where=y > 1)
    return y


def _putmask(a):
    y = a + 1
    np.putmask(y, y > 1, [-1, -2, -3])
    return y


@pytest.mark.parametrize("fn", [_fill, _fill_wrap, _put, _put_clip, _place, _put_along,
                                _copyto, _putmask], ids=lambda f: f.__name__)
def test_inplace_functions_as_statements(fn):
    for a in (R.normal(size=(4, 4)), R.normal(size=(7, 3)), R.integers(0, 3, size=(3, 5))):
        same_as_numpy(fn, a)


def test_inplace_function_called_otherwise_says_how():
    with pytest.raises(TypeError, match=r"numpy\.put writes into its first argument"):
        trace(lambda a: np.put(a, [0], 1.0), R.normal(size=(3,)))


# -- the coverage target ---------------------------------------------------------------------------

def test_everything_jax_numpy_has_is_covered_or_refused():
    gaps, refused = coverage.missing()
    assert gaps == []
    assert set(refused) == {f"numpy.{n}" for n in (
        "array_repr", "array_str", "from_dlpack", "frombuffer", "fromfile", "frompyfunc",
        "fromstring", "load", "save", "savez")}
    for name in refused:
        assert dispatch.meaningless(getattr(np, name.split(".")[1])) is not None


def test_refused_undispatched_function_says_why():
    with pytest.raises(TypeError, match=r"numpy\.frombuffer cannot be traced: it reads "):
        trace(lambda a: packing.call(np.frombuffer, (a,), {}), R.normal(size=(3,)))
