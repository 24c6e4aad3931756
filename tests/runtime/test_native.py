"""`jit_compile=True`: graphs lowered to Numba give the interpreter's results exactly
(values, dtypes, scalar types), refuse what they cannot lower with the operation and the
user's line, keep Variables' effects, and compile once across processes (disk cache)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec.native import jit as native  # noqa: E402
from autograph.runtime.exec.native import NativeLoweringError  # noqa: E402
from tests.runtime.samples import SAMPLES  # noqa: E402
from tests.runtime.tracing import assert_same, capture_stdout  # noqa: E402

REFUSED = {"print_order": "print"}   # sample -> the op named


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    # one disk cache for the module (programs repeat across tests), not the user's
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def same(a, b, ulps=0):
    """Equal values of the same types and dtypes (NaNs equal), through tuples and lists;
    floats within `ulps` units in the last place (Numba's libm transcendental functions
    may round differently from NumPy's by one ulp: docs/native.md)."""
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            same(x, y, ulps) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        if type(a) is not type(b) or a.dtype != b.dtype or np.shape(a) != np.shape(b):
            return False
        if ulps and a.dtype.kind == "f":
            try:
                np.testing.assert_array_max_ulp(a, b, maxulp=ulps)
            except AssertionError:
                return False
            return True
        return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_samples_native_match_reference_and_interpreter(sample):
    f = ag.function(sample.fn, jit_compile=True)
    if sample.name in REFUSED:
        with pytest.raises(NativeLoweringError) as info:
            f(*sample.args)
        message = str(info.value)
        assert f"`{REFUSED[sample.name]}`" in message and "samples.py:" in message
        return
    want, _ = sample.reference(*sample.args)
    interpreted = _scalars(ag.function(sample.fn, jit_compile=False)(*sample.args))
    for _ in range(2):
        got, printed = capture_stdout(f, *sample.args)
        assert_same(got, want)
        assert same(got, interpreted, ulps=4)
        assert printed == ""


def _scalars(value):
    """0-d arrays (a few Python-executor kernels make them, e.g. `ta.size()`) as the NumPy
    scalars native code returns (docs/native.md: same dtype and value, another type)."""
    if isinstance(value, tuple):
        return tuple(_scalars(v) for v in value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def collatz(n):
    steps = np.int64(0)
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def mixed(x, k, t):
    """int32/float32/bool scalars and arrays through loops, branches, reductions and
    indexing: every result dtype is NumPy's (NEP 50), which the native code must keep."""
    acc = np.float32(0)
    i = np.int32(0)
    total = np.int32(7)
    while i < k:
        if x[i % x.shape[0]] > t:
            acc += x[i % x.shape[0]] * np.float32(0.5)
        else:
            acc -= 1
        total = total * 3 + i     # wraps in int32, as NumPy's does
        i += 1
    y = np.where(x > t, x, -x)
    return acc, total, y.sum(), np.sqrt(np.abs(y)), (y > 0).any(), x[1:3], i // 2


@pytest.mark.parametrize("args", [
    (np.array([1.5, -2.0, 3.25, 0.5], np.float32), np.int32(25), np.float32(0.75)),
    (np.arange(6, dtype=np.float32), np.int32(0), np.float32(-1)),
])
def test_dtypes_match_the_interpreter_exactly(args):
    got = ag.function(mixed, jit_compile=True)(*args)
    want = ag.function(mixed)(*args)
    assert same(got, want), (got, want)


def test_generated_programs_match_the_interpreter():
    """The differential generator's programs (nested loops, branches, break/continue/
    return, lists and arrays): native and interpreted results agree exactly (or both
    raise the same exception type: UnboundLocalError, IndexError), or the native compiler
    refuses with the operation named."""
    from benchmarks.differential import check
    from benchmarks.differential.run import program
    compared = 0
    for index in range(24):
        p = program("native", index)
        fn, _ = check.load(p.source)
        ref, nat = ag.function(fn), ag.function(fn, jit_compile=True)
        for inputs in p.inputs:
            args = check.numpy_args(inputs, p.tensor_args)
            try:
                want = ("value", ref(*args))
            except Exception as exc:   # noqa: BLE001 - the program's own error
                want = ("raises", type(exc))
            try:
                got = ("value", nat(*args))
            except NativeLoweringError as exc:
                assert "cannot compile operation `" in str(exc)
                continue
            except Exception as exc:   # noqa: BLE001 - must be the interpreter's error
                got = ("raises", type(exc))
            assert want[0] == got[0] and (same(got[1], want[1]) if want[0] == "value"
                                          else got[1] is want[1]), (p.source, args, got, want)
            compared += 1
    assert compared >= 40


def test_unlowerable_op_names_the_operation_and_the_line():
    def f(x):
        y = x * 2
        ag.print("y is", y)
        return y

    g = ag.function(f, jit_compile=True)
    with pytest.raises(NativeLoweringError) as info:
        g(np.float64(1.0))
    message = str(info.value)
    assert "`print`" in message and "test_native.py:" in message
    assert 'ag.print("y is", y)' in message
    # jit_compile=None (the default) and False keep the Python executor
    assert ag.function(f)(np.float64(1.0)) == 2.0
    assert ag.function(f, jit_compile=False)(np.float64(1.0)) == 2.0


def test_numba_typing_error_names_the_user_line():
    def f(x):
        return x @ x          # integer matmul: Numba's np.dot takes floats only

    with pytest.raises(NativeLoweringError) as info:
        ag.function(f, jit_compile=True)(np.ones((2, 2), np.int64))
    assert "`matmul`" in str(info.value) and "x @ x" in str(info.value)


def test_typing_error_takes_the_innermost_generated_line():
    """Numba names the failing line first and its callers after it (a fused loop's line,
    then the graph's line calling the loop), and may quote line numbers of its own files:
    only the generated file's lines count, the first that a node made."""
    import types
    made_by = [None] * 20
    made_by[2] = ("decoy", "decoy_op", None)        # line 3: only Numba's own file says it
    made_by[6] = ("inner", "inner_op", None)        # line 7: the failing line
    made_by[11] = ("outer", "outer_op", None)       # line 12: the call of the fused loop
    py_func = types.SimpleNamespace(__code__=types.SimpleNamespace(
        co_filename="/cache/native/ag_0123abcd.py"))
    kernel = types.SimpleNamespace(file_name="ag_k_77ee.py", made_by=[None] * 5)
    kernel.made_by[3] = ("kernel_node", "kernel_op", None)   # a fused loop's own module
    runner = types.SimpleNamespace(function_name="f", dispatcher=types.SimpleNamespace(
        py_func=py_func), plan=types.SimpleNamespace(
            made_by={"": made_by, kernel.file_name: kernel.made_by}))
    message = ("No implementation of function Function(<ufunc 'x'>) found for signature\n"
               'File "numba/core/typing/npydecl.py", line 3, in generic\n'
               "During: typing of intrinsic-call at /cache/native/ag_0123abcd.py (7)\n\n"
               'File "../cache/native/ag_0123abcd.py", line 7:\n'
               "During: typing of call at /cache/native/ag_0123abcd.py (12)\n")
    error = native._Runner.typing_error(runner, Exception(message))
    assert "`inner_op`" in str(error) and "decoy" not in str(error)
    assert "outer" not in str(error)
    # no line of the generated file: the function is named, no node
    error = native._Runner.typing_error(runner, Exception(
        'File "numba/core/typing/npydecl.py", line 3, in generic'))
    assert "'f'" in str(error) and "decoy" not in str(error)
    # a line of a fused loop's module (kernel_modules.py) before the line calling it
    error = native._Runner.typing_error(runner, Exception(
        "During: typing of intrinsic-call at /cache/native/ag_k_77ee.py (4)\n"
        "During: typing of call at /cache/native/ag_0123abcd.py (12)\n"))
    assert "`kernel_op`" in str(error) and "outer" not in str(error)


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.float16])
def test_half_precision_is_refused_with_the_operation_and_line(dtype):
    # tanh of int8/bool is float16 in NumPy; Numba has no float16: an error naming the
    # operation and the user's line, not Numba's bare NotImplementedError("float16")
    def f(x):
        return np.tanh(x) * 2.0

    with pytest.raises(NativeLoweringError) as info:
        ag.function(f, jit_compile=True)(np.arange(3).astype(dtype))
    message = str(info.value)
    assert "float16" in message
    # (a float16 argument: the parameter is named; a float16 result: the line making it)
    assert "node 'x'" in message if dtype is np.float16 else "np.tanh(x) * 2.0" in message


@pytest.mark.parametrize("x", [np.array(3.0), np.float64(3.0), np.arange(4.0), np.int32(7)],
                         ids=["0-d array", "scalar", "array", "int32"])
def test_an_argument_returned_unchanged_is_the_same_object_as_in_the_interpreter(x):
    def same(v):
        return v

    def pair(v):
        return v, v * 2

    for fn in (same, pair):
        for _ in range(2):   # the first call and the fast path
            got = ag.function(fn, jit_compile=True)(x)
            ref = ag.function(fn)(x)
            got, ref = (got, ref) if fn is pair else ((got,), (ref,))
            assert got[0] is x and ref[0] is x
            for a, b in zip(got[1:], ref[1:]):
                assert type(a) is type(b) and np.array_equal(a, b)


def test_default_and_false_do_not_lower():
    before = native.stats()["lowered"]
    ag.function(collatz)(np.int64(27))
    ag.function(collatz, jit_compile=False)(np.int64(27))
    assert native.stats()["lowered"] == before
    assert ag.function(collatz, jit_compile=True)(np.int64(27)) == 111
    assert native.stats()["lowered"] == before + 1


def test_variables_are_read_before_and_assigned_after():
    v = ag.Variable(np.float64(1.5))
    w = ag.Variable(np.zeros(3))

    def f(x, n):
        for _ in range(n):
            v.assign_add(x)
            w.assign(w + v)
        return v.read_value() * 2

    results = {}
    for jit in (None, True):
        v.assign(np.float64(1.5))
        w.assign(np.zeros(3))
        g = ag.function(f, jit_compile=jit)
        results[jit] = [(g(np.float64(0.25), np.int64(4)), v.numpy(), w.numpy())
                        for _ in range(2)]
    assert same(results[True], results[None])


def test_tensor_array_fill_is_a_native_buffer():
    def f(x):
        ta = ag.TensorArray(np.float64, size=5)
        s = x
        for i in range(5):
            s = np.tanh(s + i)
            ta = ta.write(i, s)
        return ta.stack()

    x = np.linspace(-1, 1, 3)
    assert same(ag.function(f, jit_compile=True)(x), ag.function(f)(x), ulps=4)


_CHILD = textwrap.dedent("""
    import numpy as np, autograph as ag
    from autograph.runtime.exec.native import jit as native
    from tests.runtime.test_native import collatz
    assert ag.function(collatz, jit_compile=True)(np.int64(27)) == 111
    s = native.stats()
    print(s["compiled"], s["cache_hits"])
""")


def test_disk_cache_across_processes(tmp_path):
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    runs = [subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    assert runs == [["1", "0"], ["0", "1"]]     # compiled once, then loaded
    assert len(list((tmp_path / "native").glob("ag_*.py"))) == 1


def test_cache_file_is_rewritten_when_it_differs(tmp_path, monkeypatch):
    """A stale or foreign file under the hashed name never runs: the module is the source
    autograph generated, and the file is rewritten to it."""
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path))

    def f(x):
        return x * 3 + 1

    ag.function(f, jit_compile=True)(np.int64(2))
    (path,) = (tmp_path / "native").glob("ag_*.py")
    source = path.read_text()
    path.write_text("raise SystemExit('foreign code ran')\n")
    native._modules.clear()
    assert ag.function(f, jit_compile=True)(np.int64(2)) == 7
    assert path.read_text() == source


def test_compile_time_is_logged_at_verbosity_1(caplog):
    def f(x):
        return x - 5

    old = ag.get_verbosity() if hasattr(ag, "get_verbosity") else 0
    ag.set_verbosity(1)
    try:
        with caplog.at_level("INFO", logger="autograph"):
            import logging
            logging.getLogger("autograph").propagate = True
            ag.function(f, jit_compile=True)(np.int64(2))
    finally:
        ag.set_verbosity(old)
    assert any("jit_compile: f" in r.getMessage() and " ms " in r.getMessage()
               for r in caplog.records)


def _loss(w, x):
    return np.sum(np.tanh(x * w) ** 2) + np.mean(x * w)


def _piecewise(w):
    if w > 0:
        y = w * w
    else:
        y = -w * 3.0
    return y


def _loop_loss(w, n):
    s = w
    for _ in range(n):
        s = np.sin(s) * w + 0.5
    return s


def _rnn_loss(W, xs, n):
    s = np.zeros(3)
    i = np.int64(0)
    while i < n:
        s = np.tanh(W @ s + xs[i])
        i += 1
    return np.sum(s * s)


_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("make, args", [
    (lambda: lambda w, x: ag.value_and_grad(_loss)(w, x),
     (np.float64(0.7), np.linspace(-1, 1, 5))),
    (lambda: lambda w: ag.grad(_piecewise)(w), (np.float64(-0.7),)),
    (lambda: lambda w: ag.grad(_piecewise)(w), (np.float64(0.4),)),
    (lambda: lambda w, n: ag.value_and_grad(_loop_loss)(w, n), (np.float64(0.3), np.int64(7))),
    (lambda: lambda W, xs, n: ag.value_and_grad(_rnn_loss)(W, xs, n),
     (_RNG.standard_normal((3, 3)) * 0.5, _RNG.standard_normal((6, 3)), np.int64(6))),
], ids=["straight_line", "cond_negative", "cond_positive", "loop", "rnn_loop"])
def test_backward_graphs_lower(make, args):
    """Gradients' backward graphs are graphs of the same primitives (broadcast_to,
    sum_to_shape, ...) plus the per-iteration stacks of differentiated loops (growable
    native arrays): the native values are the interpreter's to rounding (tanh to 1 ulp,
    sums in another order)."""
    got = ag.function(make(), jit_compile=True)(*args)
    want = ag.function(make())(*args)
    flat_got, flat_want = np.asarray(got, dtype=object).ravel(), np.asarray(want, dtype=object).ravel()
    for g, w in zip(flat_got, flat_want):
        g, w = np.asarray(g), np.asarray(w)    # a 0-d result may be a scalar or a 0-d array
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def test_unknown_dims_lower():
    """An input signature with `None` dims: the graph reads sizes as values (shape_of,
    size_of) and slices of unknown length; one native function serves every length."""
    def f(xs):
        t = np.int64(0)
        for i in range(len(xs)):
            t += xs[i] * xs.size
        return t, xs[1:] * 2

    sig = [ag.TensorSpec((None,), np.int64)]
    g = ag.function(f, input_signature=sig, jit_compile=True)
    h = ag.function(f, input_signature=sig)
    for n in (1, 5, 9):
        assert same(g(np.arange(n)), h(np.arange(n)))


def _edges(a, b, x, y):
    return (a // b, a % b, x / y, x % y, x // y, -a // 3, -a % 3, a ** 2,
            a.astype(np.int32) * np.int32(100000), np.maximum(x, np.nan), np.minimum(x, y),
            np.abs(-a), np.sign(x), np.floor(x / 3), a << 3, a >> 1, ~a, x ** 0.5,
            x.astype(np.float32) * np.float32(3.1), a.astype(np.int8) + np.int8(120), a / b)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_edge_arithmetic_matches_numpy():
    """Division and remainder by zero, negative operands, wrap-around in small ints, NaN,
    inf and -0.0: NumPy's error model (no exception, NumPy's values), equal values of
    the same types."""
    nat, ref = ag.function(_edges, jit_compile=True), ag.function(_edges)
    for args in [(np.int64(7), np.int64(0), np.float64(1.5), np.float64(0.0)),
                 (np.int64(-7), np.int64(2), np.float64(-1.5), np.float64(2.0)),
                 (np.int64(123456), np.int64(-5), np.float64(np.inf), np.float64(-0.0))]:
        assert same(nat(*args), ref(*args)), args


def _collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def _two_outputs(x, s):
    return x * s, s % 3


@pytest.mark.parametrize("fn, make_args", [
    (_collatz, lambda: (np.int64(27),)),
    (_collatz, lambda: (np.array(27),)),   # a 0-d array: the general runner
    (_two_outputs, lambda: (np.arange(4.0), np.float64(7.0))),
    (_two_outputs, lambda: (np.arange(4.0), np.int32(-7))),
])
def test_call_fast_path_calls_native_code_directly(fn, make_args):
    """The second call of the same types takes the fast path; with NumPy scalars (no 0-d
    arrays) its entry is the direct runner (the dispatcher called with the arguments as
    given). Results equal the eager function's and the general path's, types included."""
    f = ag.function(fn, jit_compile=True)
    args = make_args()
    first = f(*args)                     # general path, remembers the fast entry
    runner = next(iter(f._fast.values()))
    scalars_only = not any(type(a) is np.ndarray and a.ndim == 0 for a in args)
    assert hasattr(runner, "__native_direct__") == scalars_only
    second = f(*args)
    assert same(second, first) and same(second, ag.function(fn)(*args))
    c = f.get_concrete_function(*args)
    assert same(c(*args), first) and same(c(*args), first)   # its own fast path too


def test_integer_division_by_a_constant_is_an_operator_with_numpy_results():
    """`x % c` / `x // c` lower to Python's operators for a constant divisor other than 0
    and -1 (cheap machine division); results equal NumPy's for every sign and the extremes."""
    def f(x):
        return x % np.int32(-3), x // np.int32(-3), x % np.int32(2), x // np.int32(0), \
            x % np.int32(-1)
    g = ag.function(f, jit_compile=True)
    src = native.source_of(g.get_concrete_function(np.int32(1))._graph_to_run())
    assert "% np.int32(-3)" in src and "// np.int32(-3)" in src and "% np.int32(2)" in src
    assert "np.floor_divide" in src and "np.remainder" in src   # the divisors 0 and -1
    info = np.iinfo(np.int32)
    for x in (-7, -1, 0, 1, 7, info.min, info.max):
        with np.errstate(all="ignore"):
            assert same(g(np.int32(x)), f(np.int32(x))), x


_EDGE_VALUES = {
    "bool": [False, True],
    "int8": [0, -1, 127, -128], "uint8": [0, 1, 255],
    "int16": [-32768, 32767], "uint16": [65535], "int32": [-2**31, 2**31 - 1],
    "uint32": [2**32 - 1], "int64": [-2**63, 2**63 - 1, 0],
    "uint64": [0, 2**63, 2**63 + 12345, 2**64 - 1],
    "float32": [0.0, -0.0, 1.5, float("nan"), float("-inf"), 3.4028234663852886e38, 1e-45],
    "float64": [0.0, -0.0, -2.5, float("nan"), float("inf"), 5e-324, 1.7976931348623157e308],
    "complex64": [complex(-0.0, -0.0), complex(0.0, -0.0), complex(float("nan"), 1.0)],
    "complex128": [complex(-0.0, 0.0), complex(1e308, -0.0), complex(float("inf"), -1.0)],
}


def _ident(x):
    return x


def _picked(x, y):
    return (x if y else x), x


def _bits(value):
    return type(value), np.asarray(value).tobytes()


@pytest.mark.parametrize("dtype", sorted(_EDGE_VALUES))
def test_scalar_results_are_the_interpreters_numpy_scalars(dtype):
    """Numba returns 0-d results as Python scalars; the runners box them (`ZERO + r`, a
    pair for bools): the type and the bits equal the interpreter's for every dtype Numba
    can return, unsigned values above 2**63, -0.0, NaN and infinities included."""
    t = np.dtype(dtype).type
    jit, interp = ag.function(_ident, jit_compile=True), ag.function(_ident)
    jit2, interp2 = ag.function(_picked, jit_compile=True), ag.function(_picked)
    for v in _EDGE_VALUES[dtype]:
        x = t(v)
        for _ in range(2):   # the general path, then the fast path's direct runner
            assert _bits(jit(x)) == _bits(interp(x)) == _bits(x), (dtype, v)
            got, want = jit2(x, np.True_), interp2(x, np.True_)
            assert [_bits(g) for g in got] == [_bits(w) for w in want] == [_bits(x)] * 2


def test_boxes_equal_the_constructor_on_many_values():
    """Each dtype's box (native._box) against dtype.type(v), on random bit patterns and
    the edge values."""
    rng = np.random.default_rng(0)
    for name in _EDGE_VALUES:
        dtype = np.dtype(name)
        ns = {}
        expr = native._boxed(ns, "z", dtype, "v")
        raw = rng.integers(0, 256, size=dtype.itemsize * 200, dtype=np.uint8)
        values = [x.item() if dtype.kind != "b" else bool(x & 1)
                  for x in raw.view(dtype if dtype.kind != "b" else np.uint8)]
        for v in values + _EDGE_VALUES[name]:
            with np.errstate(all="ignore"):
                got = eval(expr, dict(ns, v=v))
            want = dtype.type(v)
            assert type(got) is type(want) and got.tobytes() == want.tobytes(), (name, v)
    assert native._box(np.dtype("int64"))[0] == "add"   # NumPy 2: the cheap form is used


def test_scalar_variables_keep_their_numpy_types():
    """A 0-d Variable assigned in native code holds the NumPy scalar the interpreter's
    kernels store (int32, bool, uint64 above 2**63)."""
    vs = [ag.Variable(np.int32(1)), ag.Variable(np.False_), ag.Variable(np.uint64(2**63 + 1))]

    def f(x):
        vs[0].assign_add(x)
        vs[1].assign(x > 2)
        vs[2].assign(vs[2] + np.uint64(2))
        return vs[0].read_value()

    results = {}
    for jit in (None, True):
        vs[0].assign(np.int32(1)), vs[1].assign(np.False_), vs[2].assign(np.uint64(2**63 + 1))
        g = ag.function(f, jit_compile=jit)
        results[jit] = [[_bits(g(np.int32(3)))] + [_bits(v.numpy()) for v in vs]
                        for _ in range(2)]
    assert results[True] == results[None]
