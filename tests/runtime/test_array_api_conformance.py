"""The staged array API namespace against the standard's semantics (issue 36).

Ported from the approach of data-apis/array-api-tests (written here as our own tests):
for each function the namespace exports, hypothesis draws arrays; the result's dtype must
be the one the standard prescribes (type promotion), its shape the standard's (broadcasting,
axis and keepdims rules), and its values those of a reference implementation: Python's
`math` element by element for the elementwise functions (array-api-tests'
`unary/binary_assert_against_refimpl`), plain-Python reductions for statistics, the
defining identities for linear algebra (L @ L.T == A, Q @ R == A, ...). Every property runs
in two modes: traced (inside ag.function, through `x.__array_namespace__()`) and eager
(the same namespace called on NumPy arrays outside any trace).

Examples are few per function (settings below): the suite stays fast on 2 cores.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autograph as ag
from autograph.runtime.numpy import array_api

xp_ = array_api.namespace
FAST = settings(max_examples=6, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
MODES = ("traced", "eager")


def run(mode, fn, *arrays):
    """fn(xp, *arrays) traced (xp: the tensors' namespace) or eagerly (the namespace on
    NumPy arrays); the result as NumPy values (tuples/lists item by item)."""
    if mode == "eager":
        out = fn(xp_, *arrays)
    else:
        out = ag.function(lambda *a: fn(a[0].__array_namespace__(), *a))(*arrays)
    return _numpy(out)


def _numpy(out):
    if isinstance(out, (tuple, list)):
        return [_numpy(o) for o in out]
    return np.asarray(out)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def floats(shape=None, dtype=np.float64, lo=-10.0, hi=10.0):
    return hnp.arrays(dtype, shape if shape is not None else shapes(),
                      elements=st.floats(lo, hi, width=np.dtype(dtype).itemsize * 8))


def ints(shape=None, dtype=np.int64, lo=-20, hi=20):
    return hnp.arrays(dtype, shape if shape is not None else shapes(),
                      elements=st.integers(lo, hi))


# -- elementwise: against Python's math, element by element ----------------------------------

def _close(got, want, dtype):
    if isinstance(want, bool) or dtype.kind in "biu":
        return got == want
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    tol = 1e-6 if dtype == np.float32 else 1e-12
    return abs(got - want) <= tol * max(1.0, abs(want))


UNARY = {   # name: (reference, strategy, strict dtype rule)
    "abs": (abs, floats()), "acos": (math.acos, floats(lo=-1, hi=1)),
    "acosh": (math.acosh, floats(lo=1, hi=10)), "asin": (math.asin, floats(lo=-1, hi=1)),
    "asinh": (math.asinh, floats()), "atan": (math.atan, floats()),
    "atanh": (math.atanh, floats(lo=-0.99, hi=0.99)), "ceil": (math.ceil, floats()),
    "cos": (math.cos, floats()), "cosh": (math.cosh, floats()), "exp": (math.exp, floats()),
    "expm1": (math.expm1, floats()), "floor": (math.floor, floats()),
    "log": (math.log, floats(lo=0.01, hi=10)), "log1p": (math.log1p, floats(lo=-0.9, hi=10)),
    "log2": (math.log2, floats(lo=0.01, hi=10)), "log10": (math.log10, floats(lo=0.01, hi=10)),
    "negative": (lambda v: -v, floats()), "positive": (lambda v: v, floats()),
    "reciprocal": (lambda v: 1.0 / v, floats(lo=0.5, hi=10)),
    "round": (lambda v: float(round(v)), floats()),
    "sign": (lambda v: float((v > 0) - (v < 0)), floats()),
    "signbit": (lambda v: math.copysign(1.0, v) < 0, floats()),
    "sin": (math.sin, floats()), "sinh": (math.sinh, floats()),
    "sqrt": (math.sqrt, floats(lo=0, hi=10)), "square": (lambda v: v * v, floats()),
    "tan": (math.tan, floats(lo=-1.5, hi=1.5)), "tanh": (math.tanh, floats()),
    "trunc": (math.trunc, floats()), "isfinite": (math.isfinite, floats()),
    "isinf": (math.isinf, floats()), "isnan": (math.isnan, floats()),
    "logical_not": (lambda v: not v, hnp.arrays(np.bool_, shapes())),
    "bitwise_invert": (lambda v: ~v, ints()),
    "abs_int": (abs, ints()), "ceil_int": (lambda v: v, ints()),
    "real": (lambda v: v, floats()), "conj": (lambda v: v, floats()),
}
_BOOL_OUT = {"isfinite", "isinf", "isnan", "signbit", "logical_not"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_elementwise(name, mode):
    ref, strategy = UNARY[name]
    func = name.split("_int")[0]

    @FAST
    @given(x=strategy)
    def check(x):
        out = run(mode, lambda xp, a: getattr(xp, func)(a), x)
        want_dtype = np.dtype(bool) if name in _BOOL_OUT else x.dtype
        assert out.dtype == want_dtype   # the standard: same dtype as the input
        assert out.shape == x.shape
        for idx in np.ndindex(x.shape):
            v = x[idx].item()
            assert _close(out[idx].item(), ref(v), out.dtype), (name, v, out[idx])
    check()


def _pair(strategy_a, strategy_b=None):
    """Two arrays of broadcast-compatible shapes."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3).flatmap(
        lambda s: st.tuples(strategy_a(s.input_shapes[0]),
                            (strategy_b or strategy_a)(s.input_shapes[1])))


def _f(lo=-10.0, hi=10.0):
    return lambda shape: floats(shape, lo=lo, hi=hi)


def _i(lo=-20, hi=20):
    return lambda shape: ints(shape, lo=lo, hi=hi)


BINARY = {   # name: (reference, pair strategy)
    "add": (lambda a, b: a + b, _pair(_f())), "subtract": (lambda a, b: a - b, _pair(_f())),
    "multiply": (lambda a, b: a * b, _pair(_f())),
    "divide": (lambda a, b: a / b, _pair(_f(), _f(0.5, 10))),
    "floor_divide": (lambda a, b: a // b, _pair(_i(), _i(1, 9))),
    "remainder": (lambda a, b: a % b, _pair(_i(), _i(1, 9))),
    "pow": (lambda a, b: a ** b, _pair(_f(0.5, 3), _f(-2, 2))),
    "atan2": (math.atan2, _pair(_f())), "hypot": (math.hypot, _pair(_f())),
    "copysign": (math.copysign, _pair(_f())),
    "logaddexp": (lambda a, b: max(a, b) + math.log1p(math.exp(-abs(a - b))), _pair(_f())),
    "maximum": (max, _pair(_f())), "minimum": (min, _pair(_f())),
    "equal": (lambda a, b: a == b, _pair(_i(-2, 2))),
    "not_equal": (lambda a, b: a != b, _pair(_i(-2, 2))),
    "less": (lambda a, b: a < b, _pair(_i(-2, 2))),
    "less_equal": (lambda a, b: a <= b, _pair(_i(-2, 2))),
    "greater": (lambda a, b: a > b, _pair(_i(-2, 2))),
    "greater_equal": (lambda a, b: a >= b, _pair(_i(-2, 2))),
    "bitwise_and": (lambda a, b: a & b, _pair(_i())),
    "bitwise_or": (lambda a, b: a | b, _pair(_i())),
    "bitwise_xor": (lambda a, b: a ^ b, _pair(_i())),
    "bitwise_left_shift": (lambda a, b: a << b, _pair(_i(), _i(0, 5))),
    "bitwise_right_shift": (lambda a, b: a >> b, _pair(_i(), _i(0, 5))),
    "logical_and": (lambda a, b: a and b,
                    _pair(lambda s: hnp.arrays(np.bool_, s))),
    "logical_or": (lambda a, b: a or b, _pair(lambda s: hnp.arrays(np.bool_, s))),
    "logical_xor": (lambda a, b: a != b, _pair(lambda s: hnp.arrays(np.bool_, s))),
    "nextafter": (math.nextafter, _pair(_f())),
}
_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_elementwise(name, mode):
    ref, strategy = BINARY[name]

    @FAST
    @given(pair=strategy)
    def check(pair):
        a, b = pair
        out = run(mode, lambda xp, u, v: getattr(xp, name)(u, v), a, b)
        want_dtype = np.dtype(bool) if name in _COMPARE else np.result_type(a, b)
        assert out.dtype == want_dtype
        assert out.shape == np.broadcast_shapes(a.shape, b.shape)
        ab, bb = np.broadcast_arrays(a, b)
        for idx in np.ndindex(out.shape):
            want = ref(ab[idx].item(), bb[idx].item())
            assert _close(out[idx].item(), want, out.dtype), (name, ab[idx], bb[idx])
    check()


@pytest.mark.parametrize("mode", MODES)
def test_binary_with_python_scalars_keeps_the_array_dtype(mode):
    x = np.arange(4, dtype=np.float32)
    for name in ("add", "multiply", "subtract", "divide", "pow", "maximum"):
        out = run(mode, lambda xp, a: getattr(xp, name)(a, 2.0), x)
        assert out.dtype == np.float32, name   # a Python scalar is weak (the standard)


@pytest.mark.parametrize("mode", MODES)
def test_clip_and_where(mode):
    @FAST
    @given(x=floats(), lo=st.floats(-5, 0), hi=st.floats(0, 5))
    def check(x, lo, hi):
        out = run(mode, lambda xp, a: xp.clip(a, min=lo, max=hi), x)
        assert out.dtype == x.dtype and out.shape == x.shape
        assert np.all((out >= lo) & (out <= hi))
        assert np.all((out == x) | (out == lo) | (out == hi))
        w = run(mode, lambda xp, a: xp.where(a > 0, a, 0.0), x)
        assert w.dtype == x.dtype and np.all(w == np.maximum(x, 0))
    check()


# -- statistics: shapes by axis/keepdims, values against Python reductions -------------------

def _axis(ndim):
    return st.one_of(st.none(), st.integers(-ndim, ndim - 1) if ndim else st.none())


_STATS = {"sum": math.fsum, "prod": math.prod, "max": max, "min": min,
          "mean": lambda v: math.fsum(v) / len(v)}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(_STATS) + ["std", "var"])
def test_statistics(name, mode):
    @FAST
    @given(data=st.data())
    def check(data):
        x = data.draw(floats(shapes(min_dims=1), lo=-3, hi=3))
        axis = data.draw(_axis(x.ndim))
        keepdims = data.draw(st.booleans())
        kw = {"axis": axis, "keepdims": keepdims}
        if name in ("std", "var"):
            kw["correction"] = data.draw(st.sampled_from([0, 1]))
            assume(x.size > kw["correction"] if axis is None else
                   x.shape[axis] > kw["correction"])
        out = run(mode, lambda xp, a: getattr(xp, name)(a, **kw), x)
        axes = tuple(range(x.ndim)) if axis is None else (axis % x.ndim,)
        want_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        assert out.shape == want_shape and out.dtype == x.dtype
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
        flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,))
        res = out.reshape(flat.shape[:-1])
        for idx in np.ndindex(flat.shape[:-1]):
            v = [float(e) for e in flat[idx]]
            if name in ("std", "var"):
                m = math.fsum(v) / len(v)
                want = math.fsum((e - m) ** 2 for e in v) / (len(v) - kw["correction"])
                want = math.sqrt(want) if name == "std" else want
            else:
                want = _STATS[name](v)
            assert _close(res[idx].item(), want, np.dtype(np.float32)), (name, v)
    check()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(name, mode):
    @FAST
    @given(x=floats(shapes(min_dims=1, max_dims=2), lo=-2, hi=2), data=st.data())
    def check(x, data):
        axis = data.draw(st.integers(0, x.ndim - 1))
        initial = data.draw(st.booleans())
        out = run(mode, lambda xp, a: getattr(xp, name)(a, axis=axis, include_initial=initial),
                  x)
        want_len = x.shape[axis] + (1 if initial else 0)
        assert out.shape[axis] == want_len and out.dtype == x.dtype
        op = (lambda a, b: a + b) if name == "cumulative_sum" else (lambda a, b: a * b)
        lines = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
        gots = np.moveaxis(out, axis, -1).reshape(-1, want_len)
        for line, got in zip(lines, gots):
            acc = 0.0 if name == "cumulative_sum" else 1.0
            want = [acc] if initial else []
            for v in line:
                acc = op(acc, float(v))
                want.append(acc)
            assert all(_close(float(g), w, np.dtype(np.float32)) for g, w in zip(got, want))
    check()


# -- searching, sorting ----------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_argmax_argmin(mode):
    @FAST
    @given(x=ints(shapes(min_dims=1, max_dims=1), lo=-3, hi=3))
    def check(x):
        hi = run(mode, lambda xp, a: xp.argmax(a), x)
        lo = run(mode, lambda xp, a: xp.argmin(a), x)
        v = x.tolist()
        assert hi.dtype == np.int64 and int(hi) == v.index(max(v))   # the first maximum
        assert int(lo) == v.index(min(v))
    check()


@pytest.mark.parametrize("mode", MODES)
def test_sort_and_argsort(mode):
    @FAST
    @given(x=ints(shapes(min_dims=1, max_dims=2), lo=-3, hi=3), descending=st.booleans())
    def check(x, descending):
        s = run(mode, lambda xp, a: xp.sort(a, axis=-1, descending=descending), x)
        i = run(mode, lambda xp, a: xp.argsort(a, axis=-1, descending=descending,
                                               stable=True), x)
        assert s.dtype == x.dtype and i.dtype == np.int64 and s.shape == i.shape == x.shape
        for idx in np.ndindex(x.shape[:-1]):
            row = x[idx].tolist()
            assert s[idx].tolist() == sorted(row, reverse=descending)
            # stable: equal keys keep their order (Python's sort is stable too)
            order = sorted(range(len(row)), key=lambda k: -row[k] if descending else row[k])
            assert i[idx].tolist() == order
    check()


@pytest.mark.parametrize("mode", MODES)
def test_searchsorted_and_count_nonzero(mode):
    import bisect

    @FAST
    @given(a=ints(shapes(min_dims=1, max_dims=1)), v=ints(shapes(min_dims=1, max_dims=1)),
           side=st.sampled_from(["left", "right"]))
    def check(a, v, side):
        a = np.sort(a)
        out = run(mode, lambda xp, s, u: xp.searchsorted(s, u, side=side), a, v)
        f = bisect.bisect_left if side == "left" else bisect.bisect_right
        assert out.tolist() == [f(a.tolist(), e) for e in v.tolist()]
        c = run(mode, lambda xp, s: xp.count_nonzero(s), v)
        assert int(c) == sum(1 for e in v.tolist() if e)
    check()


# -- manipulation: shapes and where each element goes ---------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_manipulation(mode):
    @FAST
    @given(x=floats(shapes(min_dims=2, max_dims=3)), data=st.data())
    def check(x, data):
        n = x.ndim
        axes = tuple(data.draw(st.permutations(range(n))))
        p = run(mode, lambda xp, a: xp.permute_dims(a, axes), x)
        assert p.shape == tuple(x.shape[k] for k in axes)
        for idx in np.ndindex(x.shape):
            assert p[tuple(idx[k] for k in axes)] == x[idx]
        ax = data.draw(st.integers(0, n - 1))
        f = run(mode, lambda xp, a: xp.flip(a, axis=ax), x)
        r = run(mode, lambda xp, a: xp.roll(a, 1, axis=ax), x)
        for idx in np.ndindex(x.shape):
            j = list(idx)
            j[ax] = x.shape[ax] - 1 - idx[ax]
            assert f[tuple(j)] == x[idx]
            j[ax] = (idx[ax] + 1) % x.shape[ax]
            assert r[tuple(j)] == x[idx]
        flat = run(mode, lambda xp, a: xp.reshape(a, (-1,)), x)
        assert flat.tolist() == [x[idx] for idx in np.ndindex(x.shape)]   # C order
        e = run(mode, lambda xp, a: xp.expand_dims(a, axis=ax), x)
        assert e.shape == x.shape[:ax] + (1,) + x.shape[ax:]
        sq = run(mode, lambda xp, a: xp.squeeze(xp.expand_dims(a, axis=0), axis=0), x)
        assert sq.shape == x.shape
        c = run(mode, lambda xp, a: xp.concat([a, a], axis=ax), x)
        assert c.shape[ax] == 2 * x.shape[ax]
        s = run(mode, lambda xp, a: xp.stack([a, a], axis=ax), x)
        assert s.shape == x.shape[:ax] + (2,) + x.shape[ax:]
        u = run(mode, lambda xp, a: xp.unstack(a, axis=ax), x)
        assert len(u) == x.shape[ax] and all(part.shape == x.shape[:ax] + x.shape[ax + 1:]
                                             for part in u)
        t = run(mode, lambda xp, a: xp.tile(a, (2,) + (1,) * (n - 1)), x)
        assert t.shape == (2 * x.shape[0],) + x.shape[1:]
        rp = run(mode, lambda xp, a: xp.repeat(a, 2, axis=ax), x)
        assert rp.shape[ax] == 2 * x.shape[ax]
        m = run(mode, lambda xp, a: xp.moveaxis(a, 0, -1), x)
        assert m.shape == x.shape[1:] + x.shape[:1]
        b = run(mode, lambda xp, a: xp.broadcast_to(a, (2,) + x.shape), x)
        assert b.shape == (2,) + x.shape and np.all(b[1] == x)
    check()


@pytest.mark.parametrize("mode", MODES)
def test_take_and_take_along_axis(mode):
    @FAST
    @given(x=floats(shapes(min_dims=2, max_dims=2)), data=st.data())
    def check(x, data):
        idx = np.array(data.draw(st.lists(st.integers(0, x.shape[1] - 1), min_size=1,
                                          max_size=4)))
        t = run(mode, lambda xp, a, i: xp.take(a, i, axis=1), x, idx)
        assert t.shape == (x.shape[0], len(idx))
        assert all(t[r, k] == x[r, idx[k]] for r in range(x.shape[0]) for k in range(len(idx)))
        order = np.argsort(x, axis=1)
        s = run(mode, lambda xp, a, i: xp.take_along_axis(a, i, axis=1), x, order)
        assert np.all(np.diff(s, axis=1) >= 0)
    check()


# -- creation, data types, inspection --------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_creation_functions(mode):
    x = np.ones((2, 3))
    out = run(mode, lambda xp, a: (xp.arange(1, 7, 2, dtype=xp.int32), xp.zeros((2, 2)),
                                   xp.ones(3, dtype=xp.float32), xp.full((2,), 7),
                                   xp.eye(3, k=1), xp.linspace(0.0, 1.0, 5),
                                   xp.zeros_like(a), xp.full_like(a, 2.5),
                                   xp.tril(a), xp.triu(a, k=1), xp.empty((2,)),
                                   xp.asarray([1, 2], dtype=xp.int16)), x)
    ar, z, o, f, e, ls, zl, fl, tl, tu, em, aa = out
    assert ar.dtype == np.int32 and ar.tolist() == [1, 3, 5]
    assert z.dtype == np.float64 and z.shape == (2, 2) and not z.any()
    assert o.dtype == np.float32 and o.tolist() == [1, 1, 1]
    assert f.dtype == np.int64 and f.tolist() == [7, 7]   # the default integer dtype
    assert e.tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert ls.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert zl.shape == fl.shape == x.shape and np.all(fl == 2.5)
    assert tl.tolist() == [[1, 0, 0], [1, 1, 0]] and tu.tolist() == [[0, 1, 1], [0, 0, 1]]
    assert em.shape == (2,) and aa.dtype == np.int16


def test_created_arrays_are_tensors_while_tracing():
    # a namespace's functions return its own arrays: a NumPy constant mixed in would make
    # array_namespace(x, y) see two libraries
    seen = []

    @ag.function
    def f(x):
        xp = x.__array_namespace__()
        z, r = xp.zeros(3), xp.arange(3)
        seen.extend([type(z).__name__, type(r).__name__, type(xp.asarray([1.0, 2.0])).__name__])
        return x + z
    f(np.ones(3))
    assert seen == ["Tensor", "Tensor", "Tensor"]


@pytest.mark.parametrize("mode", MODES)
def test_data_type_functions(mode):
    x = np.arange(4, dtype=np.int32)
    out = run(mode, lambda xp, a: xp.astype(a, xp.float32), x)
    assert out.dtype == np.float32 and out.tolist() == [0, 1, 2, 3]
    assert xp_.result_type(xp_.int8, xp_.float32) == np.float32
    assert xp_.can_cast(xp_.int8, xp_.int64) and not xp_.can_cast(xp_.float64, xp_.int8)
    assert xp_.isdtype(xp_.float32, "real floating") and not xp_.isdtype(xp_.int8, "bool")
    assert xp_.finfo(xp_.float32).eps == np.finfo(np.float32).eps
    assert xp_.iinfo(xp_.int16).max == 32767


def test_inspection():
    info = xp_.__array_namespace_info__()
    assert info.capabilities()["data-dependent shapes"] is False
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes()["real floating"] == np.float64
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                "uint16", "uint32", "uint64"}


# -- linear algebra and fft: defining identities ---------------------------------------------

def _spd(seed, n=3):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 1])
def test_linalg_identities(mode, seed):
    a = _spd(seed)
    b = np.random.default_rng(seed + 10).standard_normal(3)
    L, inv, x, (q, r), (u, s, vt), (w, v), det, mn, vn, tr = run(
        mode, lambda xp, m, y: (xp.linalg.cholesky(m), xp.linalg.inv(m),
                                xp.linalg.solve(m, y[:, None])[:, 0], xp.linalg.qr(m),
                                xp.linalg.svd(m), xp.linalg.eigh(m), xp.linalg.det(m),
                                xp.linalg.matrix_norm(m), xp.linalg.vector_norm(y, ord=1),
                                xp.linalg.trace(m)), a, b)
    assert np.allclose(L @ L.T, a) and np.allclose(np.triu(L, 1), 0)
    assert np.allclose(inv @ a, np.eye(3))
    assert np.allclose(a @ x, b)
    assert np.allclose(q @ r, a) and np.allclose(q.T @ q, np.eye(3))
    assert np.allclose((u * s) @ vt, a)
    assert np.allclose(a @ v, v * w)
    assert math.isclose(float(det), float(np.prod(w)), rel_tol=1e-9)
    assert math.isclose(float(mn), math.sqrt(float(np.sum(a * a))), rel_tol=1e-12)
    assert math.isclose(float(vn), sum(abs(e) for e in b.tolist()), rel_tol=1e-12)
    assert math.isclose(float(tr), sum(a[i, i] for i in range(3)), rel_tol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_matmul_vecdot_tensordot(mode):
    @FAST
    @given(a=floats((2, 3), lo=-2, hi=2), b=floats((3, 4), lo=-2, hi=2))
    def check(a, b):
        m, d, t = run(mode, lambda xp, u, v: (xp.matmul(u, v), xp.vecdot(u, u, axis=-1),
                                              xp.tensordot(u, v, axes=1)), a, b)
        for i in range(2):
            assert math.isclose(float(d[i]), math.fsum(e * e for e in a[i].tolist()),
                                rel_tol=1e-12, abs_tol=1e-12)
            for j in range(4):
                want = math.fsum(a[i, k] * b[k, j] for k in range(3))
                assert math.isclose(float(m[i, j]), want, rel_tol=1e-9, abs_tol=1e-12)
        assert np.array_equal(m, t)
    check()


@pytest.mark.parametrize("mode", MODES)
def test_fft_round_trips(mode):
    @FAST
    @given(x=floats(shapes(min_dims=1, max_dims=2, min_side=2, max_side=6)))
    def check(x):
        back, rback, shifted, freq = run(
            mode, lambda xp, a: (xp.fft.ifft(xp.fft.fft(a)), xp.fft.irfft(
                xp.fft.rfft(a), n=a.shape[-1]), xp.fft.ifftshift(xp.fft.fftshift(a)),
                xp.fft.fftfreq(4, d=0.5)), x)
        assert np.allclose(back.real, x) and np.allclose(back.imag, 0)
        assert np.allclose(rback, x) and np.array_equal(shifted, x)
        assert freq.tolist() == [0.0, 0.5, -1.0, -0.5]
        n = x.shape[-1]
        spec = run(mode, lambda xp, a: xp.fft.fft(a), x)
        k = 1 % n
        want = sum(complex(x[..., j].ravel()[0]) * complex(math.cos(-2 * math.pi * k * j / n),
                   math.sin(-2 * math.pi * k * j / n)) for j in range(n))
        assert abs(complex(spec[..., k].ravel()[0]) - want) < 1e-9 * max(1, abs(want))
    check()


@pytest.mark.parametrize("mode", MODES)
def test_utility_and_sets(mode):
    x = np.array([[0, 2, 2], [3, 0, 2]])
    al, an, d, uv, uc = run(mode, lambda xp, a: (
        xp.all(a, axis=1), xp.any(a, axis=0), xp.diff(a, axis=1, prepend=a[:, :1]),
        xp.unique_values(a), xp.unique_counts(a)), x)
    assert al.tolist() == [False, False] and an.tolist() == [True, True, True]
    assert d.tolist() == [[0, 2, 0], [0, -3, 2]]
    assert sorted(uv.tolist()) == [0, 2, 3]   # (the standard leaves the order unspecified)
    assert dict(zip(uc[0].tolist(), uc[1].tolist())) == {0: 2, 2: 3, 3: 1}


def test_every_name_of_the_standard_is_exported():
    strict = pytest.importorskip("array_api_strict")
    before = strict.get_array_api_strict_flags()["api_version"]
    strict.set_array_api_strict_flags(api_version="2024.12")
    try:   # (the flag is global: the strict device's other tests use the default version)
        names = list(strict.__all__)
    finally:
        strict.set_array_api_strict_flags(api_version=before)
    own = {"ArrayAPIStrictFlags", "Device", "get_array_api_strict_flags",
           "reset_array_api_strict_flags", "set_array_api_strict_flags", "__version__"}
    missing = sorted(n for n in names if n not in own and not hasattr(xp_, n))
    assert not missing
    assert not [n for n in strict.linalg.__all__ if not hasattr(xp_.linalg, n)]
    assert not [n for n in strict.fft.__all__ if not hasattr(xp_.fft, n)]
    assert xp_.__array_api_version__ == "2024.12"


@pytest.mark.parametrize("mode", MODES)
def test_the_rest_of_the_namespace(mode):
    """The functions the tests above do not reach, each against its defining identity."""
    a = _spd(3)
    v = np.array([1.0, -2.0, 0.5])
    c = np.array([1 + 2j, -0.5j, 3.0])
    out = run(mode, lambda xp, m, y, z: (
        xp.linalg.pinv(m), xp.linalg.matrix_rank(m), xp.linalg.matrix_power(m, 3),
        xp.linalg.slogdet(m), xp.linalg.svdvals(m), xp.linalg.eigvalsh(m),
        xp.linalg.outer(y, y), xp.linalg.cross(y, y[::-1]), xp.linalg.diagonal(m, offset=1),
        xp.linalg.tensordot(m, y, axes=1), xp.linalg.matmul(m, m),
        xp.linalg.vecdot(y, y), xp.linalg.matrix_transpose(m), xp.matrix_transpose(m),
        xp.meshgrid(y, y[:2], indexing="xy"), xp.broadcast_arrays(y, m),
        xp.ones_like(m), xp.empty_like(y), xp.imag(z), xp.conj(z), xp.real(z),
        xp.nonzero(y > 0), xp.unique_inverse(xp.asarray([3, 1, 3])),
        xp.unique_all(xp.asarray([3, 1, 3])), xp.isin(y, xp.asarray([0.5, 7.0])),
        xp.fft.fftn(m), xp.fft.ifftn(m), xp.fft.rfftn(m), xp.fft.hfft(z),
        xp.fft.ihfft(y), xp.fft.rfftfreq(4),
        xp.fft.irfftn(xp.fft.rfftn(m), s=m.shape, axes=(0, 1))),
        a, v, c)
    (pinv, rank, p3, (sign, logdet), sv, ev, outer, cross, diag, td, mm, vd, mt, mt2,
     (g1, g2), (b1, b2), ol, el, im, cj, re, (nz,), (uv, inv), ua, isin, fn, ifn, rfn, hf,
     ihf, rff, back) = out
    assert np.allclose(pinv @ a, np.eye(3)) and int(rank) == 3
    assert np.allclose(p3, a @ a @ a)
    assert float(sign) == 1.0 and math.isclose(float(logdet), math.log(np.linalg.det(a)))
    assert np.allclose(np.sort(sv), np.sort(ev)) and np.all(np.diff(ev) >= 0)
    assert outer.tolist() == [[x * y for y in v.tolist()] for x in v.tolist()]
    assert np.allclose(cross, np.cross(v, v[::-1])) and abs(float(cross @ v)) < 1e-12
    assert diag.tolist() == [a[0, 1], a[1, 2]] and np.allclose(td, a @ v)
    assert np.allclose(mm, a @ a) and math.isclose(float(vd), float(v @ v))
    assert np.array_equal(mt, a.T) and np.array_equal(mt2, a.T)
    assert g1.shape == g2.shape == (2, 3) and np.array_equal(g1[1], v)
    assert b1.shape == b2.shape == (3, 3) and np.array_equal(b1[2], v)
    assert np.all(ol == 1) and el.shape == v.shape
    assert im.tolist() == [2.0, -0.5, 0.0] and cj.tolist() == [1 - 2j, 0.5j, 3.0]
    assert re.tolist() == [1.0, 0.0, 3.0] and nz.tolist() == [0, 2]
    assert uv[inv].tolist() == [3, 1, 3]
    assert ua[0][ua[2]].tolist() == [3, 1, 3] and sorted(ua[3].tolist()) == [1, 2]
    assert isin.tolist() == [False, False, True]
    assert np.allclose(np.fft.ifftn(fn), a) and np.allclose(np.fft.fftn(ifn), a)
    assert rfn.shape == (3, 2) and np.allclose(back, a)
    assert hf.shape == (4,) and ihf.shape == (2,)
    assert rff.tolist() == [0.0, 0.25, 0.5]


def test_from_dlpack_and_devices_are_explained():
    with pytest.raises(TypeError, match="from_dlpack cannot make a symbolic tensor"):
        xp_.from_dlpack(np.ones(2))
    with pytest.raises(ValueError, match="one device, 'cpu'"):
        ag.function(lambda x: x.__array_namespace__().zeros(2, device="cuda:0"))(np.ones(2))
    assert xp_.broadcast_shapes((2, 1), (3,)) == (2, 3)
