"""Fused native loops (`jit_compile=True`, runtime.exec.native: fuse, kernel, vector_math): runs of
elementwise ops and last-axis reductions compiled as one loop nest give the interpreter's
results (dtypes and shapes exactly; floats to rounding: sums add in another order, tanh
within 3 ulp) on broadcasting shapes, 0-d and non-contiguous inputs, integer and bool
dtypes, NaN and inf, empty arrays, inside loops; and the plan fuses what it should."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import native  # noqa: E402
from autograph.runtime.exec.native import fuse as native_fuse  # noqa: E402


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def run_both(fn, *args):
    """(native result, interpreter result, generated source) of `fn(*args)`."""
    jit = ag.function(fn, jit_compile=True)
    got = jit(*args)
    want = ag.function(fn)(*args)
    graph = jit.get_concrete_function(*args)._graph_to_run()
    return got, want, native.source_of(graph)


def assert_close(got, want, rtol=1e-12, atol=1e-13):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w, rtol, atol)
        return
    assert type(got) is type(want), (type(got), type(want))
    assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        assert np.array_equal(np.isnan(got), np.isnan(want))
    else:
        assert np.array_equal(got, want)


def layer(x, w, b):
    y = x @ w + b
    mean = np.mean(y, axis=-1, keepdims=True)
    var = np.mean((y - mean) * (y - mean), axis=-1, keepdims=True)
    y = (y - mean) / np.sqrt(var + 1e-5)
    g = 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
    return np.maximum(g, 0.0) + np.tanh(y) + x


def test_layer_norm_and_activations_are_one_kernel():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((8, 32)), rng.standard_normal((32, 32)), rng.standard_normal(32)
    got, want, source = run_both(layer, x, w, b)
    assert_close(got, want)
    # one kernel (one call) after the matmul: every intermediate stays in the loop
    assert source.count("\ndef fused") == 1
    main = source.rsplit("@njit(", 1)[1]         # the main function comes last
    assert main.count("fused(") == 1 and "np.tanh" not in main and "np.sum" not in main \
        and "np_sum" not in main


@pytest.mark.parametrize("shapes", [((3, 1, 4), (5, 1)), ((4,), (3, 4)), ((2, 3, 1), (1, 3, 5)),
                                    ((1,), (6,)), ((7, 1), (1,))])
def test_broadcasting_shapes(shapes):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s) for s in shapes)

    def f(a, b):
        c = a * b + np.exp(a) - b / 3.0
        return c, np.sum(c, axis=-1), np.max(c * 2.0, axis=-1, keepdims=True), np.tanh(c)
    got, want, source = run_both(f, a, b)
    assert_close(got, want)
    assert "def fused" in source


def test_zero_d_tensor_and_python_scalar_operands():
    x = np.linspace(-2, 2, 12).reshape(3, 4)

    def f(x, s):
        return np.tanh(x * s + 1.5) - s, np.mean(x - s, axis=-1)
    got, want, _ = run_both(f, x, np.float64(0.75))
    assert_close(got, want)


def test_non_contiguous_inputs_and_views():
    base = np.random.default_rng(2).standard_normal((6, 10))

    def f(x, y):
        t = np.transpose(x)               # a view inside the graph
        return t * 2.0 + y[0], np.sum(np.tanh(t), axis=-1)
    x = base[:, ::2]                      # strided, (6, 5)
    y = base.T                            # Fortran order, (10, 6)
    assert not x.flags.c_contiguous and not y.flags.c_contiguous
    got, want, source = run_both(f, x, y)
    assert_close(got, want)
    assert "def fused" in source


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_integer_dtypes_wrap_and_divide_as_numpy(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (4, 5), dtype=dtype, endpoint=True)
    y = rng.integers(-3 if info.min < 0 else 0, 4, (5,), dtype=dtype)   # zeros included

    def f(x, y):
        z = x * y + x            # wraps
        q = z // y               # by zero: 0, as NumPy's error model
        r = z % y
        return z, q, r, np.sum(z, axis=-1), np.max(r, axis=-1), np.min(q, axis=-1), z > q
    with np.errstate(all="ignore"):
        got, want, source = run_both(f, x, y)
    assert_close(got, want)
    assert "def fused" in source


def test_bool_ops_where_and_casts():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 6))
    m = rng.random(6) > 0.5

    def f(x, m):
        pos = x > 0.0
        both = np.logical_and(pos, m) | ~m
        y = np.where(both, x, -x)
        return both, y.astype(np.int32), (y * 10.0).astype(np.uint8), np.where(pos, 1.0, 0.0)
    with np.errstate(all="ignore"):
        got, want, _ = run_both(f, x, m)
    assert_close(got, want)


def test_nan_inf_and_signed_zeros():
    x = np.array([[np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324],
                  [-5e-324, 1e-300, 19.0, 22.0, -44.0, 710.0],
                  [1.0, 2.0, np.nan, 3.0, -1.0, -2.0]])

    def f(x):
        return np.tanh(x), np.max(x, axis=-1), np.min(x, axis=-1), np.sum(x, axis=-1), x * 0.0
    got, want, _ = run_both(f, x)
    np.testing.assert_array_max_ulp(got[0], want[0], maxulp=3)     # NaN where NumPy's
    assert_close(got[1:], want[1:], rtol=0, atol=0)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0]))
    assert np.array_equal(np.signbit(got[4]), np.signbit(want[4]))


def test_tanh_within_3_ulp_of_numpy():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(4000) * s for s in (1e-9, 1e-3, 0.1, 1, 4, 12, 30)])
    got, _, _ = run_both(lambda x: np.tanh(x), x)
    want = np.tanh(x)
    np.testing.assert_array_max_ulp(got, want, maxulp=3)
    assert np.mean(got == want) > 0.6


def test_float32_and_empty_shapes():
    x = np.random.default_rng(6).standard_normal((4, 16)).astype(np.float32)

    def f(x):
        m = np.mean(x, axis=-1, keepdims=True)
        return np.tanh(x - m) * np.float32(2), np.sum(x * x, axis=-1)
    got, want, _ = run_both(f, x)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    for shape in ((0, 4), (3, 0)):
        e = np.zeros(shape)

        def g(e):
            return np.mean(e + 1.0, axis=-1), np.tanh(e) * 2.0, np.sum(e, axis=-1, keepdims=True)
        with np.errstate(all="ignore"):
            got, want, _ = run_both(g, e)
        assert_close(got, want)


def test_fused_loops_inside_a_while_loop():
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, 8)), rng.standard_normal((8, 8)) * 0.3

    def rnn(x, w, n):
        h = x
        i = 0
        while i < n:
            h = np.tanh(h @ w + x) * 0.9 + 0.1 * h
            h = h - np.mean(h, axis=-1, keepdims=True)
            i += 1
        return h
    got, want, source = run_both(rnn, x, w, np.int64(5))
    assert_close(got, want, rtol=1e-11, atol=1e-12)
    assert "def fused" in source


def test_plan_splits_at_unfusible_ops_and_keeps_order():
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal((6, 6))

    def f(x, w):
        a = np.tanh(x) + 1.0
        b = a @ w                          # not fused: splits the run
        c = np.sum(b * a, axis=-1)         # row values (no keepdims) end a kernel...
        return c * 2.0, np.exp(b)          # c * 2.0 (another shape) starts a new one, exp too
    jit = ag.function(f, jit_compile=True)
    graph = jit.get_concrete_function(x, w)._graph_to_run()
    kernels, members = native_fuse.plan(graph)
    shapes = sorted(k.shape for k in kernels.values())
    assert shapes == [(4,), (4, 6), (4, 6), (4, 6)]
    assert all(id(n) in members for k in kernels.values() for n in k.members)
    assert_close(jit(x, w), ag.function(f)(x, w))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_sums_add_in_numpys_pairwise_order(dtype):
    rng = np.random.default_rng(9)
    for n in (3, 8, 37, 128, 300):
        x = (rng.standard_normal((3, n)) * 10.0 ** rng.uniform(-4, 4, (3, n))).astype(dtype)

        def f(x):
            y = x * dtype(1.5)
            return np.sum(y, axis=-1), np.mean(y, axis=-1, keepdims=True)
        got, want, source = run_both(f, x)
        assert_close(got, want, rtol=0, atol=0)      # bitwise: the same order of additions
        assert ("ag_pairwise_sum_" in source) == (n > 128)   # else the sums are inline


def test_kernel_lines_name_the_node_that_made_them():
    """A Numba error on a kernel line names that node (the user's line), as in the body."""
    from autograph.runtime.exec.native.lower import Lowering

    def f(x, b):
        y = x * 2.0 + b
        return np.tanh(y - np.mean(y, axis=-1, keepdims=True)), np.sum(x * x, axis=-1)
    x, b = np.ones((3, 200)), np.ones(200)
    graph = ag.function(f, jit_compile=True).get_concrete_function(x, b)._graph_to_run()
    low = Lowering(graph, "native_f")
    modules = [(low.build(), low.made_by)] + [(m.text, m.made_by) for m, _ in low.kernels]
    owner = {}
    for text, made_by in modules:       # the function, then each kernel's own module
        lines = text.split("\n")[:-1]
        assert len(lines) == len(made_by)
        owner.update((line.strip(), made) for line, made in zip(lines, made_by))
    tanh_line = next(line for line in owner if line.startswith("v") and "_y = 2.0 * abs(" in line)
    assert owner[tanh_line][1] == "tanh" and "test_native_fuse.py" in str(owner[tanh_line][2])
    assert {made[1] for line, made in owner.items()
            if made and "ag_pairwise_sum_float64(" in line and "=" in line} == {"mean", "sum"}


def test_the_same_kernel_is_one_module_shared_by_programs_and_calls():
    """A fused loop is a module of its own named by its text (kernel_modules.py): two
    identical runs in one function call one kernel, and another program with the same run
    imports the same module (a machine compiles it once), with the interpreter's results."""
    from autograph.runtime.exec.native.lower import Lowering

    def twice(x, y):
        a = np.tanh(x * 2.0 + 1.0)
        b = a @ y                       # (a matmul ends the first run)
        return np.tanh(b * 2.0 + 1.0) @ y

    def once(z):
        return np.tanh(z * 2.0 + 1.0) @ z.T

    x, y = np.linspace(-1, 1, 12).reshape(3, 4), np.eye(4) * 0.5
    got, want, source = run_both(twice, x, y)
    assert_close(got, want, rtol=4e-16 * 8, atol=1e-15)
    graph = ag.function(twice, jit_compile=True).get_concrete_function(x, y)._graph_to_run()
    low = Lowering(graph, "native_twice")
    main = low.build()
    assert len(low.kernels) == 1 and main.count(f"{low.kernels[0][1]}(") == 2, main
    assert source.count("\ndef fused(") == 1
    other = Lowering(ag.function(once, jit_compile=True).get_concrete_function(
        np.ones((3, 4)))._graph_to_run(), "native_once")
    other.build()
    assert low.kernels[0][0].module_name in {m.module_name for m, _ in other.kernels}
