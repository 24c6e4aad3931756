"""The NumPy surface added for coverage (linalg, fft, sorting and sets, statistics, einsum,
ufunc methods), traced vs eager NumPy: inferred dtype and static shape against NumPy's
actual result, and the values on every executor (interpreter, codegen, optimised) on the
CPU and on array-api-strict (tests/runtime/test_numpy_ops.check does all of that). Also:
the published coverage page is current, and uncovered / meaningless calls say so."""

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from autograph.runtime.numpy import coverage, dispatch
from tests.runtime.test_numpy_ops import check, trace

RNG = np.random.default_rng(12)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLOATS = [np.float32, np.float64]


def normal(shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


def ints(shape, high=6, dtype=np.int64):
    return RNG.integers(0, high, size=shape).astype(dtype)


def spd(n, dtype=np.float64):
    a = normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def tol(dtype):
    return dict(rtol=2e-4, atol=1e-4) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-7, atol=1e-10)


def _eigh_invariants(wv):
    w, v = wv
    return w, np.abs(v), (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)


# -- linear algebra ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", [
    ("cholesky", np.linalg.cholesky, lambda d: [spd(4, d)]),
    ("cholesky batch", np.linalg.cholesky, lambda d: [np.stack([spd(3, d), spd(3, d)])]),
    ("cholesky upper", lambda a: np.linalg.cholesky(a, upper=True), lambda d: [spd(3, d)]),
    ("eigh", np.linalg.eigh, lambda d: [spd(4, d)]),
    # UPLO="U": eigenvectors are unique up to sign; compare what does not depend on it
    ("eigh U", lambda a: _eigh_invariants(np.linalg.eigh(np.triu(a), UPLO="U")),
     lambda d: [spd(4, d)]),
    ("eigvalsh", np.linalg.eigvalsh, lambda d: [spd(5, d)]),
    ("qr", np.linalg.qr, lambda d: [normal((5, 3), d)]),
    ("qr wide", np.linalg.qr, lambda d: [normal((3, 5), d)]),
    ("qr complete", lambda a: np.linalg.qr(a, mode="complete"), lambda d: [normal((5, 3), d)]),
    ("qr r", lambda a: np.linalg.qr(a, mode="r"), lambda d: [normal((2, 5, 3), d)]),
    ("svd", np.linalg.svd, lambda d: [normal((5, 3), d)]),
    ("svd reduced", lambda a: np.linalg.svd(a, full_matrices=False),
     lambda d: [normal((3, 5), d)]),
    ("svd values", lambda a: np.linalg.svd(a, compute_uv=False), lambda d: [normal((4, 6), d)]),
    ("slogdet", np.linalg.slogdet, lambda d: [normal((2, 4, 4), d)]),
    ("pinv", np.linalg.pinv, lambda d: [normal((5, 3), d)]),
    ("matrix_rank", np.linalg.matrix_rank, lambda d: [normal((5, 3), d)]),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, 5), lambda d: [normal((3, 3), d)]),
    ("matrix_power -2", lambda a: np.linalg.matrix_power(a, -2), lambda d: [spd(3, d)]),
    ("matrix_power 0", lambda a: np.linalg.matrix_power(a, 0), lambda d: [normal((3, 3), d)]),
    ("lstsq", np.linalg.lstsq, lambda d: [normal((6, 3), d), normal((6,), d)]),
    ("lstsq matrix b", np.linalg.lstsq, lambda d: [normal((6, 3), d), normal((6, 2), d)]),
    ("lstsq wide", np.linalg.lstsq, lambda d: [normal((3, 5), d), normal((3,), d)]),
    ("multi_dot", lambda a, b: np.linalg.multi_dot([a, b, a]),
     lambda d: [normal((3, 3), d), normal((3, 3), d)]),
    ("multi_dot vectors", lambda a, b: np.linalg.multi_dot([a, b, a]),
     lambda d: [normal((3,), d), normal((3, 3), d)]),
    ("trace", np.trace, lambda d: [normal((3, 4), d)]),
    ("trace offset axes", lambda a: np.trace(a, 1, 1, 2), lambda d: [normal((2, 3, 4), d)]),
    ("diagonal", lambda a: np.diagonal(a, -1), lambda d: [normal((4, 3), d)]),
    ("vdot", np.vdot, lambda d: [normal((2, 3), d), normal((3, 2), d)]),
    ("kron", np.kron, lambda d: [normal((2, 3), d), normal((3, 2), d)]),
    ("kron mixed rank", np.kron, lambda d: [normal((3,), d), normal((2, 2), d)]),
    ("cross", np.cross, lambda d: [normal((4, 3), d), normal((3,), d)]),
    ("cross axis", lambda a, b: np.cross(a, b, axis=0), lambda d: [normal((3, 2), d),
                                                                   normal((3, 2), d)]),
    ("einsum matmul", lambda a, b: np.einsum("ij,jk->ik", a, b),
     lambda d: [normal((2, 3), d), normal((3, 4), d)]),
    ("einsum implicit", lambda a, b: np.einsum("ij,kj", a, b),
     lambda d: [normal((2, 3), d), normal((4, 3), d)]),
    ("einsum trace", lambda a: np.einsum("ii", a), lambda d: [normal((3, 3), d)]),
    ("einsum diag", lambda a: np.einsum("ii->i", a), lambda d: [normal((3, 3), d)]),
    ("einsum batch", lambda a, b: np.einsum("bij,bjk->bki", a, b),
     lambda d: [normal((2, 3, 4), d), normal((2, 4, 5), d)]),
    ("einsum outer", lambda a, b: np.einsum("i,j->ij", a, b),
     lambda d: [normal((3,), d), normal((4,), d)]),
    ("moveaxis", lambda a: np.moveaxis(a, [0, 1], [-1, 0]), lambda d: [normal((2, 3, 4), d)]),
], ids=lambda c: c[0])
def test_linalg(case, dtype):
    name, fn, make = case
    # lstsq's residuals have a length that depends on the rank: unknown while tracing
    check(fn, *make(dtype), exact=not name.startswith("lstsq"), **tol(dtype))


@pytest.mark.parametrize("order", [None, 1, 2, -1, -2, np.inf, -np.inf, 0, 3, 0.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_vector_norm_every_order(order, dtype):
    x = (normal((6,)) * 4).astype(dtype)
    check(lambda a: np.linalg.norm(a, order), x, **tol(dtype))
    check(lambda a: np.linalg.norm(a, order, axis=1, keepdims=True),
          (normal((3, 4)) * 3).astype(dtype), **tol(dtype))


@pytest.mark.parametrize("order", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_every_order(order):
    check(lambda a: np.linalg.norm(a, order), normal((4, 3)))
    check(lambda a: np.linalg.norm(a, order, axis=(2, 0), keepdims=True), normal((4, 2, 3)))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.bool_, np.uint8])
def test_diag_triangles_and_integer_linalg(dtype):
    m = ints((4, 5), 4).astype(dtype)
    v = ints((4,), 4).astype(dtype)
    for k in (-2, -1, 0, 1, 3):
        check(lambda a: np.diag(a, k), v)
        check(lambda a: np.diag(a, k), m)
        check(lambda a: np.triu(a, k), m)
        check(lambda a: np.tril(a, k), m)
    if dtype != np.bool_:
        check(np.trace, m)
        check(lambda a: np.linalg.matrix_power(a, 3), ints((3, 3), 3).astype(dtype))
        check(np.kron, m[:2, :2], m[:3, :2])


# -- fft ------------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
       dtype=st.sampled_from([np.float32, np.float64, np.complex64, np.complex128, np.int32]),
       name=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
       n=st.sampled_from([None, 1, 4, 7]), norm=st.sampled_from([None, "ortho", "forward"]),
       axis=st.integers(-1, 0))
def test_fft_one_dimensional_agrees_with_numpy(shape, dtype, name, n, norm, axis):
    x = normal(shape).astype(dtype) if np.dtype(dtype).kind != "i" else ints(shape, 9, dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * normal(shape).astype(x.real.dtype)
    fn = getattr(np.fft, name)
    try:
        fn(x, n, axis, norm)
    except (TypeError, ValueError):
        return   # complex input to rfft, or a length-0 result: NumPy refuses too
    check(lambda a: fn(a, n, axis, norm), x, **tol(np.fft.fft(x.astype(dtype)).dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.fft2,
                                np.fft.ifft2, np.fft.rfft2, np.fft.fftshift, np.fft.ifftshift,
                                lambda a: np.fft.irfftn(np.fft.rfftn(a)),
                                lambda a: np.fft.irfft2(np.fft.rfft2(a), s=(3, 5)),
                                lambda a: np.fft.fftn(a, s=(4, 4), axes=(0, 2)),
                                lambda a: np.fft.fftshift(a, axes=1)])
def test_fft_n_dimensional(fn, dtype):
    check(fn, normal((3, 4, 5), dtype), **tol(dtype))


# -- sorting, searching, sets ----------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(st.sampled_from([np.int8, np.int64, np.float64, np.bool_]),
                    hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
                    elements={"min_value": 0, "max_value": 3}),
       flags=st.tuples(st.booleans(), st.booleans(), st.booleans()))
def test_data_dependent_shapes_agree_with_numpy(x, flags):
    """unique, nonzero, argwhere, flatnonzero: static shape has None where NumPy's length
    depends on the data, and the values are NumPy's."""
    outs = check(lambda a: np.unique(a, *flags), x, exact=False)
    assert outs[0].shape == (None,)
    for t in check(np.nonzero, x, exact=False):
        assert t.shape == (None,)
    assert check(np.argwhere, x, exact=False)[0].shape == (None, x.ndim)
    check(np.flatnonzero, x, exact=False)
    if x.dtype.kind in "iu" and x.ndim == 1:
        (t,) = check(np.bincount, x, exact=False)
        assert t.shape == ((None,) if len(x) else (0,))   # empty: NumPy's zeros(minlength)
        check(lambda a: np.bincount(a, minlength=7), x, exact=False)
        w = normal(x.shape)
        check(lambda a, b: np.bincount(a, b), x, w, exact=False)


def test_unique_nans_are_one_value():
    check(lambda a: np.unique(a, return_counts=True), np.array([np.nan, 2, np.nan, 1, 2.]),
          exact=False)


@settings(max_examples=30, deadline=None)
@given(a=hnp.arrays(np.float64, st.integers(1, 8), elements=st.integers(-5, 5)),
       v=hnp.arrays(st.sampled_from([np.float64, np.int64, np.float32]),
                    hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                    elements=st.integers(-6, 6)),
       side=st.sampled_from(["left", "right"]))
def test_searchsorted_and_isin(a, v, side):
    check(lambda s, q: np.searchsorted(np.sort(s), q, side), a, v)
    check(lambda s, q: np.searchsorted(s, q, side, sorter=np.argsort(s)), a, v)
    check(lambda s, q: np.isin(q, s), a, v)
    check(lambda s, q: np.isin(q, s, invert=True), a, v)


@settings(max_examples=30, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
       dtype=st.sampled_from([np.float32, np.int64, np.uint8]), data=st.data())
def test_take_along_axis(shape, dtype, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = (normal(shape) * 10).astype(dtype)
    k = data.draw(st.integers(1, 4))
    idx_shape = tuple(k if i == axis % len(shape) else d for i, d in enumerate(shape))
    idx = RNG.integers(-shape[axis], shape[axis], size=idx_shape)
    check(lambda a, i: np.take_along_axis(a, i, axis), x, idx)
    check(lambda a: np.take_along_axis(a, np.argsort(a, axis=axis), axis), x)


# -- statistics and numeric helpers -------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
       dtype=st.sampled_from([np.float32, np.float64, np.int32]),
       q=st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3)),
       data=st.data())
def test_quantile_and_percentile(shape, dtype, q, data):
    x = (normal(shape) * 10).astype(dtype)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keepdims = data.draw(st.booleans())
    check(lambda a: np.quantile(a, q, axis=axis, keepdims=keepdims), x, **tol(dtype))
    p = np.multiply(q, 100).tolist()
    check(lambda a: np.percentile(a, p, axis=axis), x, **tol(dtype))


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64]), st.integers(1, 30),
                    elements=st.integers(-20, 20)),
       bins=st.integers(1, 7), ranged=st.booleans(), weighted=st.booleans(),
       density=st.booleans())
def test_histogram(x, bins, ranged, weighted, density):
    rng = (-5, 5) if ranged else None
    w = normal(x.shape) if weighted else None
    if w is None:
        check(lambda a: np.histogram(a, bins, rng, density=density), x, rtol=1e-6)
    else:
        check(lambda a, b: np.histogram(a, bins, rng, density=density, weights=b), x, w,
              rtol=1e-6, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 7), m=st.integers(1, 7),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128]),
       mode=st.sampled_from(["full", "same", "valid"]))
def test_convolve_and_correlate(n, m, dtype, mode):
    a, v = (normal((n,)) * 3).astype(dtype), (normal((m,)) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * normal((n,))
    check(lambda x, y: np.convolve(x, y, mode), a, v, **tol(dtype))
    check(lambda x, y: np.correlate(x, y, mode), a, v, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_interp_polyval_ptp_pad(dtype):
    xp = np.sort(normal((6,)) * 3).astype(dtype)
    fp = normal((6,)).astype(dtype)
    x = np.concatenate([normal((10,)) * 4, xp]).astype(dtype)
    check(np.interp, x, xp, fp, **tol(np.float64))
    check(lambda a, b, c: np.interp(a, b, c, left=-9.0, right=9.0), x, xp, fp)
    check(np.polyval, fp[:4], x, **tol(dtype))
    check(np.polyval, fp[:4], xp[:1].reshape(()), **tol(dtype))
    m = (normal((3, 4)) * 5).astype(dtype)
    check(np.ptp, m)
    check(lambda a: np.ptp(a, axis=1, keepdims=True), m)
    for width in (1, (2, 1), ((0, 1), (3, 2))):
        check(lambda a: np.pad(a, width), m)
        check(lambda a: np.pad(a, width, constant_values=7), m)
        check(lambda a: np.pad(a, width, mode="edge"), m)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int32])
def test_nan_to_num(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0]).astype(dtype) if \
        np.dtype(dtype).kind != "i" else np.array([1, 2, 3], dtype)
    if np.dtype(dtype).kind == "c":
        x.imag = x[::-1].real
    check(np.nan_to_num, x)
    check(lambda a: np.nan_to_num(a, nan=-1.0, posinf=5.0), x)


# -- ufunc methods ---------------------------------------------------------------------------------

BINARY = [np.maximum, np.minimum, np.fmax, np.logical_xor, np.bitwise_or, np.subtract,
          np.logaddexp, np.divide, np.power, np.hypot, np.fmin, np.arctan2]


def _fold_reference(uf):
    """`uf.reduce`, except that on NumPy arrays a ufunc whose reduce disagrees with NumPy's
    documented meaning (a left fold along the axis, the last item of `accumulate`) is
    folded instead: NumPy 2.4's float `arctan2.reduce` and `power.reduce` return other
    values (arctan2.reduce([a, b, c]) == arctan2(a, c)), which the staged fold must not copy."""
    def reduce(a, axis=0, keepdims=False):
        numpy_says = uf.reduce(a, axis=axis, keepdims=keepdims)   # NumPy's errors stand
        if not isinstance(a, np.ndarray):
            return numpy_says
        flat = a.ravel() if axis is None else a
        ax = 0 if axis is None else axis
        folded = uf.accumulate(flat, axis=ax)
        if folded.dtype != np.asarray(numpy_says).dtype:
            return numpy_says
        out = np.take(folded, -1, axis=ax)
        if keepdims:
            out = np.expand_dims(out, tuple(range(a.ndim)) if axis is None else ax)
        return out
    return reduce


def test_the_fold_reference_is_numpy_where_numpy_folds():
    x = np.array([[2.1, 4.5, 7.3], [1.5, 0.5, 3.0]])
    for uf in (np.subtract, np.divide, np.maximum, np.hypot):
        for axis in (0, 1, -1):
            np.testing.assert_allclose(_fold_reference(uf)(x, axis), uf.reduce(x, axis))
    a = x[0]
    assert _fold_reference(np.arctan2)(a) == np.arctan2(np.arctan2(a[0], a[1]), a[2])


@settings(max_examples=60, deadline=None)
@given(uf=st.sampled_from(BINARY),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
       dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.bool_]),
       data=st.data())
def test_ufunc_reduce_accumulate_outer(uf, shape, dtype, data):
    x = (RNG.uniform(0.5, 3, size=shape) * 3).astype(dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    reduce = _fold_reference(uf)
    for fn in (lambda a: reduce(a, axis=axis), lambda a: uf.accumulate(a, axis=axis),
               lambda a: reduce(a, axis=None), lambda a: reduce(a, axis, keepdims=True),
               lambda a: uf.outer(a, a[..., :2])):
        try:
            with np.errstate(all="ignore"):
                fn(x)
        except (TypeError, ValueError) as e:   # no loop for this dtype, not reorderable
            with pytest.raises(type(e)):
                trace(fn, x)
            continue
        check(fn, x, **tol(dtype))


def test_ufunc_outer_of_mixed_ranks():
    check(np.multiply.outer, normal((3,)), normal((2, 2)))
    check(np.add.outer, normal((2, 3)), 4.0)
    check(np.less.outer, ints((3,)), ints((4,)))


# -- the published list and the errors that point to it --------------------------------------------

def test_coverage_page_is_current():
    with open(os.path.join(ROOT, "docs", "numpy_coverage.md")) as f:
        assert f.read() == coverage.render(), (
            "docs/numpy_coverage.md is out of date: run "
            "`python -m autograph.runtime.numpy.coverage --write docs/numpy_coverage.md`")


def test_coverage_lists_the_new_families():
    names = set(dispatch.supported())
    assert len(names) >= 514
    for name in ("numpy.einsum", "numpy.linalg.eigh", "numpy.linalg.svd", "numpy.fft.rfft",
                 "numpy.unique", "numpy.histogram", "numpy.maximum.accumulate",
                 "numpy.logaddexp.reduce", "numpy.add.outer", "numpy.amax", "numpy.tanh"):
        assert name in names, name
    # every name listed is really covered: it resolves to a callable of the tables
    for name in names:
        parts = name.split(".")
        obj = np
        for p in parts[1:]:
            obj = getattr(obj, p)
        assert callable(obj), name


def test_uncovered_function_points_to_the_page():
    with pytest.raises(NotImplementedError,
                       match="numpy.*real_if_close.*docs/numpy_coverage.md"):
        trace(lambda a: np.real_if_close(a), normal((5,)))
    with pytest.raises(NotImplementedError, match="docs/numpy_coverage.md"):
        trace(lambda a: np.add.reduceat(a, [0, 2]), normal((5,)))


@pytest.mark.parametrize("fn, name", [
    (lambda a: np.save("/tmp/never_written.npy", a), "save"),
    (lambda a: np.savetxt("/tmp/never_written.txt", a), "savetxt"),
    (lambda a: np.array2string(a), "array2string"),
    (lambda a: np.array_repr(a), "array_repr"),
])
def test_meaningless_on_a_traced_array_says_why(fn, name):
    with pytest.raises(TypeError, match=rf"numpy\.{name} cannot be traced: it "):
        trace(fn, normal((3,)))
    assert not os.path.exists("/tmp/never_written.npy")


# -- smaller compositions ----------------------------------------------------------------------------

def _with_nans(shape, dtype):
    x = normal(shape).astype(dtype)
    x.flat[::3] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("case", [
    ("swapaxes", lambda a: np.swapaxes(a, 0, -1), (2, 3, 4)),
    ("rollaxis", lambda a: np.rollaxis(a, 2), (2, 3, 4)),
    ("rollaxis start", lambda a: np.rollaxis(a, 0, 3), (2, 3, 4)),
    ("fliplr", np.fliplr, (3, 4)), ("flipud", np.flipud, (3, 4)),
    ("rot90", np.rot90, (3, 4)), ("rot90 k2", lambda a: np.rot90(a, 2), (3, 4)),
    ("rot90 k3 axes", lambda a: np.rot90(a, -1, (1, 2)), (2, 3, 4)),
    ("column_stack", lambda a: np.column_stack([a, a[:, 0], a]), (3, 2)),
    ("dstack", lambda a: np.dstack([a, a]), (3, 2)),
    ("dstack 1d", lambda a: np.dstack([a[0], a[1]]), (3, 2)),
    ("append", lambda a: np.append(a, a[0]), (3, 2)),
    ("append axis", lambda a: np.append(a, a, axis=1), (3, 2)),
    ("hsplit", lambda a: np.hsplit(a, 2), (3, 4)), ("vsplit", lambda a: np.vsplit(a, [1]),
                                                    (3, 4)),
    ("dsplit", lambda a: np.dsplit(a, 2), (1, 2, 4)),
    ("cov", np.cov, (3, 5)), ("cov rowvar", lambda a: np.cov(a, rowvar=False, ddof=0), (5, 3)),
    ("cov y", lambda a: np.cov(a[0], a[1]), (3, 5)),
    ("corrcoef", np.corrcoef, (3, 5)),
    ("digitize", lambda a: np.digitize(a, np.array([-1.0, 0.0, 0.5, 2.0])), (4, 3)),
    ("digitize right decreasing", lambda a: np.digitize(a, np.array([2, 0.5, 0, -1]), True),
     (4, 3)),
    ("ediff1d", lambda a: np.ediff1d(a, to_end=[7], to_begin=-1), (3, 4)),
    ("trapezoid", lambda a: np.trapezoid(a, axis=0), (3, 4)),
    ("trapezoid x", lambda a: np.trapezoid(a, a[0]), (3, 4)),
    ("select", lambda a: np.select([a > 0.5, a < -0.5], [a, 2 * a], -1), (3, 4)),
    ("diagflat", lambda a: np.diagflat(a, 1), (2, 2)),
    ("vander", np.vander, (4,)), ("vander N inc", lambda a: np.vander(a, 3, True), (4,)),
    ("sinc", np.sinc, (3, 4)), ("angle", lambda a: np.angle(a, deg=True), (3, 4)),
    ("fix", np.fix, (3, 4)), ("isreal", np.isreal, (3,)), ("iscomplex", np.iscomplex, (3,)),
    ("isposinf", lambda a: np.isposinf(a / 0.0), (5,)),
    ("isneginf", lambda a: np.isneginf(a / 0.0), (5,)),
    ("cumulative_sum", lambda a: np.cumulative_sum(a, axis=1, include_initial=True), (3, 4)),
    ("cumulative_prod", lambda a: np.cumulative_prod(a, axis=0), (3, 4)),
    ("nanargmax", lambda a: np.nanargmax(a, axis=1), (3, 4)),
], ids=lambda c: c[0])
def test_compositions(case, dtype):
    _, fn, shape = case
    x = (normal(shape) * 3).astype(dtype)
    check(fn, x, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_statistics(dtype):
    x = _with_nans((4, 5), dtype)
    for fn in (np.nanvar, np.nanstd, np.nancumsum, np.nancumprod, np.nanargmin,
               lambda a: np.nanvar(a, axis=1, ddof=1, keepdims=True),
               lambda a: np.nanstd(a, axis=0), lambda a: np.nancumsum(a, axis=1)):
        check(fn, x, **tol(dtype))


def test_compress_and_extract_have_unknown_length():
    x = normal((4, 3))
    (t,) = check(lambda a: np.extract(a > 0, a), x, exact=False)
    assert t.shape == (None,)
    (t,) = check(lambda a: np.compress(a[:, 0] > 0, a, axis=0), x, exact=False)
    assert t.shape == (None, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_polynomials(dtype):
    p, q = (normal((4,)) * 3).astype(dtype), (normal((2,)) * 3).astype(dtype)
    for fn in (np.polyadd, np.polysub):
        check(fn, p, q, **tol(dtype))
        check(fn, q, p, **tol(dtype))
    # polymul drops leading zero coefficients first (NumPy reads them as poly1d): its length
    # depends on the data, so it is unknown while tracing
    z = np.concatenate([np.zeros(2, dtype), p])
    for a, b in ((p, q), (q, p), (z, q), (np.zeros(3, dtype), q)):
        (t,) = check(np.polymul, a, b, exact=False, **tol(dtype))
        assert t.shape == (None,)
    for m in (1, 2, 5):
        check(lambda a: np.polyder(a, m), p, **tol(dtype))
    check(np.polyint, p, **tol(dtype))
    check(lambda a: np.polyint(a, 2, [1.0, 2.0]), p, **tol(dtype))


def test_shape_index_helpers_and_unravel():
    m = normal((3, 4))
    # the indices depend on the static shape only: NumPy arrays, usable for a flat take
    for fn in (lambda a: np.tril_indices_from(a, -1), lambda a: np.triu_indices_from(a, 1),
               lambda a: np.diag_indices_from(a[:3, :3])):
        check(lambda a: np.take(a, np.ravel_multi_index(fn(a), a.shape)), m)
    i = ints((5,), 24)
    check(lambda a: np.unravel_index(a, (2, 3, 4)), i)
    check(lambda a, b: np.ravel_multi_index((a, b), (4, 6)), ints((5,), 4), ints((5,), 6))


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 7])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int64])
def test_linspace_with_tensor_ends(endpoint, num, dtype):
    a, b = np.float64(-1.5), np.array(4.0)
    check(lambda s, e: np.linspace(s, e, num, endpoint, dtype=dtype),
          np.asarray(a), b, rtol=1e-6)
    check(lambda s, e: np.linspace(s, e, num, endpoint, retstep=True)[1],
          np.asarray(a), b, rtol=1e-6) if num > 1 else None


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, "fro", "nuc"])
def test_cond_and_tensor_inverses(p):
    a = spd(3) + normal((3, 3))
    check(lambda x: np.linalg.cond(x, p), a, rtol=1e-6)
    t = normal((2, 3, 6)) + np.eye(6).reshape(2, 3, 6)
    check(lambda x: np.linalg.tensorinv(x, 2), t, rtol=1e-6, atol=1e-9)
    check(np.linalg.tensorsolve, normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3),
          normal((6,)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True},
                                {"ord": 1, "axis": -1}, {"ord": np.inf, "keepdims": True}])
def test_array_api_vector_norm(kw):
    check(lambda a: np.linalg.vector_norm(a, **kw), normal((2, 3, 4)))
    check(lambda a: np.linalg.matrix_norm(a), normal((2, 3, 4)))
    check(lambda a, b: np.linalg.tensordot(a, b, axes=1), normal((2, 3)), normal((3, 4)))


def test_new_tensor_methods_are_their_functions():
    m = normal((3, 3))
    check(lambda a: (a.trace(), a.diagonal(1), a.swapaxes(0, 1), a.conj()), m)
    check(lambda a: a.nonzero(), m > 0, exact=False)
    check(lambda a: np.sort(a[0]).searchsorted(a[1]), m)
    check(lambda a: a.compress(a[0] > 0, axis=1), m, exact=False)


@settings(max_examples=25, deadline=None)
@given(keys=st.integers(1, 3).flatmap(lambda k: st.lists(
    hnp.arrays(np.int64, 6, elements=st.integers(0, 2)), min_size=k, max_size=k)))
def test_lexsort(keys):
    check(lambda *ks: np.lexsort(ks), *keys)


def test_histogram_bin_edges_unstack_matrix_transpose():
    x = normal((3, 4))
    check(lambda a: np.histogram_bin_edges(a, 5), x)
    check(np.unstack, x)
    check(lambda a: np.unstack(a, axis=1), x)
    check(np.matrix_transpose, normal((2, 3, 4)))
