"""NumPy on symbolic tensors, checked against NumPy itself.

THE test of this layer: for many functions x dtypes x shapes, the dtype and static shape
inferred while tracing equal what eager NumPy returns for the same inputs, and running the
graph gives NumPy's values: with the reference interpreter and with codegen, on NumPy and
on array-api-strict (which proves kernels use only the array API standard), and with the
interpreter on torch when it is installed.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from autograph.runtime.exec import codegen, interpreter, optimize

from autograph.runtime.numpy import dispatch as numpy_ops
from autograph.runtime.ir import shapes as shape_rules
from autograph.runtime.devices import get_device, list_devices
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor

DEVICES = tuple(d.name for d in list_devices()
                if d.available and d.name in ("cpu", "strict", "torch"))
RNG = np.random.default_rng(0)


# -- harness ---------------------------------------------------------------------------------

def sample(dtype, shape, low=1, high=5):
    """Small positive values (no division by zero, no negative powers, no log domain
    errors) of `dtype` and `shape`."""
    dtype = np.dtype(dtype)
    if dtype == bool:
        return np.asarray(RNG.integers(0, 2, size=shape)).astype(bool)
    if dtype.kind in "iu":
        return np.asarray(RNG.integers(low, high + 1, size=shape)).astype(dtype)
    return np.asarray(RNG.uniform(0.1, 0.9, size=shape) * (high - low + 1) / 4).astype(dtype)


def trace(fn, *args, shapes=None):
    """Trace fn: NumPy arrays become placeholders (shape from `shapes`, if given, else the
    array's), other args are passed through. Returns (graph, outputs as a flat list)."""
    g = Graph("test")
    with g.as_default():
        sym = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                shape = a.shape if shapes is None else shapes[i]
                sym.append(g.placeholder(f"a{i}", a.dtype, shape))
            else:
                sym.append(a)
        out = fn(*sym)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        g.set_outputs(outs)
    return g, outs


def run(g, *args, device="cpu", executor="interpreter"):
    """Run the graph on the args that were placeholders; results as NumPy arrays."""
    dev = get_device(device)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if executor == "codegen":
        values = codegen.compile_graph(g, device)(*[dev.to_device(a) for a in arrays])
    elif executor == "optimized":   # folded, merged, pruned: still the same values
        values = interpreter.run(optimize.optimize(g), arrays, device, check=True)
    else:   # check: every node's value has the dtype and shape its tensor promised
        values = interpreter.run(g, arrays, device, check=True)
    return [dev.to_host(v) for v in values]


def check(fn, *args, shapes=None, devices=DEVICES, rtol=1e-6, atol=0, exact=None,
          executors=None):
    """fn traced == fn eager: dtype, static shape (None matches any length) and values on
    every device. Returns the traced output tensors."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = fn(*args)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    g, outs = trace(fn, *args, shapes=shapes)
    for t, e in zip(outs, expected):
        e = np.asarray(e)
        assert isinstance(t, Tensor), t
        assert t.dtype == e.dtype, f"inferred dtype {t.dtype}, NumPy gives {e.dtype}"
        assert t.shape is None or len(t.shape) == e.ndim, (t.shape, e.shape)
        if t.shape is not None:
            assert all(d is None or d == n for d, n in zip(t.shape, e.shape)), (t.shape, e.shape)
        if exact if exact is not None else shapes is None:
            assert t.shape == e.shape, f"inferred shape {t.shape}, NumPy gives {e.shape}"
    used = {t.dtype for n in g.nodes for t in n.outputs}
    if np.dtype(np.float16) in used:
        devices = [d for d in devices if d != "strict"]   # the array API has no float16
    if used & {np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}:
        devices = [d for d in devices if d != "torch"]    # torch lacks most uint>8 kernels
    if any(n.op in ("floor_divide", "remainder", "fmod") and n.outputs[0].dtype.kind in "iu"
           for n in g.nodes) and any(isinstance(a, np.ndarray) and not a.all() for a in args):
        devices = [d for d in devices if d != "torch"]    # torch raises on int division by 0
    runs = [(d, x) for d in devices for x in executors or ("interpreter", "codegen", "optimized")
            if x == "interpreter" or d == "cpu" or (d == "strict" and x == "codegen")]
    for device, executor in runs:
        with np.errstate(all="ignore"):
            got = run(g, *args, device=device, executor=executor)
        device = f"{device}/{executor}"
        for v, e in zip(got, expected):
            e = np.asarray(e)
            assert v.dtype == e.dtype, f"{device}: ran to dtype {v.dtype}, NumPy gives {e.dtype}"
            assert v.shape == e.shape, f"{device}: ran to shape {v.shape}, NumPy gives {e.shape}"
            if e.dtype.kind in "fc":
                np.testing.assert_allclose(v, e, rtol=rtol, atol=atol, err_msg=device)
            else:
                np.testing.assert_array_equal(v, e, err_msg=device)
    return outs


def same_error(fn, *args):
    """When eager NumPy raises, tracing raises the same kind of error; returns whether
    NumPy raised."""
    try:
        with np.errstate(all="ignore"):
            fn(*args)
    except (TypeError, ValueError, OverflowError) as e:
        kind = TypeError if isinstance(e, TypeError) else type(e)
        with pytest.raises(kind):
            trace(fn, *args)
        return True
    return False


# -- elementwise: every ufunc x dtype x operand kind ------------------------------------------

MATRIX = ("interpreter",)   # the dtype matrices run on every device, one executor
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float32, np.float64]
PY_SCALARS = [2, 1.5, True]

BINARY = [np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.remainder,
          np.power, np.maximum, np.minimum, np.equal, np.not_equal, np.less, np.less_equal,
          np.greater, np.greater_equal, np.logical_and, np.logical_or, np.logical_xor,
          np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
          np.arctan2, np.hypot, np.copysign, np.logaddexp, np.fmod, np.fmax, np.fmin]
UNARY = [np.negative, np.positive, np.absolute, np.exp, np.expm1, np.log, np.log1p, np.log2,
         np.log10, np.sqrt, np.square, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
         np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arctanh, np.logical_not, np.invert,
         np.isnan, np.isfinite, np.isinf, np.sign, np.signbit, np.floor, np.ceil, np.trunc,
         np.rint, np.exp2, np.deg2rad, np.rad2deg, np.radians, np.degrees]


def _fails(cases):
    failures = []
    for label, thunk in cases:
        try:
            thunk()
        except Exception as e:  # collect every mismatch, then report them together
            failures.append(f"{label}: {type(e).__name__}: {(str(e) or '?').splitlines()[0]}")
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("uf", BINARY, ids=lambda u: u.__name__)
def test_binary_ufunc_matches_numpy(uf):
    cases = []
    for d1 in DTYPES:
        for d2 in DTYPES:
            a, b = sample(d1, (2, 3)), sample(d2, (3,))
            cases.append((f"{d1.__name__},{d2.__name__}", lambda a=a, b=b: (
                same_error(uf, a, b) or check(uf, a, b, executors=MATRIX))))
        for s in PY_SCALARS:
            a = sample(d1, (2,))
            cases.append((f"{d1.__name__},{s!r}", lambda a=a, s=s: (
                same_error(uf, a, s) or check(uf, a, s, executors=MATRIX))))
            cases.append((f"{s!r},{d1.__name__}", lambda a=a, s=s: (
                same_error(uf, s, a) or check(uf, s, a, executors=MATRIX))))
    _fails(cases)


@pytest.mark.parametrize("uf", UNARY, ids=lambda u: u.__name__)
def test_unary_ufunc_matches_numpy(uf):
    cases = []
    for d in DTYPES:
        a = sample(d, (2, 2))
        cases.append((d.__name__, lambda a=a: same_error(uf, a) or check(uf, a)))
    _fails(cases)


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 1), (1, 4)), ((), (5,)),
                                     ((3, 1, 2), (4, 1)), ((0, 3), (1, 3)), ((1,), ())])
def test_broadcasting_shapes(shapes):
    a, b = sample(np.float64, shapes[0]), sample(np.int32, shapes[1])
    check(np.add, a, b)
    check(lambda x, y: x * y - 1, a, b)


def test_unknown_dims_propagate_through_broadcasting():
    a, b = sample(np.float64, (4, 3)), sample(np.float64, (3,))
    (out,) = check(np.multiply, a, b, shapes=[(None, 3), (3,)])
    assert out.shape == (None, 3)
    (out,) = check(np.multiply, a, b, shapes=[(None, None), (3,)])
    assert out.shape == (None, 3)       # the known 3 decides
    (out,) = check(np.multiply, a, b, shapes=[None, (3,)])
    assert out.shape is None            # unknown rank stays unknown
    c = sample(np.float64, (4, 1))
    (out,) = check(np.add, a, c, shapes=[(None, 3), (None, 1)])
    assert out.shape == (None, 3)


def test_negative_operands_floor_divide_and_remainder_like_python():
    a = np.array([-7, -3, 0, 3, 7], dtype=np.int64)
    b = np.array([2, -2, 3, -3, 5], dtype=np.int64)
    check(np.floor_divide, a, b)
    check(np.remainder, a, b)
    check(lambda x: x // 2, a)
    check(lambda x: x % -3, a)
    f = a.astype(np.float64) + 0.5
    check(lambda x, y: (x // y, x % y), f, b.astype(np.float64))


def test_fmod_fmax_fmin_with_signs_and_nans():
    a = np.array([-7, -3, 0, 3, 7, -7], dtype=np.int64)
    b = np.array([2, -2, 3, -3, -5, 7], dtype=np.int64)
    check(lambda x, y: (np.fmod(x, y), *np.divmod(x, y)), a, b)
    f = np.array([-7.5, np.nan, 1.0, np.nan, -0.0, 2.5])
    g = np.array([2.0, 1.0, np.nan, np.nan, 3.0, -1.0])
    check(lambda x, y: (np.fmod(x, y), np.fmax(x, y), np.fmin(x, y), np.maximum(x, y)), f, g)


# -- NEP 50: Python scalars are weak ------------------------------------------------------------

def test_weak_python_scalars_follow_nep50():
    x32 = sample(np.int32, (3,))
    (out,) = check(lambda x: x + 1, x32)
    assert out.dtype == np.int32
    (out,) = check(lambda x: x + 1.5, x32)
    assert out.dtype == np.float64
    f32 = sample(np.float32, (3,))
    (out,) = check(lambda x: x * 2, f32)
    assert out.dtype == np.float32
    (out,) = check(lambda x: 2.0 ** x, f32)
    assert out.dtype == np.float32
    (out,) = check(lambda x: x + 1j, f32)
    assert out.dtype == np.complex64
    u8 = sample(np.uint8, (3,))
    (out,) = check(lambda x: x + 200, u8)
    assert out.dtype == np.uint8


def test_scalar_out_of_range_for_dtype_raises_like_numpy():
    u8 = sample(np.uint8, (3,))
    with pytest.raises(OverflowError):
        u8 + (-1)
    with pytest.raises(OverflowError):
        trace(lambda x: x + (-1), u8)


def test_weak_constants_are_made_in_the_loop_dtype_without_cast_nodes():
    g, (out,) = trace(lambda x: x * 2 + 1, sample(np.float32, (3,)))
    ops = [n.op for n in g.nodes]
    assert "astype" not in ops
    consts = [n.attrs["value"] for n in g.nodes if n.op == "Const"]
    assert [c.dtype for c in consts] == [np.float32, np.float32]


def test_results_of_weak_operands_stay_weak():
    g = Graph("weak")
    with g.as_default():
        from autograph.runtime.ir.primitives import constant
        two = constant(2)
        assert two.weak and two.dtype == np.int64
        y = two * 3                       # weak * weak: weak int
        assert y.weak and y.dtype == np.int64
        z = y / 2                         # weak float
        assert z.weak and z.dtype == np.float64
        x = g.placeholder("x", np.dtype(np.float32), (2,))
        w = x + z                         # weak float adopts float32
        assert not w.weak and w.dtype == np.float32
        i8 = g.placeholder("i", np.dtype(np.int8), ())
        assert (i8 + y).dtype == np.int8  # the weak int adopts int8
        assert not (y < 3).weak           # comparisons give plain bools


def test_numpy_functions_make_strong_results_like_numpy_arrays():
    """A Python scalar stays weak through Python operators (`1 + 2` is an int), but a NumPy
    call makes an array (`np.add(1, 2)` is an int64 that promotes int8 to int64)."""
    g = Graph("strong")
    with g.as_default():
        from autograph.runtime.ir.primitives import constant
        one = constant(1)
        i8 = g.placeholder("i8", np.dtype(np.int8), (3,))
        f32 = g.placeholder("f32", np.dtype(np.float32), (3,))
        assert (one + 2).weak and (i8 + (one + 2)).dtype == np.int8
        assert not np.add(one, 2).weak and (i8 + np.add(one, 2)).dtype == np.int64
        assert not np.sqrt(one).weak and (f32 * np.sqrt(one)).dtype == np.float64
        assert (f32 * abs(one)).dtype == np.float32          # abs() is Python's: weak
        assert not np.where(i8 > 0, 1, 0).weak
    x8, x32 = sample(np.int8, (3,)), sample(np.float32, (3,))
    check(lambda a: a + np.where(a > 2, 1, 0), x8)            # int8 + int64 array: int64
    check(lambda a, b: b * np.where(a > 2, 1, 0), x8, x32)    # float32 * int64: float64
    check(lambda a: a * np.clip(2, 0, 1), x8)
    check(lambda a: a + np.sum(np.where(a > 2, 1, 0)), x8)


def test_mixed_strong_dtypes_cast_to_numpy_loop_dtype():
    a, b = sample(np.int32, (3,)), sample(np.float32, (3,))
    g, (out,) = trace(np.add, a, b)
    assert out.dtype == np.float64
    casts = [n.attrs["dtype"] for n in g.nodes if n.op == "astype"]
    assert casts == [np.float64, np.float64]
    check(np.add, a, b)


# -- reductions ----------------------------------------------------------------------------------

REDUCTIONS = [np.sum, np.prod, np.mean, np.max, np.min, np.any, np.all, np.argmax, np.argmin,
              np.amax, np.amin]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=lambda f: f.__name__)
def test_reductions_match_numpy(fn):
    cases = []
    for d in [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]:
        x = sample(d, (3, 4))
        axes = [None, 0, 1, -1] + ([] if fn in (np.argmax, np.argmin) else [(0, 1)])
        for axis in axes:
            for keepdims in (False, True):
                cases.append((f"{d.__name__} axis={axis} keepdims={keepdims}",
                              lambda x=x, axis=axis, keepdims=keepdims: same_error(
                                  fn, x) or check(lambda t: fn(t, axis=axis, keepdims=keepdims),
                                                  x)))
    _fails(cases)


def test_reduction_dtype_argument_and_methods():
    x = sample(np.int32, (3, 4))
    check(lambda t: np.sum(t, dtype=np.int32), x)
    check(lambda t: np.sum(t, axis=0, dtype=np.float32), x)
    check(lambda t: np.mean(t, dtype=np.float32), x)
    check(lambda t: (t.sum(), t.sum(1), t.mean(0), t.max(), t.min(axis=1), t.prod(0)), x)
    check(lambda t: (t.any(), t.all(0), t.argmax(), t.argmin(1)), x)
    check(lambda t: (np.add.reduce(t), np.multiply.reduce(t, axis=1),
                     np.maximum.reduce(t, axis=None), np.add.accumulate(t)), x)


def test_reductions_with_unknown_dims():
    x = sample(np.float64, (5, 3))
    (out,) = check(lambda t: np.sum(t, axis=0), x, shapes=[(None, 3)])
    assert out.shape == (3,)
    (out,) = check(lambda t: np.sum(t, axis=1), x, shapes=[(None, 3)])
    assert out.shape == (None,)
    (out,) = check(np.mean, x, shapes=[None])
    assert out.shape == ()
    (out,) = check(lambda t: np.max(t, axis=-1), x, shapes=[None])
    assert out.shape is None


@pytest.mark.parametrize("d", [np.bool_, np.int8, np.int32, np.uint8, np.float32, np.float64])
def test_cumulative_match_numpy(d):
    x = sample(d, (3, 4))
    check(np.cumsum, x)
    check(lambda t: np.cumsum(t, axis=1), x)
    check(lambda t: np.cumsum(t, axis=0, dtype=np.float64), x)
    check(lambda t: t.cumprod(axis=-1), x)
    check(np.cumsum, sample(d, ()))


@pytest.mark.parametrize("d", [np.bool_, np.int32, np.int64, np.float32, np.float64])
def test_statistics_match_numpy(d):
    x = sample(d, (3, 4))
    if d != np.bool_:
        check(lambda t: (np.var(t), np.std(t, axis=0), np.var(t, axis=1, ddof=1),
                         t.std(keepdims=True), t.var(axis=(0, 1))), x, rtol=1e-5)
        check(lambda t: (np.linalg.norm(t), np.linalg.norm(t, axis=1),
                         np.linalg.norm(t[0], ord=2)), x, rtol=1e-5)
    check(lambda t: (np.count_nonzero(t), np.count_nonzero(t > 2, axis=0)), x)
    y = sample(d, (4,))
    check(lambda a, b: (np.isclose(a, b), np.allclose(a, a), np.isclose(a, 2)), x, y)


@pytest.mark.parametrize("d", [np.int32, np.float32, np.float64])
def test_nan_reductions_median_average_match_numpy(d):
    x = sample(d, (3, 4))
    if np.dtype(d).kind == "f":
        x[0, 1] = x[2, 3] = np.nan
    y = x.copy()
    if np.dtype(d).kind == "f":
        y[:, 0] = np.nan                       # an all-NaN column
    check(lambda t: (np.nansum(t), np.nansum(t, axis=0), np.nanprod(t, 1),
                     np.nanmean(t), np.nanmean(t, axis=1, keepdims=True),
                     np.nanmax(t), np.nanmin(t, axis=0)), x, rtol=1e-5)
    check(lambda t: (np.nanmax(t, axis=0), np.nanmin(t, axis=0)), y)
    z = sample(d, (3, 4))
    check(lambda t: (np.median(t), np.median(t, axis=0), np.median(t, axis=1),
                     np.median(t[:, :3], axis=-1, keepdims=True), np.median(t, keepdims=True)),
          z, rtol=1e-5)
    w = sample(d, (4,))
    check(lambda t, u: (np.average(t), np.average(t, axis=1, weights=u),
                        np.average(t, weights=t), np.average(t, axis=0, weights=t)),
          z, w, rtol=1e-5)


def test_array_equal_and_empty_like():
    a = np.array([1.0, np.nan, 3.0])
    b = np.array([1.0, np.nan, 3.0])
    check(lambda x, y: (np.array_equal(x, y), np.array_equal(x, y, equal_nan=True),
                        np.array_equal(x, x * 2), np.array_equal(x[:2], y[:2])), a, b)
    g = Graph("shapes_differ")
    with g.as_default():
        x = g.placeholder("x", np.dtype(np.float64), (3,))
        assert np.array_equal(x, x[:2]) is False      # decided while tracing
        out = np.empty_like(x, dtype=np.int8)
        assert out.dtype == np.int8 and out.shape == (3,)


def test_isclose_handles_nan_and_inf_like_numpy():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 1.0 + 1e-6], dtype=np.float64)
    b = np.array([1.0, np.nan, np.inf, np.inf, 0.0, 1.0], dtype=np.float64)
    check(lambda x, y: (np.isclose(x, y), np.isclose(x, y, equal_nan=True),
                        np.isclose(x, y, rtol=0, atol=0), np.allclose(x, y)), a, b)


@pytest.mark.parametrize("d", [np.bool_, np.int8, np.int64, np.float32])
def test_sort_flip_roll_diff_outer_match_numpy(d):
    x = sample(d, (3, 5), low=-4, high=4)
    check(lambda t: (np.sort(t), np.sort(t, axis=0), np.sort(t, axis=None),
                     np.argsort(t[0] * 0 + np.arange(5)[::-1]), t.argsort(axis=0)
                     if d != np.bool_ else t), x)
    check(lambda t: (np.flip(t), np.flip(t, 1), np.flip(t, (0, 1)), np.roll(t, 2),
                     np.roll(t, -1, axis=1), np.roll(t, (1, 2), axis=(0, 1))), x)
    check(lambda t: (np.diff(t), np.diff(t, axis=0), np.diff(t, n=2)), x)
    check(lambda t: np.outer(t[0], t[:, 1]), x)


@pytest.mark.parametrize("d", [np.bool_, np.int32, np.float64])
def test_joining_splitting_repeating_match_numpy(d):
    x, v, s = sample(d, (4, 3)), sample(d, (3,)), sample(d, ())
    check(lambda t: tuple(np.split(t, 2)) + tuple(np.split(t, [1, 2], axis=1)), x)
    check(lambda t: tuple(np.array_split(t, 3)) + tuple(np.array_split(t, 2, axis=1)), x)
    check(lambda a, b: (np.vstack([a, b]), np.hstack([a, a]), np.hstack([b, b]),
                        np.vstack((b, b), dtype=np.float32)), x, v)
    check(lambda a, b, c: (np.atleast_1d(c), np.atleast_2d(b), np.atleast_3d(b),
                           np.atleast_3d(a), *np.atleast_1d(c, b)), x, v, s)
    check(lambda a, b: np.broadcast_arrays(a, b, 1), x, v)
    check(lambda t: (np.repeat(t, 2), np.repeat(t, 3, axis=1), np.tile(t, 2),
                     np.tile(t, (2, 1, 2)), t.repeat(2, axis=0)), x)
    if d != np.bool_:
        check(lambda a, b: (np.inner(a, b), np.inner(b, b), np.inner(a, 2)), x, v)


def test_meshgrid_matches_numpy():
    x, y, z = sample(np.float64, (4,)), sample(np.int32, (3,)), sample(np.float32, (2,))
    check(lambda a, b: np.meshgrid(a, b), x, y)
    check(lambda a, b, c: np.meshgrid(a, b, c), x, y, z)
    check(lambda a, b: np.meshgrid(a, b, indexing="ij"), x, y)
    check(lambda a, b: np.meshgrid(a, b, sparse=True), x, y)


def test_real_and_imag():
    z = (sample(np.float64, (3,)) + 1j * sample(np.float64, (3,))).astype(np.complex128)
    check(lambda t: (np.real(t), np.imag(t), np.conjugate(t), np.abs(t)), z)
    check(lambda t: (np.real(t), np.imag(t)), sample(np.float32, (3,)))


# -- shapes ----------------------------------------------------------------------------------------

def test_reshape_transpose_and_friends():
    x = sample(np.float32, (2, 3, 4))
    check(lambda t: np.reshape(t, (6, 4)), x)
    check(lambda t: t.reshape(4, -1), x)
    check(lambda t: t.reshape((-1,)), x)
    check(lambda t: (t.T, np.transpose(t, (1, 0, 2)), t.transpose(2, 0, 1)), x)
    check(lambda t: (np.expand_dims(t, 0), np.expand_dims(t, -1), np.expand_dims(t, (0, 2))), x)
    check(lambda t: (np.squeeze(t[:, :1]), np.squeeze(t[None], axis=0)), x)
    check(lambda t: (t.ravel(), t.flatten(), np.ravel(t)), x)
    check(lambda t: np.broadcast_to(t[:, :1], (2, 5, 4)), x)
    check(lambda t: np.broadcast_to(3, (2, 2)) + t[:, :2, 0], x)


def test_reshape_with_unknown_dims():
    x = sample(np.float64, (6, 4))
    (out,) = check(lambda t: t.reshape(-1, 2), x, shapes=[(None, 4)])
    assert out.shape == (None, 2)
    (out,) = check(lambda t: t.reshape(-1), x, shapes=[(6, 4)])
    assert out.shape == (24,)
    with pytest.raises(ValueError, match="cannot reshape"):
        trace(lambda t: t.reshape(5, 5), x)
    with pytest.raises(ValueError, match=r"None.*Use -1"):
        trace(lambda t: t.reshape(t.shape[0], 2, 2), x, shapes=[(None, 4)])


def test_shapes_with_lengths_known_only_at_run_time():
    x = sample(np.float64, (6, 4))
    n = np.array(3, dtype=np.int64)
    cases = [
        (lambda t, k: t.reshape(k, -1), lambda t, k: t.reshape(k, -1), (None, None)),
        (lambda t, k: np.reshape(t, (2, k, 4)), lambda t, k: t.reshape(2, k, 4), (2, None, 4)),
        (lambda t, k: numpy_ops.zeros((k, 2)), lambda t, k: np.zeros((k, 2)), (None, 2)),
        (lambda t, k: numpy_ops.ones(k, np.int32), lambda t, k: np.ones(k, np.int32), (None,)),
        (lambda t, k: numpy_ops.full((2, k), 7), lambda t, k: np.full((2, k), 7), (2, None)),
        (lambda t, k: np.broadcast_to(t[0], (k, 4)), lambda t, k: np.broadcast_to(t[0], (k, 4)),
         (None, 4)),
        (lambda t, k: np.zeros_like(t).reshape(numpy_ops.dim(t, 0), -1),
         lambda t, k: np.zeros_like(t).reshape(t.shape[0], -1), (None, None)),
    ]
    for staged, eager, static in cases:
        g, (out,) = trace(staged, x, n, shapes=[(None, 4), ()])
        expected = eager(x, int(n))
        assert out.shape == static and out.dtype == expected.dtype
        for device in DEVICES:
            for executor in ("interpreter", "codegen"):
                (got,) = run(g, x, n, device=device, executor=executor)
                np.testing.assert_array_equal(got, expected)


def test_concatenate_and_stack_promote_like_numpy():
    a, b = sample(np.int32, (2, 3)), sample(np.float32, (4, 3))
    check(lambda x, y: np.concatenate([x, y]), a, b)
    check(lambda x, y: np.concatenate((x, y), axis=None), a, b)
    check(lambda x: np.concatenate([x, x], axis=1), a)
    check(lambda x, y: np.stack([x, y[:2]], axis=1), a, b)
    check(lambda x: np.stack([x, x, x], axis=-1), a)
    check(lambda x: np.stack([x[0], np.zeros(3)]), a)
    (out,) = check(lambda x, y: np.concatenate([x, y]), a, b, shapes=[(None, 3), (4, 3)])
    assert out.shape == (None, 3)
    with pytest.raises(ValueError):
        trace(lambda x, y: np.concatenate([x, y], axis=1), a, b)


def test_creation_functions():
    x = sample(np.int32, (2, 3))
    check(lambda t: (np.zeros_like(t), np.ones_like(t, dtype=np.float32),
                     np.full_like(t, 7), np.full_like(t, 2.5, dtype=np.float64)), x)
    check(lambda t: (np.zeros((2, 3), like=t), np.ones(3, dtype=np.int8, like=t),
                     np.full((2,), 4.5, like=t), np.arange(5, like=t),
                     np.arange(1, 7, 2, dtype=np.float32, like=t)), x)
    check(lambda t: t + np.zeros((2, 3)), x)


def test_arange_with_symbolic_bounds_has_unknown_length():
    n = np.array(5, dtype=np.int64)
    cases = [(lambda t: numpy_ops.arange(t), np.arange(5)),
             (lambda t: numpy_ops.arange(1, t, 2), np.arange(1, 5, 2)),
             (lambda t: numpy_ops.arange(0.5, t.astype(np.float64)), np.arange(0.5, 5.0)),
             (lambda t: numpy_ops.arange(t, 0, -2), np.arange(5, 0, -2))]
    for fn, expected in cases:
        g, (out,) = trace(fn, n)
        assert out.shape == (None,) and out.dtype == expected.dtype
        for device in DEVICES:
            (got,) = run(g, n, device=device)
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == expected.dtype


# -- linear algebra, selection -----------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)),
                                   ((5, 2, 3), (3, 4)), ((5, 2, 3), (1, 3, 2))])
def test_matmul_and_dot(sa, sb):
    a, b = sample(np.float64, sa), sample(np.int32, sb)
    check(lambda x, y: x @ y, a, b)
    check(np.matmul, a, b)
    check(np.dot, a, b)
    check(lambda x, y: x.T.T @ y if x.ndim < 3 else x @ y, a, b)
    check(lambda x, y: np.array(a) @ y, a, b)   # ndarray @ Tensor reaches the Tensor


@pytest.mark.parametrize("d", [np.int64, np.float32, np.float64])
def test_linalg_inv_det_solve(d):
    a = (np.eye(3) * 4 + sample(np.float64, (3, 3))).astype(d)
    batch = np.stack([a, a.T + np.eye(3, dtype=d)])
    b = sample(d, (3,))
    rtol = 1e-4 if d == np.float32 else 1e-9
    check(lambda x, y: (np.linalg.inv(x), np.linalg.det(x), np.linalg.solve(x, y),
                        np.linalg.solve(x, x)), a, b, rtol=rtol, atol=1e-6)
    check(lambda x: (np.linalg.inv(x), np.linalg.det(x)), batch, rtol=rtol, atol=1e-6)


def test_matmul_of_bools():
    a, b = sample(np.bool_, (3, 4)), sample(np.bool_, (4, 2))
    check(lambda x, y: (x @ y, np.dot(x, y), x[0] @ y), a, b)


def test_dot_nd_scalar_and_tensordot():
    a, b = sample(np.float64, (2, 3, 4)), sample(np.float64, (5, 4, 6))
    check(np.dot, a, b)
    check(lambda x: np.dot(x, 2.0), a)
    i = sample(np.int32, (3,))
    check(lambda x: (np.dot(x, 2), np.outer(x, 2), np.inner(2, x)), i)   # scalars: not weak
    check(lambda x, y: np.tensordot(x, y, axes=([2], [1])), a, b)
    check(lambda x: np.tensordot(x, x, axes=3), a)
    check(lambda x: x.dot(x[0, 0]), a)
    with pytest.raises(ValueError, match="matmul"):
        trace(lambda x, y: x @ y, a, b)


def test_where_clip_round():
    x, y = sample(np.int32, (3, 4)), sample(np.float32, (4,))
    check(lambda c, a, b: np.where(c > 2, a, b), x, x, y)
    check(lambda a: np.where(a > 2, a, 0), x)          # weak 0 keeps int32
    check(lambda a: np.where(a, 1.5, 0.5), x)
    check(lambda a: np.clip(a, 2, 4), x)
    check(lambda a: np.clip(a, 1.5, None), x)
    check(lambda a, b: np.clip(a, b, 3), x, y)
    check(lambda a: (a.clip(max=3), np.clip(a, min=2)), x)
    check(lambda a: (np.clip(a, 4, 2)), x)             # lower bound above upper: upper wins
    f = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.234567], dtype=np.float64)
    check(lambda a: (np.round(a), np.around(a, 2), a.round(1), np.rint(a)), f)
    check(lambda a: (np.round(a * 1000, -1), np.round(a * 1e5, -3)), f, rtol=0)
    check(lambda a: np.round(a, 2), x)


# -- indexing -------------------------------------------------------------------------------------

def test_basic_indexing_matches_numpy():
    x = sample(np.int64, (4, 5, 6))
    keys = [0, -1, (1, 2), (1, 2, 3), slice(1, 3), (slice(None), 2), (Ellipsis, 1),
            (None, 1), (1, None, slice(None, None, -1)), (slice(-3, None), Ellipsis, None),
            (slice(None, None, 2), 1, slice(4, 1, -1)), (), Ellipsis, (slice(10, 20),)]
    for key in keys:
        check(lambda t, key=key: t[key], x)


def test_indexing_with_unknown_dims():
    x = sample(np.float64, (4, 5))
    (out,) = check(lambda t: t[1:3], x, shapes=[(None, 5)])
    assert out.shape == (None, 5)
    (out,) = check(lambda t: t[0, 1:3], x, shapes=[(None, 5)])
    assert out.shape == (2,)
    (out,) = check(lambda t: t[..., 0], x, shapes=[None])
    assert out.shape is None


def test_tensor_index_and_tensor_slice_bounds():
    x = sample(np.float64, (4, 5))
    i = np.array(2, dtype=np.int64)
    check(lambda t, k: t[k], x, i)
    check(lambda t, k: t[-k], x, i)                    # negative dynamic index
    check(lambda t, k: t[k, 1:], x, i)
    check(lambda t, k: t[1:, k], x, i)
    (out,) = check(lambda t, k: t[k:], x, i, exact=False)
    assert out.shape == (None, 5)
    check(lambda t, k: t[:, k - 1:k + 2], x, i, exact=False)
    idx = np.array([3, 0, -1], dtype=np.int64)
    check(lambda t, k: t[k], x, idx)                   # gather rows
    check(lambda t, k: np.take(t, k, axis=1), x, idx)
    check(lambda t, k: np.take(t, k), x, idx)
    check(lambda t, k: (t[:, k], t[k, :], t[..., k], t[k, ...]), x, idx)   # one axis: take
    y = sample(np.float64, (2, 3, 4))
    check(lambda t: (t[:, [2, 0]], t[..., [3, 1, 1]], t[:, :, np.array([0, -1])]), y)


def test_boolean_mask_and_constant_index_arrays():
    x = sample(np.float64, (4, 3))
    (out,) = check(lambda t: t[t > 1.0], x, exact=False)
    assert out.shape == (None,)
    (out,) = check(lambda t: t[t[:, 0] > 1.0], x, exact=False)
    assert out.shape == (None, 3)
    check(lambda t: t[[0, 2]], x)
    check(lambda t: t[np.array([True, False, True, False])], x)


def test_indexing_errors_are_clear():
    x = sample(np.float64, (4, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        trace(lambda t: t[4], x)
    with pytest.raises(IndexError, match="too many indices"):
        trace(lambda t: t[1, 2, 3], x)
    with pytest.raises(NotImplementedError, match="numpy.take"):
        trace(lambda t: t[[0, 1], 1], x)
    with pytest.raises(NotImplementedError, match="numpy.take"):
        trace(lambda t: t[t[:, 0] > 0, :], x)
    with pytest.raises(IndexError, match="integer scalar tensors"):
        trace(lambda t: t[1.5], x)


# -- shape, size, astype ------------------------------------------------------------------------

def test_shape_size_ndim_astype():
    x = sample(np.int32, (3, 4))
    g, _ = trace(lambda t: t, x)
    check(lambda t: np.astype(t, np.float32) + t.astype(np.int8), x)
    check(lambda t: t.astype(bool), x)
    check(lambda t: t * np.zeros(np.shape(t)) + np.size(t) + t.size + t.ndim + np.ndim(t), x)
    _, (out,) = trace(lambda t: t, x)
    assert (np.shape(out), np.size(out), out.size, out.ndim, np.ndim(out), len(out)) == \
        ((3, 4), 12, 12, 2, 2, 3)
    _, (out,) = trace(lambda t: t.astype(np.float64), x, shapes=[(None, 4)])
    assert out.dtype == np.float64 and out.shape == (None, 4)


def test_size_of_unknown_dims_is_a_tensor():
    x = sample(np.float32, (3, 4))
    (out,) = check(lambda t: np.size(t), x, shapes=[(None, 4)])
    assert isinstance(out, Tensor) and out.shape == ()
    (out,) = check(lambda t: t.size * 2, x, shapes=[None])
    g, (shape, n0) = trace(lambda t: (numpy_ops.shape_of(t), numpy_ops.dim(t, 0) + 0), x,
                           shapes=[(None, 4)])
    assert shape.shape == (2,) and n0.shape == ()
    for device in DEVICES:
        got_shape, got_n0 = run(g, x, device=device)
        np.testing.assert_array_equal(got_shape, [3, 4])
        assert got_n0 == 3
    g, _ = trace(lambda t: t, x, shapes=[(None, 4)])
    with g.as_default():
        assert numpy_ops.dim(g.inputs[0], 1) == 4
        assert np.shape(g.inputs[0]) == (None, 4)


# -- kernels use only the array API: every primitive's kernel on array-api-strict --------------

def test_every_named_kernel_exists_in_every_namespace():
    """Kernels named by a string are looked up in the device's namespace: each one this
    layer registers must exist in NumPy, array-api-strict and (when installed) torch."""
    from autograph.runtime.ir.primitives import PRIMITIVES
    ours = ("autograph.runtime.numpy.elementwise", "autograph.runtime.numpy.reductions",
            "autograph.runtime.numpy.shape_ops", "autograph.runtime.numpy.joins",
            "autograph.runtime.numpy.array_ops", "autograph.runtime.numpy.indexing",
            "autograph.runtime.numpy.linalg")
    named = sorted(name for name, prim in PRIMITIVES.items()
                   if isinstance(prim.kernel, str)
                   and getattr(prim.infer, "__module__", "") in ours)
    assert len(named) > 60
    for device in DEVICES:
        xp = get_device(device).xp
        missing = [k for k in named if not hasattr(xp, PRIMITIVES[k].kernel)]
        assert not missing, f"{device}: the namespace lacks {missing}"


# -- property tests: static shapes agree with NumPy on random shapes and indices ---------------

@settings(max_examples=80, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_side=0, max_side=4),
       st.lists(st.booleans(), min_size=20, max_size=20))
def test_broadcast_rule_with_unknown_dims_agrees_with_numpy(case, hide):
    concrete = case.input_shapes
    flags = iter(hide)
    partial = [tuple(None if next(flags) else d for d in s) for s in concrete]
    out = shape_rules.broadcast(*partial)
    expected = np.broadcast_shapes(*concrete)
    assert len(out) == len(expected)
    assert all(d is None or d == e for d, e in zip(out, expected)), (partial, out, expected)
    assert shape_rules.broadcast(*concrete) == expected


@settings(max_examples=50, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4).flatmap(
    lambda shape: st.tuples(st.just(shape), hnp.basic_indices(shape, allow_newaxis=True))))
def test_basic_indexing_agrees_with_numpy(case):
    shape, key = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    check(lambda t: t[key], x)
    hidden = tuple(None if i % 2 else d for i, d in enumerate(shape))   # some dims unknown
    check(lambda t: t[key], x, shapes=[hidden], executors=MATRIX)
